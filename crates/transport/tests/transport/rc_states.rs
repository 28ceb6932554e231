//! Packet-trace tests for the RoCE RC requester and responder, in the style of `tcp_states.rs`:
//! each test writes the packets one side receives as `RocePacket` values and checks exactly
//! what it answers (opcode, PSN, syndrome), what it reports and when its timers fire.
//!
//! The PSNs start just below 2^24 so most traces wrap. Times are microseconds.

use transport::roce::psn::MASK;
use transport::roce::{
    DataRef, Placement, RcConfig, RecvFailure, RemoteOp, ReqStatus, Requester, RequesterEvent,
    Responder, ResponderEnv, ResponderEvent, RocePacket, SendRequest, Transmit, WorkOp,
    requester::{RetransmitReason, SendState},
};
use units::{SimDuration, SimTime};
use wire::ExtHeaders;
use wire::ib::aeth::{self, CREDITS_UNLIMITED, NakCode, Syndrome, rnr_timeout};
use wire::ib::{Opcode, Operation, bth, reth};

const PMTU: u32 = 1024;
/// The first PSN of both directions: two packets later the PSN wraps.
const START: u32 = MASK - 1;
/// The responder's memory window: [BASE, BASE + MEM).
const BASE: u64 = 0x10_0000;
const MEM: u64 = 64 * 1024;
const RKEY: u32 = 0x77;

fn at(us: u64) -> SimTime {
    SimTime::ZERO + SimDuration::from_us(us)
}

/// The PSN `n` after [`START`].
fn psn(n: u32) -> u32 {
    START.wrapping_add(n) & MASK
}

/// For RNR traces: an ACK timeout (1.05 ms) well past the RNR wait (10 µs), so only the RNR
/// timer runs out.
fn rnr_config() -> RcConfig {
    RcConfig {
        timeout: 8,
        ..config()
    }
}

fn config() -> RcConfig {
    RcConfig {
        pmtu: PMTU,
        sq_psn: START,
        rq_psn: START,
        timeout: 1,
        retry_cnt: 2,
        rnr_retry: 2,
        min_rnr_timer: 1,
        max_rd_atomic: 4,
        max_dest_rd_atomic: 4,
        ..RcConfig::default()
    }
}

/// The responder's memory and receive queue, recording what it was asked to do.
struct Env {
    mem: Vec<u8>,
    recvs: u32,
    /// Receive completions: (bytes, immediate).
    completed: Vec<(u64, Option<u32>)>,
    recv_errors: Vec<RecvFailure>,
    /// The QP's REMOTE_WRITE / REMOTE_READ / REMOTE_ATOMIC flags.
    allow: [bool; 3],
    /// How often each R_Key check ran.
    rkey_checks: u32,
}

impl Env {
    fn new(recvs: u32) -> Env {
        Env {
            mem: (0..MEM).map(|i| (i % 251) as u8).collect(),
            recvs,
            completed: Vec::new(),
            recv_errors: Vec::new(),
            allow: [true; 3],
            rkey_checks: 0,
        }
    }
}

impl ResponderEnv for Env {
    fn qp_allows(&self, op: RemoteOp) -> bool {
        self.allow[op as usize]
    }
    fn check_rkey(&mut self, rkey: u32, va: u64, len: u64, _op: RemoteOp) -> bool {
        self.rkey_checks += 1;
        rkey == RKEY && va >= BASE && va + len <= BASE + MEM
    }
    fn start_recv(&mut self) -> bool {
        let ok = self.recvs > 0;
        self.recvs = self.recvs.saturating_sub(1);
        ok
    }
    fn place_recv(&mut self, _offset: u64, _len: u64, _data: &[u8]) -> Result<(), RecvFailure> {
        Ok(())
    }
    fn finish_recv(&mut self, byte_len: u64, imm: Option<u32>, _wwi: bool, _solicited: bool) {
        self.completed.push((byte_len, imm));
    }
    fn fail_recv(&mut self, why: RecvFailure) {
        self.recv_errors.push(why);
    }
    fn write_remote(&mut self, _rkey: u32, va: u64, _len: u64, data: &[u8]) {
        let o = (va - BASE) as usize;
        self.mem[o..o + data.len()].copy_from_slice(data);
    }
    fn atomic(&mut self, _rkey: u32, va: u64, _cs: Option<(u64, u64)>, add: u64) -> u64 {
        let o = (va - BASE) as usize;
        let orig = u64::from_le_bytes(self.mem[o..o + 8].try_into().expect("8 bytes"));
        self.mem[o..o + 8].copy_from_slice(&orig.wrapping_add(add).to_le_bytes());
        orig
    }
}

