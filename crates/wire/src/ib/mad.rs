//! The common header of a management datagram (MAD), 24 bytes, and the 256-byte MAD it opens.
//!
//! Follows IBTA Vol. 1 §13.4.2 (Management Datagram Format) and §13.4.3 (MAD header): base
//! version, management class, class version, the R bit and method, status, a class-specific
//! word, the 64-bit transaction ID, attribute ID, 16 reserved bits and the attribute
//! modifier; the class's data (232 bytes) follows. Managers talk to each other through the
//! general services interface, QP1 (§13.5.1), in UD SEND Only packets: on RoCEv2 a MAD is the
//! payload of a UD SEND to QP1 with Q_Key [`GSI_QKEY`] and source QP 1 in its DETH (§13.5.3).
//!
//! The connection manager (class [`Class::CM`], §12.6) is the class rdmalab sends: its
//! REQ/REP/RTU messages are in [`super::cm`].

use crate::{Error, Result, be};

pub(crate) mod field {
    use crate::Field;
    pub const BASE_VERSION: usize = 0;
    pub const MGMT_CLASS: usize = 1;
    pub const CLASS_VERSION: usize = 2;
    pub const METHOD: usize = 3;
    pub const STATUS: Field = 4..6;
    pub const CLASS_SPECIFIC: Field = 6..8;
    pub const TRANSACTION_ID: Field = 8..16;
    pub const ATTRIBUTE_ID: Field = 16..18;
    pub const RESERVED: Field = 18..20;
    pub const ATTRIBUTE_MODIFIER: Field = 20..24;
}

/// Length of the common MAD header.
pub const HEADER_LEN: usize = field::ATTRIBUTE_MODIFIER.end;
/// Length of a whole MAD: every MAD is exactly 256 bytes (IBTA Vol. 1 §13.4.2).
pub const MAD_LEN: usize = 256;
/// The class data after the common header.
pub const DATA_LEN: usize = MAD_LEN - HEADER_LEN;
/// The QP of the general services interface (GSI), where every non-SMP MAD is sent
/// (IBTA Vol. 1 §13.5.1).
pub const GSI_QP: u32 = 1;
/// The well-known Q_Key of QP1, `0x80010000` (IBTA Vol. 1 §13.5: the GSI's Q_Key).
pub const GSI_QKEY: u32 = 0x8001_0000;
/// The only base version IBTA Vol. 1 defines for a 256-byte MAD.
pub const BASE_VERSION: u8 = 1;
/// The R bit of the method byte: set in a response (IBTA Vol. 1 §13.4.5).
pub const METHOD_RESPONSE: u8 = 0x80;

/// A management class (IBTA Vol. 1 §13.4.4).
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq, PartialOrd, Ord)]
pub struct Class(pub u8);

impl Class {
    /// Subnet administration.
    pub const SUBN_ADM: Class = Class(0x03);
    /// Communication management: the CM's REQ/REP/RTU (IBTA Vol. 1 §12.6).
    pub const CM: Class = Class(0x07);
}

/// A MAD method (IBTA Vol. 1 §13.4.5), without the R bit.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq, PartialOrd, Ord)]
pub struct Method(pub u8);

impl Method {
    /// Get.
    pub const GET: Method = Method(0x01);
    /// Set.
    pub const SET: Method = Method(0x02);
    /// Send: a datagram that needs no response, the method every CM message uses
    /// (IBTA Vol. 1 §12.6.1).
    pub const SEND: Method = Method(0x03);
}

