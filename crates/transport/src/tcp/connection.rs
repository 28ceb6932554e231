//! One TCP endpoint as a sans-IO state machine.
//!
//! Heads up! Before changing this file read, at least, RFC 9293 §3.10 (the event processing
//! rules this file follows step by step: OPEN, SEND, RECEIVE, CLOSE, SEGMENT ARRIVES, timeouts),
//! RFC 5681 §3 and §4.2 (congestion control, ACK generation), RFC 6298 §5 (the retransmission
//! timer), RFC 2018 §4 (which SACK blocks a receiver reports), RFC 6675 §5 (SACK-based
//! recovery), RFC 6582 §3 (NewReno without SACK), RFC 8985 §6–7 (RACK-TLP), RFC 7323 §2–4
//! (window scale, timestamps), RFC 3168 §6.1 (ECN) and RFC 8257 §3.2 (DCTCP's ECN echo).
//!
//! # How a host drives it (quinn-proto's four groups)
//!
//! - getters: [`state`](Connection::state), [`cwnd`](Connection::cwnd),
//!   [`srtt`](Connection::srtt), [`counters`](Connection::counters), ...
//! - input: [`handle_segment`](Connection::handle_segment) for every segment that arrives and
//!   [`handle_timeout`](Connection::handle_timeout) when `poll_timeout`'s deadline passes;
//! - application commands: [`send`](Connection::send), [`recv`](Connection::recv),
//!   [`close`](Connection::close), [`abort`](Connection::abort);
//! - output, polled in this order after *every* input or command:
//!   [`poll_transmit`](Connection::poll_transmit) until it returns `None`,
//!   [`poll_timeout`](Connection::poll_timeout), then [`poll_event`](Connection::poll_event)
//!   until `None`.
//!
//! Every input takes `now`, and `now` must never go backwards. Segments travel as a wire
//! [`tcp::Repr`] plus the payload bytes and the IP ECN codepoint; the connection never sees
//! addresses, checksums or the IP header. A [`Transmit`] owns its payload as a `Vec<u8>` (a copy
//! out of the send buffer), so the host can keep it as long as the segment is on the wire.
//!
//! # Model
//!
//! Positions are 64-bit offsets from each side's ISN ([`super::seq`]). The sender keeps every
//! unacknowledged segment in a scoreboard with the time it was last sent; loss is detected
//! by RFC 6675 IsLost (DupThresh = 3) and, when enabled, RACK; lost segments are resent first
//! (NextSeg rule 1) while `pipe` is below `cwnd`, then new data. Without SACK the same machinery
//! runs NewReno: three duplicate ACKs or a partial ACK mark the first segment lost, and each
//! duplicate ACK counts as one segment left the network (Linux's "Reno SACK" emulation, so
//! `pipe` replaces RFC 6582's window inflation).
//!
//! Simplifications and what they cost (a test could observe each):
//! - No PAWS (RFC 7323 §5), no urgent data, no TCP Fast Open, no keepalive, no MTU probing,
//!   no DSACK, no F-RTO (a spurious RTO is not undone), no PRR (RFC 6937: Linux paces the
//!   window down during recovery; here `cwnd = ssthresh` at once, as RFC 6675 §5 writes it, so
//!   after the fast retransmit nothing new is sent for about half an RTT), no pacing (segments leave back to back,
//!   at the host's line rate), no Nagle (every `send` is pushed as if `TCP_NODELAY` were set),
//!   no quick-ACK mode at connection start (Linux ACKs the first segments one by one, which
//!   speeds up the first round trips of slow start).
//! - Data on a SYN or SYN-ACK is ignored (a conforming peer retransmits it).
//! - `close` in SYN-SENT with data already written queues the FIN behind the data, as RFC 9293
//!   does for SYN-RECEIVED, instead of deleting the connection (RFC 9293 §3.10.4); with nothing
//!   written it closes at once.
//! - RACK and TLP run only when SACK was negotiated (as in Linux); without SACK, loss recovery
//!   is NewReno's and a lost retransmission or a lost tail waits for the RTO.
//! - A reset in SYN-RECEIVED closes the connection instead of returning to LISTEN, and a
//!   listening connection serves one peer: the host creates one per expected connection.
//! - A FIN is sent regardless of the peer's window.
//! - The receive window offered is the whole free buffer; it never shrinks but may move its
//!   right edge back by less than one window-scale unit because of rounding.
//! - The timestamp clock ticks in microseconds; TSval starts at the simulation clock (no random
//!   offset).

use std::collections::VecDeque;

use units::{SimDuration, SimTime};
use wire::Ecn;
use wire::tcp::{self, Flags, Timestamp};

use super::buffer::{ReceiveBuffer, SendBuffer};
use super::config::{Config, ConfigError, CongestionControl};
use super::congestion::{Ack, AckEvent, AnyController, CongestionEvent, Controller};
use super::rack::Rack;
use super::rtt::RttEstimator;
use super::scoreboard::{Scoreboard, SentSegment};
use super::seq::SeqSpace;
use super::state::{RecoveryState, State};
use super::timer::{Timer, TimerTable};
use super::tso;

/// RFC 9293 §3.7.1: the send MSS assumed when the peer sends no MSS option.
const DEFAULT_MSS: u16 = 536;
/// The smallest MSS we accept from a peer (Linux clamps to `tcp_min_snd_mss` = 48; we keep a
/// little more room so a segment with timestamps still carries data).
const MIN_PEER_MSS: u16 = 64;
/// Bytes of option space the timestamp option takes in every segment (NOP NOP + 10).
const TIMESTAMP_OPTION_LEN: u16 = 12;
/// RFC 8985 §7.2 WCDelAckT: the worst-case delayed-ACK time added to the PTO when one segment
/// is in flight.
const WORST_CASE_DELAYED_ACK: SimDuration = SimDuration::from_ms(200);
/// PTO before any RTT sample (RFC 8985 §7.2).
const INITIAL_PTO: SimDuration = SimDuration::from_secs(1);
/// NewReno's duplicate-ACK threshold (RFC 5681 §3.2).
const DUPACK_THRESHOLD: u64 = 3;

/// A segment for the host to put on the wire.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Transmit {
    /// The TCP header fields and options; `repr.payload_len` is `payload.len()`.
    pub repr: tcp::Repr,
    /// The payload bytes, copied out of the send buffer.
    pub payload: Vec<u8>,
    /// The ECN codepoint for the IP header: ECT(0) on new data once ECN is negotiated
    /// (and on every segment under DCTCP), Not-ECT otherwise (RFC 3168 §6.1.4–6.1.5).
    pub ecn: Ecn,
}

/// Something the application should know about; read with
/// [`poll_event`](Connection::poll_event).
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub enum Event {
    /// The connection reached CLOSED in an orderly way (after LAST-ACK, TIME-WAIT, `close`
    /// before the handshake completed, or `abort`).
    Closed,
    /// The handshake completed: the connection is ESTABLISHED. Emitted once.
    Connected,
    /// New bytes can be read with [`recv`](Connection::recv). Emitted when bytes arrive and
    /// no `DataReadable` has been emitted since the last `recv`.
    DataReadable,
    /// The peer sent FIN and every byte before it has arrived: after the readable bytes, the
    /// stream has ended.
    PeerClosed,
    /// The peer reset the connection; it is CLOSED.
    Reset,
    /// The send buffer has room again after a [`send`](Connection::send) accepted less than it
    /// was offered (emitted when at most two thirds of the buffer is used, as Linux's
    /// `sk_stream_is_writeable`).
    SendSpaceAvailable,
    /// Retransmissions went unanswered (`syn_retries` or `max_retries` exceeded); the
    /// connection is CLOSED.
    TimedOut,
}

/// What the two sides agreed on in the handshake.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub struct Negotiated {
    /// The peer's MSS option (536 if it sent none).
    pub peer_mss: u16,
    /// Payload bytes in a full-sized segment we send: the peer's MSS less the timestamp
    /// option.
    pub send_mss: u16,
    /// Window-scale shift applied to the windows the peer advertises (0 without scaling).
    pub send_window_shift: u8,
    /// Window-scale shift applied to the windows we advertise.
    pub recv_window_shift: u8,
    /// Both sides sent the window-scale option (RFC 7323 §2.2).
    pub window_scaling: bool,
    /// Both sides sent SACK-permitted.
    pub sack: bool,
    /// Both sides sent timestamps.
    pub timestamps: bool,
    /// ECN was negotiated (RFC 3168 §6.1.1).
    pub ecn: bool,
}

/// Counters for the lab; every one only ever increases.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub struct Counters {
    /// Segments handed to the host, control segments included.
    pub segments_sent: u64,
    /// Segments passed to `handle_segment`.
    pub segments_received: u64,
    /// Payload bytes in segments sent, retransmissions included.
    pub bytes_sent: u64,
    /// Payload bytes the peer acknowledged cumulatively.
    pub bytes_acked: u64,
    /// Segments sent again (fast retransmits, RTO retransmits, TLP retransmissions).
    pub retransmitted_segments: u64,
    /// Payload bytes in those segments.
    pub retransmitted_bytes: u64,
    /// Retransmissions sent during fast recovery.
    pub fast_retransmits: u64,
    /// Fast-recovery episodes entered.
    pub fast_recoveries: u64,
    /// Retransmission timeouts (SYN timeouts included).
    pub rtos: u64,
    /// Tail loss probes sent.
    pub tlp_probes: u64,
    /// Losses repaired by a TLP retransmission alone (the window was reduced for them).
    pub tlp_recoveries: u64,
    /// Segments RACK marked lost.
    pub rack_losses: u64,
    /// Segments RFC 6675 IsLost (DupThresh) marked lost.
    pub dupthresh_losses: u64,
    /// SACK blocks received.
    pub sack_blocks_received: u64,
    /// Duplicate ACKs received (RFC 5681 §2 definition).
    pub dup_acks_received: u64,
    /// ACKs received carrying ECN-Echo.
    pub ece_received: u64,
    /// Window reductions made for ECN-Echo.
    pub ecn_reductions: u64,
    /// Data segments received with the CE codepoint.
    pub ce_received: u64,
    /// Zero-window probes sent.
    pub window_probes: u64,
    /// Resets sent.
    pub resets_sent: u64,
    /// RTT samples taken (handshake and data), and their sum in picoseconds: with
    /// `rtt_samples`, the mean RTT over any span of the connection (difference two readings),
    /// which loss models such as Mathis's need.
    pub rtt_samples: u64,
    /// Sum of the RTT samples, ps.
    pub rtt_sum_ps: u64,
    /// Idle time spent waiting for retransmission timeouts: for each RTO, the time from the
    /// connection's last transmission to the timeout, ps.
    pub rto_wait_ps: u64,
}

