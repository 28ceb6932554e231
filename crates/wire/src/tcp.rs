//! The TCP header and the options a modern stack sends.
//!
//! Follows RFC 9293 §3.1 for the header, RFC 3168 §6.1 for the ECE and CWR flags, RFC 7323 for
//! window scale and timestamps, and RFC 2018 for SACK. The checksum covers the IPv4
//! pseudo-header, the header and the payload; [`Repr::emit`] computes it and [`Repr::parse`]
//! rejects a segment whose checksum is wrong.
//!
//! Options are held in [`Repr`] as typed fields, not as a list. [`Repr::emit`] lays them out
//! the way Linux does, every option 4-byte aligned with NOPs and no EOL needed:
//! `MSS`, then `SACK-permitted + timestamps` (or `NOP NOP` before a lone timestamp, or
//! `NOP NOP` after a lone SACK-permitted), then `NOP + window scale`, then `NOP NOP + SACK`.
//! The option space is 40 bytes, so SACK blocks that do not fit after the other options are
//! left out, newest (first) block kept, as RFC 2018 §3 asks; with timestamps at most three fit.
//!
//! Simplifications: the NS/AE bit and the other reserved bits are written as zero and ignored;
//! unknown options are skipped on parse and never emitted.

use core::fmt;
use core::ops::BitOr;

use crate::checksum;
use crate::ipv4::{Ipv4Address, Protocol};
use crate::{Error, Result, be};

pub(crate) mod field {
    use crate::Field;
    pub const SRC_PORT: Field = 0..2;
    pub const DST_PORT: Field = 2..4;
    pub const SEQ: Field = 4..8;
    pub const ACK: Field = 8..12;
    pub const DATA_OFFSET: usize = 12;
    pub const FLAGS: usize = 13;
    pub const WINDOW: Field = 14..16;
    pub const CHECKSUM: Field = 16..18;
    pub const URGENT: Field = 18..20;

    /// The option bytes of a header `header_len` bytes long.
    pub const fn options(header_len: usize) -> Field {
        URGENT.end..header_len
    }
}

/// Length of a header without options.
pub const HEADER_LEN: usize = field::URGENT.end;
/// Length of a header with the most options the 4-bit data offset allows.
pub const MAX_HEADER_LEN: usize = 60;
/// Room for options.
pub const MAX_OPTIONS_LEN: usize = MAX_HEADER_LEN - HEADER_LEN;
/// The most SACK blocks an option can carry in 40 bytes.
pub const MAX_SACK_BLOCKS: usize = 4;

mod kind {
    pub const END_OF_LIST: u8 = 0;
    pub const NO_OPERATION: u8 = 1;
    pub const MAX_SEGMENT_SIZE: u8 = 2;
    pub const WINDOW_SCALE: u8 = 3;
    pub const SACK_PERMITTED: u8 = 4;
    pub const SACK: u8 = 5;
    pub const TIMESTAMP: u8 = 8;
}

/// The eight TCP control flags (byte 13 of the header), as a small bit set.
#[derive(Clone, Copy, Default, Eq, Hash, PartialEq)]
pub struct Flags(u8);

impl Flags {
    /// No more data from the sender.
    pub const FIN: Flags = Flags(0x01);
    /// Synchronise sequence numbers.
    pub const SYN: Flags = Flags(0x02);
    /// Reset the connection.
    pub const RST: Flags = Flags(0x04);
    /// Push buffered data to the application.
    pub const PSH: Flags = Flags(0x08);
    /// The acknowledgment field is significant.
    pub const ACK: Flags = Flags(0x10);
    /// The urgent pointer is significant.
    pub const URG: Flags = Flags(0x20);
    /// ECN-Echo: the receiver saw a CE mark (RFC 3168; DCTCP echoes every mark).
    pub const ECE: Flags = Flags(0x40);
    /// Congestion window reduced: the sender reacted to ECE.
    pub const CWR: Flags = Flags(0x80);

    const NAMES: [(Flags, &'static str); 8] = [
        (Flags::FIN, "FIN"),
        (Flags::SYN, "SYN"),
        (Flags::RST, "RST"),
        (Flags::PSH, "PSH"),
        (Flags::ACK, "ACK"),
        (Flags::URG, "URG"),
        (Flags::ECE, "ECE"),
        (Flags::CWR, "CWR"),
    ];

    /// No flag set.
    pub const fn empty() -> Flags {
        Flags(0)
    }

    /// The flags encoded in a header's flag byte.
    pub const fn from_bits(bits: u8) -> Flags {
        Flags(bits)
    }

    /// The flag byte.
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// Whether every flag in `other` is set in `self`.
    pub const fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }

