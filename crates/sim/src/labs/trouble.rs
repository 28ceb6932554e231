//! The troubleshooting lab: seven broken setups, each showing what an operator sees first,
//! the application's symptom and the NIC counters (named as mlx5 and ethtool name them),
//! before the cause.
//!
//! - `rnr`: the receiver posts four receives for sixteen SENDs, with `rnr_retry = 3`.
//! - `peer_gone`: the receiver destroys its QP in the middle of a stream of WRITEs.
//! - `pfc_priority`: a stream through a switch whose egress overflows now and then (lesson
//!   ⑤'s drawn overflows), PFC configured on priority 4 while RoCE travels in priority 3 (a
//!   DSCP/PCP trust or priority-map mismatch): the overflows are drops instead of pauses.
//! - `mtu`: the QPs' path MTU is 4096 while the switch ports' MTU is 1500: small WRITEs pass,
//!   full-size packets are dropped.
//! - `cnp_class`: a 4→1 incast under DCQCN while the CNPs leave in the lossy default class
//!   (priority 0), which bulk traffic toward the senders keeps full: CNPs are dropped or
//!   arrive late, DCQCN slows the senders too little, and PFC pauses instead. The same run
//!   with CNPs in their own strict-priority class (6) is the reference.
//! - `gid_v1`: the requester's `sgid_index` names its RoCE v1 entry in a routed (layer-3)
//!   fabric: its frames are not IP, the first switch drops them, the requester times out.
//! - `gid_ipv6`: the requester's `sgid_index` names its link-local IPv6 entry while the peer
//!   advertises its IPv4-mapped one: `modify_qp` to RTR fails with EINVAL on both sides.
//!
//! The NIC counters come from the transport's own counts (requester and responder, summed
//! over every QP the host has had) and the fabric's port statistics, named as mlx5's
//! `hw_counters` and `ethtool -S` name them; `req_transport_retries_exceeded` and
//! `req_rnr_retries_exceeded` count the error completions the application polled. The
//! timeout and RNR counters count every event, the one that exhausted the retries included.
//! The `switch` rows are rdmalab's own names (switch vendors name these differently).

use super::{Counter, LINK_GBPS, LabError, LabResult, PRIO, Params, Verdict, lab_pfc};
use crate::world::{Connected, Endpoint, RcOptions, World};
use engine::Budget;
use fabric::{EcnConfig, FabricConfig, LinkConfig, PfcConfig, Scheduling, Topology};
use serde::{Serialize, Serializer};
use transport::roce::dcqcn::DcqcnParams;
use units::{Bandwidth, Priority, Probability, SimDuration, SimTime};
use verbs::{
    AccessFlags, Errno, WcStatus,
    wr::{RecvWr, SendWr, Sge},
};

/// What the application saw, and the facts of the case that lead to its cause. Every case
/// has a `status` and a `symptom`; the other keys belong to one case each and are absent
/// from the others' JSON.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TroubleVerdict {
    /// `cnp_class`: CNPs the senders' reaction points handled (`rp_cnp_handled`, summed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cnp_handled: Option<u64>,
    /// `cnp_class`: CNPs sent and never handled (`cnp_sent` less `cnp_handled`, at least 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cnp_lost: Option<u64>,
    /// `cnp_class`: CNPs the receiver's notification point sent (`np_cnp_sent`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cnp_sent: Option<u64>,
    /// `gid_ipv6`, when RTR failed: the destination GID it met (the responder's entry, its
    /// IPv4-mapped address), as a GID table prints it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dgid: Option<String>,
    /// `gid_ipv6`, when RTR failed: the verbs error's English text (what `rdmalab lab`
    /// prints; a page words it itself).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `gid_ipv6`, when RTR failed: the call that failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_call: Option<&'static str>,
    /// `cnp_class`: PAUSE frames the switch sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pauses: Option<u64>,
    /// `cnp_class`: PAUSE frames the switch sent in the reference run, CNPs in their strict
    /// priority 6.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pauses_strict_cnp_class: Option<u64>,
    /// `gid_v1`: request packets the responder saw, taken in order or refused as out of
    /// sequence or duplicate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub responder_packets: Option<u64>,
    /// `gid_ipv6`, when RTR failed: the requester's source GID (its link-local IPv6 entry).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sgid: Option<String>,
    /// `gid_ipv6`, when RTR failed: the requester's GID index, the entry `sgid` is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sgid_index: Option<u8>,
    /// The first error the application met, or success.
    pub status: TroubleStatus,
    /// What the application saw, the case's first clue.
    pub symptom: Symptom,
}

