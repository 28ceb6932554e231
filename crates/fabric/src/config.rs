//! Fabric configuration and its validation.
//!
//! Every knob a scenario can set on the fabric lives here with its unit in its name. The
//! constructors in this module are the only place raw values are checked: a config that makes no
//! sense (zero bandwidth, XON above XOFF, Kmin above Kmax, a probability outside [0, 1]) is a
//! [`ConfigError`] naming the field, the value and what is allowed, never a panic later.

use crate::loss::LossConfig;
use units::{Bandwidth, Probability, SimDuration};

/// A configuration value outside what the model accepts.
#[derive(Clone, Debug, Eq, PartialEq, thiserror::Error)]
#[error("{field} = {value} is out of range: allowed {allowed}")]
pub struct ConfigError {
    /// The field, as a scenario names it (e.g. `switch.pfc.xon_bytes`).
    pub field: &'static str,
    /// The rejected value, printed.
    pub value: String,
    /// What is allowed.
    pub allowed: String,
}

impl ConfigError {
    /// A new error for `field`.
    pub fn new(field: &'static str, value: impl ToString, allowed: impl ToString) -> Self {
        ConfigError {
            field,
            value: value.to_string(),
            allowed: allowed.to_string(),
        }
    }
}

/// Ensures `lo <= v <= hi`, or names `field` and the range.
pub fn check_range(field: &'static str, v: u64, lo: u64, hi: u64) -> Result<(), ConfigError> {
    if (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(ConfigError::new(field, v, format!("{lo}..={hi}")))
    }
}

/// Propagation speed in fibre and copper direct-attach cable.
/// source: research/figures.md §3 "fiber propagation 4.9 ns/m (n ≈ 1.468) ⇒ ~5 ns/m";
/// DESIGN.md §3.2 fixes 5 ns/m.
pub const PROPAGATION_PS_PER_M: u64 = 5_000;

/// Bytes of Ethernet preamble + start-of-frame delimiter (8) and minimum inter-frame gap (12)
/// that every frame costs on the wire besides its own bytes.
/// source: IEEE 802.3 clause 4 (preamble 7 B, SFD 1 B, IPG 96 bit times); research/figures.md §3
/// "serialization (incl. 20 B preamble+IFG)".
pub const PREAMBLE_IFG_BYTES: u64 = 20;

/// The longest cable the model accepts: 100 km of fibre, far beyond a data-centre link.
pub const MAX_CABLE_M: u64 = 100_000;

/// One full-duplex link: both directions have the same rate and length.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkConfig {
    /// Line rate of each direction.
    pub bandwidth: Bandwidth,
    /// Cable length in metres; propagation is 5 ns per metre.
    pub cable_m: u64,
    /// Loss applied to frames arriving over this link (each direction draws independently).
    pub loss: LossConfig,
    /// One-way delay added to the cable's propagation, as a long-haul span or a delay emulator
    /// would add: a round-trip-time knob that leaves the cable length (and what follows from
    /// it, such as mlx5's thresholds) alone. PFC headroom counts it, as it counts propagation.
    pub extra_delay: SimDuration,
}

/// The most delay [`LinkConfig::extra_delay`] may add to one link, one way: 10 ms.
pub const MAX_EXTRA_DELAY: SimDuration = SimDuration::from_ms(10);

impl LinkConfig {
    /// A lossless link of `gbps` Gb/s and `cable_m` metres.
    pub fn new(bandwidth: Bandwidth, cable_m: u64) -> Self {
        LinkConfig {
            bandwidth,
            cable_m,
            loss: LossConfig::default(),
            extra_delay: SimDuration::ZERO,
        }
    }
    /// One-way propagation delay: the cable's, plus any [`LinkConfig::extra_delay`].
    pub fn propagation(&self) -> SimDuration {
        SimDuration::from_ps(self.cable_m * PROPAGATION_PS_PER_M) + self.extra_delay
    }
    /// Checks the link's values.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_range("link.cable_m", self.cable_m, 0, MAX_CABLE_M)?;
        check_range(
            "link.extra_delay_ps",
            self.extra_delay.as_ps(),
            0,
            MAX_EXTRA_DELAY.as_ps(),
        )?;
        check_range(
            "link.bandwidth_bps",
            self.bandwidth.bps(),
            1_000_000,
            1_600_000_000_000,
        )?;
        self.loss.validate()
    }
}