    /// `self` with the flags of `other` added.
    pub const fn union(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }
}

impl BitOr for Flags {
    type Output = Flags;
    fn bitor(self, rhs: Flags) -> Flags {
        self.union(rhs)
    }
}

impl fmt::Debug for Flags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Flags(")?;
        let mut first = true;
        for (flag, name) in Self::NAMES {
            if self.contains(flag) {
                if !first {
                    write!(f, " | ")?;
                }
                write!(f, "{name}")?;
                first = false;
            }
        }
        write!(f, ")")
    }
}

/// The RFC 7323 timestamp option: the sender's clock and the echo of the peer's.
#[derive(Clone, Copy, Debug, Default, Eq, Hash, PartialEq)]
pub struct Timestamp {
    /// Timestamp value: the sender's clock when it sent the segment.
    pub tsval: u32,
    /// Timestamp echo reply: the most recent `tsval` received from the peer.
    pub tsecr: u32,
}

/// One option, as found in a header. Parsing does not allocate; unknown options keep their
/// bytes by reference.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum TcpOption<'a> {
    /// Kind 0: the end of the option list.
    EndOfList,
    /// Kind 1: padding.
    NoOperation,
    /// Kind 2: maximum segment size (SYN only).
    MaxSegmentSize(u16),
    /// Kind 3: window scale shift count (SYN only).
    WindowScale(u8),
    /// Kind 4: SACK may be used (SYN only).
    SackPermitted,
    /// Kind 5: up to four (left edge, right edge) blocks of data received out of order.
    SackRange([Option<(u32, u32)>; MAX_SACK_BLOCKS]),
    /// Kind 8: timestamps.
    Timestamp(Timestamp),
    /// Any other kind, with its data (the bytes after kind and length).
    Unknown {
        /// The option kind.
        kind: u8,
        /// The option data.
        data: &'a [u8],
    },
}

impl<'a> TcpOption<'a> {
    /// Read the option at the start of `buffer`; returns the bytes after it and the option.
    /// After an [`EndOfList`](Self::EndOfList) the rest is padding and is returned empty.
    pub fn parse(buffer: &'a [u8]) -> Result<(&'a [u8], TcpOption<'a>)> {
        let Some((&kind, rest)) = buffer.split_first() else {
            return Err(Error::Truncated("TCP option"));
        };
        match kind {
            kind::END_OF_LIST => return Ok((&[], TcpOption::EndOfList)),
            kind::NO_OPERATION => return Ok((rest, TcpOption::NoOperation)),
            _ => {}
        }
        let Some(&len) = rest.first() else {
            return Err(Error::Truncated("TCP option"));
        };
        let len = usize::from(len);
        if len < 2 {
            return Err(Error::Malformed("TCP option length below 2"));
        }
        if buffer.len() < len {
            return Err(Error::Truncated("TCP option"));
        }
        let data = &buffer[2..len];
        let rest = &buffer[len..];
        let option = match (kind, data.len()) {
            (kind::MAX_SEGMENT_SIZE, 2) => {
                TcpOption::MaxSegmentSize(u16::from_be_bytes([data[0], data[1]]))
            }
            (kind::MAX_SEGMENT_SIZE, _) => {
                return Err(Error::Malformed("TCP MSS option length is not 4"));
            }
            (kind::WINDOW_SCALE, 1) => TcpOption::WindowScale(data[0]),
            (kind::WINDOW_SCALE, _) => {
                return Err(Error::Malformed("TCP window scale option length is not 3"));
            }
            (kind::SACK_PERMITTED, 0) => TcpOption::SackPermitted,
            (kind::SACK_PERMITTED, _) => {
                return Err(Error::Malformed(
                    "TCP SACK-permitted option length is not 2",
                ));
            }
            (kind::SACK, n) if n.is_multiple_of(8) && n / 8 <= MAX_SACK_BLOCKS => {
                let mut blocks = [None; MAX_SACK_BLOCKS];
                for (slot, block) in blocks.iter_mut().zip(data.chunks_exact(8)) {
                    let left = be::u32_at(block, 0..4);
                    let right = be::u32_at(block, 4..8);
                    *slot = Some((left, right));
                }
                TcpOption::SackRange(blocks)
            }
            (kind::SACK, _) => {
                return Err(Error::Malformed(
                    "TCP SACK option length is not 2 + 8n, n <= 4",
                ));
            }
            (kind::TIMESTAMP, 8) => TcpOption::Timestamp(Timestamp {
                tsval: be::u32_at(data, 0..4),
                tsecr: be::u32_at(data, 4..8),
            }),
            (kind::TIMESTAMP, _) => {
                return Err(Error::Malformed("TCP timestamp option length is not 10"));
            }
            (kind, _) => TcpOption::Unknown { kind, data },
        };
        Ok((rest, option))
    }

