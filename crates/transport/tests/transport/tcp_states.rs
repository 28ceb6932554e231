//! State-machine tests for `transport::tcp::Connection`, in the style of smoltcp's
//! `socket/tcp.rs` tests: segments written as `tcp::Repr` values from `..SEND_TEMPL` (what the
//! peer sends us) and `..RECV_TEMPL` (what we send), the `send!`, `recv!` and `recv_nothing!`
//! macros, and one fixture per state.
//!
//! Times are microseconds. The fixtures turn off timestamps and window scaling so every
//! segment can be written out exactly; the peer's ISN sits just below 2^32 so sequence
//! numbers wrap during the tests.

use std::collections::BTreeSet;

use transport::tcp::{
    Config, CongestionControl, Connection, Event, RecoveryState, State, Timer, Transmit,
};
use units::{SimDuration, SimTime};
use wire::Ecn;
use wire::tcp::{self, Flags, Timestamp};

const LOCAL_PORT: u16 = 80;
const REMOTE_PORT: u16 = 49_500;
/// Our ISN.
const LOCAL_SEQ: u32 = 10_000;
/// The peer's ISN: its data wraps past 2^32 after 100 bytes.
const REMOTE_SEQ: u32 = u32::MAX - 99;
/// Our receive buffer, which is also the window we advertise (no scaling).
const BUF: u16 = 64_000;
/// The MSS both sides announce.
const MSS: u16 = 1000;

const SYN_ACK: Flags = Flags::SYN.union(Flags::ACK);
const FIN_ACK: Flags = Flags::FIN.union(Flags::ACK);
const PSH_ACK: Flags = Flags::PSH.union(Flags::ACK);

/// Segments the peer sends us.
const SEND_TEMPL: tcp::Repr = tcp::Repr {
    src_port: REMOTE_PORT,
    dst_port: LOCAL_PORT,
    seq: 0,
    ack: 0,
    flags: Flags::ACK,
    window: BUF,
    urgent: 0,
    mss: None,
    window_scale: None,
    sack_permitted: false,
    sack_ranges: [None; 4],
    timestamp: None,
    payload_len: 0,
};

/// Segments we send the peer.
const RECV_TEMPL: tcp::Repr = tcp::Repr {
    src_port: LOCAL_PORT,
    dst_port: REMOTE_PORT,
    seq: 0,
    ack: 0,
    flags: Flags::ACK,
    window: BUF,
    urgent: 0,
    mss: None,
    window_scale: None,
    sack_permitted: false,
    sack_ranges: [None; 4],
    timestamp: None,
    payload_len: 0,
};

/// Our sequence number `off` bytes after the ISN.
fn local(off: u32) -> u32 {
    LOCAL_SEQ.wrapping_add(off)
}

/// The peer's sequence number `off` bytes after its ISN.
fn remote(off: u32) -> u32 {
    REMOTE_SEQ.wrapping_add(off)
}

fn at(us: u64) -> SimTime {
    SimTime::ZERO + SimDuration::from_us(us)
}

/// `n` bytes of recognisable data.
fn data(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i % 251) as u8).collect()
}

macro_rules! send {
    ($conn:expr, time $t:expr, $repr:expr) => {
        send!($conn, time $t, $repr, &[], Ecn::NotEct)
    };
    ($conn:expr, time $t:expr, $repr:expr, $payload:expr) => {
        send!($conn, time $t, $repr, $payload, Ecn::NotEct)
    };
    ($conn:expr, time $t:expr, $repr:expr, $payload:expr, $ecn:expr) => {{
        let payload: &[u8] = $payload;
        let repr = tcp::Repr {
            payload_len: payload.len() as u16,
            ..$repr
        };
        $conn.handle_segment(at($t), &repr, payload, $ecn);
    }};
}

macro_rules! recv {
    ($conn:expr, time $t:expr, [$($repr:expr),* $(,)?]) => {{
        $( recv_one(&mut $conn, $t, $repr); )*
    }};
}

macro_rules! recv_nothing {
    ($conn:expr, time $t:expr) => {{
        let t = $conn.poll_transmit(at($t));
        assert!(t.is_none(), "expected nothing, got {:?}", t.map(|t| t.repr));
    }};
}

/// The next segment must be `expected` (the whole header, options included).
#[track_caller]
fn recv_one(conn: &mut Connection, t: u64, expected: tcp::Repr) -> Transmit {
    let got = conn
        .poll_transmit(at(t))
        .unwrap_or_else(|| panic!("expected {expected:?}, got nothing"));
    assert_eq!(got.repr, expected, "segment differs");
    assert_eq!(got.payload.len(), usize::from(expected.payload_len));
    got
}

/// Every segment the connection has to send now.
fn drain(conn: &mut Connection, t: u64) -> Vec<Transmit> {
    std::iter::from_fn(|| conn.poll_transmit(at(t))).collect()
}

fn events(conn: &mut Connection) -> Vec<Event> {
    std::iter::from_fn(|| conn.poll_event()).collect()
}

/// The fixtures' configuration: NewReno, no options, exact windows.
fn base_config() -> Config {
    Config {
        mss: MSS,
        recv_buffer: usize::from(BUF),
        send_buffer: 256_000,
        window_scaling: false,
        sack: false,
        timestamps: false,
        rack_tlp: false,
        congestion_control: CongestionControl::NewReno,
        ..Config::default()
    }
}

/// The fixtures' configuration with SACK and RACK-TLP, as Linux runs.
fn sack_config() -> Config {
    Config {
        sack: true,
        rack_tlp: true,
        ..base_config()
    }
}

// -------------------------------------------------------------------------------------------
// Fixtures, one per state.

fn socket_listen(config: Config) -> Connection {
    let s = Connection::listen(config, LOCAL_PORT, LOCAL_SEQ).unwrap();
    assert_eq!(s.state(), State::Listen);
    s
}

/// LISTEN, a SYN arrived at t = 0 and the SYN-ACK went out.
fn socket_syn_received(config: Config) -> Connection {
    let sack = config.sack;
    let window = config.recv_buffer.min(65_535) as u16;
    let mut s = socket_listen(config);
    send!(s, time 0, tcp::Repr {
        flags: Flags::SYN,
        seq: REMOTE_SEQ,
        mss: Some(MSS),
        sack_permitted: sack,
        ..SEND_TEMPL
    });
    assert_eq!(s.state(), State::SynReceived);
    recv!(s, time 0, [tcp::Repr {
        flags: SYN_ACK,
        seq: LOCAL_SEQ,
        ack: remote(1),
        window,
        mss: Some(MSS),
        sack_permitted: sack,
        ..RECV_TEMPL
    }]);
    s
}

/// SYN-SENT: our SYN went out at t = 0.
fn socket_syn_sent(config: Config) -> Connection {
    let sack = config.sack;
    let mut s = Connection::connect(config, LOCAL_PORT, REMOTE_PORT, LOCAL_SEQ).unwrap();
    recv!(s, time 0, [tcp::Repr {
        flags: Flags::SYN,
        seq: LOCAL_SEQ,
        ack: 0,
        mss: Some(MSS),
        sack_permitted: sack,
        ..RECV_TEMPL
    }]);
    assert_eq!(s.state(), State::SynSent);
    s
}

