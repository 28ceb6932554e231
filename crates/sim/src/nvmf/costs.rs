//! CPU costs of the NVMe layer itself, on the application thread of each side. Everything
//! below it (verbs posts and polls, syscalls, copies, TCP/IP, interrupts, wake-ups) is charged
//! by the host model (`crates/host`), so these are only the NVMe driver's and fio's own work.
//!
//! research/figures.md has no figure for any of them: each is an assumption, stated in cycles
//! at the reference 3 GHz clock (`host::profile::REFERENCE_CLOCK_MHZ`), sized as a few hundred
//! instructions of bookkeeping each (fio's io_u handling; SPDK's request allocation and SQE
//! build; the target's command parse and dispatch). The usr/sys split of a report comes from
//! each stage's [`engine::Domain`]: these are user-space stages (`engine::Stage::FioQueue`, …).

use units::SimDuration;

/// fio preparing and queueing one io_u (offset draw, bookkeeping).
/// assumption: ~300 cycles at 3 GHz.
pub const FIO_QUEUE: SimDuration = SimDuration::from_ns(100);
/// fio reaping one completion (latency accounting).
/// assumption: ~300 cycles at 3 GHz.
pub const FIO_REAP: SimDuration = SimDuration::from_ns(100);
/// The host's NVMe driver building a command (request, SQE, SGL) for the queue.
/// assumption: ~600 cycles at 3 GHz.
pub const HOST_BUILD: SimDuration = SimDuration::from_ns(200);
/// The host's NVMe driver completing a command from its response.
/// assumption: ~450 cycles at 3 GHz.
pub const HOST_COMPLETE: SimDuration = SimDuration::from_ns(150);
/// The target parsing a command capsule and submitting it to the device (or asking for data).
/// assumption: ~900 cycles at 3 GHz (parse, namespace lookup, device SQE and doorbell).
pub const TARGET_SUBMIT: SimDuration = SimDuration::from_ns(300);
/// The target reaping the device's completion and building the response.
/// assumption: ~600 cycles at 3 GHz.
pub const TARGET_COMPLETE: SimDuration = SimDuration::from_ns(200);
