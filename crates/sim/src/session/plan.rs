//! The typed form of a verbs session: what [`parse`](super::parse()) builds and
//! [`run`](super::run()) executes.
//!
//! Everything here has already been checked: every handle a step names was defined by an
//! earlier step with the right kind and on the right host, every number is in range, every
//! opcode, flag and state is a real one. The executor therefore never meets a malformed
//! session, only verbs that fail, which is what the session is there to show.

use std::ops::Range;

use units::SimDuration;
use verbs::{AccessFlags, Errno, NicProfile, QpAttr, QpAttrMask, QpCap, QpState, QpType};
use verbs::{SendFlags, SendOpcode, WcOpcode, WcStatus};

use crate::world::RcOptions;

/// Limits that keep a file from a stranger from exhausting memory or running forever.
pub mod limits {
    use units::SimDuration;

    /// Largest session file, in bytes.
    pub const MAX_FILE_BYTES: usize = 1 << 20;
    /// Most steps in one session.
    pub const MAX_STEPS: usize = 2_000;
    /// Most hosts (2 for back-to-back).
    pub const MAX_HOSTS: usize = 8;
    /// Largest single buffer (`alloc.len`), in bytes.
    pub const MAX_BUFFER_BYTES: u64 = 16 << 20;
    /// Largest sum of all buffers of a session, in bytes.
    pub const MAX_TOTAL_BUFFER_BYTES: u64 = 64 << 20;
    /// Longest `run`, `wait` or `expect_no_completion` of one step.
    pub const MAX_STEP_TIME: SimDuration = SimDuration::from_secs(10);
    /// Longest total simulated time of a session (the sum of every step's time).
    pub const MAX_SESSION_TIME: SimDuration = SimDuration::from_secs(30);
    /// Most events one session may process.
    pub const MAX_EVENTS: u64 = 50_000_000;
    /// Wall-clock limit of one session, in seconds.
    pub const MAX_WALL_SECS: u64 = 120;
    /// Most WRs in one `post_send` or `post_recv` chain.
    pub const MAX_CHAIN: usize = 256;
    /// Most SGEs in one WR.
    pub const MAX_SGES: usize = 64;
    /// Longest `text`/`hex` literal, in bytes.
    pub const MAX_LITERAL_BYTES: usize = 64 << 10;
    /// Longest `read_memory`, in bytes.
    pub const MAX_READ_BYTES: u64 = 64 << 10;
    /// Most bytes all `read_memory` steps of a session may show together (each is shown as
    /// hex and text in the report, about 4 bytes of JSON per byte).
    pub const MAX_READ_TOTAL_BYTES: u64 = 1 << 20;
    /// Most completions one `poll_cq` may return.
    pub const MAX_POLL: u32 = 4_096;
    /// Largest queue depth `create_qp` and `connect` may ask for.
    pub const MAX_QUEUE_DEPTH: u32 = 65_536;
    /// Largest CQ `create_cq` and `connect` may ask for.
    pub const MAX_CQE: u32 = 8_388_608;
    /// Longest handle or host name.
    pub const MAX_NAME_LEN: usize = 32;
    /// Most QPs one host may create (bounds the drop rules, see `fabric.drop`).
    pub const MAX_QPS_PER_HOST: usize = 64;
    /// Most entries a step's state lists per queue (SQ, RQ, CQ); the rest are counted.
    pub const MAX_LISTED: usize = 64;
    /// Most frames a step lists; the rest are counted.
    pub const MAX_FRAMES_LISTED: usize = 512;
    /// Bytes at the start of each buffer a step's memory view compares with the previous
    /// step, to find the bytes the step changed (changes further in are not seen).
    pub const MEMORY_COMPARE_BYTES: u64 = 4096;
    /// Bytes of each buffer a step's memory view shows as hex (a window inside the compared
    /// bytes, placed at the first byte the step changed).
    pub const MEMORY_VIEW_BYTES: u64 = 256;
    /// Most changed byte ranges a buffer's memory view lists per step; the rest are counted.
    pub const MEMORY_MAX_RANGES: usize = 16;
}