/// ESTABLISHED (passively), with an RTT sample of 1 ms.
fn socket_established(config: Config) -> Connection {
    let mut s = socket_syn_received(config);
    send!(s, time 1000, tcp::Repr {
        seq: remote(1),
        ack: local(1),
        ..SEND_TEMPL
    });
    assert_eq!(s.state(), State::Established);
    assert_eq!(events(&mut s), vec![Event::Connected]);
    assert_eq!(s.srtt(), Some(SimDuration::from_ms(1)));
    s
}

/// FIN-WAIT-1: we closed at t = 2 ms and our FIN is out.
fn socket_fin_wait_1() -> Connection {
    let mut s = socket_established(base_config());
    s.close();
    assert_eq!(s.state(), State::FinWait1);
    recv!(s, time 2000, [tcp::Repr {
        flags: FIN_ACK,
        seq: local(1),
        ack: remote(1),
        ..RECV_TEMPL
    }]);
    s
}

/// FIN-WAIT-2: the peer acknowledged our FIN.
fn socket_fin_wait_2() -> Connection {
    let mut s = socket_fin_wait_1();
    send!(s, time 3000, tcp::Repr {
        seq: remote(1),
        ack: local(2),
        ..SEND_TEMPL
    });
    assert_eq!(s.state(), State::FinWait2);
    recv_nothing!(s, time 3000);
    s
}

/// CLOSE-WAIT: the peer closed first.
fn socket_close_wait() -> Connection {
    let mut s = socket_established(base_config());
    send!(s, time 2000, tcp::Repr {
        flags: FIN_ACK,
        seq: remote(1),
        ack: local(1),
        ..SEND_TEMPL
    });
    assert_eq!(s.state(), State::CloseWait);
    assert_eq!(events(&mut s), vec![Event::PeerClosed]);
    recv!(s, time 2000, [tcp::Repr {
        seq: local(1),
        ack: remote(2),
        ..RECV_TEMPL
    }]);
    s
}

/// LAST-ACK: we closed after the peer; our FIN is out.
fn socket_last_ack() -> Connection {
    let mut s = socket_close_wait();
    s.close();
    assert_eq!(s.state(), State::LastAck);
    recv!(s, time 3000, [tcp::Repr {
        flags: FIN_ACK,
        seq: local(1),
        ack: remote(2),
        ..RECV_TEMPL
    }]);
    s
}

/// TIME-WAIT: both FINs exchanged and acknowledged, ours first.
fn socket_time_wait() -> Connection {
    let mut s = socket_fin_wait_2();
    send!(s, time 4000, tcp::Repr {
        flags: FIN_ACK,
        seq: remote(1),
        ack: local(2),
        ..SEND_TEMPL
    });
    assert_eq!(s.state(), State::TimeWait);
    recv!(s, time 4000, [tcp::Repr {
        seq: local(2),
        ack: remote(2),
        ..RECV_TEMPL
    }]);
    s
}

// -------------------------------------------------------------------------------------------
// Handshake and option negotiation.

#[test]
fn active_open_negotiates_every_option() {
    let config = Config {
        ecn: true,
        ..Config::default()
    };
    let mut s = Connection::connect(config, LOCAL_PORT, REMOTE_PORT, LOCAL_SEQ).unwrap();
    let syn = s.poll_transmit(at(0)).unwrap();
    assert_eq!(
        syn.repr,
        tcp::Repr {
            flags: Flags::SYN | Flags::ECE | Flags::CWR,
            seq: LOCAL_SEQ,
            window: 65_535,
            mss: Some(1460),
            window_scale: Some(7),
            sack_permitted: true,
            timestamp: Some(Timestamp { tsval: 0, tsecr: 0 }),
            ..RECV_TEMPL
        }
    );
    assert_eq!(syn.ecn, Ecn::NotEct, "RFC 3168 §6.1.1: a SYN is never ECT");
    // The SYN-ACK: MSS 1400, scale 9, SACK, timestamps, ECE without CWR; 250 µs later.
    send!(s, time 250, tcp::Repr {
        flags: SYN_ACK | Flags::ECE,
        seq: REMOTE_SEQ,
        ack: local(1),
        window: 30_000,
        mss: Some(1400),
        window_scale: Some(9),
        sack_permitted: true,
        timestamp: Some(Timestamp { tsval: 777, tsecr: 0 }),
        ..SEND_TEMPL
    });
    assert_eq!(s.state(), State::Established);
    assert_eq!(events(&mut s), vec![Event::Connected]);
    let n = s.negotiated();
    assert_eq!(n.peer_mss, 1400);
    assert_eq!(
        n.send_mss, 1388,
        "the timestamp option costs 12 bytes of every segment"
    );
    assert_eq!((n.send_window_shift, n.recv_window_shift), (9, 7));
    assert!(n.window_scaling && n.sack && n.timestamps && n.ecn);
    assert_eq!(s.srtt(), Some(SimDuration::from_us(250)));
    // The SYN-ACK's window is never scaled (RFC 7323 §2.2).
    assert_eq!(s.peer_window(), 30_000);
    // The ACK echoes the peer's timestamp and scales our window by 2^7.
    recv!(s, time 250, [tcp::Repr {
        seq: local(1),
        ack: remote(1),
        window: ((6 << 20) >> 7) as u16,
        timestamp: Some(Timestamp { tsval: 250, tsecr: 777 }),
        ..RECV_TEMPL
    }]);
    // Data is ECT(0) and full segments are 1388 bytes.
    s.send(&data(3000));
    let seg = s.poll_transmit(at(300)).unwrap();
    assert_eq!(seg.ecn, Ecn::Ect0);
    assert_eq!(seg.payload.len(), 1388);
}

#[test]
fn active_open_without_peer_options_falls_back() {
    let config = Config {
        ecn: true,
        ..Config::default()
    };
    let mut s = Connection::connect(config, LOCAL_PORT, REMOTE_PORT, LOCAL_SEQ).unwrap();
    drain(&mut s, 0);
    send!(s, time 100, tcp::Repr {
        flags: SYN_ACK,
        seq: REMOTE_SEQ,
        ack: local(1),
        window: 8192,
        ..SEND_TEMPL
    });
    let n = s.negotiated();
    assert_eq!(n.peer_mss, 536, "RFC 9293 §3.7.1 default");
    assert_eq!(n.send_mss, 536);
    assert!(!n.window_scaling && !n.sack && !n.timestamps && !n.ecn);
    recv!(s, time 100, [tcp::Repr {
        seq: local(1),
        ack: remote(1),
        window: 65_535,
        ..RECV_TEMPL
    }]);
    s.send(&data(100));
    assert_eq!(s.poll_transmit(at(200)).unwrap().ecn, Ecn::NotEct);
}

