//! Wire formats of every frame rdmalab puts on a link, after smoltcp's `wire` layer.
//!
//! Inside the simulator a packet travels as a small `Copy` *representation* (a `Repr`: the
//! parsed header fields plus a payload length) and never as bytes. Bytes are produced only when
//! a run writes a pcap file or a golden test compares frames, and parsed back only by tests and
//! tools. This crate is the bridge between the two.
//!
//! # Map of the crate
//!
//! Link layer
//! - [`ethernet`]: Ethernet II header, [`EthernetAddress`], [`EtherType`], frame-size constants.
//! - [`vlan`]: the IEEE 802.1Q tag (PCP, DEI, VID).
//! - [`pfc`]: MAC control frames: IEEE 802.3 PAUSE and IEEE 802.1Qbb priority flow control.
//!
//! Network and transport layer
//! - [`ipv4`]: IPv4 header (RFC 791) with DSCP and [`Ecn`] (RFC 3168).
//! - [`udp`]: UDP header (RFC 768).
//! - [`tcp`]: TCP header and the options a modern stack sends (RFC 9293, 7323, 2018).
//! - [`checksum`]: the Internet checksum (RFC 1071) and the IPv4 pseudo-header.
//!
//! InfiniBand transport carried by RoCEv2 ([`ib`])
//! - [`ib::opcode`]: the BTH opcode table as transport + operation, and which headers follow.
//! - [`ib::bth`], [`ib::rdeth`], [`ib::deth`], [`ib::feth`], [`ib::reth`], [`ib::atomic_eth`],
//!   [`ib::aeth`], [`ib::atomic_ack_eth`], [`ib::immdt`], [`ib::ieth`]: one module per header.
//! - [`ib::icrc`]: the invariant CRC that ends every RoCEv2 packet.
//! - [`ib::cnp`]: the RoCEv2 congestion notification packet.
//!
//! Whole frames and captures
//! - [`frame`]: composites ([`RoceFrame`], [`CnpFrame`], [`TcpFrame`], [`PfcFrame`], the
//!   [`Frame`] enum) that emit a complete Ethernet frame and parse one back ([`parse_frame`]).
//! - [`pcap`]: a classic pcap writer with nanosecond timestamps, and a small reader.
//! - [`dissect`]: a frame's headers in wire order, field by field (bit offset, width, value,
//!   meaning, defining section), for the web lab's packet inspector.
//!
//! # Two layers per header
//!
//! Each header module has a `Packet<T: AsRef<[u8]>>`, a typed view over a byte buffer whose
//! getters read fields in place, with setters only when the buffer is writable; and a `Repr`,
//! the parsed form, with `parse`, `header_len`/`buffer_len` and `emit`. Field positions live
//! in a private `mod field` in each module, never as bare numbers in code.
//!
//! # Panics
//!
//! - `Packet::new_checked` validates lengths; after it succeeds no getter panics. Untrusted
//!   input must go through it (or through `Repr::parse` / [`parse_frame`], which do).
//! - `Packet::new_unchecked` trusts the caller; getters on a short buffer panic on slicing.
//! - `Repr::emit` does not panic on a buffer of at least `buffer_len()` bytes. Emitting through
//!   `new_checked` is wrong: the buffer being written holds stale bytes, not a valid header.
//! - Fields narrower than their Rust type (a 24-bit PSN in a `u32`, a 3-bit PCP, ...) are
//!   masked when emitted; a debug build asserts they were in range.

pub mod checksum;
pub mod dissect;
pub mod ethernet;
pub mod frame;
#[doc(hidden)]
pub mod fuzz;
pub mod ib;
pub mod ipv4;
pub mod pcap;
pub mod pfc;
pub mod tcp;
pub mod udp;
pub mod vlan;

mod error;
#[cfg(test)]
mod strategies;

pub use error::{Error, Result};
pub use ethernet::{EtherType, EthernetAddress};
pub use frame::{
    CnpFrame, ExtHeaders, Frame, Ip, Link, PfcFrame, RoceFrame, TcpFrame, parse_frame,
};
pub use ib::{Opcode, Operation, Transport};
pub use ipv4::{Ecn, Ipv4Address, Protocol};
pub use pcap::{PcapReader, PcapWriter};

/// A byte range of a header, as used by every `mod field`.
type Field = core::ops::Range<usize>;
/// The bytes from an offset to the end of the buffer.
type Rest = core::ops::RangeFrom<usize>;

/// Big-endian field access shared by the `Packet` views. The callers have checked lengths
/// (`new_checked`) or accepted the documented panic (`new_unchecked`).
mod be {
    use super::Field;

    pub(crate) fn u16_at(data: &[u8], f: Field) -> u16 {
        let b = &data[f];
        u16::from_be_bytes([b[0], b[1]])
    }
    pub(crate) fn u24_at(data: &[u8], f: Field) -> u32 {
        let b = &data[f];
        u32::from_be_bytes([0, b[0], b[1], b[2]])
    }
    pub(crate) fn u32_at(data: &[u8], f: Field) -> u32 {
        let b = &data[f];
        u32::from_be_bytes([b[0], b[1], b[2], b[3]])
    }
    pub(crate) fn u64_at(data: &[u8], f: Field) -> u64 {
        let b = &data[f];
        u64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
    }
    pub(crate) fn set_u16(data: &mut [u8], f: Field, v: u16) {
        data[f].copy_from_slice(&v.to_be_bytes());
    }
    pub(crate) fn set_u24(data: &mut [u8], f: Field, v: u32) {
        data[f].copy_from_slice(&v.to_be_bytes()[1..]);
    }
    pub(crate) fn set_u32(data: &mut [u8], f: Field, v: u32) {
        data[f].copy_from_slice(&v.to_be_bytes());
    }
    pub(crate) fn set_u64(data: &mut [u8], f: Field, v: u64) {
        data[f].copy_from_slice(&v.to_be_bytes());
    }
}