/// When a switch may start sending a frame it is receiving.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Forwarding {
    /// Start as soon as the headers are in and the pipeline latency has passed, if the egress
    /// is idle (frames that must queue are sent whole, as store-and-forward would).
    CutThrough,
    /// Start only after the last bit has arrived and the pipeline latency has passed.
    StoreAndForward,
}

/// How an egress port picks the next priority to send.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct Scheduling {
    /// Priorities served strictly before all others (bit i = priority i; among strict ones the
    /// higher number wins), e.g. CNPs on priority 6.
    pub strict_mask: u8,
    /// Deficit-weighted round-robin weights of the other priorities (a weight of 0 is treated
    /// as 1). Each weight unit is a quantum of [`Scheduling::QUANTUM_BYTES`].
    pub dwrr_weights: [u32; 8],
}

impl Scheduling {
    /// Bytes of credit per weight unit per DWRR round.
    pub const QUANTUM_BYTES: u64 = 1_500;

    /// Equal-weight DWRR over all priorities.
    pub const fn dwrr_equal() -> Self {
        Scheduling {
            strict_mask: 0,
            dwrr_weights: [1; 8],
        }
    }
    /// Strict priority over all priorities: 7 first.
    pub const fn strict() -> Self {
        Scheduling {
            strict_mask: 0xff,
            dwrr_weights: [1; 8],
        }
    }
    /// The NVIDIA/Cumulus RoCE default: CNP priority 6 strict, the rest DWRR with RoCE
    /// (priority 3) and the default class sharing 50/50.
    /// source: Cumulus Linux "RDMA over Converged Ethernet - RoCE" default table (TC6 strict,
    /// TC3 WRR 50%, TC0 WRR 50%); research/figures.md §6.2.
    pub const fn roce_default() -> Self {
        Scheduling {
            strict_mask: 1 << 6,
            dwrr_weights: [1; 8],
        }
    }
}

impl Default for Scheduling {
    fn default() -> Self {
        Scheduling::dwrr_equal()
    }
}

/// RED-style ECN marking on an egress queue: no mark below `kmin_bytes`, probability rising
/// linearly to `pmax` at `kmax_bytes`, always above `kmax_bytes`.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct EcnConfig {
    /// Priorities whose queues mark (bit i = priority i).
    pub priorities: u8,
    /// Queue depth where marking starts.
    pub kmin_bytes: u64,
    /// Queue depth above which every ECN-capable packet is marked.
    pub kmax_bytes: u64,
    /// Marking probability just below `kmax_bytes`.
    pub pmax: Probability,
    /// Mark a frame as it leaves the queue, by the depth it leaves behind, instead of as it
    /// joins: the receiver then hears of the queue as it is now, not as it was one queueing
    /// delay ago (htsim's ECN queue marks on dequeue, `ecnqueue.h`).
    pub on_dequeue: bool,
}

impl EcnConfig {
    /// DCQCN paper profile: Kmin 5 KB, Kmax 200 KB, Pmax 1%.
    /// source: research/figures.md §6.2, Zhu et al., SIGCOMM 2015 (conf R; HPCC's `dcqcn_paper`
    /// and the DCQCN-validation README corroborate Kmin 5 KB, Pmax 0.01).
    pub fn dcqcn_paper(priorities: u8) -> Self {
        EcnConfig {
            priorities,
            kmin_bytes: 5_000,
            kmax_bytes: 200_000,
            pmax: Probability::from_ratio(1, 100),
            on_dequeue: false,
        }
    }
    /// Vendor profile: NVIDIA Onyx/Cumulus RoCE default, min 150 KB, max 1500 KB. The vendor
    /// documents thresholds only, so the ramp reaches probability 1 at Kmax.
    /// source: research/figures.md §6.2 "ECN thresholds in practice" (Onyx `show roce`).
    pub fn nvidia_switch(priorities: u8) -> Self {
        EcnConfig {
            priorities,
            kmin_bytes: 150_000,
            kmax_bytes: 1_500_000,
            pmax: Probability::ONE,
            on_dequeue: false,
        }
    }
    /// The marking probability at queue depth `queue_bytes`.
    pub fn mark_probability(&self, queue_bytes: u64) -> Probability {
        if queue_bytes <= self.kmin_bytes {
            Probability::ZERO
        } else if queue_bytes >= self.kmax_bytes {
            Probability::ONE
        } else {
            self.pmax.scale(
                queue_bytes - self.kmin_bytes,
                self.kmax_bytes - self.kmin_bytes,
            )
        }
    }
    fn validate(&self) -> Result<(), ConfigError> {
        if self.kmin_bytes > self.kmax_bytes {
            return Err(ConfigError::new(
                "switch.ecn.kmin_bytes",
                self.kmin_bytes,
                format!("at most kmax_bytes ({})", self.kmax_bytes),
            ));
        }
        check_range("switch.ecn.kmax_bytes", self.kmax_bytes, 1, 1 << 40)
    }
}

