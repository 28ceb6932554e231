//! Verbs (in progress).