/// The first error the application met: a completion's status, or the errno of a verbs call
/// when the connection never came up. Serialized as its name alone: verbs.h's without
/// `IBV_WC_` (`RETRY_EXC_ERR`), errno.h's (`EINVAL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum TroubleStatus {
    /// The first error completion's status, without verbs.h's `IBV_WC_` (`SUCCESS` when every
    /// completion succeeded).
    #[serde(serialize_with = "wc_name")]
    Completion(WcStatus),
    /// The failed call's errno.
    #[serde(serialize_with = "errno_name")]
    Errno(Errno),
}

fn wc_name<S: Serializer>(st: &WcStatus, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(st.const_name().trim_start_matches("IBV_WC_"))
}

fn errno_name<S: Serializer>(e: &Errno, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(e.name())
}

/// The application's symptom, what an operator hears first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Symptom {
    /// `rnr`: the first SENDs complete, then one fails and every one after it is flushed.
    SendsFail,
    /// `peer_gone`, `gid_v1`: WRITEs stop completing, then fail after a long wait.
    WritesHangThenFail,
    /// `pfc_priority`: every WRITE completes, but far slower than the link.
    SlowStream,
    /// `mtu`: small WRITEs complete; a large one hangs, then fails.
    LargeWritesFail,
    /// `cnp_class`: every WRITE completes while the switch keeps sending PAUSE frames.
    PausesMultiply,
    /// `gid_ipv6`: INIT→RTR fails and not one packet is sent.
    ConnectionNeverUp,
}

fn star(hosts: u64, cfg: FabricConfig) -> Result<World, LabError> {
    let link = LinkConfig::new(Bandwidth::gbps(LINK_GBPS), 3);
    let topo = Topology::star(hosts, link).map_err(LabError::sim)?;
    World::new(&topo, cfg, Default::default(), Default::default()).map_err(LabError::sim)
}

/// A buffer of `len` bytes on `e`'s host, registered (timed, as `ibv_reg_mr`) for local and
/// remote writes: (address, lkey, rkey).
fn buffer(w: &mut World, e: &Endpoint, len: u64) -> Result<(u64, u32, u32), LabError> {
    let va = w
        .verbs(e.host)
        .memory_mut()
        .alloc(len)
        .map_err(LabError::sim)?;
    let mr = w
        .reg_mr(
            e.host,
            e.pd,
            va,
            len,
            AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
        )
        .map_err(LabError::sim)?;
    Ok((va, mr.lkey, mr.rkey))
}

/// Connects an RC pair from host `a` to host `b` with a registered buffer per host as long
/// as the longest of `sizes`, for [`World::post_writes`].
fn connect_for(
    w: &mut World,
    a: u32,
    b: u32,
    o: &RcOptions,
    sizes: &[u64],
) -> Result<Connected, LabError> {
    let most = sizes.iter().copied().max().unwrap_or(0).max(1);
    w.connect_rc_buffered(a, b, o, most).map_err(LabError::sim)
}

/// Posts signaled WRITEs of `sizes` bytes (wr_id = index) from `c`'s buffer on its first
/// host to the one on its second.
fn post_writes(w: &mut World, c: &Connected, sizes: &[u64]) -> Result<(), LabError> {
    w.post_writes(c, sizes, true).map_err(LabError::sim)
}

/// What the application saw on the sending side.
#[derive(Default)]
struct Seen {
    ok: u64,
    err: u64,
    ok_bytes: u64,
    first_error: Option<WcStatus>,
    retry_exc: u64,
    rnr_exc: u64,
}