/// A parsed session: the plan the executor runs.
#[derive(Clone, Debug)]
pub struct Session {
    /// The NIC profile the file asks for (`mlx5` when it names none).
    pub profile: NicProfile,
    /// The seed of every random draw (link loss).
    pub seed: u64,
    /// The network between the hosts.
    pub fabric: FabricPlan,
    /// Host names, in order; host `i` is the world's host `i`.
    pub hosts: Vec<String>,
    /// Every handle the session defines, indexed by [`HandleId`].
    pub handles: Vec<HandleInfo>,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

impl Session {
    /// The handle `id`.
    pub fn handle(&self, id: HandleId) -> &HandleInfo {
        &self.handles[id.0]
    }
    /// The name of handle `id`.
    pub fn name(&self, id: HandleId) -> &str {
        &self.handles[id.0].name
    }
    /// The name of host `h`.
    pub fn host_name(&self, h: HostId) -> &str {
        &self.hosts[h.0]
    }
}

/// Index of a host in [`Session::hosts`].
#[derive(Clone, Copy, Debug, Eq, Ord, PartialEq, PartialOrd)]
pub struct HostId(pub usize);

/// Index of a handle in [`Session::handles`].
#[derive(Clone, Copy, Debug, Eq, Ord, PartialEq, PartialOrd)]
pub struct HandleId(pub usize);

/// What kind of verbs object a handle names.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum HandleKind {
    /// A completion channel.
    Channel,
    /// A memory buffer (`alloc`).
    Buffer {
        /// Its length in bytes.
        len: u64,
    },
    /// A completion queue.
    Cq,
    /// A memory region.
    Mr,
    /// A protection domain.
    Pd,
    /// A queue pair.
    Qp {
        /// Its transport type.
        qp_type: QpType,
    },
}

impl HandleKind {
    /// "a PD", "an MR", ...
    pub fn article_name(self) -> &'static str {
        match self {
            HandleKind::Buffer { .. } => "a buffer",
            HandleKind::Channel => "a completion channel",
            HandleKind::Cq => "a CQ",
            HandleKind::Mr => "an MR",
            HandleKind::Pd => "a PD",
            HandleKind::Qp { .. } => "a QP",
        }
    }
}

/// One handle: a name a step gave with `as` (or `connect`'s `pd`/`cq`/`qp`).
#[derive(Clone, Debug)]
pub struct HandleInfo {
    /// The name.
    pub name: String,
    /// What it names.
    pub kind: HandleKind,
    /// The host it lives on.
    pub host: HostId,
    /// The 1-based line of the step that defines it.
    pub line: usize,
}

/// The network of a session.
#[derive(Clone, Debug, PartialEq)]
pub struct FabricPlan {
    /// How the hosts are cabled.
    pub topology: TopologyKind,
    /// Line rate of every link, in Gb/s.
    pub rate_gbps: u64,
    /// Length of every cable, in metres.
    pub cable_m: u64,
    /// Independent per-frame loss probability on every link (as written in the file).
    pub loss: f64,
    /// "Drop the Nth frame" rules.
    pub drops: Vec<DropPlan>,
}

/// How the hosts are cabled.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum TopologyKind {
    /// Two hosts, NIC to NIC.
    BackToBack,
    /// Every host on one switch.
    Switch,
}

impl TopologyKind {
    /// The spelling of the file.
    pub fn name(self) -> &'static str {
        match self {
            TopologyKind::BackToBack => "back_to_back",
            TopologyKind::Switch => "switch",
        }
    }
}

/// Drop frames `nth ..= nth + count - 1` sent by each QP of host `from`.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct DropPlan {
    /// The sending host.
    pub from: HostId,
    /// First frame dropped, counting from 1.
    pub nth: u64,
    /// Consecutive frames dropped.
    pub count: u64,
}

/// One step of a session.
#[derive(Clone, Debug)]
pub struct Step {
    /// 1-based line of the step's first key in the file.
    pub line: usize,
    /// 1-based column of that key.
    pub column: usize,
    /// Byte range of the step in the file.
    pub span: Range<usize>,
    /// What to call.
    pub call: Call,
    /// What the outcome must be.
    pub expect: Expect,
    /// "No completion within T": after the call, run the world for T and require that the
    /// step's CQs gained no completion.
    pub no_completion: Option<SimDuration>,
}

