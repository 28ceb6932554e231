//! The world's events and their dispatch: what can happen at an instant (a fabric event, or
//! one of a host NIC's: a doorbell landing, a WQE fetched, a frame leaving the TX pipeline or
//! passing the RX one, a transport timer, a CQE written, a TCP socket-path step) and
//! `State::handle`, which sends each to the function of the datapath that acts on it. Kept
//! apart from the handlers so that the event set, whose size is checked at compile time (the
//! event queue stores one per pending entry), reads as one list.

use super::HostIx;
use super::rdma_rx::wc_status;
use super::{State, TcpEvent, retire};
use engine::{Scheduler, Tie};
use fabric::{Delivery, FabricEvent, Payload};
use verbs::{QpNum, WcStatus};

/// Events of the world.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Event {
    /// An event of the fabric.
    Fabric(FabricEvent),
    /// An event of a host.
    Host(HostEvent),
}

// Every pending event is stored as (time, Event) in the event queue: 16 bytes here keep an
// entry at 24 bytes (the queue's writes and reads were a fifth of a large run's time).
const _: () = assert!(size_of::<Event>() <= 16, "an Event grew past 16 bytes");

impl From<FabricEvent> for Event {
    fn from(e: FabricEvent) -> Self {
        Event::Fabric(e)
    }
}

/// Ties at one instant (the scheduler's canonical order, `engine::sched`): a frame arriving
/// over a link after the instant's other work, by its port ([`fabric::FabricEvent`]'s tie);
/// everything else, first in, first out. A host's events are all scheduled on its side (its
/// NIC, its application, or the frames its port hands up), never by another node.
impl Tie for Event {
    #[inline]
    fn tie(&self) -> u64 {
        match self {
            Event::Fabric(fe) => fe.tie(),
            Event::Host(_) => 0,
        }
    }
}

/// Events of a host's NIC.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HostEvent {
    /// A doorbell (or BlueFlame write) for QP `qpn` landed in the NIC: it looks at the send
    /// queue.
    Doorbell {
        /// Host ordinal.
        host: HostIx,
        /// The QP.
        qpn: u32,
    },
    /// A WQE of QP `qpn` the NIC read over PCIe has arrived: the QP may start sending it.
    WqeFetched {
        /// Host ordinal.
        host: HostIx,
        /// The QP.
        qpn: u32,
    },
    /// A gathered frame leaves the NIC pipeline for the port.
    TxOut {
        /// Host ordinal.
        host: HostIx,
        /// Slot of the frame.
        slot: u32,
    },
    /// A received frame has passed the NIC pipeline.
    RxIn {
        /// Host ordinal.
        host: HostIx,
        /// The frame's handle in the fabric, which holds it until then.
        slot: u32,
    },
    /// A QP's transport timer is due.
    Timer {
        /// Host ordinal.
        host: HostIx,
        /// The QP.
        qpn: u32,
    },
    /// A send completion's CQE has been written to host memory.
    SendDone {
        /// Host ordinal.
        host: HostIx,
        /// The QP.
        qpn: u32,
        /// Where the host keeps the WQE and how it ended until then (its `send_done` slots):
        /// a 64-bit WQE id in the event made every queued event 8 bytes longer.
        slot: u32,
    },
    /// The oldest pending receive CQE of a QP has been written to host memory.
    RecvDone {
        /// Host ordinal.
        host: HostIx,
        /// The QP.
        qpn: u32,
    },
    /// An event of the kernel TCP socket path.
    Tcp(TcpEvent),
}

impl HostEvent {
    /// The host it happens at.
    #[inline]
    pub fn host(&self) -> HostIx {
        match *self {
            HostEvent::Doorbell { host, .. }
            | HostEvent::WqeFetched { host, .. }
            | HostEvent::TxOut { host, .. }
            | HostEvent::RxIn { host, .. }
            | HostEvent::Timer { host, .. }
            | HostEvent::SendDone { host, .. }
            | HostEvent::RecvDone { host, .. } => host,
            HostEvent::Tcp(t) => t.host(),
        }
    }
}