/// Runs until `want` completions arrived on `e`'s CQ (or `limit` passes), polling every
/// `step`.
fn collect(
    w: &mut World,
    e: &Endpoint,
    want: u64,
    sizes: &[u64],
    step: SimDuration,
    limit: SimTime,
) -> Result<Seen, LabError> {
    let mut seen = Seen::default();
    while seen.ok + seen.err < want && w.now() < limit {
        let t = (w.now() + step).min(limit);
        w.run_until(t, &Budget::default()).map_err(LabError::sim)?;
        for wc in w.poll_cq(e.host, e.cq, 64).map_err(LabError::sim)? {
            if wc.status == WcStatus::Success {
                seen.ok += 1;
                seen.ok_bytes += sizes.get(wc.wr_id as usize).copied().unwrap_or(0);
            } else {
                seen.err += 1;
                seen.first_error.get_or_insert(wc.status);
                match wc.status {
                    WcStatus::RetryExcErr => seen.retry_exc += 1,
                    WcStatus::RnrRetryExcErr => seen.rnr_exc += 1,
                    _ => {}
                }
            }
        }
    }
    Ok(seen)
}

/// The counters of the hosts of `eps` (every QP of each host summed), then the switch's.
fn counters(w: &World, eps: &[Endpoint], seen: &[(u32, &Seen)]) -> Vec<Counter> {
    let mut hosts: Vec<u32> = eps.iter().map(|e| e.host.get()).collect();
    hosts.sort_unstable();
    hosts.dedup();
    counters_of(w, &hosts, eps, seen)
}

/// [`counters`] of `hosts` (in that order), whether or not they have QPs in `eps`.
fn counters_of(w: &World, hosts: &[u32], eps: &[Endpoint], seen: &[(u32, &Seen)]) -> Vec<Counter> {
    let now = w.now();
    let mut out = Vec::new();
    for &h in hosts {
        let host = w.host(h);
        let qps: Vec<_> = eps
            .iter()
            .filter(|e| e.host.get() == h)
            .map(|e| e.qpn)
            .collect();
        let rc = host.roce_counters();
        let mut c = [
            rc.packet_seq_err,
            rc.rnr_nak_retry_err,
            rc.local_ack_timeout_err,
            rc.out_of_sequence,
            rc.duplicate_request,
            rc.out_of_buffer,
            0,
            0,
            0,
            0,
            0,
        ];
        for &q in &qps {
            if let Some((marked, cnps)) = w.np_counters(h, q) {
                c[6] += marked;
                c[7] += cnps;
            }
            if let Some((.., rp)) = w.dcqcn_state(h, q) {
                c[8] += rp.cnps;
            }
        }
        for (sh, s) in seen {
            if *sh == h {
                c[9] += s.retry_exc;
                c[10] += s.rnr_exc;
            }
        }
        let name = format!("h{h}");
        let names = [
            "packet_seq_err",
            "rnr_nak_retry_err",
            "local_ack_timeout_err",
            "out_of_sequence",
            "duplicate_request",
            "out_of_buffer",
            "np_ecn_marked_roce_packets",
            "np_cnp_sent",
            "rp_cnp_handled",
            "req_transport_retries_exceeded",
            "req_rnr_retries_exceeded",
        ];
        for (n, v) in names.iter().zip(c) {
            out.push(Counter {
                host: name.clone(),
                name: (*n).to_string(),
                value: v,
            });
        }
        // The host port's PFC counters (ethtool -S names; durations in µs).
        let node = host.node;
        if let Some((_, port, _, st)) = w.fabric().ports().find(|p| p.0 == node) {
            let (rx, tx) = w.fabric().pause_time(node, port, PRIO, now);
            for (n, v) in [
                (format!("rx_prio{PRIO}_pause"), st.pfc_received),
                (format!("rx_prio{PRIO}_pause_duration"), rx / 1_000_000),
                // PAUSE and RESUME alike, as `rx_prio{PRIO}_pause` counts them.
                (
                    format!("tx_prio{PRIO}_pause"),
                    st.pauses_sent + st.resumes_sent,
                ),
                (format!("tx_prio{PRIO}_pause_duration"), tx / 1_000_000),
            ] {
                out.push(Counter {
                    host: name.clone(),
                    name: n,
                    value: v,
                });
            }
        }
    }
    let f = w.fabric().counters();
    for (n, v) in [
        (
            "egress_discards",
            f.drops_buffer + f.drops_lossless_overflow + f.drops_congestion,
        ),
        ("mtu_discards", f.drops_oversize),
        ("ecn_marked", f.ecn_marks),
        ("pause_frames_sent", f.pauses_sent),
    ] {
        out.push(Counter {
            host: "switch".to_string(),
            name: n.to_string(),
            value: v,
        });
    }
    out
}

