//! Topologies: which nodes exist and which ports are cabled together.
//!
//! A [`Topology`] is plain data (nodes and links); the builders produce the shapes the course
//! and the experiments use. Ports are numbered per node in the order links are added, so a
//! host's NIC is always its port 0.
//!
//! | builder | hosts | switches | links |
//! |---|---|---|---|
//! | [`Topology::back_to_back`] | 2 | 0 | 1 |
//! | [`Topology::star`] (pair through one switch: `star(2)`; N→1 incast: `star(N+1)`) | n | 1 | n |
//! | [`Topology::dumbbell`] | 2n | 2 | 2n+1 |
//! | [`Topology::ring`] (the PFC deadlock lab's fabric) | n | n | 2n |
//! | [`Topology::leaf_spine`] | l·h | l+s | l·h + l·s |
//! | [`Topology::fat_tree`] (k-ary, Al-Fares et al. SIGCOMM 2008) | k³/4 | 5k²/4 | 3k³/4 |

use crate::config::{ConfigError, LinkConfig, check_range};
use units::{LinkId, NodeId};

/// Whether a node forwards frames or ends them.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum NodeKind {
    /// An end host with a NIC (its port 0).
    Host,
    /// A shared-buffer switch.
    Switch,
}

/// One node.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeSpec {
    /// Host or switch.
    pub kind: NodeKind,
    /// A readable name, e.g. `h3` or `pod1-agg0`.
    pub name: String,
}

/// One full-duplex cable between two nodes.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    /// One end.
    pub a: NodeId,
    /// The other end.
    pub b: NodeId,
    /// Rate, length and loss.
    pub config: LinkConfig,
}

/// Nodes and the links between them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Topology {
    /// What the topology is, for reports ("fat-tree k=16").
    pub name: String,
    /// Nodes, indexed by [`NodeId`].
    pub nodes: Vec<NodeSpec>,
    /// Links, indexed by [`LinkId`].
    pub links: Vec<LinkSpec>,
}

/// Upper bound on hosts, so a typo cannot ask for a billion-node fabric.
pub const MAX_HOSTS: u64 = 65_536;

