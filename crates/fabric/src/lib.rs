//! The simulated Ethernet fabric: links, queues, shared-buffer switches with ECN and PFC, ECMP,
//! loss and the topologies the lab uses.
//!
//! Map of the crate:
//! - [`config`]: every knob, with units in names and validation that names the field.
//! - [`topology`]: nodes and cables; builders for back-to-back, star (pair, incast), dumbbell,
//!   ring, leaf-spine and k-ary fat-tree.
//! - [`packet`]: the packet metadata the fabric carries (no bytes), the 5-tuple hash.
//! - `body`: how a packet's payload is kept while it is in flight (compact for RC streams).
//! - [`fabric`]: [`Fabric`], the event-driven model of ports, links, switches and NICs.
//! - [`partition`]: [`Partitioning`](partition::Partitioning), the split of a fabric into
//!   partitions for a parallel run, and its lookahead.
//! - [`pfc`]: the PFC headroom formula.
//! - [`capture`]: [`PcapTap`](capture::PcapTap), which writes every frame on chosen ports to a
//!   pcap Wireshark decodes.
//! - [`loss`]: corruption, Gilbert–Elliott bursts and "drop the Nth frame" rules.
//! - `routing`: BFS shortest paths and the ECMP hash.
//!
//! Model sources: IEEE 802.3 (framing overhead), IEEE 802.1Qbb (PFC), RFC 3168 (ECN), Floyd &
//! Jacobson 1993 (RED marking curve), Al-Fares et al. 2008 (fat tree); figures from
//! research/figures.md. Each module lists its simplifications.

mod body;
pub mod capture;
pub mod config;
pub mod fabric;
pub mod loss;
pub mod packet;
pub mod partition;
pub mod pfc;
mod routing;
pub use routing::EcmpHash;
pub mod topology;

pub use config::{
    ConfigError, EcnConfig, FabricConfig, Forwarding, HostConfig, LinkConfig, PfcConfig,
    PfcWatchdog, Scheduling, SwitchConfig,
};
pub use fabric::{
    Counters, Crossing, Delivery, Fabric, FabricEvent, FlowResult, Joined, MAX_FRAME_BYTES,
    OversizeDrop, PfcStats, PortStats, RawFlow, Tap,
};
pub use loss::{DropRule, GilbertElliott, LossConfig};
pub use packet::{
    DataHandle, Ecn, EtherType, FiveTuple, Packet, PacketHandle, PacketSpec, Payload, RoceHeaders,
    roce_frame_len,
};
pub use topology::{LinkSpec, NodeKind, NodeSpec, Topology};
