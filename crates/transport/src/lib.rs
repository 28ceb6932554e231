//! Transports as sans-IO state machines (after quinn-proto and smoltcp): they take packets,
//! timer expiries and application commands, each with the current simulated time, and return
//! packets to send, the next deadline and events for the application. They never see the event
//! queue, the fabric or a clock.
//!
//! - [`roce`]: the RoCEv2 InfiniBand transport (requester and responder for RC, UC and UD).
//! - [`tcp`]: kernel TCP.

pub mod roce;
pub mod tcp;
