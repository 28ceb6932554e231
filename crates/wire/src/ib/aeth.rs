//! The ACK extended transport header (AETH), 4 bytes: syndrome and MSN.
//!
//! Follows IBTA Vol. 1 chapter 9 (the AETH layout, and the reliable service's rules for ACK,
//! RNR NAK and NAK), as summarised in `verbs-spec.md` §6 and as Linux encodes it
//! (`drivers/infiniband/sw/rxe/rxe_hdr.h` `enum aeth_syndrome`, `include/rdma/ib_hdrs.h`).
//! The syndrome byte holds a reserved bit 7, a two-bit type in bits 6:5 and a five-bit value:
//!
//! | type | meaning | value                                                              |
//! |------|---------|--------------------------------------------------------------------|
//! | 00   | ACK     | credit code: end-to-end credits ([`credit_count`]); 0x1f is the     |
//! |      |         | invalid code, "no limit" (rxe's `AETH_ACK_UNLIMITED`, what it sends)|
//! | 01   | RNR NAK | RNR timer code: how long the requester waits ([`rnr_timeout`])      |
//! | 10   | reserved| -                                                                  |
//! | 11   | NAK     | 0 PSN sequence error, 1 invalid request, 2 remote access error,    |
//! |      |         | 3 remote operational error, 4 invalid RD request                   |
//!
//! The MSN (24 bits) counts completed request messages at the responder. A reserved syndrome
//! type (or bit 7 set) parses as [`Error::Malformed`]; reserved NAK codes 5–31 are kept as
//! [`NakCode::Reserved`].

use units::SimDuration;

use super::U24_MASK;
use crate::{Error, Result, be};

pub(crate) mod field {
    use crate::Field;
    pub const SYNDROME: usize = 0;
    pub const MSN: Field = 1..4;
}

/// Length of the AETH.
pub const HEADER_LEN: usize = field::MSN.end;

/// The credit code that carries no credit count (rdmavt's `IB_AETH_CREDIT_INVAL`): the
/// requester is not limited by end-to-end credits (rdmavt `rvt_get_credit`; rxe names it
/// `AETH_ACK_UNLIMITED` and sends it on every ACK).
pub const CREDITS_UNLIMITED: u8 = 0x1f;

/// How many receive WQEs (credits) an ACK's five-bit credit code announces, `None` for
/// [`CREDITS_UNLIMITED`]. The code is logarithmic, not a count: 0–4 are themselves, then each
/// step multiplies by 1.5 or by 4/3 in turn, up to 32768 at code 30 — the table Linux rdmavt
/// keeps as `credit_table` (`drivers/infiniband/sw/rdmavt/rc.c`), after the IBTA's. Codes
/// above 31 are read as their low five bits.
pub const fn credit_count(code: u8) -> Option<u32> {
    const TABLE: [u32; 31] = [
        0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536,
        2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768,
    ];
    let code = code & VALUE_MASK;
    if code == CREDITS_UNLIMITED {
        None
    } else {
        Some(TABLE[code as usize])
    }
}

pub(crate) const TYPE_SHIFT: u8 = 5;
pub(crate) const VALUE_MASK: u8 = 0x1f;
const TYPE_ACK: u8 = 0b00;
const TYPE_RNR_NAK: u8 = 0b01;
const TYPE_NAK: u8 = 0b11;

/// Why a responder refused a request, in code order.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub enum NakCode {
    /// 0: the PSN is ahead of the expected one (a packet was lost); the requester goes back
    /// to the PSN in the NAK.
    PsnSequenceError,
    /// 1: the request is not valid for this QP (bad opcode sequence, length, ...).
    InvalidRequest,
    /// 2: R_Key, address range or access rights do not allow the operation.
    RemoteAccessError,
    /// 3: the responder could not complete the operation.
    RemoteOperationalError,
    /// 4: an invalid RD request.
    InvalidRdRequest,
    /// 5–31: reserved codes, kept so that they can be shown.
    Reserved(u8),
}

