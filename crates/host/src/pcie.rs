//! The PCIe link between host memory and the NIC.
//!
//! Three kinds of transfer, as research/figures.md §3 (Neugebauer et al., SIGCOMM 2018;
//! Kalia et al., ATC 2016) describes them:
//! - **MMIO write** (CPU → NIC, posted): a doorbell or a BlueFlame WQE lands after the posted
//!   write latency.
//! - **DMA read** (NIC asks host memory): a round trip, plus the data's time on the link.
//! - **DMA write** (NIC → host memory, posted): the data is visible after the posted-write
//!   latency plus its time on the link.
//!
//! Each direction is a resource with a bandwidth cap: transfers in one direction queue behind
//! each other (a 1 MiB gather cannot go faster than the link), while reads and writes overlap.
//! Each direction keeps a [`Calendar`] of its bookings, so a transfer booked ahead of simulated
//! time (a doorbell for when a core's work ends) does not hold back one that can start now.
//! Simplifications: TLP header overhead is folded into the goodput figure; no read-completion
//! reordering; no root-complex tail latency (figures.md notes p99.9 up to milliseconds on some
//! hosts).

use crate::calendar::Calendar;
use crate::profile::PcieProfile;
use engine::{ExecUnit, Stage, TraceRecord, Tracer};
use units::{Bandwidth, ByteLen, NodeId, SimTime};

/// One host's PCIe link, with a [`Calendar`] of bookings per direction.
#[derive(Clone, Debug)]
pub struct Pcie {
    /// The host whose link this is (named in trace records).
    host: NodeId,
    profile: PcieProfile,
    bw: Bandwidth,
    /// Host → NIC direction (DMA read data, MMIO writes): its bookings.
    down: Calendar,
    /// NIC → host direction (DMA write data): its bookings.
    up: Calendar,
    /// Bytes moved by DMA (both directions): the memory-bus bytes the NIC caused.
    pub dma_bytes: u64,
}

impl Pcie {
    /// Host `host`'s link, with `profile`'s timing.
    pub fn new(host: NodeId, profile: PcieProfile) -> Self {
        Pcie {
            host,
            profile,
            bw: profile.bandwidth(),
            down: Calendar::new(),
            up: Calendar::new(),
            dma_bytes: 0,
        }
    }

    /// The usable bandwidth per direction.
    pub fn bandwidth(&self) -> Bandwidth {
        self.bw
    }

    /// An MMIO write of `bytes` issued at `now`: returns when it reaches the NIC.
    pub fn mmio_write(&mut self, now: SimTime, bytes: u64) -> (SimTime, SimTime) {
        let (start, end) = self
            .down
            .book(now, self.bw.serialization_time(ByteLen::new(bytes)));
        (start, end + self.profile.posted_write)
    }

    /// A DMA read of `bytes` the NIC starts at `now`: returns (start, data complete at the NIC).
    pub fn dma_read(&mut self, now: SimTime, bytes: u64) -> (SimTime, SimTime) {
        // The request goes up, memory answers, data streams down behind earlier reads.
        let data_ready = now + self.profile.dma_read_rtt;
        let xfer = self.bw.serialization_time(ByteLen::new(bytes));
        let (_, end) = self.down.book(data_ready, xfer);
        self.dma_bytes += bytes;
        (now, end)
    }

    /// A DMA write of `bytes` the NIC starts at `now`: returns (start, visible in host memory).
    pub fn dma_write(&mut self, now: SimTime, bytes: u64) -> (SimTime, SimTime) {
        let (start, end) = self
            .up
            .book(now, self.bw.serialization_time(ByteLen::new(bytes)));
        self.dma_bytes += bytes;
        (start, end + self.profile.posted_write)
    }
}

/// A transfer to run and trace: which kind, when it may start, how many bytes, the stage's
/// name and whether it serves connection setup.
#[derive(Clone, Copy, Debug)]
pub struct Xfer {
    /// MMIO write, DMA read or DMA write.
    pub kind: XferKind,
    /// When it may start (a DMA read's request, an MMIO write's issue).
    pub at: SimTime,
    /// Bytes moved.
    pub bytes: u64,
    /// The stage, as traced (a PCIe one).
    pub stage: Stage,
    /// It serves connection setup rather than the data path.
    pub setup: bool,
}

/// The three kinds of PCIe transfer (see the module documentation).
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum XferKind {
    /// CPU → NIC, posted.
    MmioWrite,
    /// The NIC reads host memory.
    DmaRead,
    /// The NIC writes host memory, posted.
    DmaWrite,
}

impl Pcie {
    /// Runs `x` and traces it as a PCIe stage (the record emitted at `now`, when the transfer
    /// is decided); returns (start, end) as the untraced call of its kind does.
    pub fn run(&mut self, tracer: &mut Tracer, now: SimTime, x: Xfer) -> (SimTime, SimTime) {
        debug_assert_eq!(
            x.stage.domain(),
            engine::Domain::Pcie,
            "{} is not a PCIe stage",
            x.stage
        );
        let (start, end) = match x.kind {
            XferKind::MmioWrite => self.mmio_write(x.at, x.bytes),
            XferKind::DmaRead => self.dma_read(x.at, x.bytes),
            XferKind::DmaWrite => self.dma_write(x.at, x.bytes),
        };
        let host = self.host;
        tracer.emit(now, || TraceRecord::Stage {
            host,
            unit: ExecUnit::Pcie,
            stage: x.stage,
            setup: x.setup,
            start,
            end,
        });
        (start, end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::HostProfile;

    #[test]
    fn small_read_costs_a_round_trip_large_reads_the_link() {
        let mut p = Pcie::new(NodeId(0), HostProfile::default().pcie);
        let (_, done) = p.dma_read(SimTime::ZERO, 64);
        // 547 ns + 64 B at 115.76 Gb/s (4.42 ns).
        assert_eq!(done.as_ps(), 547_000 + 4_423);
        // A 1 MiB gather takes about 1 MiB / 115.76 Gb/s = 72.5 µs after the round trip.
        let mut p = Pcie::new(NodeId(0), HostProfile::default().pcie);
        let (_, done) = p.dma_read(SimTime::ZERO, 1 << 20);
        let expect = 547_000
            + Bandwidth::mbps(115_760)
                .serialization_time(ByteLen::new(1 << 20))
                .as_ps();
        assert_eq!(done.as_ps(), expect);
        // Back-to-back reads pipeline: the second's data follows the first's on the link.
        let (_, second) = p.dma_read(SimTime::ZERO, 1 << 20);
        assert!(second.as_ps() >= 2 * (expect - 547_000));
        assert_eq!(p.dma_bytes, 2 << 20);
    }
}