/// Notes the figures of what the application saw and returns the verdict's status and
/// symptom, for the case to add its own keys to.
fn finish(
    r: &mut LabResult,
    seen: &Seen,
    elapsed: SimDuration,
    symptom: Symptom,
) -> TroubleVerdict {
    let gbps = if elapsed.as_ps() > 0 {
        seen.ok_bytes as f64 * 8.0 / elapsed.as_ps() as f64 * 1e3
    } else {
        0.0
    };
    r.figure("goodput_gbps", Some(gbps), "Gb/s");
    r.figure("completions_ok", Some(seen.ok as f64), "");
    r.figure("completions_err", Some(seen.err as f64), "");
    TroubleVerdict {
        cnp_handled: None,
        cnp_lost: None,
        cnp_sent: None,
        dgid: None,
        error: None,
        failed_call: None,
        pauses: None,
        pauses_strict_cnp_class: None,
        responder_packets: None,
        sgid: None,
        sgid_index: None,
        status: TroubleStatus::Completion(seen.first_error.unwrap_or(WcStatus::Success)),
        symptom,
    }
}

pub(crate) fn run(p: &Params) -> Result<LabResult, LabError> {
    let mut r = LabResult::new("trouble", p);
    r.events = Some(match p.choice("case") {
        "rnr" => rnr(&mut r)?,
        "peer_gone" => peer_gone(&mut r)?,
        "pfc_priority" => pfc_priority(&mut r)?,
        "cnp_class" => cnp_class(&mut r)?,
        "gid_v1" => gid_v1(&mut r)?,
        "gid_ipv6" => gid_ipv6(&mut r)?,
        _ => mtu(&mut r)?,
    });
    Ok(r)
}

/// Sixteen 64 KiB SENDs against four posted receives, `rnr_retry = 3`.
fn rnr(r: &mut LabResult) -> Result<u64, LabError> {
    const MSG: u64 = 64 << 10;
    let mut w = star(2, FabricConfig::default())?;
    let o = RcOptions {
        rnr_retry: 3,
        // The shortest RNR timer, 0.01 ms (IBTA table; encoding 1).
        min_rnr_timer: 1,
        ..RcOptions::default()
    };
    let (a, b) = w.connect_rc(0, 1, &o).map_err(LabError::sim)?;
    let (sva, slkey, _) = buffer(&mut w, &a, MSG)?;
    let (rva, rlkey, _) = buffer(&mut w, &b, MSG * 4)?;
    let recvs: Vec<RecvWr> = (0..4)
        .map(|i| {
            RecvWr::new(
                i,
                vec![Sge {
                    addr: rva + i * MSG,
                    length: MSG as u32,
                    lkey: rlkey,
                }],
            )
        })
        .collect();
    w.post_recv(b.host, b.qpn, &recvs).map_err(LabError::sim)?;
    let sends: Vec<SendWr> = (0..16)
        .map(|i| {
            SendWr::send(
                i,
                vec![Sge {
                    addr: sva,
                    length: MSG as u32,
                    lkey: slkey,
                }],
            )
            .signaled()
        })
        .collect();
    w.post_send(a.host, a.qpn, &sends).map_err(LabError::sim)?;
    let start = w.now();
    let sizes = vec![MSG; 16];
    let seen = collect(
        &mut w,
        &a,
        16,
        &sizes,
        SimDuration::from_us(20),
        start + SimDuration::from_ms(20),
    )?;
    r.counters = counters(&w, &[a, b], &[(a.host.get(), &seen)]);
    let v = finish(
        r,
        &seen,
        w.now().saturating_duration_since(start),
        Symptom::SendsFail,
    );
    r.verdict = Verdict::Trouble(v);
    Ok(w.events_processed())
}