fn bth(op: Operation, psn: u32, ack_req: bool) -> bth::Repr {
    bth::Repr {
        opcode: Opcode::rc(op),
        solicited: false,
        mig_req: false,
        pad_count: 0,
        pkey: 0xffff,
        fecn: false,
        becn: false,
        dest_qp: 0,
        ack_req,
        psn,
    }
}

/// A request packet the requester would send: `op` at `psn` with `len` payload bytes.
fn request(op: Operation, psn: u32, len: u32, ack_req: bool) -> RocePacket {
    RocePacket {
        bth: bth(op, psn, ack_req),
        ext: ExtHeaders::NONE,
        payload_len: len,
    }
}

fn write_only(psn: u32, va: u64, rkey: u32, len: u32) -> RocePacket {
    let mut p = request(Operation::RdmaWriteOnly, psn, len, true);
    p.ext.reth = Some(reth::Repr {
        va,
        rkey,
        dma_len: len,
    });
    p
}

fn read_request(psn: u32, va: u64, len: u32) -> RocePacket {
    let mut p = request(Operation::RdmaReadRequest, psn, 0, true);
    p.ext.reth = Some(reth::Repr {
        va,
        rkey: RKEY,
        dma_len: len,
    });
    p
}

/// An ACK or NAK from the responder.
fn ack(psn: u32, syndrome: Syndrome) -> RocePacket {
    RocePacket {
        bth: bth(Operation::Acknowledge, psn, false),
        ext: ExtHeaders {
            aeth: Some(aeth::Repr { syndrome, msn: 0 }),
            ..ExtHeaders::NONE
        },
        payload_len: 0,
    }
}

const ACK: Syndrome = Syndrome::Ack {
    credits: CREDITS_UNLIMITED,
};

fn send_req(id: u64, len: u32) -> SendRequest {
    SendRequest {
        id,
        op: WorkOp::Send { imm: None },
        len,
        solicited: false,
        fence: false,
        ud: None,
    }
}

/// What a packet the test expects looks like: opcode, PSN and, for ACKs, the syndrome.
#[derive(Debug, PartialEq)]
struct Seen {
    op: Operation,
    psn: u32,
    syndrome: Option<Syndrome>,
    len: u32,
}

fn seen(t: &Transmit) -> Seen {
    Seen {
        op: t.pkt.bth.opcode.operation().expect("a known opcode"),
        psn: t.pkt.bth.psn,
        syndrome: t.pkt.ext.aeth.map(|a| a.syndrome),
        len: t.pkt.payload_len,
    }
}

fn answer(op: Operation, psn: u32, syndrome: Option<Syndrome>, len: u32) -> Seen {
    Seen {
        op,
        psn,
        syndrome,
        len,
    }
}

fn responses(r: &mut Responder, t: u64) -> Vec<Seen> {
    std::iter::from_fn(|| r.poll_transmit(at(t)))
        .map(|t| seen(&t))
        .collect()
}

fn requests(r: &mut Requester, t: u64) -> Vec<Transmit> {
    std::iter::from_fn(|| r.poll_transmit(at(t))).collect()
}

fn completions(r: &mut Requester) -> Vec<(u64, ReqStatus)> {
    std::iter::from_fn(|| r.poll_event())
        .filter_map(|e| match e {
            RequesterEvent::Completed { id, status } => Some((id, status)),
            _ => None,
        })
        .collect()
}

fn deliver(resp: &mut Responder, env: &mut Env, t: u64, pkt: RocePacket) {
    resp.handle_request(at(t), &pkt, &[], env);
}

