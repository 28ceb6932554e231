//! NVMe over Fabrics: fio-shaped block workloads from initiators to one target with an NVMe
//! device, over RoCEv2 RC QPs (NVMe/RDMA) or kernel TCP sockets (NVMe/TCP).
//!
//! # Map
//! - [`capsule`]: the 64-byte command (SQE with its SGL data pointer) and the 16-byte
//!   completion (CQE), as typed encodings.
//! - [`pdu`]: NVMe/TCP's PDUs (CapsuleCmd, CapsuleResp, H2CData, C2HData, R2T) with the
//!   optional CRC32C header and data digests.
//! - [`device`]: the NVMe device: submission queue, media latency, parallel units.
//! - [`workload`]: fio's `rw`, `rwmixread`, `bs`, per-job generators from the seed.
//! - [`costs`]: the CPU cost of the NVMe layer on each side (the host model charges the rest).
//! - `run` drives the World; `rdma` and `tcp` are the two transports' initiator and target.
//! - [`report`]: fio's figures (IOPS, bandwidth, completion latency percentiles, CPU per IO).
//!
//! # How it runs (and what it leaves out)
//! Host 0 is the target and hosts 1..=N the initiators, on one switch (a star), so N > 1
//! initiators are an incast on the target's port. Each initiator runs `numjobs` jobs, each with
//! its own I/O queue (one RC QP pair, or one TCP connection) of `iodepth` slots; the command
//! identifier is the slot. Both ends are user-space applications on core 0 (as SPDK's host and
//! target are): NVMe/RDMA polls its CQs, posts with verbs and never enters the kernel;
//! NVMe/TCP reads and writes its sockets through the host model's kernel path (syscalls,
//! copies, TCP/IP, interrupts, wake-ups of a blocked reader). The CPU per IO is the busy time
//! of the stages, not the time a polling thread spins.
//!
//! NVMe/RDMA as NVMe-oF 1.1 §7.3 and Linux `drivers/nvme/{host,target}/rdma.c` run it: the
//! command capsule by SEND (keyed SGL for the host buffer, or in-capsule data for writes up to
//! the target's inline size), the data by the target's RDMA WRITE (host reads) or RDMA READ
//! (host writes), the response capsule by SEND. NVMe/TCP as the NVMe/TCP 1.0 specification
//! runs it: CapsuleCmd (in-capsule data for writes up to the inline size), C2HData then
//! CapsuleResp for reads, R2T then H2CData then CapsuleResp for larger writes.
//!
//! What a test could observe because of it: every job of a host, and the target's every
//! queue, share one application thread. Closed-loop IOs with the same device time move in a
//! convoy, and a convoy's completions are handled one after another on that thread, so latency
//! grows with the queue depth before the thread is fully busy (NVMe/TCP from QD 16, where each
//! IO costs microseconds of socket work; NVMe/RDMA only once the device's units are all busy).
//! The device serves every IO in the same time, so at QD 1 p50 = p99.
//!
//! Connection setup: NVMe/RDMA connects each I/O queue with RDMA-CM on the wire
//! ([`crate::world::World::connect_rc_cm`]): the REQ to port 4420 carries the host's
//! `nvme_rdma_cm_req` (queue ID = job + 1, hrqsize = iodepth, hsqsize = iodepth − 1, 0's
//! based), the REP the target's `nvme_rdma_cm_rep` (crqsize = iodepth), and the target checks
//! the queue it read. That exchange is what lets Wireshark's NVMe/RDMA dissector recognise the
//! QPs in a pcap. It is setup: the report's figures (CPU, link, port queues) start with the data
//! phase. NVMe/TCP's sockets connect with the TCP handshake.
//!
//! Not modelled: the Fabrics Connect command and ICReq/ICResp, admin queues, keep-alive,
//! multiple namespaces, the block layer's merging and any interrupt on the RDMA side.

pub mod capsule;
pub mod costs;
pub mod device;
pub mod pdu;
mod rdma;
pub mod report;
mod run;
mod tcp;
pub mod workload;

pub use report::{CpuSplit, FioReport, LatencySummary, Utilisation};
pub use run::run;

use device::DeviceConfig;
use pdu::Digests;
use units::SimDuration;
use workload::RwMode;

/// fio's `ioengine` here: which transport carries the NVMe queues.
#[derive(Clone, Copy, Debug, Eq, PartialEq, serde::Serialize)]
pub enum IoEngine {
    /// NVMe/RDMA over RoCEv2 RC.
    #[serde(rename = "nvmf-rdma")]
    Rdma,
    /// NVMe/TCP over the kernel TCP path.
    #[serde(rename = "nvmf-tcp")]
    Tcp,
    /// The device in the initiator itself (no fabric): the local-device baseline.
    #[serde(rename = "local")]
    Local,
}

impl IoEngine {
    /// The engine fio would be told, `s`.
    pub fn parse(s: &str) -> Option<IoEngine> {
        Some(match s {
            "nvmf-rdma" => IoEngine::Rdma,
            "nvmf-tcp" => IoEngine::Tcp,
            "local" => IoEngine::Local,
            _ => return None,
        })
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            IoEngine::Rdma => "nvmf-rdma",
            IoEngine::Tcp => "nvmf-tcp",
            IoEngine::Local => "local",
        }
    }

    /// The target's default in-capsule data size for writes.
    /// source: Linux drivers/nvme/target/rdma.c `NVMET_RDMA_DEFAULT_INLINE_DATA_SIZE` PAGE_SIZE
    /// (4 KiB); drivers/nvme/target/tcp.c `NVMET_TCP_DEF_INLINE_DATA_SIZE` 4 × PAGE_SIZE.
    pub fn default_inline_bytes(self) -> u32 {
        match self {
            IoEngine::Rdma => 4096,
            IoEngine::Tcp => 16_384,
            IoEngine::Local => 0,
        }
    }
}

