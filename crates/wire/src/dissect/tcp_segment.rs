//! A TCP segment, field by field: the header, each option (RFC 9293 §3.1, RFC 7323, RFC 2018)
//! and the checksum over the IPv4 pseudo-header.

use super::*;

impl Walk<'_> {
    pub(super) fn tcp(
        &mut self,
        l4: Range<usize>,
        src: Ipv4Address,
        dst: Ipv4Address,
    ) -> crate::Result<()> {
        let bytes = self.bytes;
        let seg = &bytes[l4.clone()];
        let t = tcp::Packet::new_checked(seg)?;
        use tcp::field as f;
        let hl = t.header_len();
        let ck = if self.touches_elided(l4.clone()) {
            Verdict::Unchecked
        } else if t.verify_checksum(src, dst) {
            Verdict::Good
        } else {
            Verdict::Bad { computed: 0 }
        };
        let flags = t.flags();
        let flag = |name, bit: tcp::Flags| {
            field(
                name,
                bits8(f::FLAGS, bit.bits()),
                flags.contains(bit).into(),
            )
        };
        let mut fields = vec![
            field("Source Port", bytes_at(f::SRC_PORT), t.src_port().into()),
            field(
                "Destination Port",
                bytes_at(f::DST_PORT),
                t.dst_port().into(),
            ),
            field("Sequence Number", bytes_at(f::SEQ), t.seq().into()),
            field("Acknowledgment Number", bytes_at(f::ACK), t.ack().into()),
            field("Data Offset", bits8(f::DATA_OFFSET, 0xf0), (hl / 4) as u64)
                .means(Meaning::Bytes(hl as u64)),
            field(
                "Rsrvd",
                bits8(f::DATA_OFFSET, 0x0f),
                (seg[f::DATA_OFFSET] & 0x0f).into(),
            )
            .means(Meaning::Reserved),
            flag("CWR", tcp::Flags::CWR).means(Meaning::TcpFlags(flags)),
            flag("ECE", tcp::Flags::ECE),
            flag("URG", tcp::Flags::URG),
            flag("ACK", tcp::Flags::ACK),
            flag("PSH", tcp::Flags::PSH),
            flag("RST", tcp::Flags::RST),
            flag("SYN", tcp::Flags::SYN),
            flag("FIN", tcp::Flags::FIN),
            field("Window", bytes_at(f::WINDOW), t.window().into()),
            field("Checksum", bytes_at(f::CHECKSUM), t.checksum().into()).means(Meaning::Check(ck)),
            field("Urgent Pointer", bytes_at(f::URGENT), t.urgent().into()),
        ];
        // The options, each as its kind, length and data fields.
        let mut rest = t.options();
        let mut at = tcp::HEADER_LEN;
        let mut bad = None;
        while !rest.is_empty() {
            let kind = rest[0];
            let (after, opt) = match tcp::TcpOption::parse(rest) {
                Ok(x) => x,
                Err(e) => {
                    bad = Some(e);
                    break;
                }
            };
            let len = match opt {
                // End of list: the rest is padding.
                tcp::TcpOption::EndOfList => rest.len(),
                _ => opt.buffer_len(),
            };
            // Each option's fields are defined where the option is (RFC 9293 §3.2 keeps EOL,
            // NOP and MSS; an unknown kind has only §3.1's kind-length-data shape).
            let cite = match opt {
                tcp::TcpOption::EndOfList
                | tcp::TcpOption::NoOperation
                | tcp::TcpOption::MaxSegmentSize(_) => "RFC 9293 §3.2",
                tcp::TcpOption::WindowScale(_) => "RFC 7323 §2",
                tcp::TcpOption::Timestamp(_) => "RFC 7323 §3",
                tcp::TcpOption::SackPermitted => "RFC 2018 §2",
                tcp::TcpOption::SackRange(_) => "RFC 2018 §3",
                tcp::TcpOption::Unknown { .. } => "RFC 9293 §3.1",
            };
            let mut push = |f: FieldView| fields.push(f.cites(cite));
            push(field("Kind", bytes_at(at..at + 1), kind.into()).means(Meaning::TcpOption(kind)));
            let data = at + 2..at + len;
            match opt {
                tcp::TcpOption::EndOfList | tcp::TcpOption::NoOperation => {
                    if len > 1 {
                        push(bytes_field("Padding", at + 1..at + len).means(Meaning::Reserved));
                    }
                }
                _ => {
                    push(field("Length", bytes_at(at + 1..at + 2), len as u64));
                    match opt {
                        tcp::TcpOption::MaxSegmentSize(m) => push(
                            field("MSS", bytes_at(data), m.into()).means(Meaning::Bytes(m.into())),
                        ),
                        tcp::TcpOption::WindowScale(s) => {
                            push(field("Shift", bytes_at(data), s.into()))
                        }
                        tcp::TcpOption::Timestamp(ts) => {
                            push(field("TSval", bytes_at(at + 2..at + 6), ts.tsval.into()));
                            push(field("TSecr", bytes_at(at + 6..at + 10), ts.tsecr.into()));
                        }
                        tcp::TcpOption::SackRange(blocks) => {
                            let mut b = at + 2;
                            for (left, right) in blocks.iter().flatten() {
                                push(field("Left Edge", bytes_at(b..b + 4), (*left).into()));
                                push(field("Right Edge", bytes_at(b + 4..b + 8), (*right).into()));
                                b += 8;
                            }
                        }
                        tcp::TcpOption::SackPermitted => {}
                        _ => {
                            if !data.is_empty() {
                                push(bytes_field("Data", data));
                            }
                        }
                    }
                }
            }
            at += len;
            rest = after;
        }
        self.push(Kind::Tcp, l4.start, hl, fields);
        if let Some(e) = bad {
            return Err(e);
        }
        let payload = l4.start + hl..l4.end;
        if !payload.is_empty() {
            self.push_cited(
                Kind::Payload,
                payload.start,
                payload.len(),
                vec![bytes_field("Data", 0..payload.len())],
                "RFC 9293 §3.1",
            );
        }
        Ok(())
    }
}