/// Priority-based flow control (IEEE 802.1Qbb) at a switch's ingress ports.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct PfcConfig {
    /// Lossless priorities (bit i = priority i). Other priorities are lossy (drop-tail).
    pub priorities: u8,
    /// Ingress bytes of one port and priority at which a PAUSE goes upstream.
    pub xoff_bytes: u64,
    /// Ingress bytes at or below which a RESUME (PAUSE with zero quanta) goes upstream.
    pub xon_bytes: u64,
    /// Pause time carried in each PAUSE frame, in quanta of 512 bit times. The switch refreshes
    /// the pause when half of it has passed and the port is still above XON.
    pub pause_quanta: u16,
    /// Time a port takes to act on a received PAUSE (after its last bit arrives); the frame on
    /// the wire is always finished.
    pub response_time: SimDuration,
}

impl PfcConfig {
    /// PFC on `priorities` with thresholds in bytes; pause time is the maximum 0xffff quanta.
    pub fn new(priorities: u8, xoff_bytes: u64, xon_bytes: u64) -> Self {
        PfcConfig {
            priorities,
            xoff_bytes,
            xon_bytes,
            pause_quanta: 0xffff,
            response_time: SimDuration::ZERO,
        }
    }
    /// True when `prio` is lossless.
    pub fn covers(&self, prio: u8) -> bool {
        self.priorities & (1 << prio) != 0
    }
    fn validate(&self) -> Result<(), ConfigError> {
        if self.xon_bytes > self.xoff_bytes {
            return Err(ConfigError::new(
                "switch.pfc.xon_bytes",
                self.xon_bytes,
                format!("at most xoff_bytes ({})", self.xoff_bytes),
            ));
        }
        check_range("switch.pfc.xoff_bytes", self.xoff_bytes, 1, 1 << 40)?;
        check_range(
            "switch.pfc.pause_quanta",
            self.pause_quanta as u64,
            1,
            0xffff,
        )?;
        check_range(
            "switch.pfc.response_time_ps",
            self.response_time.as_ps(),
            0,
            SimDuration::from_ms(1).as_ps(),
        )
    }
}

/// A shared-buffer switch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SwitchConfig {
    /// Total packet buffer shared by all ports, including PFC headroom.
    pub buffer_bytes: u64,
    /// Most bytes one egress queue (port and priority) may hold for lossy traffic (the shared
    /// buffer limits it too).
    pub queue_cap_bytes: u64,
    /// Port-to-port pipeline latency.
    /// source: research/figures.md §3 "switch port-to-port latency 300 ns (Spectrum-2)".
    pub latency: SimDuration,
    /// Cut-through or store-and-forward.
    pub forwarding: Forwarding,
    /// Egress scheduling.
    pub scheduling: Scheduling,
    /// ECN marking, if enabled.
    pub ecn: Option<EcnConfig>,
    /// PFC, if enabled.
    pub pfc: Option<PfcConfig>,
    /// How equal-cost ports are chosen.
    pub ecmp_hash: crate::routing::EcmpHash,
    /// Lesson ⑤'s knob: the probability that a frame arriving at a switch "would overflow the
    /// buffer". Lossy priority: the frame is dropped. Lossless priority: the ingress count is
    /// pushed past XOFF through the ordinary PFC code (see `Fabric` docs).
    pub congestion_drop: Probability,
    /// The largest IP packet a switch port forwards (the interface MTU), bytes; longer frames
    /// are dropped (`DropReason::Oversize`). `None`: no limit (every frame rdmalab builds fits
    /// a 9216-byte jumbo MTU).
    pub mtu_bytes: Option<u32>,
    /// The PFC watchdog, if enabled.
    pub pfc_watchdog: Option<PfcWatchdog>,
    /// Every port is a routed (layer-3) interface, each host in a subnet of its own, as in a
    /// leaf-spine fabric routed down to the hosts: frames are forwarded by their IP header, so
    /// a frame that is not IP (RoCE v1) is dropped at the first switch (`DropReason::NotIp`).
    /// `false`: switches forward every frame to its destination host, whatever it carries (a
    /// bridged network, or one where nothing but RoCEv2 is sent).
    pub routed: bool,
}

