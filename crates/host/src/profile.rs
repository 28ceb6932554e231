//! Host profiles: the building-block constants of the host model.
//!
//! Every constant carries its unit in its name and a `source:` from research/figures.md (or is
//! marked as an estimate where that file has a gap; `rdmalab calibrate` will measure what a
//! machine can measure). End-to-end figures (a verb's latency, a TCP round trip) are never
//! constants: the simulator produces them from these.

use units::{Bandwidth, SimDuration};

/// A profile value out of range.
#[derive(Clone, Debug, Eq, PartialEq, thiserror::Error)]
#[error("{field} = {value} is out of range: allowed {allowed}")]
pub struct ProfileError {
    /// The field.
    pub field: &'static str,
    /// The value.
    pub value: String,
    /// What is allowed.
    pub allowed: &'static str,
}

/// The clock every cycle-bound cost of the default profile is stated at, MHz.
/// source: DESIGN.md §3.3 default profile, "3 GHz server CPU"; the estimates below say "about N
/// cycles at 3 GHz", and research/figures.md §3 gives the per-byte TCP cost as "~0.6 cycles/B at
/// 3 GHz".
pub const REFERENCE_CLOCK_MHZ: u32 = 3_000;

/// The CPU.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct CpuProfile {
    /// Cores available to the workload.
    pub cores: u16,
    /// Clock rate in MHz (cycles per microsecond). The cycle-bound costs are stated at
    /// [`REFERENCE_CLOCK_MHZ`]; [`HostProfile::at_clock`] rescales them to this clock.
    /// source: DESIGN.md §3.3 default profile, "3 GHz server CPU".
    pub clock_mhz: u32,
    /// Building a work request in the send queue (user space, no syscall).
    /// estimate: research/figures.md has no figure; about 150 cycles at 3 GHz.
    pub post_wr: SimDuration,
    /// One `ibv_poll_cq` call that reads a CQE (user space).
    /// estimate: research/figures.md has no figure; about 100 cycles at 3 GHz.
    pub poll_cq: SimDuration,
}

/// The PCIe link between host memory and the NIC.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct PcieProfile {
    /// PCIe generation (3, 4 or 5).
    pub generation: u8,
    /// Lanes (1–16).
    pub lanes: u8,
    /// Round trip of a small DMA read (the NIC asks, host memory answers).
    /// source: research/figures.md §3, "64 B PCIe DMA read RTT ~547 ns (NFP-6000), ~550 ns
    /// (NetFPGA); 8 B ~520 ns" (Neugebauer et al., SIGCOMM 2018).
    pub dma_read_rtt: SimDuration,
    /// One-way time for a posted write (MMIO doorbell, DMA write) to land.
    /// source: derived, half of the DMA read round trip (research/figures.md §3 "NIC processing
    /// (derived)": two PCIe crossings of ~0.5 µs for a one-way NIC-to-NIC message).
    pub posted_write: SimDuration,
}

impl PcieProfile {
    /// Usable DMA bandwidth per direction after encoding and data-link overheads.
    /// source: research/figures.md §3, "PCIe Gen3 x8 goodput 62.96 Gb/s physical, 57.88 after
    /// DLL"; DESIGN.md §3.3 "x16 double"; each generation doubles the per-lane rate.
    pub fn bandwidth(&self) -> Bandwidth {
        // 57.88 Gb/s per 8 Gen3 lanes = 7.235 Gb/s per lane.
        let per_lane_mbps: u64 = 7_235 << (self.generation.saturating_sub(3)).min(4);
        Bandwidth::mbps(per_lane_mbps * self.lanes as u64)
    }
}

