//! Per-QP transport parameters, as `modify_qp` sets them.

use units::SimDuration;

/// How the requester recovers lost packets.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub enum RetransmitMode {
    /// Classic RoCE: one NAK per gap, resend everything from the lost PSN.
    #[default]
    GoBackN,
    /// IRN-style selective repeat (Mittal et al., SIGCOMM 2018; research/figures.md §5): the
    /// responder places packets that arrive after a gap and answers each with a SACK NAK; the
    /// requester resends only what is missing, keeps at most `max_unacked_psns` (about a
    /// bandwidth-delay product) in flight, and times out after [`IRN_RTO_LOW`] when at most
    /// [`IRN_RTO_LOW_MAX_INFLIGHT`] packets are in flight, [`IRN_RTO_HIGH`] otherwise. Packets carry
    /// the placement IRN adds ([`wire::ib::irn`]).
    SelectiveRepeat,
}

/// IRN's short timeout, for when few packets are in flight (a tail loss nobody can SACK).
// source: research/figures.md §5, "IRN defaults" (Mittal et al. 2018 §3–4; recalled, conf R)
pub const IRN_RTO_LOW: SimDuration = SimDuration::from_us(100);
/// IRN's long timeout, when more packets are in flight.
// source: research/figures.md §5, "IRN defaults" (recalled, conf R)
pub const IRN_RTO_HIGH: SimDuration = SimDuration::from_us(320);
/// With at most this many packets in flight IRN uses the short timeout ("at most" is our
/// reading: figures.md records only N = 3).
// source: research/figures.md §5, "IRN defaults", N = 3 (recalled, conf R)
pub const IRN_RTO_LOW_MAX_INFLIGHT: u32 = 3;

/// The transport service a QP runs.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub enum Service {
    /// Reliable connected: ACKs, NAKs, retransmission, RNR.
    #[default]
    Rc,
    /// Unreliable connected: SEND and WRITE only, no ACK and no retransmission; a request
    /// completes when its last packet is sent; the responder drops a message with a PSN gap
    /// (or any error) silently and starts again at the next FIRST or ONLY packet
    /// (research/verbs-spec.md §4–5; rxe `check_psn`, UC branch).
    Uc,
    /// Unreliable datagram: SEND only, one packet of at most the PMTU per message (a longer
    /// one sends nothing and completes SUCCESS), each to the QP its work request names with a
    /// DETH carrying the Q_Key and the source QP; the responder drops a Q_Key mismatch or a
    /// message with no receive WQE silently (no RNR) and puts a 40-byte GRH area before the
    /// payload (research/verbs-spec.md §5, rxe's UD branches).
    Ud,
}

/// The RC connection's parameters (both directions).
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct RcConfig {
    /// This QP's number.
    pub local_qpn: u32,
    /// The remote QP's number (`dest_qp_num`).
    pub dest_qpn: u32,
    /// Path MTU in bytes: 256, 512, 1024, 2048 or 4096.
    pub pmtu: u32,
    /// First PSN this QP sends (`sq_psn`).
    pub sq_psn: u32,
    /// First PSN this QP expects (`rq_psn`).
    pub rq_psn: u32,
    /// Local ACK timeout exponent: 4.096 µs × 2^timeout; 0 waits forever. Which timeout a
    /// requester arms, first match: `ack_timeout_override`; adaptive retransmission
    /// (`adaptive_min`); selective repeat's IRN timeouts ([`IRN_RTO_LOW`], [`IRN_RTO_HIGH`],
    /// whatever `timeout` says); this static one.
    pub timeout: u8,
    /// Retries after a timeout or PSN-sequence NAK (0–7).
    pub retry_cnt: u8,
    /// Retries after an RNR NAK (0–7; 7 retries forever).
    pub rnr_retry: u8,
    /// RNR timer code this responder puts in its RNR NAKs (0–31).
    pub min_rnr_timer: u8,
    /// Outstanding READ/atomic requests this requester may have (`max_rd_atomic`).
    pub max_rd_atomic: u8,
    /// READ/atomic responder resources (`max_dest_rd_atomic`); 0 refuses them.
    pub max_dest_rd_atomic: u8,
    /// Most PSNs sent and not yet acknowledged (rxe: 128, `RXE_MAX_UNACKED_PSNS`).
    pub max_unacked_psns: u32,
    /// Set AckReq at least once per this many packets (rxe: 64, `RXE_MAX_PKT_PER_ACK`), and at
    /// least twice per `max_unacked_psns` so a small window never waits on a missing ACK.
    pub ack_req_every: u32,
    /// Recovery mode.
    pub mode: RetransmitMode,
    /// Overrides the local ACK timeout with a fixed value (before every other rule; see
    /// `timeout`).
    pub ack_timeout_override: Option<SimDuration>,
    /// RC, UC or UD.
    pub service: Service,
    /// UD: this QP's Q_Key; a datagram carrying another is dropped.
    pub qkey: u32,
    /// Adaptive retransmission (newer ConnectX firmware, research/figures.md §5): the timeout
    /// follows the measured round trip, SRTT + 4·RTTVAR, never below this floor (NVIDIA's
    /// minimum base timeout is 4 µs), doubling on each timeout in a row and capped at the
    /// static 4.096 µs × 2^timeout. `None`: the static timeout.
    pub adaptive_min: Option<SimDuration>,
}

impl Default for RcConfig {
    /// pyverbs' defaults (research/verbs-spec.md §5: MTU 1024, timeout 14, retry_cnt 7,
    /// rnr_retry 7, min_rnr_timer 12, max_rd_atomic 1) with a 4096 MTU.
    fn default() -> Self {
        RcConfig {
            local_qpn: 0x11,
            dest_qpn: 0x12,
            pmtu: 4096,
            sq_psn: 0,
            rq_psn: 0,
            timeout: 14,
            retry_cnt: 7,
            rnr_retry: 7,
            min_rnr_timer: 12,
            max_rd_atomic: 1,
            max_dest_rd_atomic: 1,
            max_unacked_psns: 1 << 22,
            ack_req_every: 64,
            mode: RetransmitMode::GoBackN,
            ack_timeout_override: None,
            adaptive_min: None,
            service: Service::Rc,
            qkey: 0,
        }
    }
}

impl RcConfig {
    /// The local ACK timeout, or `None` for "wait forever" (timeout 0).
    /// source: research/verbs-spec.md §5, "timeout = 4.096 * 2 ^ attr->timeout \[us\]".
    pub fn ack_timeout(&self) -> Option<SimDuration> {
        if let Some(d) = self.ack_timeout_override {
            return Some(d);
        }
        if self.timeout == 0 {
            return None;
        }
        // 4.096 µs = 4,096,000 ps; timeout ≤ 31 keeps this below 2^64.
        Some(SimDuration::from_ps(4_096_000u64 << self.timeout.min(31)))
    }
}