/// How the QPs a `connect` makes recover a lost packet. Not a verbs attribute: on NICs that
/// have selective repeat it is a device setting (NVIDIA's `selective_repeat_forced_en` in the
/// ROCE_ACCL register), so a session chooses it per connection, where it takes effect at RTR.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Recovery {
    /// IBTA's go-back-N: a sequence NAK or a timeout resends everything from the lost PSN.
    #[default]
    GoBackN,
    /// IRN-style selective repeat (`World::set_selective_repeat`): the responder keeps what
    /// arrives past a gap and the requester resends only the missing PSNs, with at most
    /// `window` PSNs in flight.
    Selective {
        /// The in-flight cap, in PSNs.
        window: u32,
    },
}

/// A verbs call, or a session action, with its arguments resolved to handles.
#[derive(Clone, Debug)]
pub enum Call {
    /// `ibv_alloc_pd`.
    AllocPd {
        /// On this host.
        host: HostId,
        /// The new handle.
        out: HandleId,
    },
    /// Allocate a buffer of host memory (`malloc`), optionally filled.
    Alloc {
        /// On this host.
        host: HostId,
        /// The new handle.
        out: HandleId,
        /// Length in bytes.
        len: u64,
        /// Initial content.
        fill: Fill,
    },
    /// `ibv_reg_mr`.
    RegMr {
        /// The protection domain.
        pd: HandleId,
        /// The buffer registered.
        buf: HandleId,
        /// First registered byte, from the buffer's start.
        offset: u64,
        /// Registered length.
        len: u64,
        /// Access flags.
        access: AccessFlags,
        /// The new handle.
        out: HandleId,
    },
    /// `ibv_create_comp_channel`.
    CreateCompChannel {
        /// On this host.
        host: HostId,
        /// The new handle.
        out: HandleId,
    },
    /// `ibv_destroy_comp_channel`.
    DestroyCompChannel {
        /// The channel.
        channel: HandleId,
    },
    /// `ibv_create_cq`.
    CreateCq {
        /// On this host.
        host: HostId,
        /// Entries asked for.
        cqe: u32,
        /// The completion channel its events go to.
        channel: Option<HandleId>,
        /// The new handle.
        out: HandleId,
    },
    /// `ibv_create_qp`.
    CreateQp {
        /// The protection domain.
        pd: HandleId,
        /// CQ for send completions.
        send_cq: HandleId,
        /// CQ for receive completions.
        recv_cq: HandleId,
        /// RC, UC or UD.
        qp_type: QpType,
        /// Capabilities asked for.
        cap: QpCap,
        /// Every send WR completes with a CQE.
        sq_sig_all: bool,
        /// The new handle.
        out: HandleId,
    },
    /// `ibv_modify_qp`.
    ModifyQp {
        /// The QP.
        qp: HandleId,
        /// The attributes.
        attr: AttrPlan,
        /// The mask, exactly as written.
        mask: QpAttrMask,
    },
    /// `ibv_query_qp`.
    QueryQp {
        /// The QP.
        qp: HandleId,
    },
    /// `ibv_post_send` of a chain.
    PostSend {
        /// The QP.
        qp: HandleId,
        /// The chain.
        wrs: Vec<SendWrPlan>,
    },
    /// `ibv_post_recv` of a chain.
    PostRecv {
        /// The QP.
        qp: HandleId,
        /// The chain.
        wrs: Vec<RecvWrPlan>,
    },
    /// `ibv_poll_cq`.
    PollCq {
        /// The CQ.
        cq: HandleId,
        /// Most completions returned.
        max: u32,
        /// Busy-poll: run the world until the CQ holds enough completions or this much time
        /// has passed, then poll.
        wait: Option<SimDuration>,
    },
    /// `ibv_req_notify_cq`: arm the CQ for one completion event.
    ReqNotifyCq {
        /// The CQ.
        cq: HandleId,
        /// Only solicited and error completions raise the event.
        solicited_only: bool,
    },
    /// `ibv_get_cq_event`: block until a completion event reaches the application.
    GetCqEvent {
        /// The channel read.
        channel: HandleId,
        /// The longest simulated time to block; past it the call returns EAGAIN, as on a
        /// non-blocking channel.
        wait: SimDuration,
    },
    /// `ibv_ack_cq_events`.
    AckCqEvents {
        /// The CQ.
        cq: HandleId,
        /// Events acknowledged.
        n: u32,
    },
    /// `ibv_get_async_event`: block until the device reports an asynchronous event.
    GetAsyncEvent {
        /// The host whose device context is read.
        host: HostId,
        /// The longest simulated time to block; past it the call returns EAGAIN, as on a
        /// non-blocking async fd.
        wait: SimDuration,
    },
    /// `ibv_ack_async_event` of the oldest event this host took and has not acknowledged.
    AckAsyncEvent {
        /// The host.
        host: HostId,
    },
    /// The whole RC bring-up between two hosts (`World::connect_rc`).
    Connect {
        /// The two hosts.
        hosts: [HostId; 2],
        /// PD handles, one per host.
        pd: [HandleId; 2],
        /// CQ handles.
        cq: [HandleId; 2],
        /// QP handles.
        qp: [HandleId; 2],
        /// Completion channels the CQs report to (`channel = { host = "ch" }`).
        channels: [Option<HandleId>; 2],
        /// How the QPs are set up.
        options: RcOptions,
        /// How the two QPs recover a lost packet (`retransmission`, `window`).
        recovery: Recovery,
    },
    /// `ibv_destroy_qp`.
    DestroyQp {
        /// The QP.
        qp: HandleId,
    },
    /// `ibv_destroy_cq`.
    DestroyCq {
        /// The CQ.
        cq: HandleId,
    },
    /// `ibv_dereg_mr`.
    DeregMr {
        /// The MR.
        mr: HandleId,
    },
    /// `ibv_dealloc_pd`.
    DeallocPd {
        /// The PD.
        pd: HandleId,
    },
    /// Advance simulated time.
    Run {
        /// By this much.
        duration: SimDuration,
    },
    /// Write bytes into a buffer (the application's CPU store).
    WriteMemory {
        /// Where.
        at: MemRef,
        /// What.
        data: Vec<u8>,
    },
    /// Read bytes of a buffer and show them.
    ReadMemory {
        /// Where.
        at: MemRef,
        /// How many bytes.
        len: u64,
    },
}

