//! Shortest-path routing with equal-cost multipath.
//!
//! For each destination host, a breadth-first search from that host gives every node's hop
//! distance; a switch's candidate egress ports towards the host are the ports whose neighbour
//! is one hop closer. Hosts never forward, so paths never pass through a host. Among the
//! candidates, a switch picks by the frame's 5-tuple CRC, looked at from its own bit offset and
//! seed (so that successive tiers do not make correlated choices, the "polarisation" problem).
//!
//! The tables are flat arrays indexed by (switch ordinal, host ordinal): no maps, no iteration
//! order to worry about.

/// Candidate egress ports per (switch, destination host).
///
/// Most destinations share their candidate list with others at the same switch (every host
/// not below an edge switch leaves by the same uplinks), so each switch keeps its distinct
/// lists once and the (switch, host) table holds a 16-bit list number: 2 bytes per entry
/// instead of 8, which keeps a 1024-host fat tree's table in cache.
#[derive(Clone, Debug, Default)]
pub(crate) struct Routes {
    hosts: usize,
    /// List number per switch ordinal × hosts + host ordinal, into that switch's lists.
    list: Vec<u16>,
    /// First list of each switch in `lists`.
    first: Vec<u32>,
    /// (offset into `ports`, count) of every switch's distinct lists.
    lists: Vec<(u32, u16)>,
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
        // Per switch: candidate list per host, as port vectors.
        let mut per_switch: Vec<Vec<Vec<u16>>> =
            vec![Vec::with_capacity(host_nodes.len()); switch_nodes.len()];
        for &dst in host_nodes {
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
            for (si, &sw) in switch_nodes.iter().enumerate() {
                let d = dist[sw as usize];
                let mut cands = Vec::new();
                if d != u32::MAX {
                    for &(p, v) in &adj[sw as usize] {
                        if dist[v as usize] == d - 1 {
                            cands.push(p);
                        }
                    }
                }
                per_switch[si].push(cands);
            }
        }
        let mut r = Routes {
            hosts: host_nodes.len(),
            ..Routes::default()
        };
        for lists in per_switch {
            r.first.push(r.lists.len() as u32);
            // Distinct lists in first-seen order (deterministic).
            let mut seen: Vec<Vec<u16>> = Vec::new();
            for cands in lists {
                let id = match seen.iter().position(|l| *l == cands) {
                    Some(i) => i,
                    None => {
                        r.lists.push((r.ports.len() as u32, cands.len() as u16));
                        r.ports.extend_from_slice(&cands);
                        seen.push(cands);
                        seen.len() - 1
                    }
                };
                r.list.push(u16::try_from(id).unwrap_or(u16::MAX));
            }
        }
        r
    }

    /// The candidate ports of switch ordinal `sw` towards host ordinal `host`.
    #[inline]
    pub(crate) fn candidates(&self, sw: usize, host: usize) -> &[u16] {
        let id = self.list[sw * self.hosts + host] as usize;
        let (off, len) = self.lists[self.first[sw] as usize + id];
        &self.ports[off as usize..off as usize + len as usize]
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
