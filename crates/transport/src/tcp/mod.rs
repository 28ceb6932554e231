//! TCP (in progress).