impl Call {
    /// The call's name as the file spells it.
    pub fn name(&self) -> &'static str {
        match self {
            Call::AllocPd { .. } => "alloc_pd",
            Call::Alloc { .. } => "alloc",
            Call::RegMr { .. } => "reg_mr",
            Call::CreateCq { .. } => "create_cq",
            Call::CreateQp { .. } => "create_qp",
            Call::ModifyQp { .. } => "modify_qp",
            Call::QueryQp { .. } => "query_qp",
            Call::PostSend { .. } => "post_send",
            Call::PostRecv { .. } => "post_recv",
            Call::PollCq { .. } => "poll_cq",
            Call::Connect { .. } => "connect",
            Call::CreateCompChannel { .. } => "create_comp_channel",
            Call::DestroyCompChannel { .. } => "destroy_comp_channel",
            Call::ReqNotifyCq { .. } => "req_notify_cq",
            Call::GetCqEvent { .. } => "get_cq_event",
            Call::AckCqEvents { .. } => "ack_cq_events",
            Call::GetAsyncEvent { .. } => "get_async_event",
            Call::AckAsyncEvent { .. } => "ack_async_event",
            Call::DestroyQp { .. } => "destroy_qp",
            Call::DestroyCq { .. } => "destroy_cq",
            Call::DeregMr { .. } => "dereg_mr",
            Call::DeallocPd { .. } => "dealloc_pd",
            Call::Run { .. } => "run",
            Call::WriteMemory { .. } => "write_memory",
            Call::ReadMemory { .. } => "read_memory",
        }
    }

    /// Every handle the call uses (not the ones it defines).
    pub fn uses(&self) -> Vec<HandleId> {
        match self {
            Call::CreateCq { channel, .. } => channel.iter().copied().collect(),
            Call::Connect { channels, .. } => channels.iter().flatten().copied().collect(),
            Call::AllocPd { .. }
            | Call::Alloc { .. }
            | Call::CreateCompChannel { .. }
            | Call::GetAsyncEvent { .. }
            | Call::AckAsyncEvent { .. }
            | Call::Run { .. } => Vec::new(),
            Call::RegMr { pd, buf, .. } => vec![*pd, *buf],
            Call::CreateQp {
                pd,
                send_cq,
                recv_cq,
                ..
            } => vec![*pd, *send_cq, *recv_cq],
            Call::ModifyQp { qp, attr, .. } => {
                let mut v = vec![*qp];
                if let Some(QpRef::Handle(h)) = attr.dest_qp {
                    v.push(h);
                }
                v
            }
            Call::QueryQp { qp } => vec![*qp],
            Call::PostSend { qp, wrs } => {
                let mut v = vec![*qp];
                for w in wrs {
                    v.extend(w.sges.iter().map(|s| s.mr));
                    if let Some(r) = &w.remote {
                        v.push(r.target);
                        if let KeyRef::Mr(m) = r.rkey {
                            v.push(m);
                        }
                    }
                    if let Some(u) = &w.ud {
                        v.push(u.qp);
                    }
                }
                v
            }
            Call::PostRecv { qp, wrs } => {
                let mut v = vec![*qp];
                for w in wrs {
                    v.extend(w.sges.iter().map(|s| s.mr));
                }
                v
            }
            Call::PollCq { cq, .. }
            | Call::DestroyCq { cq }
            | Call::ReqNotifyCq { cq, .. }
            | Call::AckCqEvents { cq, .. } => vec![*cq],
            Call::GetCqEvent { channel, .. } | Call::DestroyCompChannel { channel } => {
                vec![*channel]
            }
            Call::DestroyQp { qp } => vec![*qp],
            Call::DeregMr { mr } => vec![*mr],
            Call::DeallocPd { pd } => vec![*pd],
            Call::WriteMemory { at, .. } | Call::ReadMemory { at, .. } => vec![at.handle],
        }
    }
}

