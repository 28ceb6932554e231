//! Splitting a fabric into partitions for a conservative parallel run (issue 24; the plan is in
//! `docs/ARCHITECTURE.md` §9): which node each partition owns, and the *lookahead*, the
//! shortest propagation delay of a link between two partitions — the stretch of simulated
//! time each partition may run alone, since nothing it receives from another can land sooner.
//!
//! The rules, topology-agnostic and deterministic (a function of the topology and the count
//! asked for, nothing else):
//! 1. A *rack* is a switch with its hosts: hosts always run with their switch (every frame a
//!    host sends crosses that one link first). A host on no switch, or a switch with no host,
//!    is a rack of its own.
//! 2. Nodes joined by a link with no propagation delay stay together: a zero-delay link gives
//!    no lookahead.
//! 3. Racks with hosts are dealt, in node order, into `parts` runs of consecutive racks with
//!    as equal host counts as whole racks allow. The builders number racks pod by pod (fat
//!    tree) and leaf by leaf (leaf-spine), so a run is whole pods or whole leaves when the
//!    counts divide.
//! 4. The rest (aggregation, core, spine switches) join, nearest the racks first, the
//!    partition most of their already placed neighbours are in; a tie (a core or spine switch
//!    wired to every pod alike) goes to the partition with the fewest such switches so far,
//!    then the lowest: an aggregation switch stays with its pod, cores and spines spread.
//!
//! Simplification: the split balances hosts, not work; a skewed workload (an incast) loads its
//! receiver's partition more. Nothing here runs in parallel yet: this is the split the engine
//! will use.

use crate::topology::{NodeKind, Topology};
use std::collections::VecDeque;
use units::{NodeId, SimDuration};

/// Which partition owns each node, and what the split allows.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Partitioning {
    /// Partition of each node, indexed by [`NodeId`].
    pub of_node: Vec<u32>,
    /// Partitions made (at most the count asked for, at least 1).
    pub parts: u32,
    /// The shortest propagation delay of a link between partitions; `None` with one
    /// partition.
    pub lookahead: Option<SimDuration>,
    /// Links between partitions: the frames that cross them are exchanged at window
    /// boundaries.
    pub cut_links: usize,
}