/// The NIC's own processing.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct NicTiming {
    /// Time a packet spends in the NIC pipeline (parse, transport state, scheduling), each way.
    /// source: research/figures.md §3 "NIC processing (derived) ... NIC pipeline ≈ 0.1–0.3 µs";
    /// we take the middle.
    pub pipeline: SimDuration,
    /// Whether small WQEs are written to the NIC by MMIO (BlueFlame), skipping the WQE fetch.
    pub blueflame: bool,
    /// Largest WQE BlueFlame writes, bytes (mlx5: 256 B of the BlueFlame register).
    pub blueflame_max_bytes: u32,
    /// Largest payload read the NIC asks host memory for in one PCIe request, bytes (the
    /// Device Control register's Max_Read_Request_Size): a packet's gather is split into
    /// requests of at most this many bytes, each holding one tag until its data is back.
    /// source: PCI Express Base Specification 3.0 §7.8.4, Max_Read_Request_Size defaults to
    /// 010b = 512 bytes; NVIDIA's tuning guides raise it to 4096 with setpci (encoding 0–5 =
    /// 128–4096 B, e.g. drchristensen/RHEL_NIC_QUALIFICATION `ansible/set_maxreadreq.sh`).
    /// We keep the spec's default.
    pub max_read_request_bytes: u32,
    /// PCIe read requests the NIC keeps outstanding at once (tags).
    /// source: PCI Express Base Specification 3.0 §2.2.6.2: with the Extended Tag Field a
    /// requester has 8-bit tags, 256 outstanding non-posted requests; Linux enables the field
    /// on every device that advertises it (`pci_configure_extended_tags`, drivers/pci/probe.c).
    /// No ConnectX figure for how many its DMA engine uses was found: an assumption, all 256.
    pub read_tags: u32,
    /// Shortest time between two packets the NIC's transmit pipeline starts (its issue rate),
    /// so small messages are bounded by the NIC and not only by the CPU.
    /// source: derived from NVIDIA's ConnectX-5 Ex product brief, "up to 200 million messages
    /// per second": 1 / 200 Mpps = 5 ns per packet (recalled, not in research/figures.md).
    pub packet_interval: SimDuration,
}

/// Frames a NIC keeps queued at its port behind the one on the wire, before it gathers more.
/// source: assumption; the fabric wakes a host whose port queue falls below two frames
/// (`fabric::Fabric::take_host_wakeups`), so two keep the wire busy between wake-ups.
pub const PORT_AHEAD_FRAMES: usize = 2;

impl NicTiming {
    /// Bytes the NIC may have in its transmit path (payload being read, in the pipeline) per
    /// direction of work (requests; responses and ACKs), for a port of `line` bits per second
    /// fed over `pcie` with frames of up to `frame_bytes`.
    ///
    /// No ConnectX figure for the transmit buffer was found (NVIDIA does not publish it), so
    /// it is derived from the model's own latencies: a NIC sized to reach line rate with one
    /// QP must cover a gather loop (a DMA read round trip, one frame's time on PCIe, the
    /// pipeline) at line rate, plus the frames queued at the port
    /// ([`PORT_AHEAD_FRAMES`]: while they wait, frames wait in this buffer). Assumption: it holds exactly that, and no more, so it
    /// fetches just in time (a larger buffer would only add frames ahead of the port, which a
    /// go-back-N resend pays for).
    pub fn tx_buffer_bytes(&self, pcie: &PcieProfile, line: Bandwidth, frame_bytes: u64) -> u64 {
        let pcie_bw = pcie.bandwidth();
        let frame = units::ByteLen::new(frame_bytes);
        let loop_ = pcie.dma_read_rtt + pcie_bw.serialization_time(frame) + self.pipeline;
        // Rounded up a byte: never less than the loop needs.
        (line.bytes_in(loop_) + 1).saturating_add(PORT_AHEAD_FRAMES as u64 * frame_bytes)
    }
}

/// The control path: verbs that go through the kernel driver to the NIC's firmware.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct ControlPath {
    /// Entering and leaving the kernel for a verbs ioctl.
    /// source: research/figures.md §3, syscall "~350–450 ns with KPTI/retpoline on" (low
    /// confidence; `rdmalab calibrate` measures a null syscall).
    pub syscall: SimDuration,
    /// One firmware command (create CQ, create QP, modify QP, register MR).
    /// source: derived from research/figures.md §4: KRCORE sets up an RC connection in < 10 µs,
    /// "hundreds or thousands of times faster than verbs", so verbs setup is milliseconds; a
    /// connection is about six firmware commands, so about 150 µs each.
    pub firmware_command: SimDuration,
    /// Pinning one 4 KiB page for a memory registration.
    /// estimate: research/figures.md §4 has no per-page figure (a gap); `rdmalab calibrate`
    /// will measure mlock per page.
    pub pin_per_page: SimDuration,
    /// Writing one translation entry (MTT) for a registered page.
    /// estimate: an 8-byte entry per page through the firmware mailbox; figures.md §4 lists
    /// MTT/MPT costs as not found.
    pub translation_per_page: SimDuration,
    /// A completion interrupt: the MSI-X message and the driver's handler.
    /// estimate: figures.md has no interrupt figure; about a syscall's cost.
    pub interrupt: SimDuration,
    /// Waking a thread blocked on a completion channel.
    /// source: research/figures.md §3, context switch "~1.07 µs (threads)".
    pub wakeup: SimDuration,
}

