//! What theory predicts for a lossy stream, from the run's own measurements.
//!
//! Lesson ⑤ claims that go-back-N RoCE and SACK TCP lose throughput to random loss in
//! different ways. The report does not just show the two retentions: it puts each beside the
//! textbook model of its transport, fed with what this run measured over the same window, so
//! a learner can see *why* each path keeps what it keeps (and the test suite can check that
//! the simulator behaves like the theory says it should).
//!
//! - **go-back-N** (RoCE RC): every loss event throws away the packets in flight behind the
//!   lost one, so a packet slot carries new data with efficiency
//!   η = (1 − p) / (1 + (W − 1)·p), with p the loss events per packet and W the packets in
//!   flight (source: research/figures.md §5, "GBN analytic goodput"; it assumes an ideal NAK
//!   and no timeouts). A loss nobody NAKs (the last packet of a burst, or the NAK itself: the
//!   responder NAKs a sequence error only once) leaves the requester idle until its local
//!   ACK timer fires, so the prediction also takes out the measured time spent waiting for
//!   timeouts: retention ≈ η × (1 − wait / window).
//! - **selective repeat** (RoCE RC with `rdma.retransmission = "selective"`, IRN): only the
//!   lost packets go again, so a packet slot carries new data with efficiency 1 − p, p the
//!   share of packets sent that were resends, again without the time spent waiting for
//!   timeouts (a lost resend or a lost tail is found only by IRN's timer).
//! - **Mathis** (TCP): rate ≈ (MSS / RTT) × C / √p with p the congestion signals per packet
//!   (source: research/figures.md §5, Mathis et al., CCR 1997), capped at the loss-free rate,
//!   and likewise without the time spent waiting for retransmission timeouts (the formula has
//!   no timeouts; Padhye's extension adds them). C = √(3/2): the paper's C is √(3/(2b)) with b
//!   the packets one congestion-window increment waits for, and the model's congestion
//!   control, like Linux's, grows the window per byte acknowledged (RFC 3465 byte counting),
//!   so delayed ACKs and GRO, which make one ACK cover many packets, do not slow its growth:
//!   b = 1. (CUBIC at data-centre RTTs runs in its Reno-friendly region, whose rate is Reno's
//!   by design.)
//!
//! Every input is a difference of the transports' counters read at the window's start and
//! end: nothing here is a constant of the model.

use serde::Serialize;
use transport::roce::requester::RequesterCounters;
use transport::tcp::Counters;

/// One path's loss model, its inputs over the throughput window and, once the loss-free
/// baseline is known, its prediction.
#[derive(Clone, Debug, Serialize)]
pub struct LossModel {
    /// `"go-back-N"` or `"selective repeat"` (RDMA), or `"Mathis"` (TCP).
    pub model: &'static str,
    /// Data packets first sent in the window (TCP: payload bytes sent ÷ MSS).
    pub packets: u64,
    /// Loss events in the window: go-back-N's sequence NAKs plus ACK timeouts; selective
    /// repeat's packets resent; TCP's fast recoveries, RTOs and losses repaired by a tail-loss
    /// probe (each one a congestion-window cut).
    pub loss_events: u64,
    /// p in the formulas: `loss_events ÷ packets`; for selective repeat, packets resent ÷
    /// (packets + resent), the share of transmissions that were lost.
    pub loss_rate: f64,
    /// Timeouts in the window (RDMA local ACK timeouts, TCP RTOs).
    pub timeouts: u64,
    /// Time the sender sat idle waiting for those timeouts (and for one still pending when
    /// the window ended), ns.
    pub timeout_wait_ns: f64,
    /// go-back-N: mean packets in flight when a packet was first sent (W).
    pub inflight_packets: Option<f64>,
    /// Mathis: mean RTT sample, ns.
    pub rtt_ns: Option<f64>,
    /// Mathis: the sender's MSS, bytes.
    pub mss_bytes: Option<u64>,
    /// Throughput the model predicts, Gb/s (needs the loss-free baseline).
    pub predicted_gbps: Option<f64>,
    /// `predicted_gbps ÷ baseline`: the retention the model predicts.
    pub predicted_retention: Option<f64>,
    /// Measured throughput ÷ predicted: 1 when the simulator does what the theory says.
    pub measured_over_predicted: Option<f64>,
}

fn ratio(num: u64, den: u64) -> f64 {
    if den == 0 {
        0.0
    } else {
        num as f64 / den as f64
    }
}

