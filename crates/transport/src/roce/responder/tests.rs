//! Unit tests of the responder: one packet in, the exact answer out, and the state it leaves.

use super::*;
use crate::roce::packet::{Transmit, rc_bth};
use wire::ExtHeaders;
use wire::ib::{Opcode, deth, irn, reth};

const PMTU: u32 = 1024;
const BASE: u64 = 0x1000;
const RKEY: u32 = 5;

/// Memory of 16 KiB at [`BASE`] under [`RKEY`], and `recvs` receive WQEs of 4 KiB each.
struct Env {
    mem: Vec<u8>,
    recvs: u32,
    /// Receive completions: (bytes, immediate, write_with_imm).
    done: Vec<(u64, Option<u32>, bool)>,
    failed: Vec<RecvFailure>,
    /// Bytes placed into receive buffers, as (offset, len).
    placed: Vec<(u64, u64)>,
    atomics: u32,
    /// The MR was deregistered: every rkey check fails from now on.
    revoked: bool,
}

impl Env {
    fn new(recvs: u32) -> Env {
        Env {
            mem: vec![0; 16 * 1024],
            recvs,
            done: Vec::new(),
            failed: Vec::new(),
            placed: Vec::new(),
            atomics: 0,
            revoked: false,
        }
    }
}

impl ResponderEnv for Env {
    fn qp_allows(&self, _op: RemoteOp) -> bool {
        true
    }
    fn check_rkey(&mut self, rkey: u32, va: u64, len: u64, _op: RemoteOp) -> bool {
        !self.revoked && rkey == RKEY && va >= BASE && va + len <= BASE + self.mem.len() as u64
    }
    fn start_recv(&mut self) -> bool {
        let ok = self.recvs > 0;
        self.recvs = self.recvs.saturating_sub(1);
        ok
    }
    fn place_recv(&mut self, offset: u64, len: u64, _data: &[u8]) -> Result<(), RecvFailure> {
        if offset + len > 4096 {
            return Err(RecvFailure::TooLong);
        }
        self.placed.push((offset, len));
        Ok(())
    }
    fn place_recv_at(
        &mut self,
        _index: u32,
        offset: u64,
        len: u64,
        data: &[u8],
    ) -> Result<(), RecvFailure> {
        self.place_recv(offset, len, data)
    }
    fn finish_recv(&mut self, byte_len: u64, imm: Option<u32>, wwi: bool, _solicited: bool) {
        self.done.push((byte_len, imm, wwi));
    }
    fn fail_recv(&mut self, why: RecvFailure) {
        self.failed.push(why);
    }
    fn write_remote(&mut self, _rkey: u32, va: u64, len: u64, _data: &[u8]) {
        let o = (va - BASE) as usize;
        self.mem[o..o + len as usize].fill(0xab);
    }
    fn atomic(&mut self, _rkey: u32, va: u64, _cs: Option<(u64, u64)>, add: u64) -> u64 {
        self.atomics += 1;
        let o = (va - BASE) as usize;
        let orig = u64::from_le_bytes(self.mem[o..o + 8].try_into().expect("8 bytes"));
        self.mem[o..o + 8].copy_from_slice(&orig.wrapping_add(add).to_le_bytes());
        orig
    }
}

fn cfg() -> RcConfig {
    RcConfig {
        pmtu: PMTU,
        rq_psn: 100,
        min_rnr_timer: 3,
        max_dest_rd_atomic: 2,
        ..RcConfig::default()
    }
}

fn pkt(op: Operation, psn: u32, len: u32, ack_req: bool) -> RocePacket {
    RocePacket {
        bth: rc_bth(Opcode::rc(op), 0, Psn::new(psn), ack_req),
        ext: ExtHeaders::NONE,
        payload_len: len,
    }
}

fn with_reth(mut p: RocePacket, va: u64, dma_len: u32) -> RocePacket {
    p.ext.reth = Some(reth::Repr {
        va,
        rkey: RKEY,
        dma_len,
    });
    p
}

fn fetch_add(psn: u32, va: u64, add: u64) -> RocePacket {
    let mut p = pkt(Operation::FetchAdd, psn, 0, true);
    p.ext.atomic_eth = Some(wire::ib::atomic_eth::Repr {
        va,
        rkey: RKEY,
        swap_add: add,
        compare: 0,
    });
    p
}

