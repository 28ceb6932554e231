//! The packet view of a stream run (issue 19, item 2): one path's frames in a bounded window
//! around its first drop, each with its fate (delivered, dropped at the switch), the PFC
//! frames on the links, the switch's queue depth, and the story of that drop read off the
//! frames (the dropped PSN or TCP sequence number, the NAK or SACK that reported it, the range
//! the sender resent).
//!
//! A pure function of what the run recorded ([`view`]): the frames hosts sent, with their
//! headers (`World::log_frames`), and the fabric's packet, drop and PAUSE records. Both inputs
//! are bounded by the caller ([`FRAMES_KEPT`], [`RECORDS_KEPT`]) and the window by
//! [`MAX_FRAMES`], [`MAX_PAUSES`] and [`MAX_QUEUE_SAMPLES`], so the answer has the same size
//! bound whatever the run's length. Same inputs, same view: nothing here depends on a clock
//! or a hash map's order.
//!
//! # JSON (`POST /api/packets`, one per path)
//! `{path, window_start_ns, window_end_ns, frames_seen, frames_truncated, frames: [Frame],
//! pauses: [{t_ns, at, resume, quanta}], queue: [[t_ns, bytes]], queue_max_bytes, story}`.
//! A [`Frame`]: `{uid, t_ns, from, kind, psn?, seq?, ack?, len, resend, dropped_ns?,
//! delivered_ns?, drop_reason?, sack?}`; `from` is `local`, `remote` or `cross` (another
//! host's cross traffic), `kind` one of `data`, `ack`, `nak`, `sack`, `cnp`, `cross`.
//! [`Story`]: `{drop: {t_ns, psn?, seq?, reason}, report?: {t_ns, kind: nak|sack|dupack, psn?,
//! ack?}, resend?: {t_ns, from, to, packets, selective}}` — numbers only; the page words them.

use crate::world::LoggedFrame;
use engine::{PacketClass, PacketStage, TraceRecord};
use fabric::{Packet, Payload};
use serde::Serialize;
use std::collections::BTreeMap;
use units::{NodeId, SimTime};

/// Frames hosts send that the run keeps for the view, from the start of the run: enough for
/// the first drops of a lossy stream (preset ⑤ drops about one frame in a hundred).
pub const FRAMES_KEPT: usize = fabric_frames_kept();
/// Fabric records (packet stages, drops, PAUSEs) kept from the start of the run: several per
/// frame per hop for [`FRAMES_KEPT`] frames.
pub const RECORDS_KEPT: usize = 200_000;
/// Most frames one view shows.
pub const MAX_FRAMES: usize = 400;
/// Frames shown before the first drop.
pub const BEFORE_DROP: usize = 40;
/// Most PAUSE/RESUME events one view shows.
pub const MAX_PAUSES: usize = 200;
/// Most queue-depth samples one view shows.
pub const MAX_QUEUE_SAMPLES: usize = 300;

/// Where [`view`]s go from inside a run (`run_plan_packets`).
pub type ViewSink = std::sync::Arc<std::sync::Mutex<Vec<View>>>;

const fn fabric_frames_kept() -> usize {
    crate::world::FRAME_LOG_MAX
}

/// Which host sent a frame.
#[derive(Clone, Copy, Debug, Eq, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum From {
    /// The requester / TCP writer (host 0).
    Local,
    /// The responder / TCP reader (host 1).
    Remote,
    /// Another host's cross traffic.
    Cross,
}

/// What a frame is, as the view draws it.
#[derive(Clone, Copy, Debug, Eq, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Payload: a RoCE request packet or a TCP segment with data.
    Data,
    /// A positive acknowledgement (RoCE ACK, TCP ACK without SACK blocks).
    Ack,
    /// A RoCE NAK (PSN sequence error).
    Nak,
    /// A selective acknowledgement: a TCP ACK with SACK blocks, or an IRN SACK NAK.
    Sack,
    /// A RoCE congestion notification packet.
    Cnp,
    /// Cross traffic (raw frames of other hosts).
    Cross,
}