/// The dispatch: each event to the datapath function that acts on it, at `sched.now()`.
impl State {
    pub(super) fn handle(&mut self, ev: Event, sched: &mut Scheduler<Event>) {
        if let Some(v) = self.fabric_view.as_mut() {
            v.catch_up(&mut self.fabric, sched.now());
        }
        match ev {
            Event::Fabric(fe) => {
                self.fabric.handle(fe, sched);
                while let Some(d) = self.fabric.take_delivered() {
                    match d {
                        Delivery::Arrived(node, pkt) => {
                            let Some(&h) = self.by_node.get(&node.0) else {
                                // No host model there: the frame ends at the port.
                                self.fabric.take_held(pkt);
                                continue;
                            };
                            // The fabric holds the frame while it passes the NIC pipeline
                            // (traced by `rx_in`, which knows whose frame it is).
                            let at = sched.now() + self.hosts[h.index()].profile.nic.pipeline;
                            sched.schedule_at(
                                at,
                                Event::Host(HostEvent::RxIn {
                                    host: h,
                                    slot: pkt.index(),
                                }),
                            );
                        }
                        Delivery::Dropped(pkt) => {
                            if let Some(Payload::Roce { data, .. } | Payload::Tcp { data, .. }) =
                                self.fabric.take_held(pkt).map(|p| p.payload)
                            {
                                self.free_data(data);
                            }
                        }
                    }
                }
                if self.fabric.has_host_wakeups() {
                    // A scratch vector kept between events (no allocation per wakeup).
                    let mut wake = std::mem::take(&mut self.wake_scratch);
                    wake.extend(self.fabric.take_host_wakeups());
                    for node in wake.drain(..) {
                        if let Some(&h) = self.by_node.get(&node.0) {
                            self.tx_to_port(h, sched);
                            self.tcp_nic_pump(h, sched);
                        }
                    }
                    self.wake_scratch = wake;
                }
                if self.pcap.is_some() || self.frame_log.is_some() {
                    self.capture_frames();
                }
            }
            Event::Host(HostEvent::Doorbell { host, qpn }) => {
                self.doorbell(host, qpn, sched);
                // A WQE that failed as it started (a bad opcode) completed in error just now.
                self.deliver_notifications(host, sched.now());
            }
            Event::Host(HostEvent::WqeFetched { host, qpn }) => {
                self.wqe_fetched(host, qpn, sched);
                self.deliver_notifications(host, sched.now());
            }
            Event::Host(HostEvent::TxOut { host, slot }) => self.tx_out(host, slot, sched),
            Event::Host(HostEvent::RxIn { host, slot }) => {
                self.rx_in(host, slot, sched);
                self.deliver_notifications(host, sched.now());
            }
            Event::Host(HostEvent::Tcp(e)) => self.tcp_handle(e, sched),
            Event::Host(HostEvent::Timer { host, qpn }) => {
                let now = sched.now();
                let Some(e) = self.hosts[host.index()].qps.get_mut(&qpn) else {
                    return;
                };
                if e.timer_at == Some(now) {
                    e.timer_at = None;
                }
                if let Some(r) = e.req.as_mut() {
                    r.handle_timeout(now);
                }
                self.trace_rate(host, qpn, now);
                self.after_transport(host, qpn, sched);
            }
            Event::Host(HostEvent::RecvDone { host, qpn }) => {
                let hs = &mut self.hosts[host.index()];
                if let Some(t) = hs.qps.get_mut(&qpn).and_then(|e| e.recv_cqes.pop_front()) {
                    // The CQE's outcome is verbs' to act on (an overrun CQ moves the QP to
                    // ERR there); the world only times the write.
                    hs.verbs.deliver_recv(QpNum::masked(qpn), t);
                }
                self.deliver_notifications(host, sched.now());
            }
            Event::Host(HostEvent::SendDone { host, qpn, slot }) => {
                let (id, status) = self.hosts[host.index()]
                    .send_done
                    .remove(engine::Handle::from_index(slot));
                self.send_completions += 1;
                let wc = wc_status(status);
                if wc != WcStatus::Success {
                    // An error completion moves the QP to ERR and flushes it.
                    self.hosts[host.index()].land_recv_cqes(qpn);
                }
                let hs = &mut self.hosts[host.index()];
                if let Ok(done) =
                    hs.verbs
                        .complete_send(QpNum::masked(qpn), verbs::qp::WqeId(id), wc)
                    && done.flushed.is_some()
                    && let Some(e) = hs.qps.get_mut(&qpn)
                {
                    retire(e, &mut hs.retired);
                    e.fetched.clear();
                }
                self.deliver_notifications(host, sched.now());
                self.doorbell(host, qpn, sched);
            }
        }
    }
}