impl NakCode {
    /// The five-bit code.
    pub const fn code(self) -> u8 {
        match self {
            NakCode::PsnSequenceError => 0,
            NakCode::InvalidRequest => 1,
            NakCode::RemoteAccessError => 2,
            NakCode::RemoteOperationalError => 3,
            NakCode::InvalidRdRequest => 4,
            NakCode::Reserved(code) => code & VALUE_MASK,
        }
    }

    /// The NAK code for a five-bit value.
    pub const fn from_code(code: u8) -> NakCode {
        match code & VALUE_MASK {
            0 => NakCode::PsnSequenceError,
            1 => NakCode::InvalidRequest,
            2 => NakCode::RemoteAccessError,
            3 => NakCode::RemoteOperationalError,
            4 => NakCode::InvalidRdRequest,
            other => NakCode::Reserved(other),
        }
    }
}

/// The typed syndrome: what the AETH says about the request it answers.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub enum Syndrome {
    /// Positive acknowledgment with an end-to-end credit code (0–31).
    Ack {
        /// Credit code ([`credit_count`] gives the credits); [`CREDITS_UNLIMITED`] for none.
        credits: u8,
    },
    /// Receiver not ready: no receive WQE was posted. Retry after the timer.
    RnrNak {
        /// RNR timer code, 0–31 (see [`rnr_timeout`]).
        timer: u8,
    },
    /// Negative acknowledgment.
    Nak(NakCode),
}

impl Syndrome {
    /// Decode a syndrome byte.
    pub const fn from_byte(byte: u8) -> Result<Syndrome> {
        let value = byte & VALUE_MASK;
        match byte >> TYPE_SHIFT {
            TYPE_ACK => Ok(Syndrome::Ack { credits: value }),
            TYPE_RNR_NAK => Ok(Syndrome::RnrNak { timer: value }),
            TYPE_NAK => Ok(Syndrome::Nak(NakCode::from_code(value))),
            0b10 => Err(Error::Malformed("AETH syndrome type 10 is reserved")),
            _ => Err(Error::Malformed("AETH syndrome bit 7 is reserved")),
        }
    }

    /// Encode as a syndrome byte (values are masked to five bits).
    pub const fn to_byte(self) -> u8 {
        let (kind, value) = match self {
            Syndrome::Ack { credits } => (TYPE_ACK, credits),
            Syndrome::RnrNak { timer } => (TYPE_RNR_NAK, timer),
            Syndrome::Nak(code) => (TYPE_NAK, code.code()),
        };
        (kind << TYPE_SHIFT) | (value & VALUE_MASK)
    }

    /// Whether this acknowledges the request (as opposed to any kind of NAK).
    pub const fn is_ack(self) -> bool {
        matches!(self, Syndrome::Ack { .. })
    }
}

/// How long a requester waits after an RNR NAK with timer `code` before retrying, from the
/// IBTA table (also rxe's `rnrnak_usec`, listed in `verbs-spec.md` §5). Code 0 is the longest,
/// 655.36 ms; codes above 31 are treated as their low five bits. Code 25 is 61.44 ms, as the
/// kernel's `IB_RNR_TIMER_061_44` names it (rxe's table holds 61410 µs there, a typo).
pub const fn rnr_timeout(code: u8) -> SimDuration {
    const TABLE_NS: [u64; 32] = [
        655_360_000,
        10_000,
        20_000,
        30_000,
        40_000,
        60_000,
        80_000,
        120_000,
        160_000,
        240_000,
        320_000,
        480_000,
        640_000,
        960_000,
        1_280_000,
        1_920_000,
        2_560_000,
        3_840_000,
        5_120_000,
        7_680_000,
        10_240_000,
        15_360_000,
        20_480_000,
        30_720_000,
        40_960_000,
        61_440_000,
        81_920_000,
        122_880_000,
        163_840_000,
        245_760_000,
        327_680_000,
        491_520_000,
    ];
    SimDuration::from_ns(TABLE_NS[(code & VALUE_MASK) as usize])
}