impl Call {
    /// The handles of [`Call::uses`] that stand for the peer's side of an exchange rather
    /// than for a local object: a remote MR (its address and rkey, as sent out of band), a
    /// UD destination QP, a `dest_qp`. They are numbers the program kept, so they stay usable
    /// after the peer destroys the object (a stale rkey is how a deregistered MR is reached).
    pub fn remote_uses(&self) -> Vec<HandleId> {
        match self {
            Call::ModifyQp { attr, .. } => match attr.dest_qp {
                Some(QpRef::Handle(h)) => vec![h],
                _ => Vec::new(),
            },
            Call::PostSend { wrs, .. } => {
                let mut v = Vec::new();
                for w in wrs {
                    if let Some(r) = &w.remote {
                        v.push(r.target);
                        if let KeyRef::Mr(m) = r.rkey {
                            v.push(m);
                        }
                    }
                    if let Some(u) = &w.ud {
                        v.push(u.qp);
                    }
                }
                v
            }
            _ => Vec::new(),
        }
    }

    /// The handle a teardown call frees, if the call is one.
    pub fn destroys(&self) -> Option<HandleId> {
        match self {
            Call::DestroyQp { qp } => Some(*qp),
            Call::DestroyCq { cq } => Some(*cq),
            Call::DeregMr { mr } => Some(*mr),
            Call::DeallocPd { pd } => Some(*pd),
            Call::DestroyCompChannel { channel } => Some(*channel),
            _ => None,
        }
    }
}

/// Initial content of a buffer.
#[derive(Clone, Debug, Eq, PartialEq)]
pub enum Fill {
    /// Zeros.
    Zero,
    /// These bytes at offset 0, zeros after.
    Bytes(Vec<u8>),
    /// Every byte this value.
    Byte(u8),
    /// A deterministic pseudo-random pattern from this seed (xorshift64, one byte per step).
    Pattern(u64),
}

/// The attributes of a `modify_qp` step.
#[derive(Clone, Debug, PartialEq)]
pub struct AttrPlan {
    /// Every plain attribute (numbers, flags, states) as written; the rest are defaults.
    pub attr: QpAttr,
    /// `dest_qp`: the peer QP (its QPN is known only when the session runs) or a raw QPN.
    pub dest_qp: Option<QpRef>,
    /// `av`: an address vector to this host's GID.
    pub av: Option<HostId>,
    /// Attribute keys written in the file, in the order of the verbs.h mask bits.
    pub given: Vec<&'static str>,
    /// Attribute keys written in the file whose bit is not in the mask (ignored by the verb,
    /// as in C; the executor mentions them).
    pub ignored: Vec<&'static str>,
}

/// A QP named by handle or by number.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum QpRef {
    /// A QP handle of the session.
    Handle(HandleId),
    /// A raw 24-bit QPN.
    Number(u32),
}

/// A key named by MR handle or given as a raw number.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum KeyRef {
    /// The key of this MR (lkey for SGEs, rkey for remote addresses).
    Mr(HandleId),
    /// A raw 32-bit key.
    Raw(u32),
}

