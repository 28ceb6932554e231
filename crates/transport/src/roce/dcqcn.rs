//! DCQCN: the rate control RoCE NICs run on ECN marks (Zhu et al., "Congestion Control for
//! Large-Scale RDMA Deployments", SIGCOMM 2015; research/figures.md §6).
//!
//! Three parties: a switch marks ECN-capable packets CE as its queue grows (RED between Kmin
//! and Kmax, in the fabric); the receiving NIC, the **notification point** ([`Np`]), answers a
//! marked packet with a CNP to the sending QP, at most one per QP per `cnp_interval`; the
//! sending NIC, the **reaction point** ([`Rp`]), keeps per QP a current rate Rc, a target rate
//! Rt and α, the estimate of how congested the path is:
//!
//! - **Cut**, on a CNP (at most once per `rate_reduce_period`): Rt ← Rc, Rc ← Rc·(1 − α/2)
//!   (never below `min_dec_factor` of Rc, nor below `min_rate`), and the increase stages
//!   restart.
//! - **α**, every `alpha_period`: α ← (1 − g)·α + g if a CNP came in the period, else
//!   α ← (1 − g)·α. The first CNP sets α to `initial_alpha`.
//! - **Increase**, each time the timer (`timer`) or the byte counter (`byte_counter` bytes
//!   sent) fires, counting stages T and BC since the last cut: while both are below F it is
//!   *fast recovery*, Rc ← (Rt + Rc)/2; once one reaches F, *additive increase* Rt += R_AI
//!   first; once both do, *hyper increase* Rt += i·R_HAI with i = min(T, BC) − F + 1. Rt and
//!   Rc never exceed the line rate.
//!
//! The NIC paces each QP's packets at Rc: a packet of L bytes on the wire lets the next one
//! go L·8/Rc later ([`Rp::on_sent`]).
//!
//! Arithmetic is integer so results do not depend on libm or on float rounding: rates in
//! kbit/s, α in units of 2⁻²⁰ (1.0 = 1 048 576), g as a fraction.
//!
//! Simplifications: the RP paces a QP's requests, not its READ responses; α's cut coefficient
//! is the paper's 1/2 (the firmware's RPG_GD parameter is not modelled); no CLAMP_TGT_RATE.

use units::{SimDuration, SimTime};

/// α's scale: 1.0.
pub const ALPHA_ONE: u64 = 1 << 20;

/// One DCQCN parameter set (NP and RP).
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct DcqcnParams {
    /// Profile name, for reports.
    pub name: &'static str,
    /// NP: least time between two CNPs for one QP.
    pub cnp_interval: SimDuration,
    /// RP: α gain g as numerator / denominator.
    pub g: (u64, u64),
    /// RP: α update period.
    pub alpha_period: SimDuration,
    /// RP: α set by the first CNP (units of 2⁻²⁰).
    pub initial_alpha: u64,
    /// RP: least time between two rate cuts.
    pub rate_reduce_period: SimDuration,
    /// RP: a cut keeps at least this share of Rc, percent.
    pub min_dec_factor_pct: u64,
    /// RP: the rate never goes below this, kbit/s.
    pub min_rate_kbps: u64,
    /// RP: rate-increase timer.
    pub timer: SimDuration,
    /// RP: rate-increase byte counter, bytes.
    pub byte_counter: u64,
    /// RP: stages of fast recovery before additive increase (F).
    pub f: u32,
    /// RP: additive increase step, kbit/s.
    pub ai_kbps: u64,
    /// RP: hyper increase step, kbit/s.
    pub hai_kbps: u64,
}