/// A read (and, for mutable buffers, write) view of an AETH.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wrap `buffer` without checking it; getters panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wrap `buffer` after checking that it holds a whole AETH.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// `Err(Truncated)` if the buffer is shorter than [`HEADER_LEN`].
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < HEADER_LEN {
            return Err(Error::Truncated("AETH"));
        }
        Ok(())
    }

    /// The wrapped buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The raw syndrome byte (see [`Syndrome::from_byte`]).
    pub fn syndrome(&self) -> u8 {
        self.buffer.as_ref()[field::SYNDROME]
    }

    /// The message sequence number (24 bits).
    pub fn msn(&self) -> u32 {
        be::u24_at(self.buffer.as_ref(), field::MSN)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Set the raw syndrome byte.
    pub fn set_syndrome(&mut self, syndrome: u8) {
        self.buffer.as_mut()[field::SYNDROME] = syndrome;
    }

    /// Set the MSN (24 bits).
    pub fn set_msn(&mut self, msn: u32) {
        debug_assert!(msn <= U24_MASK, "MSN {msn:#x} does not fit in 24 bits");
        be::set_u24(self.buffer.as_mut(), field::MSN, msn & U24_MASK);
    }
}

/// A parsed AETH.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub struct Repr {
    /// ACK, RNR NAK or NAK.
    pub syndrome: Syndrome,
    /// Message sequence number, 24 bits.
    pub msn: u32,
}

