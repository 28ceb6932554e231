//! Shortest-path routing with equal-cost multipath.
//!
//! For each destination host, a breadth-first search from that host gives every node's hop
//! distance; a switch's candidate egress ports towards the host are the ports whose neighbour
//! is one hop closer. Hosts never forward, so paths never pass through a host. Among the
//! candidates, a switch picks by the frame's 5-tuple CRC, looked at from its own bit offset and
//! seed (so that successive tiers do not make correlated choices, the "polarisation" problem).
//!
//! The tables are flat arrays by switch ordinal, each switch's hosts as sorted runs of host
//! ordinals ([`Routes`]): no maps, no iteration order to worry about.

/// Candidate egress ports per (switch, destination host).
///
/// Most destinations share their candidate list with others at the same switch (every host
/// not below an edge switch leaves by the same uplinks), so each switch keeps its distinct
/// lists once. Hosts are numbered as the topology builders add them, switch by switch and pod
/// by pod, so neighbouring hosts share a list too: each switch keeps its host ordinals as runs
/// (first host of the run; the run's list). A fat tree's switch has at most 2k runs (16 for a
/// core switch of k = 16, 10 for the others): a 1024-host fat tree's whole table is about
/// 30 KB instead of 640 KB of one entry per (switch, host), and a lookup stays in a few cache
/// lines instead of missing on a table that does not fit the cache. Any topology works; one
/// whose hosts do not group costs one run per host, as the flat table did.
///
/// A switch's run starts are an array of their own, so that the binary search for a host's
/// run reads one or two cache lines (a fat tree switch's 16 starts are one line; over (start,
/// list) pairs the search was about 3% of a 1024-host fat tree's time, a miss per step), and
/// each run names its list's ports directly.
#[derive(Clone, Debug, Default)]
pub(crate) struct Routes {
    /// First run of each switch (and the end, after the last switch).
    run_start: Vec<u32>,
    /// First host ordinal of every run, each switch's in host order.
    run_first: Vec<u32>,
    /// Candidate ports of every run: (offset into `ports`, count).
    run_ports: Vec<(u32, u32)>,
    /// Each switch's distinct candidate lists, one after another.
    ports: Vec<u16>,
}

impl Routes {
    /// Builds the tables. `adj[node]` lists (local port, neighbour node); `is_host[node]` and
    /// `host_nodes[ordinal]`/`switch_nodes[ordinal]` give the node roles.
    pub(crate) fn build(
        adj: &[Vec<(u16, u32)>],
        is_host: &[bool],
        host_nodes: &[u32],
        switch_nodes: &[u32],
    ) -> Routes {
        let n = adj.len();
        let mut dist = vec![u32::MAX; n];
        let mut queue = Vec::with_capacity(n);
        // Per switch, built host by host: its distinct lists (ports, and where each starts)
        // in first-seen order (deterministic), and its runs. No vector per (switch, host):
        // for 1024 hosts those were 13 MB, allocated and freed while building.
        #[derive(Default)]
        struct Table {
            ports: Vec<u16>,
            lists: Vec<(u32, u32)>,
            runs: Vec<(u32, (u32, u32))>,
        }
        let mut tables: Vec<Table> = switch_nodes.iter().map(|_| Table::default()).collect();
        let mut cands: Vec<u16> = Vec::new();
        for (host, &dst) in host_nodes.iter().enumerate() {
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            queue.clear();
            dist[dst as usize] = 0;
            queue.push(dst);
            let mut head = 0;
            while head < queue.len() {
                let u = queue[head];
                head += 1;
                if is_host[u as usize] && u != dst {
                    continue; // hosts end paths, they do not forward
                }
                for &(_, v) in &adj[u as usize] {
                    if dist[v as usize] == u32::MAX {
                        dist[v as usize] = dist[u as usize] + 1;
                        queue.push(v);
                    }
                }
            }
            for (t, &sw) in tables.iter_mut().zip(switch_nodes) {
                let d = dist[sw as usize];
                cands.clear();
                if d != u32::MAX {
                    for &(p, v) in &adj[sw as usize] {
                        if dist[v as usize] == d - 1 {
                            cands.push(p);
                        }
                    }
                }
                let Table { ports, lists, runs } = t;
                let found = lists
                    .iter()
                    .find(|&&(off, len)| ports[off as usize..(off + len) as usize] == cands[..]);
                let at = match found {
                    Some(&at) => at,
                    None => {
                        let at = (ports.len() as u32, cands.len() as u32);
                        ports.extend_from_slice(&cands);
                        lists.push(at);
                        at
                    }
                };
                // A new run where the list changes from the previous host's.
                if runs.last().map(|&(_, l)| l) != Some(at) {
                    runs.push((host as u32, at));
                }
            }
        }
        // Flattened, each switch's lists and runs together.
        let mut r = Routes::default();
        for t in tables {
            r.run_start.push(r.run_first.len() as u32);
            let base = r.ports.len() as u32;
            r.ports.extend_from_slice(&t.ports);
            for (first, (off, len)) in t.runs {
                r.run_first.push(first);
                r.run_ports.push((base + off, len));
            }
        }
        r.run_start.push(r.run_first.len() as u32);
        r
    }

    /// The candidate ports of switch ordinal `sw` towards host ordinal `host`.
    #[inline]
    pub(crate) fn candidates(&self, sw: usize, host: usize) -> &[u16] {
        let start = self.run_start[sw] as usize;
        let firsts = &self.run_first[start..self.run_start[sw + 1] as usize];
        // How many runs start at or before `host` (the first starts at host 0).
        let n = firsts.partition_point(|&f| f as usize <= host);
        let (off, len) = self.run_ports[start + n.saturating_sub(1)];
        &self.ports[off as usize..(off + len) as usize]
    }
}