#[test]
fn passive_open_mirrors_offered_options() {
    let mut s = socket_listen(Config {
        ecn: true,
        ..Config::default()
    });
    send!(s, time 0, tcp::Repr {
        flags: Flags::SYN | Flags::ECE | Flags::CWR,
        seq: REMOTE_SEQ,
        window: 65_535,
        mss: Some(1460),
        window_scale: Some(7),
        sack_permitted: true,
        timestamp: Some(Timestamp { tsval: 5, tsecr: 0 }),
        ..SEND_TEMPL
    });
    recv!(s, time 10, [tcp::Repr {
        flags: SYN_ACK | Flags::ECE,
        seq: LOCAL_SEQ,
        ack: remote(1),
        window: 65_535,
        mss: Some(1460),
        window_scale: Some(7),
        sack_permitted: true,
        timestamp: Some(Timestamp { tsval: 10, tsecr: 5 }),
        ..RECV_TEMPL
    }]);
    send!(s, time 110, tcp::Repr {
        seq: remote(1),
        ack: local(1),
        window: 1000,
        timestamp: Some(Timestamp { tsval: 105, tsecr: 10 }),
        ..SEND_TEMPL
    });
    assert_eq!(s.state(), State::Established);
    // Window-scaled from the first non-SYN segment on.
    assert_eq!(s.peer_window(), 1000 << 7);
    assert_eq!(s.srtt(), Some(SimDuration::from_us(100)));
}

#[test]
fn passive_open_offers_nothing_the_peer_did_not() {
    let mut s = socket_listen(Config::default());
    send!(s, time 0, tcp::Repr {
        flags: Flags::SYN,
        seq: REMOTE_SEQ,
        ..SEND_TEMPL
    });
    recv!(s, time 0, [tcp::Repr {
        flags: SYN_ACK,
        seq: LOCAL_SEQ,
        ack: remote(1),
        window: 65_535,
        mss: Some(1460),
        ..RECV_TEMPL
    }]);
}

#[test]
fn listen_answers_a_stray_ack_with_reset() {
    let mut s = socket_listen(base_config());
    send!(s, time 0, tcp::Repr {
        seq: remote(1),
        ack: 12_345,
        ..SEND_TEMPL
    });
    recv!(s, time 0, [tcp::Repr {
        flags: Flags::RST,
        seq: 12_345,
        ack: 0,
        window: 0,
        ..RECV_TEMPL
    }]);
    assert_eq!(s.state(), State::Listen);
}

#[test]
fn syn_sent_retransmits_with_backoff_then_times_out() {
    let mut s = socket_syn_sent(Config {
        syn_retries: 3,
        ..base_config()
    });
    // 1 s, then 2 s, then 4 s (RFC 6298 §5.5), then give up.
    let syn = tcp::Repr {
        flags: Flags::SYN,
        seq: LOCAL_SEQ,
        mss: Some(MSS),
        ..RECV_TEMPL
    };
    let mut expected = 0;
    for gap in [1_000_000, 2_000_000, 4_000_000] {
        expected += gap;
        assert_eq!(s.poll_timeout(), Some(at(expected)));
        s.handle_timeout(at(expected));
        recv!(s, time expected, [syn]);
    }
    expected += 8_000_000;
    s.handle_timeout(at(expected));
    assert_eq!(s.state(), State::Closed);
    assert_eq!(events(&mut s), vec![Event::TimedOut]);
    assert_eq!(s.counters().rtos, 3);
}

#[test]
fn syn_received_resends_syn_ack_for_a_repeated_syn() {
    let mut s = socket_syn_received(base_config());
    send!(s, time 500, tcp::Repr {
        flags: Flags::SYN,
        seq: REMOTE_SEQ,
        mss: Some(MSS),
        ..SEND_TEMPL
    });
    recv!(s, time 500, [tcp::Repr {
        flags: SYN_ACK,
        seq: LOCAL_SEQ,
        ack: remote(1),
        mss: Some(MSS),
        ..RECV_TEMPL
    }]);
}

#[test]
fn syn_sent_resets_on_unacceptable_ack() {
    let mut s = socket_syn_sent(base_config());
    send!(s, time 100, tcp::Repr {
        flags: SYN_ACK,
        seq: REMOTE_SEQ,
        ack: local(1000),
        ..SEND_TEMPL
    });
    recv!(s, time 100, [tcp::Repr {
        flags: Flags::RST,
        seq: local(1000),
        window: 0,
        ..RECV_TEMPL
    }]);
    assert_eq!(s.state(), State::SynSent);
}

#[test]
fn simultaneous_open() {
    let mut s = socket_syn_sent(base_config());
    send!(s, time 100, tcp::Repr {
        flags: Flags::SYN,
        seq: REMOTE_SEQ,
        mss: Some(MSS),
        ..SEND_TEMPL
    });
    assert_eq!(s.state(), State::SynReceived);
    recv!(s, time 100, [tcp::Repr {
        flags: SYN_ACK,
        seq: LOCAL_SEQ,
        ack: remote(1),
        mss: Some(MSS),
        ..RECV_TEMPL
    }]);
    send!(s, time 200, tcp::Repr {
        flags: SYN_ACK,
        seq: REMOTE_SEQ,
        ack: local(1),
        mss: Some(MSS),
        ..SEND_TEMPL
    });
    assert_eq!(s.state(), State::Established);
    recv!(s, time 200, [tcp::Repr {
        seq: local(1),
        ack: remote(1),
        ..RECV_TEMPL
    }]);
}

// -------------------------------------------------------------------------------------------
// Receiving data: delayed ACK, reassembly, SACK generation.

#[test]
fn delayed_ack_every_second_segment_or_after_40_ms() {
    let mut s = socket_established(base_config());
    let d = data(3000);
    // One full segment: no ACK yet, the delayed-ACK timer runs for 40 ms (Linux's minimum).
    send!(s, time 2000, tcp::Repr { seq: remote(1), ack: local(1), ..SEND_TEMPL }, &d[..1000]);
    recv_nothing!(s, time 2000);
    assert_eq!(s.timer(Timer::DelayedAck), Some(at(42_000)));
    // The second one is acknowledged at once, with the window it used.
    send!(s, time 2100, tcp::Repr { seq: remote(1001), ack: local(1), ..SEND_TEMPL }, &d[1000..2000]);
    recv!(s, time 2100, [tcp::Repr {
        seq: local(1),
        ack: remote(2001),
        window: BUF - 2000,
        ..RECV_TEMPL
    }]);
    assert_eq!(s.timer(Timer::DelayedAck), None);
    // A lone third segment waits for the timer.
    send!(s, time 3000, tcp::Repr { seq: remote(2001), ack: local(1), ..SEND_TEMPL }, &d[2000..]);
    recv_nothing!(s, time 3000);
    s.handle_timeout(at(42_999));
    recv_nothing!(s, time 42_999);
    s.handle_timeout(at(43_000));
    recv!(s, time 43_000, [tcp::Repr {
        seq: local(1),
        ack: remote(3001),
        window: BUF - 3000,
        ..RECV_TEMPL
    }]);
    // The bytes arrive in order and intact (the peer's sequence numbers wrapped at byte 100).
    assert_eq!(events(&mut s), vec![Event::DataReadable]);
    let mut buf = vec![0; 4000];
    assert_eq!(s.recv(&mut buf), 3000);
    assert_eq!(&buf[..3000], &d[..]);
}

