//! The RDMA NIC's transmit admission: how much the NIC may have between "start gathering a
//! packet" and "the packet is at the port", as a sans-IO state machine (no events, no PCIe:
//! the world asks it before polling a transport, tells it when a gather starts and when a frame
//! reaches the port).
//!
//! What a NIC does, and how it is modelled here:
//! - **Outstanding payload reads.** A packet's payload is read from host memory in PCIe read
//!   requests of at most [`host::NicTiming::max_read_request_bytes`], each holding a tag until
//!   its data is back; at most [`host::NicTiming::read_tags`] are outstanding. Many reads are
//!   in flight at once, so the read round trip is paid once per loop, not once per packet.
//! - **A transmit buffer per direction of work.** Requests (the requester's data) and responses
//!   (ACKs, NAKs, READ and atomic responses) each have their own byte budget
//!   ([`host::NicTiming::tx_buffer_bytes`]): an ACK never takes a data frame's room, nor data an
//!   ACK's, so a bidirectional run keeps both streams at line rate.
//! - **A port queue.** A frame that has passed the pipeline waits in the NIC's buffer (still
//!   holding its budget) while [`host::PORT_AHEAD_FRAMES`] frames wait at the port (PFC pause,
//!   a slow link): the MAC takes frames as it can send them, so a paused port stops the
//!   gathering through the budget.
//!
//! The pipeline itself overlaps the reads (a packet enters it when its data is back, while
//! the next packets' reads are in flight); the world times that with the PCIe model.
//! Per-QP scheduling (round robin over QPs with work, responses first) stays in the world, which
//! owns the QPs; this module only says whether there is room.

use std::collections::VecDeque;
use units::SimTime;

/// Which budget a frame uses.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum Work {
    /// A requester's packet (SEND, WRITE, READ request, atomic request).
    Request,
    /// A responder's packet (ACK, NAK, READ response, atomic response).
    Response,
}

/// One host's RDMA transmit admission.
#[derive(Clone, Debug)]
pub struct NicTx {
    /// Bytes of each budget, frame bytes: requests, responses.
    limit: u64,
    /// Frame bytes between gather and port: requests, responses.
    held: [u64; 2],
    /// PCIe read requests one packet's payload needs: `ceil(len / mrrs)`.
    mrrs: u64,
    /// Most read requests outstanding.
    tags: u64,
    /// Read requests outstanding, by when their data is back (ascending: the PCIe link returns
    /// read data in order).
    reads: VecDeque<(SimTime, u64)>,
    /// Sum of `reads`' counts.
    tags_used: u64,
    /// Frames past the pipeline waiting for the port, in order (the world's slot ids).
    ready: VecDeque<u32>,
}

impl NicTx {
    /// A NIC with `limit` frame bytes per budget, `mrrs`-byte read requests and `tags` of them.
    pub fn new(limit: u64, mrrs: u32, tags: u32) -> Self {
        NicTx {
            limit: limit.max(1),
            held: [0; 2],
            mrrs: u64::from(mrrs.max(1)),
            tags: u64::from(tags.max(1)),
            reads: VecDeque::new(),
            tags_used: 0,
            ready: VecDeque::new(),
        }
    }

    fn idx(w: Work) -> usize {
        match w {
            Work::Request => 0,
            Work::Response => 1,
        }
    }

    /// Frees the tags of reads whose data is back by `now`.
    fn retire_reads(&mut self, now: SimTime) {
        while let Some(&(at, n)) = self.reads.front() {
            if at > now {
                break;
            }
            self.reads.pop_front();
            self.tags_used -= n;
        }
    }

    /// Whether the NIC may start gathering a `w` packet at `now`. One packet may take a
    /// budget past its limit (the NIC does not know the next packet's size before it asks the
    /// QP for it); none starts once it is reached.
    pub fn has_room(&mut self, w: Work, now: SimTime) -> bool {
        self.retire_reads(now);
        self.held[Self::idx(w)] < self.limit && self.tags_used < self.tags
    }

    /// Frame `slot` has passed the pipeline: it waits for the port.
    pub fn push_ready(&mut self, slot: u32) {
        self.ready.push_back(slot);
    }

    /// The next frame the port takes, with `port_queued` frames already queued there.
    pub fn next_ready(&mut self, port_queued: usize) -> Option<u32> {
        if port_queued >= host::PORT_AHEAD_FRAMES {
            return None;
        }
        self.ready.pop_front()
    }

    /// A `w` packet of `frame_bytes` starts gathering; its payload of `read_bytes` (0: none, or
    /// inline) is read from host memory and back at `data_back`.
    pub fn start(&mut self, w: Work, frame_bytes: u64, read_bytes: u64, data_back: SimTime) {
        self.held[Self::idx(w)] += frame_bytes;
        if read_bytes > 0 {
            let n = read_bytes.div_ceil(self.mrrs);
            self.tags_used += n;
            // Reads return in order; a read that would finish before the last recorded one
            // (a shorter read after a longer) is kept in order by taking the later time.
            let at = self
                .reads
                .back()
                .map_or(data_back, |&(t, _)| t.max(data_back));
            self.reads.push_back((at, n));
        }
    }

    /// A `w` frame of `frame_bytes` reached the port (or was dropped before it).
    pub fn left(&mut self, w: Work, frame_bytes: u64) {
        let h = &mut self.held[Self::idx(w)];
        *h = h.saturating_sub(frame_bytes);
    }

    /// Bytes of each budget.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Read requests outstanding at the last check.
    pub fn reads_in_flight(&self) -> u64 {
        self.tags_used
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: SimTime = SimTime::ZERO;

    #[test]
    fn each_budget_fills_on_its_own() {
        let mut n = NicTx::new(8_000, 512, 256);
        while n.has_room(Work::Request, T0) {
            n.start(Work::Request, 4_000, 4_000, SimTime::from_ps(1));
        }
        assert_eq!(
            n.held,
            [8_000, 0],
            "two 4 kB frames fill the request budget"
        );
        assert!(
            n.has_room(Work::Response, T0),
            "an ACK does not wait for data room"
        );
        n.left(Work::Request, 4_000);
        assert!(n.has_room(Work::Request, T0));
    }

    #[test]
    fn tags_bound_reads_and_free_when_the_data_is_back() {
        let mut n = NicTx::new(1 << 30, 512, 16);
        // 4096 B is eight 512 B reads: two packets take all sixteen tags.
        n.start(Work::Request, 4_154, 4_096, SimTime::from_ps(500));
        n.start(Work::Request, 4_154, 4_096, SimTime::from_ps(600));
        assert!(!n.has_room(Work::Request, SimTime::from_ps(499)));
        assert_eq!(n.reads_in_flight(), 16);
        assert!(n.has_room(Work::Request, SimTime::from_ps(500)));
        assert_eq!(n.reads_in_flight(), 8);
    }

    #[test]
    fn frames_wait_in_order_for_the_port() {
        let mut n = NicTx::new(1 << 20, 512, 256);
        n.push_ready(7);
        n.push_ready(3);
        assert_eq!(
            n.next_ready(host::PORT_AHEAD_FRAMES),
            None,
            "the port is full"
        );
        assert_eq!(n.next_ready(0), Some(7));
        assert_eq!(n.next_ready(1), Some(3));
        assert_eq!(n.next_ready(0), None);
    }
}
