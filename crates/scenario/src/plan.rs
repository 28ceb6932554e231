//! The typed plan and its schema: every key a scenario file may set, its kind, bounds, unit and
//! meaning (DESIGN.md §3.8). The schema table [`KEYS`] is the single source for parsing,
//! `--set`, [`Plan::to_toml`] and the key table in `scenarios/README.md`.

use std::fmt::Write as _;

use crate::rule::{Rule, Why};

mod check;

pub use check::Conflict;

/// Defines a closed set of names a scenario value may take.
macro_rules! named_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $var:ident = $s:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
        pub enum $name {
            $($(#[$vm])* $var),+
        }
        impl $name {
            /// Every value, in the order of [`Self::NAMES`].
            pub const ALL: &'static [$name] = &[$($name::$var),+];
            /// The names scenario files use.
            pub const NAMES: &'static [&'static str] = &[$($s),+];
            /// The name a scenario file uses for this value.
            pub const fn name(self) -> &'static str {
                match self { $($name::$var => $s),+ }
            }
            /// The value a scenario file names, if the name is known.
            pub fn from_name(s: &str) -> Option<Self> {
                match s { $($s => Some($name::$var),)+ _ => None }
            }
        }
        impl FieldValue for $name {
            fn to_value(&self) -> Value {
                Value::Str(self.name().to_string())
            }
            fn from_value(v: &Value) -> Option<Self> {
                match v {
                    Value::Str(s) => $name::from_name(s),
                    _ => None,
                }
            }
        }
    };
}

named_enum! {
    /// Which NIC's verbs behaviour the hosts reproduce (DESIGN.md §3.4).
    NicKind { /// ConnectX-5/6 with rdma-core's mlx5 provider.
        Mlx5 = "mlx5", /// Soft-RoCE (rxe).
        Rxe = "rxe", /// The IBTA specification read literally.
        Ibta = "ibta" }
}

named_enum! {
    /// The shape of the fabric.
    TopologyKind { /// `hosts` hosts on one switch (the lessons' pair is 2 hosts).
        Switch = "switch", /// Two hosts cabled NIC to NIC, no switch.
        BackToBack = "back_to_back", /// `hosts` leaf switches with one host each, every leaf
        /// wired to each of `spines` spine switches: equal-cost paths, chosen per flow by ECMP.
        LeafSpine = "leaf_spine", /// A three-tier k-ary fat tree of k³/4 hosts (`topology.k`).
        FatTree = "fat_tree" }
}

named_enum! {
    /// When a switch may start sending a frame it is still receiving.
    ForwardingKind { /// As soon as the headers are in.
        CutThrough = "cut_through", /// Only after the last bit arrived.
        StoreAndForward = "store_and_forward" }
}

named_enum! {
    /// The RDMA operation the workload posts.
    Operation { /// One-sided RDMA WRITE.
        Write = "write", /// One-sided RDMA READ.
        Read = "read", /// Two-sided SEND (the responder posts RECVs).
        Send = "send" }
}

named_enum! {
    /// The RDMA queue-pair type.
    QpKind { /// Reliable connected.
        Rc = "rc", /// Unreliable connected.
        Uc = "uc", /// Unreliable datagram.
        Ud = "ud" }
}

named_enum! {
    /// How the RDMA requester recovers lost packets (lesson 5).
    Retransmission { /// Classic RoCE: resend everything from the lost PSN.
        GoBackN = "go_back_n", /// Newer NICs: resend only what was lost.
        Selective = "selective" }
}

named_enum! {
    /// How switches choose among equal-cost ports.
    EcmpKind { /// CRC-16 of the 5-tuple, as switch ASICs: consecutive QPs spread evenly.
        Crc16 = "crc16", /// The CRC mixed with a per-switch salt: random-like, no polarisation.
        Mixed = "mixed" }
}

named_enum! {
    /// Which DCQCN parameters the NICs use.
    DcqcnProfile { /// Current NVIDIA firmware defaults (research/figures.md §6.1).
        Nvidia = "nvidia", /// The 2015 paper's (research/figures.md §6.2).
        Paper = "paper" }
}

named_enum! {
    /// The QP state the setup drives both QPs to before the workload posts (lesson 4).
    QpStateKind { /// Created, never modified.
        Reset = "reset", /// RESET → INIT.
        Init = "init", /// … → RTR: can receive, cannot send.
        Rtr = "rtr", /// … → RTS: ready to send.
        Rts = "rts" }
}

named_enum! {
    /// How the application learns of completions.
    Completion { /// Busy-poll the CQ from user space.
        Poll = "poll", /// Arm the CQ and sleep on the completion channel (interrupt + wake-up).
        Event = "event" }
}

named_enum! {
    /// The TCP congestion controller.
    Congestion { /// CUBIC (Linux default).
        Cubic = "cubic", /// NewReno.
        NewReno = "newreno", /// DCTCP (needs `tcp.ecn = true`).
        Dctcp = "dctcp" }
}

named_enum! {
    /// What traffic the run makes.
    Pattern { /// Every host in one collective (`rdmalab collective`: all-reduce, all-gather,
        /// reduce-scatter, all-to-all over RC or TCP).
        Collective = "collective", /// One TCP path and one RDMA path between hosts 0 and 1 (the comparison report).
        Pair = "pair", /// Every host writes `message_bytes` over RC to another, a random
        /// permutation with no host writing to itself; runs until every flow completes.
        Permutation = "permutation", /// The flows of a csg-htsim connection matrix
        /// (`workload.matrix`), each an RC WRITE, at their start times or triggers.
        Matrix = "matrix" }
}

named_enum! {
    /// A collective's operation (nccl-tests' names).
    CollectiveOp { /// Every rank ends with every rank's block.
        AllGather = "all_gather", /// Every rank ends with the element-wise sum.
        AllReduce = "all_reduce", /// Block j of rank i ends as block i of rank j.
        AllToAll = "alltoall", /// Rank r ends with part r of the sum.
        ReduceScatter = "reduce_scatter" }
}

