//! The verbs API of rdmalab: what `libibverbs` on a real NIC returns, without timing and
//! without packets.
//!
//! A [`Context`] is one NIC's verbs state (one per simulated host). It owns the host's
//! [`Memory`], the protection domains, memory regions, completion queues, completion channels
//! and queue pairs, each named by a `Copy` handle ([`PdHandle`], [`MrHandle`], [`CqHandle`],
//! [`ChannelHandle`], [`QpNum`]). Behaviour that differs between NICs is chosen by a
//! [`NicProfile`] (`mlx5` default, `rxe`, `ibta`); every divergence is a method of
//! `NicProfile` with its source.
//!
//! The source of truth is `research/verbs-spec.md` (tags such as RC, KV, RXE-*, RXEV, MOJO
//! refer to its source table). Its conformance cases that need no packets on a wire (C01, C02,
//! C05–C07, C09–C14, C17–C21, C40, and the verbs half of C25, C27–C29, C34, C35) are tested in
//! `tests/conformance.rs` and `tests/transport.rs`; `tests/props.rs` holds the property tests.
//!
//! # Modules
//!
//! - [`context`]: [`Context`], and the verbs a host calls: PD, MR, CQ, channel, QP
//!   create/destroy, [`Context::modify_qp`] (with its side effects), [`Context::query_qp`],
//!   [`Context::poll_cq`], notification and async events.
//! - [`post`]: [`Context::post_send`] and [`Context::post_recv`] with the per-profile checks.
//! - [`transport`]: the calls the transport makes (take and complete WQEs, gather and scatter
//!   through SGE lists, remote key checks, atomics, [`Context::set_error`]).
//! - [`modify`]: the legal-transition table [`QP_STATE_TABLE`] as data, the mask rules and the
//!   value checks of `ibv_modify_qp`; [`QpAttr`].
//! - [`qp`]: QP creation attributes and capabilities, send and receive WQEs.
//! - [`mr`]: registration rules, keys, and [`MrTable::check_local`] /
//!   [`MrTable::check_remote`].
//! - [`cq`]: completion queue capacity, overrun, arming, channels.
//! - [`memory`]: host memory with guard pages, real and synthetic buffers.
//! - [`wr`], [`wc`]: work requests and work completions with verbs.h values.
//! - [`flags`], [`types`], [`errno`]: bit sets, handles, states, errno values.
//! - [`profile`]: [`NicProfile`] and [`DeviceAttr`] defaults with their sources.
//! - [`error`]: [`VerbsError`] and [`PostError`]; each explains the rule it enforces.
//!
//! # Who calls what
//!
//! **The host** (the application side, which adds timing) calls the `ibv_*` equivalents:
//!
//! ```text
//! Context::new(profile)                         ibv_open_device
//! memory_mut().alloc(len) -> va                 malloc / mmap (4 KiB aligned, guard pages)
//! memory_mut().alloc_synthetic(len, seed) -> va a large buffer that stores no bytes
//! alloc_pd() / dealloc_pd(pd)                   ibv_alloc_pd / ibv_dealloc_pd (EBUSY in use)
//! reg_mr(pd, va, len, access) -> Mr             ibv_reg_mr (Mr.pages = pages to pin)
//! dereg_mr(mr)                                  ibv_dereg_mr
//! create_comp_channel() / create_cq(cqe, ch)    ibv_create_comp_channel / ibv_create_cq
//! create_qp(pd, &QpInitAttr) -> CreatedQp       ibv_create_qp (caps ≥ requested)
//! modify_qp(qpn, &QpAttr, QpAttrMask)           ibv_modify_qp -> ModifyOutcome (side effects)
//! query_qp(qpn)                                 ibv_query_qp
//! post_send(qpn, &[SendWr]) / post_recv(..)     ibv_post_send / ibv_post_recv -> PostError{errno, bad_wr}
//! poll_cq(cq, max) -> Vec<Wc>                   ibv_poll_cq
//! req_notify_cq(cq, solicited_only)             ibv_req_notify_cq
//! get_cq_event(ch) / ack_cq_events(cq, n)       ibv_get_cq_event / ibv_ack_cq_events
//! get_async_event()                             ibv_get_async_event
//! take_notifications()                          completion and async events raised since the
//!                                               last call, to be modelled as interrupts
//! ```
//!
//! After a post, the host tells the transport that QP `qpn` has work (the doorbell).
//!
//! **The NIC model** calls the rest. The transport state machines (`transport::roce`) do not
//! depend on this crate, nor this crate on them: the simulator's world (`crates/sim/src/world/`:
//! `rdma_tx.rs`, `rdma_rx.rs`, `responder_env.rs`) takes WQEs from here, hands them to the
//! requester, and gives the responder an environment (`VerbsEnv`) that calls back into here.
//! What it calls:
//!
//! ```text
//! send side:  start_send(qpn) -> StartSend      next WQE that may start (RTS only; fences;
//!                                               max_rd_atomic credits; invalid opcodes fail here)
//!             send_wqe(qpn, id)                 the started WQE (is its data inline?)
//!             gather_ref(qpn, id, off, len)     the payload as a synthetic-memory reference, or
//!             gather_send(qpn, id, off, &mut buf)   its bytes (inline or through lkeys)
//!             scatter_send(qpn, id, off, data)      READ response data into the local SGEs
//!             write_atomic_result(qpn, id, orig)    atomic original value into the local SGE
//!             complete_send(qpn, id, status)        CQE rules, in-order retirement, ERR on error
//! receive:    accepts_requests(qpn)             RTR/RTS/SQD/SQE process requests
//!             responder_check(qpn, op, rkey, va, len)   rkey → NAK remote access
//!             recv_head(qpn)                    None => RNR (RC) or drop (UC/UD)
//!             scatter_recv(qpn, off, data)      message bytes into the head WQE (UD: GRH first)
//!             scatter_recv_at(qpn, index, off, data)    selective repeat: a WQE behind the head
//!             take_recv(qpn, RecvCompletion)    pop the head WQE; its CQE is not written yet
//!             deliver_recv(qpn, TakenRecv)      write it, when its DMA write has landed
//!             complete_recv(qpn, RecvCompletion)    an error completion, written at once
//!             request_arrived(qpn)              COMM_EST on the first request in RTR
//!             responder_failed(qpn, fault)      async event of a NAK that ends the QP
//! both:       query_qp(qpn)                     at modify_qp: dest QPN, PSNs, MTU, timeout, retry
//!                                               counts, AV (the transport's config); on a request:
//!                                               the access flags (→ NAK invalid request)
//!             set_error(qpn)                    move to ERR and flush
//!             remote_write(qpn, rkey, va, data) a WRITE packet's payload into memory (and
//!             remote_write_ref(.., ref, len))       its synthetic twin), checked again per packet
//!             remote_read(qpn, rkey, va, &mut buf)  a READ response's payload (remote_read_ref:
//!                                                   the synthetic reference), per packet
//!             remote_atomic(qpn, rkey, va, op)  the atomic's read-modify-write, its original value
//! ```
//!
//! Every access to the responder's memory goes through the rkey, as a NIC translates every
//! DMA through the memory key; `responder_check` up front decides the NAK. Also here, but not
//! called by the simulator: `scatter_ud_recv`
//! (the responder places the GRH and the payload with two `scatter_recv` calls), `qkey`,
//! `ud_send_qkey` (the world puts the WR's `remote_qkey` in the packet as given), `send_queue`,
//! `recv_queue` and `qp_type` — this crate's tests call these — and `peek_send` (this crate's
//! unit tests only) and `qp_pd` (no caller). Issue 22 item 4 either routes the world through
//! them or removes them.
//!
//! The transport keeps its own per-QP protocol state (PSNs, timers, outstanding packets) and
//! must drop it when `modify_qp` reports [`ModifyEffect::Reset`] or
//! [`ModifyEffect::Flushed`], or when a completion call reports `flushed`.
//!
//! # What this crate does not model
//!
//! Timing (the simulator's world adds it, with `host`'s costs), packets (the transport), SRQs,
//! memory windows, address handle objects (a UD WR carries its [`AhAttr`] directly), multiple
//! ports, RD/XRC, the kernel ULP post path. Simulated hosts are little-endian (atomics store
//! `u64` little-endian).