/// A switch's PFC watchdog (SONiC's `pfcwd`, NVIDIA Onyx's and Arista's equivalents): an
/// egress queue of a lossless priority that stays paused for `detect` while holding frames is
/// in a *storm*; the watchdog drops what it holds and every frame that joins it, and ignores
/// the pauses, until no PAUSE has arrived for `restore`. It turns a PFC storm or deadlock into
/// losses on the queue that caused it, which the transport then recovers.
/// source: Guo et al., "RDMA over Commodity Ethernet at Scale", SIGCOMM 2016 (research/
/// figures.md §7 "incidents": storms and deadlocks, fixed with watchdogs); the drop action and
/// the detect/restore pair are the SONiC `pfcwd` configuration's (detection and restoration
/// times in ms there; rdmalab's labs use µs so a run stays short).
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct PfcWatchdog {
    /// How long a queue must stay paused with frames in it before the watchdog acts.
    pub detect: SimDuration,
    /// How long without PAUSE frames before the queue is trusted again.
    pub restore: SimDuration,
}

impl PfcWatchdog {
    /// Checks both times.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (key, d) in [
            ("switch.pfc_watchdog.detect", self.detect),
            ("switch.pfc_watchdog.restore", self.restore),
        ] {
            check_range(
                key,
                d.as_ps(),
                SimDuration::from_ns(100).as_ps(),
                SimDuration::from_secs(10).as_ps(),
            )?;
        }
        Ok(())
    }
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            // source: a shallow-buffer data-centre switch; HPCC's simulation uses
            // 16 MB·(bw/50G) (research/figures.md §6.2), i.e. 32 MB at 100G. We use 16 MiB.
            buffer_bytes: 16 << 20,
            queue_cap_bytes: 2 << 20,
            latency: SimDuration::from_ns(300),
            forwarding: Forwarding::CutThrough,
            scheduling: Scheduling::default(),
            ecn: None,
            pfc: None,
            ecmp_hash: crate::routing::EcmpHash::Crc16,
            congestion_drop: Probability::ZERO,
            mtu_bytes: None,
            pfc_watchdog: None,
            routed: false,
        }
    }
}

impl SwitchConfig {
    /// Checks every field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_range("switch.buffer_bytes", self.buffer_bytes, 1_500, 1 << 40)?;
        check_range("switch.queue_cap_bytes", self.queue_cap_bytes, 64, 1 << 40)?;
        check_range(
            "switch.latency_ps",
            self.latency.as_ps(),
            0,
            SimDuration::from_ms(1).as_ps(),
        )?;
        if let Some(ecn) = &self.ecn {
            ecn.validate()?;
        }
        if let Some(mtu) = self.mtu_bytes {
            check_range("switch.mtu_bytes", mtu as u64, 576, 9_216)?;
        }
        if let Some(wd) = &self.pfc_watchdog {
            wd.validate()?;
        }
        if let Some(pfc) = &self.pfc {
            pfc.validate()?;
            if pfc.xoff_bytes >= self.buffer_bytes {
                return Err(ConfigError::new(
                    "switch.pfc.xoff_bytes",
                    pfc.xoff_bytes,
                    format!("below buffer_bytes ({})", self.buffer_bytes),
                ));
            }
        }
        Ok(())
    }
}

