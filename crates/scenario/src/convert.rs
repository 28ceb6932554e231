//! Conversions from the plan into the crates' own configuration types (DESIGN.md §3.2–§3.6).
//!
//! The plan is already bounded, so these never fail except where the target crate applies its
//! own checks ([`Plan::topology`]).

use fabric::{
    ConfigError, EcnConfig, FabricConfig, Forwarding, LinkConfig, LossConfig, PfcConfig,
    Scheduling, SwitchConfig, Topology,
};
use host::HostProfile;
use transport::tcp::{Config as TcpConfig, CongestionControl};
use units::{Bandwidth, Probability, SimDuration};
use verbs::NicProfile;
use verbs::types::{Mtu, QpState, QpType};

use crate::plan::{
    Completion, Congestion, EcmpKind, ForwardingKind, NicKind, Plan, QpKind, QpStateKind,
    TopologyKind,
};

/// A probability the plan already bounded to 0..=1.
fn prob(p: f64) -> Probability {
    Probability::from_f64(p).unwrap_or(Probability::ZERO)
}

/// Bytes of headers Linux keeps beside a RoCE path MTU in the interface MTU (`iboe_get_mtu`,
/// include/rdma/ib_addr.h: GRH 40 + UDP 8 + BTH 12 + XRC 4 + AtomicETH 28 + ICRC 4).
pub const ROCE_MTU_HEADROOM: u64 = 96;

impl Plan {
    /// The budget of one simulation of this plan.
    pub fn budget(&self) -> engine::Budget {
        engine::Budget {
            sim_time: SimDuration::from_ms(self.budget.max_sim_time_ms),
            events: self.budget.max_events,
            wall: std::time::Duration::from_secs(self.budget.max_wall_s),
            memory_bytes: self.budget.max_memory_mb.saturating_mul(1 << 20),
        }
    }

    /// The one link configuration every cable uses (rate, length, corruption).
    pub fn link_config(&self) -> LinkConfig {
        let mut link = LinkConfig::new(
            Bandwidth::gbps(self.topology.link_gbps),
            self.topology.cable_m,
        );
        link.loss = LossConfig {
            corruption: prob(self.loss.corruption),
            ..LossConfig::default()
        };
        link
    }

    /// The topology: a pair (or `hosts` hosts) on one switch, or two hosts back to back, with
    /// `topology.extra_delay_us` split over the hosts' own links (half at each host's end), so
    /// every host-to-host path gains exactly that one-way delay.
    pub fn topology(&self) -> Result<Topology, ConfigError> {
        let mut topo = self.base_topology()?;
        let half = SimDuration::from_us(self.topology.extra_delay_us) / 2;
        if half > SimDuration::ZERO {
            let is_host = |n: units::NodeId| {
                topo.nodes
                    .get(n.index())
                    .is_some_and(|s| s.kind == fabric::NodeKind::Host)
            };
            let ends: Vec<u64> = topo
                .links
                .iter()
                .map(|l| u64::from(is_host(l.a)) + u64::from(is_host(l.b)))
                .collect();
            for (l, n) in topo.links.iter_mut().zip(ends) {
                l.config.extra_delay = half * n;
            }
        }
        Ok(topo)
    }

    fn base_topology(&self) -> Result<Topology, ConfigError> {
        match self.topology.kind {
            TopologyKind::Switch => Topology::star(self.topology.hosts, self.link_config()),
            TopologyKind::BackToBack => Topology::back_to_back(self.link_config()),
            TopologyKind::FatTree => Topology::fat_tree(self.topology.k, self.link_config()),
            TopologyKind::LeafSpine => {
                let mut up = self.link_config();
                if self.topology.spine_gbps > 0 {
                    up.bandwidth = Bandwidth::gbps(self.topology.spine_gbps);
                }
                // A scenario's leaf-spine is sized by its hosts: an error about the fabric's
                // leaves names `topology.hosts`.
                let per_leaf = self.topology.hosts_per_leaf.max(1);
                if !self.topology.hosts.is_multiple_of(per_leaf) {
                    return Err(ConfigError::new(
                        "topology.hosts_per_leaf",
                        per_leaf,
                        format!(
                            "a divisor of topology.hosts ({}) in 1..=256",
                            self.topology.hosts
                        ),
                    ));
                }
                Topology::leaf_spine(
                    self.topology.hosts / per_leaf,
                    self.topology.spines,
                    per_leaf,
                    self.link_config(),
                    up,
                )
                .map_err(|mut e| {
                    if e.field == "topology.leaves" {
                        e.field = "topology.hosts";
                    }
                    e
                })
            }
        }
    }