pub mod async_event;
pub mod context;
pub mod cq;
pub mod errno;
pub mod error;
pub mod flags;
pub mod memory;
pub mod modify;
pub mod mr;
pub mod post;
pub mod profile;
pub mod qp;
pub mod transport;
pub mod types;
pub mod wc;
pub mod wr;

pub use context::{
    AsyncEvent, Context, CreatedQp, DestroyReport, FlushReport, ModifyEffect, ModifyOutcome,
    Notification,
};
pub use cq::{CompChannel, CqPush, NotifyArm};
pub use errno::Errno;
pub use error::{PostError, PostRejection, Queue, VerbsError};
pub use flags::{AccessFlags, QpAttrMask, SendFlags, WcFlags};
pub use memory::{Memory, MemoryError, SyntheticRef, SyntheticStats};
pub use modify::{ModifyError, ModifyWarning, QP_STATE_TABLE, QpAttr};
pub use mr::{LocalAccessError, Mr, MrError, MrTable, RemoteAccessError};
pub use post::PostReport;
pub use profile::{DeviceAttr, NicProfile, PortAttr};
pub use qp::{QpCap, QpInitAttr, RecvWqe, SendWqe, WqeId, WqeState};
pub use transport::{
    AtomicOp, GatherError, Nak, RecvCompletion, RecvOutcome, RemoteOp, ResponderError,
    ResponderFault, ScatterError, SendBlock, SendCompletion, StartSend, TakenRecv, UD_GRH_LEN,
};
pub use types::{
    AhAttr, ChannelHandle, CqHandle, Gid, GlobalRoute, MrHandle, Mtu, PdHandle, QpNum, QpState,
    QpType,
};
pub use wc::{Wc, WcOpcode, WcStatus};
pub use wr::{RecvWr, SendOpcode, SendWr, Sge, UdDest};