#[test]
fn one_nak_per_gap_then_the_resend_is_taken() {
    let mut resp = Responder::new(config());
    let mut env = Env::new(8);
    // PSN START arrives; START + 1 is lost; START + 2 and START + 3 (past the wrap) follow.
    deliver(
        &mut resp,
        &mut env,
        0,
        request(Operation::SendOnly, psn(0), 10, true),
    );
    deliver(
        &mut resp,
        &mut env,
        1,
        request(Operation::SendOnly, psn(2), 10, true),
    );
    deliver(
        &mut resp,
        &mut env,
        2,
        request(Operation::SendOnly, psn(3), 10, true),
    );
    assert_eq!(
        responses(&mut resp, 2),
        [
            answer(Operation::Acknowledge, psn(0), Some(ACK), 0),
            answer(
                Operation::Acknowledge,
                psn(1),
                Some(Syndrome::Nak(NakCode::PsnSequenceError)),
                0
            ),
        ],
        "one NAK for the gap, carrying the expected PSN; nothing for the second packet past it"
    );
    let c = resp.counters();
    assert_eq!((c.out_of_sequence, c.sequence_naks), (2, 1));
    // The requester goes back: START + 1 .. START + 3 arrive in order.
    for (t, n) in [(5, 1), (6, 2), (7, 3)] {
        deliver(
            &mut resp,
            &mut env,
            t,
            request(Operation::SendOnly, psn(n), 10, true),
        );
    }
    assert_eq!(
        responses(&mut resp, 7),
        [answer(Operation::Acknowledge, psn(3), Some(ACK), 0)],
        "the ACKs coalesce into one for the newest PSN, past the wrap"
    );
    assert_eq!(resp.expected_psn(), psn(4));
    assert_eq!(env.completed.len(), 4, "each SEND completed once");
    // A new gap gets a NAK of its own.
    deliver(
        &mut resp,
        &mut env,
        8,
        request(Operation::SendOnly, psn(5), 10, true),
    );
    assert_eq!(
        responses(&mut resp, 8),
        [answer(
            Operation::Acknowledge,
            psn(4),
            Some(Syndrome::Nak(NakCode::PsnSequenceError)),
            0
        )]
    );
    assert_eq!(resp.counters().sequence_naks, 2);
}

#[test]
fn a_duplicate_read_is_answered_again_without_running_again() {
    let mut resp = Responder::new(config());
    let mut env = Env::new(0);
    // A READ of 2.5 PMTUs takes PSNs START ..= START + 2 (across the wrap).
    let len = 2 * PMTU + 512;
    deliver(&mut resp, &mut env, 0, read_request(psn(0), BASE + 64, len));
    let first = responses(&mut resp, 0);
    let expect = [
        answer(Operation::RdmaReadResponseFirst, psn(0), Some(ACK), PMTU),
        answer(Operation::RdmaReadResponseMiddle, psn(1), None, PMTU),
        answer(Operation::RdmaReadResponseLast, psn(2), Some(ACK), 512),
    ];
    assert_eq!(first, expect);
    assert_eq!(resp.expected_psn(), psn(3));
    // The requester lost a response and asks again from the second one.
    let checks = env.rkey_checks;
    deliver(
        &mut resp,
        &mut env,
        10,
        read_request(psn(1), BASE + 64 + PMTU as u64, PMTU + 512),
    );
    assert_eq!(
        responses(&mut resp, 10),
        [
            answer(Operation::RdmaReadResponseFirst, psn(1), Some(ACK), PMTU),
            answer(Operation::RdmaReadResponseLast, psn(2), Some(ACK), 512),
        ],
        "replayed from the responder resources at the PSNs of the first answer"
    );
    assert_eq!(env.rkey_checks, checks + 1, "the range is checked again");
    assert_eq!(
        resp.expected_psn(),
        psn(3),
        "a duplicate does not move the PSN"
    );
    assert_eq!(resp.counters().duplicates, 1);
    assert_eq!(
        resp.poll_event(),
        Some(ResponderEvent::Duplicate { psn: psn(1) })
    );
    // A duplicate READ asking for more than the original: no answer (class D).
    deliver(
        &mut resp,
        &mut env,
        11,
        read_request(psn(1), BASE, 4 * PMTU),
    );
    assert_eq!(responses(&mut resp, 11), []);
}

