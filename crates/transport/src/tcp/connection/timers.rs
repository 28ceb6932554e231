//! What each timer does when it fires: retransmission timeout (RFC 6298 §5), tail loss
//! probe (RFC 8985 §7), persist, delayed ACK and TIME-WAIT.

use super::*;

impl Connection {
    // ---------------------------------------------------------------------------------------
    // Timers.

    pub(super) fn on_timer(&mut self, now: SimTime, timer: Timer) {
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
    pub(super) fn on_retransmission_timeout(&mut self, now: SimTime) {
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
    pub(super) fn schedule_loss_probe(&mut self, now: SimTime) {
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

    pub(super) fn persist_interval(&self) -> SimDuration {
        self.rtt
            .base_rto()
            .checked_mul(1 << self.persist_backoff.min(32))
            .unwrap_or(SimDuration::MAX)
            .min(self.config.max_rto)
    }

    /// Nothing in flight, data waiting, and the peer's window too small to send it.
    pub(super) fn window_blocked(&self) -> bool {
        if !self.board.is_empty() || self.unsent_bytes() == 0 {
            return false;
        }
        let usable = (self.snd_una + self.snd_wnd).saturating_sub(self.snd_nxt);
        usable < self.unsent_bytes().min(u64::from(self.negotiated.send_mss))
    }

    pub(super) fn enter_time_wait(&mut self, now: SimTime) {
        self.state = State::TimeWait;
        self.timers.stop_all();
        self.timers
            .set(Timer::TimeWait, now + self.config.time_wait);
    }

    pub(super) fn enter_closed(&mut self, event: Event) {
        self.state = State::Closed;
        self.timers.stop_all();
        self.tlp_pending = false;
        self.probe_pending = false;
        self.syn_pending = false;
        self.events.push_back(event);
    }
}