/// (opcode, PSN, syndrome, MSN) of everything the responder has to send.
fn out(r: &mut Responder) -> Vec<(Operation, u32, Option<Syndrome>, Option<u32>)> {
    std::iter::from_fn(|| r.poll_transmit(SimTime::ZERO))
        .map(|t| {
            (
                t.pkt.bth.opcode.operation().expect("known"),
                t.pkt.bth.psn,
                t.pkt.ext.aeth.map(|a| a.syndrome),
                t.pkt.ext.aeth.map(|a| a.msn),
            )
        })
        .collect()
}

const ACK: Option<Syndrome> = Some(Syndrome::Ack {
    credits: CREDITS_UNLIMITED,
});

fn nak(code: NakCode) -> Option<Syndrome> {
    Some(Syndrome::Nak(code))
}

fn handle(r: &mut Responder, env: &mut Env, p: RocePacket) {
    r.handle_request(SimTime::ZERO, &p, &[], env);
}

#[test]
fn an_unsent_ack_is_replaced_by_a_newer_one_but_naks_are_not() {
    let mut r = Responder::new(cfg());
    let mut env = Env::new(4);
    handle(&mut r, &mut env, pkt(Operation::SendOnly, 100, 8, true));
    handle(&mut r, &mut env, pkt(Operation::SendOnly, 101, 8, true));
    handle(&mut r, &mut env, pkt(Operation::SendOnly, 103, 8, true));
    handle(&mut r, &mut env, pkt(Operation::SendOnly, 102, 8, true));
    assert_eq!(
        out(&mut r),
        [
            (Operation::Acknowledge, 101, ACK, Some(2)),
            (
                Operation::Acknowledge,
                102,
                nak(NakCode::PsnSequenceError),
                Some(2)
            ),
            (Operation::Acknowledge, 102, ACK, Some(3)),
        ],
        "the ACK for 100 gave way to 101's; the NAK stays, and the ACK after it is its own"
    );
    assert_eq!(r.counters().acks, 2);
    assert_eq!(
        r.state(),
        RecvState::Ready,
        "the expected PSN came: the gap is over"
    );
}

#[test]
fn packets_without_ack_req_are_taken_silently() {
    let mut r = Responder::new(cfg());
    let mut env = Env::new(1);
    let first = pkt(Operation::SendFirst, 100, PMTU, false);
    handle(&mut r, &mut env, first);
    assert_eq!(out(&mut r), []);
    handle(&mut r, &mut env, pkt(Operation::SendLast, 101, 10, true));
    assert_eq!(out(&mut r), [(Operation::Acknowledge, 101, ACK, Some(1))]);
    assert_eq!(env.done, [(PMTU as u64 + 10, None, false)]);
    assert_eq!(env.placed, [(0, PMTU as u64), (PMTU as u64, 10)]);
}

#[test]
fn a_read_counts_in_the_msn_when_accepted_and_its_responses_carry_aeth_first_and_last() {
    let mut r = Responder::new(cfg());
    let mut env = Env::new(0);
    let read = with_reth(
        pkt(Operation::RdmaReadRequest, 100, 0, true),
        BASE,
        3 * PMTU,
    );
    handle(&mut r, &mut env, read);
    assert_eq!(
        out(&mut r),
        [
            (Operation::RdmaReadResponseFirst, 100, ACK, Some(1)),
            (Operation::RdmaReadResponseMiddle, 101, None, None),
            (Operation::RdmaReadResponseLast, 102, ACK, Some(1)),
        ]
    );
    assert_eq!(r.expected_psn(), 103);
}

#[test]
fn an_older_read_leaves_the_resources_and_its_duplicate_goes_unanswered() {
    let mut r = Responder::new(cfg()); // max_dest_rd_atomic 2
    let mut env = Env::new(0);
    for p in 100..103 {
        let read = with_reth(pkt(Operation::RdmaReadRequest, p, 0, true), BASE, 8);
        handle(&mut r, &mut env, read);
    }
    assert_eq!(out(&mut r).len(), 3);
    let again = with_reth(pkt(Operation::RdmaReadRequest, 100, 0, true), BASE, 8);
    handle(&mut r, &mut env, again);
    assert_eq!(
        out(&mut r),
        [],
        "no resource for PSN 100 any more (class D)"
    );
    let again = with_reth(pkt(Operation::RdmaReadRequest, 102, 0, true), BASE, 8);
    handle(&mut r, &mut env, again);
    assert_eq!(
        out(&mut r),
        [(Operation::RdmaReadResponseOnly, 102, ACK, Some(3))]
    );
    assert_eq!(r.counters().duplicates, 2);
}

