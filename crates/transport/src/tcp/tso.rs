//! TSO deferral: when the windows let only a small piece of a large write go out, wait for the
//! ACK that is about to arrive and send one large super-segment instead of a small one now.
//!
//! Linux does this in `tcp_tso_should_defer` (net/ipv4/tcp_output.c, called from
//! `tcp_write_xmit` for a queued skb of more than one MSS). Without it, an ACK-clocked sender
//! whose buffer holds more than the congestion window sends one small TSO super-segment per
//! ACK, and pays the stack's per-segment transmit cost for each: a larger send buffer then
//! measured slower than a smaller one (model-fidelity issue, item 4). The rule, in the order
//! the kernel applies it (each "send" ends the test):
//!
//! 1. in loss recovery (`icsk_ca_state >= TCP_CA_Recovery`): send;
//! 2. nothing was sent for a jiffy (`tcp_jiffies32 != lsndtime`): send, so an idle connection
//!    is not made burstier;
//! 3. `limit = min(send window, cwnd − in flight)`: a full super-segment fits: send;
//! 4. a third (`tcp_tso_win_divisor`, default 3) of `min(peer window, cwnd)` fits: send;
//! 5. nothing is in flight, or the oldest unacknowledged segment's ACK is due later than
//!    `min(srtt / 2, 1 ms)` from now (the 2025 form, upstream 295ce1eb36ae "tcp: fix
//!    tcp_tso_should_defer() vs large RTT"): send;
//! 6. otherwise defer — when the window cuts the data short, and also when all of it fits but
//!    more may still be written (an application-limited tail), unless it ends in a FIN.
//!
//! Simplifications: the kernel's skb is the unsent byte stream here, so its "middle of the
//! queue" test (an skb followed by another one that fits entirely) is covered by rule 3; the
//! segment sizes are the connection's MSS; MSG_EOR is not modelled.

use units::{SimDuration, SimTime};

/// A jiffy at `CONFIG_HZ=1000`, ps. Assumption: distributions build with HZ = 250 or 1000; the
/// rule it feeds (rule 2) only matters for a connection idle that long.
pub const JIFFY: SimDuration = SimDuration::from_ms(1);

/// Linux's default `net.ipv4.tcp_tso_win_divisor` (Documentation/networking/ip-sysctl.rst).
pub const DEFAULT_WIN_DIVISOR: u32 = 3;

/// Deferral settings of a connection whose host segments in the NIC.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct TsoDefer {
    /// The largest super-segment the stack builds, bytes (`gso_max_size`, 64 KiB by default).
    pub max_bytes: u32,
    /// `tcp_tso_win_divisor`: send once this fraction of a window is available. Allowed 1..=64.
    pub win_divisor: u32,
}

/// What the sender knows when it is about to send new data of more than one MSS.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Outlook {
    pub now: SimTime,
    /// Loss recovery or a timeout is in progress.
    pub recovering: bool,
    /// When data last left (Linux `lsndtime`).
    pub last_data_sent: SimTime,
    /// Bytes the peer's window still allows past SND.NXT.
    pub send_win: u64,
    /// Bytes the congestion window still allows (cwnd − pipe).
    pub cong_win: u64,
    /// The peer's whole window and the whole congestion window, bytes.
    pub peer_wnd: u64,
    pub cwnd: u64,
    /// Unsent bytes waiting (at most one super-segment is looked at).
    pub unsent: u64,
    /// The unsent data ends in a FIN.
    pub fin: bool,
    /// When the oldest unacknowledged segment was sent, if any is in flight.
    pub oldest_in_flight: Option<SimTime>,
    pub srtt: Option<SimDuration>,
}

impl TsoDefer {
    /// Whether to hold the new data back until the next ACK (rules 1–6 above).
    pub(crate) fn should_defer(&self, o: &Outlook) -> bool {
        if o.recovering || o.now >= o.last_data_sent + JIFFY {
            return false;
        }
        let max = u64::from(self.max_bytes);
        let limit = o.send_win.min(o.cong_win);
        if limit >= max {
            return false;
        }
        let chunk = o.peer_wnd.min(o.cwnd) / u64::from(self.win_divisor);
        if limit >= chunk {
            return false;
        }
        let (Some(head), Some(srtt)) = (o.oldest_in_flight, o.srtt) else {
            return false;
        };
        let expected_ack = head + srtt;
        let threshold =
            SimDuration::from_ps((srtt.as_ps() / 2).min(SimDuration::from_ms(1).as_ps()));
        if expected_ack > o.now + threshold {
            return false;
        }
        let skb = o.unsent.min(max);
        if o.cong_win < o.send_win {
            if o.cong_win <= skb {
                return true;
            }
        } else if o.send_win <= skb {
            return true;
        }
        !o.fin
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: TsoDefer = TsoDefer {
        max_bytes: 65_536,
        win_divisor: 3,
    };

    /// An ACK-clocked bulk sender: a 1 MB window in flight, 16 KB of it just freed, the oldest
    /// segment sent 9 µs into a 10 µs RTT.
    fn bulk() -> Outlook {
        Outlook {
            now: at_us(100),
            recovering: false,
            last_data_sent: at_us(99),
            send_win: 4 << 20,
            cong_win: 16_000,
            peer_wnd: 6 << 20,
            cwnd: 1 << 20,
            unsent: 2 << 20,
            fin: false,
            oldest_in_flight: Some(at_us(91)),
            srtt: Some(SimDuration::from_us(10)),
        }
    }

    fn at_us(us: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_us(us)
    }

    fn at_ms(ms: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_ms(ms)
    }

    #[test]
    fn a_small_ack_clocked_piece_waits_for_the_next_ack() {
        assert!(T.should_defer(&bulk()));
    }

    #[test]
    fn a_full_super_segment_or_a_third_of_the_window_goes_now() {
        assert!(!T.should_defer(&Outlook {
            cong_win: 65_536,
            ..bulk()
        }));
        // cwnd 96 KB: a third is 32 KB, and 40 KB is free.
        assert!(!T.should_defer(&Outlook {
            cwnd: 96_000,
            cong_win: 40_000,
            ..bulk()
        }));
    }

    #[test]
    fn a_late_ack_recovery_or_an_idle_connection_sends_now() {
        // The oldest segment left 1 µs ago: its ACK is 9 µs away, more than srtt/2.
        assert!(!T.should_defer(&Outlook {
            oldest_in_flight: Some(at_us(99)),
            ..bulk()
        }));
        // A long RTT: the ACK is due in 1.5 ms, beyond the 1 ms cap.
        assert!(!T.should_defer(&Outlook {
            now: at_ms(10),
            last_data_sent: at_ms(10),
            oldest_in_flight: Some(at_ms(7)),
            srtt: Some(SimDuration::from_ms(4) + SimDuration::from_us(500)),
            ..bulk()
        }));
        assert!(!T.should_defer(&Outlook {
            recovering: true,
            ..bulk()
        }));
        // Nothing sent for a jiffy (1 ms): the ACK is due, but an idle sender sends.
        assert!(!T.should_defer(&Outlook {
            now: at_us(1100),
            oldest_in_flight: Some(at_us(1091)),
            ..bulk()
        }));
        assert!(!T.should_defer(&Outlook {
            oldest_in_flight: None,
            ..bulk()
        }));
    }

    #[test]
    fn a_tail_that_fits_waits_for_more_data_unless_it_ends_in_fin() {
        let tail = Outlook {
            unsent: 8_000,
            ..bulk()
        };
        assert!(T.should_defer(&tail));
        assert!(!T.should_defer(&Outlook { fin: true, ..tail }));
    }
}
