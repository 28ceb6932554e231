//! A PAUSE (IEEE 802.3 annex 31B) or PFC (IEEE 802.1Qbb) MAC control frame.

use super::*;

/// A PAUSE or PFC frame.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub struct PfcFrame {
    /// Addresses (destination [`pfc::DESTINATION`]); MAC control frames are untagged.
    pub link: Link,
    /// The MAC control body.
    pub control: pfc::Repr,
}

impl PfcFrame {
    /// A frame from `src_addr` to the reserved MAC control address.
    pub const fn new(src_addr: EthernetAddress, control: pfc::Repr) -> PfcFrame {
        PfcFrame {
            link: Link::new(src_addr, pfc::DESTINATION),
            control,
        }
    }

    /// Emitted frame length: 60 bytes untagged (FCS not included).
    pub const fn buffer_len(&self) -> usize {
        self.link.header_len() + pfc::BODY_LEN
    }

    /// Write the frame into the start of `buffer` and return its length.
    pub fn emit(&self, buffer: &mut [u8]) -> Result<usize> {
        self.link.check()?;
        let len = self.buffer_len();
        let buffer = buffer
            .get_mut(..len)
            .ok_or(Error::Truncated("output buffer"))?;
        let eth = self.link.repr(EtherType::MAC_CONTROL);
        eth.emit(&mut ethernet::Packet::new_unchecked(&mut buffer[..]));
        self.control.emit(&mut pfc::Packet::new_unchecked(
            &mut buffer[eth.header_len()..],
        ));
        Ok(len)
    }

    /// The frame as a new byte vector.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut bytes = vec![0; self.buffer_len()];
        self.emit(&mut bytes)?;
        Ok(bytes)
    }

    /// Parse a PAUSE or PFC frame.
    pub fn parse(bytes: &[u8]) -> Result<PfcFrame> {
        let (link, ethertype, body) = parse_link(bytes)?;
        if ethertype != EtherType::MAC_CONTROL {
            return Err(Error::Unsupported("EtherType other than MAC control"));
        }
        parse_pfc(link, body)
    }
}

/// The PAUSE or PFC frame in a MAC control frame's body.
pub(super) fn parse_pfc(link: Link, body: &[u8]) -> Result<PfcFrame> {
    let control = pfc::Repr::parse(&pfc::Packet::new_checked(body)?)?;
    Ok(PfcFrame { link, control })
}
