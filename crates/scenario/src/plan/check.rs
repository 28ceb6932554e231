//! The rules that tie a plan's keys together: `Plan::check` refuses a combination that cannot
//! run (two hosts on a back-to-back cable, an odd fat-tree `k`, ...) and a key that cannot apply
//! where it is set, each as a [`Conflict`] naming both keys and the [`Rule`](crate::rule::Rule)
//! broken. Each key's own range is checked on input, by the schema (`plan.rs`).

use super::*;

/// A combination of values that each pass their own range but not together.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Conflict {
    /// The key blamed.
    pub key: &'static str,
    /// Its value.
    pub value: String,
    /// What is allowed given the other keys (`why`'s English).
    pub allowed: String,
    /// `allowed` as a rule id and its arguments, for a reader in another language.
    pub why: Why,
    /// The other key involved.
    pub other: &'static str,
    /// True when the value is refused because the key cannot apply in this context (a key
    /// that needs a switch on a `back_to_back` cable, ...): `allowed` then says why.
    pub inapplicable: bool,
}

impl Plan {
    /// Checks the rules that tie keys together (each key's own range is checked on input).
    pub fn check(&self) -> Result<(), Conflict> {
        let c = |key, value: &dyn ToString, why: Why, other| {
            Err(Conflict {
                key,
                value: value.to_string(),
                allowed: why.text(),
                why,
                other,
                inapplicable: false,
            })
        };
        if self.topology.kind == TopologyKind::BackToBack && self.topology.hosts != 2 {
            return c(
                "topology.hosts",
                &self.topology.hosts,
                Why::new(Rule::BackToBackHosts),
                "topology.kind",
            );
        }
        if self.topology.kind == TopologyKind::FatTree && !self.topology.k.is_multiple_of(2) {
            return c(
                "topology.k",
                &self.topology.k,
                Why::new(Rule::FatTreeKEven),
                "topology.kind",
            );
        }
        let per_leaf = self.topology.hosts_per_leaf.max(1);
        if self.topology.kind == TopologyKind::LeafSpine
            && !self.topology.hosts.is_multiple_of(per_leaf)
        {
            return c(
                "topology.hosts_per_leaf",
                &per_leaf,
                Why::new(Rule::HostsPerLeafDivides).arg("hosts", self.topology.hosts),
                "topology.hosts",
            );
        }
        let fleet = matches!(
            self.workload.pattern,
            Pattern::Permutation | Pattern::Matrix
        );
        if fleet && self.topology.kind != TopologyKind::FatTree {
            return c(
                "workload.pattern",
                &format!("{:?}", self.workload.pattern.name()),
                Why::new(Rule::FleetNeedsFatTree),
                "topology.kind",
            );
        }
        if self.workload.pattern == Pattern::Matrix && self.workload.matrix.is_empty() {
            return c(
                "workload.matrix",
                &"\"\"",
                Why::new(Rule::MatrixNeedsFile),
                "workload.pattern",
            );
        }
        if (1..576).contains(&self.switch.mtu_bytes) {
            return c(
                "switch.mtu_bytes",
                &self.switch.mtu_bytes,
                Why::new(Rule::SwitchMtu),
                "switch.mtu_bytes",
            );
        }
        if self.switch.ecn_kmin_bytes > self.switch.ecn_kmax_bytes {
            return c(
                "switch.ecn_kmin_bytes",
                &self.switch.ecn_kmin_bytes,
                Why::new(Rule::EcnKminAboveKmax).arg("kmax", self.switch.ecn_kmax_bytes),
                "switch.ecn_kmax_bytes",
            );
        }
        // Derived thresholds are checked only where they act (PFC on); given ones always, so a
        // preset may carry them with PFC off, ready for `--set lossless.enabled=true`.
        let pfc = self.pfc_thresholds();
        let derived = self.lossless.xoff_bytes == Auto::Auto;
        let checked =
            self.lossless.enabled || !derived || matches!(self.lossless.xon_bytes, Auto::Fixed(_));
        // With XOFF "auto" the reason also says how it was derived and how to choose another.
        let (xon_rule, xoff_rule) = if derived {
            (Rule::XonAboveAutoXoff, Rule::AutoXoffNotBelowBuffer)
        } else {
            (Rule::XonAboveXoff, Rule::XoffNotBelowBuffer)
        };
        if checked && pfc.xon_bytes > pfc.xoff_bytes {
            return c(
                "lossless.xon_bytes",
                &pfc.xon_bytes,
                Why::new(xon_rule).arg("xoff", pfc.xoff_bytes),
                "lossless.xoff_bytes",
            );
        }
        if checked && pfc.xoff_bytes >= self.switch.buffer_bytes {
            return c(
                "lossless.xoff_bytes",
                &pfc.xoff_bytes,
                Why::new(xoff_rule).arg("buffer", self.switch.buffer_bytes),
                "switch.buffer_bytes",
            );
        }
        let ct = &self.cross_traffic;
        if ct.burst_bytes > 0 {
            if self.workload.stream_us == 0 {
                return c(
                    "cross_traffic.burst_bytes",
                    &ct.burst_bytes,
                    Why::new(Rule::CrossNeedsStream),
                    "workload.stream_us",
                );
            }
            if self.topology.kind != TopologyKind::Switch {
                return c(
                    "cross_traffic.burst_bytes",
                    &ct.burst_bytes,
                    Why::new(Rule::CrossNeedsSwitch).arg("kind", self.topology.kind.name()),
                    "topology.kind",
                );
            }
            if self.topology.hosts < 2 + ct.senders {
                return c(
                    "topology.hosts",
                    &self.topology.hosts,
                    Why::new(Rule::CrossNeedsHosts)
                        .arg("hosts", 2 + ct.senders)
                        .arg("senders", ct.senders),
                    "cross_traffic.senders",
                );
            }
            let bursts = self.workload.stream_us.div_ceil(ct.period_us);
            if ct
                .burst_bytes
                .saturating_mul(ct.senders)
                .saturating_mul(bursts)
                > MAX_TOTAL_BYTES
            {
                return c(
                    "cross_traffic.burst_bytes",
                    &ct.burst_bytes,
                    Why::new(Rule::CrossTotalBytes)
                        .arg("max", MAX_TOTAL_BYTES / ct.senders / bursts)
                        .arg("senders", ct.senders)
                        .arg("bursts", bursts),
                    "cross_traffic.senders",
                );
            }
            if bursts > MAX_BURSTS {
                return c(
                    "cross_traffic.period_us",
                    &ct.period_us,
                    Why::new(Rule::CrossTooManyBursts)
                        .arg("min", self.workload.stream_us.div_ceil(MAX_BURSTS))
                        .arg("stream", self.workload.stream_us)
                        .arg("max_bursts", MAX_BURSTS),
                    "workload.stream_us",
                );
            }
        }
        match (self.rdma.qp_type, self.rdma.operation) {
            (QpKind::Ud, Operation::Write | Operation::Read) => {
                return c(
                    "rdma.operation",
                    &format!("{:?}", self.rdma.operation.name()),
                    Why::new(Rule::UdSendOnly),
                    "rdma.qp_type",
                );
            }
            (QpKind::Uc, Operation::Read) => {
                return c(
                    "rdma.operation",
                    &"\"read\"",
                    Why::new(Rule::UcNoRead),
                    "rdma.qp_type",
                );
            }
            _ => {}
        }
        if self.rdma.qp_type == QpKind::Ud && self.workload.message_bytes > self.rdma.mtu_bytes {
            return c(
                "workload.message_bytes",
                &self.workload.message_bytes,
                Why::new(Rule::UdMessageAboveMtu).arg("mtu", self.rdma.mtu_bytes),
                "rdma.qp_type",
            );
        }
        if self.rdma.dcqcn && !self.switch.ecn {
            return c(
                "rdma.dcqcn",
                &true,
                Why::new(Rule::DcqcnNeedsEcn),
                "switch.ecn",
            );
        }
        if self.tcp.congestion_control == Congestion::Dctcp && !self.tcp.ecn {
            return c(
                "tcp.congestion_control",
                &"\"dctcp\"",
                Why::new(Rule::DctcpNeedsEcn),
                "tcp.ecn",
            );
        }
        if self.workload.stream_us == 0
            && self
                .workload
                .message_bytes
                .saturating_mul(self.workload.messages)
                > MAX_TOTAL_BYTES
        {
            return c(
                "workload.messages",
                &self.workload.messages,
                Why::new(Rule::TotalBytes)
                    .arg("max", MAX_TOTAL_BYTES / self.workload.message_bytes)
                    .arg("bytes", self.workload.message_bytes),
                "workload.message_bytes",
            );
        }
        self.check_applicable()
    }