/// Host NIC behaviour on the fabric side.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct HostConfig {
    /// Whether the NIC honours PFC PAUSE frames (every RoCE NIC does when PFC is configured).
    pub honour_pause: bool,
    /// Egress scheduling among the NIC's priorities.
    pub scheduling: Scheduling,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            honour_pause: true,
            scheduling: Scheduling::default(),
        }
    }
}

/// Bytes of a frame outside its IP packet, as `Packet::len_bytes` counts them: Ethernet
/// header (14), 802.1Q tag (4), FCS (4). An interface MTU limits the rest.
/// source: research/verbs-spec.md §6 packet layout; an interface MTU counts the IP packet, as
/// Linux's does.
pub const L2_BYTES: u64 = 22;

/// The IP MTU every port has unless a scenario says otherwise: what Linux requires of an
/// interface before it runs RoCE at the path MTU 4096 — 4096 plus 96 bytes of IB headers
/// (`iboe_get_mtu`) — which holds the longest RoCEv2 packet at that path MTU, a WRITE ONLY
/// with immediate (20 IPv4 + 8 UDP + 12 BTH + 16 RETH + 4 ImmDt + 4096 + 4 ICRC = 4,160 B).
/// source: Linux include/rdma/ib_addr.h `iboe_get_mtu`; research/verbs-spec.md §6 layout.
pub const DEFAULT_PORT_MTU_BYTES: u32 = 4_192;

/// The largest IP MTU a port may have: a 9216-byte jumbo frame's, as switch ASICs and
/// ConnectX NICs allow (mlx5's `MINIMUM_MAX_MTU`).
pub const MAX_PORT_MTU_BYTES: u32 = 9_216;

/// Everything the fabric needs besides the topology.
#[derive(Clone, Debug, PartialEq)]
pub struct FabricConfig {
    /// Every switch's configuration.
    pub switch: SwitchConfig,
    /// Every host NIC's configuration.
    pub host: HostConfig,
    /// The scenario seed every random stream derives from.
    pub seed: u64,
    /// The IP MTU of every port (the interface MTU, as `ip link set mtu`), bytes: a host may
    /// send frames of up to this plus [`L2_BYTES`]; a longer one is dropped at its own port
    /// (`DropReason::Oversize`), and PFC headroom is sized for frames this long. A switch's
    /// own, possibly smaller, MTU is [`SwitchConfig::mtu_bytes`].
    pub mtu_bytes: u32,
}

impl Default for FabricConfig {
    fn default() -> Self {
        FabricConfig {
            switch: SwitchConfig::default(),
            host: HostConfig::default(),
            seed: 0,
            mtu_bytes: DEFAULT_PORT_MTU_BYTES,
        }
    }
}

impl FabricConfig {
    /// Checks every field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_range(
            "fabric.mtu_bytes",
            self.mtu_bytes as u64,
            576,
            MAX_PORT_MTU_BYTES as u64,
        )?;
        self.switch.validate()
    }
    /// The longest frame a port sends, bytes: the MTU plus Ethernet header, tag and FCS.
    pub fn max_frame_bytes(&self) -> u64 {
        self.mtu_bytes as u64 + L2_BYTES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ecn_curve() {
        let e = EcnConfig::dcqcn_paper(1 << 3);
        assert_eq!(e.mark_probability(5_000), Probability::ZERO);
        assert_eq!(e.mark_probability(200_000), Probability::ONE);
        let mid = e.mark_probability(102_500).as_f64();
        assert!((mid - 0.005).abs() < 1e-6, "{mid}");
    }

    #[test]
    fn bad_values_name_the_field() {
        let mut s = SwitchConfig {
            pfc: Some(PfcConfig::new(8, 1000, 2000)),
            ..Default::default()
        };
        let e = s.validate().unwrap_err();
        assert_eq!(e.field, "switch.pfc.xon_bytes");
        assert!(e.to_string().contains("at most xoff_bytes (1000)"), "{e}");
        s.pfc = None;
        s.ecn = Some(EcnConfig {
            kmin_bytes: 10,
            kmax_bytes: 5,
            ..EcnConfig::dcqcn_paper(8)
        });
        assert_eq!(s.validate().unwrap_err().field, "switch.ecn.kmin_bytes");
        let l = LinkConfig::new(Bandwidth::gbps(100), 1_000_000);
        assert_eq!(l.validate().unwrap_err().field, "link.cable_m");
    }
}