/// Everything about a host the model needs.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct HostProfile {
    /// The CPU.
    pub cpu: CpuProfile,
    /// PCIe.
    pub pcie: PcieProfile,
    /// The NIC.
    pub nic: NicTiming,
    /// The verbs control path.
    pub control: ControlPath,
    /// The kernel socket path (syscalls, copies, TCP/IP stack, interrupts); sources in
    /// [`crate::socket`].
    pub socket: crate::socket::SocketCosts,
}

impl Default for HostProfile {
    /// The default profile: a 100 Gb/s ConnectX-5/6-class NIC on PCIe Gen3 x16 in a 3 GHz
    /// server (DESIGN.md §3.3).
    fn default() -> Self {
        HostProfile {
            cpu: CpuProfile {
                cores: 16,
                clock_mhz: 3_000,
                post_wr: SimDuration::from_ns(50),
                poll_cq: SimDuration::from_ns(33),
            },
            pcie: PcieProfile {
                generation: 3,
                lanes: 16,
                dma_read_rtt: SimDuration::from_ns(547),
                posted_write: SimDuration::from_ps(273_500),
            },
            nic: NicTiming {
                pipeline: SimDuration::from_ns(200),
                blueflame: true,
                blueflame_max_bytes: 256,
                max_read_request_bytes: 512,
                read_tags: 256,
                packet_interval: SimDuration::from_ns(5),
            },
            control: ControlPath {
                syscall: SimDuration::from_ns(400),
                firmware_command: SimDuration::from_us(150),
                pin_per_page: SimDuration::from_ns(250),
                translation_per_page: SimDuration::from_ns(10),
                interrupt: SimDuration::from_ns(400),
                wakeup: SimDuration::from_ns(1_070),
            },
            socket: crate::socket::SocketCosts::default(),
        }
    }
}

impl HostProfile {
    /// The profile on a CPU clocked at `clock_mhz`: the costs that are CPU instructions, stated
    /// at [`REFERENCE_CLOCK_MHZ`], take `REFERENCE_CLOCK_MHZ / clock_mhz` as long (rounded up
    /// to a picosecond), so the reference clock changes nothing.
    ///
    /// Scaled (instruction-bound work on a core): `cpu.post_wr`, `cpu.poll_cq`, and the socket
    /// path's `tcp_tx`, `tcp_ack_tx`, `tcp_rx` (fixed and per-byte parts), `driver_tx`,
    /// `driver_rx`, `softirq`, `zerocopy_notify` and `io_uring_sqe`.
    ///
    /// Not scaled: the copy (bound by memory bandwidth, figures.md §3 McCalpin's ≈ 8 GB/s per
    /// core), the syscall, interrupt and wake-up (measured or estimated as wall time, dominated
    /// by mitigations, MSI-X delivery and the scheduler, not by the core's clock), the verbs
    /// control path (firmware), PCIe and the NIC. A simplification: a real core's clock also
    /// changes some of these, but figures.md gives them in ns, not cycles.
    ///
    /// Calibrated overrides ([`HostProfile::apply_overrides`]) are measured on the machine at
    /// its own clock, so apply them after this, unscaled.
    pub fn at_clock(mut self, clock_mhz: u32) -> Self {
        let mhz = u128::from(clock_mhz.max(1));
        let ps = |ps: u64| -> u64 {
            let scaled = (u128::from(ps) * u128::from(REFERENCE_CLOCK_MHZ)).div_ceil(mhz);
            u64::try_from(scaled).unwrap_or(u64::MAX)
        };
        let d = |d: SimDuration| SimDuration::from_ps(ps(d.as_ps()));
        let cost = |c: crate::socket::Cost| crate::socket::Cost {
            fixed: d(c.fixed),
            per_byte_ps: ps(c.per_byte_ps),
        };
        self.cpu.clock_mhz = clock_mhz;
        self.cpu.post_wr = d(self.cpu.post_wr);
        self.cpu.poll_cq = d(self.cpu.poll_cq);
        let s = &mut self.socket;
        s.tcp_tx = cost(s.tcp_tx);
        s.tcp_ack_tx = cost(s.tcp_ack_tx);
        s.tcp_rx = cost(s.tcp_rx);
        s.driver_tx = cost(s.driver_tx);
        s.driver_rx = cost(s.driver_rx);
        s.softirq = d(s.softirq);
        s.zerocopy_notify = d(s.zerocopy_notify);
        s.io_uring_sqe = d(s.io_uring_sqe);
        self
    }

