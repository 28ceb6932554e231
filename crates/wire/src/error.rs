//! The one error type of the crate.
//!
//! Every parser returns [`Error`] instead of panicking, whatever the input. The variants say what
//! went wrong in words a student can act on; the `&'static str` names the header or the rule.

/// Why a buffer could not be parsed or a representation could not be emitted.
#[derive(Clone, Copy, Debug, Eq, PartialEq, thiserror::Error)]
pub enum Error {
    /// A checksum over a header (IPv4) or a segment (TCP, UDP) does not add up.
    #[error("bad {0} checksum")]
    Checksum(&'static str),
    /// The RoCEv2 invariant CRC does not match the bytes it covers: the frame would be dropped
    /// silently by a receiving NIC.
    #[error("bad ICRC: frame carries {found:02x?}, its bytes give {computed:02x?}")]
    Icrc {
        /// The four ICRC bytes computed over the frame, in wire order.
        computed: [u8; 4],
        /// The four ICRC bytes the frame carries, in wire order.
        found: [u8; 4],
    },
    /// A field holds a value the format forbids, or two fields disagree.
    #[error("malformed: {0}")]
    Malformed(&'static str),
    /// The buffer ends before the named header (or the length a header announces) does.
    #[error("truncated {0}")]
    Truncated(&'static str),
    /// The BTH opcode is reserved, vendor-specific or otherwise not in the IBTA table.
    #[error("unknown BTH opcode {0:#04x}")]
    UnknownOpcode(u8),
    /// The frame is well-formed but of a kind this crate does not model (IPv6, ARP, IP
    /// fragments, a UDP port other than 4791, ...).
    #[error("unsupported: {0}")]
    Unsupported(&'static str),
}

/// The crate's result type.
pub type Result<T> = core::result::Result<T, Error>;
