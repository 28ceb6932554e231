//! A TCP segment in an Ethernet frame: `Ethernet [802.1Q] | IPv4 | TCP | payload`.

use super::*;

/// A TCP segment in an Ethernet frame.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub struct TcpFrame {
    /// Addresses and VLAN tag.
    pub link: Link,
    /// IPv4 fields (ECT(0) for an ECN-capable flow such as DCTCP).
    pub ip: Ip,
    /// TCP header, options and payload length.
    pub tcp: tcp::Repr,
}

impl TcpFrame {
    /// IPv4 packet length.
    pub fn ip_len(&self) -> usize {
        ipv4::HEADER_LEN + self.tcp.buffer_len()
    }

    /// Emitted frame length, padded to the Ethernet minimum (FCS not included).
    pub fn buffer_len(&self) -> usize {
        min_frame(self.link.header_len() + self.ip_len())
    }

    /// Write the frame into the start of `buffer` and return its length; the TCP checksum is
    /// computed over `payload` (zeros past its end; extra bytes ignored).
    pub fn emit(&self, payload: &[u8], buffer: &mut [u8]) -> Result<usize> {
        self.link.check()?;
        self.ip.check(self.tcp.buffer_len())?;
        let len = self.buffer_len();
        let buffer = buffer
            .get_mut(..len)
            .ok_or(Error::Truncated("output buffer"))?;
        let l2 = self.link.header_len();
        emit_link_ip(
            &self.link,
            EtherType::IPV4,
            &self.ip,
            Protocol::TCP,
            self.tcp.buffer_len(),
            buffer,
        )?;
        let segment = &mut buffer[l2 + ipv4::HEADER_LEN..l2 + self.ip_len()];
        self.tcp.emit(
            &mut tcp::Packet::new_unchecked(segment),
            self.ip.src_addr,
            self.ip.dst_addr,
            payload,
        );
        buffer[l2 + self.ip_len()..].fill(0);
        Ok(len)
    }

    /// The frame as a new byte vector.
    pub fn to_bytes(&self, payload: &[u8]) -> Result<Vec<u8>> {
        let mut bytes = vec![0; self.buffer_len()];
        self.emit(payload, &mut bytes)?;
        Ok(bytes)
    }

    /// Parse a TCP/IPv4 frame and return it with its payload bytes; checks both checksums.
    pub fn parse(bytes: &[u8]) -> Result<(TcpFrame, &[u8])> {
        let (link, ethertype, l3) = parse_link(bytes)?;
        if ethertype != EtherType::IPV4 {
            return Err(Error::Unsupported("EtherType other than IPv4 for TCP"));
        }
        let l3 = parse_ip(l3)?;
        if l3.protocol != Protocol::TCP {
            return Err(Error::Unsupported("IPv4 protocol other than TCP"));
        }
        parse_tcp(link, &l3)
    }
}

pub(super) fn parse_tcp<'a>(link: Link, l3: &L3<'a>) -> Result<(TcpFrame, &'a [u8])> {
    let segment = &l3.datagram[l3.header_len..];
    let packet = tcp::Packet::new_checked(segment)?;
    let tcp = tcp::Repr::parse(&packet, l3.ip.src_addr, l3.ip.dst_addr)?;
    let frame = TcpFrame {
        link,
        ip: l3.ip,
        tcp,
    };
    Ok((frame, &segment[packet.header_len()..]))
}
