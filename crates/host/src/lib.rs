//! Hosts: the CPU, PCIe and NIC cost model every path through a machine is timed with.
//!
//! - [`profile`]: [`HostProfile`], the model constants with units and sources.
//! - [`cpu`]: [`Cpu`], cores that run stages one at a time, with per-stage accounting.
//! - [`socket`]: [`SocketCosts`], the kernel socket path's costs (syscall, copy, TCP/IP stack,
//!   interrupt, wake-up).
//! - [`pcie`]: [`Pcie`], the link between host memory and the NIC: MMIO writes, DMA reads and
//!   writes, a bandwidth cap per direction.
//! - [`calendar`]: [`Calendar`](calendar::Calendar), the bookings of one PCIe direction.
//!
//! This crate is the cost model only: it depends on `units` and `engine`, not on `verbs`,
//! `transport` or `fabric`. The simulator's world (`crates/sim/src/world/`) charges these costs
//! on the RDMA and socket paths and binds verbs and transports to fabric ports.
//!
//! Every stage ends up as an [`engine::TraceRecord::Stage`] with the unit that ran it, so a UI
//! can draw it and the report can count it: [`Cpu::run`] emits its own record; [`Pcie`] returns
//! each transfer's interval and its caller emits the record.

pub mod calendar;
pub mod cpu;
pub mod pcie;
pub mod profile;
pub mod socket;

pub use cpu::{Cpu, CpuAccount, CpuWork, Spin};
pub use pcie::{Pcie, Xfer, XferKind};
pub use profile::{
    ControlPath, CpuProfile, HostProfile, NicTiming, PORT_AHEAD_FRAMES, PcieProfile, ProfileError,
    REFERENCE_CLOCK_MHZ,
};
pub use socket::{Cost, SocketCosts};