#[test]
fn an_rnr_nak_pauses_the_requester_for_its_timer_then_the_send_goes_again() {
    let mut req = Requester::new(rnr_config());
    let mut resp = Responder::new(config());
    let mut env = Env::new(0); // no receive posted yet
    req.post(send_req(1, 100));
    let sent = requests(&mut req, 0);
    assert_eq!(sent.len(), 1);
    deliver(&mut resp, &mut env, 1, sent[0].pkt);
    let rnr = Syndrome::RnrNak { timer: 1 };
    assert_eq!(
        responses(&mut resp, 1),
        [answer(Operation::Acknowledge, psn(0), Some(rnr), 0)],
        "RNR NAK with min_rnr_timer, at the refused PSN"
    );
    assert_eq!(
        resp.poll_event(),
        Some(ResponderEvent::ReceiverNotReady { psn: psn(0) })
    );
    assert!(!resp.is_failed(), "RNR leaves the QP usable");
    assert_eq!(resp.expected_psn(), psn(0));

    req.handle_response(at(2), &ack(psn(0), rnr));
    assert_eq!(req.state(), SendState::RnrWait);
    let wait = rnr_timeout(1);
    assert_eq!(
        req.poll_timeout(SimTime::ZERO),
        Some(at(2) + wait),
        "the RNR timer comes first"
    );
    assert!(
        requests(&mut req, 2).is_empty(),
        "nothing goes during the wait"
    );
    assert_eq!(
        req.poll_event(),
        Some(RequesterEvent::GoBack {
            from_psn: psn(0),
            reason: RetransmitReason::Rnr
        })
    );
    req.handle_timeout(at(2) + wait);
    assert_eq!(req.state(), SendState::Ready);
    let again = req.poll_transmit(at(2) + wait).expect("the SEND again");
    assert_eq!(again.pkt.bth.psn, psn(0), "the same PSN");
    assert_eq!(again.data, DataRef::Request { id: 1, offset: 0 });
    env.recvs = 1;
    deliver(&mut resp, &mut env, 100, again.pkt);
    assert_eq!(
        responses(&mut resp, 100),
        [answer(Operation::Acknowledge, psn(0), Some(ACK), 0)]
    );
    req.handle_response(at(101), &ack(psn(0), ACK));
    assert_eq!(completions(&mut req), [(1, ReqStatus::Success)]);
    let c = req.counters();
    assert_eq!((c.rnr_naks, c.packets_retransmitted), (1, 1));
    assert_eq!(c.retransmitted_by_reason[RetransmitReason::Rnr as usize], 1);
}

#[test]
fn rnr_retries_run_out() {
    let mut req = Requester::new(rnr_config()); // rnr_retry 2
    req.post(send_req(1, 100));
    let mut t = 0;
    for round in 0..2 {
        assert_eq!(requests(&mut req, t).len(), 1, "round {round}");
        req.handle_response(at(t + 1), &ack(psn(0), Syndrome::RnrNak { timer: 1 }));
        assert_eq!(req.state(), SendState::RnrWait);
        t = req.poll_timeout(SimTime::ZERO).expect("armed").as_ps() / 1_000_000;
        req.handle_timeout(at(t));
    }
    assert_eq!(requests(&mut req, t).len(), 1, "the last try");
    req.handle_response(at(t + 1), &ack(psn(0), Syndrome::RnrNak { timer: 1 }));
    assert!(requests(&mut req, t).is_empty());
    assert_eq!(req.state(), SendState::Error);
    assert_eq!(completions(&mut req), [(1, ReqStatus::RnrRetryExceeded)]);
    assert_eq!(
        req.poll_timeout(SimTime::ZERO),
        None,
        "a failed requester keeps no timers"
    );
}

#[test]
fn access_checks_nak_in_the_spec_order() {
    // The QP's access flags come before the R_Key: a WRITE to a QP without REMOTE_WRITE is an
    // invalid request even with a bad key.
    let mut resp = Responder::new(config());
    let mut env = Env::new(0);
    env.allow[RemoteOp::Write as usize] = false;
    deliver(&mut resp, &mut env, 0, write_only(psn(0), BASE, 0xbad, 8));
    assert_eq!(
        responses(&mut resp, 0),
        [answer(
            Operation::Acknowledge,
            psn(0),
            Some(Syndrome::Nak(NakCode::InvalidRequest)),
            0
        )]
    );
    assert_eq!(env.rkey_checks, 0, "the key is not looked at");

    // With the flag set, a bad key is a remote access error; the QP fails and drops the rest.
    let mut resp = Responder::new(config());
    let mut env = Env::new(0);
    deliver(&mut resp, &mut env, 0, write_only(psn(0), BASE, RKEY, 8));
    deliver(&mut resp, &mut env, 1, write_only(psn(1), BASE, 0xbad, 8));
    deliver(&mut resp, &mut env, 2, write_only(psn(2), BASE, RKEY, 8));
    assert_eq!(
        responses(&mut resp, 2),
        [
            answer(Operation::Acknowledge, psn(0), Some(ACK), 0),
            answer(
                Operation::Acknowledge,
                psn(1),
                Some(Syndrome::Nak(NakCode::RemoteAccessError)),
                0
            ),
        ]
    );
    assert!(resp.is_failed());
    assert_eq!(
        resp.poll_event(),
        Some(ResponderEvent::Failed {
            nak: NakCode::RemoteAccessError
        })
    );

    // A length error is found before the key: a WRITE FIRST shorter than the PMTU.
    let mut resp = Responder::new(config());
    let mut env = Env::new(0);
    let mut first = write_only(psn(0), BASE, 0xbad, 2 * PMTU);
    first.bth.opcode = Opcode::rc(Operation::RdmaWriteFirst);
    first.payload_len = 100;
    deliver(&mut resp, &mut env, 0, first);
    assert_eq!(
        responses(&mut resp, 0)[0].syndrome,
        Some(Syndrome::Nak(NakCode::InvalidRequest))
    );

    // The requester: the NAK completes what came before it, fails the request it names,
    // and leaves the rest for the flush.
    let mut req = Requester::new(config());
    for id in 1..=3 {
        req.post(send_req(id, 10));
    }
    assert_eq!(requests(&mut req, 0).len(), 3);
    req.handle_response(
        at(5),
        &ack(psn(1), Syndrome::Nak(NakCode::RemoteAccessError)),
    );
    assert_eq!(
        completions(&mut req),
        [(1, ReqStatus::Success), (2, ReqStatus::RemoteAccess)],
        "the NAK acknowledges PSN START, then fails the request at START + 1"
    );
    assert!(req.is_failed());
    assert_eq!(req.unfinished().collect::<Vec<_>>(), [3]);
    assert!(requests(&mut req, 6).is_empty());
}