/// WRITEs of 64 KiB; the receiver destroys its QP after 100 µs.
fn peer_gone(r: &mut LabResult) -> Result<u64, LabError> {
    const MSG: u64 = 64 << 10;
    const COUNT: u64 = 64;
    let mut w = star(2, FabricConfig::default())?;
    // A 4.2 ms local ACK timeout (4.096 µs × 2^10), seven retries.
    let o = RcOptions {
        timeout: 10,
        retry_cnt: 7,
        ..RcOptions::default()
    };
    let sizes = [MSG; COUNT as usize];
    let c = connect_for(&mut w, 0, 1, &o, &sizes)?;
    let (a, b) = c.ends;
    post_writes(&mut w, &c, &sizes)?;
    let start = w.now();
    let gone = start + SimDuration::from_us(100);
    w.run_until(gone, &Budget::default())
        .map_err(LabError::sim)?;
    // What completed before the peer vanished counts too.
    let mut early = Seen::default();
    for wc in w.poll_cq(a.host, a.cq, 1024).map_err(LabError::sim)? {
        if wc.status == WcStatus::Success {
            early.ok += 1;
            early.ok_bytes += MSG;
        }
    }
    w.vanish_qp(b.host, b.qpn).map_err(LabError::sim)?;
    let mut seen = collect(
        &mut w,
        &a,
        COUNT - early.ok,
        &vec![MSG; COUNT as usize],
        SimDuration::from_us(500),
        start + SimDuration::from_ms(60),
    )?;
    seen.ok += early.ok;
    seen.ok_bytes += early.ok_bytes;
    r.counters = counters(&w, &[a, b], &[(a.host.get(), &seen)]);
    let v = finish(
        r,
        &seen,
        w.now().saturating_duration_since(start),
        Symptom::WritesHangThenFail,
    );
    r.verdict = Verdict::Trouble(v);
    Ok(w.events_processed())
}

/// A stream of 1 MiB WRITEs through a switch whose egress also takes bursts of other
/// traffic (lesson ⑤'s drawn overflows, 2% of arriving frames); PFC is configured on
/// priority 4 while RoCE travels in priority 3, so the switch drops where it should pause.
fn pfc_priority(r: &mut LabResult) -> Result<u64, LabError> {
    const CHUNK: u64 = 1 << 20;
    const COUNT: u64 = 24;
    let mut cfg = FabricConfig::default();
    let right = lab_pfc();
    cfg.switch.pfc = Some(PfcConfig::new(1 << 4, right.xoff_bytes, right.xon_bytes));
    // A lab choice: often enough that a 24 MiB stream meets several overflows, as lesson ⑤'s
    // 1% draw does for its shorter one.
    cfg.switch.congestion_drop = Probability::from_ratio(1, 50);
    let mut w = star(2, cfg)?;
    let sizes = [CHUNK; COUNT as usize];
    let c = connect_for(&mut w, 0, 1, &RcOptions::default(), &sizes)?;
    let (a, b) = c.ends;
    post_writes(&mut w, &c, &sizes)?;
    let start = w.now();
    let seen = collect(
        &mut w,
        &a,
        COUNT,
        &vec![CHUNK; COUNT as usize],
        SimDuration::from_us(50),
        start + SimDuration::from_ms(3),
    )?;
    r.counters = counters(&w, &[a, b], &[(a.host.get(), &seen)]);
    let v = finish(
        r,
        &seen,
        w.now().saturating_duration_since(start),
        Symptom::SlowStream,
    );
    r.verdict = Verdict::Trouble(v);
    Ok(w.events_processed())
}

