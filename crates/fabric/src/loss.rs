//! Loss on links: random corruption, Gilbert–Elliott bursts and deterministic teaching rules.
//!
//! Frames lost here fail their FCS at the receiving port: they used the link (and the sender's
//! time) but never enter the next node. PFC cannot prevent any of these losses, which is the
//! point of lesson ⑤'s contrast between congestion drops and corruption.
//!
//! Order of checks for each arriving frame: the deterministic rules, then the burst model, then
//! iid corruption. Each link direction has its own random stream, so adding loss to one link
//! never changes what happens on another.

use crate::config::ConfigError;
use engine::{DropReason, Rng};
use units::{FlowId, Probability};

/// The Gilbert–Elliott two-state burst-loss model, advanced once per frame.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct GilbertElliott {
    /// Probability of moving from the good to the bad state after a frame.
    pub good_to_bad: Probability,
    /// Probability of moving from the bad back to the good state after a frame.
    pub bad_to_good: Probability,
    /// Loss probability while good (often 0).
    pub loss_good: Probability,
    /// Loss probability while bad (often 1).
    pub loss_bad: Probability,
}

impl GilbertElliott {
    /// Long-run loss rate: π_bad·loss_bad + π_good·loss_good, for reports and tests.
    pub fn mean_loss(&self) -> f64 {
        let p = self.good_to_bad.as_f64();
        let r = self.bad_to_good.as_f64();
        if p + r == 0.0 {
            return self.loss_good.as_f64();
        }
        let bad = p / (p + r);
        bad * self.loss_bad.as_f64() + (1.0 - bad) * self.loss_good.as_f64()
    }
}

/// "Drop frames `nth` .. `nth + count - 1` of flow `flow`" (1-based, counted per link direction).
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct DropRule {
    /// The flow whose frames are counted.
    pub flow: FlowId,
    /// The first frame to drop, counting from 1.
    pub nth: u64,
    /// How many consecutive frames to drop.
    pub count: u64,
}

/// All loss on one link (applied independently to each direction).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LossConfig {
    /// Independent per-frame corruption probability.
    pub corruption: Probability,
    /// Burst loss, if any.
    pub burst: Option<GilbertElliott>,
    /// Deterministic drops for teaching.
    pub rules: Vec<DropRule>,
}

impl LossConfig {
    /// True when this link never loses anything.
    pub fn is_lossless(&self) -> bool {
        self.corruption.is_zero() && self.burst.is_none() && self.rules.is_empty()
    }
    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        for r in &self.rules {
            if r.nth == 0 {
                return Err(ConfigError::new(
                    "link.loss.rules.nth",
                    0,
                    "1 or more (frames count from 1)",
                ));
            }
            if r.count == 0 {
                return Err(ConfigError::new("link.loss.rules.count", 0, "1 or more"));
            }
        }
        Ok(())
    }
}

/// The running state of one link direction's loss.
#[derive(Clone, Debug)]
pub(crate) struct LossState {
    rng: Rng,
    bad: bool,
    /// Frames seen so far per rule.
    seen: Vec<u64>,
}

impl LossState {
    pub(crate) fn new(rng: Rng, cfg: &LossConfig) -> Self {
        LossState {
            rng,
            bad: false,
            seen: vec![0; cfg.rules.len()],
        }
    }

    /// Decides the fate of one arriving frame of `flow`.
    pub(crate) fn judge(&mut self, cfg: &LossConfig, flow: FlowId) -> Option<DropReason> {
        let mut verdict = None;
        for (rule, seen) in cfg.rules.iter().zip(self.seen.iter_mut()) {
            if rule.flow == flow {
                *seen += 1;
                if *seen >= rule.nth && *seen - rule.nth < rule.count {
                    verdict = Some(DropReason::Rule);
                }
            }
        }
        if verdict.is_some() {
            return verdict;
        }
        if let Some(ge) = &cfg.burst {
            let lost = self
                .rng
                .chance(if self.bad { ge.loss_bad } else { ge.loss_good });
            self.bad = if self.bad {
                !self.rng.chance(ge.bad_to_good)
            } else {
                self.rng.chance(ge.good_to_bad)
            };
            if lost {
                return Some(DropReason::Burst);
            }
        }
        if self.rng.chance(cfg.corruption) {
            return Some(DropReason::Corruption);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::{RngStreams, StreamId};

    fn state(cfg: &LossConfig) -> LossState {
        LossState::new(RngStreams::new(1).stream(StreamId::new("loss", 0)), cfg)
    }

    #[test]
    fn nth_frame_rule() {
        let cfg = LossConfig {
            rules: vec![DropRule {
                flow: FlowId(2),
                nth: 3,
                count: 2,
            }],
            ..Default::default()
        };
        let mut s = state(&cfg);
        let got: Vec<bool> = (0..6).map(|_| s.judge(&cfg, FlowId(2)).is_some()).collect();
        assert_eq!(got, [false, false, true, true, false, false]);
        assert_eq!(s.judge(&cfg, FlowId(1)), None, "other flows untouched");
    }

    #[test]
    fn corruption_rate() {
        let cfg = LossConfig {
            corruption: Probability::from_f64(0.01).unwrap(),
            ..Default::default()
        };
        let mut s = state(&cfg);
        let n = (0..100_000)
            .filter(|_| s.judge(&cfg, FlowId(0)).is_some())
            .count();
        // Binomial(1e5, 0.01): sd ≈ 31.5; 5 sd.
        assert!((842..=1158).contains(&n), "{n}");
    }

    #[test]
    fn bursts_have_the_stationary_rate_and_cluster() {
        let ge = GilbertElliott {
            good_to_bad: Probability::from_f64(0.001).unwrap(),
            bad_to_good: Probability::from_f64(0.1).unwrap(),
            loss_good: Probability::ZERO,
            loss_bad: Probability::ONE,
        };
        let cfg = LossConfig {
            burst: Some(ge),
            ..Default::default()
        };
        let mut s = state(&cfg);
        let drops: Vec<bool> = (0..1_000_000)
            .map(|_| s.judge(&cfg, FlowId(0)).is_some())
            .collect();
        let rate = drops.iter().filter(|&&d| d).count() as f64 / drops.len() as f64;
        let expect = ge.mean_loss(); // 0.001/0.101 ≈ 0.0099
        assert!(
            (rate - expect).abs() < 0.25 * expect,
            "rate {rate} vs {expect}"
        );
        // Clustering: P(drop | previous dropped) ≈ 1 - bad_to_good = 0.9, far above the mean.
        let pairs = drops.windows(2).filter(|w| w[0]).count() as f64;
        let both = drops.windows(2).filter(|w| w[0] && w[1]).count() as f64;
        assert!(both / pairs > 0.8, "{}", both / pairs);
    }

    #[test]
    fn zero_rules_are_rejected() {
        let cfg = LossConfig {
            rules: vec![DropRule {
                flow: FlowId(0),
                nth: 0,
                count: 1,
            }],
            ..Default::default()
        };
        assert_eq!(cfg.validate().unwrap_err().field, "link.loss.rules.nth");
    }
}
