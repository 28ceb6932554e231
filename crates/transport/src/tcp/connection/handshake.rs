//! The three-way handshake: LISTEN, SYN-SENT and the SYN it sends (RFC 9293 §3.5, §3.10.7.2–3),
//! with the options both sides agree on (MSS, window scale, SACK-permitted, timestamps, ECN).

use super::*;

impl Connection {
    // ---------------------------------------------------------------------------------------
    // Handshake.

    pub(super) fn handle_listen(&mut self, repr: &tcp::Repr) {
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

    pub(super) fn handle_syn_sent(&mut self, now: SimTime, repr: &tcp::Repr) {
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
    pub(super) fn accept_syn(&mut self, repr: &tcp::Repr) {
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
    pub(super) fn established(&mut self) {
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
    pub(super) fn on_rtt_sample(&mut self, rtt: SimDuration) {
        self.counters.rtt_samples += 1;
        self.counters.rtt_sum_ps += rtt.as_ps();
        self.rtt.on_sample(rtt);
    }

    /// An RTT sample from the handshake, unless the SYN was retransmitted (Karn).
    pub(super) fn sample_syn_rtt(&mut self, now: SimTime, repr: &tcp::Repr) {
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

    pub(super) fn transmit_syn(&mut self, now: SimTime) -> Option<Transmit> {
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
}