named_enum! {
    /// How a collective is scheduled.
    CollectiveAlgorithm { /// Recursive halving and doubling (power-of-two hosts).
        HalvingDoubling = "halving_doubling", /// A ring.
        Ring = "ring" }
}

named_enum! {
    /// What carries a collective.
    CollectiveTransport { /// RC QPs, RDMA WRITE with immediate (NCCL's IB transport).
        Rdma = "rdma", /// Kernel TCP sockets (NCCL's socket transport).
        Tcp = "tcp" }
}

named_enum! {
    /// Which paths the run compares.
    Paths { /// TCP and RDMA side by side (the comparison table).
        Both = "both", /// The kernel TCP path only.
        Tcp = "tcp", /// The RDMA path only.
        Rdma = "rdma" }
}

/// A scalar read from a scenario, before it is stored in the plan.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A non-negative integer.
    Int(u64),
    /// A number (probabilities).
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// A name from a closed set.
    Str(String),
}

impl Value {
    /// The value as a TOML literal.
    pub fn to_toml(&self) -> String {
        match self {
            Value::Int(n) => n.to_string(),
            Value::Float(x) => {
                let s = format!("{x}");
                if s.contains(['.', 'e', 'E']) {
                    s
                } else {
                    format!("{s}.0")
                }
            }
            Value::Bool(b) => b.to_string(),
            Value::Str(s) => format!("{s:?}"),
        }
    }
}

/// A plan field that converts to and from [`Value`].
pub trait FieldValue: Sized {
    /// The field as a scenario value.
    fn to_value(&self) -> Value;
    /// The field from a value already checked against its [`Kind`].
    fn from_value(v: &Value) -> Option<Self>;
}

macro_rules! int_field {
    ($($t:ty),*) => {$(
        impl FieldValue for $t {
            fn to_value(&self) -> Value {
                Value::Int(u64::from(*self))
            }
            fn from_value(v: &Value) -> Option<Self> {
                match v {
                    Value::Int(n) => <$t>::try_from(*n).ok(),
                    _ => None,
                }
            }
        }
    )*};
}
int_field!(u8, u16, u32, u64);

impl FieldValue for bool {
    fn to_value(&self) -> Value {
        Value::Bool(*self)
    }
    fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }
}

impl FieldValue for String {
    fn to_value(&self) -> Value {
        Value::Str(self.clone())
    }
    fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Str(s) => Some(s.clone()),
            _ => None,
        }
    }
}

impl FieldValue for f64 {
    fn to_value(&self) -> Value {
        Value::Float(*self)
    }
    fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Float(x) => Some(*x),
            _ => None,
        }
    }
}

/// A value a scenario may give as a number or leave to the model: `"auto"` derives it from the
/// rest of the plan (e.g. PFC thresholds from the link speed, cable and MTU).
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Auto {
    /// Derived by the model.
    Auto,
    /// Given.
    Fixed(u64),
}

impl Auto {
    /// The given value, or `derived()` when the model derives it.
    pub fn or_else(self, derived: impl FnOnce() -> u64) -> u64 {
        match self {
            Auto::Auto => derived(),
            Auto::Fixed(n) => n,
        }
    }
}

impl FieldValue for Auto {
    fn to_value(&self) -> Value {
        match self {
            Auto::Auto => Value::Str("auto".to_string()),
            Auto::Fixed(n) => Value::Int(*n),
        }
    }
    fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Str(s) if s == "auto" => Some(Auto::Auto),
            Value::Int(n) => Some(Auto::Fixed(*n)),
            _ => None,
        }
    }
}

/// What a key accepts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// An integer in `lo..=hi`.
    Int {
        /// Smallest allowed.
        lo: u64,
        /// Largest allowed.
        hi: u64,
    },
    /// One of these integers.
    OneOf(&'static [u64]),
    /// A probability: a number in 0.0..=1.0.
    Prob,
    /// `true` or `false`.
    Bool,
    /// One of these strings.
    Enum(&'static [&'static str]),
    /// An integer in `lo..=hi`, or the string `"auto"`: the model derives the value
    /// ([`Auto`]).
    IntOrAuto {
        /// Smallest allowed.
        lo: u64,
        /// Largest allowed.
        hi: u64,
    },
    /// A file path (relative to the scenario file's folder) of at most `max` bytes, without
    /// control characters; `""` means none.
    Path {
        /// Longest allowed, bytes.
        max: usize,
    },
}

impl Kind {
    /// The allowed values, as error messages and the README print them.
    pub fn allowed(&self) -> String {
        match self {
            Kind::Int { lo, hi } => format!("{lo}..={hi}"),
            Kind::IntOrAuto { lo, hi } => format!("\"auto\" or {lo}..={hi}"),
            Kind::OneOf(v) => {
                let v: Vec<String> = v.iter().map(u64::to_string).collect();
                format!("one of {}", v.join(", "))
            }
            Kind::Prob => "0.0..=1.0".to_string(),
            Kind::Bool => "true or false".to_string(),
            Kind::Path { max } => {
                format!(
                    "a file path of at most {max} bytes, relative to the scenario file (\"\": none)"
                )
            }
            Kind::Enum(names) => {
                let v: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
                format!("one of {}", v.join(", "))
            }
        }
    }
    /// The TOML type the key takes ("an integer", ...).
    pub fn type_name(&self) -> &'static str {
        match self {
            Kind::Int { .. } | Kind::OneOf(_) => "an integer",
            Kind::Prob => "a number",
            Kind::Bool => "a boolean",
            Kind::Enum(_) | Kind::Path { .. } => "a string",
            Kind::IntOrAuto { .. } => "an integer or \"auto\"",
        }
    }
}

/// One key of the schema.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KeySpec {
    /// The dotted path, e.g. `rdma.mtu_bytes`.
    pub path: &'static str,
    /// What it accepts.
    pub kind: Kind,
    /// Its unit ("" when it has none).
    pub unit: &'static str,
    /// What it means.
    pub doc: &'static str,
}

