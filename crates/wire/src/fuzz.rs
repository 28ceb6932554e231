//! What the fuzz targets check (`fuzz/`), kept here so that `cargo test` replays their corpora
//! and crash inputs through the very same code (`tests/fuzz_regressions.rs`).
//!
//! Every parser takes bytes from strangers (a pcap, a capture): it must answer `Err` on
//! nonsense, never panic; and what it accepts must survive emit → parse unchanged.

use crate::ib::{
    Opcode, aeth, atomic_ack_eth, atomic_eth, bth, cnp, deth, feth, ieth, immdt, irn, rdeth, reth,
};
use crate::{Ipv4Address, ethernet, ipv4, parse_frame, pfc, tcp, udp, vlan};

/// A whole frame: parse; if it parses, emit it and parse again to the same frame and payload.
pub fn frame(data: &[u8]) {
    let Ok((f, payload)) = parse_frame(data) else {
        return;
    };
    let bytes = f
        .to_bytes(payload)
        .unwrap_or_else(|e| panic!("a parsed frame must emit: {e:?} ({f:?})"));
    let (g, again) =
        parse_frame(&bytes).unwrap_or_else(|e| panic!("an emitted frame must parse: {e:?}"));
    assert_eq!(f, g, "parse(emit(parse(x))) = parse(x)");
    assert_eq!(payload, again, "the payload survives the round trip");
}

/// One header: the first byte picks which (and, for the IRN extension, the opcode); the rest
/// is its buffer. Only "no panic" is asked here; the round trips are the unit tests'.
pub fn headers(data: &[u8]) {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let (a, b) = (Ipv4Address([10, 0, 0, 1]), Ipv4Address([10, 0, 0, 2]));
    match which % 20 {
        0 => ignore(bth::Packet::new_checked(rest).and_then(|p| bth::Repr::parse(&p))),
        1 => ignore(aeth::Packet::new_checked(rest).and_then(|p| aeth::Repr::parse(&p))),
        2 => ignore(reth::Packet::new_checked(rest).and_then(|p| reth::Repr::parse(&p))),
        3 => ignore(deth::Packet::new_checked(rest).and_then(|p| deth::Repr::parse(&p))),
        4 => ignore(immdt::Packet::new_checked(rest).and_then(|p| immdt::Repr::parse(&p))),
        5 => ignore(ieth::Packet::new_checked(rest).and_then(|p| ieth::Repr::parse(&p))),
        6 => ignore(rdeth::Packet::new_checked(rest).and_then(|p| rdeth::Repr::parse(&p))),
        7 => ignore(feth::Packet::new_checked(rest).and_then(|p| feth::Repr::parse(&p))),
        8 => {
            ignore(atomic_eth::Packet::new_checked(rest).and_then(|p| atomic_eth::Repr::parse(&p)))
        }
        9 => ignore(
            atomic_ack_eth::Packet::new_checked(rest).and_then(|p| atomic_ack_eth::Repr::parse(&p)),
        ),
        10 => ignore(cnp::Packet::new_checked(rest).and_then(|p| cnp::Repr::parse(&p))),
        11 => {
            if let Some((&op, buf)) = rest.split_first()
                && let Ok(opcode) = Opcode::from_u8(op)
            {
                ignore(irn::Repr::parse(opcode, buf));
            }
        }
        12 => ignore(ethernet::Packet::new_checked(rest).and_then(|p| ethernet::Repr::parse(&p))),
        13 => ignore(vlan::Packet::new_checked(rest).and_then(|p| vlan::Repr::parse(&p))),
        14 => ignore(ipv4::Packet::new_checked(rest).and_then(|p| ipv4::Repr::parse(&p))),
        15 => ignore(udp::Packet::new_checked(rest).and_then(|p| udp::Repr::parse(&p, a, b))),
        16 => ignore(tcp::Packet::new_checked(rest).and_then(|p| tcp::Repr::parse(&p, a, b))),
        17 => ignore(pfc::Packet::new_checked(rest).and_then(|p| pfc::Repr::parse(&p))),
        18 => {
            let mut opts = rest;
            while let Ok((next, _)) = tcp::TcpOption::parse(opts) {
                if next.len() >= opts.len() {
                    break;
                }
                opts = next;
            }
        }
        _ => frame(rest),
    }
}

/// Whatever a parser answered: the fuzzer asks only that it answered.
fn ignore<T>(_: T) {}