/// Four 1 KiB WRITEs, then one of 256 KiB, with a 1500-byte MTU on the switch.
fn mtu(r: &mut LabResult) -> Result<u64, LabError> {
    const BIG: u64 = 256 << 10;
    const SMALL: u64 = 1 << 10;
    let mut cfg = FabricConfig::default();
    cfg.switch.mtu_bytes = Some(1_500);
    let mut w = star(2, cfg)?;
    let o = RcOptions {
        timeout: 10,
        retry_cnt: 7,
        ..RcOptions::default()
    };
    let sizes = [SMALL, SMALL, SMALL, SMALL, BIG];
    let c = connect_for(&mut w, 0, 1, &o, &sizes)?;
    let (a, b) = c.ends;
    post_writes(&mut w, &c, &sizes)?;
    let start = w.now();
    let seen = collect(
        &mut w,
        &a,
        sizes.len() as u64,
        &sizes,
        SimDuration::from_us(500),
        start + SimDuration::from_ms(60),
    )?;
    r.counters = counters(&w, &[a, b], &[(a.host.get(), &seen)]);
    let v = finish(
        r,
        &seen,
        w.now().saturating_duration_since(start),
        Symptom::LargeWritesFail,
    );
    r.verdict = Verdict::Trouble(v);
    Ok(w.events_processed())
}

/// The switch's discards of priorities `prios` (rdmalab's names; a switch shows them per
/// traffic class, e.g. SONiC's `queuestat`), and of frames that are not IP.
fn switch_rows(w: &World, prios: &[usize], non_ip: bool) -> Vec<Counter> {
    let f = w.fabric().counters();
    let mut rows: Vec<(String, u64)> = prios
        .iter()
        .map(|&p| (format!("prio{p}_discards"), f.drops_by_priority[p]))
        .collect();
    if non_ip {
        rows.push(("non_ip_discards".to_string(), f.drops_not_ip));
    }
    rows.into_iter()
        .map(|(name, value)| Counter {
            host: "switch".to_string(),
            name,
            value,
        })
        .collect()
}

/// Incast senders in the `cnp_class` case; the receiver is host `SENDERS`.
const SENDERS: u32 = 4;
/// Bulk senders per incast sender, each at line rate toward it in priority 0: two of them
/// overload the switch port toward the sender two to one, so that port's priority-0 queue
/// stays full and drops half of what arrives.
const BULK_PER_SENDER: u32 = 2;
/// How long the bulk traffic runs before the incast: long enough to fill a 2 MiB lossy
/// queue at the 100 Gb/s it gains per port (about 170 µs).
const BULK_WARM_UP: SimDuration = SimDuration::from_us(400);
/// How long the `cnp_class` incast runs.
const CNP_RUN: SimDuration = SimDuration::from_ms(2);

/// A finished `cnp_class` run: the world, each sender's (requester, responder) pair and
/// what each sender's application saw.
type CnpRun = (World, Vec<(Endpoint, Endpoint)>, Vec<Seen>);