    /// The fabric configuration: switch buffer, ECN, PFC on the RoCE priority when
    /// `lossless.enabled`, congestion drops, and the seed.
    pub fn fabric_config(&self) -> FabricConfig {
        let roce = 1u8 << self.lossless.priority;
        let sw = &self.switch;
        let ecn = sw.ecn.then(|| EcnConfig {
            priorities: if self.tcp.ecn { 0xff } else { roce },
            kmin_bytes: sw.ecn_kmin_bytes,
            kmax_bytes: sw.ecn_kmax_bytes,
            pmax: prob(sw.ecn_pmax),
            on_dequeue: sw.ecn_on_dequeue,
        });
        let pfc = self.lossless.enabled.then(|| {
            let t = self.pfc_thresholds();
            PfcConfig {
                response_time: fabric::pfc::response_time(Bandwidth::gbps(self.topology.link_gbps)),
                ..PfcConfig::new(roce, t.xoff_bytes, t.xon_bytes)
            }
        });
        FabricConfig {
            switch: SwitchConfig {
                buffer_bytes: sw.buffer_bytes,
                queue_cap_bytes: sw.queue_cap_bytes,
                latency: SimDuration::from_ns(sw.latency_ns),
                forwarding: match sw.forwarding {
                    ForwardingKind::CutThrough => Forwarding::CutThrough,
                    ForwardingKind::StoreAndForward => Forwarding::StoreAndForward,
                },
                scheduling: if self.lossless.enabled {
                    Scheduling::roce_default()
                } else {
                    Scheduling::default()
                },
                ecn,
                pfc,
                ecmp_hash: match sw.ecmp_hash {
                    EcmpKind::Crc16 => fabric::EcmpHash::Crc16,
                    EcmpKind::Mixed => fabric::EcmpHash::Mixed,
                },
                congestion_drop: prob(self.loss.congestion_drop),
                mtu_bytes: (sw.mtu_bytes > 0).then_some(sw.mtu_bytes as u32),
                pfc_watchdog: (sw.pfc_watchdog_us > 0).then(|| fabric::PfcWatchdog {
                    detect: SimDuration::from_us(sw.pfc_watchdog_us),
                    restore: SimDuration::from_us(sw.pfc_watchdog_us * 2),
                }),
                // Scenarios send RoCEv2 only, which every switch forwards either way.
                routed: false,
            },
            seed: self.seed,
            mtu_bytes: self.port_mtu_bytes() as u32,
            ..FabricConfig::default()
        }
    }

    /// The IP MTU of every port (the hosts' interface MTU): large enough for both paths, the
    /// larger of `tcp.mtu_bytes` and what an interface needs to run RoCE at `rdma.mtu_bytes`.
    /// Linux grants a RoCE port the path MTU 4096 only if its netdev MTU leaves 96 bytes of
    /// headers beside it — a 40-byte GRH (IPv6's size, so IPv4 fits too), UDP 8, BTH 12, XRC
    /// 4, AtomicETH 28 and ICRC 4 (`iboe_get_mtu`, include/rdma/ib_addr.h) — which covers the
    /// longest RoCEv2 packet at that path MTU, a WRITE ONLY with immediate (RETH 16 and ImmDt
    /// 4: 64 bytes over the payload on IPv4).
    pub fn port_mtu_bytes(&self) -> u64 {
        // source: Linux include/rdma/ib_addr.h, iboe_get_mtu (96 bytes of IB headers).
        self.tcp
            .mtu_bytes
            .max(self.rdma.mtu_bytes + ROCE_MTU_HEADROOM)
    }

    /// The path MTU TCP sees: its interface MTU, or a smaller switch port MTU on the way (what
    /// Path MTU Discovery, RFC 1191, settles on; the discovery itself is not simulated).
    pub fn tcp_path_mtu_bytes(&self) -> u64 {
        let sw = self.switch.mtu_bytes;
        if sw > 0 && self.topology.kind != TopologyKind::BackToBack {
            self.tcp.mtu_bytes.min(sw)
        } else {
            self.tcp.mtu_bytes
        }
    }

