//! A segment arriving in SYN-RECEIVED or a synchronized state (RFC 9293 §3.10.7.4): the
//! acceptability checks, then its data into the receive buffer, the ECN echo (RFC 3168 §6.1,
//! RFC 8257 §3.2), the SACK bookkeeping (RFC 2018 §4) and the peer's FIN.

use super::*;

impl Connection {
    // ---------------------------------------------------------------------------------------
    // Segment arrival in SYN-RECEIVED and the synchronized states (RFC 9293 §3.10.7.4).

    pub(super) fn handle_synchronized(
        &mut self,
        now: SimTime,
        repr: &tcp::Repr,
        payload: &[u8],
        ecn: Ecn,
    ) {
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
    // Receiving data.

    pub(super) fn process_data(
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
    pub(super) fn receive_ecn(&mut self, now: SimTime, flags: Flags, ecn: Ecn, has_data: bool) {
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
    pub(super) fn note_sack(&mut self, data_off: u64) {
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
    pub(super) fn check_peer_fin(&mut self, now: SimTime) {
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
}