/// A read (and, for mutable buffers, write) view of a MAD's common header.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wrap `buffer` without checking it; getters panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wrap `buffer` after checking that it holds a whole 256-byte MAD.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// `Err(Truncated)` if the buffer is shorter than a MAD ([`MAD_LEN`]).
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < MAD_LEN {
            return Err(Error::Truncated("MAD"));
        }
        Ok(())
    }

    /// The wrapped buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Base version (1).
    pub fn base_version(&self) -> u8 {
        self.buffer.as_ref()[field::BASE_VERSION]
    }
    /// Management class.
    pub fn mgmt_class(&self) -> Class {
        Class(self.buffer.as_ref()[field::MGMT_CLASS])
    }
    /// Class version.
    pub fn class_version(&self) -> u8 {
        self.buffer.as_ref()[field::CLASS_VERSION]
    }
    /// Whether the R (response) bit is set.
    pub fn is_response(&self) -> bool {
        self.buffer.as_ref()[field::METHOD] & METHOD_RESPONSE != 0
    }
    /// The method, without the R bit.
    pub fn method(&self) -> Method {
        Method(self.buffer.as_ref()[field::METHOD] & !METHOD_RESPONSE)
    }
    /// Status.
    pub fn status(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::STATUS)
    }
    /// The class-specific word.
    pub fn class_specific(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::CLASS_SPECIFIC)
    }
    /// Transaction ID: a request and its responses carry the same one.
    pub fn transaction_id(&self) -> u64 {
        be::u64_at(self.buffer.as_ref(), field::TRANSACTION_ID)
    }
    /// Attribute ID: which message of the class (a CM REQ, REP, RTU, ...).
    pub fn attribute_id(&self) -> u16 {
        be::u16_at(self.buffer.as_ref(), field::ATTRIBUTE_ID)
    }
    /// Attribute modifier.
    pub fn attribute_modifier(&self) -> u32 {
        be::u32_at(self.buffer.as_ref(), field::ATTRIBUTE_MODIFIER)
    }
    /// The class data after the header ([`DATA_LEN`] bytes).
    pub fn data(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..MAD_LEN]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Write every header field (and clear the reserved ones) from `r`.
    fn set_header(&mut self, r: &Repr) {
        let d = self.buffer.as_mut();
        d[field::BASE_VERSION] = r.base_version;
        d[field::MGMT_CLASS] = r.mgmt_class.0;
        d[field::CLASS_VERSION] = r.class_version;
        d[field::METHOD] =
            (r.method.0 & !METHOD_RESPONSE) | if r.response { METHOD_RESPONSE } else { 0 };
        be::set_u16(d, field::STATUS, r.status);
        be::set_u16(d, field::CLASS_SPECIFIC, r.class_specific);
        be::set_u64(d, field::TRANSACTION_ID, r.transaction_id);
        be::set_u16(d, field::ATTRIBUTE_ID, r.attribute_id);
        be::set_u16(d, field::RESERVED, 0);
        be::set_u32(d, field::ATTRIBUTE_MODIFIER, r.attribute_modifier);
    }

    /// The class data after the header, writable.
    pub fn data_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[HEADER_LEN..MAD_LEN]
    }
}

/// A parsed MAD common header.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub struct Repr {
    /// Base version ([`BASE_VERSION`]).
    pub base_version: u8,
    /// Management class.
    pub mgmt_class: Class,
    /// Class version (the CM's is 2).
    pub class_version: u8,
    /// The R bit: a response.
    pub response: bool,
    /// Method, without the R bit (7 bits).
    pub method: Method,
    /// Status.
    pub status: u16,
    /// Class-specific word.
    pub class_specific: u16,
    /// Transaction ID.
    pub transaction_id: u64,
    /// Attribute ID.
    pub attribute_id: u16,
    /// Attribute modifier.
    pub attribute_modifier: u32,
}

