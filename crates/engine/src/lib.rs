//! placeholder, see below
pub mod queue;
