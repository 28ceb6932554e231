//! Building a fabric from a topology and its configuration: nodes, ports, links, routes, PFC
//! thresholds and headroom, validated.

use super::*;

impl Fabric {
    /// Builds the fabric, checking every configuration value.
    pub fn new(topology: &Topology, config: FabricConfig) -> Result<Fabric, ConfigError> {
        config.validate()?;
        for l in &topology.links {
            l.config.validate()?;
            for end in [l.a, l.b] {
                if end.index() >= topology.nodes.len() {
                    return Err(ConfigError::new(
                        "topology.links",
                        end,
                        format!("node ids below {}", topology.nodes.len()),
                    ));
                }
            }
            if l.a == l.b {
                return Err(ConfigError::new(
                    "topology.links",
                    l.a,
                    "two different nodes",
                ));
            }
        }
        let streams = RngStreams::new(config.seed);
        let n = topology.nodes.len();
        // Assign ports per node in link order.
        let mut node_ports: Vec<Vec<(LinkId, u32 /*peer node*/, bool /*is a side*/)>> =
            vec![Vec::new(); n];
        for (i, l) in topology.links.iter().enumerate() {
            node_ports[l.a.index()].push((LinkId(i as u32), l.b.0, true));
            node_ports[l.b.index()].push((LinkId(i as u32), l.a.0, false));
        }
        let mut first_port = Vec::with_capacity(n);
        let mut total = 0u32;
        for ps in &node_ports {
            first_port.push(total);
            total += ps.len() as u32;
        }
        if let Some(bad) =
            (0..n).find(|&i| topology.nodes[i].kind == NodeKind::Host && node_ports[i].is_empty())
        {
            return Err(ConfigError::new(
                "topology.nodes",
                &topology.nodes[bad].name,
                "every host cabled to something",
            ));
        }
        if let Some(bad) = (0..n).find(|&i| node_ports[i].len() > u16::MAX as usize) {
            return Err(ConfigError::new(
                "topology.nodes",
                &topology.nodes[bad].name,
                "at most 65535 ports",
            ));
        }
        let response = config
            .switch
            .pfc
            .map(|p| p.response_time)
            .unwrap_or_default();
        let max_frame = config.max_frame_bytes();
        let mut ports = Vec::with_capacity(total as usize);
        for (ni, ps) in node_ports.iter().enumerate() {
            for (pi, &(link, peer_node, is_a)) in ps.iter().enumerate() {
                // The peer's port index: position of this link in the peer's list.
                let peer_local = node_ports[peer_node as usize]
                    .iter()
                    .position(|&(l, _, a)| l == link && a != is_a)
                    .expect("each link appears once at each end");
                let lc = &topology.links[link.index()].config;
                let loss = (!lc.loss.is_lossless()).then(|| {
                    Box::new(LossState::new(
                        streams.stream(StreamId::new(
                            "link-loss",
                            (link.0 as u64) << 1 | is_a as u64,
                        )),
                        &lc.loss,
                    ))
                });
                ports.push(Port {
                    node: NodeId(ni as u32),
                    local: PortId(pi as u16),
                    peer: first_port[peer_node as usize] + peer_local as u32,
                    link,
                    bw: lc.bandwidth,
                    ps_per_byte: (8_000_000_000_000u64.is_multiple_of(lc.bandwidth.bps()))
                        .then(|| 8_000_000_000_000 / lc.bandwidth.bps()),
                    prop: lc.propagation(),
                    prio: Default::default(),
                    backlogged: 0,
                    control: VecDeque::new(),
                    tx_done_pending: false,
                    storming: 0,
                    free_at: SimTime::ZERO,
                    rr: 0,
                    wake_at: SimTime::MAX,
                    headroom: headroom_bytes(lc, max_frame, response),
                    loss,
                    stats: PortStats::default(),
                });
            }
        }
        let mut nodes = Vec::with_capacity(n);
        let mut switches = Vec::new();
        let mut hosts = Vec::new();
        let mut host_nodes = Vec::new();
        let mut switch_nodes = Vec::new();
        let lossless_prios = config
            .switch
            .pfc
            .map(|p| p.priorities.count_ones() as u64)
            .unwrap_or(0);
        for (ni, spec) in topology.nodes.iter().enumerate() {
            let fp = first_port[ni];
            let role = match spec.kind {
                NodeKind::Host => {
                    let ordinal = hosts.len() as u32;
                    hosts.push(HostState {
                        port: fp,
                        active: VecDeque::new(),
                    });
                    host_nodes.push(ni as u32);
                    Role::Host(ordinal)
                }
                NodeKind::Switch => {
                    let ordinal = switches.len();
                    let reserved: u64 = (0..node_ports[ni].len())
                        .map(|p| ports[(fp as usize) + p].headroom * lossless_prios)
                        .sum();
                    let buffer = config.switch.buffer_bytes;
                    if reserved + max_frame > buffer {
                        return Err(ConfigError::new(
                            "switch.buffer_bytes",
                            buffer,
                            format!(
                                "at least {} (PFC headroom of {} bytes for {} ports and {} lossless priorities, plus one frame)",
                                reserved + max_frame,
                                reserved,
                                node_ports[ni].len(),
                                lossless_prios
                            ),
                        ));
                    }
                    switches.push(SwitchState {
                        node: NodeId(ni as u32),
                        ordinal,
                        salt: rng_salt(streams, ordinal as u64),
                        buffer_used: 0,
                        shared_limit: buffer - reserved,
                        ecn_rng: streams.stream(StreamId::new("switch-ecn", ordinal as u64)),
                        draw_rng: streams
                            .stream(StreamId::new("switch-congestion-draw", ordinal as u64)),
                    });
                    switch_nodes.push(ni as u32);
                    Role::Switch(ordinal as u32)
                }
            };
            nodes.push(NodeState {
                role,
                first_port: fp,
            });
        }
        let adj: Vec<Vec<(u16, u32)>> = node_ports
            .iter()
            .map(|ps| {
                ps.iter()
                    .enumerate()
                    .map(|(i, &(_, peer, _))| (i as u16, peer))
                    .collect()
            })
            .collect();
        let is_host: Vec<bool> = topology
            .nodes
            .iter()
            .map(|s| s.kind == NodeKind::Host)
            .collect();
        let routes = Routes::build(&adj, &is_host, &host_nodes, &switch_nodes);
        Ok(Fabric {
            config,
            links: topology.links.iter().map(|l| l.config.clone()).collect(),
            nodes,
            ports,
            switches,
            hosts,
            routes,
            packets: Arena::with_capacity(1024),
            bodies: Arena::with_capacity(1024),
            other_bodies: Arena::new(),
            head_at: Vec::with_capacity(1024),
            made: vec![0; topology.nodes.len()],
            flows: Vec::new(),
            flows_done: 0,
            inbox: VecDeque::new(),
            counters: Counters::default(),
            tracer: Tracer::disabled(),
            tap: None,
            capture: None,
            pfc_side: vec![PfcSide::default(); total as usize],
            route_memo: Cell::new([RouteMemo::NONE; 2]),
            storming_queues: 0,
            host_wakeups: Vec::new(),
            max_frame_bytes: max_frame,
            oversize: None,
            share: None,
        })
    }
}
