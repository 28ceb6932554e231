//! The ACK field of an arriving segment: what it acknowledges, the scoreboard and SACK
//! blocks it updates, loss detection (RFC 6675 IsLost, NewReno, RACK: RFC 8985 §6), entering
//! recovery, and the RTT samples it gives (RFC 6298, RFC 7323 §4).

use super::*;

impl Connection {
    // ---------------------------------------------------------------------------------------
    // Acknowledgment processing.

    /// Process the ACK field (RFC 9293 §3.10.7.4 "fifth"); returns false if the segment must
    /// be dropped (it acknowledges data never sent).
    pub(super) fn process_ack(
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
    pub(super) fn detect_losses(
        &mut self,
        now: SimTime,
        is_dup: bool,
        newly_acked: u64,
        cumulative: usize,
    ) {
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
    pub(super) fn rack_enabled(&self) -> bool {
        self.config.rack_tlp && self.negotiated.sack
    }

    /// RACK loss detection (RFC 8985 §6.2 steps 4–5) and the reorder timer.
    pub(super) fn rack_detect(&mut self, now: SimTime) {
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
    pub(super) fn enter_recovery(&mut self, now: SimTime) {
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
    pub(super) fn cwnd_limited(&self, prior_pipe: u64) -> bool {
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
    pub(super) fn sample_rtt(
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
    pub(super) fn timestamp_rtt(&self, now: SimTime, repr: &tcp::Repr) -> Option<SimDuration> {
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
    pub(super) fn echo_check(&self, repr: &tcp::Repr) -> impl Fn(SimTime) -> Option<bool> + use<> {
        let echo = if self.negotiated.timestamps {
            repr.timestamp.map(|ts| ts.tsecr)
        } else {
            None
        };
        move |t: SimTime| echo.map(|e| e.wrapping_sub(timestamp_now(t)) < 1 << 31)
    }
}
