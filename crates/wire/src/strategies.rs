//! proptest strategies over every `Repr` and frame, shared by the unit tests. Each strategy
//! produces only values that round-trip: fields within their wire widths, SACK blocks packed
//! from index 0 and no more than fit, extension headers matching the opcode.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use units::Priority;

use crate::frame::{CnpFrame, ExtHeaders, Frame, Ip, Link, PfcFrame, RoceFrame, TcpFrame};
use crate::ib::aeth::{NakCode, Syndrome};
use crate::ib::{
    U24_MASK, aeth, atomic_ack_eth, atomic_eth, bth, cnp, deth, feth, ieth, immdt, irn, rdeth, reth,
};
use crate::{
    Ecn, EtherType, EthernetAddress, Ipv4Address, Opcode, Protocol, ethernet, ipv4, pfc, tcp, udp,
    vlan,
};

pub fn priority() -> impl Strategy<Value = Priority> {
    (0u8..8).prop_map(Priority::of)
}

pub fn vlan_tag() -> impl Strategy<Value = vlan::Tag> {
    (priority(), any::<bool>(), 0..=vlan::VID_MAX).prop_map(|(pcp, dei, vid)| vlan::Tag {
        pcp,
        dei,
        vid,
    })
}

/// EtherTypes that are types (not lengths) and not the VLAN TPID.
pub fn ethertype() -> impl Strategy<Value = EtherType> {
    (EtherType::MIN_TYPE..=u16::MAX)
        .prop_filter("not a VLAN TPID", |t| *t != EtherType::VLAN.0)
        .prop_map(EtherType)
}

pub fn vlan_repr() -> impl Strategy<Value = vlan::Repr> {
    (vlan_tag(), any::<u16>().prop_map(EtherType))
        .prop_map(|(tag, ethertype)| vlan::Repr { tag, ethertype })
}

pub fn mac() -> impl Strategy<Value = EthernetAddress> {
    any::<[u8; 6]>().prop_map(EthernetAddress)
}

pub fn ipv4_addr() -> impl Strategy<Value = Ipv4Address> {
    any::<[u8; 4]>().prop_map(Ipv4Address)
}

pub fn ecn() -> impl Strategy<Value = Ecn> {
    (0u8..4).prop_map(Ecn::from_bits)
}

pub fn ethernet_repr() -> impl Strategy<Value = ethernet::Repr> {
    (mac(), mac(), proptest::option::of(vlan_tag()), ethertype()).prop_map(
        |(dst_addr, src_addr, vlan, ethertype)| ethernet::Repr {
            dst_addr,
            src_addr,
            vlan,
            ethertype,
        },
    )
}

pub fn ipv4_repr() -> impl Strategy<Value = ipv4::Repr> {
    (
        (ipv4_addr(), ipv4_addr(), any::<u8>(), 0u16..1500),
        (0..=ipv4::DSCP_MAX, ecn(), any::<u16>()),
        (any::<bool>(), any::<bool>(), 0u16..=0x1fff, any::<u8>()),
    )
        .prop_map(
            |(
                (src_addr, dst_addr, protocol, payload_len),
                (dscp, ecn, ident),
                (dont_frag, more_frags, frag_offset, ttl),
            )| ipv4::Repr {
                src_addr,
                dst_addr,
                protocol: Protocol(protocol),
                payload_len,
                dscp,
                ecn,
                ident,
                dont_frag,
                more_frags,
                frag_offset,
                ttl,
            },
        )
}

pub fn udp_repr() -> impl Strategy<Value = udp::Repr> {
    (any::<u16>(), any::<u16>(), 0u16..1500).prop_map(|(src_port, dst_port, payload_len)| {
        udp::Repr {
            src_port,
            dst_port,
            payload_len,
        }
    })
}

pub fn tcp_repr() -> impl Strategy<Value = tcp::Repr> {
    (
        (any::<u16>(), any::<u16>(), any::<u32>(), any::<u32>()),
        (any::<u8>(), any::<u16>(), any::<u16>(), 0u16..1500),
        (
            proptest::option::of(any::<u16>()),
            proptest::option::of(any::<u8>()),
            any::<bool>(),
            proptest::option::of((any::<u32>(), any::<u32>())),
            vec((any::<u32>(), any::<u32>()), 0..=4),
        ),
    )
        .prop_map(
            |(
                (src_port, dst_port, seq, ack),
                (flags, window, urgent, payload_len),
                (mss, window_scale, sack_permitted, ts, blocks),
            )| {
                let mut repr = tcp::Repr {
                    src_port,
                    dst_port,
                    seq,
                    ack,
                    flags: tcp::Flags::from_bits(flags),
                    window,
                    urgent,
                    mss,
                    window_scale,
                    sack_permitted,
                    sack_ranges: [None; 4],
                    timestamp: ts.map(|(tsval, tsecr)| tcp::Timestamp { tsval, tsecr }),
                    payload_len,
                };
                for (slot, block) in repr.sack_ranges.iter_mut().zip(blocks) {
                    *slot = Some(block);
                }
                // Keep only the blocks that fit, as emit would.
                let fit = repr.sack_blocks_emitted();
                for slot in &mut repr.sack_ranges[fit..] {
                    *slot = None;
                }
                repr
            },
        )
}