/// One `cnp_class` run: four senders WRITE to one receiver under DCQCN (NVIDIA's
/// parameters) with the incast lab's ECN marking and the labs' PFC, while unresponsive bulk
/// traffic in the lossy default class (priority 0) fills the switch ports toward the senders;
/// CNPs travel in `cnp`. Assumption: the bulk traffic is raw line-rate flows, standing for the
/// many TCP flows that keep a lossy class's queue full on a busy fabric.
fn cnp_incast(cnp: Priority) -> Result<CnpRun, LabError> {
    const CHUNK: u64 = 64 << 10;
    let mut cfg = FabricConfig::default();
    cfg.switch.ecn = Some(EcnConfig {
        priorities: 1 << PRIO,
        kmin_bytes: 10_000,
        kmax_bytes: 100_000,
        pmax: Probability::from_ratio(1, 100),
        on_dequeue: true,
    });
    cfg.switch.pfc = Some(lab_pfc());
    // CNPs' priority 6 strict, the rest DWRR: the NVIDIA/Cumulus RoCE default.
    cfg.switch.scheduling = Scheduling::roce_default();
    let hosts = SENDERS + 1 + SENDERS * BULK_PER_SENDER;
    let mut w = star(hosts as u64, cfg)?;
    w.set_dcqcn(Some(DcqcnParams::NVIDIA));
    w.set_cnp_priority(cnp);
    let mut conns = Vec::new();
    for s in 0..SENDERS {
        conns.push(connect_for(
            &mut w,
            s,
            SENDERS,
            &RcOptions::default(),
            &[CHUNK],
        )?);
    }
    let pairs: Vec<(Endpoint, Endpoint)> = conns.iter().map(|c| c.ends).collect();
    let line_bytes = LINK_GBPS * CNP_RUN.as_ps() / 8_000;
    let bulk_start = w.now();
    for s in 0..SENDERS {
        for k in 0..BULK_PER_SENDER {
            let src = SENDERS + 1 + s * BULK_PER_SENDER + k;
            // Enough for the warm-up and the run.
            w.add_raw_flow(src, s, line_bytes * 2, 4096, Priority::of(0), bulk_start)
                .map_err(LabError::sim)?;
        }
    }
    // The bulk traffic has filled the priority-0 queues before the incast starts.
    w.run_until(bulk_start + BULK_WARM_UP, &Budget::default())
        .map_err(LabError::sim)?;
    let start = w.now();
    // More WRITEs than one sender could finish at line rate in the run.
    let count = (line_bytes / CHUNK + 2) as usize;
    for c in &conns {
        post_writes(&mut w, c, &vec![CHUNK; count])?;
    }
    let mut seen: Vec<Seen> = (0..SENDERS).map(|_| Seen::default()).collect();
    let end = start + CNP_RUN;
    while w.now() < end {
        let t = (w.now() + SimDuration::from_us(50)).min(end);
        w.run_until(t, &Budget::default()).map_err(LabError::sim)?;
        for ((a, _), sn) in pairs.iter().zip(seen.iter_mut()) {
            for wc in w.poll_cq(a.host, a.cq, 256).map_err(LabError::sim)? {
                if wc.status == WcStatus::Success {
                    sn.ok += 1;
                    sn.ok_bytes += CHUNK;
                } else {
                    sn.err += 1;
                    sn.first_error.get_or_insert(wc.status);
                }
            }
        }
    }
    Ok((w, pairs, seen))
}

/// CNPs in the lossy default class under an incast; the reference run puts them in
/// priority 6, strict, as the switch expects.
fn cnp_class(r: &mut LabResult) -> Result<u64, LabError> {
    let (right, ..) = cnp_incast(Priority::of(6))?;
    let right_pauses = right.fabric().counters().pauses_sent;
    let (w, pairs, seen) = cnp_incast(Priority::of(0))?;
    let eps: Vec<Endpoint> = pairs.iter().flat_map(|(a, b)| [*a, *b]).collect();
    let all = Seen {
        ok: seen.iter().map(|s| s.ok).sum(),
        err: seen.iter().map(|s| s.err).sum(),
        ok_bytes: seen.iter().map(|s| s.ok_bytes).sum(),
        first_error: seen.iter().find_map(|s| s.first_error),
        ..Seen::default()
    };
    let with: Vec<(u32, &Seen)> = pairs.iter().map(|(a, _)| a.host.get()).zip(&seen).collect();
    r.counters = counters(&w, &eps, &with);
    r.counters.extend(switch_rows(&w, &[0, PRIO, 6], false));
    let sum = |name: &str| -> u64 {
        r.counters
            .iter()
            .filter(|c| c.name == name)
            .map(|c| c.value)
            .sum()
    };
    let (sent, handled) = (sum("np_cnp_sent"), sum("rp_cnp_handled"));
    let v = finish(r, &all, CNP_RUN, Symptom::PausesMultiply);
    r.verdict = Verdict::Trouble(TroubleVerdict {
        cnp_handled: Some(handled),
        cnp_lost: Some(sent.saturating_sub(handled)),
        cnp_sent: Some(sent),
        pauses: Some(w.fabric().counters().pauses_sent),
        pauses_strict_cnp_class: Some(right_pauses),
        ..v
    });
    Ok(w.events_processed() + right.events_processed())
}

/// The GID tables both hosts of `w` get: Linux's layout for one IPv4 address.
fn linux_gids(w: &mut World) {
    for h in 0..2 {
        let t = w.linux_gid_table(h);
        w.set_gid_table(h, t);
    }
}

