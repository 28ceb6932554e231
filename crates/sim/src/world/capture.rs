//! What the world lets an observer see of the frames: the pcap of every link with real payload
//! bytes (`capture_pcap`, `finish_pcap`), the frame log a verbs session's ladder shows
//! (`log_frames`, `take_frame_log`, [`LoggedFrame`] with the wire bytes the packet inspector
//! decodes and the send WR each frame carries or answers), and the fabric view of a lab
//! (`watch_fabric`). The fabric carries packet metadata, not bytes; the frames are encoded
//! here from the payload pool (`encode`) when the fabric's capture hands them over.

use super::HostIx;
use super::responder_env::materialize;
use super::{PoolData, State, World, peek_data};
use engine::Tracer;
use fabric::{Packet, Payload, capture::frame_bytes, packet::host_ip};
use transport::roce::Transmit;
use units::{SimDuration, SimTime};
use verbs::QpNum;
use wire::{Ipv4Address, PcapWriter};

/// A frame a host sent, as [`World::take_frame_log`] hands it out.
#[derive(Clone, Debug)]
pub struct LoggedFrame {
    /// When its first bit left.
    pub at: SimTime,
    /// The packet.
    pub pkt: Packet,
    /// The send WR it carries or answers, if known.
    pub wr_id: Option<u64>,
    /// Its bytes (without FCS), the payload cut to its first [`WIRE_PAYLOAD_SHOWN`] bytes
    /// (`wire::dissect::elide_payload`); empty if the packet could not be encoded.
    pub wire: Vec<u8>,
    /// The payload bytes (offsets in the whole frame) left out of `wire`, if any.
    pub wire_elided: Option<std::ops::Range<usize>>,
}

impl LoggedFrame {
    /// Its bytes as lowercase hex, two digits a byte and no separator (what the web lab's
    /// packet inspector decodes).
    pub fn wire_hex(&self) -> String {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut s = String::with_capacity(self.wire.len() * 2);
        for b in &self.wire {
            s.push(char::from(HEX[usize::from(b >> 4)]));
            s.push(char::from(HEX[usize::from(b & 0xf)]));
        }
        s
    }
}

/// Payload bytes a logged frame keeps: enough to see a message's first words land, while a
/// step's frame list stays small (headers + 64 + ICRC is under 200 bytes a frame). An
/// interface choice, not a model figure.
pub const WIRE_PAYLOAD_SHOWN: usize = 64;

/// Most frames [`World::take_frame_log`] keeps between two calls (a verbs session's step).
pub const FRAME_LOG_MAX: usize = 4_096;

impl World {
    /// Writes every frame on every link to `out` as a pcap, with real payload bytes.
    pub fn capture_pcap(&mut self, out: Box<dyn std::io::Write + Send>) -> std::io::Result<()> {
        if self.is_partitioned() {
            // Each partition would see only its own frames.
            return Err(std::io::Error::other(
                "a pcap is written by a world on one thread: run with --threads 1",
            ));
        }
        self.state.pcap = Some(PcapWriter::new(out)?);
        self.state
            .fabric
            .enable_capture(fabric::capture::CaptureAt::All);
        Ok(())
    }

    /// Flushes and closes the pcap; the first write that failed during the run, if any.
    pub fn finish_pcap(&mut self) -> std::io::Result<()> {
        self.state.capture_frames();
        let mut w = self.state.pcap.take();
        if let Some(e) = self.state.capture_error.take() {
            return Err(e);
        }
        if let Some(w) = w.as_mut() {
            w.flush()?;
        }
        Ok(())
    }

    /// Keeps every frame a host sends from now on (time its first bit left, the packet), for
    /// [`World::take_frame_log`]: a verbs session's ladder. Costs a copy per frame; meant for
    /// short runs.
    pub fn log_frames(&mut self) {
        debug_assert!(!self.is_partitioned(), "a frame log needs one partition");
        if self.state.frame_log.is_none() {
            self.state.frame_log = Some(Vec::new());
            self.state
                .fabric
                .enable_capture(fabric::capture::CaptureAt::All);
        }
    }

    /// The frames hosts sent since the last call (with [`World::log_frames`] on), in order,
    /// each with the `wr_id` of the send WR it carries (a request packet, first sent or
    /// resent) or answers (an ACK, NAK or READ response: the request whose PSNs it names).
    /// At most [`FRAME_LOG_MAX`] frames are kept between two calls; the second value counts
    /// those left out.
    pub fn take_frame_log(&mut self) -> (Vec<LoggedFrame>, usize) {
        // Whatever the capture holds has not been sorted into the log yet.
        self.state.capture_frames();
        let skipped = std::mem::take(&mut self.state.frame_log_skipped);
        (
            self.state
                .frame_log
                .as_mut()
                .map(std::mem::take)
                .unwrap_or_default(),
            skipped,
        )
    }

