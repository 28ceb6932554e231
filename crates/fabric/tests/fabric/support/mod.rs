//! What the fabric's integration tests share: the link, the flow and the fabric they build.
#![allow(dead_code)] // each test file uses some of these

use fabric::{Fabric, FabricConfig, LinkConfig, RawFlow, SwitchConfig, Topology};
use units::{Bandwidth, NodeId, Priority, SimTime};

/// The priority the tests' flows use (RoCE's usual lossless class).
pub const PRIO: Priority = Priority::of(3);

/// A 100 Gb/s link over `cable_m` metres of cable.
pub fn link(cable_m: u64) -> LinkConfig {
    LinkConfig::new(Bandwidth::gbps(100), cable_m)
}

/// A raw, ECN-capable flow of `bytes` in frames of `mtu` payload bytes on [`PRIO`], from time
/// zero.
pub fn flow(src: NodeId, dst: NodeId, bytes: u64, mtu: u32) -> RawFlow {
    RawFlow {
        src,
        dst,
        bytes,
        payload_mtu: mtu,
        priority: PRIO,
        start: SimTime::ZERO,
        ecn_capable: true,
    }
}

/// A fabric over `topo` with switch settings `switch` and defaults elsewhere.
pub fn with_switch(topo: &Topology, switch: SwitchConfig) -> Fabric {
    Fabric::new(
        topo,
        FabricConfig {
            switch,
            ..Default::default()
        },
    )
    .expect("a valid configuration")
}