#[test]
fn no_delayed_ack_when_disabled() {
    let mut s = socket_established(Config {
        delayed_ack: false,
        ..base_config()
    });
    send!(s, time 2000, tcp::Repr { seq: remote(1), ack: local(1), ..SEND_TEMPL }, &data(10));
    recv!(s, time 2000, [tcp::Repr {
        seq: local(1),
        ack: remote(11),
        window: BUF - 10,
        ..RECV_TEMPL
    }]);
}

#[test]
fn out_of_order_data_is_acked_at_once_with_sack_blocks() {
    let mut s = socket_established(sack_config());
    let d = data(5000);
    let seg = |i: usize| &d[i * 1000..(i + 1) * 1000];
    // Segments 2 and 4 arrive before 1 and 3: duplicate ACKs with SACK, most recent first.
    send!(s, time 2000, tcp::Repr { seq: remote(1001), ack: local(1), ..SEND_TEMPL }, seg(1));
    recv!(s, time 2000, [tcp::Repr {
        seq: local(1),
        ack: remote(1),
        sack_ranges: [Some((remote(1001), remote(2001))), None, None, None],
        ..RECV_TEMPL
    }]);
    send!(s, time 2100, tcp::Repr { seq: remote(3001), ack: local(1), ..SEND_TEMPL }, seg(3));
    recv!(s, time 2100, [tcp::Repr {
        seq: local(1),
        ack: remote(1),
        sack_ranges: [
            Some((remote(3001), remote(4001))),
            Some((remote(1001), remote(2001))),
            None,
            None
        ],
        ..RECV_TEMPL
    }]);
    // The first hole fills: ACK at once, the remaining island still reported.
    send!(s, time 2200, tcp::Repr { seq: remote(1), ack: local(1), ..SEND_TEMPL }, seg(0));
    recv!(s, time 2200, [tcp::Repr {
        seq: local(1),
        ack: remote(2001),
        window: BUF - 2000,
        sack_ranges: [Some((remote(3001), remote(4001))), None, None, None],
        ..RECV_TEMPL
    }]);
    send!(s, time 2300, tcp::Repr { seq: remote(2001), ack: local(1), ..SEND_TEMPL }, seg(2));
    recv!(s, time 2300, [tcp::Repr {
        seq: local(1),
        ack: remote(4001),
        window: BUF - 4000,
        ..RECV_TEMPL
    }]);
    let mut buf = vec![0; 5000];
    assert_eq!(s.recv(&mut buf), 4000);
    assert_eq!(&buf[..4000], &d[..4000]);
}

#[test]
fn sack_blocks_report_the_newest_first_and_fit_the_option_space() {
    let mut s = socket_established(sack_config());
    let d = data(1000);
    // Five islands at 2, 4, 6, 8, 10 (in thousands), arriving in the order 6, 2, 10, 4, 8.
    for (i, k) in [6u32, 2, 10, 4, 8].into_iter().enumerate() {
        send!(s, time 2000 + i as u64, tcp::Repr {
            seq: remote(k * 1000 + 1),
            ack: local(1),
            ..SEND_TEMPL
        }, &d);
    }
    let acks = drain(&mut s, 2010);
    let last = &acks.last().unwrap().repr;
    let block = |k: u32| Some((remote(k * 1000 + 1), remote(k * 1000 + 1001)));
    // Without timestamps four blocks fit: 8 (newest), then 4, 10, 2.
    assert_eq!(last.sack_ranges, [block(8), block(4), block(10), block(2)]);

    // With timestamps only three fit (RFC 2018 §3).
    let mut s = socket_listen(Config {
        timestamps: true,
        ..sack_config()
    });
    send!(s, time 0, tcp::Repr {
        flags: Flags::SYN,
        seq: REMOTE_SEQ,
        mss: Some(MSS),
        sack_permitted: true,
        timestamp: Some(Timestamp { tsval: 1, tsecr: 0 }),
        ..SEND_TEMPL
    });
    drain(&mut s, 0);
    let ts = Some(Timestamp { tsval: 2, tsecr: 0 });
    send!(s, time 100, tcp::Repr { seq: remote(1), ack: local(1), timestamp: ts, ..SEND_TEMPL });
    for (i, k) in [6u32, 2, 10, 4, 8].into_iter().enumerate() {
        send!(s, time 2000 + i as u64, tcp::Repr {
            seq: remote(k * 1000 + 1),
            ack: local(1),
            timestamp: ts,
            ..SEND_TEMPL
        }, &d);
    }
    let acks = drain(&mut s, 2010);
    let last = &acks.last().unwrap().repr;
    assert_eq!(last.sack_ranges, [block(8), block(4), block(10), None]);
}

#[test]
fn receive_window_closes_and_reopens_with_an_update() {
    let mut s = socket_established(Config {
        recv_buffer: 4000,
        ..base_config()
    });
    let d = data(4000);
    for i in 0..4u32 {
        send!(s, time 2000, tcp::Repr {
            seq: remote(1 + i * 1000),
            ack: local(1),
            window: BUF,
            ..SEND_TEMPL
        }, &d[i as usize * 1000..(i as usize + 1) * 1000]);
    }
    let acks = drain(&mut s, 2000);
    assert_eq!(acks.last().unwrap().repr.ack, remote(4001));
    assert_eq!(acks.last().unwrap().repr.window, 0);
    // Data beyond the closed window is not taken; the peer hears the window is still zero.
    send!(s, time 2100, tcp::Repr { seq: remote(4001), ack: local(1), ..SEND_TEMPL }, &d[..1]);
    recv!(s, time 2100, [tcp::Repr {
        seq: local(1),
        ack: remote(4001),
        window: 0,
        ..RECV_TEMPL
    }]);
    // A zero-window probe (one below RCV.NXT) is answered the same way.
    send!(s, time 2200, tcp::Repr { seq: remote(4000), ack: local(1), ..SEND_TEMPL });
    recv!(s, time 2200, [tcp::Repr {
        seq: local(1),
        ack: remote(4001),
        window: 0,
        ..RECV_TEMPL
    }]);
    // Reading a little does not announce a silly window; reading half does.
    let mut buf = vec![0; 4000];
    assert_eq!(s.recv(&mut buf[..100]), 100);
    recv_nothing!(s, time 2300);
    assert_eq!(s.recv(&mut buf[100..2000]), 1900);
    recv!(s, time 2300, [tcp::Repr {
        seq: local(1),
        ack: remote(4001),
        window: 2000,
        ..RECV_TEMPL
    }]);
}

// -------------------------------------------------------------------------------------------
// Sending data: slow start, loss recovery, RACK-TLP, RTO.

/// What the peer has received, as a test-side receiver producing ACKs with SACK blocks.
#[derive(Default)]
struct Peer {
    /// Our sequence offsets (from LOCAL_SEQ) of segments received: (start, end).
    got: BTreeSet<(u32, u32)>,
    /// Start offsets in arrival order (newest last).
    order: Vec<u32>,
    sack: bool,
}

impl Peer {
    fn new(sack: bool) -> Peer {
        Peer {
            sack,
            ..Peer::default()
        }
    }

    /// Record a segment and return the ACK the peer would send at once.
    fn receive(&mut self, seg: &Transmit) -> tcp::Repr {
        let start = seg.repr.seq.wrapping_sub(LOCAL_SEQ);
        let end = start
            + u32::from(seg.repr.payload_len)
            + u32::from(seg.repr.flags.contains(Flags::FIN));
        self.got.insert((start, end));
        self.order.push(start);
        self.ack()
    }