pub fn any_opcode() -> impl Strategy<Value = Opcode> {
    select(Opcode::all().collect::<Vec<_>>())
}

/// Opcodes a [`RoceFrame`] can carry: everything but CNP.
pub fn roce_opcode() -> impl Strategy<Value = Opcode> {
    select(Opcode::all().filter(|o| !o.is_cnp()).collect::<Vec<_>>())
}

pub fn bth_repr() -> impl Strategy<Value = bth::Repr> {
    bth_with(any_opcode(), 0u8..4)
}

fn bth_with(
    opcode: impl Strategy<Value = Opcode>,
    pad: impl Strategy<Value = u8>,
) -> impl Strategy<Value = bth::Repr> {
    (
        (opcode, any::<bool>(), any::<bool>(), pad, any::<u16>()),
        (
            any::<bool>(),
            any::<bool>(),
            0..=U24_MASK,
            any::<bool>(),
            0..=U24_MASK,
        ),
    )
        .prop_map(
            |(
                (opcode, solicited, mig_req, pad_count, pkey),
                (fecn, becn, dest_qp, ack_req, psn),
            )| {
                bth::Repr {
                    opcode,
                    solicited,
                    mig_req,
                    pad_count,
                    pkey,
                    fecn,
                    becn,
                    dest_qp,
                    ack_req,
                    psn,
                }
            },
        )
}

pub fn reth_repr() -> impl Strategy<Value = reth::Repr> {
    (any::<u64>(), any::<u32>(), any::<u32>()).prop_map(|(va, rkey, dma_len)| reth::Repr {
        va,
        rkey,
        dma_len,
    })
}

pub fn atomic_eth_repr() -> impl Strategy<Value = atomic_eth::Repr> {
    (any::<u64>(), any::<u32>(), any::<u64>(), any::<u64>()).prop_map(
        |(va, rkey, swap_add, compare)| atomic_eth::Repr {
            va,
            rkey,
            swap_add,
            compare,
        },
    )
}

pub fn deth_repr() -> impl Strategy<Value = deth::Repr> {
    (any::<u32>(), 0..=U24_MASK).prop_map(|(qkey, src_qp)| deth::Repr { qkey, src_qp })
}

pub fn syndrome() -> impl Strategy<Value = Syndrome> {
    prop_oneof![
        (0u8..32).prop_map(|credits| Syndrome::Ack { credits }),
        (0u8..32).prop_map(|timer| Syndrome::RnrNak { timer }),
        (0u8..32).prop_map(|code| Syndrome::Nak(NakCode::from_code(code))),
    ]
}

pub fn aeth_repr() -> impl Strategy<Value = aeth::Repr> {
    (syndrome(), 0..=U24_MASK).prop_map(|(syndrome, msn)| aeth::Repr { syndrome, msn })
}

pub fn pfc_repr() -> impl Strategy<Value = pfc::Repr> {
    prop_oneof![
        any::<u16>().prop_map(|quanta| pfc::Repr::Pause { quanta }),
        (any::<u8>(), any::<[u16; 8]>()).prop_map(|(class_enable, quanta)| pfc::Repr::Pfc {
            class_enable,
            quanta
        }),
    ]
}

fn maybe<T: std::fmt::Debug + Clone + 'static>(
    present: bool,
    s: impl Strategy<Value = T> + 'static,
) -> BoxedStrategy<Option<T>> {
    if present {
        s.prop_map(Some).boxed()
    } else {
        Just(None).boxed()
    }
}