/// Most IOs a `number_ios` run may complete in all (one latency each is kept: 80 MB).
pub const MAX_IOS: u64 = 10_000_000;

/// When a run stops.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Limit {
    /// fio `runtime` (time_based): issue until then; IOs still in flight are not counted.
    Runtime(SimDuration),
    /// fio `number_ios`: this many IOs per job, all completed.
    Ios(u64),
}

/// One fio run.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FioConfig {
    /// The transport.
    pub ioengine: IoEngine,
    /// fio `rw`.
    pub rw: RwMode,
    /// fio `rwmixread`, percent.
    pub rwmixread: u8,
    /// fio `bs`, bytes.
    pub bs: u32,
    /// fio `iodepth`: IOs in flight per job.
    pub iodepth: u32,
    /// fio `numjobs`: jobs per initiator.
    pub numjobs: u32,
    /// `runtime` or `number_ios`.
    #[serde(serialize_with = "ser_limit")]
    pub limit: Limit,
    /// fio `size`: the region each job addresses, bytes.
    pub size_bytes: u64,
    /// Initiator hosts.
    pub initiators: u32,
    /// Link rate of every port, Gb/s.
    pub link_gbps: u64,
    /// Cable length of every link, m.
    pub cable_m: u64,
    /// PFC on the RoCE priority (lossless RoCE, as NVMe/RDMA fabrics are deployed); TCP is
    /// lossy either way.
    pub pfc: bool,
    /// The target's device.
    pub device: DeviceConfig,
    /// NVMe/TCP digests.
    pub digests: Digests,
    /// Writes up to this many bytes travel in the command capsule.
    pub inline_bytes: u32,
    /// Seed of the workload generators.
    pub seed: u64,
    /// Threads the run may use ([`crate::world::World::new_partitioned`]); the result is the
    /// same for any count, so it is not part of the report's config (its `parallel` says how
    /// the run went).
    #[serde(skip)]
    pub threads: u32,
}

impl FioConfig {
    /// fio's defaults for everything but the engine: 4 KiB randread, QD 1, one job, 30 ms.
    pub fn new(ioengine: IoEngine) -> FioConfig {
        FioConfig {
            ioengine,
            rw: RwMode::RandRead,
            rwmixread: 50,
            bs: 4096,
            iodepth: 1,
            numjobs: 1,
            limit: Limit::Runtime(SimDuration::from_ms(30)),
            size_bytes: 1 << 30,
            initiators: 1,
            link_gbps: 100,
            cable_m: 2,
            pfc: true,
            device: DeviceConfig::default(),
            digests: Digests::default(),
            inline_bytes: ioengine.default_inline_bytes(),
            seed: 1,
            threads: 1,
        }
    }

    /// Checks every value; the error names the flag and its allowed range.
    pub fn validate(&self) -> Result<(), String> {
        fn range(flag: &str, v: u64, lo: u64, hi: u64, unit: &str) -> Result<(), String> {
            if v < lo || v > hi {
                return Err(format!(
                    "--{flag} {v}{unit} is out of range: allowed {lo}{unit}–{hi}{unit}"
                ));
            }
            Ok(())
        }
        range("bs", self.bs as u64, 512, 1 << 20, " B")?;
        if !self.bs.is_multiple_of(512) {
            return Err(format!(
                "--bs {} B is not a multiple of the 512 B block",
                self.bs
            ));
        }
        range("iodepth", self.iodepth as u64, 1, 256, "")?;
        range("numjobs", self.numjobs as u64, 1, 16, "")?;
        range("initiators", self.initiators as u64, 1, 32, "")?;
        range("rwmixread", self.rwmixread as u64, 0, 100, "")?;
        range("size", self.size_bytes, self.bs as u64, 1 << 40, " B")?;
        range("link-gbps", self.link_gbps, 1, 800, "")?;
        range("cable-m", self.cable_m, 0, 1000, "")?;
        range("inline", self.inline_bytes as u64, 0, 16_384, " B")?;
        match self.limit {
            Limit::Runtime(d) => range("runtime", d.as_ns() / 1000, 1, 1_000_000, " us")?,
            Limit::Ios(n) => {
                range("number_ios", n, 1, 1_000_000, "")?;
                // The report keeps one latency per IO: bound the whole run's IOs.
                let total = n * self.numjobs as u64 * self.initiators as u64;
                if total > MAX_IOS {
                    return Err(format!(
                        "--number_ios {n} × --numjobs {} × --initiators {} = {total} IOs: allowed at most {MAX_IOS}",
                        self.numjobs, self.initiators
                    ));
                }
            }
        }
        let us = |d: SimDuration| d.as_ns() / 1000;
        range("device-read-us", us(self.device.read), 1, 10_000, "")?;
        range("device-write-us", us(self.device.write), 1, 10_000, "")?;
        range(
            "device-parallel",
            self.device.parallel_units as u64,
            1,
            4096,
            "",
        )?;
        Ok(())
    }
}

fn ser_ps<S: serde::Serializer>(d: &SimDuration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_ps())
}

fn ser_bps<S: serde::Serializer>(b: &units::Bandwidth, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(b.bps())
}

fn ser_limit<S: serde::Serializer>(l: &Limit, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(1))?;
    match *l {
        Limit::Runtime(d) => m.serialize_entry("runtime_ps", &d.as_ps())?,
        Limit::Ios(n) => m.serialize_entry("number_ios", &n)?,
    }
    m.end()
}