/// A routed fabric; the requester uses GID index 2 (its IPv4-mapped RoCE v1 entry), the
/// responder index 3 (RoCE v2): RTR succeeds, the frames are not IP.
fn gid_v1(r: &mut LabResult) -> Result<u64, LabError> {
    const MSG: u64 = 64 << 10;
    let mut cfg = FabricConfig::default();
    cfg.switch.routed = true;
    // The hosts' interfaces carry RoCE v1 at a 4096-byte path MTU: its GRH (40 B) is longer
    // than IPv4 + UDP (28 B), so a full WRITE FIRST is 40 + 12 BTH + 16 RETH + 4096 + 4 ICRC
    // bytes after the Ethernet header (research/verbs-spec.md §6). Every frame then reaches
    // the switch, which is where this case's frames are lost.
    cfg.mtu_bytes = 40 + 12 + 16 + 4_096 + 4;
    let mut w = star(2, cfg)?;
    linux_gids(&mut w);
    w.use_sgid_index(0, 2);
    w.use_sgid_index(1, 3);
    let o = RcOptions {
        timeout: 10,
        retry_cnt: 7,
        ..RcOptions::default()
    };
    let sizes = [MSG; 4];
    let c = connect_for(&mut w, 0, 1, &o, &sizes)?;
    let (a, b) = c.ends;
    post_writes(&mut w, &c, &sizes)?;
    let start = w.now();
    let seen = collect(
        &mut w,
        &a,
        sizes.len() as u64,
        &sizes,
        SimDuration::from_us(500),
        start + SimDuration::from_ms(60),
    )?;
    r.counters = counters(&w, &[a, b], &[(a.host.get(), &seen)]);
    r.counters.extend(switch_rows(&w, &[], true));
    let v = finish(
        r,
        &seen,
        w.now().saturating_duration_since(start),
        Symptom::WritesHangThenFail,
    );
    // Request packets the responder saw: those taken in order (its expected PSN started at
    // 0) and those it refused as out of sequence or duplicate.
    let h = w.host(b.host);
    let taken = h.responder_expected_psn(b.qpn).unwrap_or(0) as u64;
    let refused = h
        .responder_counters(b.qpn)
        .map_or(0, |c| c.out_of_sequence + c.duplicates);
    r.verdict = Verdict::Trouble(TroubleVerdict {
        responder_packets: Some(taken + refused),
        ..v
    });
    Ok(w.events_processed())
}

/// The requester uses GID index 1 (link-local IPv6, RoCE v2), the responder index 3
/// (IPv4-mapped): each side's RTR meets a destination GID of the other family.
fn gid_ipv6(r: &mut LabResult) -> Result<u64, LabError> {
    let mut cfg = FabricConfig::default();
    cfg.switch.routed = true;
    let mut w = star(2, cfg)?;
    linux_gids(&mut w);
    w.use_sgid_index(0, 1);
    w.use_sgid_index(1, 3);
    let start = w.now();
    let err = match w.connect_rc(0, 1, &RcOptions::default()) {
        Ok(_) => None,
        Err(crate::world::ConnectError {
            source: crate::world::WorldError::Verbs(e),
            ..
        }) => Some(e),
        Err(e) => return Err(LabError::sim(e.source)),
    };
    r.counters = counters_of(&w, &[0, 1], &[], &[]);
    r.counters.extend(switch_rows(&w, &[], true));
    let seen = Seen::default();
    let mut v = finish(
        r,
        &seen,
        w.now().saturating_duration_since(start),
        Symptom::ConnectionNeverUp,
    );
    if let Some(e) = err {
        // The two GIDs that met, as values a page can put in its own language's sentence
        // (the error's English text is what `rdmalab lab` prints for it).
        let (sgid, dgid) = (w.linux_gid_table(0), w.linux_gid_table(1));
        v = TroubleVerdict {
            dgid: Some(dgid.get(3).map(|g| g.gid.to_string()).unwrap_or_default()),
            error: Some(e.to_string()),
            failed_call: Some("ibv_modify_qp INIT→RTR"),
            sgid: Some(sgid.get(1).map(|g| g.gid.to_string()).unwrap_or_default()),
            sgid_index: Some(1),
            status: TroubleStatus::Errno(e.errno()),
            ..v
        };
    }
    r.verdict = Verdict::Trouble(v);
    Ok(w.events_processed())
}
