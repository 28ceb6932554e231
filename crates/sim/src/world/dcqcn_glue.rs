//! DCQCN's glue in the NIC: the notification point (a CE-marked packet answered with a CNP,
//! at most one per CNP interval per QP, made by the NIC itself without PCIe) and the
//! reaction point's rate changes put on the trace. The reaction point itself, which paces the
//! QP's requests, is the requester's (`transport::roce::requester`); the world only wakes a
//! paced QP when its next packet may go (`pump_tx`).

use super::HostIx;
use super::State;
use super::events::Event;
use super::rdma_tx::roce_spec;
use engine::{Scheduler, TraceRecord};
use fabric::{Ecn, RoceHeaders};
use transport::roce::dcqcn::DcqcnParams;
use units::SimTime;

/// DCQCN around the transport: the notification point and the rate trace.
impl State {
    /// DCQCN's notification point: a CE-marked packet reached QP `qpn` of host `h`; answer
    /// with a CNP to the sending QP unless one went within the CNP interval. The NIC makes it
    /// itself (no PCIe) and sends it in the CNP priority.
    pub(super) fn notify(
        &mut self,
        h: HostIx,
        qpn: u32,
        params: &DcqcnParams,
        sched: &mut Scheduler<Event>,
    ) {
        let now = sched.now();
        let host = &mut self.hosts[h.index()];
        let node = host.node;
        let Some(e) = host.qps.get_mut(&qpn) else {
            return;
        };
        let Some(peer) = e.peer else { return };
        if !e.np.on_marked(now, params) {
            return;
        }
        let sport = e.sport;
        let ethertype = e.ethertype;
        let hdr = RoceHeaders {
            bth: wire::ib::bth::Repr {
                opcode: wire::Opcode::CNP,
                solicited: false,
                mig_req: false,
                pad_count: 0,
                pkey: 0xffff,
                fecn: false,
                becn: true,
                dest_qp: e.dest_qpn,
                ack_req: false,
                psn: 0,
            },
            ext: wire::ExtHeaders::NONE,
            udp_src_port: sport,
        };
        let spec = roce_spec(
            (h, qpn),
            (peer, self.host_nodes[peer.index()]),
            hdr,
            (0, fabric::DataHandle::NONE),
            (self.cnp_priority, Ecn::NotEct),
            ethertype,
            super::rdma_tx::roce_ecmp_hash(h, peer, sport),
        );
        let r = self.fabric.send(node, spec, sched);
        // Both ends are hosts (`node` is this host's, `peer` a host ordinal) and a CNP's frame
        // is padded to the minimum length: nothing `Fabric::send` refuses.
        debug_assert!(r.is_ok(), "a CNP the fabric refused: {r:?}");
    }

    /// Puts the reaction point's rate changes of QP `qpn` on the trace.
    pub(super) fn trace_rate(&mut self, h: HostIx, qpn: u32, now: SimTime) {
        let host = &mut self.hosts[h.index()];
        let node = host.node;
        let Some(r) = host.qps.get_mut(&qpn).and_then(|e| e.req.as_mut()) else {
            return;
        };
        while let Some(c) = r.poll_rate_change() {
            self.tracer.emit(now, || TraceRecord::RateChange {
                host: node,
                qpn,
                cause: c.cause,
                rate_kbps: c.rate_kbps,
                target_kbps: c.target_kbps,
                alpha: c.alpha,
            });
        }
    }
}
