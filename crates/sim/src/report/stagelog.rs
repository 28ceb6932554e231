//! What the comparison report keeps of a run's host trace, in memory that grows with the setup
//! and the first message, not with the bytes the run moves.
//!
//! The report needs two things of the host stages: per host, per phase (setup or data path)
//! and per stage, how many times a CPU stage ran and for how long (the cost rows), and the
//! individual stages of the first message (its breakdown, its drawing). Keeping every record
//! for that made memory grow with the run: a count-mode run of 1000 messages of 1 GiB passed
//! 6 GB, a 9 s RDMA stream reached 11.7 GB. [`StageLog`] folds every CPU stage into its
//! counts as it arrives and keeps the records themselves only until the runner says the first
//! message is over ([`StageLog::first_message_over`]); a stream says so as its data path
//! begins, since its report draws no message.
//!
//! For `rdmalab trace`, which writes every record, [`StageLog::with_everything`] also keeps
//! every record of any kind, up to a bound.

use engine::Stage;
use engine::trace::{ExecUnit, Observer, TraceRecord};
use std::collections::BTreeMap;
use units::{NodeId, SimDuration, SimTime};

/// Setup (before the data path began, or flagged as setup work) or data path.
#[derive(Clone, Copy, Debug, Eq, Ord, PartialEq, PartialOrd)]
pub enum Phase {
    /// Connection setup, registration, QP creation: before the data path.
    Setup,
    /// The data path.
    Data,
}

/// Runs and busy time of one CPU stage.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq)]
pub struct StageTotal {
    /// Times it ran.
    pub count: u64,
    /// Time it ran for, summed.
    pub busy: SimDuration,
}

/// One host stage, as the report reads it.
#[derive(Clone, Copy, Debug)]
pub struct Rec {
    /// The host.
    pub host: NodeId,
    /// What ran it.
    pub unit: ExecUnit,
    /// The stage.
    pub stage: Stage,
    /// Flagged as setup work.
    pub setup: bool,
    /// Start.
    pub start: SimTime,
    /// End.
    pub end: SimTime,
}

/// The observer the report attaches to a run's world (see the module doc).
#[derive(Debug, Default)]
pub struct StageLog {
    /// Every stage kept so far: the setup's and the first message's.
    kept: Vec<Rec>,
    /// Stages that start after this instant are counted, not kept.
    keep_until: Option<SimTime>,
    /// When the data path began; stages that start before it are setup.
    data_start: Option<SimTime>,
    /// Every CPU stage, counted.
    cpu: BTreeMap<(NodeId, Phase, Stage), StageTotal>,
    /// For `rdmalab trace`: every record, at most `limit` of them.
    everything: Option<(Vec<(SimTime, TraceRecord)>, usize)>,
}

impl StageLog {
    /// A log that also keeps every record, up to `limit` (the `trace` command's).
    pub fn with_everything(limit: usize) -> StageLog {
        StageLog {
            everything: Some((Vec::new(), limit)),
            ..StageLog::default()
        }
    }

    /// The data path begins now: stages that start earlier count as setup.
    pub fn data_path_begins(&mut self, at: SimTime) {
        self.data_start = Some(at);
    }

    /// The first message (or its failed attempt) ended at `end`: later stages are only
    /// counted. Records emitted later for stages that started by `end` are still kept.
    pub fn first_message_over(&mut self, end: SimTime) {
        self.keep_until = Some(end);
        self.kept.retain(|r| r.start <= end);
    }

    /// The stages kept: the setup's and the first message's, in emission order.
    pub fn kept(&self) -> &[Rec] {
        &self.kept
    }

    /// Whether `r` is setup work.
    pub fn is_setup(&self, r: &Rec) -> bool {
        r.setup || self.data_start.is_none_or(|d| r.start < d)
    }

    /// The CPU stages of host `host` in `phase`, by name.
    pub fn cpu_stages(
        &self,
        host: NodeId,
        phase: Phase,
    ) -> impl Iterator<Item = (Stage, StageTotal)> + '_ {
        // Stages order by name: the range starts at the first name.
        let first = Stage::ALL.iter().copied().min().expect("stages exist");
        self.cpu
            .range((host, phase, first)..)
            .take_while(move |((h, p, _), _)| *h == host && *p == phase)
            .map(|((_, _, name), t)| (*name, *t))
    }

    /// Every record (for `rdmalab trace`), when [`StageLog::with_everything`] asked for them.
    pub fn take_everything(&mut self) -> Vec<(SimTime, TraceRecord)> {
        self.everything
            .as_mut()
            .map(|(v, _)| std::mem::take(v))
            .unwrap_or_default()
    }
}

