//! Issue 24: a world split across threads (`World::new_partitioned`) is the same world. A
//! leaf-spine incast with PFC and DCQCN (twelve senders on three leaves writing to one host of
//! the fourth) runs on 1, 2 and 4 threads; everything a report could read comes out the same:
//! the completions seen at each step, the clock and the events, the fabric's counters and every
//! port's, each sender's DCQCN state and requester counters, the receiver's CNP counts.

use engine::Budget;
use fabric::{EcnConfig, FabricConfig, LinkConfig, PfcConfig, SwitchConfig, Topology};
use rdmalab::world::{RcOptions, World};
use transport::roce::dcqcn::DcqcnParams;
use units::{Bandwidth, SimDuration, SimTime};

/// What the incast did, as comparable values.
#[derive(Debug, PartialEq)]
struct Outcome {
    partitions: u32,
    completions_by_step: Vec<u64>,
    end: SimTime,
    events: u64,
    counters: fabric::Counters,
    ports: Vec<fabric::PortStats>,
    senders: Vec<String>,
    receiver_np: Vec<Option<(u64, u64)>>,
}

fn incast(threads: u32) -> Outcome {
    // 100 m of cable per hop: 500 ns, the lookahead.
    let link = LinkConfig::new(Bandwidth::gbps(100), 100);
    let topo = Topology::leaf_spine(4, 2, 4, link.clone(), link).unwrap();
    let flows: Vec<(u32, u32, u64, u32)> = (4..16).map(|s| (s, 0, 256 << 10, 4)).collect();
    run_flows(&topo, &flows, true, threads)
}

/// `flows` as (source, destination, bytes, WRITEs), each its own RC connection, on `topo` with
/// PFC (and DCQCN with ECN marking when `dcqcn`), on `threads` threads; run in steps of 2 µs
/// until nothing is left to do.
fn run_flows(
    topo: &Topology,
    flows: &[(u32, u32, u64, u32)],
    dcqcn: bool,
    threads: u32,
) -> Outcome {
    let switch = SwitchConfig {
        pfc: Some(PfcConfig::new(1 << 3, 30_000, 15_000)),
        ecn: dcqcn.then(|| EcnConfig::dcqcn_paper(1 << 3)),
        ..SwitchConfig::default()
    };
    let cfg = FabricConfig {
        switch,
        ..FabricConfig::default()
    };
    let mut w =
        World::new_partitioned(topo, cfg, Default::default(), Default::default(), threads).unwrap();
    if dcqcn {
        w.set_dcqcn(Some(DcqcnParams::PAPER));
    }
    let mut conns = Vec::new();
    for &(s, d, len, _) in flows {
        let c = w
            .connect_rc_buffered(s, d, &RcOptions::default(), len)
            .unwrap();
        conns.push(c);
    }
    for (c, &(_, _, len, writes)) in conns.iter().zip(flows) {
        w.post_writes(c, &vec![len; writes as usize], true).unwrap();
    }
    let budget = Budget::default();
    let mut completions_by_step = Vec::new();
    let mut t = w.now();
    while w.pending_events() > 0 && completions_by_step.len() < 100_000 {
        t += SimDuration::from_us(2);
        w.run_until(t, &budget).unwrap();
        completions_by_step.push(w.send_completions());
    }
    let joined = w.joined();
    let senders = conns
        .iter()
        .map(|c| {
            let (a, _) = c.ends;
            format!(
                "{:?} {:?}",
                w.dcqcn_state(a.host, a.qpn),
                w.host(a.host).requester_counters(a.qpn)
            )
        })
        .collect();
    let receiver_np = conns
        .iter()
        .map(|c| w.np_counters(c.ends.1.host, c.ends.1.qpn))
        .collect();
    Outcome {
        partitions: w.parallelism().partitions,
        completions_by_step,
        end: w.now(),
        events: w.events_processed(),
        counters: joined.counters(),
        ports: joined.ports().map(|(.., s)| *s).collect(),
        senders,
        receiver_np,
    }
}

#[test]
fn a_leaf_spine_incast_with_pfc_and_dcqcn_is_the_same_on_one_two_and_four_threads() {
    let one = incast(1);
    assert_eq!(one.partitions, 1);
    // The case does what it is for: the incast congests, PFC pauses, DCQCN marks and cuts.
    assert_eq!(
        one.completions_by_step.last(),
        Some(&48),
        "every WRITE completes"
    );
    assert!(one.counters.pauses_sent > 0, "{:?}", one.counters);
    assert!(one.counters.ecn_marks > 0, "{:?}", one.counters);
    assert!(
        one.receiver_np
            .iter()
            .any(|np| np.is_some_and(|(_, cnps)| cnps > 0)),
        "CNPs sent: {:?}",
        one.receiver_np
    );
    for threads in [2, 4] {
        let many = incast(threads);
        assert_eq!(many.partitions, threads);
        assert_eq!(
            Outcome {
                partitions: 1,
                ..many
            },
            one,
            "{threads} threads"
        );
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 12, ..Default::default() })]

    /// Over random small topologies (16-host fat tree, leaf-spines, rings, dumbbells) and RC
    /// workloads, with and without DCQCN, the split world is the whole one.
    #[test]
    fn a_random_world_split_across_threads_is_the_whole_one(
        shape in 0u8..4,
        cable_m in proptest::sample::select(vec![40u64, 200]),
        flows in proptest::collection::vec((0u32..64, 0u32..64, 1u64..200_000, 1u32..4), 1..10),
        dcqcn: bool,
        threads in 2u32..5,
    ) {
        let link = LinkConfig::new(Bandwidth::gbps(100), cable_m);
        let topo = match shape {
            0 => Topology::fat_tree(4, link),
            1 => Topology::leaf_spine(3, 2, 2, link.clone(), link),
            2 => Topology::ring(4, link),
            _ => Topology::dumbbell(3, link.clone(), link),
        }
        .unwrap();
        let hosts = topo.hosts().len() as u32;
        let flows: Vec<_> = flows
            .into_iter()
            .map(|(s, d, len, n)| (s % hosts, d % hosts, len, n))
            .filter(|(s, d, ..)| s != d)
            .collect();
        let one = run_flows(&topo, &flows, dcqcn, 1);
        let many = run_flows(&topo, &flows, dcqcn, threads);
        proptest::prop_assert!(many.partitions > 1, "split in {}", many.partitions);
        proptest::prop_assert_eq!(Outcome { partitions: 1, ..many }, one);
    }
}