    /// The bytes the option occupies.
    pub fn buffer_len(&self) -> usize {
        match self {
            TcpOption::EndOfList | TcpOption::NoOperation => 1,
            TcpOption::MaxSegmentSize(_) => 4,
            TcpOption::WindowScale(_) => 3,
            TcpOption::SackPermitted => 2,
            TcpOption::SackRange(blocks) => 2 + 8 * blocks.iter().flatten().count(),
            TcpOption::Timestamp(_) => 10,
            TcpOption::Unknown { data, .. } => 2 + data.len(),
        }
    }

    /// Write the option at the start of `buffer` (at least [`buffer_len`](Self::buffer_len)
    /// bytes) and return the bytes after it. A `SackRange` writes its `Some` blocks in order.
    pub fn emit<'b>(&self, buffer: &'b mut [u8]) -> &'b mut [u8] {
        let len = self.buffer_len();
        let (head, rest) = buffer.split_at_mut(len);
        match *self {
            TcpOption::EndOfList => head[0] = kind::END_OF_LIST,
            TcpOption::NoOperation => head[0] = kind::NO_OPERATION,
            TcpOption::MaxSegmentSize(mss) => {
                head[..2].copy_from_slice(&[kind::MAX_SEGMENT_SIZE, 4]);
                be::set_u16(head, 2..4, mss);
            }
            TcpOption::WindowScale(shift) => {
                head.copy_from_slice(&[kind::WINDOW_SCALE, 3, shift]);
            }
            TcpOption::SackPermitted => head.copy_from_slice(&[kind::SACK_PERMITTED, 2]),
            TcpOption::SackRange(blocks) => {
                // `len` is at most 2 + 8 * 4 = 34, so it fits the length byte.
                head[..2].copy_from_slice(&[kind::SACK, len as u8]);
                for (chunk, (left, right)) in
                    head[2..].chunks_exact_mut(8).zip(blocks.iter().flatten())
                {
                    be::set_u32(chunk, 0..4, *left);
                    be::set_u32(chunk, 4..8, *right);
                }
            }
            TcpOption::Timestamp(ts) => {
                head[..2].copy_from_slice(&[kind::TIMESTAMP, 10]);
                be::set_u32(head, 2..6, ts.tsval);
                be::set_u32(head, 6..10, ts.tsecr);
            }
            TcpOption::Unknown { kind, data } => {
                head[0] = kind;
                head[1] = len as u8;
                head[2..].copy_from_slice(data);
            }
        }
        rest
    }
}

