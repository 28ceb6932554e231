//! The NVMe device behind the target: a submission queue the target fills, a completion
//! queue it reaps, and media that serve a bounded number of commands at once.
//!
//! Model: each command takes a media time (read or write, fixed per command) plus its data's
//! transfer over the device's own PCIe link; `parallel_units` commands are served at once
//! (NAND dies and planes working side by side) and the rest wait in the submission queue in
//! order. Simplifications a test could observe: no read/write interference, no garbage
//! collection, no queue-depth-dependent firmware cost, every LBA costs the same (no caching).

use super::capsule::IoOpcode;
use std::collections::VecDeque;
use units::{Bandwidth, SimDuration, SimTime};

/// What the device is built from.
#[derive(Clone, Copy, Debug, Eq, PartialEq, serde::Serialize)]
pub struct DeviceConfig {
    /// Media time of one read command.
    /// assumption: 80 µs. No source in research/figures.md (§7 lists only unverified
    /// NVMe-oF claims); a TLC NAND page read is tens of µs and a datacenter TLC drive's
    /// datasheet "typical 4K random read latency" is of this order. Override with
    /// `--device-read-us`.
    #[serde(rename = "read_ps", serialize_with = "super::ser_ps")]
    pub read: SimDuration,
    /// Media time of one write command (acknowledged from the drive's power-loss-protected
    /// write buffer, not from NAND).
    /// assumption: 20 µs, the same order as the reads' datasheet class; `--device-write-us`.
    #[serde(rename = "write_ps", serialize_with = "super::ser_ps")]
    pub write: SimDuration,
    /// Commands the media serve at once.
    /// assumption: 64 (e.g. 16 dies × 4 planes); `--device-parallel`.
    pub parallel_units: u32,
    /// The device's own link to the target's memory (PCIe Gen4 x4).
    /// source: PCIe Gen4 doubles Gen3's 8 GT/s per lane; 4 lanes at 16 GT/s with 128b/130b
    /// encoding ≈ 63 Gb/s raw; as crates/host's Gen3 figure (57.88 of 62.96 Gb/s after the
    /// data link layer) scales, ≈ 57.9 Gb/s usable.
    #[serde(rename = "link_bps", serialize_with = "super::ser_bps")]
    pub link: Bandwidth,
}

impl Default for DeviceConfig {
    fn default() -> Self {
        DeviceConfig {
            read: SimDuration::from_us(80),
            write: SimDuration::from_us(20),
            parallel_units: 64,
            link: Bandwidth::mbps(57_880),
        }
    }
}

impl DeviceConfig {
    /// One command's service time with no queueing: media plus data transfer.
    pub fn service(&self, op: IoOpcode, bytes: u32) -> SimDuration {
        let media = match op {
            IoOpcode::Read => self.read,
            IoOpcode::Write => self.write,
        };
        media
            + self
                .link
                .serialization_time(units::ByteLen::new(bytes as u64))
    }
}

/// A command the device holds.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct DeviceCmd {
    /// Caller's tag (returned with the completion).
    pub tag: u64,
    /// Read or write.
    pub op: IoOpcode,
    /// Bytes.
    pub bytes: u32,
}

/// The device's queues and media, sans-IO: the caller submits commands at a time and asks
/// when the next completion is due.
#[derive(Clone, Debug)]
pub struct Device {
    cfg: DeviceConfig,
    /// Commands waiting for a free unit, in submission order.
    sq: VecDeque<(SimTime, DeviceCmd)>,
    /// Commands in service: (done at, command), kept sorted by time then tag.
    busy: Vec<(SimTime, DeviceCmd)>,
    /// Most commands ever queued or in service.
    pub peak_outstanding: usize,
    /// Commands completed.
    pub completed: u64,
}

impl Device {
    /// An idle device.
    pub fn new(cfg: DeviceConfig) -> Device {
        Device {
            cfg,
            sq: VecDeque::new(),
            busy: Vec::new(),
            peak_outstanding: 0,
            completed: 0,
        }
    }

    /// Submits `cmd` at `now` (the submission queue doorbell).
    pub fn submit(&mut self, now: SimTime, cmd: DeviceCmd) {
        self.sq.push_back((now, cmd));
        self.start(now);
        self.peak_outstanding = self.peak_outstanding.max(self.sq.len() + self.busy.len());
    }

    fn start(&mut self, now: SimTime) {
        while self.busy.len() < self.cfg.parallel_units.max(1) as usize {
            let Some((at, cmd)) = self.sq.pop_front() else {
                break;
            };
            let done = now.max(at) + self.cfg.service(cmd.op, cmd.bytes);
            let i = self
                .busy
                .partition_point(|(t, c)| (*t, c.tag) <= (done, cmd.tag));
            self.busy.insert(i, (done, cmd));
        }
    }

    /// When the next completion is due.
    pub fn next_completion(&self) -> Option<SimTime> {
        self.busy.first().map(|(t, _)| *t)
    }

    /// The completions due by `now` (the completion queue entries the target reaps).
    pub fn reap(&mut self, now: SimTime) -> Vec<(SimTime, DeviceCmd)> {
        let n = self.busy.partition_point(|(t, _)| *t <= now);
        let done: Vec<_> = self.busy.drain(..n).collect();
        self.completed += done.len() as u64;
        // A unit freed at `t` starts the next waiting command at `t`.
        for &(t, _) in &done {
            if !self.sq.is_empty() {
                self.start(t);
            }
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(units: u32) -> DeviceConfig {
        DeviceConfig {
            read: SimDuration::from_us(10),
            write: SimDuration::from_us(5),
            parallel_units: units,
            link: Bandwidth::gbps(32),
        }
    }

    #[test]
    fn one_command_takes_media_plus_transfer() {
        let c = cfg(4);
        // 4096 B at 32 Gb/s = 1.024 µs.
        assert_eq!(
            c.service(IoOpcode::Read, 4096),
            SimDuration::from_ps(11_024_000)
        );
        let mut d = Device::new(c);
        d.submit(
            SimTime::ZERO,
            DeviceCmd {
                tag: 1,
                op: IoOpcode::Read,
                bytes: 4096,
            },
        );
        assert_eq!(
            d.next_completion(),
            Some(SimTime::ZERO + c.service(IoOpcode::Read, 4096))
        );
    }

    #[test]
    fn commands_beyond_the_parallel_units_wait_their_turn() {
        let mut d = Device::new(cfg(2));
        for tag in 0..3 {
            d.submit(
                SimTime::ZERO,
                DeviceCmd {
                    tag,
                    op: IoOpcode::Write,
                    bytes: 0,
                },
            );
        }
        assert_eq!(d.peak_outstanding, 3);
        let t5 = SimTime::ZERO + SimDuration::from_us(5);
        let done = d.reap(t5);
        assert_eq!(done.iter().map(|(_, c)| c.tag).collect::<Vec<_>>(), [0, 1]);
        // The third started when a unit freed at 5 µs.
        assert_eq!(d.next_completion(), Some(t5 + SimDuration::from_us(5)));
    }
}