    /// Records the fabric view of the run from now on ([`crate::labs::fabric_view`]): every
    /// link of `topo` (the topology this world was built from) sampled at the end of each
    /// window, the window starting at `first_window` and doubling as the run goes on, for
    /// RoCE's priority `prio`. Only watches: a tap and a trace observer, and the report's
    /// packet records (an [`engine::FirstObserver`] on the fabric, the ladder's) go on being
    /// kept through it and are put back by [`World::finish_fabric_view`], which ends it. The
    /// fabric must have no tap of its own (the report's runs set none).
    pub fn watch_fabric(
        &mut self,
        topo: &fabric::Topology,
        first_window: SimDuration,
        prio: usize,
    ) {
        debug_assert!(!self.is_partitioned(), "a fabric view needs one partition");
        let inner = self
            .state
            .fabric
            .tracer_mut()
            .take::<engine::FirstObserver>()
            .map(|o| o as Box<dyn engine::Observer>);
        let now = self.now();
        self.state.fabric_view = Some(Box::new(
            crate::labs::fabric_view::ViewRecorder::attach_run(
                &mut self.state.fabric,
                topo,
                now,
                first_window,
                prio,
                inner,
            ),
        ));
    }

    /// The fabric view [`World::watch_fabric`] recorded, up to now (its last sample is now),
    /// and the fabric's own observer put back; None if none was being recorded.
    pub fn finish_fabric_view(&mut self) -> Option<crate::labs::fabric_view::FabricView> {
        let rec = self.state.fabric_view.take()?;
        let now = self.now();
        let (view, inner) = rec.finish_at(&mut self.state.fabric, now);
        if let Some(o) = inner.and_then(|i| {
            (i as Box<dyn std::any::Any>)
                .downcast::<engine::FirstObserver>()
                .ok()
        }) {
            self.state.fabric.set_tracer(Tracer::new(*o));
        }
        Some(view)
    }
}

/// Capture and the frame log, fed between events.
impl State {
    /// Frame logging: remembers which send WR request packet `t` of QP `qpn` belongs to.
    pub(super) fn note_request(&mut self, h: HostIx, qpn: u32, t: &Transmit) {
        let host = &self.hosts[h.index()];
        let psn = t.pkt.bth.psn;
        let wr = host
            .qps
            .get(&qpn)
            .and_then(|e| e.req.as_ref())
            .and_then(|r| r.request_of(psn))
            .and_then(|id| {
                host.verbs
                    .send_wr_id(QpNum::masked(qpn), verbs::qp::WqeId(id))
            });
        if let Some(wr) = wr {
            // One entry per message (where the WR changes), not per packet: a resend or a
            // later packet of the same message finds its start by range.
            let m = self.wr_psns.entry((h, qpn & 0xffff)).or_default();
            if m.range(..=psn).next_back().map(|(_, &w)| w) != Some(wr) {
                m.insert(psn, wr);
            }
        }
    }

    /// Sorts the frames the fabric captured into the frame log and the pcap; a failed pcap
    /// write is kept for [`World::finish_pcap`] and the run goes on.
    pub(super) fn capture_frames(&mut self) {
        if let Err(e) = self.write_captured() {
            self.capture_error.get_or_insert(e);
        }
    }