    /// XOFF and XON of the lossless priority, bytes: as given, or (`"auto"`) by Linux mlx5's
    /// rule from the link speed, the cable and the port MTU ([`fabric::pfc::mlx5_thresholds`]).
    pub fn pfc_thresholds(&self) -> fabric::pfc::Thresholds {
        let mtu = self.port_mtu_bytes();
        let auto = fabric::pfc::mlx5_thresholds(
            Bandwidth::gbps(self.topology.link_gbps),
            self.topology.cable_m,
            mtu,
        );
        let xoff_bytes = self.lossless.xoff_bytes.or_else(|| auto.xoff_bytes);
        let xon_bytes = self.lossless.xon_bytes.or_else(|| {
            if self.lossless.xoff_bytes == crate::plan::Auto::Auto {
                auto.xon_bytes
            } else {
                fabric::pfc::mlx5_xon_bytes(xoff_bytes, mtu)
            }
        });
        fabric::pfc::Thresholds {
            xoff_bytes,
            xon_bytes,
        }
    }

    /// The host profile: the default profile (DESIGN.md §3.3) with the plan's CPU and PCIe;
    /// `host.clock_mhz` rescales the cycle-bound costs ([`HostProfile::at_clock`]).
    pub fn host_profile(&self) -> HostProfile {
        let mut p = HostProfile::default().at_clock(self.host.clock_mhz);
        p.cpu.cores = self.host.cores;
        p.pcie.generation = self.host.pcie_generation;
        p.pcie.lanes = self.host.pcie_lanes;
        p
    }

    /// The NIC's verbs behaviour profile.
    pub fn nic_profile(&self) -> NicProfile {
        match self.nic.profile {
            NicKind::Mlx5 => NicProfile::Mlx5,
            NicKind::Rxe => NicProfile::Rxe,
            NicKind::Ibta => NicProfile::Ibta,
        }
    }

    /// The RoCE path MTU.
    pub fn rdma_mtu(&self) -> Mtu {
        Mtu::ALL
            .into_iter()
            .find(|m| u64::from(m.bytes()) == self.rdma.mtu_bytes)
            .unwrap_or(Mtu::Mtu4096)
    }

    /// The QP type.
    pub fn qp_type(&self) -> QpType {
        match self.rdma.qp_type {
            QpKind::Rc => QpType::Rc,
            QpKind::Uc => QpType::Uc,
            QpKind::Ud => QpType::Ud,
        }
    }

    /// The QP state the setup stops at.
    pub fn qp_state(&self) -> QpState {
        match self.rdma.qp_state {
            QpStateKind::Reset => QpState::Reset,
            QpStateKind::Init => QpState::Init,
            QpStateKind::Rtr => QpState::Rtr,
            QpStateKind::Rts => QpState::Rts,
        }
    }

    /// True when the application sleeps on a completion channel instead of polling.
    pub fn rdma_event_completions(&self) -> bool {
        self.rdma.completion == Completion::Event
    }

    /// The local ACK timeout, or `None` for timeout 0 ("wait forever"):
    /// 4.096 µs × 2^`rdma.timeout`.
    pub fn rdma_ack_timeout(&self) -> Option<SimDuration> {
        (self.rdma.timeout != 0)
            .then(|| SimDuration::from_ps(4_096_000u64 << self.rdma.timeout.min(31)))
    }

    /// The TCP endpoint configuration (data-centre defaults with the plan's knobs). TSO, GRO
    /// and busy-poll are socket-path options the simulator reads from [`Plan::tcp`] directly.
    pub fn tcp_config(&self) -> TcpConfig {
        TcpConfig {
            // The MSS option announces the path MTU less 20 (IP) and 20 (TCP); with timestamps
            // on, each full segment carries 12 bytes less (1448 at MTU 1500; RFC 7323 §3).
            mss: (self.tcp_path_mtu_bytes() - 40) as u16,
            send_buffer: self.tcp.send_buffer_bytes as usize,
            recv_buffer: self.tcp.recv_buffer_bytes as usize,
            min_rto: SimDuration::from_us(self.tcp.min_rto_us),
            sack: self.tcp.sack,
            ecn: self.tcp.ecn,
            congestion_control: match self.tcp.congestion_control {
                Congestion::Cubic => CongestionControl::Cubic,
                Congestion::NewReno => CongestionControl::NewReno,
                Congestion::Dctcp => CongestionControl::Dctcp,
            },
            ..TcpConfig::datacenter()
        }
    }

    /// The stream duration, or `None` in count mode.
    pub fn stream_duration(&self) -> Option<SimDuration> {
        (self.workload.stream_us != 0).then(|| SimDuration::from_us(self.workload.stream_us))
    }
}