    fn cumulative(&self) -> u32 {
        let mut next = 1;
        for &(s, e) in &self.got {
            if s > next {
                break;
            }
            next = next.max(e);
        }
        next
    }

    /// Merged ranges above the cumulative ACK.
    fn islands(&self) -> Vec<(u32, u32)> {
        let ack = self.cumulative();
        let mut out: Vec<(u32, u32)> = Vec::new();
        for &(s, e) in self.got.iter().filter(|&&(s, _)| s > ack) {
            match out.last_mut() {
                Some(last) if last.1 >= s => last.1 = last.1.max(e),
                _ => out.push((s, e)),
            }
        }
        out
    }

    fn ack(&self) -> tcp::Repr {
        let mut repr = tcp::Repr {
            seq: remote(1),
            ack: local(self.cumulative()),
            ..SEND_TEMPL
        };
        if self.sack {
            let islands = self.islands();
            let mut n = 0;
            for start in self.order.iter().rev() {
                if n == 4 {
                    break;
                }
                let Some(&(s, e)) = islands.iter().find(|&&(s, e)| s <= *start && *start < e)
                else {
                    continue;
                };
                let block = Some((local(s), local(e)));
                if !repr.sack_ranges.contains(&block) {
                    repr.sack_ranges[n] = block;
                    n += 1;
                }
            }
        }
        repr
    }
}

/// Our sequence offset of a segment we sent.
fn off(t: &Transmit) -> u32 {
    t.repr.seq.wrapping_sub(LOCAL_SEQ)
}

/// Feed `segs` to the peer one by one (those `lost` never arrive), delivering each ACK
/// `rtt_us` after the segment was sent at `t`; returns everything we sent in reply, with the
/// time it was sent.
fn round(
    s: &mut Connection,
    peer: &mut Peer,
    t: u64,
    rtt_us: u64,
    segs: Vec<Transmit>,
    mut lost: impl FnMut(&Transmit) -> bool,
) -> Vec<(u64, Transmit)> {
    let mut out = Vec::new();
    for (i, seg) in segs.iter().enumerate() {
        if lost(seg) {
            continue;
        }
        let ack = peer.receive(seg);
        let now = t + rtt_us + i as u64;
        s.handle_timeout(at(now));
        s.handle_segment(at(now), &ack, &[], Ecn::NotEct);
        out.extend(drain(s, now).into_iter().map(|x| (now, x)));
    }
    out
}

#[test]
fn slow_start_grows_the_window_by_the_bytes_acked() {
    let mut s = socket_established(base_config());
    assert_eq!(s.cwnd(), 10_000, "RFC 6928: ten segments");
    s.send(&data(30_000));
    let first = drain(&mut s, 2000);
    assert_eq!(first.len(), 10);
    assert_eq!(
        first[9].repr.flags,
        Flags::ACK,
        "PSH only on the last buffered byte"
    );
    // An ACK for two segments lets four more out (two acked, two from growth).
    send!(s, time 3000, tcp::Repr { seq: remote(1), ack: local(2001), ..SEND_TEMPL });
    assert_eq!(s.cwnd(), 12_000);
    let more = drain(&mut s, 3000);
    assert_eq!(
        more.iter().map(off).collect::<Vec<_>>(),
        vec![10_001, 11_001, 12_001, 13_001]
    );
}

#[test]
fn loss_in_slow_start_is_repaired_by_fast_retransmit() {
    let mut s = socket_established(sack_config());
    let mut peer = Peer::new(true);
    s.send(&data(40_000));
    let segs = drain(&mut s, 2000);
    assert_eq!(segs.len(), 10);
    // The third segment is lost.
    let replies = round(&mut s, &mut peer, 2000, 1000, segs, |t| off(t) == 2001);
    let retrans: Vec<(u64, u32)> = replies
        .iter()
        .filter(|(_, t)| off(t) < 10_001)
        .map(|(at, t)| (*at, off(t)))
        .collect();
    // Resent the moment the third segment above the hole is SACKed (the ACK for the sixth
    // segment arrives at 3.005 ms), before pipe has fallen below the halved window
    // (RFC 6675 §5 step 4.3).
    assert_eq!(retrans, vec![(3005, 2001)]);
    assert_eq!(s.recovery_state(), RecoveryState::Recovery);
    assert_eq!(s.counters().fast_recoveries, 1);
    // ssthresh is half the flight at the loss.
    assert!(s.ssthresh() < 10_000, "{}", s.ssthresh());
    // The retransmission and the new data arrive; recovery ends without a timeout.
    let replies = round(
        &mut s,
        &mut peer,
        4000,
        1000,
        replies.into_iter().map(|x| x.1).collect(),
        |_| false,
    );
    drop(replies);
    assert_eq!(s.recovery_state(), RecoveryState::Open);
    assert_eq!(s.counters().rtos, 0);
    // Congestion avoidance from ssthresh, not a new slow start.
    assert!(s.cwnd() >= s.ssthresh() && s.cwnd() < 2 * s.ssthresh());
}

#[test]
fn without_rack_dupthresh_sacked_segments_declare_a_hole_lost() {
    let mut s = socket_established(Config {
        rack_tlp: false,
        ..sack_config()
    });
    let mut peer = Peer::new(true);
    s.send(&data(10_000));
    let segs = drain(&mut s, 2000);
    // Segment 3 is lost; segments 4 and 5 arrive: two SACKed segments are not enough.
    let (first, rest) = segs.split_at(5);
    let replies = round(&mut s, &mut peer, 2000, 1000, first.to_vec(), |t| {
        off(t) == 2001
    });
    assert!(
        replies.iter().all(|(_, t)| off(t) >= 10_001),
        "no retransmission yet"
    );
    assert_eq!(s.recovery_state(), RecoveryState::Open);
    // The third SACKed segment triggers the fast retransmit (RFC 6675 IsLost, DupThresh 3).
    let replies = round(&mut s, &mut peer, 2005, 1000, rest[..1].to_vec(), |_| false);
    assert_eq!(off(&replies[0].1), 2001);
    assert_eq!(s.recovery_state(), RecoveryState::Recovery);
    assert_eq!(s.counters().dupthresh_losses, 1);
    assert_eq!(s.counters().rack_losses, 0);
}

#[test]
fn several_losses_in_one_window_are_repaired_by_sack_without_rto() {
    let mut s = socket_established(sack_config());
    let mut peer = Peer::new(true);
    s.send(&data(60_000));
    let segs = drain(&mut s, 2000);
    // Segments 3, 5 and 8 of the first window are lost.
    let lost = [2001, 4001, 7001];
    let mut pending = round(&mut s, &mut peer, 2000, 1000, segs, |t| {
        lost.contains(&off(t))
    });
    let mut retransmitted = Vec::new();
    let mut now = 4000;
    while peer.cumulative() < 60_001 && now < 100_000 {
        let segs: Vec<Transmit> = pending.drain(..).map(|x| x.1).collect();
        retransmitted.extend(segs.iter().filter(|t| off(t) < 10_001).map(off));
        pending = round(&mut s, &mut peer, now, 1000, segs, |_| false);
        now += 2000;
    }
    assert_eq!(peer.cumulative(), 60_001);
    assert_eq!(
        retransmitted,
        lost.to_vec(),
        "exactly the lost segments, oldest first"
    );
    let c = s.counters();
    assert_eq!(c.rtos, 0);
    assert_eq!(c.fast_recoveries, 1);
    assert_eq!(c.retransmitted_segments, 3);
    assert_eq!(c.fast_retransmits, 3);
    assert!(c.sack_blocks_received > 0);
}