#[test]
fn psns_wrap_at_two_to_the_24() {
    let mut req = Requester::new(config());
    let mut resp = Responder::new(config());
    let mut env = Env::new(1);
    req.post(send_req(1, 4 * PMTU));
    let sent = requests(&mut req, 0);
    let psns: Vec<u32> = sent.iter().map(|t| t.pkt.bth.psn).collect();
    assert_eq!(psns, [MASK - 1, MASK, 0, 1]);
    for t in &sent {
        resp.handle_request(at(1), &t.pkt, &[], &mut env);
    }
    let acks: Vec<Transmit> = std::iter::from_fn(|| resp.poll_transmit(at(1))).collect();
    assert_eq!(acks.len(), 1);
    assert_eq!(
        seen(&acks[0]),
        answer(Operation::Acknowledge, 1, Some(ACK), 0)
    );
    assert_eq!(env.completed, [(4 * PMTU as u64, None)]);
    assert_eq!(req.handle_response(at(2), &acks[0].pkt), Placement::None);
    assert_eq!(completions(&mut req), [(1, ReqStatus::Success)]);
    assert_eq!(req.next_psn(), 2);
    assert_eq!(
        req.poll_timeout(SimTime::ZERO),
        None,
        "nothing outstanding: no ACK timer"
    );
}

#[test]
fn timeouts_resend_from_the_oldest_unacknowledged_psn_until_retries_run_out() {
    let mut req = Requester::new(config()); // timeout 1: 8.192 µs; retry_cnt 2
    req.post(send_req(1, 10));
    req.post(send_req(2, 10));
    assert_eq!(requests(&mut req, 0).len(), 2);
    let timeout = SimDuration::from_ps(8_192_000); // 4.096 µs × 2^1
    assert_eq!(req.poll_timeout(SimTime::ZERO), Some(at(0) + timeout));
    // An ACK for the first moves the timer on from its arrival.
    req.handle_response(at(3), &ack(psn(0), ACK));
    assert_eq!(completions(&mut req), [(1, ReqStatus::Success)]);
    assert_eq!(req.poll_timeout(SimTime::ZERO), Some(at(3) + timeout));
    let mut now = at(3);
    for round in 1..=2 {
        now = req.poll_timeout(SimTime::ZERO).expect("armed");
        req.handle_timeout(now);
        let again: Vec<u32> = std::iter::from_fn(|| req.poll_transmit(now))
            .map(|t| t.pkt.bth.psn)
            .collect();
        assert_eq!(
            again,
            [psn(1)],
            "round {round}: only the unacknowledged PSN"
        );
        assert_eq!(req.poll_timeout(SimTime::ZERO), Some(now + timeout));
    }
    req.handle_timeout(req.poll_timeout(SimTime::ZERO).expect("armed"));
    assert_eq!(completions(&mut req), [(2, ReqStatus::RetryExceeded)]);
    assert_eq!(req.state(), SendState::Error);
    let c = req.counters();
    assert_eq!((c.timeouts, c.packets_retransmitted), (3, 2));
    assert_eq!(
        c.retransmitted_by_reason[RetransmitReason::Timeout as usize],
        2
    );
    assert!(now > at(3));
}