impl Topology {
    /// An empty topology called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Topology {
            name: name.into(),
            nodes: Vec::new(),
            links: Vec::new(),
        }
    }
    /// Adds a host.
    pub fn add_host(&mut self, name: impl Into<String>) -> NodeId {
        self.add(NodeKind::Host, name.into())
    }
    /// Adds a switch.
    pub fn add_switch(&mut self, name: impl Into<String>) -> NodeId {
        self.add(NodeKind::Switch, name.into())
    }
    fn add(&mut self, kind: NodeKind, name: String) -> NodeId {
        let id = NodeId(self.nodes.len() as u32);
        self.nodes.push(NodeSpec { kind, name });
        id
    }
    /// Cables `a` to `b`; each gets its next free port.
    pub fn connect(&mut self, a: NodeId, b: NodeId, config: LinkConfig) -> LinkId {
        let id = LinkId(self.links.len() as u32);
        self.links.push(LinkSpec { a, b, config });
        id
    }
    /// The hosts, in node order.
    pub fn hosts(&self) -> Vec<NodeId> {
        self.of_kind(NodeKind::Host)
    }
    /// The switches, in node order.
    pub fn switches(&self) -> Vec<NodeId> {
        self.of_kind(NodeKind::Switch)
    }
    fn of_kind(&self, kind: NodeKind) -> Vec<NodeId> {
        (0..self.nodes.len() as u32)
            .map(NodeId)
            .filter(|n| self.nodes[n.index()].kind == kind)
            .collect()
    }
    /// Ports of `node` (its link count).
    pub fn degree(&self, node: NodeId) -> usize {
        self.links
            .iter()
            .filter(|l| l.a == node || l.b == node)
            .count()
    }

    /// Two hosts cabled NIC to NIC.
    pub fn back_to_back(link: LinkConfig) -> Result<Self, ConfigError> {
        link.validate()?;
        let mut t = Topology::new("back-to-back");
        let a = t.add_host("h0");
        let b = t.add_host("h1");
        t.connect(a, b, link);
        Ok(t)
    }

    /// `n` hosts on one switch: `star(2, ..)` is the lessons' pair through a switch, and
    /// `star(N + 1, ..)` is an N→1 incast (hosts 1..=N send to host 0).
    pub fn star(n: u64, link: LinkConfig) -> Result<Self, ConfigError> {
        check_range("topology.hosts", n, 2, 4_096)?;
        link.validate()?;
        let mut t = Topology::new(format!("star of {n} hosts"));
        let sw = t.add_switch("sw0");
        for i in 0..n {
            let h = t.add_host(format!("h{i}"));
            t.connect(h, sw, link.clone());
        }
        Ok(t)
    }

    /// An N→1 incast: `senders` hosts and one receiver (host 0) on one switch.
    pub fn incast(senders: u64, link: LinkConfig) -> Result<Self, ConfigError> {
        check_range("topology.senders", senders, 1, 4_095)?;
        let mut t = Topology::star(senders + 1, link)?;
        t.name = format!("{senders}→1 incast");
        Ok(t)
    }

    /// `n` hosts on each of two switches joined by one `bottleneck` link.
    pub fn dumbbell(
        n: u64,
        host_link: LinkConfig,
        bottleneck: LinkConfig,
    ) -> Result<Self, ConfigError> {
        check_range("topology.hosts_per_side", n, 1, 2_048)?;
        host_link.validate()?;
        bottleneck.validate()?;
        let mut t = Topology::new(format!("dumbbell {n}+{n}"));
        let left = t.add_switch("left");
        let right = t.add_switch("right");
        t.connect(left, right, bottleneck);
        for side in [left, right] {
            for i in 0..n {
                let h = t.add_host(format!("{}-h{i}", if side == left { "l" } else { "r" }));
                t.connect(h, side, host_link.clone());
            }
        }
        Ok(t)
    }

    /// `n` switches in a ring (switch i cabled to switch i+1, the last to the first), one host
    /// on each: host i is `h{i}` on `sw{i}`. With shortest-path routing and n ≥ 5, traffic
    /// from each host to the host two switches on has one path, clockwise, and those paths
    /// close a cycle of buffer dependencies: the PFC deadlock lab's fabric.
    pub fn ring(n: u64, link: LinkConfig) -> Result<Self, ConfigError> {
        check_range("topology.switches", n, 3, 64)?;
        link.validate()?;
        let mut t = Topology::new(format!("ring of {n} switches"));
        let sws: Vec<_> = (0..n).map(|i| t.add_switch(format!("sw{i}"))).collect();
        for i in 0..n as usize {
            t.connect(sws[i], sws[(i + 1) % n as usize], link.clone());
        }
        for (i, &sw) in sws.iter().enumerate() {
            let h = t.add_host(format!("h{i}"));
            t.connect(h, sw, link.clone());
        }
        Ok(t)
    }

    /// A two-tier Clos: every leaf connects to every spine.
    pub fn leaf_spine(
        leaves: u64,
        spines: u64,
        hosts_per_leaf: u64,
        host_link: LinkConfig,
        fabric_link: LinkConfig,
    ) -> Result<Self, ConfigError> {
        check_range("topology.leaves", leaves, 1, 1_024)?;
        check_range("topology.spines", spines, 1, 256)?;
        check_range("topology.hosts_per_leaf", hosts_per_leaf, 1, 256)?;
        check_range("topology.hosts", leaves * hosts_per_leaf, 1, MAX_HOSTS)?;
        host_link.validate()?;
        fabric_link.validate()?;
        let mut t = Topology::new(format!(
            "leaf-spine {leaves}×{spines}, {hosts_per_leaf} hosts/leaf"
        ));
        let leaf_ids: Vec<_> = (0..leaves)
            .map(|i| t.add_switch(format!("leaf{i}")))
            .collect();
        let spine_ids: Vec<_> = (0..spines)
            .map(|i| t.add_switch(format!("spine{i}")))
            .collect();
        for (li, &leaf) in leaf_ids.iter().enumerate() {
            for hi in 0..hosts_per_leaf {
                let h = t.add_host(format!("leaf{li}-h{hi}"));
                t.connect(h, leaf, host_link.clone());
            }
            for &spine in &spine_ids {
                t.connect(leaf, spine, fabric_link.clone());
            }
        }
        Ok(t)
    }

    /// A three-tier k-ary fat tree (Al-Fares, Loukissas, Vahdat, SIGCOMM 2008): k pods of k/2
    /// edge and k/2 aggregation switches, (k/2)² core switches, k³/4 hosts; every link the
    /// same. k must be even; k = 16 gives 1024 hosts.
    pub fn fat_tree(k: u64, link: LinkConfig) -> Result<Self, ConfigError> {
        if !k.is_multiple_of(2) || !(2..=64).contains(&k) {
            return Err(ConfigError::new(
                "topology.k",
                k,
                "an even number in 2..=64",
            ));
        }
        check_range("topology.hosts", k * k * k / 4, 1, MAX_HOSTS)?;
        link.validate()?;
        let half = k / 2;
        let mut t = Topology::new(format!("fat-tree k={k}"));
        // Hosts first, so host ordinals follow pod order.
        let mut hosts = Vec::new();
        for pod in 0..k {
            for e in 0..half {
                for h in 0..half {
                    hosts.push(t.add_host(format!("pod{pod}-e{e}-h{h}")));
                }
            }
        }
        let mut edges = Vec::new();
        let mut aggs = Vec::new();
        for pod in 0..k {
            for e in 0..half {
                edges.push(t.add_switch(format!("pod{pod}-edge{e}")));
            }
            for a in 0..half {
                aggs.push(t.add_switch(format!("pod{pod}-agg{a}")));
            }
        }
        let cores: Vec<_> = (0..half * half)
            .map(|c| t.add_switch(format!("core{c}")))
            .collect();
        for pod in 0..k {
            for e in 0..half {
                let edge = edges[(pod * half + e) as usize];
                for h in 0..half {
                    t.connect(
                        hosts[((pod * half + e) * half + h) as usize],
                        edge,
                        link.clone(),
                    );
                }
                for a in 0..half {
                    t.connect(edge, aggs[(pod * half + a) as usize], link.clone());
                }
            }
            for a in 0..half {
                let agg = aggs[(pod * half + a) as usize];
                for c in 0..half {
                    t.connect(agg, cores[(a * half + c) as usize], link.clone());
                }
            }
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use units::Bandwidth;

    fn link() -> LinkConfig {
        LinkConfig::new(Bandwidth::gbps(100), 3)
    }

    #[test]
    fn fat_tree_counts() {
        for k in [4u64, 8, 16] {
            let t = Topology::fat_tree(k, link()).unwrap();
            assert_eq!(t.hosts().len() as u64, k * k * k / 4);
            assert_eq!(t.switches().len() as u64, 5 * k * k / 4);
            assert_eq!(t.links.len() as u64, 3 * k * k * k / 4);
            // Every switch has exactly k ports, every host one.
            for s in t.switches() {
                assert_eq!(t.degree(s) as u64, k, "{}", t.nodes[s.index()].name);
            }
        }
        let t = Topology::fat_tree(16, link()).unwrap();
        assert_eq!(t.hosts().len(), 1024);
        assert_eq!(t.switches().len(), 320);
        assert_eq!(t.links.len(), 3072);
    }

    #[test]
    fn odd_or_absurd_k_is_an_error() {
        let e = Topology::fat_tree(7, link()).unwrap_err();
        assert_eq!(e.field, "topology.k");
        assert!(e.to_string().contains("even"));
        assert!(Topology::fat_tree(0, link()).is_err());
        assert!(Topology::fat_tree(66, link()).is_err());
    }

    #[test]
    fn other_shapes() {
        let t = Topology::leaf_spine(4, 2, 8, link(), link()).unwrap();
        assert_eq!(
            (t.hosts().len(), t.switches().len(), t.links.len()),
            (32, 6, 40)
        );
        let t = Topology::dumbbell(3, link(), link()).unwrap();
        assert_eq!(
            (t.hosts().len(), t.switches().len(), t.links.len()),
            (6, 2, 7)
        );
        let t = Topology::incast(8, link()).unwrap();
        assert_eq!(t.hosts().len(), 9);
        assert_eq!(Topology::back_to_back(link()).unwrap().links.len(), 1);
        assert_eq!(
            Topology::star(1, link()).unwrap_err().field,
            "topology.hosts"
        );
        let zero = LinkConfig::new(Bandwidth::from_bps(1).unwrap(), 3);
        assert_eq!(
            Topology::star(2, zero).unwrap_err().field,
            "link.bandwidth_bps"
        );
    }
}