/// An address inside a buffer or MR.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct MemRef {
    /// A buffer or MR handle.
    pub handle: HandleId,
    /// Bytes from its start.
    pub offset: u64,
}

/// One scatter/gather entry.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct SgePlan {
    /// The MR the bytes are in (gives the address and the lkey).
    pub mr: HandleId,
    /// Bytes from the MR's start.
    pub offset: u64,
    /// Length; `None` means the rest of the MR.
    pub len: Option<u32>,
    /// A raw lkey that replaces the MR's (to provoke protection errors).
    pub lkey: Option<u32>,
}

/// The remote side of an RDMA or atomic WR: the peer's address and rkey, as exchanged out of
/// band.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct RemotePlan {
    /// The peer's buffer or MR.
    pub target: HandleId,
    /// Bytes from its start.
    pub offset: u64,
    /// The rkey sent.
    pub rkey: KeyRef,
}

/// One send WR.
#[derive(Clone, Debug, PartialEq)]
pub struct SendWrPlan {
    /// 1-based line of the WR.
    pub line: usize,
    /// `wr_id`.
    pub wr_id: u64,
    /// The opcode.
    pub opcode: SendOpcode,
    /// The flags.
    pub flags: SendFlags,
    /// The local buffers.
    pub sges: Vec<SgePlan>,
    /// Remote address and rkey (RDMA and atomics).
    pub remote: Option<RemotePlan>,
    /// Immediate data (`*_WITH_IMM`).
    pub imm: u32,
    /// Compare value (CMP_AND_SWP) or addend (FETCH_AND_ADD).
    pub compare_add: u64,
    /// Swap value (CMP_AND_SWP).
    pub swap: u64,
    /// UD: the destination QP (its host gives the address handle) and the Q_Key.
    pub ud: Option<UdPlan>,
}

/// A UD work request's destination: `ud = { qp = "qp_b", qkey = 0x1111 }`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UdPlan {
    /// The remote QP; the address handle points at its host.
    pub qp: HandleId,
    /// The Q_Key the datagram carries.
    pub qkey: u32,
}

/// One receive WR.
#[derive(Clone, Debug, PartialEq)]
pub struct RecvWrPlan {
    /// `wr_id`.
    pub wr_id: u64,
    /// Where an incoming message is scattered.
    pub sges: Vec<SgePlan>,
}

/// A value an expectation wants, possibly different per NIC profile.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct PerProfile<T> {
    mlx5: Option<T>,
    rxe: Option<T>,
    ibta: Option<T>,
}

impl<T> PerProfile<T> {
    /// The same value under every profile.
    pub fn all(v: T) -> Self
    where
        T: Clone,
    {
        PerProfile {
            mlx5: Some(v.clone()),
            rxe: Some(v.clone()),
            ibta: Some(v),
        }
    }
    /// No value under any profile (to fill in with [`PerProfile::set`]).
    pub fn none() -> Self {
        PerProfile {
            mlx5: None,
            rxe: None,
            ibta: None,
        }
    }
    /// Sets the value for `p`.
    pub fn set(&mut self, p: NicProfile, v: T) {
        match p {
            NicProfile::Mlx5 => self.mlx5 = Some(v),
            NicProfile::Rxe => self.rxe = Some(v),
            NicProfile::Ibta => self.ibta = Some(v),
        }
    }
    /// The value wanted under `p`; `None` means "not checked under this profile".
    pub fn get(&self, p: NicProfile) -> Option<&T> {
        match p {
            NicProfile::Mlx5 => self.mlx5.as_ref(),
            NicProfile::Rxe => self.rxe.as_ref(),
            NicProfile::Ibta => self.ibta.as_ref(),
        }
    }
}

/// What a verb returns: 0 or an errno.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Ret {
    /// Success (0, or a non-NULL object).
    Ok,
    /// This errno.
    Err(Errno),
}

impl Ret {
    /// `ok` or the errno's name.
    pub fn name(self) -> &'static str {
        match self {
            Ret::Ok => "ok",
            Ret::Err(e) => e.name(),
        }
    }
}