impl LossModel {
    /// go-back-N over a window: the requester's counters at its start and end, the wait for a
    /// timeout still pending at the end (ps), and the window's length (ps).
    pub fn go_back_n(
        start: &RequesterCounters,
        end: &RequesterCounters,
        pending_wait_ps: u64,
        window_ps: u64,
    ) -> LossModel {
        let packets = end.first_transmissions - start.first_transmissions;
        let timeouts = end.timeouts - start.timeouts;
        let loss_events = end.sequence_naks - start.sequence_naks + timeouts;
        let wait = (end.timeout_wait_ps - start.timeout_wait_ps + pending_wait_ps).min(window_ps);
        LossModel {
            model: "go-back-N",
            packets,
            loss_events,
            loss_rate: ratio(loss_events, packets),
            timeouts,
            timeout_wait_ns: wait as f64 / 1e3,
            inflight_packets: (packets > 0)
                .then(|| ratio(end.inflight_sum - start.inflight_sum, packets)),
            rtt_ns: None,
            mss_bytes: None,
            predicted_gbps: None,
            predicted_retention: None,
            measured_over_predicted: None,
        }
    }

    /// Selective repeat over a window, with [`LossModel::go_back_n`]'s arguments: p is the
    /// share of packets sent in the window that were resends.
    pub fn selective_repeat(
        start: &RequesterCounters,
        end: &RequesterCounters,
        pending_wait_ps: u64,
        window_ps: u64,
    ) -> LossModel {
        let mut m = LossModel::go_back_n(start, end, pending_wait_ps, window_ps);
        let resent = end.packets_retransmitted - start.packets_retransmitted;
        m.model = "selective repeat";
        m.loss_events = resent;
        m.loss_rate = ratio(resent, m.packets + resent);
        m.inflight_packets = None;
        m
    }

    /// Mathis over a window: the sender's counters at its start and end, the sender's MSS,
    /// and the window's length (ps).
    pub fn mathis(sender: (&Counters, &Counters), mss: u64, window_ps: u64) -> LossModel {
        let (s0, s1) = sender;
        let packets = (s1.bytes_sent - s0.bytes_sent).div_ceil(mss.max(1));
        let timeouts = s1.rtos - s0.rtos;
        let loss_events = (s1.fast_recoveries - s0.fast_recoveries)
            + timeouts
            + (s1.tlp_recoveries - s0.tlp_recoveries);
        let samples = s1.rtt_samples - s0.rtt_samples;
        let wait = (s1.rto_wait_ps - s0.rto_wait_ps).min(window_ps);
        LossModel {
            model: "Mathis",
            packets,
            loss_events,
            loss_rate: ratio(loss_events, packets),
            timeouts,
            timeout_wait_ns: wait as f64 / 1e3,
            inflight_packets: None,
            rtt_ns: (samples > 0).then(|| ratio(s1.rtt_sum_ps - s0.rtt_sum_ps, samples) / 1e3),
            mss_bytes: Some(mss),
            predicted_gbps: None,
            predicted_retention: None,
            measured_over_predicted: None,
        }
    }

    /// go-back-N's efficiency η = (1 − p) / (1 + (W − 1)·p).
    pub fn go_back_n_efficiency(p: f64, w: f64) -> f64 {
        (1.0 - p) / (1.0 + (w - 1.0).max(0.0) * p)
    }

    /// Mathis's rate in Gb/s: (MSS / RTT) × √(3 / (2·p)).
    pub fn mathis_gbps(mss: u64, rtt_ns: f64, p: f64) -> f64 {
        mss as f64 * 8.0 / rtt_ns * (3.0 / (2.0 * p)).sqrt()
    }

    /// Fills the prediction from the loss-free throughput, the measured one and the window
    /// (ns). Without loss events the model predicts the baseline (less any timeout wait).
    pub fn predict(&mut self, baseline_gbps: f64, measured_gbps: f64, window_ns: f64) {
        self.predict_within(baseline_gbps, 1.0, measured_gbps, window_ns);
    }