/// One frame a host sent, with its fate.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Frame {
    /// Unique per run.
    pub uid: u64,
    /// When its first bit left the host, ns from the window's start.
    pub t_ns: f64,
    /// Who sent it.
    pub from: From,
    /// What it is.
    pub kind: Kind,
    /// The IB opcode name (RoCE only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opcode: Option<&'static str>,
    /// RoCE: the BTH PSN.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub psn: Option<u32>,
    /// TCP: the sequence number, relative to the window's first data segment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq: Option<u32>,
    /// TCP: the acknowledgement number, relative as `seq`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ack: Option<u32>,
    /// Frame length, bytes.
    pub len: u32,
    /// This data was sent before (a retransmission).
    pub resend: bool,
    /// When the fabric dropped it, ns from the window's start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dropped_ns: Option<f64>,
    /// Why (`congestion_draw`, `buffer_full`, `corruption`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drop_reason: Option<&'static str>,
    /// When it was handed to the receiving host, ns from the window's start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delivered_ns: Option<f64>,
    /// TCP SACK blocks, relative as `seq`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sack: Vec<(u32, u32)>,
    /// The frame's bytes as they left the host (lowercase hex, no FCS, the payload cut to
    /// its first [`crate::world::WIRE_PAYLOAD_SHOWN`] bytes): what the packet inspector decodes.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub wire: String,
    /// The payload bytes (`[start, end)` in the whole frame) left out of `wire`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wire_elided: Option<[usize; 2]>,
}

/// A PFC frame sent on a link (quanta 0 is a resume).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Pause {
    /// When it was sent, ns from the window's start.
    pub t_ns: f64,
    /// Who sent it: `switch`, `local`, `remote` or `cross`.
    pub at: &'static str,
    /// Quanta 0: the queue drained below XON and traffic may flow again.
    pub resume: bool,
    /// Pause time, 512-bit-time quanta.
    pub quanta: u16,
}

/// The drop the window is about and what followed it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Story {
    /// The first dropped frame of the path.
    pub drop: StoryDrop,
    /// The receiver's report of the gap, if it came inside the window.
    pub report: Option<StoryReport>,
    /// The sender's resend, if it came inside the window.
    pub resend: Option<StoryResend>,
}

/// The dropped frame.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StoryDrop {
    /// When, ns from the window's start.
    pub t_ns: f64,
    /// Its PSN (RoCE).
    pub psn: Option<u32>,
    /// Its relative sequence number (TCP).
    pub seq: Option<u32>,
    /// Why the fabric dropped it.
    pub reason: &'static str,
}

/// The receiver's report of the gap.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StoryReport {
    /// When it left the receiver, ns from the window's start.
    pub t_ns: f64,
    /// `nak` (RoCE go-back-N), `sack` (IRN SACK NAK or TCP SACK), `dupack` (TCP without SACK).
    pub kind: &'static str,
    /// The PSN the NAK names (the one the responder expects).
    pub psn: Option<u32>,
    /// TCP: the acknowledgement number (the first missing byte).
    pub ack: Option<u32>,
}

/// The sender's resend.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StoryResend {
    /// When the first resent frame left, ns from the window's start.
    pub t_ns: f64,
    /// First PSN (RoCE) or relative sequence number (TCP) resent.
    pub from: u32,
    /// Last PSN or relative sequence number resent in that run of resends.
    pub to: u32,
    /// Frames in that run of resends.
    pub packets: u32,
    /// Only the missing frames were resent (selective repeat, TCP SACK), not a range.
    pub selective: bool,
}

/// One path's packet view.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct View {
    /// `tcp` or `rdma`.
    pub path: &'static str,
    /// The window, ns since the run's start.
    pub window_start_ns: f64,
    /// Its end.
    pub window_end_ns: f64,
    /// Host frames the run kept (at most [`FRAMES_KEPT`]).
    pub frames_seen: usize,
    /// The run sent more frames than were kept: the window comes from the first
    /// [`FRAMES_KEPT`].
    pub frames_truncated: bool,
    /// The window's frames, in the order they left their hosts.
    pub frames: Vec<Frame>,
    /// PFC frames in the window.
    pub pauses: Vec<Pause>,
    /// The switch's queued bytes (all egress ports and priorities), `[t_ns, bytes]`: the
    /// deepest point of each of at most [`MAX_QUEUE_SAMPLES`] equal slices of the window.
    pub queue: Vec<(f64, u64)>,
    /// The deepest the switch queue got in the window.
    pub queue_max_bytes: u64,
    /// The first drop and its recovery, when the window has a drop.
    pub story: Option<Story>,
}