impl Partitioning {
    /// Splits `topo` into at most `parts` partitions (0 is taken as 1) by the module's rules.
    pub fn new(topo: &Topology, parts: u32) -> Partitioning {
        let n = topo.nodes.len();
        let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
        for l in &topo.links {
            adj[l.a.index()].push(l.b.index());
            adj[l.b.index()].push(l.a.index());
        }
        // Rules 1 and 2: racks, merged across zero-delay links.
        let mut group = UnionFind::new(n);
        for l in &topo.links {
            let (a, b) = (l.a.index(), l.b.index());
            let host_link = [a, b].iter().any(|&x| topo.nodes[x].kind == NodeKind::Host);
            if host_link || l.config.propagation() == SimDuration::ZERO {
                group.union(a, b);
            }
        }
        // Rule 3: the groups with hosts, in order of their first node, dealt by host count.
        let mut hosts_in = vec![0u64; n];
        for (i, node) in topo.nodes.iter().enumerate() {
            if node.kind == NodeKind::Host {
                hosts_in[group.find(i)] += 1;
            }
        }
        let mut racks: Vec<usize> = Vec::new();
        let mut listed = vec![false; n];
        for i in 0..n {
            let g = group.find(i);
            if hosts_in[g] > 0 && !listed[g] {
                listed[g] = true;
                racks.push(g);
            }
        }
        let parts = parts.max(1).min(racks.len().max(1) as u32);
        let total: u64 = racks.iter().map(|&g| hosts_in[g]).sum();
        let mut part_of_group: Vec<Option<u32>> = vec![None; n];
        let mut before = 0u64;
        for &g in &racks {
            // The rack goes where its first host falls in an even split of the hosts.
            let p = (before * u64::from(parts) / total.max(1)) as u32;
            part_of_group[g] = Some(p);
            before += hosts_in[g];
        }
        let mut of_node: Vec<Option<u32>> = (0..n).map(|i| part_of_group[group.find(i)]).collect();
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); n];
        for i in 0..n {
            let g = group.find(i);
            members[g].push(i);
        }
        // Rule 4: the remaining nodes, breadth first from the placed ones.
        let mut spread = vec![0u32; parts as usize];
        let mut queue: VecDeque<usize> = VecDeque::new();
        let mut queued = vec![false; n];
        for i in 0..n {
            if of_node[i].is_some() {
                for &j in &adj[i] {
                    if of_node[j].is_none() && !queued[j] {
                        queued[j] = true;
                        queue.push_back(j);
                    }
                }
            }
        }
        while let Some(i) = queue.pop_front() {
            let mut votes = vec![0u32; parts as usize];
            for &j in &adj[i] {
                if let Some(p) = of_node[j] {
                    votes[p as usize] += 1;
                }
            }
            let most = votes.iter().copied().max().unwrap_or(0);
            let p = (0..parts)
                .filter(|&p| votes[p as usize] == most)
                .min_by_key(|&p| (spread[p as usize], p))
                .unwrap_or(0);
            spread[p as usize] += 1;
            // The whole zero-delay group goes with it.
            for &k in &members[group.find(i)] {
                of_node[k].get_or_insert(p);
            }
            for &j in &adj[i] {
                if of_node[j].is_none() && !queued[j] {
                    queued[j] = true;
                    queue.push_back(j);
                }
            }
        }
        // Nodes no placed node reaches (an island of switches) run in partition 0.
        let of_node: Vec<u32> = of_node.into_iter().map(|p| p.unwrap_or(0)).collect();
        let cut: Vec<SimDuration> = topo
            .links
            .iter()
            .filter(|l| of_node[l.a.index()] != of_node[l.b.index()])
            .map(|l| l.config.propagation())
            .collect();
        Partitioning {
            parts,
            lookahead: cut.iter().copied().min(),
            cut_links: cut.len(),
            of_node,
        }
    }

    /// The partition of `node`.
    pub fn part(&self, node: NodeId) -> u32 {
        self.of_node[node.index()]
    }
}

/// Disjoint sets over node indices, with path halving.
struct UnionFind {
    parent: Vec<usize>,
}

