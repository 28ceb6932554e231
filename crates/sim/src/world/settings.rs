//! The world's settings between runs: the priorities RoCE and CNPs travel in, a host's GID
//! table and the index its applications use, the RC QPs' loss recovery (go-back-N or
//! selective repeat, adaptive retransmission) and DCQCN, raw cross-traffic flows, a stalled
//! host; and what they read back (DCQCN's state, the notification point's counters). Each
//! applies to the QPs that reach RTR or RTS from then on, as a NIC's firmware setting does,
//! so these are calls on the world rather than per-QP attributes.

use super::HostIx;
use super::rdma_tx::port_rate;
use super::{ADAPTIVE_RETRANSMISSION_MIN, World, WorldError};
use fabric::packet::host_ip;
use transport::roce::dcqcn::{self, DcqcnParams};
use units::{FlowId, Priority, SimTime};
use verbs::QpNum;

impl World {
    /// Sends RoCE frames in priority `p` (a scenario's `lossless.priority`: PFC protects the
    /// priority RoCE really uses only when the two agree).
    pub fn set_roce_priority(&mut self, p: Priority) {
        self.each_state(|s| s.roce_priority = p);
    }

    /// The priority RoCE frames travel in.
    pub fn roce_priority(&self) -> Priority {
        self.state.roce_priority
    }

    /// Sends CNPs in priority `p`: where the switches classify the CNPs' DSCP (NVIDIA's
    /// `CNP_DSCP`, 48 by default) or PCP. The model carries the priority a switch's map gives,
    /// not the DSCP: a CNP marked with a DSCP the switch maps to a lossy class is a CNP in
    /// that class's priority here.
    pub fn set_cnp_priority(&mut self, p: Priority) {
        self.each_state(|s| s.cnp_priority = p);
    }

    /// Gives host `h`'s port a GID table (`gids`, index order), as
    /// [`verbs::types::GidEntry::linux_table`] builds it: from then on an address vector's
    /// `sgid_index` picks its entry, whose address family must match the destination GID's
    /// at RTR and whose type decides the encapsulation (RoCE v1 frames are not IP).
    pub fn set_gid_table(&mut self, h: impl Into<HostIx>, gids: Vec<verbs::types::GidEntry>) {
        let h: HostIx = h.into();
        self.focus_host(h);
        if let Some(host) = self.state.hosts.get_mut(h.index()) {
            host.gids = gids;
        }
    }

    /// Host `h`'s GID table with Linux's layout for its one IPv4 address
    /// ([`verbs::types::GidEntry::linux_table`]): link-local v1, v2, IPv4-mapped v1, v2.
    pub fn linux_gid_table(&self, h: impl Into<HostIx>) -> Vec<verbs::types::GidEntry> {
        let h: HostIx = h.into();
        let mac = self
            .state
            .hosts
            .get(h.index())
            .map_or([0; 6], |x| fabric::capture::node_mac(x.node).0);
        verbs::types::GidEntry::linux_table(mac, host_ip(h.get()))
    }

    /// The GID index host `h`'s applications use in their address vectors (the `-g` or
    /// `gid_index` option of perftest and the course's programs); 0 unless set.
    pub fn use_sgid_index(&mut self, h: impl Into<HostIx>, index: u8) {
        let h: HostIx = h.into();
        self.focus_host(h);
        if let Some(host) = self.state.hosts.get_mut(h.index()) {
            host.sgid_index = index;
        }
    }

    /// The GID host `h` advertises and sends from: its table's entry at its `sgid_index`, or
    /// the RoCEv2 IPv4-mapped GID without a table.
    pub(super) fn local_gid(&self, h: HostIx) -> verbs::types::Gid {
        let host = &self.state_of(h).hosts[h.index()];
        host.gids
            .get(host.sgid_index as usize)
            .map_or(verbs::types::Gid::from_ipv4(host_ip(h.get())), |e| e.gid)
    }

    /// Chooses how the RC QPs that reach RTR from now on recover losses: go-back-N, or
    /// IRN-style selective repeat with at most `window` PSNs in flight (about a
    /// bandwidth-delay product; IRN's BDP cap).
    pub fn set_selective_repeat(&mut self, window: Option<u32>) {
        self.each_state(|s| s.selective_window = window.map(|w| w.max(1)));
    }

    /// Whether RC QPs recover by selective repeat.
    pub fn selective_repeat(&self) -> bool {
        self.state.selective_window.is_some()
    }

