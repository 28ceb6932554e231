//! tshark as an independent oracle for the frames this crate emits.
//!
//! Writes one pcap with a frame of every kind rdmalab produces, has tshark decode it field by
//! field, and checks what tshark saw against what was built: BTH, RETH, AETH, DETH, ImmDt,
//! AtomicETH, AtomicAckETH, CNP, TCP with SACK/window scale/timestamps, PFC and PAUSE, a VLAN
//! PCP, checksum validity and nanosecond timestamps. tshark does not check the ICRC
//! (`ecosystem.md`), so the pcap is also read back with the crate's reader and every RoCEv2
//! ICRC is recomputed and compared with both the frame and tshark's "Invariant CRC".
//!
//! Without tshark on PATH the test fails when `CI` is set and otherwise prints a loud
//! warning and passes.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::Command;

use units::{Priority, SimTime};
use wire::frame::{CnpFrame, ExtHeaders, Frame, Ip, Link, PfcFrame, RoceFrame, TcpFrame};
use wire::ib::aeth::{self, NakCode, Syndrome};
use wire::ib::{DEFAULT_PKEY, atomic_ack_eth, atomic_eth, bth, cnp, deth, icrc, immdt, reth};
use wire::pcap::{PcapReader, PcapWriter};
use wire::{Ecn, EthernetAddress, Ipv4Address, Opcode, Operation, parse_frame, pfc, tcp, vlan};

const MAC_A: EthernetAddress = EthernetAddress([0x02, 0, 0, 0, 0, 0x01]);
const MAC_B: EthernetAddress = EthernetAddress([0x02, 0, 0, 0, 0, 0x02]);
const IP_A: Ipv4Address = Ipv4Address::new(10, 0, 0, 1);
const IP_B: Ipv4Address = Ipv4Address::new(10, 0, 0, 2);

/// The fields asked of tshark, in column order.
const FIELDS: &[&str] = &[
    "frame.number",
    "frame.time_epoch",
    "vlan.priority",
    "vlan.id",
    "ip.dsfield.dscp",
    "ip.dsfield.ecn",
    "ip.checksum.status",
    "udp.dstport",
    "infiniband.bth.opcode",
    "infiniband.bth.destqp",
    "infiniband.bth.psn",
    "infiniband.bth.a",
    "infiniband.bth.padcnt",
    "infiniband.reth.va",
    "infiniband.reth.r_key",
    "infiniband.reth.dmalen",
    "infiniband.aeth.syndrome",
    "infiniband.aeth.syndrome.timer",
    "infiniband.aeth.msn",
    "infiniband.deth.q_key",
    "infiniband.deth.srcqp",
    "infiniband.immdt",
    "infiniband.atomiceth.swapdt",
    "infiniband.atomiceth.cmpdt",
    "infiniband.atomicacketh.origremdt",
    "infiniband.invariant.crc",
    "tcp.seq",
    "tcp.ack",
    "tcp.checksum.status",
    "tcp.options.mss_val",
    "tcp.options.wscale.shift",
    "tcp.options.sack_le",
    "tcp.options.sack_re",
    "tcp.options.timestamp.tsval",
    "tcp.options.timestamp.tsecr",
    "macc.opcode",
    "macc.cbfc.enbv",
    "macc.cbfc.pause_time.c3",
    "macc.cbfc.pause_time.c4",
    "macc.pause_time",
];

fn bth(op: Operation, dest_qp: u32, psn: u32, ack_req: bool) -> bth::Repr {
    bth::Repr {
        opcode: Opcode::rc(op),
        solicited: false,
        mig_req: false,
        pad_count: 0,
        pkey: DEFAULT_PKEY,
        fecn: false,
        becn: false,
        dest_qp,
        ack_req,
        psn,
    }
}

fn roce(bth: bth::Repr, ext: ExtHeaders, payload_len: u16) -> Frame {
    let ip = Ip {
        ecn: Ecn::Ect0,
        ident: 1,
        ..Ip::new(IP_A, IP_B)
    };
    Frame::Roce(RoceFrame::new(
        Link::new(MAC_A, MAC_B),
        ip,
        49152,
        bth,
        ext,
        payload_len,
    ))
}

