//! `rdmalab fio`: fio's block workload against a simulated NVMe-oF target, over NVMe/RDMA or
//! NVMe/TCP (or the device alone), with fio's main flags and the shape of its report.

use crate::bad_input::bad;
use rdmalab::nvmf::{self, FioConfig, IoEngine, Limit, workload::RwMode};
use rdmalab::units::SimDuration;
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(after_help = FIO_HELP)]
pub struct FioArgs {
    /// nvmf-rdma (NVMe/RDMA over RoCEv2), nvmf-tcp (NVMe/TCP over kernel TCP) or local (the
    /// device in the initiator, no fabric).
    #[arg(long)]
    pub ioengine: String,
    /// read, write, randread, randwrite, rw (readwrite) or randrw.
    #[arg(long, default_value = "randread")]
    pub rw: String,
    /// Percent reads of a mixed workload (0..=100).
    #[arg(long, default_value_t = 50)]
    pub rwmixread: u64,
    /// Block size: bytes, or with k/m (KiB/MiB) as fio reads it; 512 B..=1 MiB, a multiple
    /// of 512.
    #[arg(long, default_value = "4k")]
    pub bs: String,
    /// IOs in flight per job (1..=256).
    #[arg(long, default_value_t = 1)]
    pub iodepth: u64,
    /// Jobs per initiator, each with its own I/O queue (1..=16).
    #[arg(long, default_value_t = 1)]
    pub numjobs: u64,
    /// How long to issue IOs: a number with us, ms or s (a bare number is seconds, as fio's);
    /// 1 us..=1 s. IOs still in flight at the end are not counted.
    #[arg(long, default_value = "30ms")]
    pub runtime: String,
    /// Instead of --runtime: IOs per job (1..=1000000), all completed.
    #[arg(long = "number_ios")]
    pub number_ios: Option<u64>,
    /// The region each job addresses (bytes or with k/m/g); at least --bs, at most 1 TiB.
    #[arg(long, default_value = "1g")]
    pub size: String,
    /// Initiator hosts on the target's switch (1..=32): more than one is an incast on the
    /// target's port.
    #[arg(long, default_value_t = 1)]
    pub initiators: u64,
    /// Link rate of every port, Gb/s (1..=800).
    #[arg(long = "link-gbps", default_value_t = 100)]
    pub link_gbps: u64,
    /// Cable length of every link, m (0..=1000).
    #[arg(long = "cable-m", default_value_t = 2)]
    pub cable_m: u64,
    /// PFC on the RoCE priority: on (lossless RoCE, the default) or off.
    #[arg(long, default_value = "on")]
    pub pfc: String,
    /// NVMe/TCP header digest (CRC32C) on every PDU.
    #[arg(long)]
    pub hdgst: bool,
    /// NVMe/TCP data digest (CRC32C) on every PDU that carries data.
    #[arg(long)]
    pub ddgst: bool,
    /// Writes up to this size travel in the command capsule (0..=16 KiB; default the Linux
    /// target's: 4 KiB for RDMA, 16 KiB for TCP).
    #[arg(long)]
    pub inline: Option<String>,
    /// The device's media time for a read, µs (1..=10000; default 80, an assumption).
    #[arg(long = "device-read-us")]
    pub device_read_us: Option<u64>,
    /// The device's media time for a write, µs (1..=10000; default 20, an assumption).
    #[arg(long = "device-write-us")]
    pub device_write_us: Option<u64>,
    /// Commands the device serves at once (1..=4096; default 64, an assumption).
    #[arg(long = "device-parallel")]
    pub device_parallel: Option<u64>,
    /// Seed of the offsets and the read/write mix.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write every frame of the run to this pcap file.
    #[arg(long, value_name = "FILE")]
    pub pcap: Option<std::path::PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Threads the run may use, 1..=256 (default 1). The initiators and the target share one
    /// switch, which a split keeps whole (hosts stay with their switch), so the run is on one
    /// thread whatever is asked and its last line says why; the result is the same.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256))]
    pub threads: Option<u32>,
}

const FIO_HELP: &str = "\
Examples:
  rdmalab fio --ioengine nvmf-rdma --rw randread --bs 4k --iodepth 32 --runtime 30ms
  rdmalab fio --ioengine nvmf-tcp --rw randread --bs 4k --iodepth 32 --hdgst --ddgst
  rdmalab fio --ioengine nvmf-rdma --rw randwrite --bs 128k --iodepth 8 --initiators 4   # incast
  rdmalab fio --ioengine local --iodepth 1                  # the device alone

Latencies are completion latencies (fio's clat: submission to reaping) in µs of simulated
time. CPU per IO is the busy time of every stage on the initiators (summed) and on the
target, divided by the IOs completed, split into user (fio, NVMe driver, verbs) and system
(syscalls, copies, TCP/IP, interrupts, wake-ups) time. Each fabric run prints the same job on
the local device beside it.";

/// A size as fio reads one: a number with an optional k, m or g (powers of 1024).
fn size_of(flag: &str, s: &str) -> Result<u64, String> {
    let t = s.trim().to_ascii_lowercase();
    let (num, mul) = match t.trim_end_matches(['b', 'i']).chars().last() {
        Some('k') => (&t[..t.find('k').unwrap_or(0)], 1u64 << 10),
        Some('m') => (&t[..t.find('m').unwrap_or(0)], 1 << 20),
        Some('g') => (&t[..t.find('g').unwrap_or(0)], 1 << 30),
        _ => (t.as_str(), 1),
    };
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mul))
        .ok_or_else(|| format!("--{flag} {s:?} is not a size (bytes, or a number with k, m or g)"))
}