/// 2^40: the bound on byte counts (buffers, thresholds), as the fabric's own checks.
pub const TIB: u64 = 1 << 40;
/// The most bytes one message may have (1 GiB).
pub const MAX_MESSAGE_BYTES: u64 = 1 << 30;
/// The most bytes a count-mode workload may move in total (1 TiB).
pub const MAX_TOTAL_BYTES: u64 = TIB;

/// Most cross-traffic bursts one stream may schedule (`workload.stream_us / cross_traffic.period_us`).
pub const MAX_BURSTS: u64 = 100_000;

/// The largest send or receive buffer TCP accepts (RFC 7323 window, about 1 GiB).
pub const MAX_TCP_BUFFER_BYTES: u64 = transport::tcp::config::MAX_WINDOW_BYTES as u64;

/// The fabric side: topology, links, switches.
#[derive(Clone, Debug, PartialEq)]
pub struct TopologyPlan {
    /// The shape.
    pub kind: TopologyKind,
    /// Hosts on the switch (`switch` only; `back_to_back` is always 2).
    pub hosts: u64,
    /// Line rate of every link, Gb/s.
    pub link_gbps: u64,
    /// Cable length of every link, metres (5 ns/m).
    pub cable_m: u64,
    /// Spine switches (`leaf_spine` only): the equal-cost paths between two leaves.
    pub spines: u64,
    /// Rate of the leaf–spine links, Gb/s (`leaf_spine` only); 0: `link_gbps`.
    pub spine_gbps: u64,
    /// Hosts on each leaf (`leaf_spine` only): `hosts / hosts_per_leaf` leaves.
    pub hosts_per_leaf: u64,
    /// Fat-tree arity (`fat_tree` only): k³/4 hosts.
    pub k: u64,
    /// One-way delay added between any two hosts, µs (in the hosts' links).
    pub extra_delay_us: u64,
}

/// The NIC.
#[derive(Clone, Debug, PartialEq)]
pub struct NicPlan {
    /// The verbs behaviour profile.
    pub profile: NicKind,
    /// Adaptive retransmission (newer ConnectX firmware): an RTT-based µs timeout instead of
    /// 4.096 µs × 2^timeout.
    pub adaptive_retransmission: bool,
}

/// The host profile knobs.
#[derive(Clone, Debug, PartialEq)]
pub struct HostPlan {
    /// CPU cores available to the workload.
    pub cores: u16,
    /// CPU clock, MHz.
    pub clock_mhz: u32,
    /// PCIe generation.
    pub pcie_generation: u8,
    /// PCIe lanes.
    pub pcie_lanes: u8,
}

/// Every switch.
#[derive(Clone, Debug, PartialEq)]
pub struct SwitchPlan {
    /// Shared packet buffer, bytes.
    pub buffer_bytes: u64,
    /// Most bytes one lossy egress queue may hold.
    pub queue_cap_bytes: u64,
    /// Port-to-port latency, ns.
    pub latency_ns: u64,
    /// Cut-through or store-and-forward.
    pub forwarding: ForwardingKind,
    /// RED-style ECN marking on the RoCE priority (and TCP's class when `tcp.ecn`).
    pub ecn: bool,
    /// Queue depth where marking starts, bytes.
    pub ecn_kmin_bytes: u64,
    /// Queue depth above which every packet is marked, bytes.
    pub ecn_kmax_bytes: u64,
    /// Marking probability just below Kmax.
    pub ecn_pmax: f64,
    /// Mark as frames leave the queue rather than as they join it.
    pub ecn_on_dequeue: bool,
    /// ECMP's hash.
    pub ecmp_hash: EcmpKind,
    /// The IP MTU of every switch port, bytes (0: no limit).
    pub mtu_bytes: u64,
    /// The PFC watchdog's detection time, µs (0: no watchdog).
    pub pfc_watchdog_us: u64,
}

/// Loss.
#[derive(Clone, Debug, PartialEq)]
pub struct LossPlan {
    /// Probability that a frame arriving at a switch "would overflow the buffer" (lesson 5):
    /// dropped on a lossy priority, turned into PFC back-pressure on a lossless one.
    pub congestion_drop: f64,
    /// Independent per-frame corruption on every link (PFC cannot prevent it).
    pub corruption: f64,
}

/// Bursty cross traffic (preset ⑤b): real congestion instead of drawn drops. Hosts 2, 3, …
/// each send a burst of raw frames at line rate to host 1 (the receiver of the path under
/// test) every `period_us`, in the path's own traffic class, so the bursts and the path share
/// one egress queue: on a lossy class the queue overflows and drops frames of both, on the
/// lossless RoCE class PFC pauses every sender instead.
#[derive(Clone, Debug, PartialEq)]
pub struct CrossTrafficPlan {
    /// Bytes each sender sends per burst; 0 turns cross traffic off.
    pub burst_bytes: u64,
    /// Time from one burst's start to the next's.
    pub period_us: u64,
    /// Hosts sending bursts at the same time (hosts 2 .. 2 + senders).
    pub senders: u64,
}

/// PFC on the RoCE priority.
#[derive(Clone, Debug, PartialEq)]
pub struct LosslessPlan {
    /// PFC on `priority`; TCP stays in a lossy class.
    pub enabled: bool,
    /// The RoCE priority (PCP), 0..=7.
    pub priority: u8,
    /// Ingress bytes of one port and priority at which PAUSE goes upstream (`Auto`: mlx5's
    /// rule, [`fabric::pfc::mlx5_thresholds`]).
    pub xoff_bytes: Auto,
    /// Ingress bytes at or below which RESUME goes upstream (`Auto`: one max MTU below XOFF).
    pub xon_bytes: Auto,
}

