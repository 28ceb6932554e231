//! What `poll_transmit` sends, in order: a loss probe, retransmissions (RFC 6675 NextSeg), new
//! data within the congestion and peer windows (with TSO deferral), window probes and pure
//! ACKs; and the header every segment carries (window, SACK blocks, timestamps, ECN flags).

use super::*;

impl Connection {
    // ---------------------------------------------------------------------------------------
    // Sending.

    pub(super) fn transmit_synchronized(&mut self, now: SimTime) -> Option<Transmit> {
        if self.tlp_pending {
            self.tlp_pending = false;
            if let Some(t) = self.transmit_loss_probe(now) {
                return Some(t);
            }
        }
        // NextSeg rule 1: the oldest lost segment, while pipe < cwnd (RFC 6675 §5 step C);
        // the first one on entering recovery goes out regardless (step 4.3). Its data bytes
        // count against cwnd, as new data's do, not its FIN: a full-sized last segment with
        // the FIN is MSS + 1 in sequence space, and after a timeout (loss window: one MSS,
        // RFC 5681 §3.1) counting the FIN kept it from ever going again.
        if let Some(i) = self.board.next_to_retransmit() {
            let len = u64::from(self.board.get(i).payload_len());
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
    pub(super) fn pipe(&self) -> u64 {
        let mss = u64::from(self.negotiated.send_mss);
        let departed = (self.reno_dupacks * mss).min(self.board.pipe());
        self.board.pipe() - departed
    }

    /// Bytes written and never sent (the FIN not counted).
    pub(super) fn unsent_bytes(&self) -> u64 {
        (1 + self.send_buf.end()).saturating_sub(self.snd_nxt)
    }

    /// Sequence offset of our FIN, once the application closed.
    pub(super) fn fin_offset(&self) -> Option<u64> {
        self.fin_queued.then(|| 1 + self.send_buf.end())
    }

    /// A new segment: up to one MSS of unsent data (and the FIN after the last byte), within
    /// the peer's window and, unless `probe`, within `cwnd`.
    pub(super) fn transmit_new_data(&mut self, now: SimTime, probe: bool) -> Option<Transmit> {
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
    pub(super) fn tso_defers(
        &mut self,
        now: SimTime,
        send_win: u64,
        unsent: u64,
        fin: bool,
    ) -> bool {
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
    pub(super) fn retransmit(&mut self, now: SimTime, i: usize) -> Transmit {
        let seg = *self.board.get(i);
        self.board.on_retransmit(i, now);
        self.segment_again(now, &seg)
    }

    /// The bytes of an already-sent segment, as a retransmission.
    pub(super) fn segment_again(&mut self, now: SimTime, seg: &SentSegment) -> Transmit {
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
    pub(super) fn transmit_loss_probe(&mut self, now: SimTime) -> Option<Transmit> {
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
    pub(super) fn window_probe(&mut self, now: SimTime) -> Transmit {
        let repr = self.header(now, self.snd_una - 1, Flags::ACK, 0);
        Transmit {
            repr,
            payload: Vec::new(),
            ecn: self.control_ecn(),
        }
    }

    /// A segment with no data that acknowledges what was received.
    pub(super) fn pure_ack(&mut self, now: SimTime) -> Transmit {
        let repr = self.header(now, self.snd_nxt, Flags::ACK, 0);
        Transmit {
            repr,
            payload: Vec::new(),
            ecn: self.control_ecn(),
        }
    }

    /// ECN codepoint for segments that are not new data: Not-ECT (RFC 3168 §6.1.4–6.1.5),
    /// except under DCTCP where Linux marks every segment ECT(0).
    pub(super) fn control_ecn(&self) -> Ecn {
        if self.negotiated.ecn && self.config.congestion_control == CongestionControl::Dctcp {
            Ecn::Ect0
        } else {
            Ecn::NotEct
        }
    }

    /// The header of a segment starting at sequence offset `seq_off`, with the ACK fields,
    /// window, timestamps and as many SACK blocks as fit; records that an ACK went out.
    pub(super) fn header(
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
    pub(super) fn note_ack_sent(&mut self) {
        self.ack_now = false;
        self.unacked_bytes = 0;
        self.timers.stop(Timer::DelayedAck);
        self.last_ack_sent = self.rcv_nxt();
    }

    /// The SACK blocks of RFC 2018 §4: the block holding the newest out-of-order segment
    /// first, then the other most recently reported blocks; at most `limit`.
    pub(super) fn fill_sack_blocks(&self, repr: &mut tcp::Repr, limit: usize) {
        for (n, (start, end)) in sack_blocks(&self.recent_sacks, &self.rcv, limit)
            .into_iter()
            .enumerate()
        {
            repr.sack_ranges[n] = Some((self.rx_space.seq(start + 1), self.rx_space.seq(end + 1)));
        }
    }

    /// Whether ACKs carry ECN-Echo now.
    pub(super) fn echo_ece(&self) -> bool {
        if self.config.congestion_control == CongestionControl::Dctcp {
            self.ce_state
        } else {
            self.ece_latched
        }
    }

    /// The window we advertise, in bytes, rounded down to the window-scale unit.
    pub(super) fn advertised_window_bytes(&self) -> u64 {
        let shift = self.negotiated.recv_window_shift;
        let max = 65_535u64 << shift;
        ((self.rcv.window() as u64).min(max) >> shift) << shift
    }

    /// RCV.NXT as an offset from the peer's ISN.
    pub(super) fn rcv_nxt(&self) -> u64 {
        1 + self.rcv.next() + u64::from(self.fin_received)
    }

    /// Whether the peer's ISN is known.
    pub(super) fn rx_ready(&self) -> bool {
        !matches!(self.state, State::Closed | State::Listen | State::SynSent)
    }

    /// Queue a control segment.
    pub(super) fn push_control(&mut self, repr: tcp::Repr) {
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
    pub(super) fn reply_reset(&mut self, repr: &tcp::Repr) {
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