#[test]
fn a_duplicate_atomic_returns_the_first_result_without_running_again() {
    let mut r = Responder::new(cfg());
    let mut env = Env::new(0);
    env.mem[..8].copy_from_slice(&41u64.to_le_bytes());
    handle(&mut r, &mut env, fetch_add(100, BASE, 1));
    handle(&mut r, &mut env, fetch_add(100, BASE, 1));
    let sent: Vec<Transmit> = std::iter::from_fn(|| r.poll_transmit(SimTime::ZERO)).collect();
    let orig: Vec<u64> = sent
        .iter()
        .map(|t| {
            t.pkt
                .ext
                .atomic_ack_eth
                .expect("atomic ACK")
                .orig_remote_data
        })
        .collect();
    assert_eq!(orig, [41, 41]);
    assert_eq!(env.atomics, 1);
    assert_eq!(u64::from_le_bytes(env.mem[..8].try_into().unwrap()), 42);
    // Misaligned: invalid request, before any key check.
    handle(&mut r, &mut env, fetch_add(101, BASE + 4, 1));
    assert_eq!(
        out(&mut r),
        [(
            Operation::Acknowledge,
            101,
            nak(NakCode::InvalidRequest),
            Some(1)
        )]
    );
    assert!(r.is_failed());
}

#[test]
fn a_broken_opcode_sequence_is_an_invalid_request_and_the_qp_fails() {
    let mut r = Responder::new(cfg());
    let mut env = Env::new(1);
    handle(
        &mut r,
        &mut env,
        pkt(Operation::SendMiddle, 100, PMTU, true),
    );
    assert_eq!(
        out(&mut r),
        [(
            Operation::Acknowledge,
            100,
            nak(NakCode::InvalidRequest),
            Some(0)
        )]
    );
    assert_eq!(r.state(), RecvState::Error);
    handle(&mut r, &mut env, pkt(Operation::SendOnly, 100, 8, true));
    assert_eq!(out(&mut r), [], "an RC QP in error drops requests");
}

#[test]
fn an_mr_revoked_mid_write_naks_the_next_packet_and_writes_nothing_more() {
    let mut r = Responder::new(cfg());
    let mut env = Env::new(0);
    let first = with_reth(
        pkt(Operation::RdmaWriteFirst, 100, PMTU, false),
        BASE,
        2 * PMTU,
    );
    handle(&mut r, &mut env, first);
    assert!(env.mem[..PMTU as usize].iter().all(|&b| b == 0xab));
    env.revoked = true;
    handle(
        &mut r,
        &mut env,
        pkt(Operation::RdmaWriteLast, 101, PMTU, true),
    );
    assert_eq!(
        out(&mut r),
        [(
            Operation::Acknowledge,
            101,
            nak(NakCode::RemoteAccessError),
            Some(0)
        )]
    );
    assert_eq!(r.state(), RecvState::Error);
    assert!(
        env.mem[PMTU as usize..2 * PMTU as usize]
            .iter()
            .all(|&b| b == 0),
        "the second packet was not placed"
    );
}

#[test]
fn a_send_longer_than_its_receive_fails_the_receive_and_naks() {
    let mut r = Responder::new(cfg());
    let mut env = Env::new(1);
    for (p, op) in (100..).zip([
        Operation::SendFirst,
        Operation::SendMiddle,
        Operation::SendMiddle,
        Operation::SendMiddle,
        Operation::SendLast,
    ]) {
        let len = if op == Operation::SendLast { 1 } else { PMTU };
        handle(&mut r, &mut env, pkt(op, p, len, false));
    }
    assert_eq!(env.failed, [RecvFailure::TooLong]);
    assert_eq!(
        out(&mut r),
        [(
            Operation::Acknowledge,
            104,
            nak(NakCode::InvalidRequest),
            Some(0)
        )]
    );
}