impl Observer for StageLog {
    fn record(&mut self, at: SimTime, rec: &TraceRecord) {
        if let Some((v, limit)) = &mut self.everything
            && v.len() < *limit
        {
            v.push((at, rec.clone()));
        }
        let TraceRecord::Stage {
            host,
            unit,
            stage,
            setup,
            start,
            end,
        } = *rec
        else {
            return;
        };
        let r = Rec {
            host,
            unit,
            stage,
            setup,
            start,
            end,
        };
        if unit.is_cpu() {
            let phase = if self.is_setup(&r) {
                Phase::Setup
            } else {
                Phase::Data
            };
            let t = self.cpu.entry((host, phase, stage)).or_default();
            t.count += 1;
            t.busy += end.saturating_duration_since(start);
        }
        if self.keep_until.is_none_or(|u| start <= u) {
            self.kept.push(r);
        }
    }

    fn held_bytes(&self) -> u64 {
        let all = self.everything.as_ref().map_or(0, |(v, _)| v.capacity());
        // A B-tree entry: its key and value plus about a third again for the nodes.
        let per_count = std::mem::size_of::<((NodeId, Phase, Stage), StageTotal)>() * 4 / 3;
        // A kept record costs what the report will need to draw it: the record, the first
        // message's list of references to it, and the drawing's interval and its merged copy.
        // Counting the record alone let a 256 MiB message at MTU 576 pass a 256 MB budget
        // and then take 1.6 GB turning its five million stages into a timeline.
        let per_kept = std::mem::size_of::<Rec>()
            + std::mem::size_of::<&Rec>()
            + 2 * std::mem::size_of::<super::Interval>();
        (self.kept.capacity() * per_kept
            + all * std::mem::size_of::<(SimTime, TraceRecord)>()
            + self.cpu.len() * per_count) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage(host: u32, stage: Stage, start_ns: u64, setup: bool) -> TraceRecord {
        TraceRecord::Stage {
            host: NodeId(host),
            unit: ExecUnit::Cpu(0),
            stage,
            setup,
            start: SimTime::from_ps(start_ns * 1000),
            end: SimTime::from_ps((start_ns + 10) * 1000),
        }
    }

    #[test]
    fn stages_after_the_first_message_are_counted_not_kept() {
        let mut log = StageLog::default();
        log.record(SimTime::ZERO, &stage(0, Stage::IoctlCreateQp, 0, true));
        log.data_path_begins(SimTime::from_ps(100_000));
        for k in 0..1000 {
            log.record(
                SimTime::ZERO,
                &stage(0, Stage::WriteEntry, 100 + 20 * k, false),
            );
            if k == 9 {
                log.first_message_over(SimTime::from_ps((100 + 20 * 9) * 1000));
            }
        }
        assert_eq!(log.kept().len(), 11, "setup and the first ten writes");
        let data: Vec<_> = log.cpu_stages(NodeId(0), Phase::Data).collect();
        assert_eq!(data.len(), 1);
        assert_eq!(data[0].0, Stage::WriteEntry);
        assert_eq!(data[0].1.count, 1000);
        assert_eq!(data[0].1.busy, SimDuration::from_ns(10_000));
        let setup: Vec<_> = log.cpu_stages(NodeId(0), Phase::Setup).collect();
        assert_eq!(setup[0].1.count, 1);
        assert_eq!(log.cpu_stages(NodeId(1), Phase::Data).count(), 0);
    }

    #[test]
    fn a_stage_before_the_data_path_is_setup_even_unflagged() {
        let mut log = StageLog::default();
        log.data_path_begins(SimTime::from_ps(100_000));
        log.record(SimTime::ZERO, &stage(1, Stage::ReadEntry, 50, false));
        assert_eq!(log.cpu_stages(NodeId(1), Phase::Setup).count(), 1);
        assert!(log.is_setup(&log.kept()[0]));
    }
}