fn aeth(syndrome: Syndrome, msn: u32) -> ExtHeaders {
    ExtHeaders {
        aeth: Some(aeth::Repr { syndrome, msn }),
        ..ExtHeaders::NONE
    }
}

/// One frame of every kind, with the payload to emit it with.
fn frames() -> Vec<(Frame, Vec<u8>)> {
    use Operation::*;
    let reth_write = reth::Repr {
        va: 0x7f00_0000_2000,
        rkey: 0xabcd,
        dma_len: 4096,
    };
    let reth_read = reth::Repr {
        va: 0x7f00_0000_3000,
        rkey: 0x55,
        dma_len: 2048,
    };
    let mut vlan_roce = roce(bth(SendOnly, 0x11, 700, true), ExtHeaders::NONE, 64);
    vlan_roce.link_mut().vlan = Some(vlan::Tag {
        pcp: Priority::of(3),
        dei: false,
        vid: 100,
    });
    let ud = {
        let bth = bth::Repr {
            opcode: Opcode::UD_SEND_ONLY,
            ack_req: false,
            ..bth(SendOnly, 0x33, 800, false)
        };
        let ext = ExtHeaders {
            deth: Some(deth::Repr {
                qkey: 0x1111_1111,
                src_qp: 0x22,
            }),
            ..ExtHeaders::NONE
        };
        roce(bth, ext, 100)
    };
    let imm = ExtHeaders {
        immdt: Some(immdt::Repr { imm: 0xdead_beef }),
        ..ExtHeaders::NONE
    };
    let fetch_add = ExtHeaders {
        atomic_eth: Some(atomic_eth::Repr {
            va: 0x7f00_0000_4000,
            rkey: 0x66,
            swap_add: 5,
            compare: 0,
        }),
        ..ExtHeaders::NONE
    };
    let atomic_ack = ExtHeaders {
        atomic_ack_eth: Some(atomic_ack_eth::Repr {
            orig_remote_data: 41,
        }),
        ..aeth(Syndrome::Ack { credits: 0x1f }, 9)
    };
    let cnp = Frame::Cnp(CnpFrame {
        link: Link::new(MAC_B, MAC_A),
        ip: Ip {
            dscp: 48,
            ..Ip::new(IP_B, IP_A)
        },
        udp_src_port: 49152,
        cnp: cnp::Repr::new(0x11),
    });
    let tcp_data = Frame::Tcp(TcpFrame {
        link: Link::new(MAC_A, MAC_B),
        ip: Ip {
            ecn: Ecn::Ect0,
            ..Ip::new(IP_A, IP_B)
        },
        tcp: tcp::Repr {
            src_port: 5001,
            dst_port: 40000,
            seq: 1_000_000,
            ack: 2_000_000,
            flags: tcp::Flags::ACK,
            window: 1024,
            window_scale: Some(7),
            sack_ranges: [
                Some((2_001_000, 2_002_000)),
                Some((2_003_000, 2_004_500)),
                None,
                None,
            ],
            timestamp: Some(tcp::Timestamp {
                tsval: 123_456,
                tsecr: 654_321,
            }),
            payload_len: 100,
            ..tcp::Repr::default()
        },
    });
    let tcp_syn = Frame::Tcp(TcpFrame {
        link: Link::new(MAC_B, MAC_A),
        ip: Ip::new(IP_B, IP_A),
        tcp: tcp::Repr {
            src_port: 40000,
            dst_port: 5001,
            seq: 1_999_999,
            flags: tcp::Flags::SYN,
            window: 64240,
            mss: Some(1460),
            window_scale: Some(9),
            sack_permitted: true,
            timestamp: Some(tcp::Timestamp { tsval: 1, tsecr: 0 }),
            ..tcp::Repr::default()
        },
    });
    let pfc = Frame::Pfc(PfcFrame::new(
        MAC_B,
        pfc::Repr::Pfc {
            class_enable: 0x18,
            quanta: [0, 0, 0, 0xffff, 0, 0, 0, 0],
        },
    ));
    let pause = Frame::Pfc(PfcFrame::new(MAC_B, pfc::Repr::Pause { quanta: 0x1234 }));

    let pattern = |n: usize| (0..n).map(|i| i as u8).collect::<Vec<u8>>();
    vec![
        (
            roce(bth(SendOnly, 0x11, 100, true), ExtHeaders::NONE, 16),
            b"hello rdma send!".to_vec(),
        ),
        (
            roce(
                bth(RdmaWriteFirst, 0x11, 200, false),
                ExtHeaders {
                    reth: Some(reth_write),
                    ..ExtHeaders::NONE
                },
                1024,
            ),
            pattern(1024),
        ),
        (
            roce(
                bth(Acknowledge, 0x22, 200, false),
                aeth(Syndrome::Ack { credits: 0x1f }, 5),
                0,
            ),
            vec![],
        ),
        (
            roce(
                bth(Acknowledge, 0x22, 201, false),
                aeth(Syndrome::RnrNak { timer: 12 }, 5),
                0,
            ),
            vec![],
        ),
        (
            roce(
                bth(Acknowledge, 0x22, 202, false),
                aeth(Syndrome::Nak(NakCode::PsnSequenceError), 6),
                0,
            ),
            vec![],
        ),
        (
            roce(
                bth(RdmaReadRequest, 0x11, 300, true),
                ExtHeaders {
                    reth: Some(reth_read),
                    ..ExtHeaders::NONE
                },
                0,
            ),
            vec![],
        ),
        (
            roce(
                bth(RdmaReadResponseFirst, 0x22, 300, false),
                aeth(Syndrome::Ack { credits: 0x1f }, 7),
                1024,
            ),
            pattern(1024),
        ),
        (roce(bth(FetchAdd, 0x11, 400, true), fetch_add, 0), vec![]),
        (
            roce(bth(AtomicAcknowledge, 0x22, 400, false), atomic_ack, 0),
            vec![],
        ),
        (ud, pattern(100)),
        (
            roce(bth(SendOnlyWithImmediate, 0x11, 500, true), imm, 13),
            b"odd length 13".to_vec(),
        ),
        (cnp, vec![]),
        (tcp_data, pattern(100)),
        (tcp_syn, vec![]),
        (pfc, vec![]),
        (pause, vec![]),
        (vlan_roce, pattern(64)),
    ]
}

