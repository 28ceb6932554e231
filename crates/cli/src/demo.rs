//! `rdmalab demo`: a one-switch incast with its ideal time beside it, the quickest look at the
//! fabric model from the command line.

use crate::bad_input;
use anyhow::Context;
use comfy_table::Table;
use rdmalab::demo::{DemoError, DemoParams, ideal_time, run_demo};
use rdmalab::units::{Bandwidth, ByteLen};
use std::process::ExitCode;

#[derive(clap::Args, Default)]
pub struct DemoArgs {
    /// Senders in the incast (1–64).
    #[arg(long, default_value_t = 4)]
    senders: u64,
    /// Payload each sender sends, in KiB (1–65536).
    #[arg(long, default_value_t = 4096)]
    kib: u64,
    /// Link rate in Gb/s (1–1600).
    #[arg(long, default_value_t = 100)]
    gbps: u64,
    /// Cable length in metres (0–100000).
    #[arg(long, default_value_t = 3)]
    cable_m: u64,
    /// Shared switch buffer in KiB (64–1048576).
    #[arg(long, default_value_t = 1024)]
    buffer_kib: u64,
    /// Seed for every random draw.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

pub fn demo(a: DemoArgs) -> anyhow::Result<ExitCode> {
    let bad = |msg: String| bad_input::bad("demo", msg);
    if !(1..=1600).contains(&a.gbps) {
        return bad(format!(
            "--gbps {} is out of range: allowed 1..=1600",
            a.gbps
        ));
    }
    if !(64..=1 << 20).contains(&a.buffer_kib) {
        return bad(format!(
            "--buffer-kib {} is out of range: allowed 64..=1048576",
            a.buffer_kib
        ));
    }
    let p = DemoParams {
        senders: a.senders,
        bytes_per_sender: a.kib.saturating_mul(1024),
        link: Bandwidth::gbps(a.gbps),
        cable_m: a.cable_m,
        buffer_bytes: a.buffer_kib * 1024,
        seed: a.seed,
    };
    let rows = match run_demo(&p) {
        Ok(rows) => rows,
        Err(DemoError::Config(e)) => return bad(e.to_string()),
        Err(e) => return Err(e).context("demo run failed"),
    };
    outln!(
        "{}→1 incast through one switch: {} per sender, {} links, {} m cables, {} shared buffer, seed {}",
        p.senders,
        ByteLen::new(p.bytes_per_sender),
        p.link,
        p.cable_m,
        ByteLen::new(p.buffer_bytes),
        p.seed
    )?;
    outln!(
        "ideal: all payload through the receiver's link at line rate takes {}\n",
        ideal_time(&p)
    )?;
    let mut t = Table::new();
    t.set_header([
        "switch",
        "delivered",
        "flows done",
        "last byte at",
        "drops",
        "PAUSE / RESUME",
        "ECN marks",
        "peak buffer",
        "events",
        "wall",
    ]);
    for r in &rows {
        t.add_row([
            r.variant.to_string(),
            format!(
                "{:.1}%",
                100.0 * r.delivered_bytes as f64 / r.sent_bytes as f64
            ),
            format!("{}/{}", r.flows_complete, p.senders),
            r.last_arrival.since_start().to_string(),
            r.drops.to_string(),
            format!("{} / {}", r.pauses, r.resumes),
            r.ecn_marks.to_string(),
            ByteLen::new(r.peak_buffer_bytes).to_string(),
            r.events.to_string(),
            format!("{:.1} ms", r.wall.as_secs_f64() * 1e3),
        ]);
    }
    outln!("{t}")?;
    outln!(
        "\nDrop-tail loses frames once the buffer fills; nothing retransmits them yet (transports come next).\n\
         PFC pauses the senders instead: nothing is lost and the receiver's link stays busy.\n\
         ECN marks show where DCQCN would slow the senders; the congestion draw shows lesson ⑤'s PAUSEs."
    )?;
    Ok(ExitCode::SUCCESS)
}