/// What the view needs of one host frame.
struct Sent {
    at: SimTime,
    from: From,
    kind: Kind,
    opcode: Option<&'static str>,
    psn: Option<u32>,
    seq: Option<u32>,
    ack: Option<u32>,
    len: u32,
    sack: Vec<(u32, u32)>,
    uid: u64,
    /// Its place in the frame log (for its bytes).
    log_index: usize,
}

fn classify(
    path: &'static str,
    log_index: usize,
    at: SimTime,
    p: &Packet,
    hosts: [NodeId; 2],
) -> Option<Sent> {
    let from = if p.src == hosts[0] {
        From::Local
    } else if p.src == hosts[1] {
        From::Remote
    } else {
        From::Cross
    };
    let mut s = Sent {
        at,
        from,
        kind: Kind::Cross,
        opcode: None,
        psn: None,
        seq: None,
        ack: None,
        len: p.len_bytes,
        sack: Vec::new(),
        uid: p.uid,
        log_index,
    };
    match (&p.payload, path) {
        (Payload::Roce { hdr, .. }, "rdma") if from != From::Cross => {
            let op = hdr.bth.opcode;
            s.opcode = op.operation().map(|o| o.name());
            s.psn = Some(hdr.bth.psn);
            s.kind = if op.is_cnp() {
                Kind::Cnp
            } else if op.is_request() {
                Kind::Data
            } else if hdr
                .ext
                .irn
                .is_some_and(|i| i.kind() == wire::ib::irn::Kind::Sack)
            {
                Kind::Sack
            } else if hdr
                .ext
                .aeth
                .is_some_and(|a| matches!(a.syndrome, wire::ib::aeth::Syndrome::Nak(_)))
            {
                Kind::Nak
            } else {
                Kind::Ack
            };
        }
        // The RDMA run's own TCP frames are its setup exchange, not the data path.
        (Payload::Tcp { repr, .. }, "tcp") if from != From::Cross => {
            s.seq = Some(repr.seq);
            s.ack = Some(repr.ack);
            s.sack = repr.sack_ranges.iter().flatten().copied().collect();
            s.kind = if repr.payload_len > 0 {
                Kind::Data
            } else if s.sack.is_empty() {
                Kind::Ack
            } else {
                Kind::Sack
            };
        }
        (Payload::Raw { .. }, _) if from == From::Cross => {}
        _ => return None,
    }
    Some(s)
}