/// What the step's outcome must be. Absent fields are not checked, except `ret`, which
/// defaults to `ok` for every verbs call (see the README).
#[derive(Clone, Debug, Default)]
pub struct Expect {
    /// The return code.
    pub ret: Option<PerProfile<Ret>>,
    /// For failed chains: the index of `*bad_wr` (`None` inside: the provider did not set it).
    pub bad_wr: Option<PerProfile<Option<usize>>>,
    /// `poll_cq`: how many completions.
    pub completions: Option<PerProfile<usize>>,
    /// `poll_cq`: the completions, in order (also fixes their number).
    pub wc: Option<Vec<WcExpect>>,
    /// The state of QPs after the step.
    pub qp_states: Vec<(HandleId, PerProfile<QpState>)>,
    /// Bytes in memory after the step.
    pub memory: Vec<MemExpect>,
    /// `get_cq_event`: the event returned.
    pub event: Option<EventExpect>,
    /// `query_qp`: whether the QP reports `sq_draining` (in SQD with WQEs still in flight).
    pub sq_draining: Option<PerProfile<bool>>,
}

/// The event a `get_cq_event` or `get_async_event` returns; absent fields are not checked.
#[derive(Clone, Debug, Default)]
pub struct EventExpect {
    /// The CQ it names.
    pub cq: Option<HandleId>,
    /// `get_async_event`: the QP it names.
    pub qp: Option<HandleId>,
    /// `get_async_event`: the event's name without `IBV_EVENT_` (`COMM_EST`). A profile
    /// without an entry checks nothing about the event.
    pub kind: Option<PerProfile<&'static str>>,
}

/// One expected completion; absent fields are not checked.
#[derive(Clone, Debug, Default)]
pub struct WcExpect {
    /// `wr_id`.
    pub wr_id: Option<PerProfile<u64>>,
    /// `status`.
    pub status: Option<PerProfile<WcStatus>>,
    /// `opcode`.
    pub opcode: Option<PerProfile<WcOpcode>>,
    /// `byte_len`.
    pub byte_len: Option<PerProfile<u32>>,
    /// `imm_data` (`None` inside: no immediate data).
    pub imm_data: Option<PerProfile<Option<u32>>>,
    /// `qp_num`, as a QP handle.
    pub qp: Option<HandleId>,
    /// UD: `src_qp`, the sending QP, as a QP handle.
    pub src_qp: Option<HandleId>,
    /// UD: whether `IBV_WC_GRH` is set in `wc_flags`.
    pub grh: Option<bool>,
}

/// Bytes that must be in memory.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct MemExpect {
    /// Where.
    pub at: MemRef,
    /// The bytes (possibly different per NIC profile).
    pub bytes: PerProfile<Vec<u8>>,
    /// How the file wrote them (so the report shows them the same way).
    pub shown_as: DataForm,
}

/// How bytes were written in the file.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum DataForm {
    /// `text = "..."`.
    Text,
    /// `hex = "..."`.
    Hex,
    /// `u64 = N` (8 bytes, little-endian).
    U64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_uses_are_the_peer_side_only() {
        let wr = SendWrPlan {
            line: 1,
            wr_id: 0,
            opcode: SendOpcode::RdmaWrite,
            flags: SendFlags::empty(),
            sges: vec![SgePlan {
                mr: HandleId(1),
                offset: 0,
                len: None,
                lkey: None,
            }],
            remote: Some(RemotePlan {
                target: HandleId(2),
                offset: 0,
                rkey: KeyRef::Mr(HandleId(3)),
            }),
            imm: 0,
            compare_add: 0,
            swap: 0,
            ud: None,
        };
        let post = Call::PostSend {
            qp: HandleId(0),
            wrs: vec![wr],
        };
        assert_eq!(
            post.uses(),
            [HandleId(0), HandleId(1), HandleId(2), HandleId(3)]
        );
        // The local QP and the local SGE's MR must be alive; the peer's MR may be stale.
        assert_eq!(post.remote_uses(), [HandleId(2), HandleId(3)]);
        assert_eq!(post.destroys(), None);
        let d = Call::DestroyCompChannel {
            channel: HandleId(4),
        };
        assert_eq!(d.destroys(), Some(HandleId(4)));
        assert_eq!(d.uses(), [HandleId(4)]);
        let cq = Call::CreateCq {
            host: HostId(0),
            cqe: 1,
            channel: Some(HandleId(4)),
            out: HandleId(5),
        };
        assert_eq!(cq.uses(), [HandleId(4)]);
    }
}
