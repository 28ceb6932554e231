//! `rdmalab calibrate`: measures this machine and writes a host profile.
//!
//! Five measurements with real operations, each mapped to a model constant (or kept as a check
//! of the model):
//!
//! | measurement | how | model constant |
//! |---|---|---|
//! | memcpy bandwidth | copy a 64 MiB buffer (16 MiB with `--quick`), best of several | `socket.copy.per_byte_ps` |
//! | null syscall | `getppid()` in a loop (`std::os::unix::process::parent_id`) | `control.syscall_ps`, `socket.syscall_ps` |
//! | loopback TCP round trip | 1-byte ping-pong over 127.0.0.1 | a check: the simulated TCP path is compared with it, not tuned to it |
//! | loopback TCP bulk | 256 MiB (64 MiB quick) through 127.0.0.1 | a check, reported as CPU cycles per byte |
//! | mlock per 4 KiB page | lock and unlock an anonymous 64 MiB mapping | `control.pin_per_page_ps` |
//!
//! A measurement that fails (e.g. mlock beyond `RLIMIT_MEMLOCK`) is reported with its reason,
//! and the profile keeps the default value for its constant. The written TOML holds the raw
//! samples, the derived constants and the mapping; `host::HostProfile::apply_overrides` reads
//! the `[profile]` table.

use anyhow::Context;
use comfy_table::Table;
use indicatif::{ProgressBar, ProgressStyle};
use rdmalab::host::HostProfile;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// How long and how big the measurements are.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Bytes copied per memcpy sample.
    pub memcpy_bytes: usize,
    /// Bytes sent in the loopback bulk transfer.
    pub bulk_bytes: usize,
    /// Bytes locked for the mlock measurement.
    pub mlock_bytes: usize,
}

impl Plan {
    /// The full plan (a few seconds).
    pub const FULL: Plan = Plan {
        memcpy_bytes: 64 << 20,
        bulk_bytes: 256 << 20,
        mlock_bytes: 64 << 20,
    };
    /// A quick plan for tests (well under a second).
    pub const QUICK: Plan = Plan {
        memcpy_bytes: 16 << 20,
        bulk_bytes: 64 << 20,
        mlock_bytes: 16 << 20,
    };
}

/// One measurement's outcome.
#[derive(Clone, Debug)]
pub struct Measurement {
    /// What was measured.
    pub name: &'static str,
    /// The value in `unit`, if the measurement worked.
    pub value: Result<f64, String>,
    /// Its unit.
    pub unit: &'static str,
    /// The raw samples, in nanoseconds per operation or bytes per second.
    pub samples: Vec<f64>,
}

/// Memory copy bandwidth in bytes per second (the best of 5 samples: the least disturbed).
pub fn memcpy(plan: Plan) -> Measurement {
    let src = vec![0x5au8; plan.memcpy_bytes];
    let mut dst = vec![0u8; plan.memcpy_bytes];
    dst.copy_from_slice(&src); // fault the pages in first
    let samples: Vec<f64> = (0..5)
        .map(|_| {
            let t = Instant::now();
            dst.copy_from_slice(black_box(&src));
            black_box(&dst);
            plan.memcpy_bytes as f64 / t.elapsed().as_secs_f64()
        })
        .collect();
    let best = samples.iter().copied().fold(0.0, f64::max);
    Measurement {
        name: "memcpy bandwidth",
        value: Ok(best),
        unit: "bytes/s",
        samples,
    }
}

/// A null syscall in nanoseconds (median of 5 batches of 100,000 `getppid` calls).
pub fn syscall() -> Measurement {
    let n = 100_000;
    let mut samples: Vec<f64> = (0..5)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..n {
                black_box(std::os::unix::process::parent_id());
            }
            t.elapsed().as_nanos() as f64 / n as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    Measurement {
        name: "null syscall (getppid)",
        value: Ok(samples[2]),
        unit: "ns",
        samples,
    }
}

fn connected_pair() -> std::io::Result<(TcpStream, TcpStream)> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let client = TcpStream::connect(addr)?;
    let (server, _) = listener.accept()?;
    client.set_nodelay(true)?;
    server.set_nodelay(true)?;
    Ok((client, server))
}

/// Loopback TCP round trip in nanoseconds (median of 2,000 one-byte ping-pongs).
pub fn loopback_rtt() -> Measurement {
    let run = || -> std::io::Result<Vec<f64>> {
        let (mut client, mut server) = connected_pair()?;
        let echo = std::thread::spawn(move || -> std::io::Result<()> {
            let mut b = [0u8; 1];
            for _ in 0..2_100 {
                server.read_exact(&mut b)?;
                server.write_all(&b)?;
            }
            Ok(())
        });
        let mut b = [7u8; 1];
        let mut samples = Vec::with_capacity(2_000);
        for i in 0..2_100 {
            let t = Instant::now();
            client.write_all(&b)?;
            client.read_exact(&mut b)?;
            if i >= 100 {
                samples.push(t.elapsed().as_nanos() as f64);
            }
        }
        echo.join()
            .map_err(|_| std::io::Error::other("echo thread panicked"))??;
        Ok(samples)
    };
    match run() {
        Ok(mut samples) => {
            samples.sort_by(f64::total_cmp);
            let median = samples[samples.len() / 2];
            Measurement {
                name: "loopback TCP round trip",
                value: Ok(median),
                unit: "ns",
                samples: vec![median, samples[0]],
            }
        }
        Err(e) => Measurement {
            name: "loopback TCP round trip",
            value: Err(e.to_string()),
            unit: "ns",
            samples: vec![],
        },
    }
}