/// A tail loss probe that has been sent and not yet acknowledged (RFC 8985 §7.4, TLP.end_seq).
#[derive(Clone, Copy, Debug)]
struct TlpEpisode {
    end: u64,
    is_retransmission: bool,
}

/// One TCP endpoint. See the module documentation for the calling protocol.
#[derive(Clone, Debug)]
pub struct Connection {
    config: Config,
    state: State,
    local_port: u16,
    remote_port: u16,
    timers: TimerTable,
    events: VecDeque<Event>,
    counters: Counters,
    negotiated: Negotiated,
    /// Control segments (resets, DCTCP's immediate ACKs) to send before anything else.
    control: VecDeque<Transmit>,

    // Send side; offsets from our ISN.
    tx_space: SeqSpace,
    /// SND.UNA: oldest unacknowledged offset.
    snd_una: u64,
    /// SND.NXT: next new offset to send (retransmissions never rewind it).
    snd_nxt: u64,
    /// The peer's window, scaled, in bytes.
    snd_wnd: u64,
    max_snd_wnd: u64,
    /// SND.WL1 (a peer offset) and SND.WL2 (ours): the segment that last updated `snd_wnd`.
    snd_wl1: u64,
    snd_wl2: u64,
    send_buf: SendBuffer,
    board: Scoreboard,
    /// The application closed: a FIN follows the buffered data.
    fin_queued: bool,
    /// A SYN (or SYN-ACK) is due.
    syn_pending: bool,
    syn_sent_at: Option<SimTime>,
    syn_retransmitted: bool,
    /// When the last segment left (for [`Counters::rto_wait_ps`]).
    last_tx_at: SimTime,
    /// When the last data segment left (Linux `lsndtime`), for TSO deferral.
    last_data_tx_at: SimTime,
    /// Bytes of the super-segment TSO deferral last let go that are still to be sent: the test
    /// runs once per super-segment, not once per MSS.
    tso_budget: u64,
    /// `send` accepted less than offered; emit `SendSpaceAvailable` when room returns.
    send_blocked: bool,

    // Receive side; offsets from the peer's ISN.
    rx_space: SeqSpace,
    rcv: ReceiveBuffer,
    /// Data offset of the peer's FIN, once a FIN inside the window was seen.
    peer_fin: Option<u64>,
    /// The peer's FIN was reached in order (RCV.NXT counts it).
    fin_received: bool,
    /// Data offsets of the most recent out-of-order segments, newest first (RFC 2018 §4).
    recent_sacks: [Option<u64>; tcp::MAX_SACK_BLOCKS],
    /// An ACK must go out at the next `poll_transmit`.
    ack_now: bool,
    /// Out-of-order data arrived; the next ACK must carry SACK blocks.
    sack_pending: bool,
    /// In-order bytes received since the last ACK sent.
    unacked_bytes: u64,
    /// Largest segment payload received (Linux `rcv_mss`), for "ACK every second segment".
    rcv_mss: u64,
    /// Data offset of the right edge we last advertised.
    adv_right_edge: u64,
    /// TS.Recent (RFC 7323 §4.3).
    ts_recent: u32,
    /// RCV.NXT carried by the last ACK sent (Last.ACK.sent of RFC 7323).
    last_ack_sent: u64,
    readable_notified: bool,
    /// DCTCP: CE codepoint of the last data segment (RFC 8257 §3.2 "CE state").
    ce_state: bool,
    /// Classic ECN: CE seen, echo ECE until the peer sends CWR (RFC 3168 §6.1.3).
    ece_latched: bool,

    // Loss recovery and congestion control.
    rtt: RttEstimator,
    recovery: RecoveryState,
    /// Offset that ends the current recovery/CWR/loss episode when acknowledged.
    recovery_point: u64,
    rack: Rack,
    tlp: Option<TlpEpisode>,
    tlp_pending: bool,
    /// The fast retransmit of RFC 6675 §5 step (4.3) is due: it ignores `cwnd`.
    fast_retransmit_due: bool,
    probe_pending: bool,
    persist_backoff: u32,
    /// Duplicate ACKs counted as segments that left the network (non-SACK recovery).
    reno_dupacks: u64,
    /// Consecutive timeouts without progress.
    retries: u32,
    cc: AnyController,
    /// Set CWR on the next new data segment (RFC 3168 §6.1.2).
    send_cwr: bool,
    /// Reused list of segments an ACK delivered.
    delivered: Vec<SentSegment>,
}

impl Connection {
    /// An active open (RFC 9293 §3.10.1): the connection starts in SYN-SENT and its first
    /// `poll_transmit` returns the SYN. `isn` is the initial sequence number (the host chooses
    /// it; no RNG is used here).
    pub fn connect(
        config: Config,
        local_port: u16,
        remote_port: u16,
        isn: u32,
    ) -> Result<Connection, ConfigError> {
        let mut conn = Connection::new(config, local_port, remote_port, isn)?;
        conn.state = State::SynSent;
        conn.syn_pending = true;
        Ok(conn)
    }

    /// A passive open: the connection waits in LISTEN for one SYN to `local_port`.
    pub fn listen(config: Config, local_port: u16, isn: u32) -> Result<Connection, ConfigError> {
        let mut conn = Connection::new(config, local_port, 0, isn)?;
        conn.state = State::Listen;
        Ok(conn)
    }

    fn new(
        config: Config,
        local_port: u16,
        remote_port: u16,
        isn: u32,
    ) -> Result<Connection, ConfigError> {
        config.validate()?;
        let mss = u64::from(config.mss);
        Ok(Connection {
            rtt: RttEstimator::new(config.initial_rto, config.min_rto, config.max_rto),
            cc: AnyController::new(
                config.congestion_control,
                mss,
                u64::from(config.initial_cwnd) * mss,
            ),
            send_buf: SendBuffer::new(config.send_buffer),
            rcv: ReceiveBuffer::new(config.recv_buffer),
            rcv_mss: u64::from(DEFAULT_MSS.min(config.mss)),
            config,
            state: State::Closed,
            local_port,
            remote_port,
            timers: TimerTable::default(),
            events: VecDeque::new(),
            counters: Counters::default(),
            negotiated: Negotiated::default(),
            control: VecDeque::new(),
            tx_space: SeqSpace::new(isn),
            snd_una: 0,
            snd_nxt: 0,
            snd_wnd: 0,
            max_snd_wnd: 0,
            snd_wl1: 0,
            snd_wl2: 0,
            board: Scoreboard::default(),
            fin_queued: false,
            syn_pending: false,
            syn_sent_at: None,
            syn_retransmitted: false,
            last_tx_at: SimTime::ZERO,
            last_data_tx_at: SimTime::ZERO,
            tso_budget: 0,
            send_blocked: false,
            rx_space: SeqSpace::default(),
            peer_fin: None,
            fin_received: false,
            recent_sacks: [None; tcp::MAX_SACK_BLOCKS],
            ack_now: false,
            sack_pending: false,
            unacked_bytes: 0,
            adv_right_edge: 0,
            ts_recent: 0,
            last_ack_sent: 0,
            readable_notified: false,
            ce_state: false,
            ece_latched: false,
            recovery: RecoveryState::Open,
            recovery_point: 0,
            rack: Rack::default(),
            tlp: None,
            tlp_pending: false,
            fast_retransmit_due: false,
            probe_pending: false,
            persist_backoff: 0,
            reno_dupacks: 0,
            retries: 0,
            send_cwr: false,
            delivered: Vec::new(),
        })
    }

    // ---------------------------------------------------------------------------------------
    // (A) Getters.

    /// The RFC 9293 state.
    pub fn state(&self) -> State {
        self.state
    }

    /// The loss-recovery mode.
    pub fn recovery_state(&self) -> RecoveryState {
        self.recovery
    }

    /// The configuration the connection was built with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// What the handshake negotiated (all defaults before it completes).
    pub fn negotiated(&self) -> Negotiated {
        self.negotiated
    }

    /// Our port.
    pub fn local_port(&self) -> u16 {
        self.local_port
    }

    /// The peer's port (0 while listening).
    pub fn remote_port(&self) -> u16 {
        self.remote_port
    }

    /// The congestion window, in bytes.
    pub fn cwnd(&self) -> u64 {
        self.cc.window()
    }

    /// The slow-start threshold, in bytes (`u64::MAX` before the first congestion event).
    pub fn ssthresh(&self) -> u64 {
        self.cc.ssthresh()
    }

    /// The congestion controller, for controller-specific state (e.g. DCTCP's α).
    pub fn congestion_controller(&self) -> &AnyController {
        &self.cc
    }

    /// The smoothed RTT (RFC 6298), once measured.
    pub fn srtt(&self) -> Option<SimDuration> {
        self.rtt.srtt()
    }

    /// The RTT variation (RFC 6298 RTTVAR).
    pub fn rttvar(&self) -> SimDuration {
        self.rtt.rttvar()
    }

    /// The smallest RTT measured.
    pub fn min_rtt(&self) -> Option<SimDuration> {
        self.rtt.min_rtt()
    }

