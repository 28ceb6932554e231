//! Cache prefetches for the event after next: the ports, queues and routes it will touch,
//! requested while the current event still works (a large fabric's state is cold).

use super::*;

impl Fabric {
    /// Asks the CPU for what `ev` will read first (see [`engine::prefetch()`]): for an arrival,
    /// the packet's descriptor, its head time and the receiving port; for a port event, the
    /// port. Reads nothing but the fabric's own tables. Changes nothing.
    #[inline]
    pub fn prefetch_event(&self, ev: &FabricEvent) {
        match *ev {
            FabricEvent::Arrive { port, pkt } => {
                self.packets.prefetch(pkt);
                if let Some(t) = self.head_at.get(pkt.index() as usize) {
                    engine::prefetch(t);
                }
                self.prefetch_port(port);
            }
            FabricEvent::TxDone { port } | FabricEvent::Wake { port } => self.prefetch_port(port),
            _ => {}
        }
    }

    /// As [`Fabric::prefetch_event`], and one step further for the event about to run: for a
    /// port event, the head frame of each backlogged priority (what the scheduler reads). Reads
    /// the port, so it pays when [`Fabric::prefetch_event`] asked for it an event earlier.
    #[inline]
    pub fn prefetch_event_near(&self, ev: &FabricEvent) {
        self.prefetch_event(ev);
        match *ev {
            FabricEvent::TxDone { port } | FabricEvent::Wake { port } => {
                let Some(pt) = self.ports.get(port as usize) else {
                    return;
                };
                let mut b = pt.backlogged;
                while b != 0 {
                    if let Some(head) = pt.prio[b.trailing_zeros() as usize].queue.front() {
                        engine::prefetch(head);
                    }
                    b &= b - 1;
                }
            }
            // At a switch, the frame's route: its descriptor and the receiving port were
            // asked for an event earlier, and the egress port they lead to is the hop's next
            // miss (its queue and clock).
            FabricEvent::Arrive { port, pkt } => {
                let Some(pt) = self.ports.get(port as usize) else {
                    return;
                };
                let (
                    Some(NodeState {
                        role: Role::Switch(s),
                        ..
                    }),
                    Some(d),
                ) = (self.nodes.get(pt.node.index()), self.packets.try_get(pkt))
                else {
                    return;
                };
                if let Some(out) = self.egress(*s as usize, d.dst, d.ecmp_hash) {
                    let mut memo = self.route_memo.get();
                    memo[1] = memo[0];
                    memo[0] = RouteMemo {
                        key: (*s, d.dst.0, d.ecmp_hash),
                        out,
                    };
                    self.route_memo.set(memo);
                    self.prefetch_port(out);
                    if let Some(p) = self.ports.get(out as usize) {
                        engine::prefetch(&p.prio[d.priority.index()]);
                    }
                }
            }
            _ => {}
        }
    }

    /// Asks the CPU for a packet held for a host (see [`Fabric::take_held`]): its descriptor
    /// and its payload.
    #[inline]
    pub fn prefetch_held(&self, pkt: PacketHandle) {
        self.packets.prefetch(pkt);
        self.bodies.prefetch(body_of(pkt));
    }

    /// The data handle of a held RoCE packet's payload (what the host's model keeps its bytes
    /// under), read from the compact payload only, for prefetching: it pays when
    /// [`Fabric::prefetch_held`] asked for the payload an event earlier. `None` for any other
    /// payload, a packet without payload bytes, or if the handle names no held packet.
    #[inline]
    pub fn held_data_hint(&self, pkt: PacketHandle) -> Option<u32> {
        match self.bodies.try_get(body_of(pkt))? {
            Body::Rc { data, .. } => data.get(),
            _ => None,
        }
    }

    #[inline]
    pub(super) fn prefetch_port(&self, port: u32) {
        if let Some(p) = self.ports.get(port as usize) {
            engine::prefetch(p);
        }
    }
}