impl DcqcnParams {
    /// The 2015 paper's parameters.
    /// source: research/figures.md §6.2, Zhu et al., SIGCOMM 2015 (g 1/256, CNP interval
    /// 50 µs, α and rate-increase timer 55 µs, byte counter 10 MB, F 5, R_AI 40 Mb/s; conf R),
    /// corroborated by HPCC's `dcqcn_paper` (rate-decrease interval 50 µs) and htsim (CNP
    /// interval 50 µs, update 55 µs). Not in the paper's list as recorded there: R_HAI, set
    /// to 10 × R_AI, the ratio both NVIDIA firmware (5 / 50 Mb/s, §6.1) and HPCC-sim (§6.2)
    /// use; the minimum rate, 1 Gb/s as HPCC-sim has it (§6.2); α starts at 1 (htsim).
    pub const PAPER: DcqcnParams = DcqcnParams {
        name: "dcqcn-2015",
        cnp_interval: SimDuration::from_us(50),
        g: (1, 256),
        alpha_period: SimDuration::from_us(55),
        initial_alpha: ALPHA_ONE,
        rate_reduce_period: SimDuration::from_us(50),
        min_dec_factor_pct: 50,
        min_rate_kbps: 1_000_000,
        timer: SimDuration::from_us(55),
        byte_counter: 10_000_000,
        f: 5,
        ai_kbps: 40_000,
        hai_kbps: 400_000,
    };

    /// Current NVIDIA firmware defaults (ConnectX-4 and later).
    /// source: research/figures.md §6.1, NVIDIA DOCA "DCQCN CC Parameters" and an `mlxconfig
    /// -q` dump: DCE_TCP_G 1019 (g = 5/1024), DCE_TCP_RTT 1 µs, INITIAL_ALPHA_VALUE 1023,
    /// RATE_REDUCE_MONITOR_PERIOD 4 µs, RPG_MIN_DEC_FAC 50%, RPG_MIN_RATE 1 Mb/s,
    /// RPG_TIME_RESET 300 µs, RPG_BYTE_RESET 32767 B, RPG_THRESHOLD 1, RPG_AI_RATE 5 Mb/s,
    /// RPG_HAI_RATE 50 Mb/s, MIN_TIME_BETWEEN_CNPS 4 µs.
    pub const NVIDIA: DcqcnParams = DcqcnParams {
        name: "nvidia",
        cnp_interval: SimDuration::from_us(4),
        g: (5, 1024),
        alpha_period: SimDuration::from_us(1),
        initial_alpha: 1023 * ALPHA_ONE / 1024,
        rate_reduce_period: SimDuration::from_us(4),
        min_dec_factor_pct: 50,
        min_rate_kbps: 1_000,
        timer: SimDuration::from_us(300),
        byte_counter: 32_767,
        f: 1,
        ai_kbps: 5_000,
        hai_kbps: 50_000,
    };
}

/// The notification point of one QP: when a marked packet may be answered with a CNP.
#[derive(Clone, Copy, Debug, Default)]
pub struct Np {
    last_cnp: Option<SimTime>,
    /// CNPs sent.
    pub cnps_sent: u64,
    /// Marked packets received.
    pub marked: u64,
}

impl Np {
    /// A CE-marked packet arrived at `now`: whether to send a CNP (at most one per
    /// `params.cnp_interval`).
    pub fn on_marked(&mut self, now: SimTime, params: &DcqcnParams) -> bool {
        self.marked += 1;
        if self
            .last_cnp
            .is_some_and(|t| now.saturating_duration_since(t) < params.cnp_interval)
        {
            return false;
        }
        self.last_cnp = Some(now);
        self.cnps_sent += 1;
        true
    }
}

/// Counters of a reaction point.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub struct RpCounters {
    /// CNPs received (mlx5 `rp_cnp_handled`).
    pub cnps: u64,
    /// Rate cuts made (a CNP within `rate_reduce_period` of the last cut makes none).
    pub cuts: u64,
    /// Increase events by kind: fast recovery, additive, hyper.
    pub increases: [u64; 3],
}

/// A change of a reaction point's rate, for the trace.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct RateEvent {
    /// "cut", "fast recovery", "additive increase" or "hyper increase".
    pub cause: &'static str,
    /// Rc after the change, kbit/s.
    pub rate_kbps: u64,
    /// Rt after the change, kbit/s.
    pub target_kbps: u64,
    /// α (units of 2⁻²⁰).
    pub alpha: u64,
}