    /// The most recent RTT sample.
    pub fn latest_rtt(&self) -> Option<SimDuration> {
        self.rtt.latest()
    }

    /// The current retransmission timeout, backoff included.
    pub fn rto(&self) -> SimDuration {
        self.rtt.rto()
    }

    /// How many times the RTO has doubled since data was last acknowledged.
    pub fn rto_backoff(&self) -> u32 {
        self.rtt.backoff()
    }

    /// Bytes estimated to be in the network: RFC 6675 `pipe`.
    pub fn bytes_in_flight(&self) -> u64 {
        self.pipe()
    }

    /// Sequence space sent and not cumulatively acknowledged (RFC 5681 FlightSize).
    pub fn flight_size(&self) -> u64 {
        self.board.flight_size()
    }

    /// The peer's receive window, scaled, in bytes.
    pub fn peer_window(&self) -> u64 {
        self.snd_wnd
    }

    /// Payload bytes in a full-sized segment we send.
    pub fn send_mss(&self) -> u16 {
        self.negotiated.send_mss
    }

    /// Room in the send buffer, in bytes.
    pub fn send_buffer_free(&self) -> usize {
        self.send_buf.free()
    }

    /// Bytes written by the application and not yet acknowledged.
    pub fn send_buffer_len(&self) -> usize {
        self.send_buf.len()
    }

    /// Bytes ready for [`recv`](Self::recv).
    pub fn bytes_readable(&self) -> usize {
        self.rcv.readable_len()
    }

    /// The receive window we would advertise now, in bytes.
    pub fn receive_window(&self) -> usize {
        self.rcv.window()
    }

    /// The counters.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// The deadline of one timer, for tests and the lab's timeline.
    pub fn timer(&self, timer: Timer) -> Option<SimTime> {
        self.timers.get(timer)
    }

    // ---------------------------------------------------------------------------------------
    // (B) Input.

    /// Process one arriving segment: its header, its payload bytes and the IP ECN codepoint.
    pub fn handle_segment(&mut self, now: SimTime, repr: &tcp::Repr, payload: &[u8], ecn: Ecn) {
        self.counters.segments_received += 1;
        debug_assert_eq!(payload.len(), usize::from(repr.payload_len));
        let ports_match = repr.dst_port == self.local_port && repr.src_port == self.remote_port;
        match self.state {
            State::Closed => self.reply_reset(repr),
            State::Listen if repr.dst_port == self.local_port => self.handle_listen(repr),
            State::Listen => {}
            _ if !ports_match => {}
            State::SynSent => self.handle_syn_sent(now, repr),
            _ => self.handle_synchronized(now, repr, payload, ecn),
        }
    }

    /// Process every timer whose deadline is at or before `now`.
    pub fn handle_timeout(&mut self, now: SimTime) {
        for timer in Timer::VALUES {
            if self.timers.is_expired(timer, now) {
                self.timers.stop(timer);
                self.on_timer(now, timer);
            }
        }
    }

    // ---------------------------------------------------------------------------------------
    // (C) Application commands.

    /// Queue bytes for sending; returns how many fit in the send buffer. Refused (0) before an
    /// open, after `close`, or once the connection is closing.
    pub fn send(&mut self, data: &[u8]) -> usize {
        let open = matches!(
            self.state,
            State::SynSent | State::SynReceived | State::Established | State::CloseWait
        );
        if !open || self.fin_queued {
            return 0;
        }
        let n = self.send_buf.write(data);
        if n < data.len() {
            self.send_blocked = true;
        }
        n
    }

    /// Read in-order bytes into `buf`; returns how many (0 when none are ready). When a read
    /// frees enough space the connection schedules a window update (Linux's
    /// `__tcp_cleanup_rbuf` rule: the window at least doubles), so call `poll_transmit` after.
    pub fn recv(&mut self, buf: &mut [u8]) -> usize {
        let n = self.rcv.read(buf);
        self.readable_notified = false;
        if n > 0 && self.state.receives_data() && self.rx_ready() {
            let window_now = self.adv_right_edge.saturating_sub(self.rcv.next());
            let new_window = self.advertised_window_bytes();
            let threshold = (self.rcv.capacity() as u64 / 2).min(self.rcv_mss);
            if 2 * window_now <= self.rcv.capacity() as u64
                && new_window >= 2 * window_now
                && new_window >= window_now + threshold
            {
                self.ack_now = true;
            }
        }
        n
    }

    /// Close our direction (RFC 9293 §3.10.4): a FIN follows the data already written.
    pub fn close(&mut self) {
        match self.state {
            State::Listen => self.enter_closed(Event::Closed),
            State::SynSent if self.send_buf.len() == 0 => self.enter_closed(Event::Closed),
            // The data written so far and then the FIN go out once the handshake completes
            // (RFC 9293 §3.10.4 queues the FIN in SYN-RECEIVED; we do the same in SYN-SENT
            // when data is waiting, as a socket's write-then-close expects).
            State::SynSent | State::SynReceived => self.fin_queued = true,
            State::Established => {
                self.fin_queued = true;
                self.state = State::FinWait1;
            }
            State::CloseWait => {
                self.fin_queued = true;
                self.state = State::LastAck;
            }
            _ => {}
        }
    }

    /// Abort (RFC 9293 §3.10.5): send a reset if the peer knows about us, then CLOSED.
    pub fn abort(&mut self) {
        if !matches!(self.state, State::Closed | State::Listen | State::SynSent) {
            let repr = tcp::Repr {
                src_port: self.local_port,
                dst_port: self.remote_port,
                seq: self.tx_space.seq(self.snd_nxt),
                flags: Flags::RST,
                ..tcp::Repr::default()
            };
            self.push_control(repr);
        }
        self.enter_closed(Event::Closed);
    }

    // ---------------------------------------------------------------------------------------
    // (D) Output.