/// The RDMA side.
#[derive(Clone, Debug, PartialEq)]
pub struct RdmaPlan {
    /// The operation posted.
    pub operation: Operation,
    /// QP type.
    pub qp_type: QpKind,
    /// Go-back-N or selective repeat.
    pub retransmission: Retransmission,
    /// Local ACK timeout exponent: 4.096 µs × 2^timeout; 0 waits forever.
    pub timeout: u8,
    /// Retries after a timeout or sequence NAK.
    pub retry_cnt: u8,
    /// Path MTU, bytes.
    pub mtu_bytes: u64,
    /// Whether the buffers are registered (lesson 4: unregistered, post_send returns 0 and the WR
    /// completes with a local protection error when the NIC gathers the payload).
    pub memory_registered: bool,
    /// The state the QPs reach before posting (lesson 4: below RTS nothing is sent; how the post
    /// fails depends on the NIC profile).
    pub qp_state: QpStateKind,
    /// Poll or event completions.
    pub completion: Completion,
    /// DCQCN rate control at the NICs (needs `switch.ecn = true`).
    pub dcqcn: bool,
    /// DCQCN's parameter set.
    pub dcqcn_profile: DcqcnProfile,
}

/// The TCP side.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpPlan {
    /// Congestion controller.
    pub congestion_control: Congestion,
    /// IP MTU, bytes (the MSS option announces the path MTU − 40; timestamps take 12 of that).
    pub mtu_bytes: u64,
    /// TCP segmentation offload.
    pub tso: bool,
    /// Generic receive offload.
    pub gro: bool,
    /// Send buffer, bytes.
    pub send_buffer_bytes: u64,
    /// Receive buffer, bytes.
    pub recv_buffer_bytes: u64,
    /// SO_BUSY_POLL on the reader.
    pub busy_poll: bool,
    /// Interrupt coalescing (ethtool -C rx-usecs): the receive interrupt waits at most this
    /// long after the first waiting segment, µs.
    pub rx_usecs: u64,
    /// Interrupt coalescing (ethtool -C rx-frames): or until this many segments wait.
    pub rx_frames: u32,
    /// Minimum RTO, µs.
    pub min_rto_us: u64,
    /// SACK.
    pub sack: bool,
    /// Negotiate ECN.
    pub ecn: bool,
}

/// What the application does.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadPlan {
    /// Which paths run.
    pub paths: Paths,
    /// Bytes per message.
    pub message_bytes: u64,
    /// Messages per connection (count mode, when `stream_us` is 0).
    pub messages: u64,
    /// Stream for this long, µs; 0 = count mode.
    pub stream_us: u64,
    /// Connections (TCP) and QPs (RDMA) running at once.
    pub concurrency: u64,
    /// The traffic pattern.
    pub pattern: Pattern,
    /// The connection matrix `pattern = "matrix"` runs: a csg-htsim `.cm` file, relative to the
    /// scenario file's folder; empty otherwise.
    pub matrix: String,
}

/// A collective (`workload.pattern = "collective"`; its size is `workload.message_bytes`
/// per host).
#[derive(Clone, Debug, PartialEq)]
pub struct CollectivePlan {
    /// The operation.
    pub op: CollectiveOp,
    /// The algorithm.
    pub algorithm: CollectiveAlgorithm,
    /// The transport.
    pub transport: CollectiveTransport,
    /// Parallel rings.
    pub channels: u64,
    /// QPs (sockets) per connection.
    pub qps_per_connection: u64,
    /// Bytes per chunk.
    pub chunk_bytes: u64,
    /// Host reduction cost, ps per KiB.
    pub reduce_ps_per_kib: u64,
}

/// A parsed, bounded scenario (DESIGN.md §3.8). `Plan::default()` is what an empty file gives.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The seed every random stream derives from.
    pub seed: u64,
    /// Host profile knobs.
    pub host: HostPlan,
    /// NIC profile.
    pub nic: NicPlan,
    /// Topology and links.
    pub topology: TopologyPlan,
    /// Switches.
    pub switch: SwitchPlan,
    /// Loss.
    pub loss: LossPlan,
    /// PFC.
    pub lossless: LosslessPlan,
    /// Bursty cross traffic.
    pub cross_traffic: CrossTrafficPlan,
    /// The RDMA side.
    pub rdma: RdmaPlan,
    /// The TCP side.
    pub tcp: TcpPlan,
    /// The workload.
    pub workload: WorkloadPlan,
    /// The collective (`workload.pattern = "collective"`).
    pub collective: CollectivePlan,
    /// What one simulation may use before it is stopped.
    pub budget: BudgetPlan,
}

/// What one simulation of the plan may use: a run that reaches a limit stops and says which
/// key to raise.
#[derive(Clone, Debug, PartialEq)]
pub struct BudgetPlan {
    /// Simulated time, ms.
    pub max_sim_time_ms: u64,
    /// Events.
    pub max_events: u64,
    /// Wall-clock time on this machine, s.
    pub max_wall_s: u64,
    /// Memory the run's growing state may hold (counted: records kept, packets in flight,
    /// buffers), MB.
    pub max_memory_mb: u64,
}