#[test]
fn newreno_without_sack_repairs_two_losses_with_partial_acks() {
    let mut s = socket_established(base_config());
    let mut peer = Peer::new(false);
    s.send(&data(60_000));
    let segs = drain(&mut s, 2000);
    let lost = [2001, 6001];
    let mut pending = round(&mut s, &mut peer, 2000, 1000, segs, |t| {
        lost.contains(&off(t))
    });
    let mut retransmitted = Vec::new();
    let mut now = 4000;
    while peer.cumulative() < 60_001 && now < 100_000 {
        let segs: Vec<Transmit> = pending.drain(..).map(|x| x.1).collect();
        retransmitted.extend(segs.iter().filter(|t| off(t) < 10_001).map(off));
        pending = round(&mut s, &mut peer, now, 1000, segs, |_| false);
        now += 2000;
    }
    assert_eq!(peer.cumulative(), 60_001);
    // Three duplicate ACKs resend the first hole; the partial ACK then resends the second.
    assert_eq!(retransmitted, lost.to_vec());
    assert_eq!(s.counters().rtos, 0);
    assert_eq!(s.counters().fast_recoveries, 1);
    assert!(s.counters().dup_acks_received >= 3);
}

#[test]
fn lost_retransmission_is_detected_by_rack_without_rto() {
    let mut s = socket_established(sack_config());
    let mut peer = Peer::new(true);
    s.send(&data(60_000));
    let segs = drain(&mut s, 2000);
    // Segment 3 is lost, and so is its first retransmission.
    let mut copies_of_3 = 0;
    let mut lose = |t: &Transmit| {
        if off(t) == 2001 {
            copies_of_3 += 1;
            copies_of_3 <= 2
        } else {
            false
        }
    };
    let mut pending = round(&mut s, &mut peer, 2000, 1000, segs, &mut lose);
    let mut sends_of_3 = Vec::new();
    let mut now = 4000;
    while peer.cumulative() < 60_001 && now < 100_000 {
        let segs: Vec<Transmit> = pending.drain(..).map(|x| x.1).collect();
        sends_of_3.extend(segs.iter().filter(|t| off(t) == 2001).map(|_| now));
        pending = round(&mut s, &mut peer, now, 1000, segs, &mut lose);
        now += 2000;
    }
    assert_eq!(peer.cumulative(), 60_001);
    assert_eq!(sends_of_3.len(), 2, "two retransmissions of segment 3");
    let c = s.counters();
    assert_eq!(
        c.rtos, 0,
        "RACK, not the RTO, found the lost retransmission"
    );
    assert!(c.rack_losses >= 1);
    assert_eq!(c.fast_recoveries, 1);
}

#[test]
fn tail_loss_is_probed_after_two_srtt_not_the_rto() {
    let mut s = socket_established(sack_config());
    let mut peer = Peer::new(true);
    s.send(&data(10_000));
    let segs = drain(&mut s, 2000);
    assert_eq!(segs.len(), 10);
    // The last two segments are lost; the ACK for the eighth arrives at 3.007 ms.
    let replies = round(&mut s, &mut peer, 2000, 1000, segs, |t| off(t) >= 8001);
    assert!(replies.is_empty());
    assert_eq!(peer.cumulative(), 8001);
    let srtt = s.srtt().unwrap();
    let last_ack = at(3007);
    let pto = s.timer(Timer::LossProbe).expect("PTO armed");
    assert_eq!(pto, last_ack + srtt * 2, "RFC 8985 §7.2: PTO = 2·SRTT");
    let rto = s.timer(Timer::Retransmit).unwrap();
    assert!(rto >= last_ack + SimDuration::from_ms(200));
    // At the PTO the last segment goes out again.
    let pto_us = pto.as_ps() / 1_000_000;
    s.handle_timeout(pto);
    let probe = drain(&mut s, pto_us);
    assert_eq!(probe.len(), 1);
    assert_eq!(off(&probe[0]), 9001);
    assert_eq!(s.counters().tlp_probes, 1);
    // Its SACK lets RACK find the ninth segment lost.
    let replies = round(&mut s, &mut peer, pto_us, 1000, probe, |_| false);
    assert_eq!(
        replies.iter().map(|x| off(&x.1)).collect::<Vec<_>>(),
        vec![8001]
    );
    round(
        &mut s,
        &mut peer,
        pto_us + 2000,
        1000,
        replies.into_iter().map(|x| x.1).collect(),
        |_| false,
    );
    assert_eq!(peer.cumulative(), 10_001);
    assert_eq!(s.counters().rtos, 0);
    assert!(s.counters().rack_losses >= 1);
}

#[test]
fn rto_doubles_and_is_clamped() {
    let mut s = socket_established(Config {
        max_rto: SimDuration::from_ms(1000),
        max_retries: 6,
        ..base_config()
    });
    s.send(&data(1000));
    let first = drain(&mut s, 2000);
    assert_eq!(first.len(), 1);
    // SRTT 1 ms: the RTO is min_rto, 200 ms; then 400, 800, and 1000 (clamped) ms.
    let mut t = 2000;
    for (i, gap_ms) in [200u64, 400, 800, 1000, 1000, 1000].into_iter().enumerate() {
        t += gap_ms * 1000;
        assert_eq!(s.poll_timeout(), Some(at(t)), "timeout {i}");
        s.handle_timeout(at(t));
        recv!(s, time t, [tcp::Repr {
            flags: PSH_ACK,
            seq: local(1),
            ack: remote(1),
            payload_len: 1000,
            ..RECV_TEMPL
        }]);
        assert_eq!(s.cwnd(), 1000, "the loss window is one segment");
        assert_eq!(s.counters().rtos, i as u64 + 1);
    }
    // The seventh timeout exceeds max_retries.
    s.handle_timeout(at(t + 1_000_000));
    assert_eq!(s.state(), State::Closed);
    assert_eq!(events(&mut s), vec![Event::TimedOut]);
}

#[test]
fn new_ack_after_rto_collapses_the_backoff() {
    let mut s = socket_established(base_config());
    s.send(&data(2000));
    drain(&mut s, 2000);
    s.handle_timeout(at(202_000));
    assert_eq!(s.rto_backoff(), 1);
    assert_eq!(s.recovery_state(), RecoveryState::Loss);
    drain(&mut s, 202_000);
    send!(s, time 203_000, tcp::Repr { seq: remote(1), ack: local(2001), ..SEND_TEMPL });
    assert_eq!(s.rto_backoff(), 0);
    assert_eq!(s.recovery_state(), RecoveryState::Open);
    assert_eq!(s.timer(Timer::Retransmit), None);
}