/// Picks one of `n` candidates for a frame whose 5-tuple CRC-16 is `hash`, at a switch with
/// `salt`, by the switch's ECMP function.
#[inline]
pub(crate) fn ecmp_pick(hash: u32, salt: u32, n: usize, how: EcmpHash) -> usize {
    match how {
        EcmpHash::Crc16 => {
            // Both CRC bytes folded (the low bits alone do not see the source port's low
            // bits), the switch's seed XORed in: a permutation of the buckets, so flows that
            // spread evenly still do.
            let f = (hash ^ (hash >> 8)) & 0xff;
            ((f ^ (salt & 0xff)) as usize) % n
        }
        EcmpHash::Mixed => {
            // A multiply-xorshift mix (the murmur3 finaliser) so that the salt changes every
            // bit and no two switches make correlated choices.
            let mut x = hash ^ salt;
            x ^= x >> 16;
            x = x.wrapping_mul(0x85eb_ca6b);
            x ^= x >> 13;
            x = x.wrapping_mul(0xc2b2_ae35);
            x ^= x >> 16;
            ((x as u64 * n as u64) >> 32) as usize
        }
    }
}

/// How a switch turns a frame's 5-tuple hash into one of its equal-cost ports.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub enum EcmpHash {
    /// The CRC-16 folded to a byte, XOR the switch's seed, modulo the group: what switch ASICs
    /// do with a CRC. Affine in the 5-tuple, so RoCE QPs of one host (consecutive UDP source
    /// ports) spread evenly over a power-of-two group; the price is that every switch applies
    /// the same linear function, so in a three-tier fabric the upper tier repeats the lower
    /// tier's choice ("polarisation").
    #[default]
    Crc16,
    /// The CRC mixed with the switch's salt through a multiply-xorshift finaliser: no
    /// polarisation, but QPs spread like random throws (8 QPs over 4 paths rarely 2-2-2-2).
    Mixed,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every node's hop distance from `dst`, hosts not forwarding.
    fn distances(adj: &[Vec<(u16, u32)>], is_host: &[bool], dst: u32) -> Vec<u32> {
        let mut d = vec![u32::MAX; adj.len()];
        d[dst as usize] = 0;
        let mut q = std::collections::VecDeque::from([dst]);
        while let Some(u) = q.pop_front() {
            if is_host[u as usize] && u != dst {
                continue;
            }
            for &(_, v) in &adj[u as usize] {
                if d[v as usize] == u32::MAX {
                    d[v as usize] = d[u as usize] + 1;
                    q.push_back(v);
                }
            }
        }
        d
    }

    /// The runs give, for every (switch, host), the ports one hop closer: on a small graph
    /// whose host numbering interleaves switches, so lists change from host to host.
    #[test]
    fn runs_give_the_shortest_path_ports_for_every_switch_and_host() {
        // Switches 0, 1, 2 in a line (0–1–2) and 0–2 as well; hosts 3..=8 on them, numbered
        // so that neighbouring hosts sit on different switches.
        let links = [
            (0, 1),
            (1, 2),
            (0, 2),
            (3, 0),
            (4, 2),
            (5, 1),
            (6, 0),
            (7, 0),
            (8, 2),
        ];
        let adj = cabled(9, links);
        let is_host: Vec<bool> = (0..9).map(|n| n >= 3).collect();
        let hosts: Vec<u32> = (3..9).collect();
        let switches = [0u32, 1, 2];
        let r = check_every_lookup(&adj, &is_host, &hosts, &switches);
        // Hosts 6 and 7 share switch 0: one run at switch 0 covers both.
        assert!(r.run_first.len() < switches.len() * hosts.len());
    }

    /// A switch with many runs: two switches, 100 hosts attached to them alternately, so every
    /// host starts a new run at both.
    #[test]
    fn many_runs_are_searched() {
        let adj = cabled(
            102,
            [(0, 1)].into_iter().chain((2..102).map(|h| (h, h % 2))),
        );
        let is_host: Vec<bool> = (0..102).map(|n| n >= 2).collect();
        let hosts: Vec<u32> = (2..102).collect();
        let r = check_every_lookup(&adj, &is_host, &hosts, &[0, 1]);
        assert_eq!(r.run_first.len(), 2 * hosts.len());
    }

    /// The adjacency of `n` nodes joined by `links`, each end's port numbered in cabling order.
    fn cabled(n: usize, links: impl IntoIterator<Item = (u32, u32)>) -> Vec<Vec<(u16, u32)>> {
        let mut adj: Vec<Vec<(u16, u32)>> = vec![Vec::new(); n];
        for (a, b) in links {
            let pa = adj[a as usize].len() as u16;
            let pb = adj[b as usize].len() as u16;
            adj[a as usize].push((pa, b));
            adj[b as usize].push((pb, a));
        }
        adj
    }

    /// Builds the routes and checks that every (switch, host) lookup gives the ports one hop
    /// closer to the host.
    fn check_every_lookup(
        adj: &[Vec<(u16, u32)>],
        is_host: &[bool],
        hosts: &[u32],
        switches: &[u32],
    ) -> Routes {
        let r = Routes::build(adj, is_host, hosts, switches);
        for (si, &sw) in switches.iter().enumerate() {
            for (hi, &h) in hosts.iter().enumerate() {
                let d = distances(adj, is_host, h);
                let want: Vec<u16> = adj[sw as usize]
                    .iter()
                    .filter(|&&(_, v)| d[v as usize] + 1 == d[sw as usize])
                    .map(|&(p, _)| p)
                    .collect();
                assert_eq!(r.candidates(si, hi), &want[..], "switch {sw} → host {h}");
            }
        }
        r
    }
}
