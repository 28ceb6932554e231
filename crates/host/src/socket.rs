//! The cost model of the kernel socket path: what a `write()`, a `read()` and the kernel's TCP
//! work in between cost on a core.
//!
//! Every cost is a fixed part plus a per-byte part ([`Cost`]). The values are building blocks
//! from research/figures.md §3 (syscall, context switch, single-core copy bandwidth, the
//! whole-stack per-byte TCP cost derived from Cai et al.) or estimates where figures.md has a
//! gap (per-segment stack work, interrupts, driver work); each field says which. End-to-end
//! results (a message's latency, a stream's throughput) are never constants here: the world
//! runs these stages on cores and the results come out of the run.
//!
//! Sources:
//! - research/figures.md §3 "syscall (null)": ~350–450 ns with KPTI/retpoline (low confidence).
//! - research/figures.md §3 "context switch": ~1.07 µs between threads.
//! - research/figures.md §3 "single-thread bandwidth limit": ≈ 8 GB/s per core (McCalpin).
//! - research/figures.md §3 "per-byte TCP cost": ~0.6 cycles/B at 3 GHz (≈ 0.2 ns/B) for the
//!   whole stack including the data copy (derived from Cai et al.).
//! - research/figures.md §3 "time per 1538 B packet": 307 ns at 40 Gb/s (LWN 2015), the budget a
//!   per-packet stack cost must fit to keep up; used to size the per-segment estimates.
//! - Linux `GSO_MAX_SIZE` / GRO's 64 KiB limit (include/linux/netdevice.h) for TSO and GRO.

use crate::profile::ProfileError;
use units::SimDuration;

/// A stage cost: a fixed part plus a part per byte handled.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct Cost {
    /// Paid once per run of the stage.
    pub fixed: SimDuration,
    /// Paid per byte, in picoseconds per byte (125 ps/B = 8 GB/s).
    pub per_byte_ps: u64,
}

impl Cost {
    /// A fixed cost only.
    pub const fn fixed(d: SimDuration) -> Cost {
        Cost {
            fixed: d,
            per_byte_ps: 0,
        }
    }

    /// The time this stage takes for `bytes` bytes.
    pub fn time(&self, bytes: u64) -> SimDuration {
        self.fixed + SimDuration::from_ps(self.per_byte_ps.saturating_mul(bytes))
    }
}

/// Costs of the kernel socket path on one host.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct SocketCosts {
    /// Entering and leaving the kernel for a syscall (half is charged at entry, half at exit).
    /// source: research/figures.md §3, "~350–450 ns with KPTI/retpoline on"; 400 ns.
    pub syscall: SimDuration,
    /// A CPU copy between user and kernel memory (either direction).
    /// source: research/figures.md §3, single-core bandwidth ≈ 8 GB/s (McCalpin) = 125 ps/B;
    /// the fixed part (page-table walk, `copy_{from,to}_user` setup) is an estimate, 20 ns.
    pub copy: Cost,
    /// TCP/IP transmit processing for one segment (or one TSO super-segment): building the
    /// skb, headers, congestion and retransmission state, qdisc.
    /// estimate: figures.md has no per-segment figure; 300 ns fixed fits the 307 ns/packet
    /// budget of a 40 Gb/s core (LWN, figures.md §3). Per byte: 35 ps/B, part of the
    /// ≈ 75 ps/B that Cai et al.'s whole-stack 0.2 ns/B leaves after the 125 ps/B copy
    /// (checksums are offloaded: figures.md lists checksum cost as a gap).
    pub tcp_tx: Cost,
    /// Sending a pure ACK from softirq context: header build and transmit, no data.
    /// estimate: figures.md has no figure; a data segment's fixed part minus the data work, 200 ns.
    pub tcp_ack_tx: Cost,
    /// The driver posting a batch of descriptors and ringing the doorbell (the MMIO write is
    /// timed by PCIe separately).
    /// estimate: figures.md has no figure; 100 ns.
    pub driver_tx: Cost,
    /// A hard interrupt: MSI-X delivery, the driver's handler, raising the NAPI softirq.
    /// estimate: figures.md has no interrupt figure; about a syscall, 400 ns.
    pub interrupt: SimDuration,
    /// Entering a softirq run (NAPI poll loop start, accounting).
    /// estimate: figures.md has no figure; 100 ns.
    pub softirq: SimDuration,
    /// Driver receive work per wire segment: descriptor, skb build, GRO lookup. Paid per
    /// segment with or without GRO.
    /// estimate: figures.md has no figure; 60 ns.
    pub driver_rx: Cost,
    /// TCP/IP receive processing of one segment as the stack sees it (one GRO-merged segment
    /// counts once): IP and TCP input, reassembly, socket queueing.
    /// estimate: 300 ns fixed as for transmit; 40 ps/B, the rest of Cai et al.'s per-byte cost.
    pub tcp_rx: Cost,
    /// Waking a thread blocked in `read()`: the scheduler's wake-up and the context switch.
    /// source: research/figures.md §3, context switch "~1.07 µs (threads)".
    pub wakeup: SimDuration,
    /// Handling one MSG_ZEROCOPY completion notification (error-queue entry and its read).
    /// estimate: figures.md has no figure; 200 ns.
    pub zerocopy_notify: SimDuration,
    /// Preparing one io_uring submission entry (user space, no syscall).
    /// estimate: figures.md has no figure; about a verbs WQE, 50 ns.
    pub io_uring_sqe: SimDuration,
    /// Largest TSO/GSO super-segment and largest GRO-merged segment, in payload bytes.
    /// source: Linux `GSO_MAX_SIZE` (64 KiB), capped to the 16-bit IPv4 length: 65 535.
    pub offload_max_bytes: u32,
}