/// Loopback TCP bulk throughput in bytes per second.
pub fn loopback_bulk(plan: Plan) -> Measurement {
    let run = || -> std::io::Result<f64> {
        let (mut client, mut server) = connected_pair()?;
        let total = plan.bulk_bytes;
        let sink = std::thread::spawn(move || -> std::io::Result<usize> {
            let mut buf = vec![0u8; 1 << 20];
            let mut got = 0;
            while got < total {
                let n = server.read(&mut buf)?;
                if n == 0 {
                    break;
                }
                got += n;
            }
            Ok(got)
        });
        let chunk = vec![0xa5u8; 1 << 20];
        let t = Instant::now();
        let mut sent = 0;
        while sent < total {
            client.write_all(&chunk)?;
            sent += chunk.len();
        }
        let got = sink
            .join()
            .map_err(|_| std::io::Error::other("sink thread panicked"))??;
        Ok(got as f64 / t.elapsed().as_secs_f64())
    };
    match run() {
        Ok(v) => Measurement {
            name: "loopback TCP bulk",
            value: Ok(v),
            unit: "bytes/s",
            samples: vec![v],
        },
        Err(e) => Measurement {
            name: "loopback TCP bulk",
            value: Err(e.to_string()),
            unit: "bytes/s",
            samples: vec![],
        },
    }
}

/// mlock + munlock cost per 4 KiB page in nanoseconds.
pub fn mlock(plan: Plan) -> Measurement {
    let run = || -> std::io::Result<Vec<f64>> {
        let mut map = memmap2::MmapMut::map_anon(plan.mlock_bytes)?;
        // Touch every page so the measurement is pinning, not page faults.
        for page in map.chunks_mut(4096) {
            page[0] = 1;
        }
        let pages = (plan.mlock_bytes / 4096) as f64;
        let mut samples = Vec::new();
        for _ in 0..3 {
            let t = Instant::now();
            map.lock()?;
            map.unlock()?;
            samples.push(t.elapsed().as_nanos() as f64 / pages);
        }
        Ok(samples)
    };
    match run() {
        Ok(mut samples) => {
            samples.sort_by(f64::total_cmp);
            Measurement {
                name: "mlock per 4 KiB page",
                value: Ok(samples[1]),
                unit: "ns",
                samples,
            }
        }
        Err(e) => Measurement {
            name: "mlock per 4 KiB page",
            value: Err(format!(
                "{e} (raise RLIMIT_MEMLOCK, e.g. `ulimit -l unlimited`, to measure it)"
            )),
            unit: "ns",
            samples: vec![],
        },
    }
}

/// Runs every measurement with a progress bar on stderr.
pub fn measure(plan: Plan) -> Vec<Measurement> {
    let bar = ProgressBar::new(5);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut out = Vec::new();
    let steps: [(&str, &dyn Fn() -> Measurement); 5] = [
        ("memcpy", &|| memcpy(plan)),
        ("syscall", &syscall),
        ("loopback round trip", &loopback_rtt),
        ("loopback bulk", &|| loopback_bulk(plan)),
        ("mlock", &|| mlock(plan)),
    ];
    for (name, f) in steps {
        bar.set_message(name);
        out.push(f());
        bar.inc(1);
    }
    bar.finish_and_clear();
    out
}

/// The model constants a measurement sets.
pub fn constants_of(measurement: &str) -> &'static [&'static str] {
    match measurement {
        "memcpy bandwidth" => &["socket.copy.per_byte_ps"],
        "null syscall (getppid)" => &["control.syscall_ps", "socket.syscall_ps"],
        "mlock per 4 KiB page" => &["control.pin_per_page_ps"],
        _ => &[],
    }
}