/// Extension headers exactly matching `opcode`.
pub fn ext_headers(opcode: Opcode) -> impl Strategy<Value = ExtHeaders> {
    (
        maybe(
            opcode.has_rdeth(),
            (0..=U24_MASK).prop_map(|ee_context| rdeth::Repr { ee_context }),
        ),
        maybe(opcode.has_deth(), deth_repr()),
        maybe(
            opcode.has_feth(),
            (0u8..4, 0u8..16).prop_map(|(selectivity_level, placement_type)| feth::Repr {
                selectivity_level,
                placement_type,
            }),
        ),
        maybe(opcode.has_reth(), reth_repr()),
        maybe(opcode.has_atomic_eth(), atomic_eth_repr()),
        maybe(opcode.has_aeth(), aeth_repr()),
        maybe(
            opcode.has_atomic_ack_eth(),
            any::<u64>().prop_map(|orig_remote_data| atomic_ack_eth::Repr { orig_remote_data }),
        ),
        maybe(
            opcode.has_immdt(),
            any::<u32>().prop_map(|imm| immdt::Repr { imm }),
        ),
        maybe(
            opcode.has_ieth(),
            any::<u32>().prop_map(|rkey| ieth::Repr { rkey }),
        ),
        irn_ext(opcode),
    )
        .prop_map(
            |(rdeth, deth, feth, reth, atomic_eth, aeth, atomic_ack_eth, immdt, ieth, irn)| {
                ExtHeaders {
                    rdeth,
                    deth,
                    feth,
                    reth,
                    atomic_eth,
                    aeth,
                    atomic_ack_eth,
                    immdt,
                    ieth,
                    irn,
                }
            },
        )
}

/// Sometimes the IRN extension, in the form `opcode` carries (never where it carries none).
fn irn_ext(opcode: Opcode) -> BoxedStrategy<Option<irn::Repr>> {
    let form: BoxedStrategy<irn::Repr> = match irn::Kind::of(opcode) {
        None => return Just(None).boxed(),
        Some(irn::Kind::Write) => reth_repr().prop_map(irn::Repr::Write).boxed(),
        Some(irn::Kind::Send) => (any::<u32>(), any::<u32>())
            .prop_map(|(wqe_sn, offset)| irn::Repr::Send { wqe_sn, offset })
            .boxed(),
        Some(irn::Kind::Sack) => (0..=U24_MASK, any::<u64>())
            .prop_map(|(psn, received)| irn::Repr::Sack { psn, received })
            .boxed(),
    };
    proptest::option::of(form).boxed()
}

pub fn link() -> impl Strategy<Value = Link> {
    (mac(), mac(), proptest::option::of(vlan_tag())).prop_map(|(dst_addr, src_addr, vlan)| Link {
        dst_addr,
        src_addr,
        vlan,
    })
}

pub fn ip() -> impl Strategy<Value = Ip> {
    (
        ipv4_addr(),
        ipv4_addr(),
        0..=ipv4::DSCP_MAX,
        ecn(),
        any::<u16>(),
        any::<bool>(),
        any::<u8>(),
    )
        .prop_map(
            |(src_addr, dst_addr, dscp, ecn, ident, dont_frag, ttl)| Ip {
                src_addr,
                dst_addr,
                dscp,
                ecn,
                ident,
                dont_frag,
                ttl,
            },
        )
}

pub fn roce_frame() -> impl Strategy<Value = RoceFrame> {
    roce_opcode().prop_flat_map(|opcode| {
        let payload_len = if opcode.has_payload() {
            (0u16..1100).boxed()
        } else {
            Just(0u16).boxed()
        };
        (
            link(),
            ip(),
            any::<u16>(),
            bth_with(Just(opcode), Just(0)),
            ext_headers(opcode),
            payload_len,
        )
            .prop_map(|(link, ip, sport, bth, ext, payload_len)| {
                RoceFrame::new(link, ip, sport, bth, ext, payload_len)
            })
    })
}

pub fn cnp_frame() -> impl Strategy<Value = CnpFrame> {
    (
        link(),
        ip(),
        any::<u16>(),
        (any::<u16>(), 0..=U24_MASK, any::<bool>(), any::<bool>()),
    )
        .prop_map(
            |(link, ip, udp_src_port, (pkey, dest_qp, fecn, becn))| CnpFrame {
                link,
                ip,
                udp_src_port,
                cnp: cnp::Repr {
                    pkey,
                    dest_qp,
                    fecn,
                    becn,
                },
            },
        )
}

pub fn tcp_frame() -> impl Strategy<Value = TcpFrame> {
    (link(), ip(), tcp_repr()).prop_map(|(link, ip, tcp)| TcpFrame { link, ip, tcp })
}

pub fn pfc_frame() -> impl Strategy<Value = PfcFrame> {
    (link(), pfc_repr()).prop_map(|(link, control)| PfcFrame { link, control })
}

pub fn frame() -> impl Strategy<Value = Frame> {
    prop_oneof![
        roce_frame().prop_map(Frame::Roce),
        cnp_frame().prop_map(Frame::Cnp),
        tcp_frame().prop_map(Frame::Tcp),
        pfc_frame().prop_map(Frame::Pfc),
    ]
}