/// The time the i-th frame is written at: i µs + 123 ns + 456 ps (the picoseconds must be
/// truncated away).
fn time_of(i: usize) -> SimTime {
    SimTime::from_ps(i as u64 * 1_000_000 + 123_456)
}

fn write_pcap(path: &Path, frames: &[(Frame, Vec<u8>)]) {
    let file = BufWriter::new(File::create(path).unwrap());
    let mut pcap = PcapWriter::new(file).unwrap();
    for (i, (frame, payload)) in frames.iter().enumerate() {
        pcap.write_frame(time_of(i), &frame.to_bytes(payload).unwrap())
            .unwrap();
    }
    pcap.flush().unwrap();
}

fn tshark_available() -> bool {
    Command::new("tshark")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Run tshark over `path` and return one map of field name to value per frame.
fn tshark_fields(path: &Path) -> Vec<BTreeMap<&'static str, String>> {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r")
        .arg(path)
        .args(["-o", "ip.check_checksum:TRUE"])
        .args(["-o", "tcp.check_checksum:TRUE"])
        .args(["-o", "tcp.relative_sequence_numbers:FALSE"])
        .args(["-T", "fields", "-E", "separator=/t", "-E", "occurrence=a"])
        .args(["-E", "aggregator=,"]);
    for f in FIELDS {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("running tshark");
    assert!(
        out.status.success(),
        "tshark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            assert_eq!(cols.len(), FIELDS.len(), "line: {line}");
            FIELDS
                .iter()
                .zip(cols)
                .map(|(f, v)| (*f, v.to_string()))
                .collect()
        })
        .collect()
}