/// The model constants the measurements give, in picoseconds, with the mapping text.
pub fn derive(ms: &[Measurement]) -> (BTreeMap<String, u64>, BTreeMap<String, String>) {
    let mut profile = BTreeMap::new();
    let mut mapping = BTreeMap::new();
    let get = |name: &str| {
        ms.iter()
            .find(|m| m.name == name)
            .and_then(|m| m.value.clone().ok())
    };
    if let Some(bps) = get("memcpy bandwidth") {
        let ps = (1e12 / bps).round().max(1.0) as u64;
        profile.insert("socket.copy.per_byte_ps".into(), ps);
        mapping.insert(
            "socket.copy.per_byte_ps".into(),
            format!("1 / memcpy bandwidth ({:.2} GB/s)", bps / 1e9),
        );
    }
    if let Some(ns) = get("null syscall (getppid)") {
        let ps = (ns * 1000.0).round() as u64;
        for k in ["control.syscall_ps", "socket.syscall_ps"] {
            profile.insert(k.into(), ps);
            mapping.insert(k.into(), format!("null syscall ({ns:.0} ns)"));
        }
    }
    if let Some(ns) = get("mlock per 4 KiB page") {
        let ps = (ns * 1000.0).round() as u64;
        profile.insert("control.pin_per_page_ps".into(), ps);
        mapping.insert(
            "control.pin_per_page_ps".into(),
            format!("mlock + munlock per page ({ns:.0} ns)"),
        );
    }
    mapping.insert(
        "checks".into(),
        "the loopback round trip and bulk rate are kept as checks of the simulated TCP path, not constants".into(),
    );
    (profile, mapping)
}

/// The TOML text of a calibration.
pub fn to_toml(ms: &[Measurement]) -> Result<String, toml::ser::Error> {
    let (profile, mapping) = derive(ms);
    let mut measured = BTreeMap::new();
    let mut samples = BTreeMap::new();
    let mut failed = BTreeMap::new();
    for m in ms {
        let key = m
            .name
            .replace([' ', '(', ')', '/'], "_")
            .replace("__", "_")
            .trim_matches('_')
            .to_lowercase();
        match &m.value {
            Ok(v) => {
                measured.insert(format!("{key} [{}]", m.unit), *v);
            }
            Err(e) => {
                failed.insert(key.clone(), e.clone());
            }
        }
        samples.insert(key, m.samples.clone());
    }
    #[derive(serde::Serialize)]
    struct File {
        measured: BTreeMap<String, f64>,
        failed: BTreeMap<String, String>,
        profile: BTreeMap<String, u64>,
        mapping: BTreeMap<String, String>,
        samples: BTreeMap<String, Vec<f64>>,
    }
    let body = toml::to_string(&File {
        measured,
        failed,
        profile,
        mapping,
        samples,
    })?;
    Ok(format!(
        "# Host profile written by `rdmalab calibrate`. [profile] holds model constants in\n\
         # picoseconds (HostProfile::apply_overrides reads it); [measured] and [samples] the raw\n\
         # measurements; [mapping] which measurement gave which constant.\n\n{body}"
    ))
}

/// Checks that the derived constants are accepted by the host model.
pub fn check(profile: &BTreeMap<String, u64>) -> Result<HostProfile, String> {
    let mut p = HostProfile::default();
    p.apply_overrides(profile).map_err(|e| e.to_string())?;
    Ok(p)
}

/// A human-readable duration for the summary.
pub fn fmt_elapsed(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

#[derive(clap::Args)]
pub struct CalibrateArgs {
    /// Where to write the host profile.
    #[arg(long, default_value = "host-profile.toml")]
    out: std::path::PathBuf,
    /// Smaller measurements (under a second), for tests.
    #[arg(long)]
    quick: bool,
}

/// `rdmalab calibrate`: measure, print the table, write the profile.
pub fn calibrate_cmd(a: CalibrateArgs) -> anyhow::Result<ExitCode> {
    let started = std::time::Instant::now();
    let plan = if a.quick { Plan::QUICK } else { Plan::FULL };
    let ms = measure(plan);
    let mut t = Table::new();
    t.set_header(["measurement", "value", "model constant"]);
    let (profile, _) = derive(&ms);
    for m in &ms {
        let value = match &m.value {
            Ok(v) if m.unit == "bytes/s" => format!("{:.2} GB/s", v / 1e9),
            Ok(v) => format!("{v:.0} {}", m.unit),
            Err(e) => format!("not measured: {e}"),
        };
        let constants: Vec<String> = constants_of(m.name)
            .iter()
            .filter_map(|k| profile.get(*k).map(|v| format!("{k} = {v} ps")))
            .collect();
        let constant = if constants.is_empty() {
            if m.value.is_ok() {
                "a check of the TCP model".to_string()
            } else {
                "default kept".to_string()
            }
        } else {
            constants.join(", ")
        };
        t.add_row([m.name.to_string(), value, constant]);
    }
    outln!("{t}")?;
    check(&profile).map_err(|e| anyhow::anyhow!("the measured constants are out of range: {e}"))?;
    let text = to_toml(&ms).context("writing the profile")?;
    rdmalab::output::write_file(&a.out, text.as_bytes())?;
    outln!(
        "\nwrote {} in {}; failed measurements keep the default profile's value",
        a.out.display(),
        fmt_elapsed(started.elapsed())
    )?;
    Ok(ExitCode::SUCCESS)
}