    /// No silent knobs: a key set to anything but its default where it cannot change the run
    /// is refused, naming the key that makes it meaningless. Defaults always pass, because the
    /// presets state every key explicitly.
    fn check_applicable(&self) -> Result<(), Conflict> {
        let d = Plan::default();
        for k in KEYS {
            if get(self, k.path) == get(&d, k.path) {
                continue;
            }
            if let Some((other, why)) = self.inapplicable(k.path) {
                let why = Why::new(Rule::LeaveDefault).arg("why", why).arg(
                    "default",
                    get(&d, k.path).map_or_else(String::new, |v| v.to_toml()),
                );
                return Err(Conflict {
                    key: k.path,
                    value: get(self, k.path).map_or_else(String::new, |v| v.to_toml()),
                    allowed: why.text(),
                    why,
                    other,
                    inapplicable: true,
                });
            }
        }
        Ok(())
    }

    /// Hosts the pair pattern uses: 0 and 1, and one per cross-traffic sender.
    fn pair_hosts(&self) -> u64 {
        let senders = if self.cross_traffic.burst_bytes > 0 {
            self.cross_traffic.senders
        } else {
            0
        };
        2 + senders
    }

    /// Why `path` cannot change a run of this plan, and the key that decides it, if so.
    fn inapplicable(&self, path: &'static str) -> Option<(&'static str, Why)> {
        let kind = self.topology.kind;
        let (table, _) = path.split_once('.').unwrap_or(("", path));
        let why = |rule| Why::new(rule).arg("key", path);
        // Without a switch nothing queues, marks, drops by congestion or sends PAUSE.
        let needs_switch = matches!(path, "loss.congestion_drop" | "lossless.enabled");
        if kind == TopologyKind::BackToBack && (table == "switch" || needs_switch) {
            return Some(("topology.kind", why(Rule::NeedsSwitch)));
        }
        // A path that does not run reads none of its keys: the RDMA path's setup exchange
        // and the permutation's flows use no [tcp] setting, the TCP path no [rdma] one.
        let paths = self.workload.paths;
        let pattern = self.workload.pattern;
        let quoted = format!("{:?}", pattern.name());
        if table == "tcp" && matches!(pattern, Pattern::Permutation | Pattern::Matrix) {
            return Some((
                "workload.pattern",
                why(Rule::FleetRunsNoTcp).arg("pattern", quoted),
            ));
        }
        if path == "workload.matrix" && pattern != Pattern::Matrix {
            return Some((
                "workload.pattern",
                Why::new(Rule::MatrixOnly).arg("pattern", quoted),
            ));
        }
        // The matrix gives every flow's size; message_bytes would be silently ignored.
        if path == "workload.message_bytes" && pattern == Pattern::Matrix {
            return Some(("workload.pattern", Why::new(Rule::MatrixGivesSizes)));
        }
        if table == "tcp" && paths == Paths::Rdma {
            return Some(("workload.paths", why(Rule::RdmaOnly)));
        }
        if table == "rdma" && paths == Paths::Tcp {
            return Some(("workload.paths", why(Rule::TcpOnly)));
        }
        if table == "collective" && self.workload.pattern != Pattern::Collective {
            return Some(("workload.pattern", why(Rule::NeedsCollective)));
        }
        let found = match path {
            "topology.spines" | "topology.spine_gbps" | "topology.hosts_per_leaf"
                if kind != TopologyKind::LeafSpine =>
            {
                (
                    "topology.kind",
                    why(Rule::NeedsLeafSpine).arg("kind", kind.name()),
                )
            }
            "topology.k" if kind != TopologyKind::FatTree => (
                "topology.kind",
                Why::new(Rule::KNeedsFatTree).arg("kind", kind.name()),
            ),
            "topology.hosts" if kind == TopologyKind::FatTree => {
                ("topology.kind", Why::new(Rule::FatTreeHosts))
            }
            "topology.hosts"
                if self.workload.pattern == Pattern::Pair
                    && self.topology.hosts > self.pair_hosts() =>
            {
                (
                    "workload.pattern",
                    Why::new(Rule::PairHosts)
                        .arg("used", self.pair_hosts())
                        .arg("hosts", self.topology.hosts),
                )
            }
            "switch.ecmp_hash" if kind == TopologyKind::Switch => {
                ("topology.kind", Why::new(Rule::EcmpOneSwitch))
            }
            "switch.ecn_kmin_bytes"
            | "switch.ecn_kmax_bytes"
            | "switch.ecn_pmax"
            | "switch.ecn_on_dequeue"
                if !self.switch.ecn =>
            {
                ("switch.ecn", why(Rule::NeedsEcn))
            }
            // Not `lossless.xoff_bytes` / `xon_bytes`: preset ⑤ sets them with PFC off, ready
            // for its hands-on step `--set lossless.enabled=true`.
            "switch.pfc_watchdog_us" if !self.lossless.enabled => {
                ("lossless.enabled", Why::new(Rule::WatchdogNeedsPfc))
            }
            "rdma.dcqcn_profile" if !self.rdma.dcqcn => {
                ("rdma.dcqcn", Why::new(Rule::ProfileNeedsDcqcn))
            }
            "cross_traffic.period_us" | "cross_traffic.senders"
                if self.cross_traffic.burst_bytes == 0 =>
            {
                ("cross_traffic.burst_bytes", why(Rule::NeedsBursts))
            }
            _ => return None,
        };
        Some(found)
    }
}