impl Default for Plan {
    fn default() -> Self {
        Plan {
            seed: 1,
            host: HostPlan {
                cores: 16,
                clock_mhz: 3_000,
                pcie_generation: 3,
                pcie_lanes: 16,
            },
            nic: NicPlan {
                profile: NicKind::Mlx5,
                adaptive_retransmission: false,
            },
            topology: TopologyPlan {
                kind: TopologyKind::Switch,
                hosts: 2,
                link_gbps: 100,
                cable_m: 2,
                spines: 4,
                spine_gbps: 0,
                hosts_per_leaf: 1,
                k: 4,
                extra_delay_us: 0,
            },
            switch: SwitchPlan {
                buffer_bytes: 16 << 20,
                queue_cap_bytes: 2 << 20,
                latency_ns: 300,
                forwarding: ForwardingKind::CutThrough,
                ecn: false,
                ecn_kmin_bytes: 5_000,
                ecn_kmax_bytes: 200_000,
                ecn_pmax: 0.01,
                ecn_on_dequeue: false,
                ecmp_hash: EcmpKind::Crc16,
                mtu_bytes: 0,
                pfc_watchdog_us: 0,
            },
            loss: LossPlan {
                congestion_drop: 0.0,
                corruption: 0.0,
            },
            lossless: LosslessPlan {
                enabled: false,
                priority: 3,
                xoff_bytes: Auto::Auto,
                xon_bytes: Auto::Auto,
            },
            cross_traffic: CrossTrafficPlan {
                burst_bytes: 0,
                period_us: 100,
                senders: 1,
            },
            budget: BudgetPlan {
                max_sim_time_ms: 10_000,
                max_events: 500_000_000,
                max_wall_s: 300,
                max_memory_mb: 8_192,
            },
            rdma: RdmaPlan {
                operation: Operation::Write,
                qp_type: QpKind::Rc,
                retransmission: Retransmission::GoBackN,
                timeout: 14,
                retry_cnt: 7,
                mtu_bytes: 4096,
                memory_registered: true,
                qp_state: QpStateKind::Rts,
                completion: Completion::Poll,
                dcqcn: false,
                dcqcn_profile: DcqcnProfile::Nvidia,
            },
            tcp: TcpPlan {
                congestion_control: Congestion::Cubic,
                mtu_bytes: 1500,
                tso: true,
                gro: true,
                send_buffer_bytes: 4 << 20,
                recv_buffer_bytes: 6 << 20,
                busy_poll: false,
                rx_usecs: 8,
                rx_frames: 32,
                min_rto_us: 1_000,
                sack: true,
                ecn: false,
            },
            workload: WorkloadPlan {
                paths: Paths::Both,
                message_bytes: 4096,
                messages: 1,
                stream_us: 0,
                concurrency: 1,
                pattern: Pattern::Pair,
                matrix: String::new(),
            },
            collective: CollectivePlan {
                op: CollectiveOp::AllReduce,
                algorithm: CollectiveAlgorithm::Ring,
                transport: CollectiveTransport::Rdma,
                channels: 1,
                qps_per_connection: 1,
                // source: NCCL's DEFAULT_BUFFSIZE (4 MiB, src/init.cc) over NCCL_STEPS (8,
                // src/include/device.h). The reduction cost is rdmalab::collective's stated
                // assumption (8 GB/s on one core).
                chunk_bytes: 512 << 10,
                reduce_ps_per_kib: 128_000,
            },
        }
    }
}

macro_rules! schema {
    ($( $path:literal => $($field:ident).+ : $kind:expr, $unit:literal, $doc:literal; )*) => {
        /// Every key a scenario may set, in file order.
        pub const KEYS: &[KeySpec] = &[
            $( KeySpec { path: $path, kind: $kind, unit: $unit, doc: $doc } ),*
        ];

        /// Stores `v` (already checked against the key's kind) at `path`; false if the path
        /// is unknown or the value does not fit the field.
        pub(crate) fn apply(plan: &mut Plan, path: &str, v: &Value) -> bool {
            match path {
                $( $path => match FieldValue::from_value(v) {
                    Some(x) => {
                        plan.$($field).+ = x;
                        true
                    }
                    None => false,
                }, )*
                _ => false,
            }
        }

        /// The value at `path`, if the path is a key.
        pub fn get(plan: &Plan, path: &str) -> Option<Value> {
            match path {
                $( $path => Some(plan.$($field).+.to_value()), )*
                _ => None,
            }
        }
    };
}

const fn int(lo: u64, hi: u64) -> Kind {
    Kind::Int { lo, hi }
}

