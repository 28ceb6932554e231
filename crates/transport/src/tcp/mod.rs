//! Kernel TCP as a sans-IO state machine: handshake, real byte streams, SACK, RACK-TLP,
//! NewReno/CUBIC/DCTCP and ECN, after smoltcp's `socket/tcp.rs` and quinn-proto's connection.
//!
//! A [`Connection`] is one endpoint. It takes segments (a wire [`tcp::Repr`](wire::tcp::Repr)
//! plus payload bytes and the IP ECN codepoint), timer expiries and application commands, each
//! with the simulated time, and returns segments, its next deadline and events. It never sees a
//! clock, a socket, the event queue or an RNG.
//!
//! ```text
//! let mut a = Connection::connect(Config::default(), 40000, 5001, isn_a)?;
//! let mut b = Connection::listen(Config::default(), 5001, isn_b)?;
//! a.send(b"hello");
//! while let Some(t) = a.poll_transmit(now) { /* carry t.repr, t.payload, t.ecn to b */ }
//! b.handle_segment(now, &repr, &payload, ecn);   // then b.poll_transmit(now) ...
//! a.handle_timeout(now) when now >= a.poll_timeout()
//! b.recv(&mut buf); b.poll_event()
//! ```
//!
//! Map of the module (each file lists the RFC sections it follows and its simplifications):
//! - [`connection`]: [`Connection`], [`Transmit`], [`Event`], [`Counters`]: the state machine
//!   (RFC 9293 §3.10), ACK generation, loss recovery (RFC 6675, RFC 6582), TLP (RFC 8985 §7),
//!   RTO handling, ECN (RFC 3168, RFC 8257 §3.2), zero-window probing.
//! - [`config`]: [`Config`] with units and sourced defaults, [`ConfigError`].
//! - [`state`]: [`State`] (RFC 9293 names) and [`RecoveryState`].
//! - [`timer`]: [`Timer`] and [`TimerTable`].
//! - [`congestion`]: the [`Controller`](congestion::Controller) trait, [`AnyController`] and
//!   the NewReno, CUBIC and DCTCP controllers.
//! - [`seq`]: [`SeqNumber`] (modulo-2^32 comparison) and the 64-bit offsets used inside.
//! - `buffer`: the send buffer and the reassembling receive buffer (real bytes).
//! - `scoreboard`: the SACK scoreboard, `pipe` and RFC 6675 IsLost.
//! - `rack`: RACK time-based loss detection (RFC 8985 §6).
//! - `rtt`: SRTT/RTTVAR/RTO (RFC 6298).
//! - [`tso`]: TSO deferral (Linux `tcp_tso_should_defer`).

pub mod config;
pub mod congestion;
pub mod connection;
pub mod seq;
pub mod state;
pub mod timer;
pub mod tso;

mod buffer;
mod rack;
mod rtt;
mod scoreboard;

pub use config::{Config, ConfigError, CongestionControl};
pub use congestion::AnyController;
pub use connection::{Connection, Counters, Event, Negotiated, Transmit};
pub use seq::SeqNumber;
pub use state::{RecoveryState, State};
pub use timer::{Timer, TimerTable};
pub use tso::TsoDefer;
