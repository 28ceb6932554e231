//! InfiniBand transport headers, as RoCEv2 carries them over UDP.
//!
//! Follows the InfiniBand Architecture Specification Vol. 1, chapter 9 (transport layer), and
//! its RoCEv2 annex (A17): a RoCEv2 packet is `Ethernet | IPv4 | UDP (dport 4791) | BTH |
//! extension headers | payload | pad | ICRC`. The project notes in `verbs-spec.md` §6 list the
//! layouts and cite the Linux files (`include/rdma/ib_pack.h`, the rxe driver) they come from.
//!
//! - [`opcode`]: the opcode table and which extension headers each opcode carries.
//! - [`bth`]: the 12-byte base transport header every packet starts with.
//! - Extension headers, in the order they follow the BTH: [`rdeth`], [`deth`], [`feth`],
//!   [`reth`], [`atomic_eth`], [`aeth`], [`atomic_ack_eth`], [`immdt`], [`ieth`].
//! - [`irn`]: rdmalab's extension for selective repeat (placement on every packet, SACK map).
//! - [`icrc`]: the invariant CRC over the packet with its mutable fields masked.
//! - [`cnp`]: the congestion notification packet DCQCN sends back to a marked flow's source.
//! - [`mad`]: the management datagram's common header (vol. 1 §13.4), the payload of a UD SEND
//!   to QP1; [`cm`]: the connection manager's REQ, REP and RTU in it (§12.6) and RDMA-CM's IP
//!   CM private data (Annex A11).
//!
//! Simplifications: no GRH/LRH (RoCEv2 replaces them with IP/UDP), IPv4 only, no XRC
//! (XRCETH) and no RD RESYNC.

pub mod aeth;
pub mod atomic_ack_eth;
pub mod atomic_eth;
pub mod bth;
pub mod cm;
pub mod cnp;
pub mod deth;
pub mod feth;
pub mod icrc;
pub mod ieth;
pub mod immdt;
pub mod irn;
pub mod mad;
pub mod opcode;
pub mod rdeth;
pub mod reth;

pub use opcode::{Opcode, Operation, Transport};

/// The UDP destination port that marks a RoCEv2 packet (IANA "roce").
pub const ROCEV2_UDP_PORT: u16 = 4791;
/// Length of the invariant CRC at the end of every RoCEv2 packet.
pub const ICRC_LEN: usize = 4;
/// Queue pair numbers and packet sequence numbers are 24 bits wide.
pub const U24_MASK: u32 = 0x00ff_ffff;
/// The P_Key of the default partition with full membership, which rxe and most NICs send.
pub const DEFAULT_PKEY: u16 = 0xffff;