schema! {
    "seed" => seed: int(0, i64::MAX as u64), "", "Seed every random stream (loss draws, ECMP, ECN marks) derives from. Same seed, same run.";
    "host.cores" => host.cores: int(1, 1_024), "cores", "CPU cores available to the workload.";
    "host.clock_mhz" => host.clock_mhz: int(100, 10_000), "MHz", "CPU clock. The costs that are CPU instructions (posting a WQE, polling a CQ, the TCP/IP stack, driver and softirq work) are stated at 3000 MHz and scale as 3000 / clock_mhz; the copy (memory bandwidth), syscall, interrupt, wake-up, PCIe and NIC do not (crates/host `HostProfile::at_clock`).";
    "host.pcie_generation" => host.pcie_generation: int(3, 6), "", "PCIe generation between memory and NIC.";
    "host.pcie_lanes" => host.pcie_lanes: Kind::OneOf(&[1, 2, 4, 8, 16]), "lanes", "PCIe lanes.";
    "nic.profile" => nic.profile: Kind::Enum(NicKind::NAMES), "", "Whose verbs behaviour the NICs reproduce (DESIGN.md §3.4).";
    "nic.adaptive_retransmission" => nic.adaptive_retransmission: Kind::Bool, "", "Adaptive retransmission (ConnectX-6 Dx and later firmware): the RC ACK timeout follows the measured round trip (SRTT + 4·RTTVAR, at least 4 µs, doubling per timeout in a row) instead of 4.096 µs × 2^rdma.timeout, which becomes its cap.";
    "topology.kind" => topology.kind: Kind::Enum(TopologyKind::NAMES), "", "`switch`: `hosts` hosts on one switch; `back_to_back`: two hosts, one cable; `leaf_spine`: `hosts` hosts, `hosts_per_leaf` on each leaf (one by default), and `spines` spines.";
    "topology.hosts" => topology.hosts: int(2, 4_096), "hosts", "Hosts on the switch; must be 2 for `back_to_back`.";
    "topology.link_gbps" => topology.link_gbps: int(1, 1_600), "Gb/s", "Line rate of every link.";
    "topology.cable_m" => topology.cable_m: int(0, 100_000), "m", "Cable length of every link; propagation 5 ns/m.";
    "topology.k" => topology.k: int(2, 32), "ports", "Switch radix of a `fat_tree` (even): k³/4 hosts, k²/4 core switches, 5k²/4 switches in all.";
    "topology.spine_gbps" => topology.spine_gbps: int(0, 1_600), "Gb/s", "Rate of each leaf–spine link of a `leaf_spine` fabric (0: `link_gbps`). Four spines at 25 Gb/s carry one 100 Gb/s host only if its traffic spreads over all four.";
    "topology.extra_delay_us" => topology.extra_delay_us: int(0, 10_000), "µs", "One-way delay added between any two hosts, as a long-haul span or a delay emulator would add (the round trip grows by twice this), without lengthening the cables: it sits in the hosts' own links (half in each, all of it on a `back_to_back` cable), so switch-to-switch links keep their propagation. PFC headroom grows with it; mlx5's `\"auto\"` thresholds, which count the cable, do not.";
    "topology.hosts_per_leaf" => topology.hosts_per_leaf: int(1, 256), "hosts", "Hosts on each leaf of a `leaf_spine` fabric, as a rack's servers on their top-of-rack switch: `topology.hosts` must be a multiple of it, and hosts of one leaf reach each other through it alone. Hosts are numbered leaf by leaf, so a collective's ring (which follows host order) crosses the spines once per leaf.";
    "topology.spines" => topology.spines: int(1, 64), "switches", "Spine switches of a `leaf_spine` fabric: the equal-cost paths between two leaves (ECMP picks one per flow from the 5-tuple; RoCE's UDP source port comes from the QP number).";
    "switch.buffer_bytes" => switch.buffer_bytes: int(1_500, TIB), "bytes", "Shared packet buffer of each switch.";
    "switch.queue_cap_bytes" => switch.queue_cap_bytes: int(64, TIB), "bytes", "Most bytes one lossy egress queue may hold.";
    "switch.latency_ns" => switch.latency_ns: int(0, 1_000_000), "ns", "Port-to-port pipeline latency.";
    "switch.forwarding" => switch.forwarding: Kind::Enum(ForwardingKind::NAMES), "", "Cut-through or store-and-forward.";
    "switch.ecn" => switch.ecn: Kind::Bool, "", "RED-style ECN marking on the RoCE priority (and on TCP's class when `tcp.ecn`).";
    "switch.ecn_kmin_bytes" => switch.ecn_kmin_bytes: int(0, TIB), "bytes", "Queue depth where marking starts; at most `ecn_kmax_bytes`.";
    "switch.ecn_kmax_bytes" => switch.ecn_kmax_bytes: int(1, TIB), "bytes", "Queue depth above which every ECN-capable packet is marked.";
    "switch.ecn_pmax" => switch.ecn_pmax: Kind::Prob, "probability", "Marking probability just below Kmax.";
    "switch.ecmp_hash" => switch.ecmp_hash: Kind::Enum(EcmpKind::NAMES), "", "How a switch picks among equal-cost ports: `crc16` (the 5-tuple's CRC-16 folded and seeded per switch, as ASICs do; RoCE QPs of one host, whose UDP source ports follow their QP numbers, spread evenly) or `mixed` (the CRC through a per-switch mixing function: random-like spread, no polarisation across tiers).";
    "switch.ecn_on_dequeue" => switch.ecn_on_dequeue: Kind::Bool, "", "Mark a frame as it leaves the egress queue, by the depth it leaves behind (htsim's ECN queue), instead of as it joins: the sender hears of the queue one queueing delay sooner.";
    "switch.mtu_bytes" => switch.mtu_bytes: int(0, 9_216), "bytes", "IP MTU of every switch port (0: no limit; else at least 576): longer frames are dropped. RDMA at `rdma.mtu_bytes = 4096` through 1500-byte ports loses every full-size packet while TCP, whose MSS follows the path MTU, passes.";
    "switch.pfc_watchdog_us" => switch.pfc_watchdog_us: int(0, 1_000_000), "µs", "PFC watchdog detection time (0: none): an egress queue paused with frames in it for this long is dropped, and its pauses ignored, until no PAUSE has arrived for twice as long.";
    "loss.congestion_drop" => loss.congestion_drop: Kind::Prob, "probability", "Chance a frame arriving at a switch would overflow its buffer: dropped on a lossy priority, PFC back-pressure on a lossless one (lesson 5).";
    "loss.corruption" => loss.corruption: Kind::Prob, "probability", "Independent per-frame corruption on every link; PFC cannot prevent it.";
    "lossless.enabled" => lossless.enabled: Kind::Bool, "", "PFC on the RoCE priority (\"lossless network\"); TCP stays in a lossy class.";
    "lossless.priority" => lossless.priority: int(0, 7), "", "The priority (PCP) RoCE traffic uses.";
    "lossless.xoff_bytes" => lossless.xoff_bytes: Kind::IntOrAuto { lo: 1, hi: TIB }, "bytes", "Ingress bytes of one port and priority at which PAUSE goes upstream; below `switch.buffer_bytes`. `\"auto\"`: Linux mlx5's rule (en/port_buffer.c `calculate_xoff`): (301 + 2.16 × `topology.cable_m`) × `topology.link_gbps` (at least 40) + 2.72 × the port MTU (the larger of `tcp.mtu_bytes` and `rdma.mtu_bytes` + 96, the header room Linux keeps beside a RoCE path MTU, `iboe_get_mtu`). The switch keeps its PFC headroom above XOFF on top, sized from the port MTU, the cable and IEEE 802.3's PAUSE reaction time; `rdmalab run` prints all three.";
    "lossless.xon_bytes" => lossless.xon_bytes: Kind::IntOrAuto { lo: 0, hi: TIB }, "bytes", "Ingress bytes at or below which RESUME goes upstream; at most `xoff_bytes`. `\"auto\"`: mlx5's rule, one max MTU (the port MTU, at least 9216) below XOFF, never below one MTU.";
    "cross_traffic.burst_bytes" => cross_traffic.burst_bytes: int(0, 1 << 30), "bytes", "Bytes each cross-traffic host sends to host 1 per burst, at line rate, in the path's traffic class (preset ⑤b); 0 = none. Needs stream mode and `topology.hosts` ≥ 2 + `senders`.";
    "cross_traffic.period_us" => cross_traffic.period_us: int(1, 1_000_000), "µs", "Time from one burst's start to the next's; at most 100 000 bursts per stream.";
    "cross_traffic.senders" => cross_traffic.senders: int(1, 64), "hosts", "Hosts (2, 3, …) that burst at the same time.";
    "budget.max_sim_time_ms" => budget.max_sim_time_ms: int(1, 3_600_000), "ms", "Simulated time one simulation may cover (each of a report's runs counts alone); past it the run stops and says so.";
    "budget.max_events" => budget.max_events: int(1_000, 100_000_000_000), "events", "Events one simulation may process; past it the run stops and says so.";
    "budget.max_wall_s" => budget.max_wall_s: int(1, 86_400), "s", "Wall-clock time one simulation may take on this machine (the web lab caps it at its own limit); past it the run stops and says so.";
    "budget.max_memory_mb" => budget.max_memory_mb: int(16, 1_048_576), "MB", "Memory one simulation's growing state may hold: the trace records it keeps, packets in flight, events queued and host buffers, counted (not measured, so the limit is deterministic; the process needs some tens of MB more). Past it the run stops and says so. The web lab caps it at its own limit.";
    "rdma.operation" => rdma.operation: Kind::Enum(Operation::NAMES), "", "The verb the workload posts: one-sided `write`/`read` or two-sided `send` (lesson 3).";
    "rdma.qp_type" => rdma.qp_type: Kind::Enum(QpKind::NAMES), "", "QP type. UC has no `read`; UD has only `send`, one MTU per message.";
    "rdma.retransmission" => rdma.retransmission: Kind::Enum(Retransmission::NAMES), "", "Loss recovery: go-back-N (classic RoCE) or selective repeat (lesson 5).";
    "rdma.timeout" => rdma.timeout: int(0, 31), "exponent", "Local ACK timeout = 4.096 µs × 2^timeout; 0 waits forever.";
    "rdma.retry_cnt" => rdma.retry_cnt: int(0, 7), "retries", "Retries after a timeout or sequence NAK before the QP fails.";
    "rdma.mtu_bytes" => rdma.mtu_bytes: Kind::OneOf(&[256, 512, 1_024, 2_048, 4_096]), "bytes", "RoCE path MTU (payload per packet).";
    "rdma.memory_registered" => rdma.memory_registered: Kind::Bool, "", "Whether the buffers are registered; `false`: post_send still returns 0, and the WR completes with a local protection error when the NIC gathers the payload (lesson 4).";
    "rdma.qp_state" => rdma.qp_state: Kind::Enum(QpStateKind::NAMES), "", "State the QPs reach before posting; below `rts` nothing is sent (lesson 4: mlx5 accepts the post and never completes it, rxe returns EINVAL).";
    "rdma.completion" => rdma.completion: Kind::Enum(Completion::NAMES), "", "`poll`: busy-poll the CQ; `event`: completion channel (interrupt + wake-up).";
    "rdma.dcqcn" => rdma.dcqcn: Kind::Bool, "", "DCQCN rate control at the NICs: CNPs for ECN-marked packets, each QP paced at its DCQCN rate; needs `switch.ecn = true`.";
    "rdma.dcqcn_profile" => rdma.dcqcn_profile: Kind::Enum(DcqcnProfile::NAMES), "", "DCQCN parameters: current NVIDIA firmware defaults or the 2015 paper's.";
    "tcp.congestion_control" => tcp.congestion_control: Kind::Enum(Congestion::NAMES), "", "Congestion controller; `dctcp` needs `tcp.ecn = true`.";
    "tcp.mtu_bytes" => tcp.mtu_bytes: int(576, 9_216), "bytes", "IP MTU of the hosts' interfaces, up to a 9216-byte jumbo frame; every port takes frames this long (or a full RoCE packet, if longer). TCP's MSS option announces the path MTU − 40 (the smaller of this and a nonzero `switch.mtu_bytes`, what Path MTU Discovery settles on); with timestamps on, as Linux's default, a full segment carries 12 bytes less: 1448 B at MTU 1500, 8948 B at 9000.";
    "tcp.tso" => tcp.tso: Kind::Bool, "", "TCP segmentation offload (one stack pass per 64 KiB super-segment).";
    "tcp.gro" => tcp.gro: Kind::Bool, "", "Generic receive offload (merge in-order segments before the stack).";
    "tcp.send_buffer_bytes" => tcp.send_buffer_bytes: int(1, MAX_TCP_BUFFER_BYTES), "bytes", "Send buffer (unacknowledged data).";
    "tcp.recv_buffer_bytes" => tcp.recv_buffer_bytes: int(1, MAX_TCP_BUFFER_BYTES), "bytes", "Receive buffer (the advertised window's ceiling).";
    "tcp.busy_poll" => tcp.busy_poll: Kind::Bool, "", "SO_BUSY_POLL: the reader spins instead of taking an interrupt and a wake-up.";
    "tcp.rx_usecs" => tcp.rx_usecs: int(0, 10_000), "µs", "Interrupt coalescing, as `ethtool -C rx-usecs`: the receive interrupt fires this long after the first segment lands in the ring (0: at once), or earlier when `rx_frames` segments wait; busy-poll skips it. Default 8, mlx5's CQE-based period (drivers/net/ethernet/mellanox/mlx5/core/en.h); adaptive moderation is not modelled.";
    "tcp.rx_frames" => tcp.rx_frames: int(1, 65_535), "segments", "Interrupt coalescing, as `ethtool -C rx-frames`: the receive interrupt fires once this many segments wait in the ring (1: one per segment). Default 32, mlx5's (en.h).";
    "tcp.min_rto_us" => tcp.min_rto_us: int(1, 1_000_000), "µs", "Lower bound on the retransmission timeout (Linux: 200 ms; data centres: 1 ms); at most the 1 s initial RTO.";
    "tcp.sack" => tcp.sack: Kind::Bool, "", "Selective acknowledgements (RFC 2018/6675).";
    "tcp.ecn" => tcp.ecn: Kind::Bool, "", "Negotiate ECN and send ECT(0).";
    "workload.paths" => workload.paths: Kind::Enum(Paths::NAMES), "", "Which paths run: `both` (the comparison table), `tcp` or `rdma`.";
    "workload.message_bytes" => workload.message_bytes: int(1, MAX_MESSAGE_BYTES), "bytes", "Bytes per message.";
    "workload.messages" => workload.messages: int(1, 1_000_000), "messages", "Messages per connection in count mode (`stream_us = 0`); at most 1 TiB in total.";
    "workload.stream_us" => workload.stream_us: int(0, 10_000_000), "µs", "Stream back-to-back messages for this long; 0 = count mode.";
    "workload.concurrency" => workload.concurrency: int(1, 1_024), "connections", "TCP connections and RDMA QPs running at once.";
    "workload.pattern" => workload.pattern: Kind::Enum(Pattern::NAMES), "", "`collective`: every host in one collective (the `[collective]` keys; `message_bytes` per host), reported as nccl-tests does by `rdmalab run`, `rdmalab sweep` and `rdmalab collective`; `pair`: the comparison report of one TCP and one RDMA path between hosts 0 and 1; `permutation`: every host of a `fat_tree` writes `message_bytes` over RC to another (a random derangement from `seed`) until all complete, reported as flow completion times and simulator speed; `matrix`: the flows of `workload.matrix` on a `fat_tree`, reported the same way; both take the transport keys (`rdma.retransmission`, `rdma.dcqcn`, `nic.adaptive_retransmission`, ...) and refuses by name the workload keys it cannot honour (`rdma.operation` other than `write`, `workload.messages` other than 1, streams, concurrency).";
    "workload.matrix" => workload.matrix: Kind::Path { max: 4_096 }, "", "The csg-htsim connection matrix (`.cm`) that `workload.pattern = \"matrix\"` runs, relative to the scenario file: `Nodes`, `Connections`, `Triggers` headers and `SRC->DST [id I] start T|trigger G size S [send_done_trigger G] [recv_done_trigger G]` lines, each an RC WRITE of S bytes at T µs or when trigger G fires (`oneshot`, `barrier count K`); `multishot` triggers, `failure` lines and `prio` are refused by name (crates/scenario/src/matrix.rs). At most 65,536 connections, node ids below the fat tree's host count.";
    "collective.op" => collective.op: Kind::Enum(CollectiveOp::NAMES), "", "The collective `workload.pattern = \"collective\"` runs, nccl-tests' names; `workload.message_bytes` is its size per host.";
    "collective.algorithm" => collective.algorithm: Kind::Enum(CollectiveAlgorithm::NAMES), "", "`ring` (reduce-scatter then all-gather around a ring) or `halving_doubling` (power-of-two hosts; not for `alltoall`).";
    "collective.transport" => collective.transport: Kind::Enum(CollectiveTransport::NAMES), "", "`rdma`: RC QPs and RDMA WRITE with immediate, as NCCL's IB transport; `tcp`: kernel sockets, as NCCL's socket transport.";
    "collective.channels" => collective.channels: int(1, 16), "channels", "Parallel rings, each with its own QPs and its own slice of the buffer.";
    "collective.qps_per_connection" => collective.qps_per_connection: int(1, 16), "QPs", "QPs (sockets) per connection, as NCCL_IB_QPS_PER_CONNECTION: each chunk is split over them, so a connection takes that many UDP source ports (ECMP paths).";
    "collective.chunk_bytes" => collective.chunk_bytes: int(4_096, 64 << 20), "bytes", "Bytes per chunk, the unit a step pipelines (NCCL: 4 MiB buffer over 8 steps = 512 KiB).";
    "collective.reduce_ps_per_kib" => collective.reduce_ps_per_kib: int(0, 10_000_000), "ps/KiB", "Host CPU time to sum one KiB into the result (an assumption: 8 GB/s on one core = 128000); 0 models a GPU's reduction.";
}