    /// The next segment to send, if any. Call until `None` after every input or command.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Transmit> {
        let transmit = if let Some(t) = self.control.pop_front() {
            t
        } else {
            match self.state {
                State::Closed | State::Listen => None,
                State::SynSent | State::SynReceived => self.transmit_syn(now),
                _ => self.transmit_synchronized(now),
            }?
        };
        self.counters.segments_sent += 1;
        self.counters.bytes_sent += transmit.payload.len() as u64;
        self.last_tx_at = now;
        Some(transmit)
    }

    /// The earliest timer deadline; call [`handle_timeout`](Self::handle_timeout) then.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        self.timers.next_timeout()
    }

    /// The next event for the application.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    // ---------------------------------------------------------------------------------------
    // Handshake.

    fn handle_listen(&mut self, repr: &tcp::Repr) {
        if repr.flags.contains(Flags::RST) {
            return;
        }
        if repr.flags.contains(Flags::ACK) {
            self.reply_reset(repr);
            return;
        }
        if !repr.flags.contains(Flags::SYN) {
            return;
        }
        self.remote_port = repr.src_port;
        self.accept_syn(repr);
        self.negotiated.ecn =
            self.config.ecn && repr.flags.contains(Flags::ECE) && repr.flags.contains(Flags::CWR);
        self.state = State::SynReceived;
        self.syn_pending = true;
    }

    fn handle_syn_sent(&mut self, now: SimTime, repr: &tcp::Repr) {
        let has_ack = repr.flags.contains(Flags::ACK);
        let ack_ok = has_ack && repr.ack == self.tx_space.seq(1);
        if has_ack && !ack_ok {
            self.reply_reset(repr);
            return;
        }
        if repr.flags.contains(Flags::RST) {
            if ack_ok {
                self.enter_closed(Event::Reset);
            }
            return;
        }
        if !repr.flags.contains(Flags::SYN) {
            return;
        }
        self.accept_syn(repr);
        if !ack_ok {
            // Simultaneous open (RFC 9293 §3.5, Figure 8): answer with SYN-ACK.
            self.negotiated.ecn = self.config.ecn
                && repr.flags.contains(Flags::ECE)
                && repr.flags.contains(Flags::CWR);
            self.state = State::SynReceived;
            self.syn_pending = true;
            return;
        }
        self.negotiated.ecn =
            self.config.ecn && repr.flags.contains(Flags::ECE) && !repr.flags.contains(Flags::CWR);
        self.snd_una = 1;
        self.snd_wl2 = 1;
        self.sample_syn_rtt(now, repr);
        self.established();
        self.ack_now = true;
    }

    /// Record the peer's SYN: its ISN, options and (unscaled) window.
    fn accept_syn(&mut self, repr: &tcp::Repr) {
        self.rx_space = SeqSpace::new(repr.seq);
        let timestamps = self.config.timestamps && repr.timestamp.is_some();
        let sack = self.config.sack && repr.sack_permitted;
        let window_scaling = self.config.window_scaling && repr.window_scale.is_some();
        let (send_shift, recv_shift) = match repr.window_scale {
            Some(shift) if window_scaling => (shift.min(14), self.config.window_shift()),
            _ => (0, 0),
        };
        let peer_mss = repr.mss.unwrap_or(DEFAULT_MSS).max(MIN_PEER_MSS);
        let option_len = if timestamps { TIMESTAMP_OPTION_LEN } else { 0 };
        self.negotiated = Negotiated {
            peer_mss,
            send_mss: peer_mss - option_len,
            send_window_shift: send_shift,
            recv_window_shift: recv_shift,
            window_scaling,
            sack,
            timestamps,
            ecn: false,
        };
        if let Some(ts) = repr.timestamp {
            self.ts_recent = ts.tsval;
        }
        self.snd_wnd = u64::from(repr.window);
        self.max_snd_wnd = self.snd_wnd;
        self.snd_wl1 = 0;
    }

    /// The handshake completed.
    fn established(&mut self) {
        self.state = if self.fin_queued {
            State::FinWait1
        } else {
            State::Established
        };
        self.events.push_back(Event::Connected);
        let mss = u64::from(self.negotiated.send_mss);
        self.cc = AnyController::new(
            self.config.congestion_control,
            mss,
            u64::from(self.config.initial_cwnd) * mss,
        );
        self.timers.stop(Timer::Retransmit);
        self.rtt.reset_backoff();
        self.retries = 0;
    }

    /// Feeds one RTT sample to the estimator and counts it.
    fn on_rtt_sample(&mut self, rtt: SimDuration) {
        self.counters.rtt_samples += 1;
        self.counters.rtt_sum_ps += rtt.as_ps();
        self.rtt.on_sample(rtt);
    }

    /// An RTT sample from the handshake, unless the SYN was retransmitted (Karn).
    fn sample_syn_rtt(&mut self, now: SimTime, repr: &tcp::Repr) {
        if !self.syn_retransmitted
            && let Some(sent) = self.syn_sent_at
        {
            self.on_rtt_sample(now - sent);
            return;
        }
        if let Some(rtt) = self.timestamp_rtt(now, repr) {
            self.on_rtt_sample(rtt);
        }
    }

    fn transmit_syn(&mut self, now: SimTime) -> Option<Transmit> {
        if !self.syn_pending {
            return None;
        }
        self.syn_pending = false;
        let active = self.state == State::SynSent;
        let mut flags = Flags::SYN;
        if !active {
            flags = flags | Flags::ACK;
        }
        if active && self.config.ecn {
            flags = flags | Flags::ECE | Flags::CWR;
        } else if !active && self.negotiated.ecn {
            flags = flags | Flags::ECE;
        }
        let offer_scale = if active {
            self.config.window_scaling
        } else {
            self.negotiated.window_scaling
        };
        let timestamps = if active {
            self.config.timestamps
        } else {
            self.negotiated.timestamps
        };
        let repr = tcp::Repr {
            src_port: self.local_port,
            dst_port: self.remote_port,
            seq: self.tx_space.seq(0),
            ack: if active {
                0
            } else {
                self.rx_space.seq(self.rcv_nxt())
            },
            flags,
            window: self.rcv.window().min(65_535) as u16,
            mss: Some(self.config.mss),
            window_scale: offer_scale.then(|| self.config.window_shift()),
            sack_permitted: if active {
                self.config.sack
            } else {
                self.negotiated.sack
            },
            timestamp: timestamps.then(|| Timestamp {
                tsval: timestamp_now(now),
                tsecr: if active { 0 } else { self.ts_recent },
            }),
            ..tcp::Repr::default()
        };
        if self.syn_sent_at.is_some() {
            self.syn_retransmitted = true;
        }
        self.syn_sent_at = Some(now);
        self.snd_nxt = self.snd_nxt.max(1);
        self.adv_right_edge = self.rcv.next() + u64::from(repr.window);
        self.timers.set(Timer::Retransmit, now + self.rtt.rto());
        if !active {
            self.note_ack_sent();
        }
        Some(Transmit {
            repr,
            payload: Vec::new(),
            ecn: Ecn::NotEct,
        })
    }

    // ---------------------------------------------------------------------------------------
    // Segment arrival in SYN-RECEIVED and the synchronized states (RFC 9293 §3.10.7.4).

    fn handle_synchronized(&mut self, now: SimTime, repr: &tcp::Repr, payload: &[u8], ecn: Ecn) {
        let flags = repr.flags;
        if self.state == State::SynReceived
            && flags.contains(Flags::SYN)
            && flags.contains(Flags::ACK)
            && !flags.contains(Flags::RST)
            && repr.seq == self.rx_space.seq(0)
            && repr.ack == self.tx_space.seq(1)
        {
            // Simultaneous open: the peer's SYN-ACK acknowledges our SYN (RFC 9293 Figure 8).
            self.snd_una = 1;
            self.snd_wl2 = 1;
            self.sample_syn_rtt(now, repr);
            self.established();
            self.ack_now = true;
            return;
        }
        let rcv_nxt = self.rcv_nxt();
        let seg_len = payload.len() as u64
            + u64::from(flags.contains(Flags::SYN))
            + u64::from(flags.contains(Flags::FIN));
        let Some(seg_off) = self.rx_space.offset(repr.seq, rcv_nxt) else {
            if !flags.contains(Flags::RST) {
                self.ack_now = true;
            }
            return;
        };
        // First: is the segment inside the receive window?
        let wnd = self.rcv.window() as u64;
        let in_window = |off: u64| rcv_nxt <= off && off < rcv_nxt + wnd;
        let acceptable = match (seg_len, wnd) {
            (0, 0) => seg_off == rcv_nxt,
            (0, _) => in_window(seg_off),
            (_, 0) => false,
            (_, _) => in_window(seg_off) || in_window(seg_off + seg_len - 1),
        };
        if !acceptable {
            if flags.contains(Flags::RST) {
                return;
            }
            self.ack_now = true;
            match self.state {
                // A retransmitted SYN: our SYN-ACK was lost.
                State::SynReceived => self.syn_pending = true,
                // A retransmitted FIN: our ACK was lost; restart 2·MSL (RFC 9293 §3.10.7.4).
                State::TimeWait if flags.contains(Flags::FIN) => {
                    self.timers
                        .set(Timer::TimeWait, now + self.config.time_wait);
                }
                _ => {}
            }
            // RFC 9293: with a zero window, still process the ACK of a segment at RCV.NXT.
            if wnd == 0 && seg_off == rcv_nxt && flags.contains(Flags::ACK) {
                self.process_ack(now, repr, seg_off, payload.len());
            }
            return;
        }
        // Second: RST (RFC 5961 §3.2: only an exact match resets; else a challenge ACK).
        if flags.contains(Flags::RST) {
            if seg_off == rcv_nxt {
                self.enter_closed(Event::Reset);
            } else {
                self.ack_now = true;
            }
            return;
        }
        // Fourth: a SYN in the window gets a challenge ACK (RFC 5961 §4.2).
        if flags.contains(Flags::SYN) {
            self.ack_now = true;
            return;
        }
        if let Some(ts) = repr.timestamp
            && self.negotiated.timestamps
            && seg_off <= self.last_ack_sent
        {
            // RFC 7323 §4.3 (3): remember the TSval of an acceptable segment at the left edge,
            // pure ACKs included (the handshake's final ACK is the first one the passive side
            // can echo).
            self.ts_recent = ts.tsval;
        }
        // Fifth: the ACK field.
        if !flags.contains(Flags::ACK) {
            return;
        }
        if self.state == State::SynReceived {
            if self.tx_space.offset(repr.ack, 1) != Some(1) {
                self.reply_reset(repr);
                return;
            }
            self.snd_una = 1;
            self.sample_syn_rtt(now, repr);
            self.snd_wnd = u64::from(repr.window) << self.negotiated.send_window_shift;
            self.max_snd_wnd = self.snd_wnd;
            self.snd_wl1 = seg_off;
            self.snd_wl2 = 1;
            self.established();
        }
        if !self.process_ack(now, repr, seg_off, payload.len()) {
            return;
        }
        // Seventh and eighth: the text and the FIN.
        if self.state.receives_data() && (!payload.is_empty() || flags.contains(Flags::FIN)) {
            self.process_data(now, repr, seg_off, payload, ecn);
        }
    }

    // ---------------------------------------------------------------------------------------
    // Acknowledgment processing.

    /// Process the ACK field (RFC 9293 §3.10.7.4 "fifth"); returns false if the segment must
    /// be dropped (it acknowledges data never sent).
    fn process_ack(
        &mut self,
        now: SimTime,
        repr: &tcp::Repr,
        seg_off: u64,
        payload_len: usize,
    ) -> bool {
        let Some(ack) = self.tx_space.offset(repr.ack, self.snd_una) else {
            return true;
        };
        if ack > self.snd_nxt {
            self.ack_now = true;
            return false;
        }
        if ack < self.snd_una {
            // An old ACK: nothing to learn from it.
            return true;
        }
        let newly_acked = ack - self.snd_una;
        let prior_pipe = self.pipe();
        let prior_flight = self.board.flight_size();

        // The peer's window (RFC 9293 SND.WL1/SND.WL2 rule).
        let mut window_changed = false;
        if self.snd_wl1 < seg_off || (self.snd_wl1 == seg_off && self.snd_wl2 <= ack) {
            let wnd = u64::from(repr.window) << self.negotiated.send_window_shift;
            window_changed = wnd != self.snd_wnd;
            self.snd_wnd = wnd;
            self.max_snd_wnd = self.max_snd_wnd.max(wnd);
            self.snd_wl1 = seg_off;
            self.snd_wl2 = ack;
        }
        let ece = self.negotiated.ecn && repr.flags.contains(Flags::ECE);
        if ece {
            self.counters.ece_received += 1;
        }

        // What this ACK delivered: cumulatively, then by SACK.
        let mut delivered = std::mem::take(&mut self.delivered);
        delivered.clear();
        if newly_acked > 0 {
            self.board.ack_to(ack, |s| delivered.push(*s));
        }
        let cumulative = delivered.len();
        self.snd_una = ack;
        if self.negotiated.sack {
            for &(left, right) in repr.sack_ranges.iter().flatten() {
                self.counters.sack_blocks_received += 1;
                let (Some(l), Some(r)) = (
                    self.tx_space.offset(left, ack),
                    self.tx_space.offset(right, ack),
                ) else {
                    continue;
                };
                // Blocks below the cumulative ACK are DSACKs or stale; ignore them.
                if l < ack || r <= l || r > self.snd_nxt {
                    continue;
                }
                self.board.sack(l, r, |s| delivered.push(*s));
            }
        }
        let delivered_bytes: u64 = delivered.iter().map(|s| u64::from(s.len)).sum();
        self.sample_rtt(now, repr, &delivered, cumulative);
        if self.rack_enabled() {
            delivered.sort_unstable_by_key(SentSegment::end);
            let min_rtt = self.rtt.min_rtt();
            let echo = self.echo_check(repr);
            for seg in &delivered {
                self.rack.on_delivered(seg, now, min_rtt, &echo);
            }
        }
        self.delivered = delivered;

        let data_end = self.send_buf.end();
        let old_una = ack - newly_acked;
        self.counters.bytes_acked += (ack - 1).min(data_end) - (old_una - 1).min(data_end);
        self.send_buf.release_to((ack - 1).min(data_end));
        if newly_acked > 0 {
            self.rtt.reset_backoff();
            self.retries = 0;
        }

        // Duplicate ACKs (RFC 5681 §2).
        let is_dup = newly_acked == 0
            && payload_len == 0
            && !repr.flags.contains(Flags::SYN)
            && !repr.flags.contains(Flags::FIN)
            && !window_changed
            && prior_flight > 0;
        if is_dup {
            self.counters.dup_acks_received += 1;
        }

        self.detect_losses(now, is_dup, newly_acked, cumulative);

        // The end of a recovery, CWR or loss episode.
        if newly_acked > 0
            && self.recovery != RecoveryState::Open
            && self.snd_una >= self.recovery_point
        {
            if self.recovery == RecoveryState::Recovery {
                self.cc.on_recovery_exit(now);
            }
            self.recovery = RecoveryState::Open;
            self.reno_dupacks = 0;
            self.fast_retransmit_due = false;
        }
        if self.board.has_pending_retransmission()
            && matches!(self.recovery, RecoveryState::Open | RecoveryState::Cwr)
        {
            self.enter_recovery(now);
        }

        // ECN-Echo: cut once per window (RFC 3168 §6.1.2, RFC 8257 §3.3).
        if ece && self.recovery == RecoveryState::Open {
            self.cc.on_congestion_event(&CongestionEvent {
                now,
                is_ecn: true,
                flight_size: prior_flight,
            });
            self.recovery = RecoveryState::Cwr;
            self.recovery_point = self.snd_nxt;
            self.send_cwr = true;
            self.counters.ecn_reductions += 1;
        }

        // The end of a TLP episode (RFC 8985 §7.4).
        if let Some(episode) = self.tlp
            && self.snd_una >= episode.end
        {
            self.tlp = None;
            if episode.is_retransmission && self.recovery == RecoveryState::Open {
                // Without DSACK the probe is taken to have repaired a loss.
                self.cc.on_congestion_event(&CongestionEvent {
                    now,
                    is_ecn: false,
                    flight_size: prior_flight,
                });
                self.counters.tlp_recoveries += 1;
            }
        }

        self.cc.on_ack_event(&AckEvent {
            now,
            delivered_bytes,
            ece,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
        });
        if newly_acked > 0
            && matches!(self.recovery, RecoveryState::Open | RecoveryState::Loss)
            && self.cwnd_limited(prior_pipe)
        {
            self.cc.on_ack(&Ack {
                now,
                acked_bytes: newly_acked,
                min_rtt: self.rtt.min_rtt(),
            });
        }

        // Timers (RFC 6298 §5.2–5.3).
        if self.board.is_empty() {
            self.timers.stop(Timer::Retransmit);
            self.timers.stop(Timer::LossProbe);
            self.timers.stop(Timer::Reorder);
        } else if newly_acked > 0 {
            self.timers.set(Timer::Retransmit, now + self.rtt.rto());
        }
        if newly_acked > 0 {
            self.schedule_loss_probe(now);
        }
        if self.snd_una + self.snd_wnd > self.snd_nxt {
            self.timers.stop(Timer::Persist);
            self.persist_backoff = 0;
        }

        if self.send_blocked && 3 * self.send_buf.len() <= 2 * self.send_buf.capacity() {
            self.send_blocked = false;
            self.events.push_back(Event::SendSpaceAvailable);
        }

        // Our FIN acknowledged?
        if self.fin_offset().is_some_and(|f| self.snd_una > f) {
            match self.state {
                State::FinWait1 => self.state = State::FinWait2,
                State::Closing => self.enter_time_wait(now),
                State::LastAck => self.enter_closed(Event::Closed),
                _ => {}
            }
        }
        true
    }

    /// Mark lost segments: NewReno duplicate ACKs and partial ACKs without SACK, RFC 6675
    /// IsLost and RACK with it.
    fn detect_losses(&mut self, now: SimTime, is_dup: bool, newly_acked: u64, cumulative: usize) {
        if self.negotiated.sack {
            let marked = self
                .board
                .mark_lost_by_dupthresh(u64::from(self.negotiated.send_mss));
            self.counters.dupthresh_losses += marked as u64;
        } else {
            if is_dup {
                self.reno_dupacks = (self.reno_dupacks + 1).min(self.board.len() as u64);
            } else if newly_acked > 0 {
                if self.recovery == RecoveryState::Recovery {
                    // One ACK filled the hole; the other acknowledged segments had each
                    // produced a duplicate ACK (Linux `tcp_remove_reno_sacks`).
                    let extra = (cumulative as u64).saturating_sub(1);
                    self.reno_dupacks = self.reno_dupacks.saturating_sub(extra);
                } else {
                    self.reno_dupacks = 0;
                }
            }
            let first_unmarked = !self.board.is_empty() && !self.board.get(0).lost;
            let fast_retransmit = matches!(self.recovery, RecoveryState::Open | RecoveryState::Cwr)
                && self.reno_dupacks >= DUPACK_THRESHOLD;
            // RFC 6582 §3.2 step 5: a partial ACK retransmits the next unacknowledged segment.
            let partial = self.recovery == RecoveryState::Recovery
                && newly_acked > 0
                && self.snd_una < self.recovery_point;
            if first_unmarked && (fast_retransmit || partial) {
                self.board.set_lost(0, false);
                self.counters.dupthresh_losses += 1;
            }
        }
        // Without SACKed data RACK can only find lost retransmissions, which exist only in
        // recovery (after an RTO, everything outstanding is already marked).
        if self.rack_enabled()
            && (self.board.sacked_segments() > 0
                || matches!(self.recovery, RecoveryState::Recovery | RecoveryState::Loss))
        {
            self.rack_detect(now);
        }
    }

    /// RACK-TLP runs when configured and SACK was negotiated: without SACK the sender cannot
    /// tell a delivered segment above a hole from a lost one (Linux likewise falls back to
    /// NewReno marking for non-SACK connections, `tcp_identify_packet_loss`).
    fn rack_enabled(&self) -> bool {
        self.config.rack_tlp && self.negotiated.sack
    }

    /// RACK loss detection (RFC 8985 §6.2 steps 4–5) and the reorder timer.
    fn rack_detect(&mut self, now: SimTime) {
        let in_recovery = matches!(self.recovery, RecoveryState::Recovery | RecoveryState::Loss);
        let reo_wnd = self.rack.reo_wnd(
            in_recovery,
            self.board.sacked_segments(),
            self.rtt.min_rtt(),
            self.rtt.srtt(),
        );
        let (marked, timer) = self.rack.detect_loss(&mut self.board, now, reo_wnd);
        self.counters.rack_losses += marked as u64;
        match timer {
            Some(at) => self.timers.set(Timer::Reorder, at),
            None => self.timers.stop(Timer::Reorder),
        }
    }

    /// Enter fast recovery (RFC 6675 §5 steps 1–3, RFC 6582 §3.2 step 2).
    fn enter_recovery(&mut self, now: SimTime) {
        self.recovery = RecoveryState::Recovery;
        self.recovery_point = self.snd_nxt;
        self.counters.fast_recoveries += 1;
        self.cc.on_congestion_event(&CongestionEvent {
            now,
            is_ecn: false,
            flight_size: self.board.flight_size(),
        });
        self.tlp = None;
        self.tlp_pending = false;
        self.fast_retransmit_due = true;
        self.timers.stop(Timer::LossProbe);
        self.send_cwr = self.negotiated.ecn;
    }

    /// RFC 7661-style test: was the sender using its window before this ACK?
    fn cwnd_limited(&self, prior_pipe: u64) -> bool {
        let cwnd = self.cc.window();
        if cwnd < self.cc.ssthresh() {
            2 * prior_pipe >= cwnd
        } else {
            prior_pipe + 3 * u64::from(self.negotiated.send_mss) >= cwnd
        }
    }

    /// One RTT sample per ACK: from the newest cumulatively acknowledged segment if none of
    /// them was retransmitted (Karn), else from the newest newly SACKed original, else from the
    /// timestamp echo.
    fn sample_rtt(
        &mut self,
        now: SimTime,
        repr: &tcp::Repr,
        delivered: &[SentSegment],
        cumulative: usize,
    ) {
        let (cum, sacked) = delivered.split_at(cumulative);
        let newest = |segs: &mut dyn Iterator<Item = &SentSegment>| {
            segs.map(|s| s.xmit_time)
                .max()
                .map(|t| now.saturating_duration_since(t))
        };
        let sample = if !cum.is_empty() && cum.iter().all(|s| !s.ever_retransmitted) {
            newest(&mut cum.iter())
        } else {
            newest(&mut sacked.iter().filter(|s| !s.ever_retransmitted)).or_else(|| {
                if cum.is_empty() {
                    None
                } else {
                    self.timestamp_rtt(now, repr)
                }
            })
        };
        if let Some(rtt) = sample {
            self.on_rtt_sample(rtt);
        }
    }

    /// An RTT from the timestamp echo (RFC 7323 §4.1), if timestamps are on.
    fn timestamp_rtt(&self, now: SimTime, repr: &tcp::Repr) -> Option<SimDuration> {
        if !self.negotiated.timestamps {
            return None;
        }
        let ts = repr.timestamp?;
        if ts.tsecr == 0 {
            return None;
        }
        let us = timestamp_now(now).wrapping_sub(ts.tsecr);
        // More than 2^31 µs means the echo is from the future or wrapped: not a sample.
        (us < 1 << 31).then(|| SimDuration::from_us(u64::from(us)))
    }

    /// For RACK: does this ACK's timestamp echo date from at or after `t`?
    fn echo_check(&self, repr: &tcp::Repr) -> impl Fn(SimTime) -> Option<bool> + use<> {
        let echo = if self.negotiated.timestamps {
            repr.timestamp.map(|ts| ts.tsecr)
        } else {
            None
        };
        move |t: SimTime| echo.map(|e| e.wrapping_sub(timestamp_now(t)) < 1 << 31)
    }

    // ---------------------------------------------------------------------------------------
    // Receiving data.

    fn process_data(
        &mut self,
        now: SimTime,
        repr: &tcp::Repr,
        seg_off: u64,
        payload: &[u8],
        ecn: Ecn,
    ) {
        let flags = repr.flags;
        if self.negotiated.ecn {
            self.receive_ecn(now, flags, ecn, !payload.is_empty());
        }
        // Offset 0 is the SYN; text claiming it is bogus.
        let Some(data_off) = seg_off.checked_sub(1) else {
            return;
        };
        self.rcv_mss = self.rcv_mss.max(payload.len() as u64);
        let had_out_of_order = self.rcv.has_out_of_order();
        let ins = self.rcv.insert(data_off, payload);
        if flags.contains(Flags::FIN) {
            let fin_at = data_off + payload.len() as u64;
            if fin_at <= self.rcv.right_edge() {
                self.peer_fin = Some(fin_at);
            }
        }
        if ins.out_of_order {
            self.note_sack(data_off.max(self.rcv.next()));
        }
        if ins.duplicate || ins.out_of_order || ins.filled_hole || had_out_of_order {
            // RFC 5681 §4.2: ACK at once when out of order or when a hole fills.
            self.ack_now = true;
            self.sack_pending = self.negotiated.sack && self.rcv.has_out_of_order();
        }
        if ins.advanced > 0 {
            self.unacked_bytes += ins.advanced;
            if !self.readable_notified {
                self.readable_notified = true;
                self.events.push_back(Event::DataReadable);
            }
        }
        if !self.config.delayed_ack || self.unacked_bytes > self.rcv_mss {
            // At least every second full-sized segment (RFC 5681 §4.2, Linux
            // `__tcp_ack_snd_check`: more than one MSS unacknowledged).
            self.ack_now = true;
        }
        if !self.ack_now && self.unacked_bytes > 0 && !self.timers.is_armed(Timer::DelayedAck) {
            self.timers
                .set(Timer::DelayedAck, now + self.config.delayed_ack_timeout);
        }
        self.check_peer_fin(now);
    }

    /// The receiver's ECN duties: classic latching (RFC 3168 §6.1.3) or DCTCP's exact echo
    /// with the delayed-ACK state machine (RFC 8257 §3.2).
    fn receive_ecn(&mut self, now: SimTime, flags: Flags, ecn: Ecn, has_data: bool) {
        let dctcp = self.config.congestion_control == CongestionControl::Dctcp;
        if flags.contains(Flags::CWR) && !dctcp {
            self.ece_latched = false;
        }
        if !has_data {
            return;
        }
        let ce = ecn == Ecn::Ce;
        if ce {
            self.counters.ce_received += 1;
        }
        if dctcp {
            if ce != self.ce_state {
                if self.unacked_bytes > 0 {
                    // Acknowledge what arrived under the old CE state, with the old ECE.
                    let ack = self.pure_ack(now);
                    self.control.push_back(ack);
                }
                self.ce_state = ce;
            }
        } else if ce {
            self.ece_latched = true;
            self.ack_now = true;
        }
    }

    /// Remember an out-of-order arrival for the SACK blocks (RFC 2018 §4: most recent first).
    fn note_sack(&mut self, data_off: u64) {
        let Some(range) = self.rcv.range_containing(data_off) else {
            return;
        };
        let mut next = [None; tcp::MAX_SACK_BLOCKS];
        next[0] = Some(data_off);
        let mut n = 1;
        for off in self.recent_sacks.iter().flatten() {
            if n == next.len() {
                break;
            }
            if self.rcv.range_containing(*off).is_some_and(|r| r != range) {
                next[n] = Some(*off);
                n += 1;
            }
        }
        self.recent_sacks = next;
    }

    /// Consume the peer's FIN once every byte before it has arrived.
    fn check_peer_fin(&mut self, now: SimTime) {
        if self.fin_received || self.peer_fin != Some(self.rcv.next()) {
            return;
        }
        self.fin_received = true;
        self.ack_now = true;
        self.events.push_back(Event::PeerClosed);
        match self.state {
            State::SynReceived | State::Established => self.state = State::CloseWait,
            State::FinWait1 => self.state = State::Closing,
            State::FinWait2 => self.enter_time_wait(now),
            _ => {}
        }
    }

    // ---------------------------------------------------------------------------------------
    // Timers.

    fn on_timer(&mut self, now: SimTime, timer: Timer) {
        match timer {
            Timer::Retransmit => self.on_retransmission_timeout(now),
            Timer::LossProbe => {
                if self.recovery == RecoveryState::Open
                    && self.tlp.is_none()
                    && !self.board.is_empty()
                {
                    self.tlp_pending = true;
                }
            }
            Timer::Reorder if self.rack_enabled() => {
                self.rack_detect(now);
                if self.board.has_pending_retransmission()
                    && matches!(self.recovery, RecoveryState::Open | RecoveryState::Cwr)
                {
                    self.enter_recovery(now);
                }
            }
            Timer::Persist => {
                if self.window_blocked() {
                    self.probe_pending = true;
                    self.counters.window_probes += 1;
                    self.persist_backoff = (self.persist_backoff + 1).min(32);
                    self.timers
                        .set(Timer::Persist, now + self.persist_interval());
                } else {
                    self.persist_backoff = 0;
                }
            }
            Timer::Reorder => {}
            Timer::DelayedAck => {
                if self.unacked_bytes > 0 {
                    self.ack_now = true;
                }
            }
            Timer::TimeWait => self.enter_closed(Event::Closed),
        }
    }

    /// RFC 6298 §5.4–5.7, RFC 5681 §3.1 (loss window) and RFC 6675 §5.1.
    fn on_retransmission_timeout(&mut self, now: SimTime) {
        if matches!(self.state, State::SynSent | State::SynReceived) {
            self.retries += 1;
            if self.retries > self.config.syn_retries {
                self.enter_closed(Event::TimedOut);
                return;
            }
            self.counters.rtos += 1;
            self.rtt.back_off();
            self.syn_pending = true;
            return;
        }
        if self.board.is_empty() {
            return;
        }
        self.retries += 1;
        if self.retries > self.config.max_retries {
            self.enter_closed(Event::TimedOut);
            return;
        }
        self.counters.rtos += 1;
        self.counters.rto_wait_ps += now.saturating_duration_since(self.last_tx_at).as_ps();
        self.cc.on_rto(&CongestionEvent {
            now,
            is_ecn: false,
            flight_size: self.board.flight_size(),
        });
        self.board.mark_all_lost();
        self.recovery = RecoveryState::Loss;
        self.recovery_point = self.snd_nxt;
        self.tlp = None;
        self.tlp_pending = false;
        self.fast_retransmit_due = false;
        self.reno_dupacks = 0;
        self.send_cwr = self.negotiated.ecn;
        self.rtt.back_off();
        self.timers.set(Timer::Retransmit, now + self.rtt.rto());
        self.timers.stop(Timer::LossProbe);
        self.timers.stop(Timer::Reorder);
    }

    /// Arm the PTO (RFC 8985 §7.2) if a probe could be sent.
    fn schedule_loss_probe(&mut self, now: SimTime) {
        let eligible = self.rack_enabled()
            && self.recovery == RecoveryState::Open
            && self.tlp.is_none()
            && !self.board.is_empty();
        if !eligible {
            self.timers.stop(Timer::LossProbe);
            return;
        }
        let pto = match self.rtt.srtt() {
            Some(srtt) if self.board.len() == 1 => srtt * 2 + WORST_CASE_DELAYED_ACK,
            Some(srtt) => srtt * 2,
            None => INITIAL_PTO,
        };
        let mut at = now + pto;
        if let Some(rto_at) = self.timers.get(Timer::Retransmit) {
            at = at.min(rto_at);
        }
        self.timers.set(Timer::LossProbe, at);
    }

    fn persist_interval(&self) -> SimDuration {
        self.rtt
            .base_rto()
            .checked_mul(1 << self.persist_backoff.min(32))
            .unwrap_or(SimDuration::MAX)
            .min(self.config.max_rto)
    }

    /// Nothing in flight, data waiting, and the peer's window too small to send it.
    fn window_blocked(&self) -> bool {
        if !self.board.is_empty() || self.unsent_bytes() == 0 {
            return false;
        }
        let usable = (self.snd_una + self.snd_wnd).saturating_sub(self.snd_nxt);
        usable < self.unsent_bytes().min(u64::from(self.negotiated.send_mss))
    }

    fn enter_time_wait(&mut self, now: SimTime) {
        self.state = State::TimeWait;
        self.timers.stop_all();
        self.timers
            .set(Timer::TimeWait, now + self.config.time_wait);
    }

    fn enter_closed(&mut self, event: Event) {
        self.state = State::Closed;
        self.timers.stop_all();
        self.tlp_pending = false;
        self.probe_pending = false;
        self.syn_pending = false;
        self.events.push_back(event);
    }

    // ---------------------------------------------------------------------------------------
    // Sending.

    fn transmit_synchronized(&mut self, now: SimTime) -> Option<Transmit> {
        if self.tlp_pending {
            self.tlp_pending = false;
            if let Some(t) = self.transmit_loss_probe(now) {
                return Some(t);
            }
        }
        // NextSeg rule 1: the oldest lost segment, while pipe < cwnd (RFC 6675 §5 step C);
        // the first one on entering recovery goes out regardless (step 4.3).
        if let Some(i) = self.board.next_to_retransmit() {
            let len = u64::from(self.board.get(i).len);
            if self.fast_retransmit_due || self.pipe() + len <= self.cc.window() {
                self.fast_retransmit_due = false;
                return Some(self.retransmit(now, i));
            }
        } else if let Some(t) = self.transmit_new_data(now, false) {
            // NextSeg rule 2: new data.
            return Some(t);
        }
        if self.probe_pending {
            self.probe_pending = false;
            return Some(self.window_probe(now));
        }
        if self.ack_now || self.sack_pending {
            return Some(self.pure_ack(now));
        }
        None
    }

    /// RFC 6675 `pipe`, less the duplicate ACKs NewReno counts as departures.
    fn pipe(&self) -> u64 {
        let mss = u64::from(self.negotiated.send_mss);
        let departed = (self.reno_dupacks * mss).min(self.board.pipe());
        self.board.pipe() - departed
    }

    /// Bytes written and never sent (the FIN not counted).
    fn unsent_bytes(&self) -> u64 {
        (1 + self.send_buf.end()).saturating_sub(self.snd_nxt)
    }

    /// Sequence offset of our FIN, once the application closed.
    fn fin_offset(&self) -> Option<u64> {
        self.fin_queued.then(|| 1 + self.send_buf.end())
    }

    /// A new segment: up to one MSS of unsent data (and the FIN after the last byte), within
    /// the peer's window and, unless `probe`, within `cwnd`.
    fn transmit_new_data(&mut self, now: SimTime, probe: bool) -> Option<Transmit> {
        let data_end = 1 + self.send_buf.end();
        let unsent = data_end.saturating_sub(self.snd_nxt);
        let fin_due = self.fin_offset().is_some_and(|f| self.snd_nxt <= f);
        if unsent == 0 && !fin_due {
            return None;
        }
        let mss = u64::from(self.negotiated.send_mss);
        let usable = (self.snd_una + self.snd_wnd).saturating_sub(self.snd_nxt);
        let len = unsent.min(mss).min(usable);
        if unsent > 0 {
            // Sender-side silly window avoidance (RFC 9293 §3.8.6.2.1).
            let worth_it = len == mss || len == unsent || 2 * len >= self.max_snd_wnd;
            if len == 0 || !worth_it {
                if self.window_blocked() && !self.timers.is_armed(Timer::Persist) {
                    self.timers
                        .set(Timer::Persist, now + self.persist_interval());
                }
                return None;
            }
            if !probe && self.pipe() + len > self.cc.window() {
                return None;
            }
            if !probe && self.tso_defers(now, usable, unsent, fin_due) {
                return None;
            }
            self.tso_budget = self.tso_budget.saturating_sub(len);
            self.last_data_tx_at = now;
        }
        let fin = fin_due && self.snd_nxt + len == data_end;
        let start = self.snd_nxt;
        let seg_len = len + u64::from(fin);
        let push = len > 0 && start + len == data_end;
        // `len` ≤ MSS ≤ 65495, so it fits a u32.
        self.board.push(SentSegment {
            push,
            ..SentSegment::new(start, seg_len as u32, fin, now)
        });
        self.snd_nxt += seg_len;
        if !self.timers.is_armed(Timer::Retransmit) {
            self.timers.set(Timer::Retransmit, now + self.rtt.rto());
        }
        if !probe {
            self.schedule_loss_probe(now);
        }
        let mut payload = Vec::with_capacity(len as usize);
        self.send_buf
            .copy_out(start - 1, len as usize, &mut payload);
        let mut flags = Flags::ACK;
        if fin {
            flags = flags | Flags::FIN;
        }
        if push {
            flags = flags | Flags::PSH;
        }
        if len > 0 && self.send_cwr {
            self.send_cwr = false;
            flags = flags | Flags::CWR;
        }
        let repr = self.header(now, start, flags, payload.len());
        let ecn = if self.negotiated.ecn && len > 0 {
            Ecn::Ect0
        } else {
            self.control_ecn()
        };
        Some(Transmit { repr, payload, ecn })
    }

    /// TSO deferral at the start of a super-segment of more than one MSS (see [`tso`]); when
    /// it lets the data go, the budget covers the rest of that super-segment.
    fn tso_defers(&mut self, now: SimTime, send_win: u64, unsent: u64, fin: bool) -> bool {
        let Some(rule) = self.config.tso_defer else {
            return false;
        };
        let mss = u64::from(self.negotiated.send_mss);
        if self.tso_budget > 0 || unsent <= mss {
            return false;
        }
        let cwnd = self.cc.window();
        let cong_win = cwnd.saturating_sub(self.pipe());
        let outlook = tso::Outlook {
            now,
            recovering: matches!(self.recovery, RecoveryState::Recovery | RecoveryState::Loss),
            last_data_sent: self.last_data_tx_at,
            send_win,
            cong_win,
            peer_wnd: self.snd_wnd,
            cwnd,
            unsent,
            fin,
            oldest_in_flight: (!self.board.is_empty()).then(|| self.board.get(0).xmit_time),
            srtt: self.rtt.srtt(),
        };
        if rule.should_defer(&outlook) {
            return true;
        }
        self.tso_budget = send_win
            .min(cong_win)
            .min(unsent)
            .min(u64::from(rule.max_bytes));
        false
    }

    /// Resend segment `i` of the scoreboard.
    fn retransmit(&mut self, now: SimTime, i: usize) -> Transmit {
        let seg = *self.board.get(i);
        self.board.on_retransmit(i, now);
        self.segment_again(now, &seg)
    }

    /// The bytes of an already-sent segment, as a retransmission.
    fn segment_again(&mut self, now: SimTime, seg: &SentSegment) -> Transmit {
        let len = seg.payload_len() as usize;
        let mut payload = Vec::with_capacity(len);
        if len > 0 {
            self.send_buf.copy_out(seg.start - 1, len, &mut payload);
        }
        self.counters.retransmitted_segments += 1;
        self.counters.retransmitted_bytes += len as u64;
        if self.recovery == RecoveryState::Recovery {
            self.counters.fast_retransmits += 1;
        }
        if !self.timers.is_armed(Timer::Retransmit) {
            self.timers.set(Timer::Retransmit, now + self.rtt.rto());
        }
        let mut flags = Flags::ACK;
        if seg.fin {
            flags = flags | Flags::FIN;
        }
        if seg.push {
            flags = flags | Flags::PSH;
        }
        let repr = self.header(now, seg.start, flags, len);
        Transmit {
            repr,
            payload,
            ecn: self.control_ecn(),
        }
    }

    /// The tail loss probe (RFC 8985 §7.3): new data if the peer's window allows, else the
    /// last segment again.
    fn transmit_loss_probe(&mut self, now: SimTime) -> Option<Transmit> {
        if self.recovery != RecoveryState::Open || self.board.is_empty() {
            return None;
        }
        let (transmit, is_retransmission) = match self.transmit_new_data(now, true) {
            Some(t) => (t, false),
            None => {
                let i = self.board.len() - 1;
                let seg = *self.board.get(i);
                self.board.on_probe_retransmit(i, now);
                (self.segment_again(now, &seg), true)
            }
        };
        self.counters.tlp_probes += 1;
        self.tlp = Some(TlpEpisode {
            end: self.snd_nxt,
            is_retransmission,
        });
        self.timers.stop(Timer::LossProbe);
        self.timers.set(Timer::Retransmit, now + self.rtt.rto());
        Some(transmit)
    }

    /// A zero-window probe: an empty segment one below SND.UNA, which the peer must answer
    /// with an ACK carrying its window (Linux `tcp_xmit_probe_skb`).
    fn window_probe(&mut self, now: SimTime) -> Transmit {
        let repr = self.header(now, self.snd_una - 1, Flags::ACK, 0);
        Transmit {
            repr,
            payload: Vec::new(),
            ecn: self.control_ecn(),
        }
    }

    /// A segment with no data that acknowledges what was received.
    fn pure_ack(&mut self, now: SimTime) -> Transmit {
        let repr = self.header(now, self.snd_nxt, Flags::ACK, 0);
        Transmit {
            repr,
            payload: Vec::new(),
            ecn: self.control_ecn(),
        }
    }

    /// ECN codepoint for segments that are not new data: Not-ECT (RFC 3168 §6.1.4–6.1.5),
    /// except under DCTCP where Linux marks every segment ECT(0).
    fn control_ecn(&self) -> Ecn {
        if self.negotiated.ecn && self.config.congestion_control == CongestionControl::Dctcp {
            Ecn::Ect0
        } else {
            Ecn::NotEct
        }
    }

    /// The header of a segment starting at sequence offset `seq_off`, with the ACK fields,
    /// window, timestamps and as many SACK blocks as fit; records that an ACK went out.
    fn header(
        &mut self,
        now: SimTime,
        seq_off: u64,
        mut flags: Flags,
        payload_len: usize,
    ) -> tcp::Repr {
        if self.negotiated.ecn && self.echo_ece() {
            flags = flags | Flags::ECE;
        }
        let shift = self.negotiated.recv_window_shift;
        let window = (self.advertised_window_bytes() >> shift).min(65_535) as u16;
        let timestamp = self.negotiated.timestamps.then(|| Timestamp {
            tsval: timestamp_now(now),
            tsecr: self.ts_recent,
        });
        let mut repr = tcp::Repr {
            src_port: self.local_port,
            dst_port: self.remote_port,
            seq: self.tx_space.seq(seq_off),
            ack: self.rx_space.seq(self.rcv_nxt()),
            flags,
            window,
            timestamp,
            payload_len: payload_len as u16,
            ..tcp::Repr::default()
        };
        if self.negotiated.sack && self.rcv.has_out_of_order() {
            // Options and payload must fit in the peer's MSS plus the 20-byte base header.
            let ts_len = if timestamp.is_some() {
                usize::from(TIMESTAMP_OPTION_LEN)
            } else {
                0
            };
            let room = usize::from(self.negotiated.peer_mss)
                .saturating_sub(payload_len + ts_len)
                .min(tcp::MAX_OPTIONS_LEN - ts_len);
            let fit = room.saturating_sub(4) / 8;
            self.fill_sack_blocks(&mut repr, fit);
        }
        if repr.sack_ranges[0].is_some() || !self.rcv.has_out_of_order() {
            self.sack_pending = false;
        }
        self.adv_right_edge = self.rcv.next() + (u64::from(window) << shift);
        self.note_ack_sent();
        repr
    }

    /// Bookkeeping for any segment that carries our current ACK.
    fn note_ack_sent(&mut self) {
        self.ack_now = false;
        self.unacked_bytes = 0;
        self.timers.stop(Timer::DelayedAck);
        self.last_ack_sent = self.rcv_nxt();
    }

    /// The SACK blocks of RFC 2018 §4: the block holding the newest out-of-order segment
    /// first, then the other most recently reported blocks; at most `limit`.
    fn fill_sack_blocks(&self, repr: &mut tcp::Repr, limit: usize) {
        for (n, (start, end)) in sack_blocks(&self.recent_sacks, &self.rcv, limit)
            .into_iter()
            .enumerate()
        {
            repr.sack_ranges[n] = Some((self.rx_space.seq(start + 1), self.rx_space.seq(end + 1)));
        }
    }

    /// Whether ACKs carry ECN-Echo now.
    fn echo_ece(&self) -> bool {
        if self.config.congestion_control == CongestionControl::Dctcp {
            self.ce_state
        } else {
            self.ece_latched
        }
    }

    /// The window we advertise, in bytes, rounded down to the window-scale unit.
    fn advertised_window_bytes(&self) -> u64 {
        let shift = self.negotiated.recv_window_shift;
        let max = 65_535u64 << shift;
        ((self.rcv.window() as u64).min(max) >> shift) << shift
    }

    /// RCV.NXT as an offset from the peer's ISN.
    fn rcv_nxt(&self) -> u64 {
        1 + self.rcv.next() + u64::from(self.fin_received)
    }

    /// Whether the peer's ISN is known.
    fn rx_ready(&self) -> bool {
        !matches!(self.state, State::Closed | State::Listen | State::SynSent)
    }

    /// Queue a control segment.
    fn push_control(&mut self, repr: tcp::Repr) {
        if repr.flags.contains(Flags::RST) {
            self.counters.resets_sent += 1;
        }
        self.control.push_back(Transmit {
            repr,
            payload: Vec::new(),
            ecn: Ecn::NotEct,
        });
    }

    /// The reset RFC 9293 §3.10.7.1 answers an unacceptable segment with.
    fn reply_reset(&mut self, repr: &tcp::Repr) {
        if repr.flags.contains(Flags::RST) {
            return;
        }
        let base = tcp::Repr {
            src_port: repr.dst_port,
            dst_port: repr.src_port,
            ..tcp::Repr::default()
        };
        let reset = if repr.flags.contains(Flags::ACK) {
            tcp::Repr {
                seq: repr.ack,
                flags: Flags::RST,
                ..base
            }
        } else {
            let len = u32::from(repr.payload_len)
                + u32::from(repr.flags.contains(Flags::SYN))
                + u32::from(repr.flags.contains(Flags::FIN));
            tcp::Repr {
                seq: 0,
                ack: repr.seq.wrapping_add(len),
                flags: Flags::RST | Flags::ACK,
                ..base
            }
        };
        self.push_control(reset);
    }
}

