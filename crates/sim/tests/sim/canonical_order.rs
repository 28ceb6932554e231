//! The scheduler's canonical order (`engine::sched`): at one instant, what two hosts do does
//! not depend on which of them got to do it first. Two senders whose frames reach a switch at
//! the same picosecond share its egress toward one receiver; the run is the same whichever
//! sender's application posted first — what a fabric split across threads needs, since there
//! "first" is whichever thread got there.

use engine::Budget;
use fabric::{FabricConfig, LinkConfig, Topology};
use rdmalab::world::{Connected, RcOptions, World};
use units::{Bandwidth, SimDuration, SimTime};

/// Everything the run shows: each sender's completions as (sender, wr_id, time in ps), the
/// events it took and every port's counters.
type Outcome = (Vec<(usize, u64, u64)>, u64, Vec<String>);

/// Hosts 0 and 1 each WRITE eight 64 KiB messages to host 2 through one switch, posted at
/// the same instant, host `first` first.
fn incast(first: usize) -> Outcome {
    let topo = Topology::star(3, LinkConfig::new(Bandwidth::gbps(100), 3)).unwrap();
    let mut w = World::new(
        &topo,
        FabricConfig::default(),
        Default::default(),
        Default::default(),
    )
    .unwrap();
    const MSG: u64 = 64 << 10;
    let conns: Vec<Connected> = (0..2)
        .map(|s| {
            w.connect_rc_buffered(s, 2, &RcOptions::default(), MSG)
                .unwrap()
        })
        .collect();
    let start = w.now();
    for s in [first, 1 - first] {
        w.post_writes(&conns[s], &[MSG; 8], true).unwrap();
    }
    let mut done = Vec::new();
    let limit = start + SimDuration::from_ms(5);
    while done.len() < 16 && w.now() < limit {
        let ready = |w: &World| {
            conns.iter().any(|c| {
                let e = c.ends.0;
                w.verbs_ref(e.host).cq(e.cq).is_some_and(|q| !q.is_empty())
            })
        };
        w.run_until_cond(limit, &Budget::default(), ready).unwrap();
        let now = w.now().saturating_duration_since(SimTime::ZERO).as_ps();
        for (s, c) in conns.iter().enumerate() {
            let e = c.ends.0;
            for wc in w.poll_cq(e.host, e.cq, 16).unwrap() {
                assert_eq!(wc.status, verbs::WcStatus::Success);
                done.push((s, wc.wr_id, now));
            }
        }
    }
    assert_eq!(done.len(), 16, "every WRITE completed: {done:?}");
    let ports = w
        .fabric()
        .ports()
        .map(|(node, port, _, stats)| format!("{node:?} {port:?} {stats:?}"))
        .collect();
    (done, w.events_processed(), ports)
}

#[test]
fn which_host_posted_first_at_one_instant_changes_nothing() {
    let a = incast(0);
    let b = incast(1);
    // The two senders' frames do meet at the switch: its egress to host 2 queued.
    assert!(
        a.2.iter()
            .any(|p| !p.contains("peak_queue: [0, 0, 0, 0, 0, 0, 0, 0]")),
        "{:#?}",
        a.2
    );
    assert_eq!(a, b);
}