    /// [`LossModel::predict`] when cross traffic leaves the path only `ceiling` (0..=1) of
    /// its loss-free rate: the models work from that capacity.
    pub fn predict_within(
        &mut self,
        baseline_gbps: f64,
        ceiling: f64,
        measured_gbps: f64,
        window_ns: f64,
    ) {
        let capacity = baseline_gbps * ceiling.clamp(0.0, 1.0);
        let busy = if window_ns > 0.0 {
            (1.0 - self.timeout_wait_ns / window_ns).max(0.0)
        } else {
            1.0
        };
        let p = self.loss_rate;
        let while_sending = match (self.model, self.inflight_packets) {
            ("go-back-N", Some(w)) => capacity * Self::go_back_n_efficiency(p, w),
            ("selective repeat", _) => capacity * (1.0 - p),
            ("Mathis", _) if p > 0.0 => match (self.mss_bytes, self.rtt_ns) {
                (Some(mss), Some(rtt)) if rtt > 0.0 => Self::mathis_gbps(mss, rtt, p).min(capacity),
                _ => return,
            },
            _ => capacity,
        };
        let predicted = while_sending * busy;
        self.predicted_gbps = Some(predicted);
        self.predicted_retention = (baseline_gbps > 0.0).then(|| predicted / baseline_gbps);
        self.measured_over_predicted = (predicted > 0.0).then(|| measured_gbps / predicted);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_back_n_efficiency_matches_the_textbook_table() {
        // research/figures.md §5: W = 30 → 0.997 / 0.971 / 0.77 at p = 1e-4 / 1e-3 / 1e-2;
        // W = 120 → 0.988 / 0.893 / 0.45.
        let cases = [
            (30.0, 1e-4, 0.997),
            (30.0, 1e-3, 0.971),
            (30.0, 1e-2, 0.77),
            (120.0, 1e-4, 0.988),
            (120.0, 1e-3, 0.893),
            (120.0, 1e-2, 0.45),
        ];
        for (w, p, want) in cases {
            let got = LossModel::go_back_n_efficiency(p, w);
            assert!((got - want).abs() < 0.006, "W {w} p {p}: {got} vs {want}");
        }
        assert_eq!(LossModel::go_back_n_efficiency(0.0, 50.0), 1.0);
    }

    #[test]
    fn mathis_gives_the_classic_figure() {
        // MSS 1460 B, RTT 100 ms, p = 1e-4: 1460·8/0.1 × √15000 ≈ 14.3 Mb/s.
        let g = LossModel::mathis_gbps(1460, 100e6, 1e-4);
        assert!((g * 1e3 - 14.3).abs() < 0.1, "{g}");
        // Four times the loss, half the rate.
        let q = LossModel::mathis_gbps(1460, 100e6, 4e-4);
        assert!((g / q - 2.0).abs() < 1e-12);
    }

    fn req(first: u64, inflight: u64, naks: u64, timeouts: u64, wait_ps: u64) -> RequesterCounters {
        RequesterCounters {
            first_transmissions: first,
            inflight_sum: inflight,
            sequence_naks: naks,
            timeouts,
            timeout_wait_ps: wait_ps,
            ..RequesterCounters::default()
        }
    }

    #[test]
    fn go_back_n_reads_the_window_and_takes_out_timeout_waits() {
        let a = req(100, 1_000, 1, 0, 0);
        // 1000 packets with 20 in flight, 9 NAKs + 1 timeout that idled 100 µs; 200 µs more
        // pending at the end of a 1 ms window.
        let b = req(1_100, 21_000, 10, 1, 100_000_000);
        let mut m = LossModel::go_back_n(&a, &b, 200_000_000, 1_000_000_000);
        assert_eq!((m.packets, m.loss_events, m.timeouts), (1_000, 10, 1));
        assert_eq!(m.inflight_packets, Some(20.0));
        assert_eq!(m.timeout_wait_ns, 300_000.0);
        m.predict(100.0, 50.0, 1e6);
        let eta = 0.99 / (1.0 + 19.0 * 0.01);
        let want = 100.0 * eta * 0.7;
        assert!((m.predicted_gbps.unwrap() - want).abs() < 1e-9);
        assert!((m.predicted_retention.unwrap() - want / 100.0).abs() < 1e-12);
        assert!((m.measured_over_predicted.unwrap() - 50.0 / want).abs() < 1e-12);
        // A wait longer than the window predicts nothing delivered, not a negative rate.
        let mut s = LossModel::go_back_n(&a, &b, 5_000_000_000, 1_000_000_000);
        s.predict(100.0, 0.0, 1e6);
        assert_eq!(s.predicted_gbps, Some(0.0));
        assert_eq!(s.measured_over_predicted, None);
    }

    #[test]
    fn mathis_reads_rtt_and_loss_from_the_window_and_caps_at_the_baseline() {
        let s0 = Counters::default();
        let s1 = Counters {
            bytes_sent: 1448 * 10_000,
            fast_recoveries: 90,
            rtos: 5,
            tlp_recoveries: 5,
            rtt_samples: 4,
            rtt_sum_ps: 4 * 20_000_000,
            rto_wait_ps: 2_000_000_000,
            ..Counters::default()
        };
        let mut m = LossModel::mathis((&s0, &s1), 1448, 10_000_000_000);
        assert_eq!((m.packets, m.loss_events, m.timeouts), (10_000, 100, 5));
        assert_eq!(m.rtt_ns, Some(20_000.0));
        m.predict(100.0, 2.0, 10e6);
        let rate = 1448.0 * 8.0 / 20_000.0 * (3.0f64 / (2.0 * 0.01)).sqrt();
        assert!(
            (m.predicted_gbps.unwrap() - rate * 0.8).abs() < 1e-9,
            "{m:?}"
        );
        // A loss rate so low the formula exceeds the loss-free rate: the baseline caps it.
        m.predict(1.0, 1.0, 10e6);
        assert!((m.predicted_gbps.unwrap() - 0.8).abs() < 1e-12);
    }
}