impl Default for SocketCosts {
    fn default() -> Self {
        SocketCosts {
            syscall: SimDuration::from_ns(400),
            copy: Cost {
                fixed: SimDuration::from_ns(20),
                per_byte_ps: 125,
            },
            tcp_tx: Cost {
                fixed: SimDuration::from_ns(300),
                per_byte_ps: 35,
            },
            tcp_ack_tx: Cost::fixed(SimDuration::from_ns(200)),
            driver_tx: Cost::fixed(SimDuration::from_ns(100)),
            interrupt: SimDuration::from_ns(400),
            softirq: SimDuration::from_ns(100),
            driver_rx: Cost::fixed(SimDuration::from_ns(60)),
            tcp_rx: Cost {
                fixed: SimDuration::from_ns(300),
                per_byte_ps: 40,
            },
            wakeup: SimDuration::from_ns(1_070),
            zerocopy_notify: SimDuration::from_ns(200),
            io_uring_sqe: SimDuration::from_ns(50),
            offload_max_bytes: 65_535,
        }
    }
}

impl SocketCosts {
    /// Largest fixed cost accepted.
    pub const MAX_FIXED: SimDuration = SimDuration::from_ms(1);
    /// Largest per-byte cost accepted, ps/B (100 ns/B = 10 MB/s).
    pub const MAX_PER_BYTE_PS: u64 = 100_000;

    /// Checks every field; the error names the field and the allowed range.
    pub fn validate(&self) -> Result<(), ProfileError> {
        let max = Self::MAX_FIXED.as_ps();
        let fixed = [
            ("host.socket.syscall_ps", self.syscall),
            ("host.socket.copy.fixed_ps", self.copy.fixed),
            ("host.socket.tcp_tx.fixed_ps", self.tcp_tx.fixed),
            ("host.socket.tcp_ack_tx.fixed_ps", self.tcp_ack_tx.fixed),
            ("host.socket.driver_tx.fixed_ps", self.driver_tx.fixed),
            ("host.socket.interrupt_ps", self.interrupt),
            ("host.socket.softirq_ps", self.softirq),
            ("host.socket.driver_rx.fixed_ps", self.driver_rx.fixed),
            ("host.socket.tcp_rx.fixed_ps", self.tcp_rx.fixed),
            ("host.socket.wakeup_ps", self.wakeup),
            ("host.socket.zerocopy_notify_ps", self.zerocopy_notify),
            ("host.socket.io_uring_sqe_ps", self.io_uring_sqe),
        ];
        for (field, d) in fixed {
            if d.as_ps() > max {
                return Err(ProfileError {
                    field,
                    value: d.as_ps().to_string(),
                    allowed: "0..=1000000000 (1 ms)",
                });
            }
        }
        let per_byte = [
            ("host.socket.copy.per_byte_ps", self.copy.per_byte_ps),
            ("host.socket.tcp_tx.per_byte_ps", self.tcp_tx.per_byte_ps),
            (
                "host.socket.tcp_ack_tx.per_byte_ps",
                self.tcp_ack_tx.per_byte_ps,
            ),
            (
                "host.socket.driver_tx.per_byte_ps",
                self.driver_tx.per_byte_ps,
            ),
            (
                "host.socket.driver_rx.per_byte_ps",
                self.driver_rx.per_byte_ps,
            ),
            ("host.socket.tcp_rx.per_byte_ps", self.tcp_rx.per_byte_ps),
        ];
        for (field, v) in per_byte {
            if v > Self::MAX_PER_BYTE_PS {
                return Err(ProfileError {
                    field,
                    value: v.to_string(),
                    allowed: "0..=100000 ps/B (at least 10 MB/s)",
                });
            }
        }
        if !(1024..=65_535).contains(&self.offload_max_bytes) {
            return Err(ProfileError {
                field: "host.socket.offload_max_bytes",
                value: self.offload_max_bytes.to_string(),
                allowed: "1024..=65535",
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_is_fixed_plus_per_byte() {
        let c = SocketCosts::default().copy;
        // 4096 B at 125 ps/B = 512 ns, plus 20 ns.
        assert_eq!(c.time(4096), SimDuration::from_ns(532));
        assert_eq!(c.time(0), SimDuration::from_ns(20));
    }

    #[test]
    fn absurd_costs_name_the_field() {
        assert!(SocketCosts::default().validate().is_ok());
        let mut s = SocketCosts::default();
        s.copy.per_byte_ps = 1_000_000;
        assert_eq!(
            s.validate().unwrap_err().field,
            "host.socket.copy.per_byte_ps"
        );
        let s = SocketCosts {
            wakeup: SimDuration::from_secs(1),
            ..SocketCosts::default()
        };
        assert_eq!(s.validate().unwrap_err().field, "host.socket.wakeup_ps");
        let s = SocketCosts {
            offload_max_bytes: 70_000,
            ..SocketCosts::default()
        };
        assert_eq!(
            s.validate().unwrap_err().field,
            "host.socket.offload_max_bytes"
        );
    }
}