    /// Selective repeat's in-flight cap for the RC QPs that reach RTR from now on (`None`:
    /// go-back-N), so a caller that sets it for some QPs can put it back.
    pub fn selective_window(&self) -> Option<u32> {
        self.state.selective_window
    }

    /// Turns adaptive retransmission on (or off) for the RC QPs that reach RTR from now on:
    /// their ACK timeout follows the measured round trip, never below
    /// [`ADAPTIVE_RETRANSMISSION_MIN`].
    pub fn set_adaptive_retransmission(&mut self, on: bool) {
        self.each_state(|s| s.adaptive_min = on.then_some(ADAPTIVE_RETRANSMISSION_MIN));
    }

    /// Runs DCQCN with `params` on the RC QPs that reach RTS from now on (or turns it off):
    /// their NICs answer CE-marked packets with CNPs and pace each QP at its DCQCN rate. The
    /// switches must mark (an [`fabric::EcnConfig`] on the fabric) for anything to happen.
    pub fn set_dcqcn(&mut self, params: Option<DcqcnParams>) {
        self.each_state(|s| s.dcqcn = params);
    }

    /// DCQCN's parameters, if the NICs run it.
    pub fn dcqcn_params(&self) -> Option<DcqcnParams> {
        self.state.dcqcn
    }

    /// QP `qpn` of host `h`: DCQCN's rate now (kbit/s), target and α (units of 2⁻²⁰), with
    /// the reaction point's counters; `None` without DCQCN.
    pub fn dcqcn_state(
        &self,
        h: impl Into<HostIx>,
        qpn: QpNum,
    ) -> Option<(u64, u64, u64, dcqcn::RpCounters)> {
        let h: HostIx = h.into();
        let rp = self
            .state_of(h)
            .hosts
            .get(h.index())?
            .qps
            .get(&qpn.get())?
            .req
            .as_ref()?
            .reaction_point()?;
        Some((rp.rate_kbps(), rp.target_kbps(), rp.alpha(), rp.counters()))
    }

    /// QP `qpn` of host `h`: CE-marked packets received and CNPs sent (DCQCN's notification
    /// point; mlx5 `np_ecn_marked_roce_packets`, `np_cnp_sent`).
    pub fn np_counters(&self, h: impl Into<HostIx>, qpn: QpNum) -> Option<(u64, u64)> {
        let h: HostIx = h.into();
        let e = self.state_of(h).hosts.get(h.index())?.qps.get(&qpn.get())?;
        Some((e.np.marked, e.np.cnps_sent))
    }

    /// Host `h`'s NIC line rate, kbit/s (its port's link).
    pub(super) fn line_kbps(&self, h: HostIx) -> u64 {
        let s = self.state_of(h);
        port_rate(&s.fabric, s.hosts[h.index()].node).bps() / 1_000
    }

    /// Starts a raw flow of `bytes` from host `src` to host `dst` at `start` (now if that has
    /// passed): line-rate frames of `payload_mtu` bytes in `priority`, with no transport and
    /// no CPU, for cross traffic. The fabric counts what it delivered and dropped.
    pub fn add_raw_flow(
        &mut self,
        src: impl Into<HostIx>,
        dst: impl Into<HostIx>,
        bytes: u64,
        payload_mtu: u32,
        priority: Priority,
        start: SimTime,
    ) -> Result<FlowId, WorldError> {
        let (src, dst): (HostIx, HostIx) = (src.into(), dst.into());
        let node = |h: HostIx| self.state.hosts.get(h.index()).map(|x| x.node);
        let (Some(s), Some(d)) = (node(src), node(dst)) else {
            return Err(WorldError::NoHost(src.max(dst).get()));
        };
        let flow = fabric::RawFlow {
            src: s,
            dst: d,
            bytes,
            payload_mtu,
            priority,
            start,
            ecn_capable: false,
        };
        // Every partition knows every flow (its destination counts what arrives); the
        // source's starts it.
        let mut id = Ok(FlowId(0));
        self.each_state(|st| id = st.fabric.add_flow(flow));
        let id = id?;
        self.focus_host(src);
        self.state.fabric.start_flow(id, &mut self.sched);
        Ok(id)
    }

    /// From `at`, host `h` stops draining what it receives and floods PAUSE frames
    /// ([`fabric::Fabric::stall_host`]): the source of a PFC storm.
    pub fn stall_host(&mut self, h: impl Into<HostIx>, at: SimTime) -> Result<(), WorldError> {
        let h: HostIx = h.into();
        self.focus_host(h);
        let node = self.state.hosts[h.index()].node;
        self.state.fabric.stall_host(node, at, &mut self.sched)?;
        Ok(())
    }
}
