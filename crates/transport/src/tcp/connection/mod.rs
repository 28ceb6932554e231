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

mod ack;
mod arrival;
mod handshake;
mod timers;
mod transmit;

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