impl UnionFind {
    fn new(n: usize) -> UnionFind {
        UnionFind {
            parent: (0..n).collect(),
        }
    }

    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }

    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        // The lower index is the root, so a group is named by its first node.
        if ra < rb {
            self.parent[rb] = ra;
        } else {
            self.parent[ra] = rb;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::LinkConfig;
    use units::Bandwidth;

    fn link(cable_m: u64) -> LinkConfig {
        LinkConfig::new(Bandwidth::gbps(100), cable_m)
    }

    fn named(t: &Topology, p: &Partitioning, prefix: &str) -> Vec<u32> {
        t.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.name.starts_with(prefix))
            .map(|(i, _)| p.of_node[i])
            .collect()
    }

    /// A k = 4 fat tree in four partitions: one pod each (hosts, edges and aggregation
    /// switches together), the four core switches one per partition; the lookahead is a
    /// hop's 1 µs (200 m of fibre).
    #[test]
    fn a_fat_tree_splits_by_pod_with_the_cores_spread() {
        let t = Topology::fat_tree(4, link(200)).unwrap();
        let p = Partitioning::new(&t, 4);
        assert_eq!(p.parts, 4);
        for pod in 0..4u32 {
            let nodes = named(&t, &p, &format!("pod{pod}-"));
            assert_eq!(nodes.len(), 4 + 2 + 2, "pod {pod}");
            assert!(nodes.iter().all(|&x| x == pod), "pod {pod}: {nodes:?}");
        }
        let mut cores = named(&t, &p, "core");
        cores.sort();
        assert_eq!(cores, [0, 1, 2, 3]);
        assert_eq!(p.lookahead, Some(SimDuration::from_us(1)));
        // Every agg–core link crosses, except each core's link into its own pod: 16 − 4.
        assert_eq!(p.cut_links, 12);
    }

    /// Two partitions of a k = 4 fat tree take two whole pods each.
    #[test]
    fn fewer_partitions_take_whole_pods() {
        let t = Topology::fat_tree(4, link(200)).unwrap();
        let p = Partitioning::new(&t, 2);
        for pod in 0..4u32 {
            let nodes = named(&t, &p, &format!("pod{pod}-"));
            assert!(nodes.iter().all(|&x| x == pod / 2), "pod {pod}: {nodes:?}");
        }
    }

    /// A leaf-spine splits by leaf; spines spread; a leaf's hosts stay with it.
    #[test]
    fn a_leaf_spine_splits_by_leaf() {
        let t = Topology::leaf_spine(4, 2, 3, link(3), link(10)).unwrap();
        let p = Partitioning::new(&t, 2);
        for leaf in 0..4u32 {
            let nodes = named(&t, &p, &format!("leaf{leaf}"));
            assert_eq!(nodes.len(), 1 + 3);
            assert!(
                nodes.iter().all(|&x| x == leaf / 2),
                "leaf {leaf}: {nodes:?}"
            );
        }
        let mut spines = named(&t, &p, "spine");
        spines.sort();
        assert_eq!(spines, [0, 1]);
        // 10 m of fibre between a leaf and a spine: 50 ns.
        assert_eq!(p.lookahead, Some(SimDuration::from_ns(50)));
    }

    /// More partitions than racks make one per rack; one rack is one partition, with no
    /// lookahead to speak of.
    #[test]
    fn the_count_is_capped_by_the_racks() {
        let t = Topology::leaf_spine(3, 1, 2, link(3), link(10)).unwrap();
        assert_eq!(Partitioning::new(&t, 16).parts, 3);
        let star = Topology::star(8, link(3)).unwrap();
        let p = Partitioning::new(&star, 4);
        assert_eq!((p.parts, p.lookahead, p.cut_links), (1, None, 0));
        assert!(p.of_node.iter().all(|&x| x == 0));
        assert_eq!(Partitioning::new(&star, 0).parts, 1);
    }

    /// Zero-delay links between the leaves and the spines keep the whole fabric in one
    /// partition: cutting one would give no lookahead.
    #[test]
    fn a_zero_delay_link_is_never_cut() {
        let t = Topology::leaf_spine(4, 2, 2, link(3), link(0)).unwrap();
        let p = Partitioning::new(&t, 4);
        assert_eq!(p.parts, 1);
        assert_eq!(p.cut_links, 0);
        assert!(
            p.of_node.iter().all(|&x| x == p.of_node[0]),
            "{:?}",
            p.of_node
        );
        assert_eq!(p.lookahead, None);
    }

    /// The 1024-host fat tree of the scaling runs in two: eight pods each, a 1 µs lookahead.
    #[test]
    fn the_1024_host_fat_tree_halves_by_pods() {
        let t = Topology::fat_tree(16, link(200)).unwrap();
        let p = Partitioning::new(&t, 2);
        let hosts: Vec<u32> = t.hosts().iter().map(|&h| p.part(h)).collect();
        assert_eq!(hosts.iter().filter(|&&x| x == 0).count(), 512);
        for pod in 0..16u32 {
            let nodes = named(&t, &p, &format!("pod{pod}-"));
            assert!(nodes.iter().all(|&x| x == pod / 8), "pod {pod}");
        }
        assert_eq!(p.lookahead, Some(SimDuration::from_us(1)));
        // 64 cores, 32 each; every core has 8 of its 16 pod links in the other half.
        assert_eq!(p.cut_links, 64 * 8);
    }

    /// The split is a function of the topology and the count alone.
    #[test]
    fn the_split_is_deterministic() {
        let t = Topology::fat_tree(8, link(200)).unwrap();
        assert_eq!(Partitioning::new(&t, 3), Partitioning::new(&t, 3));
        let p = Partitioning::new(&t, 3);
        let hosts: Vec<u32> = t.hosts().iter().map(|&h| p.part(h)).collect();
        let count = |k| hosts.iter().filter(|&&x| x == k).count();
        // 8 pods of 16 hosts over 3: racks of 4 hosts dealt evenly (44, 40, 44 or so).
        let counts = [count(0), count(1), count(2)];
        assert!(counts.iter().all(|&c| (40..=48).contains(&c)), "{counts:?}");
    }
}