    /// Replaces constants named `section.field_ps` (picoseconds) or `socket.copy.per_byte_ps`,
    /// as `rdmalab calibrate` writes them in its `[profile]` table, then validates the result.
    /// Unknown names are errors that list what is known.
    pub fn apply_overrides(
        &mut self,
        values: &std::collections::BTreeMap<String, u64>,
    ) -> Result<(), ProfileError> {
        const KNOWN: &str = "control.syscall_ps, control.firmware_command_ps, control.pin_per_page_ps, \
            control.translation_per_page_ps, control.interrupt_ps, control.wakeup_ps, socket.syscall_ps, \
            socket.copy.per_byte_ps, socket.copy.fixed_ps, socket.wakeup_ps, cpu.post_wr_ps, cpu.poll_cq_ps";
        for (key, &v) in values {
            let ps = SimDuration::from_ps(v);
            match key.as_str() {
                "control.syscall_ps" => self.control.syscall = ps,
                "control.firmware_command_ps" => self.control.firmware_command = ps,
                "control.pin_per_page_ps" => self.control.pin_per_page = ps,
                "control.translation_per_page_ps" => self.control.translation_per_page = ps,
                "control.interrupt_ps" => self.control.interrupt = ps,
                "control.wakeup_ps" => self.control.wakeup = ps,
                "socket.syscall_ps" => self.socket.syscall = ps,
                "socket.copy.per_byte_ps" => self.socket.copy.per_byte_ps = v,
                "socket.copy.fixed_ps" => self.socket.copy.fixed = ps,
                "socket.wakeup_ps" => self.socket.wakeup = ps,
                "cpu.post_wr_ps" => self.cpu.post_wr = ps,
                "cpu.poll_cq_ps" => self.cpu.poll_cq = ps,
                _ => {
                    return Err(ProfileError {
                        field: "host profile key",
                        value: key.clone(),
                        allowed: KNOWN,
                    });
                }
            }
        }
        self.validate()
    }