#[test]
fn rnr_on_a_write_with_immediate_leaves_no_message_open() {
    let mut r = Responder::new(cfg());
    let mut env = Env::new(0);
    let wwi = || {
        let mut p = with_reth(
            pkt(Operation::RdmaWriteOnlyWithImmediate, 100, 16, true),
            BASE,
            16,
        );
        p.ext.immdt = Some(wire::ib::immdt::Repr { imm: 9 });
        p
    };
    handle(&mut r, &mut env, wwi());
    assert_eq!(
        out(&mut r),
        [(
            Operation::Acknowledge,
            100,
            Some(Syndrome::RnrNak { timer: 3 }),
            Some(0)
        )]
    );
    assert_eq!(env.mem[0], 0, "nothing of the refused packet is placed");
    env.recvs = 1;
    handle(&mut r, &mut env, wwi());
    assert_eq!(out(&mut r), [(Operation::Acknowledge, 100, ACK, Some(1))]);
    assert_eq!(env.done, [(16, Some(9), true)]);
}

#[test]
fn uc_drops_a_broken_message_silently_until_the_next_first() {
    let mut r = Responder::new(RcConfig {
        service: Service::Uc,
        ..cfg()
    });
    let mut env = Env::new(2);
    handle(
        &mut r,
        &mut env,
        pkt(Operation::SendFirst, 100, PMTU, false),
    );
    // 101 is lost: 102 (a LAST) cannot start a message.
    handle(&mut r, &mut env, pkt(Operation::SendLast, 102, 10, false));
    assert_eq!(r.state(), RecvState::Dropping);
    handle(&mut r, &mut env, pkt(Operation::SendOnly, 103, 10, false));
    assert_eq!(r.state(), RecvState::Ready);
    assert_eq!(out(&mut r), [], "UC answers nothing");
    assert_eq!(
        env.done,
        [(10, None, false)],
        "only the next whole message arrived"
    );
    let c = r.counters();
    assert_eq!((c.dropped_messages, c.out_of_sequence), (1, 2));
}

#[test]
fn ud_takes_a_single_packet_send_with_its_qkey_after_the_grh() {
    let mut r = Responder::new(RcConfig {
        service: Service::Ud,
        qkey: 0x1111,
        ..cfg()
    });
    let mut env = Env::new(2);
    let dgram = |qkey| {
        let mut p = pkt(Operation::SendOnly, 7, 100, false);
        p.bth.opcode = Opcode::new(wire::ib::Transport::Ud, Operation::SendOnly).expect("UD");
        p.ext.deth = Some(deth::Repr { qkey, src_qp: 42 });
        p
    };
    handle(&mut r, &mut env, dgram(0x2222));
    assert_eq!(env.done, [], "a wrong Q_Key is dropped");
    handle(&mut r, &mut env, dgram(0x1111));
    assert_eq!(env.placed, [(0, UD_GRH_BYTES), (UD_GRH_BYTES, 100)]);
    assert_eq!(env.done, [(UD_GRH_BYTES + 100, None, false)]);
    assert_eq!(r.counters().dropped_messages, 1);
    assert_eq!(out(&mut r), []);
}

#[test]
fn selective_repeat_holds_packets_past_a_gap_and_sacks_them() {
    let mut r = Responder::new(RcConfig {
        mode: RetransmitMode::SelectiveRepeat,
        ..cfg()
    });
    let mut env = Env::new(0);
    let write = |p: u32| with_reth(pkt(Operation::RdmaWriteOnly, p, 8, true), BASE, 8);
    handle(&mut r, &mut env, write(101));
    handle(&mut r, &mut env, write(103));
    let sacks: Vec<Transmit> = std::iter::from_fn(|| r.poll_transmit(SimTime::ZERO)).collect();
    assert_eq!(
        sacks.len(),
        1,
        "the newer SACK replaced the unsent older one"
    );
    let s = sacks[0].pkt;
    assert_eq!(s.bth.psn, 100);
    assert_eq!(
        s.ext.irn,
        Some(irn::Repr::Sack {
            psn: 103,
            received: 0b101
        }),
        "101 and 103 held (bits 0 and 2 after the expected 100)"
    );
    assert_eq!(r.counters().placed_early, 2);
    handle(&mut r, &mut env, write(100));
    assert_eq!(
        out(&mut r),
        [
            (Operation::Acknowledge, 101, ACK, Some(2)),
            (
                Operation::Acknowledge,
                102,
                nak(NakCode::PsnSequenceError),
                Some(2)
            ),
        ],
        "100 and the held 101 executed; 103 is still held past a hole, so a SACK says so at once"
    );
    handle(&mut r, &mut env, write(102));
    assert_eq!(
        out(&mut r),
        [(Operation::Acknowledge, 103, ACK, Some(4))],
        "the last hole filled: the held 103 is executed and one ACK covers it"
    );
    assert_eq!(r.expected_psn(), 104);
}