/// The reaction point of one QP: its rate and the pacing of its packets.
#[derive(Clone, Debug)]
pub struct Rp {
    params: DcqcnParams,
    line_kbps: u64,
    rc: u64,
    rt: u64,
    alpha: u64,
    cnp_in_period: bool,
    last_cut: Option<SimTime>,
    /// Timer stages (T) and byte-counter stages (BC) since the last cut.
    t_stages: u32,
    bc_stages: u32,
    bytes_since: u64,
    next_alpha: Option<SimTime>,
    next_increase: Option<SimTime>,
    next_send: SimTime,
    counters: RpCounters,
    changes: std::collections::VecDeque<RateEvent>,
}

impl Rp {
    /// A reaction point at line rate `line_kbps`, not yet throttled.
    pub fn new(params: DcqcnParams, line_kbps: u64) -> Rp {
        Rp {
            params,
            line_kbps,
            rc: line_kbps,
            rt: line_kbps,
            alpha: params.initial_alpha,
            cnp_in_period: false,
            last_cut: None,
            t_stages: 0,
            bc_stages: 0,
            bytes_since: 0,
            next_alpha: None,
            next_increase: None,
            next_send: SimTime::ZERO,
            counters: RpCounters::default(),
            changes: std::collections::VecDeque::new(),
        }
    }

    /// The parameters.
    pub fn params(&self) -> &DcqcnParams {
        &self.params
    }
    /// Current rate Rc, kbit/s.
    pub fn rate_kbps(&self) -> u64 {
        self.rc
    }
    /// Target rate Rt, kbit/s.
    pub fn target_kbps(&self) -> u64 {
        self.rt
    }
    /// α in units of 2⁻²⁰.
    pub fn alpha(&self) -> u64 {
        self.alpha
    }
    /// Counters so far.
    pub fn counters(&self) -> RpCounters {
        self.counters
    }
    /// The next rate change not yet taken.
    pub fn poll_change(&mut self) -> Option<RateEvent> {
        self.changes.pop_front()
    }

    fn changed(&mut self, cause: &'static str) {
        if self.changes.len() < 1024 {
            self.changes.push_back(RateEvent {
                cause,
                rate_kbps: self.rc,
                target_kbps: self.rt,
                alpha: self.alpha,
            });
        }
    }

    /// When the next packet may leave.
    pub fn next_send(&self) -> SimTime {
        self.next_send
    }

    /// The next timer deadline (α update or rate increase), while throttled.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        match (self.next_alpha, self.next_increase) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// A CNP arrived.
    pub fn on_cnp(&mut self, now: SimTime) {
        self.counters.cnps += 1;
        if self.next_alpha.is_none() {
            // Idle until now: the first CNP of an episode starts from the initial α.
            self.alpha = self.params.initial_alpha;
            self.next_alpha = Some(now + self.params.alpha_period);
        }
        self.cnp_in_period = true;
        if self
            .last_cut
            .is_some_and(|t| now.saturating_duration_since(t) < self.params.rate_reduce_period)
        {
            return;
        }
        self.last_cut = Some(now);
        self.counters.cuts += 1;
        self.rt = self.rc;
        // Rc·(1 − α/2), and never below min_dec_factor of Rc.
        let keep = (2 * ALPHA_ONE - self.alpha.min(ALPHA_ONE))
            .max(2 * ALPHA_ONE * self.params.min_dec_factor_pct / 100);
        self.rc = (self.rc as u128 * keep as u128 / (2 * ALPHA_ONE) as u128) as u64;
        self.rc = self.rc.max(self.params.min_rate_kbps).min(self.line_kbps);
        self.t_stages = 0;
        self.bc_stages = 0;
        self.bytes_since = 0;
        self.next_increase = Some(now + self.params.timer);
        self.changed("cut");
    }

