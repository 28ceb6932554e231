//! The RoCEv2 InfiniBand transport: requester and responder as sans-IO state machines, for RC
//! and, through [`Service`], UC and UD.
//!
//! Read first: research/verbs-spec.md §5 (operations, RNR, timeouts, PSN errors) and §6 (wire
//! format, PSN arithmetic, ACK coalescing), and DESIGN.md §3.4. IBTA Vol. 1 chapter 9 is the
//! specification; Linux rxe (`rxe_req.c`, `rxe_resp.c`, `rxe_comp.c`) is the reference we read
//! for behaviour the text leaves open.
//!
//! - [`psn`]: [`Psn`], the 24-bit packet sequence number: add, compare, distance across the
//!   wrap, in one place.
//! - [`packet`]: [`RocePacket`] (BTH + extension headers + payload length) and [`Transmit`]
//!   (a packet plus where its payload bytes come from).
//! - [`requester`]: turns posted work requests into request packets and responses into
//!   completions (go-back-N or selective repeat, local ACK timeout with `retry_cnt`, RNR
//!   with `rnr_retry`).
//! - [`dcqcn`]: DCQCN's notification point (CNPs on ECN marks) and reaction point (α, rate
//!   cut and recovery, pacing), in integer arithmetic. The requester owns a QP's reaction
//!   point ([`Requester::set_reaction_point`]) and paces itself with it.
//! - [`responder`]: accepts requests in PSN order, places data through a [`ResponderEnv`],
//!   answers with ACK/NAK, READ responses and atomic ACKs, and replays duplicates.
//!
//! The transport moves no bytes itself: a [`Transmit`] names the memory its payload comes from
//! and the host gathers it (by DMA in the model); arriving payload is handed to the responder,
//! which places it through its environment. That keeps the state machines free of memory and
//! timing, and lets the host charge each DMA on the timeline.
//!
//! Simplifications and what they cost (a test could see each):
//! - Selective repeat ([`RetransmitMode::SelectiveRepeat`]) follows IRN's mechanisms, not a
//!   vendor's wire format: placement and SACK travel in rdmalab's own extension header
//!   ([`wire::ib::irn`]); READ responses past a loss are asked for again, not placed.
//! - No end-to-end credits: ACKs advertise "unlimited" (0x1f) as rxe does.
//! - The retry counter is shared by local ACK timeouts and PSN-sequence NAKs and is restored
//!   whenever an ACK makes progress (IBTA's retry semantics as rxe implements them).

pub mod config;
pub mod dcqcn;
pub mod packet;
pub mod psn;
pub mod requester;
pub mod responder;

pub use config::{RcConfig, RetransmitMode, Service};
pub use packet::{DataRef, RocePacket, Transmit};
pub use psn::Psn;
pub use requester::{Placement, ReqStatus, Requester, RequesterEvent, SendRequest, UdDest, WorkOp};
pub use responder::{RecvFailure, RecvState, RemoteOp, Responder, ResponderEnv, ResponderEvent};