/// A duration: a number with us, ms or s; a bare number is seconds.
fn duration_of(flag: &str, s: &str) -> Result<SimDuration, String> {
    let t = s.trim();
    let (num, ps_per) = if let Some(n) = t.strip_suffix("us") {
        (n, 1_000_000u64)
    } else if let Some(n) = t.strip_suffix("ms") {
        (n, 1_000_000_000)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1_000_000_000_000)
    } else {
        (t, 1_000_000_000_000)
    };
    num.trim()
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(ps_per))
        .map(SimDuration::from_ps)
        .ok_or_else(|| format!("--{flag} {s:?} is not a duration (a number with us, ms or s)"))
}

fn u32_of(flag: &str, v: u64, hi: u64) -> Result<u32, String> {
    u32::try_from(v).map_err(|_| format!("--{flag} {v} is out of range: allowed at most {hi}"))
}

/// The run the flags describe.
fn config(a: &FioArgs) -> Result<FioConfig, String> {
    let engine = IoEngine::parse(&a.ioengine).ok_or_else(|| {
        format!(
            "--ioengine {:?} is not an engine: allowed nvmf-rdma, nvmf-tcp, local",
            a.ioengine
        )
    })?;
    let mut c = FioConfig::new(engine);
    c.rw = RwMode::parse(&a.rw).ok_or_else(|| {
        format!(
            "--rw {:?} is not a mode: allowed read, write, randread, randwrite, rw, readwrite, randrw",
            a.rw
        )
    })?;
    c.rwmixread = a.rwmixread.min(u8::MAX as u64) as u8;
    if a.rwmixread > 100 {
        return Err(format!(
            "--rwmixread {} is out of range: allowed 0–100",
            a.rwmixread
        ));
    }
    c.bs = u32_of("bs", size_of("bs", &a.bs)?, 1 << 20)?;
    c.iodepth = u32_of("iodepth", a.iodepth, 256)?;
    c.numjobs = u32_of("numjobs", a.numjobs, 16)?;
    c.initiators = u32_of("initiators", a.initiators, 32)?;
    c.size_bytes = size_of("size", &a.size)?;
    c.link_gbps = a.link_gbps;
    c.cable_m = a.cable_m;
    c.pfc = match a.pfc.as_str() {
        "on" => true,
        "off" => false,
        v => return Err(format!("--pfc {v:?} is not on or off")),
    };
    c.digests.header = a.hdgst;
    c.digests.data = a.ddgst;
    if let Some(s) = &a.inline {
        c.inline_bytes = u32_of("inline", size_of("inline", s)?, 16_384)?;
    }
    c.limit = match a.number_ios {
        Some(n) => Limit::Ios(n),
        None => Limit::Runtime(duration_of("runtime", &a.runtime)?),
    };
    let us = |flag: &str, v: u64| {
        v.checked_mul(1_000_000)
            .map(SimDuration::from_ps)
            .ok_or_else(|| format!("--{flag} {v} is out of range: allowed 1–10000"))
    };
    if let Some(v) = a.device_read_us {
        c.device.read = us("device-read-us", v)?;
    }
    if let Some(v) = a.device_write_us {
        c.device.write = us("device-write-us", v)?;
    }
    if let Some(v) = a.device_parallel {
        c.device.parallel_units = u32_of("device-parallel", v, 4096)?;
    }
    c.seed = a.seed;
    c.threads = a.threads.unwrap_or(1);
    c.validate()?;
    Ok(c)
}

/// `rdmalab fio`.
pub fn fio(a: FioArgs) -> anyhow::Result<ExitCode> {
    let c = match config(&a) {
        Ok(c) => c,
        Err(m) => return bad("fio", m),
    };
    let rep = nvmf::run(&c, a.pcap.as_deref())?;
    if a.json {
        crate::out::println(serde_json::to_string_pretty(&rep)?)?;
    } else {
        crate::out::print(rep.text())?;
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_durations_read_as_fio_reads_them() {
        assert_eq!(size_of("bs", "4k"), Ok(4096));
        assert_eq!(size_of("bs", "128K"), Ok(131_072));
        assert_eq!(size_of("bs", "1m"), Ok(1 << 20));
        assert_eq!(size_of("size", "1g"), Ok(1 << 30));
        assert_eq!(size_of("bs", "4096"), Ok(4096));
        assert!(size_of("bs", "4x").unwrap_err().contains("--bs \"4x\""));
        assert_eq!(duration_of("runtime", "30ms"), Ok(SimDuration::from_ms(30)));
        assert_eq!(
            duration_of("runtime", "500us"),
            Ok(SimDuration::from_us(500))
        );
        assert_eq!(duration_of("runtime", "1"), Ok(SimDuration::from_secs(1)));
        assert!(duration_of("runtime", "fast").is_err());
    }
}