impl Repr {
    /// Read an AETH; a reserved syndrome type is [`Error::Malformed`].
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        Ok(Repr {
            syndrome: Syndrome::from_byte(packet.syndrome())?,
            msn: packet.msn(),
        })
    }

    /// Always [`HEADER_LEN`].
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// The bytes [`emit`](Self::emit) writes: [`HEADER_LEN`].
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Write the AETH into the first [`HEADER_LEN`] bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(&self, packet: &mut Packet<&mut T>) {
        packet.set_syndrome(self.syndrome.to_byte());
        packet.set_msn(self.msn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategies::aeth_repr;
    use proptest::prelude::*;

    // ACK with unlimited credits, MSN 2 (the ACK in ecosystem.md's tshark output).
    static ACK_BYTES: [u8; 4] = [0x1f, 0x00, 0x00, 0x02];
    // RNR NAK with timer code 12 (0.64 ms), MSN 0x010203.
    static RNR_BYTES: [u8; 4] = [0x2c, 0x01, 0x02, 0x03];
    // NAK PSN sequence error, MSN 5.
    static NAK_BYTES: [u8; 4] = [0x60, 0x00, 0x00, 0x05];

    /// The credit code is a logarithmic scale, not a count: code 5 announces 6 credits, code
    /// 30 32768 (rdmavt's `credit_table`); 31 announces none at all.
    #[test]
    fn credit_codes_decode_to_counts() {
        assert_eq!(credit_count(0), Some(0));
        assert_eq!(credit_count(4), Some(4));
        assert_eq!(credit_count(5), Some(6));
        assert_eq!(credit_count(0x0a), Some(32));
        assert_eq!(credit_count(0x1e), Some(32768));
        assert_eq!(credit_count(CREDITS_UNLIMITED), None);
        // Strictly increasing: a binary search over it (rdmavt's encoder) is well defined.
        let counts: Vec<u32> = (0..31).map(|c| credit_count(c).unwrap()).collect();
        assert!(counts.windows(2).all(|w| w[0] < w[1]), "{counts:?}");
    }

    #[test]
    fn test_deconstruct() {
        let p = Packet::new_checked(&RNR_BYTES[..]).unwrap();
        assert_eq!(p.syndrome(), 0x2c);
        assert_eq!(p.msn(), 0x01_0203);
    }

    #[test]
    fn test_construct() {
        let mut bytes = vec![0xa5; 4];
        let mut p = Packet::new_unchecked(&mut bytes);
        p.set_syndrome(0x2c);
        p.set_msn(0x01_0203);
        assert_eq!(bytes, RNR_BYTES);
    }

    #[test]
    fn test_parse() {
        let parse = |b: &[u8]| Repr::parse(&Packet::new_checked(b).unwrap()).unwrap();
        assert_eq!(
            parse(&ACK_BYTES),
            Repr {
                syndrome: Syndrome::Ack {
                    credits: CREDITS_UNLIMITED
                },
                msn: 2
            }
        );
        assert_eq!(
            parse(&RNR_BYTES),
            Repr {
                syndrome: Syndrome::RnrNak { timer: 12 },
                msn: 0x01_0203
            }
        );
        assert_eq!(
            parse(&NAK_BYTES),
            Repr {
                syndrome: Syndrome::Nak(NakCode::PsnSequenceError),
                msn: 5
            }
        );
    }

    #[test]
    fn test_emit() {
        let mut bytes = vec![0xa5; 4];
        let nak = Repr {
            syndrome: Syndrome::Nak(NakCode::PsnSequenceError),
            msn: 5,
        };
        nak.emit(&mut Packet::new_unchecked(&mut bytes));
        assert_eq!(bytes, NAK_BYTES);
    }

    #[test]
    fn test_truncated() {
        assert_eq!(
            Packet::new_checked(&ACK_BYTES[..3]),
            Err(Error::Truncated("AETH"))
        );
    }

    #[test]
    fn test_syndrome_bytes() {
        // verbs-spec.md §6: 0x60..0x64 are the five defined NAK codes.
        let naks = [
            (0x60, NakCode::PsnSequenceError),
            (0x61, NakCode::InvalidRequest),
            (0x62, NakCode::RemoteAccessError),
            (0x63, NakCode::RemoteOperationalError),
            (0x64, NakCode::InvalidRdRequest),
            (0x7f, NakCode::Reserved(31)),
        ];
        for (byte, code) in naks {
            assert_eq!(Syndrome::from_byte(byte), Ok(Syndrome::Nak(code)));
            assert_eq!(Syndrome::Nak(code).to_byte(), byte);
        }
        assert_eq!(Syndrome::RnrNak { timer: 0x0c }.to_byte(), 0x2c);
        assert!(matches!(
            Syndrome::from_byte(0x40),
            Err(Error::Malformed(_))
        ));
        assert!(matches!(
            Syndrome::from_byte(0x9f),
            Err(Error::Malformed(_))
        ));
        assert!(Syndrome::Ack { credits: 0 }.is_ack());
        assert!(!Syndrome::RnrNak { timer: 1 }.is_ack());
    }

    #[test]
    fn test_rnr_timeout_table() {
        assert_eq!(rnr_timeout(0), SimDuration::from_us(655_360));
        assert_eq!(rnr_timeout(1), SimDuration::from_us(10));
        assert_eq!(rnr_timeout(12), SimDuration::from_us(640));
        assert_eq!(rnr_timeout(31), SimDuration::from_us(491_520));
        // Apart from code 0, the table grows with the code.
        for code in 2..32 {
            assert!(rnr_timeout(code) > rnr_timeout(code - 1));
        }
    }

    proptest! {
        #[test]
        fn round_trip(r in aeth_repr()) {
            let mut bytes = vec![0xa5; r.buffer_len()];
            r.emit(&mut Packet::new_unchecked(&mut bytes));
            prop_assert_eq!(Repr::parse(&Packet::new_checked(&bytes[..]).unwrap()), Ok(r));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..6)) {
            if let Ok(p) = Packet::new_checked(&bytes[..]) {
                let _ = Repr::parse(&p);
            }
        }
    }
}
