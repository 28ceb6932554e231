//! A multi-packet WRITE, a READ and both atomics, captured to pcap with real payload bytes:
//! tshark decodes opcodes, PSNs, RETH, AETH, AtomicETH and AtomicAckETH, and every ICRC is
//! recomputed here with a bitwise CRC-32 written from the definition (research/verbs-spec.md §6).
//!
//! Without tshark on PATH the tshark half fails when `CI` is set and otherwise warns loudly.

use crate::support;

use engine::Budget;
use fabric::{FabricConfig, LinkConfig, Topology};
use rdmalab::world::{RcOptions, World};
use units::{Bandwidth, SimDuration};
use verbs::{
    AccessFlags, NicProfile, WcStatus,
    types::Mtu,
    wr::{SendWr, Sge},
};
use wire::PcapReader;

/// CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320), one bit at a time.
fn crc32_bitwise(bytes: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for &b in bytes {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// The ICRC of a VLAN-tagged RoCEv2/IPv4 frame (without FCS), masked as the spec says.
fn icrc_of(frame: &[u8]) -> [u8; 4] {
    let ip_start = 18; // 14-byte Ethernet header + 4-byte 802.1Q tag
    let mut m = frame[ip_start..frame.len() - 4].to_vec();
    let ihl = (m[0] & 0x0f) as usize * 4;
    m[1] = 0xff; // TOS
    m[8] = 0xff; // TTL
    m[10] = 0xff; // header checksum
    m[11] = 0xff;
    m[ihl + 6] = 0xff; // UDP checksum
    m[ihl + 7] = 0xff;
    m[ihl + 8 + 4] = 0xff; // BTH byte 4 (FECN/BECN/reserved)
    let mut all = vec![0xff; 8];
    all.extend_from_slice(&m);
    crc32_bitwise(&all).to_le_bytes()
}

#[test]
fn write_read_atomics_decode_in_tshark_with_valid_icrcs() {
    let tmp = tempfile::Builder::new()
        .prefix("rdmalab-rdma-pcap-")
        .tempdir()
        .unwrap();
    let dir = tmp.path();
    let path = dir.join("rdma.pcap");
    let topo = Topology::back_to_back(LinkConfig::new(Bandwidth::gbps(100), 3)).unwrap();
    let mut w = World::new(
        &topo,
        FabricConfig::default(),
        Default::default(),
        NicProfile::Mlx5,
    )
    .unwrap();
    let (a, b) = w
        .connect_rc(
            0,
            1,
            &RcOptions {
                mtu: Mtu::Mtu1024,
                ..Default::default()
            },
        )
        .unwrap();
    // Capture from here on: the connection exchange before this is not part of the test.
    w.capture_pcap(Box::new(std::io::BufWriter::new(
        std::fs::File::create(&path).unwrap(),
    )))
    .unwrap();
    let access = AccessFlags::LOCAL_WRITE
        | AccessFlags::REMOTE_WRITE
        | AccessFlags::REMOTE_READ
        | AccessFlags::REMOTE_ATOMIC;
    let abuf = w.verbs(0).memory_mut().alloc(1 << 16).unwrap();
    let amr = w.verbs(0).reg_mr(a.pd, abuf, 1 << 16, access).unwrap();
    let bbuf = w.verbs(1).memory_mut().alloc(1 << 16).unwrap();
    let bmr = w.verbs(1).reg_mr(b.pd, bbuf, 1 << 16, access).unwrap();
    w.verbs(0).memory_mut().write(abuf, &[0x5a; 3000]).unwrap();
    w.verbs(1).memory_mut().write_u64(bbuf + 0x8000, 5).unwrap();
    let wrs = [
        SendWr::write(
            1,
            vec![Sge {
                addr: abuf,
                length: 3000,
                lkey: amr.lkey,
            }],
            bbuf,
            bmr.rkey,
        )
        .signaled(),
        SendWr::read(
            2,
            vec![Sge {
                addr: abuf + 0x4000,
                length: 2048,
                lkey: amr.lkey,
            }],
            bbuf,
            bmr.rkey,
        )
        .signaled(),
        SendWr::cmp_and_swp(
            3,
            vec![Sge {
                addr: abuf + 0x6000,
                length: 8,
                lkey: amr.lkey,
            }],
            bbuf + 0x8000,
            bmr.rkey,
            5,
            9,
        )
        .signaled(),
        SendWr::fetch_and_add(
            4,
            vec![Sge {
                addr: abuf + 0x6008,
                length: 8,
                lkey: amr.lkey,
            }],
            bbuf + 0x8000,
            bmr.rkey,
            3,
        )
        .signaled(),
    ];
    w.post_send(0, a.qpn, &wrs).unwrap();
    let until = w.now() + SimDuration::from_us(100);
    w.run_until(until, &Budget::default()).unwrap();
    w.finish_pcap().unwrap();
    let wcs = w.poll_cq(0, a.cq, 8).unwrap();
    assert_eq!(
        wcs.iter().map(|c| c.status).collect::<Vec<_>>(),
        vec![WcStatus::Success; 4]
    );

    // The requester pipelines every request: WRITE FIRST/MIDDLE/LAST (PSN 0..2, RETH on the
    // first), the READ request (PSN 3, reserving PSNs 3 and 4 for its two responses), CAS (PSN 5)
    // and FADD (PSN 6); then the responder's ACK for PSN 2, READ response FIRST/LAST (PSN 3, 4)
    // and the two atomic ACKs.
    let mut frames = Vec::new();
    for rec in PcapReader::new(std::fs::File::open(&path).unwrap()).unwrap() {
        frames.push(rec.unwrap().data);
    }
    for f in &frames {
        assert_eq!(
            &f[f.len() - 4..],
            &icrc_of(f),
            "ICRC recomputed independently"
        );
    }
    let opcodes: Vec<u8> = frames.iter().map(|f| f[18 + 20 + 8]).collect();
    assert_eq!(
        opcodes,
        vec![
            0x06, 0x07, 0x08, 0x0c, 0x13, 0x14, 0x11, 0x0d, 0x0f, 0x12, 0x12
        ]
    );

    let fields = [
        "infiniband.bth.opcode",
        "infiniband.bth.psn",
        "infiniband.bth.destqp",
        "infiniband.reth.va",
        "infiniband.reth.r_key",
        "infiniband.reth.dmalen",
        "infiniband.aeth.syndrome",
        "infiniband.aeth.msn",
        "infiniband.atomiceth.swapdt",
        "infiniband.atomiceth.cmpdt",
        "infiniband.atomicacketh.origremdt",
    ];
    let mut args = vec![
        "-r",
        path.to_str().unwrap(),
        "-T",
        "fields",
        "-E",
        "separator=|",
        "-E",
        "occurrence=f",
    ];
    for f in fields {
        args.extend(["-e", f]);
    }
    let Some(text) = support::tshark(&args) else {
        return;
    };
    let rows: Vec<Vec<String>> = text
        .lines()
        .map(|l| l.split('|').map(str::to_owned).collect())
        .collect();
    let col =
        |r: usize, name: &str| rows[r][fields.iter().position(|f| *f == name).unwrap()].clone();
    assert_eq!(rows.len(), 11);
    let ops: Vec<String> = (0..11).map(|r| col(r, "infiniband.bth.opcode")).collect();
    assert_eq!(
        ops,
        [
            "6", "7", "8", "12", "19", "20", "17", "13", "15", "18", "18"
        ]
    );
    let psns: Vec<String> = (0..11).map(|r| col(r, "infiniband.bth.psn")).collect();
    assert_eq!(
        psns,
        ["0", "1", "2", "3", "5", "6", "2", "3", "4", "5", "6"]
    );
    // RETH on WRITE FIRST and on the READ request.
    assert_eq!(col(0, "infiniband.reth.va"), format!("0x{:016x}", bbuf));
    assert_eq!(
        col(0, "infiniband.reth.r_key"),
        format!("0x{:08x}", bmr.rkey)
    );
    assert_eq!(col(0, "infiniband.reth.dmalen"), "3000");
    assert_eq!(col(3, "infiniband.reth.dmalen"), "2048");
    // AETH: an ACK (syndrome 0x1f, unlimited credits) with MSN 1 after the WRITE.
    assert_eq!(col(6, "infiniband.aeth.syndrome"), "31");
    assert_eq!(col(6, "infiniband.aeth.msn"), "1");
    // AtomicETH and AtomicAckETH.
    assert_eq!(col(4, "infiniband.atomiceth.cmpdt"), "5");
    assert_eq!(col(4, "infiniband.atomiceth.swapdt"), "9");
    assert_eq!(col(9, "infiniband.atomicacketh.origremdt"), "5");
    assert_eq!(col(10, "infiniband.atomicacketh.origremdt"), "9");
}