/// A read (and, for mutable buffers, write) view of a TCP segment. The buffer must be exactly
/// the segment (the IPv4 payload): the checksum covers all of it.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wrap `buffer` without checking it; getters panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wrap `buffer` after [`check_len`](Self::check_len).
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// Check that the buffer holds the fixed header and the options the data offset announces.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_LEN {
            return Err(Error::Truncated("TCP header"));
        }
        let header_len = self.header_len();
        if header_len < HEADER_LEN {
            return Err(Error::Malformed("TCP data offset below 5"));
        }
        if len < header_len {
            return Err(Error::Truncated("TCP options"));
        }
        Ok(())
    }

    /// The wrapped buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The source port.
    pub fn src_port(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::SRC_PORT)
    }

    /// The destination port.
    pub fn dst_port(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::DST_PORT)
    }

    /// The sequence number of the first payload byte (or of the SYN/FIN).
    pub fn seq(&self) -> u32 {
        be::u32_at(self.buffer.as_ref(), field::SEQ)
    }

    /// The acknowledgment number: the next sequence number expected from the peer.
    pub fn ack(&self) -> u32 {
        be::u32_at(self.buffer.as_ref(), field::ACK)
    }

    /// The header length in bytes (data offset × 4).
    pub fn header_len(&self) -> usize {
        usize::from(self.buffer.as_ref()[field::DATA_OFFSET] >> 4) * 4
    }

    /// The control flags.
    pub fn flags(&self) -> Flags {
        Flags(self.buffer.as_ref()[field::FLAGS])
    }

    /// The receive window, before scaling.
    pub fn window(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::WINDOW)
    }

    /// The checksum field.
    pub fn checksum(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::CHECKSUM)
    }

    /// The urgent pointer.
    pub fn urgent(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::URGENT)
    }

    /// The option bytes.
    pub fn options(&self) -> &[u8] {
        &self.buffer.as_ref()[field::options(self.header_len())]
    }

    /// The payload: everything after the header.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }

    /// Whether the checksum is right for the pseudo-header `src`/`dst`.
    pub fn verify_checksum(&self, src: Ipv4Address, dst: Ipv4Address) -> bool {
        let data = self.buffer.as_ref();
        let Ok(len) = u16::try_from(data.len()) else {
            return false;
        };
        let pseudo = checksum::ipv4_pseudo_header(src, dst, Protocol::TCP, len);
        checksum::combine(pseudo, checksum::sum(data)) == 0xffff
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Set the source port.
    pub fn set_src_port(&mut self, port: u16) {
        be::set_u16(self.buffer.as_mut(), field::SRC_PORT, port);
    }

    /// Set the destination port.
    pub fn set_dst_port(&mut self, port: u16) {
        be::set_u16(self.buffer.as_mut(), field::DST_PORT, port);
    }

    /// Set the sequence number.
    pub fn set_seq(&mut self, seq: u32) {
        be::set_u32(self.buffer.as_mut(), field::SEQ, seq);
    }

    /// Set the acknowledgment number.
    pub fn set_ack(&mut self, ack: u32) {
        be::set_u32(self.buffer.as_mut(), field::ACK, ack);
    }

    /// Set the header length in bytes (a multiple of 4, 20–60); clears the reserved bits.
    pub fn set_header_len(&mut self, len: usize) {
        debug_assert!(len.is_multiple_of(4) && (HEADER_LEN..=MAX_HEADER_LEN).contains(&len));
        self.buffer.as_mut()[field::DATA_OFFSET] = ((len / 4) as u8) << 4;
    }

    /// Set the control flags.
    pub fn set_flags(&mut self, flags: Flags) {
        self.buffer.as_mut()[field::FLAGS] = flags.0;
    }

    /// Set the receive window.
    pub fn set_window(&mut self, window: u16) {
        be::set_u16(self.buffer.as_mut(), field::WINDOW, window);
    }

    /// Set the checksum field to a given value.
    pub fn set_checksum(&mut self, checksum: u16) {
        be::set_u16(self.buffer.as_mut(), field::CHECKSUM, checksum);
    }

    /// Set the urgent pointer.
    pub fn set_urgent(&mut self, urgent: u16) {
        be::set_u16(self.buffer.as_mut(), field::URGENT, urgent);
    }

    /// The option bytes, writable (the data offset must be set first).
    pub fn options_mut(&mut self) -> &mut [u8] {
        let range = field::options(self.header_len());
        &mut self.buffer.as_mut()[range]
    }

    /// The payload, writable (the data offset must be set first).
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let start = self.header_len();
        &mut self.buffer.as_mut()[start..]
    }

    /// Compute the checksum over the pseudo-header and the whole buffer, and store it.
    pub fn fill_checksum(&mut self, src: Ipv4Address, dst: Ipv4Address) {
        self.set_checksum(0);
        let data = self.buffer.as_ref();
        debug_assert!(data.len() <= usize::from(u16::MAX));
        let pseudo = checksum::ipv4_pseudo_header(src, dst, Protocol::TCP, data.len() as u16);
        let sum = checksum::combine(pseudo, checksum::sum(data));
        self.set_checksum(!sum);
    }
}

/// A parsed TCP header, options included, plus the payload length.
#[derive(Clone, Copy, Debug, Default, Eq, Hash, PartialEq)]
pub struct Repr {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgment number (meaningful when `flags` has ACK).
    pub ack: u32,
    /// Control flags.
    pub flags: Flags,
    /// Receive window, before scaling.
    pub window: u16,
    /// Urgent pointer (meaningful when `flags` has URG).
    pub urgent: u16,
    /// Maximum segment size option.
    pub mss: Option<u16>,
    /// Window scale option: the shift count.
    pub window_scale: Option<u8>,
    /// SACK-permitted option.
    pub sack_permitted: bool,
    /// SACK blocks as (left edge, right edge), filled from index 0; `None` past the last.
    pub sack_ranges: [Option<(u32, u32)>; MAX_SACK_BLOCKS],
    /// Timestamp option.
    pub timestamp: Option<Timestamp>,
    /// Payload length in bytes.
    pub payload_len: u16,
}