/// The spec of `path`, if it is a key.
pub fn spec(path: &str) -> Option<&'static KeySpec> {
    KEYS.iter().find(|k| k.path == path)
}

/// The tables of the schema, in file order (`host`, `nic`, ...).
pub fn tables() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for k in KEYS {
        if let Some((t, _)) = k.path.split_once('.')
            && !out.contains(&t)
        {
            out.push(t);
        }
    }
    out
}

/// The keys allowed directly in `table` ("" = the top level, whose tables count as keys).
pub fn allowed_keys(table: &str) -> Vec<&'static str> {
    let mut out = Vec::new();
    for k in KEYS {
        match k.path.split_once('.') {
            None if table.is_empty() => out.push(k.path),
            Some((t, rest)) if t == table => out.push(rest),
            Some((t, _)) if table.is_empty() && !out.contains(&t) => out.push(t),
            _ => {}
        }
    }
    out
}

impl Plan {
    /// The plan as a scenario file that states every key (parses back to an equal plan).
    pub fn to_toml(&self) -> String {
        let mut out = String::new();
        let mut table = "";
        for k in KEYS {
            let (t, name) = k.path.split_once('.').unwrap_or(("", k.path));
            if t != table {
                table = t;
                let _ = write!(out, "\n[{t}]\n");
            }
            let v = get(self, k.path).map_or_else(String::new, |v| v.to_toml());
            let _ = writeln!(out, "{name} = {v}");
        }
        out
    }
}

/// The key table of `scenarios/README.md`, generated from [`KEYS`] and `Plan::default()`.
pub fn schema_markdown() -> String {
    let d = Plan::default();
    let mut out = String::from(
        "| key | type | unit | default | allowed | meaning |\n|---|---|---|---|---|---|\n",
    );
    for k in KEYS {
        let v = get(&d, k.path).map_or_else(String::new, |v| v.to_toml());
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | `{}` | {} | {} |",
            k.path,
            k.kind.type_name(),
            if k.unit.is_empty() { "—" } else { k.unit },
            v,
            k.kind.allowed(),
            k.doc
        );
    }
    out
}