impl Repr {
    /// Read the header of a whole MAD; the reserved bits are ignored. A base version other
    /// than 1 is `Malformed` (IBTA Vol. 1 §13.4.3: it decides the layout that follows).
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        if packet.base_version() != BASE_VERSION {
            return Err(Error::Malformed("MAD base version is not 1"));
        }
        Ok(Repr {
            base_version: packet.base_version(),
            mgmt_class: packet.mgmt_class(),
            class_version: packet.class_version(),
            response: packet.is_response(),
            method: packet.method(),
            status: packet.status(),
            class_specific: packet.class_specific(),
            transaction_id: packet.transaction_id(),
            attribute_id: packet.attribute_id(),
            attribute_modifier: packet.attribute_modifier(),
        })
    }

    /// Always [`HEADER_LEN`].
    pub const fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// The bytes [`emit`](Self::emit) writes: a whole MAD, [`MAD_LEN`].
    pub const fn buffer_len(&self) -> usize {
        MAD_LEN
    }

    /// Write the header and `data` (the class data, zero-filled to [`DATA_LEN`]; longer data
    /// is cut there) into the first [`MAD_LEN`] bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized>(
        &self,
        packet: &mut Packet<&mut T>,
        data: &[u8],
    ) {
        packet.set_header(self);
        let out = packet.data_mut();
        let n = data.len().min(DATA_LEN);
        out[..n].copy_from_slice(&data[..n]);
        out[n..].fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // A CM REQ's header as Linux's ib_cm sends it: base version 1, class 0x07, class version 2,
    // method Send, transaction ID 0x0000_0001_0000_002a, attribute 0x0010 (REQ).
    static HEADER: [u8; 24] = [
        0x01, 0x07, 0x02, 0x03, 0x00, 0x00, 0x00,
        0x00, // versions, method, status, class word
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x2a, // transaction ID
        0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // attribute, reserved, modifier
    ];

    fn repr() -> Repr {
        Repr {
            base_version: 1,
            mgmt_class: Class::CM,
            class_version: 2,
            response: false,
            method: Method::SEND,
            status: 0,
            class_specific: 0,
            transaction_id: 0x0000_0001_0000_002a,
            attribute_id: 0x0010,
            attribute_modifier: 0,
        }
    }

    fn mad() -> Vec<u8> {
        let mut b = HEADER.to_vec();
        b.extend((0..DATA_LEN).map(|i| i as u8));
        b
    }

    #[test]
    fn test_deconstruct() {
        let bytes = mad();
        let p = Packet::new_checked(&bytes[..]).unwrap();
        assert_eq!(p.base_version(), 1);
        assert_eq!(p.mgmt_class(), Class::CM);
        assert_eq!(p.class_version(), 2);
        assert_eq!(p.method(), Method::SEND);
        assert!(!p.is_response());
        assert_eq!(p.transaction_id(), 0x0000_0001_0000_002a);
        assert_eq!(p.attribute_id(), 0x0010);
        assert_eq!(p.data()[..3], [0, 1, 2]);
        assert_eq!(p.data().len(), 232);
    }

    #[test]
    fn test_parse() {
        let bytes = mad();
        let p = Packet::new_checked(&bytes[..]).unwrap();
        assert_eq!(Repr::parse(&p).unwrap(), repr());
    }

    #[test]
    fn test_emit_overwrites_a_poisoned_buffer() {
        let mut bytes = vec![0xa5; MAD_LEN];
        let data: Vec<u8> = (0..DATA_LEN).map(|i| i as u8).collect();
        repr().emit(&mut Packet::new_unchecked(&mut bytes), &data);
        assert_eq!(bytes, mad());
        // Short data is zero-filled to the end of the MAD.
        let mut bytes = vec![0xa5; MAD_LEN];
        repr().emit(&mut Packet::new_unchecked(&mut bytes), &[9]);
        assert_eq!(bytes[..24], HEADER);
        assert_eq!(bytes[24], 9);
        assert!(bytes[25..].iter().all(|&b| b == 0));
    }

    #[test]
    fn test_response_bit_and_bad_version() {
        let mut bytes = mad();
        bytes[field::METHOD] = 0x81;
        let p = Packet::new_checked(&bytes[..]).unwrap();
        assert!(p.is_response());
        assert_eq!(p.method(), Method::GET);
        bytes[0] = 2;
        let p = Packet::new_checked(&bytes[..]).unwrap();
        assert_eq!(
            Repr::parse(&p),
            Err(Error::Malformed("MAD base version is not 1"))
        );
    }

    #[test]
    fn test_truncated() {
        let bytes = mad();
        assert_eq!(
            Packet::new_checked(&bytes[..255]),
            Err(Error::Truncated("MAD"))
        );
    }

    proptest! {
        #[test]
        fn round_trip(
            class in any::<u8>(), cv in any::<u8>(), response in any::<bool>(),
            method in 0u8..0x80, status in any::<u16>(), cs in any::<u16>(),
            tid in any::<u64>(), attr in any::<u16>(), modifier in any::<u32>(),
        ) {
            let r = Repr {
                base_version: 1, mgmt_class: Class(class), class_version: cv, response,
                method: Method(method), status, class_specific: cs, transaction_id: tid,
                attribute_id: attr, attribute_modifier: modifier,
            };
            let mut bytes = vec![0xa5; r.buffer_len()];
            r.emit(&mut Packet::new_unchecked(&mut bytes), &[]);
            prop_assert_eq!(Repr::parse(&Packet::new_checked(&bytes[..]).unwrap()), Ok(r));
        }
    }
}
