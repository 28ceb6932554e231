//! The whole run's trace on any split: the first records of every host's stages and every
//! fabric event, from every partition, put in one order that does not depend on how many
//! partitions ran them.
//!
//! Each partition's host tracer and fabric tracer keep their own records (a tracer is
//! single-threaded, like the models that write to it). A node's records all come from the
//! partition that owns the node, in the order that node made them, which is the same for any
//! split (the scheduler's canonical order, `engine::sched`). So the records sorted by
//! (time, node, host before fabric), stably, are the same for one partition as for sixteen:
//! at one instant the nodes are independent, and within a node nothing is reordered.
//!
//! The cut at `limit` records is made at an instant, so it does not depend on the split
//! either: a tracer that fills up at time `T` (its first record left out) has everything
//! before `T`; the kept trace is every record before the first instant at which the
//! `limit + 1`-th record (in that order) happens, which lies at or before the earliest such
//! `T`.

use super::World;
use engine::{FirstObserver, TraceRecord, Tracer};
use units::{NodeId, SimTime};

/// A run's trace: its records in (time, node) order, and how many were left out.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WholeTrace {
    /// The records kept, with their times.
    pub records: Vec<(SimTime, TraceRecord)>,
    /// Records the run made past the cut (those of the instant where the cut fell included).
    pub skipped: u64,
}

impl WholeTrace {
    /// Adds a later run's trace (a collective's next size) after this one's.
    pub fn append(&mut self, mut later: WholeTrace) {
        self.records.append(&mut later.records);
        self.skipped += later.skipped;
    }
}

impl World {
    /// Keeps the first `limit` trace records of what runs from now on, host stages and
    /// fabric events both, on every partition ([`World::take_trace`] returns them). Replaces
    /// the host and fabric tracers.
    pub fn keep_trace(&mut self, limit: usize) {
        self.each_state(|s| {
            s.tracer = Tracer::new(FirstObserver::new(limit));
            s.fabric.set_tracer(Tracer::new(FirstObserver::new(limit)));
        });
    }

    /// Detaches what [`World::keep_trace`] kept and returns it in one order: by time, then
    /// node, a node's host records before its fabric records, each in the order it was made.
    /// The same for any number of partitions. Empty if nothing was kept.
    pub fn take_trace(&mut self) -> WholeTrace {
        let mut kept = Vec::new();
        self.each_state(|s| {
            kept.extend(s.tracer.take::<FirstObserver>().map(|k| (0, *k)));
            kept.extend(
                s.fabric
                    .tracer_mut()
                    .take::<FirstObserver>()
                    .map(|k| (1, *k)),
            );
        });
        merge(kept)
    }
}

/// Tracers' records (each tagged 0 for a host tracer, 1 for a fabric tracer) in one order,
/// cut at an instant (the module's doc says why both give the same for any split).
fn merge(kept: Vec<(u8, FirstObserver)>) -> WholeTrace {
    let mut all: Vec<(SimTime, NodeId, u8, TraceRecord)> = Vec::new();
    let (mut limit, mut seen) = (0usize, 0u64);
    let mut full_at: Option<SimTime> = None;
    for (source, k) in kept {
        limit = limit.max(k.limit);
        seen += k.records.len() as u64 + k.skipped;
        if let Some(t) = k.full_at {
            full_at = Some(full_at.map_or(t, |f| f.min(t)));
        }
        all.extend(k.records.into_iter().map(|(t, r)| (t, r.node(), source, r)));
    }
    // Only what every tracer kept in full, then whole instants up to `limit`.
    if let Some(f) = full_at {
        all.retain(|&(t, ..)| t < f);
    }
    all.sort_by_key(|&(t, node, source, _)| (t, node, source));
    if all.len() > limit {
        let cut = all[limit].0;
        all.truncate(all.partition_point(|&(t, ..)| t < cut));
    }
    let records: Vec<(SimTime, TraceRecord)> = all.into_iter().map(|(t, _, _, r)| (t, r)).collect();
    WholeTrace {
        skipped: seen - records.len() as u64,
        records,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::{Observer, PacketRef, PacketStage};
    use units::{FlowId, PortId};

    fn rec(node: u32, uid: u64) -> TraceRecord {
        TraceRecord::Packet {
            stage: PacketStage::Arrived,
            node: NodeId(node),
            port: PortId(0),
            pkt: PacketRef {
                uid,
                flow: FlowId(0),
                class: engine::PacketClass::Raw,
                bytes: 64,
                priority: units::Priority::of(0),
                irn_ext: false,
            },
            queue_bytes: 0,
        }
    }

    #[test]
    fn a_full_tracer_keeps_what_came_before_its_first_left_out_record() {
        let mut k = FirstObserver::new(2);
        for (t, uid) in [(1, 1), (2, 2), (3, 3), (4, 4)] {
            k.record(SimTime::from_ps(t), &rec(0, uid));
        }
        assert_eq!(k.records.len(), 2);
        assert_eq!((k.skipped, k.full_at), (2, Some(SimTime::from_ps(3))));
    }

    fn keeping(limit: usize, recs: impl Iterator<Item = (u64, TraceRecord)>) -> FirstObserver {
        let mut k = FirstObserver::new(limit);
        for (t, r) in recs {
            k.record(SimTime::from_ps(t), &r);
        }
        k
    }

    /// Four nodes making records at the same instants, seen by one tracer (in an order that
    /// interleaves the nodes) or by two (nodes 0–1 and 2–3, as two partitions would): the
    /// merged trace is the same for every limit, cut at an instant, with the rest counted.
    #[test]
    fn one_tracer_and_two_give_the_same_trace_at_any_limit() {
        // At each of 10 instants, every node makes two records, in an order that differs
        // from instant to instant (as a single run's event order would).
        let stream: Vec<(u64, TraceRecord)> = (0..10u64)
            .flat_map(|t| {
                (0..8u64).map(move |i| {
                    let node = ((i + t) % 4) as u32;
                    (t * 100, rec(node, t * 8 + i))
                })
            })
            .collect();
        let of_nodes = |lo: u32, hi: u32| {
            stream
                .iter()
                .filter(move |(_, r)| (lo..=hi).contains(&r.node().0))
                .cloned()
        };
        for limit in [1, 7, 8, 9, 16, 33, 79, 80, 200] {
            let one = merge(vec![(1, keeping(limit, stream.iter().cloned()))]);
            let two = merge(vec![
                (1, keeping(limit, of_nodes(2, 3))),
                (1, keeping(limit, of_nodes(0, 1))),
            ]);
            assert_eq!(one, two, "limit {limit}");
            assert!(one.records.len() <= limit);
            assert_eq!(one.records.len() as u64 + one.skipped, stream.len() as u64);
            assert_eq!(one.records.len() % 8, 0, "whole instants: limit {limit}");
            assert!(
                one.records
                    .windows(2)
                    .all(|w| (w[0].0, w[0].1.node()) <= (w[1].0, w[1].1.node()))
            );
        }
    }
}