    /// A packet of `wire_bytes` (on the wire) left at `now`: counts toward the byte counter and
    /// sets when the next may leave.
    pub fn on_sent(&mut self, now: SimTime, wire_bytes: u64) {
        let gap_ps = (wire_bytes as u128 * 8 * 1_000_000_000 / self.rc.max(1) as u128) as u64;
        self.next_send = now.max(self.next_send) + SimDuration::from_ps(gap_ps);
        if self.next_increase.is_none() {
            return; // at line rate: nothing to recover
        }
        self.bytes_since += wire_bytes;
        while self.bytes_since >= self.params.byte_counter && self.next_increase.is_some() {
            self.bytes_since -= self.params.byte_counter;
            self.bc_stages += 1;
            self.increase();
        }
    }

    /// Handles expired timers at `now`.
    pub fn handle_timeout(&mut self, now: SimTime) {
        if let Some(t) = self.next_alpha
            && t <= now
        {
            let (num, den) = self.params.g;
            let target = if self.cnp_in_period { ALPHA_ONE } else { 0 };
            // α ← (1 − g)·α + g·[CNP in the period].
            self.alpha = (self.alpha * (den - num) + target * num) / den;
            self.cnp_in_period = false;
            self.next_alpha = Some(t + self.params.alpha_period);
        }
        if let Some(t) = self.next_increase
            && t <= now
        {
            self.t_stages += 1;
            self.increase();
            // Unless that increase reached line rate (which stops the timer).
            if self.next_increase.is_some() {
                self.next_increase = Some(t + self.params.timer);
            }
        }
        // Fully recovered and α decayed away: stop the timers until the next CNP.
        if self.rc >= self.line_kbps && self.alpha == 0 {
            self.next_alpha = None;
            self.next_increase = None;
        }
    }