#[test]
fn zero_window_is_probed_by_the_persist_timer() {
    let mut s = socket_established(base_config());
    s.send(&data(3000));
    drain(&mut s, 2000);
    // The peer takes everything but closes its window.
    send!(s, time 3000, tcp::Repr { seq: remote(1), ack: local(3001), window: 0, ..SEND_TEMPL });
    s.send(&data(1000));
    recv_nothing!(s, time 3000);
    // One RTO later (200 ms) a probe one byte below SND.UNA, carrying nothing.
    let persist = s.timer(Timer::Persist).expect("persist timer armed");
    assert_eq!(persist, at(203_000));
    s.handle_timeout(persist);
    recv!(s, time 203_000, [tcp::Repr {
        seq: local(3000),
        ack: remote(1),
        ..RECV_TEMPL
    }]);
    assert_eq!(s.counters().window_probes, 1);
    // Still zero: the next probe is twice as far.
    send!(s, time 204_000, tcp::Repr { seq: remote(1), ack: local(3001), window: 0, ..SEND_TEMPL });
    assert_eq!(s.timer(Timer::Persist), Some(at(603_000)));
    // The window opens: data flows and the persist timer stops.
    send!(s, time 300_000, tcp::Repr { seq: remote(1), ack: local(3001), window: 5000, ..SEND_TEMPL });
    recv!(s, time 300_000, [tcp::Repr {
        flags: PSH_ACK,
        seq: local(3001),
        ack: remote(1),
        payload_len: 1000,
        ..RECV_TEMPL
    }]);
    assert_eq!(s.timer(Timer::Persist), None);
}

#[test]
fn ack_of_unsent_data_is_answered_and_dropped() {
    let mut s = socket_established(base_config());
    send!(s, time 2000, tcp::Repr { seq: remote(1), ack: local(5000), ..SEND_TEMPL }, &data(10));
    recv!(s, time 2000, [tcp::Repr { seq: local(1), ack: remote(1), ..RECV_TEMPL }]);
    assert_eq!(s.bytes_readable(), 0);
}

// -------------------------------------------------------------------------------------------
// ECN.

#[test]
fn classic_ecn_echo_latches_until_cwr() {
    let config = Config {
        ecn: true,
        ..base_config()
    };
    let mut s = socket_listen(config);
    send!(s, time 0, tcp::Repr {
        flags: Flags::SYN | Flags::ECE | Flags::CWR,
        seq: REMOTE_SEQ,
        mss: Some(MSS),
        ..SEND_TEMPL
    });
    drain(&mut s, 0);
    send!(s, time 100, tcp::Repr { seq: remote(1), ack: local(1), ..SEND_TEMPL });
    let d = data(100);
    // A CE mark is acknowledged at once with ECE...
    send!(s, time 200, tcp::Repr { seq: remote(1), ack: local(1), ..SEND_TEMPL }, &d, Ecn::Ce);
    recv!(s, time 200, [tcp::Repr {
        flags: Flags::ACK | Flags::ECE,
        seq: local(1),
        ack: remote(101),
        window: BUF - 100,
        ..RECV_TEMPL
    }]);
    // ...and ECE stays on unmarked segments until the sender says CWR.
    send!(s, time 300, tcp::Repr { seq: remote(101), ack: local(1), ..SEND_TEMPL }, &d, Ecn::Ect0);
    s.handle_timeout(at(41_000));
    recv!(s, time 41_000, [tcp::Repr {
        flags: Flags::ACK | Flags::ECE,
        seq: local(1),
        ack: remote(201),
        window: BUF - 200,
        ..RECV_TEMPL
    }]);
    send!(s, time 41_100, tcp::Repr {
        flags: Flags::ACK | Flags::CWR,
        seq: remote(201),
        ack: local(1),
        ..SEND_TEMPL
    }, &d, Ecn::Ect0);
    s.handle_timeout(at(82_000));
    recv!(s, time 82_000, [tcp::Repr {
        seq: local(1),
        ack: remote(301),
        window: BUF - 300,
        ..RECV_TEMPL
    }]);
    assert_eq!(s.counters().ce_received, 1);
}

#[test]
fn dctcp_receiver_echoes_each_ce_change_immediately() {
    let config = Config {
        ecn: true,
        congestion_control: CongestionControl::Dctcp,
        ..base_config()
    };
    let mut s = socket_listen(config);
    send!(s, time 0, tcp::Repr {
        flags: Flags::SYN | Flags::ECE | Flags::CWR,
        seq: REMOTE_SEQ,
        mss: Some(MSS),
        ..SEND_TEMPL
    });
    drain(&mut s, 0);
    send!(s, time 100, tcp::Repr { seq: remote(1), ack: local(1), ..SEND_TEMPL });
    let d = data(1000);
    let seg = |k: u32| tcp::Repr {
        seq: remote(1 + k * 1000),
        ack: local(1),
        ..SEND_TEMPL
    };
    // Unmarked segment: delayed.
    send!(s, time 200, seg(0), &d, Ecn::Ect0);
    recv_nothing!(s, time 200);
    // A marked one: the unmarked data is acknowledged first without ECE (RFC 8257 §3.2).
    send!(s, time 300, seg(1), &d, Ecn::Ce);
    recv!(s, time 300, [tcp::Repr {
        seq: local(1),
        ack: remote(1001),
        window: BUF - 1000,
        ..RECV_TEMPL
    }]);
    // The marked segment's own ACK is delayed and carries ECE.
    recv_nothing!(s, time 300);
    send!(s, time 400, seg(2), &d, Ecn::Ce);
    recv!(s, time 400, [tcp::Repr {
        flags: Flags::ACK | Flags::ECE,
        seq: local(1),
        ack: remote(3001),
        window: BUF - 3000,
        ..RECV_TEMPL
    }]);
    // Back to unmarked after one marked segment: its ECE ACK goes first.
    send!(s, time 500, seg(3), &d, Ecn::Ce);
    send!(s, time 600, seg(4), &d, Ecn::Ect0);
    let acks = drain(&mut s, 600);
    assert_eq!(acks.len(), 1);
    assert_eq!(acks[0].repr.ack, remote(4001));
    assert!(acks[0].repr.flags.contains(Flags::ECE));
    assert_eq!(
        acks[0].ecn,
        Ecn::Ect0,
        "DCTCP sends even pure ACKs as ECT(0), as Linux"
    );
    s.handle_timeout(at(41_000));
    let acks = drain(&mut s, 41_000);
    assert_eq!(acks[0].repr.ack, remote(5001));
    assert!(!acks[0].repr.flags.contains(Flags::ECE));
}