impl Repr {
    /// Read a segment; the checksum must be right for the pseudo-header `src`/`dst`. The
    /// packet must span exactly the segment.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(
        packet: &Packet<&T>,
        src: Ipv4Address,
        dst: Ipv4Address,
    ) -> Result<Repr> {
        packet.check_len()?;
        let Ok(payload_len) = u16::try_from(packet.payload().len()) else {
            return Err(Error::Malformed("TCP segment longer than 65535 bytes"));
        };
        if !packet.verify_checksum(src, dst) {
            return Err(Error::Checksum("TCP"));
        }
        let mut repr = Repr {
            src_port: packet.src_port(),
            dst_port: packet.dst_port(),
            seq: packet.seq(),
            ack: packet.ack(),
            flags: packet.flags(),
            window: packet.window(),
            urgent: packet.urgent(),
            payload_len,
            ..Repr::default()
        };
        let mut options = packet.options();
        while !options.is_empty() {
            let (rest, option) = TcpOption::parse(options)?;
            match option {
                TcpOption::EndOfList => break,
                TcpOption::NoOperation | TcpOption::Unknown { .. } => {}
                TcpOption::MaxSegmentSize(mss) => repr.mss = Some(mss),
                TcpOption::WindowScale(shift) => repr.window_scale = Some(shift),
                TcpOption::SackPermitted => repr.sack_permitted = true,
                TcpOption::SackRange(blocks) => repr.sack_ranges = blocks,
                TcpOption::Timestamp(ts) => repr.timestamp = Some(ts),
            }
            options = rest;
        }
        Ok(repr)
    }

    /// Option bytes before the SACK option: MSS, SACK-permitted/timestamps, window scale.
    fn fixed_options_len(&self) -> usize {
        let mss = if self.mss.is_some() { 4 } else { 0 };
        let ts = match (self.timestamp, self.sack_permitted) {
            (Some(_), _) => 12,
            (None, true) => 4,
            (None, false) => 0,
        };
        let ws = if self.window_scale.is_some() { 4 } else { 0 };
        mss + ts + ws
    }

    /// How many SACK blocks [`emit`](Self::emit) writes: the `Some` blocks, as many as fit in
    /// the option space left by the other options.
    pub fn sack_blocks_emitted(&self) -> usize {
        let room = MAX_OPTIONS_LEN - self.fixed_options_len();
        // NOP NOP kind length, then 8 bytes per block.
        let fit = room.saturating_sub(4) / 8;
        self.sack_ranges.iter().flatten().count().min(fit)
    }

    /// The option bytes emitted (a multiple of 4, at most 40).
    pub fn options_len(&self) -> usize {
        let sack = match self.sack_blocks_emitted() {
            0 => 0,
            n => 4 + 8 * n,
        };
        self.fixed_options_len() + sack
    }

    /// The header length emitted, options included.
    pub fn header_len(&self) -> usize {
        HEADER_LEN + self.options_len()
    }

    /// Header plus payload.
    pub fn buffer_len(&self) -> usize {
        self.header_len() + usize::from(self.payload_len)
    }

    /// Write the header, the payload and the checksum into the first
    /// [`buffer_len`](Self::buffer_len) bytes of `packet`. `payload` supplies the payload
    /// bytes: if it is shorter than `payload_len` the rest is zeros, extra bytes are ignored.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(
        &self,
        packet: &mut Packet<&mut T>,
        src: Ipv4Address,
        dst: Ipv4Address,
        payload: &[u8],
    ) {
        let header_len = self.header_len();
        let segment_len = self.buffer_len();
        let mut segment = Packet::new_unchecked(&mut packet.buffer.as_mut()[..segment_len]);
        segment.set_src_port(self.src_port);
        segment.set_dst_port(self.dst_port);
        segment.set_seq(self.seq);
        segment.set_ack(self.ack);
        segment.set_header_len(header_len);
        segment.set_flags(self.flags);
        segment.set_window(self.window);
        segment.set_urgent(self.urgent);
        self.emit_options(segment.options_mut());
        let body = segment.payload_mut();
        let copied = payload.len().min(body.len());
        body[..copied].copy_from_slice(&payload[..copied]);
        body[copied..].fill(0);
        segment.fill_checksum(src, dst);
    }

    fn emit_options(&self, buffer: &mut [u8]) {
        use TcpOption as O;
        let mut rest = buffer;
        if let Some(mss) = self.mss {
            rest = O::MaxSegmentSize(mss).emit(rest);
        }
        match (self.timestamp, self.sack_permitted) {
            (Some(ts), true) => {
                rest = O::SackPermitted.emit(rest);
                rest = O::Timestamp(ts).emit(rest);
            }
            (Some(ts), false) => {
                rest = O::NoOperation.emit(rest);
                rest = O::NoOperation.emit(rest);
                rest = O::Timestamp(ts).emit(rest);
            }
            (None, true) => {
                rest = O::NoOperation.emit(rest);
                rest = O::NoOperation.emit(rest);
                rest = O::SackPermitted.emit(rest);
            }
            (None, false) => {}
        }
        if let Some(shift) = self.window_scale {
            rest = O::NoOperation.emit(rest);
            rest = O::WindowScale(shift).emit(rest);
        }
        let n = self.sack_blocks_emitted();
        if n > 0 {
            let mut blocks = [None; MAX_SACK_BLOCKS];
            for (slot, block) in blocks
                .iter_mut()
                .zip(self.sack_ranges.iter().flatten().take(n))
            {
                *slot = Some(*block);
            }
            rest = O::NoOperation.emit(rest);
            rest = O::NoOperation.emit(rest);
            rest = O::SackRange(blocks).emit(rest);
        }
        debug_assert!(rest.is_empty(), "options_len disagrees with emit_options");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategies::tcp_repr;
    use proptest::prelude::*;

    const SRC: Ipv4Address = Ipv4Address::new(10, 0, 0, 1);
    const DST: Ipv4Address = Ipv4Address::new(10, 0, 0, 2);

    // 5001 -> 40000, seq 0x01020304, ack 0x0a0b0c0d, ACK|PSH, window 0x7210, data offset 11;
    // NOP NOP TS(0x11223344, 0x55667788), NOP NOP SACK(0x1000..0x2000); payload "data".
    // Checksum over the 10.0.0.1 -> 10.0.0.2 pseudo-header.
    static DATA_BYTES: [u8; 48] = [
        0x13, 0x89, 0x9c, 0x40, 0x01, 0x02, 0x03, 0x04, 0x0a, 0x0b, 0x0c, 0x0d, 0xb0, 0x18, 0x72,
        0x10, 0xd6, 0x87, 0x00, 0x00, // fixed header
        0x01, 0x01, 0x08, 0x0a, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, // timestamps
        0x01, 0x01, 0x05, 0x0a, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x20, 0x00, // SACK
        0x64, 0x61, 0x74, 0x61, // "data"
    ];

    // A Linux-style SYN: MSS 1460, SACK-permitted + TS(1, 0), NOP WS 7; window 64240;
    // checksum over the 40000 -> 5001 segment and the 10.0.0.1 -> 10.0.0.2 pseudo-header.
    static SYN_BYTES: [u8; 40] = [
        0x9c, 0x40, 0x13, 0x89, 0xde, 0xad, 0xbe, 0xef, 0x00, 0x00, 0x00, 0x00, 0xa0, 0x02, 0xfa,
        0xf0, 0xeb, 0xa4, 0x00, 0x00, // fixed header, data offset 10
        0x02, 0x04, 0x05, 0xb4, // MSS
        0x04, 0x02, 0x08, 0x0a, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
        0x00, // SACK-perm, TS
        0x01, 0x03, 0x03, 0x07, // NOP, window scale
    ];

    fn data_repr() -> Repr {
        Repr {
            src_port: 5001,
            dst_port: 40000,
            seq: 0x0102_0304,
            ack: 0x0a0b_0c0d,
            flags: Flags::ACK | Flags::PSH,
            window: 0x7210,
            urgent: 0,
            mss: None,
            window_scale: None,
            sack_permitted: false,
            sack_ranges: [Some((0x1000, 0x2000)), None, None, None],
            timestamp: Some(Timestamp {
                tsval: 0x1122_3344,
                tsecr: 0x5566_7788,
            }),
            payload_len: 4,
        }
    }

    fn syn_repr() -> Repr {
        Repr {
            src_port: 40000,
            dst_port: 5001,
            seq: 0xdead_beef,
            flags: Flags::SYN,
            window: 64240,
            mss: Some(1460),
            window_scale: Some(7),
            sack_permitted: true,
            timestamp: Some(Timestamp { tsval: 1, tsecr: 0 }),
            ..Repr::default()
        }
    }

    #[test]
    fn test_deconstruct() {
        let packet = Packet::new_checked(&DATA_BYTES[..]).unwrap();
        assert_eq!(packet.src_port(), 5001);
        assert_eq!(packet.dst_port(), 40000);
        assert_eq!(packet.seq(), 0x0102_0304);
        assert_eq!(packet.ack(), 0x0a0b_0c0d);
        assert_eq!(packet.header_len(), 44);
        assert_eq!(packet.flags(), Flags::ACK | Flags::PSH);
        assert!(!packet.flags().contains(Flags::SYN));
        assert_eq!(packet.window(), 0x7210);
        assert_eq!(packet.checksum(), 0xd687);
        assert_eq!(packet.urgent(), 0);
        assert_eq!(packet.options().len(), 24);
        assert_eq!(packet.payload(), b"data");
        assert!(packet.verify_checksum(SRC, DST));
    }

    #[test]
    fn test_construct() {
        let mut bytes = vec![0xa5; 48];
        let mut packet = Packet::new_unchecked(&mut bytes);
        packet.set_src_port(5001);
        packet.set_dst_port(40000);
        packet.set_seq(0x0102_0304);
        packet.set_ack(0x0a0b_0c0d);
        packet.set_header_len(44);
        packet.set_flags(Flags::ACK | Flags::PSH);
        packet.set_window(0x7210);
        packet.set_urgent(0);
        packet.options_mut().copy_from_slice(&DATA_BYTES[20..44]);
        packet.payload_mut().copy_from_slice(b"data");
        packet.fill_checksum(SRC, DST);
        assert_eq!(bytes, DATA_BYTES);
    }

    #[test]
    fn test_parse() {
        let packet = Packet::new_checked(&DATA_BYTES[..]).unwrap();
        assert_eq!(Repr::parse(&packet, SRC, DST).unwrap(), data_repr());
        let packet = Packet::new_checked(&SYN_BYTES[..]).unwrap();
        assert_eq!(Repr::parse(&packet, SRC, DST).unwrap(), syn_repr());
    }

    #[test]
    fn test_emit() {
        let mut bytes = vec![0xa5; 48];
        data_repr().emit(&mut Packet::new_unchecked(&mut bytes), SRC, DST, b"data");
        assert_eq!(bytes, DATA_BYTES);
        let mut bytes = vec![0xa5; 40];
        syn_repr().emit(&mut Packet::new_unchecked(&mut bytes), SRC, DST, &[]);
        assert_eq!(bytes, SYN_BYTES);
    }

    #[test]
    fn test_emit_zero_fills_missing_payload() {
        let mut bytes = vec![0xa5; 48];
        data_repr().emit(&mut Packet::new_unchecked(&mut bytes), SRC, DST, b"d");
        assert_eq!(&bytes[44..], b"d\0\0\0");
        let packet = Packet::new_checked(&bytes[..]).unwrap();
        assert!(packet.verify_checksum(SRC, DST));
    }

    #[test]
    fn test_bad_checksum() {
        let mut bytes = DATA_BYTES;
        bytes[47] ^= 0xff;
        let packet = Packet::new_checked(&bytes[..]).unwrap();
        assert_eq!(Repr::parse(&packet, SRC, DST), Err(Error::Checksum("TCP")));
    }

    #[test]
    fn test_truncated() {
        assert_eq!(
            Packet::new_checked(&DATA_BYTES[..19]),
            Err(Error::Truncated("TCP header"))
        );
        assert_eq!(
            Packet::new_checked(&DATA_BYTES[..43]),
            Err(Error::Truncated("TCP options"))
        );
        let mut bytes = DATA_BYTES;
        bytes[12] = 0x40;
        assert_eq!(
            Packet::new_checked(&bytes[..]),
            Err(Error::Malformed("TCP data offset below 5"))
        );
    }

    /// Build a segment with the given option bytes (padded by the caller) and a good checksum.
    fn segment_with_options(options: &[u8]) -> Vec<u8> {
        let mut bytes = vec![0; HEADER_LEN + options.len()];
        let mut packet = Packet::new_unchecked(&mut bytes);
        packet.set_header_len(HEADER_LEN + options.len());
        packet.set_flags(Flags::SYN);
        packet.options_mut().copy_from_slice(options);
        packet.fill_checksum(SRC, DST);
        bytes
    }

    #[test]
    fn test_parse_eol_and_unknown_options() {
        let bytes = segment_with_options(&[
            0x02, 0x04, 0x23, 0x28, // MSS 9000
            0x1e, 0x04, 0xab, 0xcd, // unknown kind 30
            0x04, 0x02, // SACK-permitted
            0x00, 0x03, // EOL, then padding that must be ignored
        ]);
        let repr = Repr::parse(&Packet::new_checked(&bytes[..]).unwrap(), SRC, DST).unwrap();
        assert_eq!(repr.mss, Some(9000));
        assert!(repr.sack_permitted);
        assert_eq!(repr.timestamp, None);
        let (_, unknown) = TcpOption::parse(&[0x1e, 0x04, 0xab, 0xcd]).unwrap();
        assert_eq!(
            unknown,
            TcpOption::Unknown {
                kind: 30,
                data: &[0xab, 0xcd]
            }
        );
    }

    #[test]
    fn test_malformed_options() {
        for options in [
            &[0x02, 0x03, 0x05, 0x00][..],                // MSS length 3
            &[0x08, 0x06, 0, 0, 0, 0, 0x01, 0x01][..],    // timestamp length 6
            &[0x05, 0x05, 0, 0, 0, 0x01, 0x01, 0x01][..], // SACK length 5
            &[0x1e, 0x01, 0x00, 0x00][..],                // length below 2
            &[0x01, 0x01, 0x01, 0x1e, 0x09, 0, 0, 0][..], // runs past the header
        ] {
            let bytes = segment_with_options(options);
            let packet = Packet::new_checked(&bytes[..]).unwrap();
            assert!(Repr::parse(&packet, SRC, DST).is_err(), "{options:02x?}");
        }
    }

    #[test]
    fn test_four_sack_blocks_fit_only_without_timestamps() {
        let blocks = [Some((1, 2)), Some((3, 4)), Some((5, 6)), Some((7, 8))];
        let four = Repr {
            flags: Flags::ACK,
            sack_ranges: blocks,
            ..Repr::default()
        };
        assert_eq!(four.sack_blocks_emitted(), 4);
        assert_eq!(four.header_len(), 56);
        let three = Repr {
            timestamp: Some(Timestamp {
                tsval: 9,
                tsecr: 10,
            }),
            ..four
        };
        assert_eq!(three.sack_blocks_emitted(), 3);
        assert_eq!(three.header_len(), 60);
        let mut bytes = vec![0xa5; three.buffer_len()];
        three.emit(&mut Packet::new_unchecked(&mut bytes), SRC, DST, &[]);
        let parsed = Repr::parse(&Packet::new_checked(&bytes[..]).unwrap(), SRC, DST).unwrap();
        // The oldest (last) block is the one dropped.
        assert_eq!(
            parsed.sack_ranges,
            [Some((1, 2)), Some((3, 4)), Some((5, 6)), None]
        );
    }

    #[test]
    fn test_flags_debug() {
        assert_eq!(format!("{:?}", Flags::SYN | Flags::ACK), "Flags(SYN | ACK)");
        assert_eq!(format!("{:?}", Flags::empty()), "Flags()");
        assert_eq!(Flags::from_bits(0xc0), Flags::ECE | Flags::CWR);
    }

    proptest! {
        #[test]
        fn round_trip(r in tcp_repr(), fill in any::<u8>()) {
            let payload = vec![fill; usize::from(r.payload_len)];
            let mut bytes = vec![0xa5; r.buffer_len()];
            r.emit(&mut Packet::new_unchecked(&mut bytes), SRC, DST, &payload);
            let packet = Packet::new_checked(&bytes[..]).unwrap();
            prop_assert_eq!(packet.payload(), &payload[..]);
            prop_assert_eq!(Repr::parse(&packet, SRC, DST), Ok(r));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
            if let Ok(p) = Packet::new_checked(&bytes[..]) {
                let _ = p.options();
                let _ = p.payload();
                let _ = Repr::parse(&p, SRC, DST);
            }
        }

        #[test]
        fn arbitrary_options_never_panic(options in proptest::collection::vec(any::<u8>(), 0..=40)) {
            let mut options = options;
            options.resize(options.len().next_multiple_of(4), 0);
            let bytes = segment_with_options(&options);
            let _ = Repr::parse(&Packet::new_checked(&bytes[..]).unwrap(), SRC, DST);
        }
    }
}