    /// Checks every field.
    pub fn validate(&self) -> Result<(), ProfileError> {
        let bad = |field, value: u64, allowed| {
            Err(ProfileError {
                field,
                value: value.to_string(),
                allowed,
            })
        };
        if self.cpu.cores == 0 || self.cpu.cores > 1024 {
            return bad("host.cpu.cores", self.cpu.cores as u64, "1..=1024");
        }
        if !(100..=10_000).contains(&self.cpu.clock_mhz) {
            return bad(
                "host.cpu.clock_mhz",
                self.cpu.clock_mhz as u64,
                "100..=10000",
            );
        }
        if !(3..=6).contains(&self.pcie.generation) {
            return bad("host.pcie.generation", self.pcie.generation as u64, "3..=6");
        }
        if !matches!(self.pcie.lanes, 1 | 2 | 4 | 8 | 16) {
            return bad(
                "host.pcie.lanes",
                self.pcie.lanes as u64,
                "1, 2, 4, 8 or 16",
            );
        }
        if !matches!(
            self.nic.max_read_request_bytes,
            128 | 256 | 512 | 1024 | 2048 | 4096
        ) {
            return bad(
                "host.nic.max_read_request_bytes",
                self.nic.max_read_request_bytes as u64,
                "128, 256, 512, 1024, 2048 or 4096",
            );
        }
        if !(1..=1024).contains(&self.nic.read_tags) {
            return bad("host.nic.read_tags", self.nic.read_tags as u64, "1..=1024");
        }
        let max = SimDuration::from_ms(1).as_ps();
        for (field, d) in [
            ("host.pcie.dma_read_rtt_ps", self.pcie.dma_read_rtt),
            ("host.pcie.posted_write_ps", self.pcie.posted_write),
            ("host.nic.pipeline_ps", self.nic.pipeline),
            ("host.nic.packet_interval_ps", self.nic.packet_interval),
            ("host.cpu.post_wr_ps", self.cpu.post_wr),
            ("host.cpu.poll_cq_ps", self.cpu.poll_cq),
            ("host.control.syscall_ps", self.control.syscall),
            (
                "host.control.firmware_command_ps",
                self.control.firmware_command,
            ),
            ("host.control.pin_per_page_ps", self.control.pin_per_page),
            (
                "host.control.translation_per_page_ps",
                self.control.translation_per_page,
            ),
            ("host.control.interrupt_ps", self.control.interrupt),
            ("host.control.wakeup_ps", self.control.wakeup),
        ] {
            if d.as_ps() > max {
                return bad(field, d.as_ps(), "0..=1000000000 (1 ms)");
            }
        }
        self.socket.validate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pcie_bandwidth_by_generation_and_lanes() {
        let mut p = HostProfile::default().pcie;
        p.lanes = 8;
        assert_eq!(p.bandwidth(), Bandwidth::mbps(57_880), "Gen3 x8 after DLL");
        p.lanes = 16;
        assert_eq!(p.bandwidth(), Bandwidth::mbps(115_760));
        p.generation = 4;
        assert_eq!(p.bandwidth(), Bandwidth::mbps(231_520));
    }

    #[test]
    fn the_clock_scales_cycle_bound_costs_only() {
        let d = HostProfile::default();
        assert_eq!(
            d.at_clock(REFERENCE_CLOCK_MHZ),
            d,
            "the reference clock changes nothing"
        );
        let fast = d.at_clock(6_000);
        assert_eq!(fast.cpu.clock_mhz, 6_000);
        assert_eq!(
            fast.cpu.post_wr,
            SimDuration::from_ns(25),
            "half as long at twice the clock"
        );
        assert_eq!(fast.socket.tcp_rx.fixed, SimDuration::from_ns(150));
        assert_eq!(fast.socket.tcp_rx.per_byte_ps, 20);
        assert_eq!(fast.socket.copy, d.socket.copy, "memory-bound: not scaled");
        assert_eq!(fast.socket.syscall, d.socket.syscall);
        assert_eq!(fast.socket.wakeup, d.socket.wakeup);
        assert_eq!(fast.pcie, d.pcie);
        // 33 ns at 3 GHz is 99 cycles: 99 / 2.9 GHz = 34.137... ns, rounded up.
        assert_eq!(d.at_clock(2_900).cpu.poll_cq, SimDuration::from_ps(34_138));
    }

    #[test]
    fn the_tx_buffer_covers_one_gather_loop_at_line_rate() {
        let d = HostProfile::default();
        // 547 ns read + 4178 B at 115.76 Gb/s (288.736 ns) + 200 ns pipeline = 1035.736 ns;
        // at 100 Gb/s that is 12,946 B, one more for rounding, and two frames at the port.
        let b = d.nic.tx_buffer_bytes(&d.pcie, Bandwidth::gbps(100), 4_178);
        assert_eq!(b, 12_946 + 1 + 2 * 4_178);
        // 400G on Gen5 x16: a shorter PCIe time per frame, four times the rate.
        let mut g5 = d.pcie;
        g5.generation = 5;
        let b = d.nic.tx_buffer_bytes(&g5, Bandwidth::gbps(400), 4_178);
        assert_eq!(b, 40_959 + 1 + 2 * 4_178);
    }

    #[test]
    fn bad_profiles_name_the_field() {
        let mut p = HostProfile::default();
        p.cpu.cores = 0;
        assert_eq!(p.validate().unwrap_err().field, "host.cpu.cores");
        let mut p = HostProfile::default();
        p.pcie.lanes = 3;
        assert_eq!(p.validate().unwrap_err().field, "host.pcie.lanes");
        let mut p = HostProfile::default();
        p.nic.max_read_request_bytes = 600;
        assert_eq!(
            p.validate().unwrap_err().field,
            "host.nic.max_read_request_bytes"
        );
        assert!(HostProfile::default().validate().is_ok());
    }
}