    fn increase(&mut self) {
        let f = self.params.f;
        let (t, bc) = (self.t_stages, self.bc_stages);
        let cause = if t.max(bc) < f {
            self.counters.increases[0] += 1;
            "fast recovery"
        } else if t.min(bc) < f {
            self.rt += self.params.ai_kbps;
            self.counters.increases[1] += 1;
            "additive increase"
        } else {
            let i = (t.min(bc) - f + 1) as u64;
            self.rt += i * self.params.hai_kbps;
            self.counters.increases[2] += 1;
            "hyper increase"
        };
        self.rt = self.rt.min(self.line_kbps);
        self.rc = (self.rt + self.rc).div_ceil(2).min(self.line_kbps);
        self.changed(cause);
        if self.rc >= self.line_kbps {
            // Back at line rate: the increase timer has nothing more to do.
            self.next_increase = None;
            self.t_stages = 0;
            self.bc_stages = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: u64 = 100_000_000; // 100 Gb/s in kbit/s

    #[test]
    fn np_spaces_cnps_per_qp() {
        let p = DcqcnParams::NVIDIA;
        let mut np = Np::default();
        let at = |ns: u64| SimTime::from_ps(ns * 1_000);
        assert!(np.on_marked(at(0), &p));
        assert!(!np.on_marked(at(3_999), &p), "within 4 µs");
        assert!(np.on_marked(at(4_000), &p));
        assert_eq!((np.marked, np.cnps_sent), (3, 2));
    }

    #[test]
    fn first_cut_halves_with_alpha_one_then_fast_recovery_halves_the_gap() {
        let p = DcqcnParams::PAPER;
        let mut rp = Rp::new(p, LINE);
        rp.on_cnp(SimTime::ZERO);
        assert_eq!(rp.rate_kbps(), LINE / 2, "α = 1: Rc·(1 − 1/2)");
        assert_eq!(rp.target_kbps(), LINE);
        // A second CNP within the 50 µs reduce period makes no cut.
        rp.on_cnp(SimTime::from_ps(10_000_000));
        assert_eq!((rp.rate_kbps(), rp.counters().cuts), (LINE / 2, 1));
        // α after one period with a CNP: (1 − 1/256)·1 + 1/256 = 1.
        rp.handle_timeout(SimTime::ZERO + p.alpha_period);
        assert_eq!(rp.alpha(), ALPHA_ONE);
        // The increase timer (55 µs) fires: fast recovery, Rc = (Rt + Rc)/2.
        rp.handle_timeout(SimTime::ZERO + p.timer);
        assert_eq!(rp.rate_kbps(), 3 * LINE / 4);
        // Without CNPs α decays by (1 − g) per period.
        let a = rp.alpha();
        rp.handle_timeout(SimTime::ZERO + p.alpha_period * 2);
        assert_eq!(rp.alpha(), a * 255 / 256);
    }

    #[test]
    fn stages_go_fast_additive_then_hyper_and_stop_at_line_rate() {
        let p = DcqcnParams::NVIDIA; // F = 1
        let mut rp = Rp::new(p, LINE);
        rp.on_cnp(SimTime::ZERO);
        let cut = rp.rate_kbps();
        assert!((LINE / 2..LINE).contains(&cut), "{cut}");
        // Timer stage 1 (T = 1 ≥ F, BC = 0 < F): additive (Rt is already the line rate; the
        // step itself is checked in `additive_increase_raises_the_target_by_r_ai`).
        let t1 = SimTime::ZERO + p.timer;
        rp.handle_timeout(t1);
        assert_eq!(rp.counters().increases, [0, 1, 0]);
        assert_eq!(rp.target_kbps(), LINE, "Rt capped at the line rate");
        // Byte-counter stage: BC = 1, T = 1: hyper.
        rp.on_sent(t1, p.byte_counter);
        assert_eq!(rp.counters().increases, [0, 1, 1]);
        // Pacing: a 4 KiB frame at Rc takes 4096·8/Rc.
        let before = rp.next_send();
        rp.on_sent(before, 4096);
        let gap = rp.next_send() - before;
        assert_eq!(gap.as_ps(), 4096 * 8 * 1_000_000_000 / rp.rate_kbps());
        // Enough increases bring Rc back to the line rate, and the timers stop.
        let mut now = t1;
        for _ in 0..64 {
            now += p.timer;
            rp.handle_timeout(now);
        }
        assert_eq!(rp.rate_kbps(), LINE);
        // At line rate neither the timer nor the byte counter records another increase.
        let done = rp.counters().increases;
        rp.on_sent(now, 10 * p.byte_counter);
        for _ in 0..8 {
            now += p.timer;
            rp.handle_timeout(now);
        }
        assert_eq!(rp.counters().increases, done, "no increase at line rate");
        for _ in 0..20_000 {
            match rp.poll_timeout() {
                Some(t) => rp.handle_timeout(t),
                None => break,
            }
        }
        assert_eq!(rp.poll_timeout(), None, "idle once recovered and α decayed");
    }

    #[test]
    fn additive_increase_raises_the_target_by_r_ai() {
        let p = DcqcnParams::NVIDIA; // F = 1, R_AI = 5 Mb/s
        let mut rp = Rp::new(p, LINE);
        rp.on_cnp(SimTime::ZERO);
        // A second cut one reduce period later: Rt ← the first cut's rate, below the line.
        let t = SimTime::ZERO + p.rate_reduce_period;
        rp.on_cnp(t);
        let rt = rp.target_kbps();
        assert!(rt < LINE, "{rt}");
        // The timer's first stage (T = 1 ≥ F, BC = 0 < F) is additive.
        rp.handle_timeout(t + p.timer);
        assert_eq!(rp.counters().increases, [0, 1, 0]);
        assert_eq!(rp.target_kbps(), rt + p.ai_kbps);
    }

    #[test]
    fn rate_never_below_the_minimum() {
        let p = DcqcnParams::NVIDIA;
        let mut rp = Rp::new(p, LINE);
        let mut now = SimTime::ZERO;
        for _ in 0..200 {
            rp.on_cnp(now);
            now += p.rate_reduce_period;
        }
        assert_eq!(rp.rate_kbps(), p.min_rate_kbps);
    }
}