/// The timestamp clock: microseconds of simulated time, modulo 2^32.
fn timestamp_now(now: SimTime) -> u32 {
    (now.as_ps() / 1_000_000) as u32
}

/// The SACK blocks an ACK carries, as (start, end) data offsets: the ranges holding the most
/// recent out-of-order arrivals first (RFC 2018 §4), then the other out-of-order ranges,
/// highest first, up to `limit`. A range that no recent arrival names (bytes stored beyond a
/// partly filled hole) is still reported: an ACK sent while data is held out of order always
/// carries a block, so the "send SACK info" duty an ACK discharges always ends (before, it
/// could not, and `poll_transmit` emitted pure ACKs without end).
fn sack_blocks(
    recent: &[Option<u64>; tcp::MAX_SACK_BLOCKS],
    rcv: &ReceiveBuffer,
    limit: usize,
) -> Vec<(u64, u64)> {
    let limit = limit.min(tcp::MAX_SACK_BLOCKS);
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(limit);
    let recent_ranges = recent
        .iter()
        .flatten()
        .filter_map(|off| rcv.range_containing(*off));
    for r in recent_ranges.chain(rcv.ranges_from_top()) {
        if out.len() == limit {
            break;
        }
        if !out.contains(&r) {
            out.push(r);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 21 regression: out-of-order data that no recent arrival names (bytes kept beyond
    /// a partly filled hole) is still reported in a SACK block. Before, such an ACK carried
    /// none, the "SACK pending" flag never cleared, and `poll_transmit` produced pure ACKs
    /// without end (a leaf-spine TCP run grew to gigabytes inside one `tcp_output`).
    #[test]
    fn every_out_of_order_range_can_be_reported() {
        let mut rcv = ReceiveBuffer::new(1 << 20);
        rcv.insert(1000, &[1; 100]);
        rcv.insert(3000, &[2; 100]);
        let none = [None; tcp::MAX_SACK_BLOCKS];
        assert_eq!(
            sack_blocks(&none, &rcv, 3),
            [(3000, 3100), (1000, 1100)],
            "ranges no recent arrival names, highest first"
        );
        let mut recent = none;
        recent[0] = Some(1050);
        recent[1] = Some(5000); // stale: that range is gone
        assert_eq!(sack_blocks(&recent, &rcv, 3), [(1000, 1100), (3000, 3100)]);
        assert_eq!(sack_blocks(&recent, &rcv, 1), [(1000, 1100)]);
        assert!(sack_blocks(&recent, &ReceiveBuffer::new(100), 3).is_empty());
    }

    fn at_us(us: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_us(us)
    }

    /// Move every pending segment from `from` to `to` at `now`; returns how many moved.
    fn shuttle(from: &mut Connection, to: &mut Connection, now: SimTime) -> usize {
        let mut n = 0;
        while let Some(t) = from.poll_transmit(now) {
            to.handle_segment(now, &t.repr, &t.payload, t.ecn);
            n += 1;
        }
        n
    }

    fn pair(config: Config) -> (Connection, Connection) {
        let mut a = Connection::connect(config.clone(), 1, 2, 7).unwrap();
        let mut b = Connection::listen(config, 2, 9).unwrap();
        shuttle(&mut a, &mut b, at_us(0));
        shuttle(&mut b, &mut a, at_us(10));
        shuttle(&mut a, &mut b, at_us(20));
        (a, b)
    }

    #[test]
    fn loopback_handshake_and_data() {
        let (mut a, mut b) = pair(Config::default());
        assert_eq!(a.state(), State::Established);
        assert_eq!(b.state(), State::Established);
        assert_eq!(a.poll_event(), Some(Event::Connected));
        assert_eq!(b.poll_event(), Some(Event::Connected));
        assert_eq!(a.send(b"hello, world"), 12);
        assert_eq!(shuttle(&mut a, &mut b, at_us(30)), 1);
        assert_eq!(b.poll_event(), Some(Event::DataReadable));
        // One small segment waits for the delayed ACK.
        assert_eq!(shuttle(&mut b, &mut a, at_us(30)), 0);
        assert_eq!(b.timer(Timer::DelayedAck), Some(at_us(40_030)));
        let mut buf = [0; 32];
        assert_eq!(b.recv(&mut buf), 12);
        assert_eq!(&buf[..12], b"hello, world");
        // The read opens the window far beyond the 65535 bytes the SYN-ACK could announce,
        // so a window update (which also acknowledges the data) goes out at once.
        assert_eq!(shuttle(&mut b, &mut a, at_us(35)), 1);
        assert_eq!(b.timer(Timer::DelayedAck), None);
        assert_eq!(a.flight_size(), 0);
        assert_eq!(a.counters().bytes_acked, 12);
    }

    #[test]
    fn advertised_window_rounds_down_to_the_scale_unit() {
        let config = Config {
            recv_buffer: 1_000_000,
            ..Config::default()
        };
        let (mut a, mut b) = pair(config);
        assert_eq!(b.negotiated().recv_window_shift, 4);
        a.send(&[7; 1001]);
        shuttle(&mut a, &mut b, at_us(30));
        b.handle_timeout(at_us(40_030));
        let ack = b.poll_transmit(at_us(40_030)).unwrap();
        // (1_000_000 − 1001) / 16, rounded down.
        assert_eq!(ack.repr.window, 62_437);
        assert_eq!(b.adv_right_edge, 1001 + 62_437 * 16);
    }

    #[test]
    fn timestamp_clock_ticks_in_microseconds_and_wraps() {
        assert_eq!(timestamp_now(at_us(1_500_000)), 1_500_000);
        assert_eq!(timestamp_now(at_us((1 << 32) + 5)), 5);
    }

    #[test]
    fn reno_dupacks_count_as_departures() {
        let config = Config {
            sack: false,
            ..Config::default()
        };
        let (mut a, _b) = pair(config);
        a.send(&[1; 5000]);
        while a.poll_transmit(at_us(30)).is_some() {}
        let flight = a.bytes_in_flight();
        a.reno_dupacks = 2;
        assert_eq!(
            a.bytes_in_flight(),
            flight - 2 * u64::from(a.negotiated.send_mss)
        );
        a.reno_dupacks = 100;
        assert_eq!(a.bytes_in_flight(), 0);
    }
}