/// The packet view of `path` (`"tcp"` or `"rdma"`) from the frames its hosts sent (`frames`,
/// in order; `World::take_frame_log`) and the fabric's records (`records`, in order);
/// `hosts` are the fabric nodes of host 0 (the sender) and host 1; `truncated` says the run
/// sent more frames than `frames` holds.
pub fn view(
    path: &'static str,
    frames: &[LoggedFrame],
    records: &[(SimTime, TraceRecord)],
    hosts: [NodeId; 2],
    truncated: bool,
) -> View {
    let sent: Vec<Sent> = frames
        .iter()
        .enumerate()
        .filter_map(|(i, f)| classify(path, i, f.at, &f.pkt, hosts))
        .collect();
    // Fates by uid.
    let mut dropped: BTreeMap<u64, (SimTime, &'static str)> = BTreeMap::new();
    let mut delivered: BTreeMap<u64, SimTime> = BTreeMap::new();
    for (t, r) in records {
        match r {
            TraceRecord::Dropped { pkt, reason, .. } => {
                dropped.entry(pkt.uid).or_insert((*t, reason.name()));
            }
            TraceRecord::Packet {
                stage: PacketStage::Delivered,
                pkt,
                ..
            } => {
                delivered.entry(pkt.uid).or_insert(*t);
            }
            _ => {}
        }
    }
    // The window: from a little before the path's first dropped frame, or (no drop) from the
    // first PAUSE, or from the path's first data frame.
    let own = |s: &Sent| s.from != From::Cross;
    let first_drop = sent
        .iter()
        .position(|s| own(s) && s.kind == Kind::Data && dropped.contains_key(&s.uid));
    let first_pause = records.iter().find_map(|(t, r)| match r {
        TraceRecord::PauseSent { .. } => Some(*t),
        _ => None,
    });
    let start_i = match (first_drop, first_pause) {
        (Some(i), _) => i.saturating_sub(BEFORE_DROP),
        (None, Some(tp)) => sent
            .iter()
            .position(|s| s.at >= tp)
            .unwrap_or(0)
            .saturating_sub(BEFORE_DROP),
        (None, None) => sent
            .iter()
            .position(|s| own(s) && s.kind == Kind::Data)
            .unwrap_or(0),
    };
    // A data frame resent: its PSN (or sequence number) was sent before, anywhere earlier in
    // the run's kept frames.
    let mut seen: std::collections::BTreeSet<(u8, u32)> = Default::default();
    let mut resend = vec![false; sent.len()];
    for (i, s) in sent.iter().enumerate() {
        if s.kind != Kind::Data || s.from == From::Cross {
            continue;
        }
        let key = (s.from as u8, s.psn.or(s.seq).unwrap_or(0));
        resend[i] = !seen.insert(key);
    }
    let window: Vec<usize> = (start_i..sent.len()).take(MAX_FRAMES).collect();
    let t0 = window.first().map_or(SimTime::ZERO, |&i| sent[i].at);
    let t_end = window.last().map_or(t0, |&i| {
        let s = &sent[i];
        delivered
            .get(&s.uid)
            .copied()
            .or(dropped.get(&s.uid).map(|d| d.0))
            .unwrap_or(s.at)
            .max(s.at)
    });
    let rel = |t: SimTime| (t.as_ps().saturating_sub(t0.as_ps())) as f64 / 1000.0;
    // TCP numbers relative to the window's first data segment of the sender.
    let base = if path == "tcp" {
        window
            .iter()
            .find(|&&i| sent[i].from == From::Local && sent[i].kind == Kind::Data)
            .and_then(|&i| sent[i].seq)
            .unwrap_or(0)
    } else {
        0
    };
    let r32 = |x: u32| x.wrapping_sub(base);
    let out: Vec<Frame> = window
        .iter()
        .map(|&i| {
            let s = &sent[i];
            let tcp = path == "tcp" && s.from != From::Cross;
            // The reader's ACKs name the writer's sequence space; the writer's ACKs name the
            // reader's, which is not drawn.
            Frame {
                uid: s.uid,
                t_ns: rel(s.at),
                from: s.from,
                kind: s.kind,
                opcode: s.opcode,
                psn: s.psn,
                seq: s.seq.filter(|_| tcp && s.from == From::Local).map(r32),
                ack: s.ack.filter(|_| tcp && s.from == From::Remote).map(r32),
                len: s.len,
                resend: resend[i],
                dropped_ns: dropped.get(&s.uid).map(|d| rel(d.0)),
                drop_reason: dropped.get(&s.uid).map(|d| d.1),
                delivered_ns: delivered.get(&s.uid).map(|&t| rel(t)),
                sack: if tcp && s.from == From::Remote {
                    s.sack.iter().map(|&(a, b)| (r32(a), r32(b))).collect()
                } else {
                    Vec::new()
                },
                wire: frames[s.log_index].wire_hex(),
                wire_elided: frames[s.log_index]
                    .wire_elided
                    .as_ref()
                    .map(|r| [r.start, r.end]),
            }
        })
        .collect();
    // PAUSEs and the switch queue inside the window.
    let host_name = |n: NodeId| {
        if n == hosts[0] {
            "local"
        } else if n == hosts[1] {
            "remote"
        } else {
            "switch"
        }
    };
    let is_host = |n: NodeId| n == hosts[0] || n == hosts[1];
    let inside = |t: SimTime| t >= t0 && t <= t_end;
    let mut pauses = Vec::new();
    let mut queues: BTreeMap<(u32, u32), u64> = BTreeMap::new();
    // The queue's deepest point in each of MAX_QUEUE_SAMPLES equal slices of the window.
    let span_ps = (t_end.as_ps() - t0.as_ps()).max(1);
    let slice = |t: SimTime| {
        ((t.as_ps() - t0.as_ps()) as u128 * MAX_QUEUE_SAMPLES as u128 / (span_ps as u128 + 1))
            as usize
    };
    let mut slices: BTreeMap<usize, (SimTime, u64)> = BTreeMap::new();
    let mut queue_max = 0;
    for (t, r) in records {
        match r {
            TraceRecord::PauseSent { node, quanta, .. }
                if inside(*t) && pauses.len() < MAX_PAUSES =>
            {
                pauses.push(Pause {
                    t_ns: rel(*t),
                    at: host_name(*node),
                    resume: *quanta == 0,
                    quanta: *quanta,
                })
            }
            TraceRecord::Packet {
                stage: PacketStage::Enqueued | PacketStage::Dequeued,
                node,
                port,
                pkt,
                queue_bytes,
            } if !is_host(*node) && pkt.class != PacketClass::Pause => {
                queues.insert((node.0, port.0 as u32), *queue_bytes);
                if inside(*t) {
                    let total: u64 = queues.values().sum();
                    queue_max = queue_max.max(total);
                    let e = slices.entry(slice(*t)).or_insert((*t, total));
                    if total > e.1 {
                        *e = (*t, total);
                    }
                }
            }
            _ => {}
        }
    }
    let queue = slices.into_values().map(|(t, b)| (rel(t), b)).collect();
    let story = first_drop.map(|d| story(&sent, &resend, d, &dropped, base, path, rel));
    View {
        path,
        window_start_ns: t0.as_ps() as f64 / 1000.0,
        window_end_ns: t_end.as_ps() as f64 / 1000.0,
        frames_seen: frames.len(),
        frames_truncated: truncated,
        frames: out,
        pauses,
        queue,
        queue_max_bytes: queue_max,
        story,
    }
}

/// The first drop (`sent[d]`), the report of it and the resend that followed, read off the
/// frames sent after it (the whole kept run, not only the window).
fn story(
    sent: &[Sent],
    resend: &[bool],
    d: usize,
    dropped: &BTreeMap<u64, (SimTime, &'static str)>,
    base: u32,
    path: &'static str,
    rel: impl Fn(SimTime) -> f64,
) -> Story {
    let lost = &sent[d];
    let drop = StoryDrop {
        t_ns: rel(dropped[&lost.uid].0),
        psn: lost.psn,
        seq: lost.seq.map(|s| s.wrapping_sub(base)),
        reason: dropped[&lost.uid].1,
    };
    let after = || (d + 1..sent.len()).map(|i| (i, &sent[i]));
    let report = if path == "rdma" {
        after()
            .find(|(_, s)| s.from == From::Remote && matches!(s.kind, Kind::Nak | Kind::Sack))
            .map(|(_, s)| StoryReport {
                t_ns: rel(s.at),
                kind: if s.kind == Kind::Nak { "nak" } else { "sack" },
                psn: s.psn,
                ack: None,
            })
    } else {
        let lost_seq = lost.seq.unwrap_or(0);
        after()
            .find(|(_, s)| s.from == From::Remote && s.ack == Some(lost_seq))
            .map(|(_, s)| StoryReport {
                t_ns: rel(s.at),
                kind: if s.kind == Kind::Sack {
                    "sack"
                } else {
                    "dupack"
                },
                psn: None,
                ack: s.ack.map(|a| a.wrapping_sub(base)),
            })
    };
    let sacked = report.as_ref().is_some_and(|r| r.kind == "sack");
    // The first resend of the lost data after the drop, and the run of resends it starts.
    let key = |s: &Sent| s.psn.or(s.seq);
    let first = after().find(|(i, s)| {
        resend[*i] && s.from == From::Local && s.kind == Kind::Data && key(s) == key(lost)
    });
    let resend = first.map(|(i0, s0)| {
        let mut last = key(s0).unwrap_or(0);
        let mut packets = 0u32;
        let mut gap = false;
        for (i, s) in (i0..sent.len()).map(|i| (i, &sent[i])) {
            if s.from != From::Local || s.kind != Kind::Data {
                continue;
            }
            if !resend[i] {
                break;
            }
            let k = key(s).unwrap_or(0);
            if packets > 0 && path == "rdma" && k != last.wrapping_add(1) {
                gap = true;
            }
            last = k;
            packets += 1;
        }
        // Go-back-N resends the range from the lost PSN on; resends after a SACK, or that skip
        // PSNs, are selective (TCP with SACK resends what the blocks leave out).
        let selective = path == "tcp" || gap || sacked;
        let rel_key = |k: u32| {
            if path == "tcp" {
                k.wrapping_sub(base)
            } else {
                k
            }
        };
        StoryResend {
            t_ns: rel(s0.at),
            from: rel_key(key(s0).unwrap_or(0)),
            to: rel_key(last),
            packets,
            selective,
        }
    });
    Story {
        drop,
        report,
        resend,
    }
}