#[test]
fn ece_cuts_the_window_once_per_round_trip_and_sets_cwr() {
    let config = Config {
        ecn: true,
        ..base_config()
    };
    let mut s = socket_listen(config);
    send!(s, time 0, tcp::Repr {
        flags: Flags::SYN | Flags::ECE | Flags::CWR,
        seq: REMOTE_SEQ,
        mss: Some(MSS),
        ..SEND_TEMPL
    });
    drain(&mut s, 0);
    send!(s, time 1000, tcp::Repr { seq: remote(1), ack: local(1), ..SEND_TEMPL });
    s.send(&data(20_000));
    let segs = drain(&mut s, 2000);
    assert_eq!(segs.len(), 10);
    assert!(segs.iter().all(|t| t.ecn == Ecn::Ect0));
    let ece = tcp::Repr {
        flags: Flags::ACK | Flags::ECE,
        seq: remote(1),
        ..SEND_TEMPL
    };
    send!(s, time 3000, tcp::Repr { ack: local(2001), ..ece });
    assert_eq!(s.recovery_state(), RecoveryState::Cwr);
    assert_eq!(s.cwnd(), 5000, "NewReno halves for ECE (RFC 3168 §6.1.2)");
    // More ECE in the same window changes nothing.
    send!(s, time 3001, tcp::Repr { ack: local(4001), ..ece });
    assert_eq!(s.cwnd(), 5000);
    assert_eq!(s.counters().ecn_reductions, 1);
    // The next new data segment carries CWR.
    send!(s, time 3002, tcp::Repr { ack: local(8001), ..ece });
    let next = drain(&mut s, 3002);
    assert!(next[0].repr.flags.contains(Flags::CWR));
    assert!(!next[1].repr.flags.contains(Flags::CWR));
}

// -------------------------------------------------------------------------------------------
// Closing and resets.

#[test]
fn active_close_goes_through_time_wait() {
    let mut s = socket_time_wait();
    assert_eq!(events(&mut s), vec![Event::PeerClosed]);
    // A retransmitted FIN is acknowledged again and restarts 2·MSL.
    send!(s, time 10_000, tcp::Repr {
        flags: FIN_ACK,
        seq: remote(1),
        ack: local(2),
        ..SEND_TEMPL
    });
    recv!(s, time 10_000, [tcp::Repr { seq: local(2), ack: remote(2), ..RECV_TEMPL }]);
    assert_eq!(s.poll_timeout(), Some(at(60_010_000)));
    s.handle_timeout(at(60_010_000));
    assert_eq!(s.state(), State::Closed);
    assert_eq!(events(&mut s), vec![Event::Closed]);
}

#[test]
fn fin_wait_1_retransmits_the_fin() {
    let mut s = socket_fin_wait_1();
    assert_eq!(s.poll_timeout(), Some(at(202_000)));
    s.handle_timeout(at(202_000));
    recv!(s, time 202_000, [tcp::Repr {
        flags: FIN_ACK,
        seq: local(1),
        ack: remote(1),
        ..RECV_TEMPL
    }]);
}

#[test]
fn simultaneous_close_goes_through_closing() {
    let mut s = socket_fin_wait_1();
    send!(s, time 2500, tcp::Repr {
        flags: FIN_ACK,
        seq: remote(1),
        ack: local(1),
        ..SEND_TEMPL
    });
    assert_eq!(s.state(), State::Closing);
    recv!(s, time 2500, [tcp::Repr { seq: local(2), ack: remote(2), ..RECV_TEMPL }]);
    send!(s, time 3000, tcp::Repr { seq: remote(2), ack: local(2), ..SEND_TEMPL });
    assert_eq!(s.state(), State::TimeWait);
}

#[test]
fn fin_and_ack_together_skip_fin_wait_2() {
    let mut s = socket_fin_wait_1();
    send!(s, time 2500, tcp::Repr {
        flags: FIN_ACK,
        seq: remote(1),
        ack: local(2),
        ..SEND_TEMPL
    });
    assert_eq!(s.state(), State::TimeWait);
}

#[test]
fn passive_close_goes_through_last_ack() {
    let mut s = socket_last_ack();
    send!(s, time 4000, tcp::Repr { seq: remote(2), ack: local(2), ..SEND_TEMPL });
    assert_eq!(s.state(), State::Closed);
    assert_eq!(events(&mut s), vec![Event::Closed]);
    // A late segment now gets a reset.
    send!(s, time 5000, tcp::Repr { seq: remote(2), ack: local(2), ..SEND_TEMPL });
    recv!(s, time 5000, [tcp::Repr { flags: Flags::RST, seq: local(2), window: 0, ..RECV_TEMPL }]);
}

#[test]
fn close_wait_can_still_send() {
    let mut s = socket_close_wait();
    assert_eq!(s.send(&data(500)), 500);
    s.close();
    recv!(s, time 3000, [tcp::Repr {
        flags: FIN_ACK | Flags::PSH,
        seq: local(1),
        ack: remote(2),
        payload_len: 500,
        ..RECV_TEMPL
    }]);
    assert_eq!(s.state(), State::LastAck);
    assert_eq!(s.send(&data(1)), 0, "nothing more after close");
}

#[test]
fn fin_waits_for_the_data_before_it() {
    let mut s = socket_fin_wait_2();
    // The FIN arrives before the last data segment.
    send!(s, time 5000, tcp::Repr {
        flags: FIN_ACK,
        seq: remote(501),
        ack: local(2),
        ..SEND_TEMPL
    }, &data(500));
    assert_eq!(s.state(), State::FinWait2);
    send!(s, time 5100, tcp::Repr { seq: remote(1), ack: local(2), ..SEND_TEMPL }, &data(500));
    assert_eq!(s.state(), State::TimeWait);
    assert_eq!(s.bytes_readable(), 1000);
}

#[test]
fn reset_in_window_closes_and_out_of_window_gets_a_challenge() {
    let mut s = socket_established(base_config());
    // RFC 5961 §3.2: in the window but not at RCV.NXT -> challenge ACK.
    send!(s, time 2000, tcp::Repr { flags: Flags::RST, seq: remote(100), ..SEND_TEMPL });
    assert_eq!(s.state(), State::Established);
    recv!(s, time 2000, [tcp::Repr { seq: local(1), ack: remote(1), ..RECV_TEMPL }]);
    // Exactly at RCV.NXT -> reset.
    send!(s, time 2100, tcp::Repr { flags: Flags::RST, seq: remote(1), ..SEND_TEMPL });
    assert_eq!(s.state(), State::Closed);
    assert_eq!(events(&mut s), vec![Event::Reset]);
}

#[test]
fn syn_in_established_gets_a_challenge_ack() {
    let mut s = socket_established(base_config());
    send!(s, time 2000, tcp::Repr { flags: Flags::SYN, seq: remote(10), ..SEND_TEMPL });
    assert_eq!(s.state(), State::Established);
    recv!(s, time 2000, [tcp::Repr { seq: local(1), ack: remote(1), ..RECV_TEMPL }]);
}

#[test]
fn abort_sends_a_reset() {
    let mut s = socket_established(base_config());
    s.abort();
    assert_eq!(s.state(), State::Closed);
    recv!(s, time 2000, [tcp::Repr { flags: Flags::RST, seq: local(1), window: 0, ..RECV_TEMPL }]);
}

#[test]
fn invalid_config_is_refused_with_the_field_name() {
    let err = Connection::connect(
        Config {
            min_rto: SimDuration::from_secs(500),
            ..Config::default()
        },
        1,
        2,
        0,
    )
    .unwrap_err();
    assert_eq!(err.field, "min_rto");
    let err = Connection::listen(
        Config {
            send_buffer: 0,
            ..Config::default()
        },
        1,
        0,
    )
    .unwrap_err();
    assert_eq!(err.field, "send_buffer");
}