    fn write_captured(&mut self) -> std::io::Result<()> {
        let frames = self.fabric.drain_captured();
        if self.frame_log.is_some() {
            for (at, node, _, pkt) in &frames {
                if self.by_node.get(&node.0).is_none() {
                    continue;
                }
                let wr = match pkt.payload {
                    Payload::Roce { hdr, .. } if hdr.bth.opcode != wire::Opcode::CNP => {
                        let psn = hdr.bth.psn;
                        if hdr.bth.opcode.is_request() {
                            let h = self.by_node.get(&pkt.src.0).copied();
                            // The flow id carries the sending QP's number (`World::flow_of`).
                            h.and_then(|h| self.wr_psns.get(&(h, pkt.flow.0 & 0xffff)))
                                .and_then(|m| m.range(..=psn).next_back().map(|(_, &w)| w))
                        } else {
                            let h = self.by_node.get(&pkt.dst.0).copied();
                            h.and_then(|h| self.wr_psns.get(&(h, hdr.bth.dest_qp & 0xffff)))
                                .and_then(|m| m.range(..=psn).next_back().map(|(_, &w)| w))
                        }
                    }
                    _ => None,
                };
                let full = self
                    .frame_log
                    .as_ref()
                    .is_some_and(|log| log.len() >= FRAME_LOG_MAX);
                if full {
                    self.frame_log_skipped += 1;
                    continue;
                }
                // The bytes as they left, payload included, cut to what an inspector shows.
                let (wire, wire_elided) = match self.encode(pkt) {
                    Ok(()) => wire::dissect::elide_payload(&self.frame_buf, WIRE_PAYLOAD_SHOWN),
                    Err(_) => (Vec::new(), None),
                };
                if let Some(log) = self.frame_log.as_mut() {
                    log.push(LoggedFrame {
                        at: *at,
                        pkt: *pkt,
                        wr_id: wr,
                        wire,
                        wire_elided,
                    });
                }
            }
        }
        if self.pcap.is_none() {
            return Ok(());
        }
        for (at, _node, _port, pkt) in frames {
            self.encode(&pkt).map_err(std::io::Error::other)?;
            if let Some(w) = self.pcap.as_mut() {
                w.write_frame(at, &self.frame_buf)?;
            }
        }
        Ok(())
    }

    /// The bytes of `pkt` as they go on the wire, its payload from the pool, into
    /// `self.frame_buf`.
    pub(super) fn encode(&mut self, pkt: &Packet) -> wire::Result<()> {
        let src = self
            .by_node
            .get(&pkt.src.0)
            .map_or([0; 4], |h| host_ip(h.get()));
        let dst = self
            .by_node
            .get(&pkt.dst.0)
            .map_or([0; 4], |h| host_ip(h.get()));
        let payload: std::borrow::Cow<'_, [u8]> = match pkt.payload {
            Payload::Roce {
                data, payload_len, ..
            } => match peek_data(&self.pool, data) {
                Some(PoolData::Bytes(v)) => std::borrow::Cow::Borrowed(v.as_slice()),
                Some(PoolData::Synthetic(r)) => materialize(&[], Some(*r), payload_len),
                None => std::borrow::Cow::Borrowed(&[][..]),
            },
            Payload::Tcp { data, .. } => match peek_data(&self.pool, data) {
                Some(PoolData::Bytes(v)) => std::borrow::Cow::Borrowed(v.as_slice()),
                _ => std::borrow::Cow::Borrowed(&[][..]),
            },
            _ => std::borrow::Cow::Borrowed(&[][..]),
        };
        frame_bytes(
            pkt,
            Ipv4Address(src),
            Ipv4Address(dst),
            &payload,
            &mut self.frame_buf,
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::world::{RcOptions, World};
    use engine::Budget;
    use fabric::{FabricConfig, LinkConfig, Topology};
    use units::{Bandwidth, SimDuration};

    /// A pcap sink that refuses its `fail_at`-th write (counting from 1) and takes the rest,
    /// as a disk that filled up and was cleared again would.
    struct FailOnce {
        calls: usize,
        fail_at: usize,
    }

    impl std::io::Write for FailOnce {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.calls += 1;
            if self.calls == self.fail_at {
                return Err(std::io::Error::other("disk full"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// A write that fails while the run captures (here the first frame's bytes, during the
    /// connection exchange) is what `finish_pcap` returns. It used to be dropped between
    /// events, and `finish_pcap` then said Ok over a pcap missing its frames.
    #[test]
    fn a_pcap_write_that_failed_mid_run_is_what_finish_pcap_returns() {
        let mut topo = Topology::new("pair");
        let sw = topo.add_switch("sw");
        for name in ["h0", "h1"] {
            let h = topo.add_host(name);
            topo.connect(h, sw, LinkConfig::new(Bandwidth::gbps(100), 3));
        }
        let mut w = World::new(
            &topo,
            FabricConfig::default(),
            Default::default(),
            Default::default(),
        )
        .unwrap();
        // Write 1 is the pcap's file header, 2 the first frame's record header, 3 its bytes.
        w.capture_pcap(Box::new(FailOnce {
            calls: 0,
            fail_at: 3,
        }))
        .unwrap();
        let c = w
            .connect_rc_buffered(0, 1, &RcOptions::default(), 1 << 12)
            .unwrap();
        w.post_writes(&c, &[1 << 12], true).unwrap();
        let end = w.now() + SimDuration::from_us(100);
        w.run_until(end, &Budget::default()).unwrap();
        let e = w.finish_pcap().expect_err("the failed write is reported");
        assert_eq!(e.to_string(), "disk full");
    }
}
