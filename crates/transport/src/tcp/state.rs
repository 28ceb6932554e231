//! The connection states of RFC 9293 §3.3.2, and the loss-recovery states layered on ESTABLISHED.
//!
//! [`State`] is the RFC's state diagram, named and ordered as the RFC draws it (Figure 5), and
//! displays in the RFC's spelling (`SYN-SENT`, `TIME-WAIT`, ...). [`RecoveryState`] is the
//! sender's loss-recovery mode, after Linux's `TCP_CA_*` states (include/net/tcp.h): no RFC
//! names it, but RFC 5681 §3.2, RFC 6675 §5 and RFC 6298 §5 each describe one of its modes.

use core::fmt;

/// A connection state (RFC 9293 §3.3.2).
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub enum State {
    /// No connection.
    Closed,
    /// Waiting for a SYN (passive open).
    Listen,
    /// SYN sent, waiting for the matching SYN-ACK (active open).
    SynSent,
    /// SYN received and SYN-ACK sent, waiting for the ACK of the SYN-ACK.
    SynReceived,
    /// The handshake is complete; data flows both ways.
    Established,
    /// The application closed; our FIN is sent (or queued) and not yet acknowledged.
    FinWait1,
    /// Our FIN is acknowledged; waiting for the peer's FIN.
    FinWait2,
    /// The peer sent FIN; waiting for the application to close.
    CloseWait,
    /// Both sides sent FIN at once; waiting for the ACK of ours.
    Closing,
    /// The peer closed first and we sent our FIN; waiting for its ACK.
    LastAck,
    /// Both FINs are acknowledged; waiting 2·MSL so late segments die out.
    TimeWait,
}

impl State {
    /// Whether the handshake has completed and the connection has not yet closed: the
    /// "synchronized" states of RFC 9293 §3.5.
    pub const fn is_synchronized(self) -> bool {
        !matches!(
            self,
            State::Closed | State::Listen | State::SynSent | State::SynReceived
        )
    }

    /// Whether the peer may still send us data (its FIN has not been received).
    pub(crate) const fn receives_data(self) -> bool {
        matches!(
            self,
            State::SynReceived | State::Established | State::FinWait1 | State::FinWait2
        )
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            State::Closed => "CLOSED",
            State::Listen => "LISTEN",
            State::SynSent => "SYN-SENT",
            State::SynReceived => "SYN-RECEIVED",
            State::Established => "ESTABLISHED",
            State::FinWait1 => "FIN-WAIT-1",
            State::FinWait2 => "FIN-WAIT-2",
            State::CloseWait => "CLOSE-WAIT",
            State::Closing => "CLOSING",
            State::LastAck => "LAST-ACK",
            State::TimeWait => "TIME-WAIT",
        })
    }
}

/// The sender's loss-recovery mode (Linux `TCP_CA_Open/CWR/Recovery/Loss`; Linux's `Disorder`
/// is folded into `Open`).
#[derive(Clone, Copy, Debug, Default, Eq, Hash, PartialEq)]
pub enum RecoveryState {
    /// No loss or ECN reduction outstanding; the window may grow.
    #[default]
    Open,
    /// The window was cut for an ECN-Echo (RFC 3168 §6.1.2, RFC 8257 §3.3); no further cut
    /// until the data outstanding at the cut is acknowledged.
    Cwr,
    /// Fast recovery (RFC 6675 §5, or RFC 6582 without SACK) until the recovery point is
    /// acknowledged.
    Recovery,
    /// After a retransmission timeout (RFC 6298 §5, RFC 5681 §3.1): slow start from one segment,
    /// every unacknowledged segment presumed lost.
    Loss,
}

impl fmt::Display for RecoveryState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RecoveryState::Open => "open",
            RecoveryState::Cwr => "CWR",
            RecoveryState::Recovery => "recovery",
            RecoveryState::Loss => "loss",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_uses_rfc_spelling() {
        assert_eq!(State::SynSent.to_string(), "SYN-SENT");
        assert_eq!(State::SynReceived.to_string(), "SYN-RECEIVED");
        assert_eq!(State::FinWait1.to_string(), "FIN-WAIT-1");
        assert_eq!(State::CloseWait.to_string(), "CLOSE-WAIT");
        assert_eq!(State::TimeWait.to_string(), "TIME-WAIT");
        assert_eq!(State::LastAck.to_string(), "LAST-ACK");
    }

    #[test]
    fn synchronized_states() {
        assert!(!State::SynReceived.is_synchronized());
        assert!(State::Established.is_synchronized());
        assert!(State::TimeWait.is_synchronized());
        assert!(!State::CloseWait.receives_data());
        assert!(State::FinWait2.receives_data());
    }
}