#[test]
fn tshark_decodes_every_frame_kind() {
    let frames = frames();
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("wire-tshark.pcap");
    write_pcap(&path, &frames);

    // First, with the crate's own reader: timestamps, and every RoCEv2 ICRC recomputed.
    let records: Vec<_> = PcapReader::new(File::open(&path).unwrap())
        .unwrap()
        .collect::<std::io::Result<_>>()
        .unwrap();
    assert_eq!(records.len(), frames.len());
    for (i, (rec, (frame, payload))) in records.iter().zip(&frames).enumerate() {
        assert_eq!(rec.time_ns, time_of(i).as_ps() / 1000);
        assert_eq!(rec.data, frame.to_bytes(payload).unwrap());
        let (parsed, got) = parse_frame(&rec.data).unwrap();
        assert_eq!(&parsed, frame);
        assert_eq!(got, &payload[..]);
        if let Frame::Roce(_) | Frame::Cnp(_) = frame {
            let l2 = frame.link().header_len();
            let ip_len = usize::from(u16::from_be_bytes([rec.data[l2 + 2], rec.data[l2 + 3]]));
            icrc::verify(&rec.data[l2..l2 + ip_len]).unwrap();
        }
    }

    if !tshark_available() {
        if std::env::var_os("CI").is_some() {
            panic!(
                "tshark not found on PATH and CI is set: install it with apt-get install tshark"
            );
        }
        // Written to the stderr handle, not with eprintln!, so that the test harness does
        // not capture it: the skip must be seen.
        let _ = writeln!(
            std::io::stderr(),
            "\n*** SKIPPED: tshark not found; install it with apt-get install tshark ***\n"
        );
        return;
    }
    let rows = tshark_fields(&path);
    assert_eq!(rows.len(), frames.len());
    let mut failures = Vec::new();
    let mut expect = |frame: usize, field: &'static str, want: &str| {
        let got = &rows[frame][field];
        if got != want {
            failures.push(format!(
                "frame {}: {field} = {got:?}, expected {want:?}",
                frame + 1
            ));
        }
    };

    // Every frame: nanosecond timestamps, and a good IPv4 checksum where there is one.
    for (i, (frame, _)) in frames.iter().enumerate() {
        let ns = time_of(i).as_ps() / 1000;
        expect(
            i,
            "frame.time_epoch",
            &format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000),
        );
        if frame.ip().is_some() {
            expect(i, "ip.checksum.status", "1");
        }
        if let Frame::Roce(_) | Frame::Cnp(_) = frame {
            expect(i, "udp.dstport", "4791");
        }
        // tshark does not check the ICRC, but shows it: it must be the one recomputed here.
        if let Frame::Roce(f) = frame {
            let bytes = frame.to_bytes(&frames[i].1).unwrap();
            let l2 = f.link.header_len();
            let end = l2 + f.ip_len();
            let wire_icrc = [
                bytes[end - 4],
                bytes[end - 3],
                bytes[end - 2],
                bytes[end - 1],
            ];
            let covered = &bytes[l2..end - 4];
            assert_eq!(icrc::compute(covered).unwrap(), wire_icrc);
            let shown = format!("{:#010x}", icrc::as_displayed(wire_icrc));
            expect(i, "infiniband.invariant.crc", &shown);
        }
    }

    // 1: RC SEND_ONLY, the ecosystem.md test vector.
    expect(0, "infiniband.bth.opcode", "4");
    expect(0, "infiniband.bth.destqp", "0x000011");
    expect(0, "infiniband.bth.psn", "100");
    expect(0, "infiniband.bth.a", "1");
    expect(0, "infiniband.invariant.crc", "0x58f622a0");
    expect(0, "ip.dsfield.ecn", "2");
    // 2: RDMA_WRITE_FIRST with RETH.
    expect(1, "infiniband.bth.opcode", "6");
    expect(1, "infiniband.bth.psn", "200");
    expect(1, "infiniband.bth.a", "0");
    expect(1, "infiniband.reth.va", "0x00007f0000002000");
    expect(1, "infiniband.reth.r_key", "0x0000abcd");
    expect(1, "infiniband.reth.dmalen", "4096");
    // 3-5: ACK, RNR NAK (timer 12), PSN sequence NAK.
    for (i, syndrome, msn, psn) in [
        (2, "31", "5", "200"),
        (3, "44", "5", "201"),
        (4, "96", "6", "202"),
    ] {
        expect(i, "infiniband.bth.opcode", "17");
        expect(i, "infiniband.bth.destqp", "0x000022");
        expect(i, "infiniband.bth.psn", psn);
        expect(i, "infiniband.aeth.syndrome", syndrome);
        expect(i, "infiniband.aeth.msn", msn);
    }
    expect(3, "infiniband.aeth.syndrome.timer", "12");
    // 6: READ request.
    expect(5, "infiniband.bth.opcode", "12");
    expect(5, "infiniband.reth.va", "0x00007f0000003000");
    expect(5, "infiniband.reth.r_key", "0x00000055");
    expect(5, "infiniband.reth.dmalen", "2048");
    // 7: READ response first.
    expect(6, "infiniband.bth.opcode", "13");
    expect(6, "infiniband.aeth.syndrome", "31");
    expect(6, "infiniband.aeth.msn", "7");
    // 8: FETCH_ADD (tshark shows the AtomicETH address and key under the RETH field names).
    expect(7, "infiniband.bth.opcode", "20");
    expect(7, "infiniband.reth.va", "0x00007f0000004000");
    expect(7, "infiniband.reth.r_key", "0x00000066");
    expect(7, "infiniband.atomiceth.swapdt", "5");
    expect(7, "infiniband.atomiceth.cmpdt", "0");
    // 9: ATOMIC_ACKNOWLEDGE.
    expect(8, "infiniband.bth.opcode", "18");
    expect(8, "infiniband.aeth.msn", "9");
    expect(8, "infiniband.atomicacketh.origremdt", "41");
    // 10: UD SEND_ONLY with DETH.
    expect(9, "infiniband.bth.opcode", "100");
    expect(9, "infiniband.bth.destqp", "0x000033");
    expect(9, "infiniband.deth.q_key", "0x0000000011111111");
    expect(9, "infiniband.deth.srcqp", "0x00000022");
    // 11: SEND_ONLY_WITH_IMM, 13 bytes of payload so 3 bytes of pad.
    expect(10, "infiniband.bth.opcode", "5");
    expect(10, "infiniband.bth.padcnt", "3");
    let immdt = &rows[10]["infiniband.immdt"];
    assert!(
        immdt.split(',').all(|v| v == "deadbeef"),
        "ImmDt shown as {immdt:?}"
    );
    // 12: CNP.
    expect(11, "infiniband.bth.opcode", "129");
    expect(11, "infiniband.bth.destqp", "0x000011");
    expect(11, "ip.dsfield.dscp", "48");
    // 13: TCP data segment with window scale, timestamps and two SACK blocks.
    expect(12, "tcp.seq", "1000000");
    expect(12, "tcp.ack", "2000000");
    expect(12, "tcp.checksum.status", "1");
    expect(12, "tcp.options.wscale.shift", "7");
    expect(12, "tcp.options.sack_le", "2001000,2003000");
    expect(12, "tcp.options.sack_re", "2002000,2004500");
    expect(12, "tcp.options.timestamp.tsval", "123456");
    expect(12, "tcp.options.timestamp.tsecr", "654321");
    expect(12, "ip.dsfield.ecn", "2");
    // 14: TCP SYN.
    expect(13, "tcp.seq", "1999999");
    expect(13, "tcp.checksum.status", "1");
    expect(13, "tcp.options.mss_val", "1460");
    expect(13, "tcp.options.wscale.shift", "9");
    // 15: PFC pausing priority 3, resuming priority 4.
    expect(14, "macc.opcode", "0x0101");
    expect(14, "macc.cbfc.enbv", "0x0018");
    expect(14, "macc.cbfc.pause_time.c3", "65535");
    expect(14, "macc.cbfc.pause_time.c4", "0");
    // 16: classic PAUSE.
    expect(15, "macc.opcode", "0x0001");
    expect(15, "macc.pause_time", "4660");
    // 17: VLAN-tagged RoCE with PCP 3.
    expect(16, "vlan.priority", "3");
    expect(16, "vlan.id", "100");
    expect(16, "infiniband.bth.opcode", "4");
    expect(16, "infiniband.bth.psn", "700");

    assert!(
        failures.is_empty(),
        "tshark disagrees:\n{}",
        failures.join("\n")
    );
}
