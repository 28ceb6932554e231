//! Why values that each pass their own range are refused together: every rule of
//! [`crate::Plan::check`] (a conflict) and of its "no silent knobs" check (an inapplicable key)
//! as a stable id plus arguments, so a reader in another language writes the reason from its
//! own table instead of the English (issue 19, item 7).
//!
//! Each [`Rule`] has a dotted id (`scenario.conflict.xon_above_xoff`) and an English template
//! with `{name}` placeholders; [`Why::text`] fills it in, and that text is the `allowed` the
//! CLI prints. The web lab's message table (`rdmalab::session::msg::MsgId`) carries the same
//! ids with the same templates, which its tests check against [`Rule::ALL`].

/// Declares [`Rule`] from `Variant = "id" => "English template"` lines.
macro_rules! rules {
    ($($v:ident = $id:literal => $en:literal,)*) => {
        /// One reason keys are refused together. The English template is [`Rule::en`].
        #[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
        pub enum Rule {
            $(#[doc = $en] $v,)*
        }

        impl Rule {
            /// Every rule, in declaration order.
            pub const ALL: &'static [Rule] = &[$(Rule::$v,)*];

            /// The stable dotted id.
            pub const fn id(self) -> &'static str {
                match self {
                    $(Rule::$v => $id,)*
                }
            }

            /// The English template, `{name}` marking each argument.
            pub const fn en(self) -> &'static str {
                match self {
                    $(Rule::$v => $en,)*
                }
            }
        }
    };
}

rules! {
    // ---- conflicts: what the blamed key allows given the other ----
    BackToBackHosts = "scenario.conflict.back_to_back_hosts" => "2 when topology.kind = \"back_to_back\"",
    FatTreeKEven = "scenario.conflict.fat_tree_k_even" => "an even number when topology.kind = \"fat_tree\"",
    HostsPerLeafDivides = "scenario.conflict.hosts_per_leaf_divides" => "a divisor of topology.hosts ({hosts}), so that every leaf holds as many hosts",
    FleetNeedsFatTree = "scenario.conflict.fleet_needs_fat_tree" => "\"pair\" unless topology.kind = \"fat_tree\"",
    MatrixNeedsFile = "scenario.conflict.matrix_needs_file" => "the path of a csg-htsim .cm file when workload.pattern = \"matrix\"",
    SwitchMtu = "scenario.conflict.switch_mtu" => "0 (no limit) or 576..=9216 (IPv4's smallest MTU up)",
    EcnKminAboveKmax = "scenario.conflict.ecn_kmin_above_kmax" => "at most switch.ecn_kmax_bytes ({kmax})",
    XonAboveXoff = "scenario.conflict.xon_above_xoff" => "at most lossless.xoff_bytes ({xoff})",
    XonAboveAutoXoff = "scenario.conflict.xon_above_auto_xoff" => "at most lossless.xoff_bytes ({xoff}) (XOFF \"auto\": mlx5's rule for topology.link_gbps, topology.cable_m and the port MTU; set lossless.xoff_bytes to choose another)",
    XoffNotBelowBuffer = "scenario.conflict.xoff_not_below_buffer" => "below switch.buffer_bytes ({buffer})",
    AutoXoffNotBelowBuffer = "scenario.conflict.auto_xoff_not_below_buffer" => "below switch.buffer_bytes ({buffer}) (XOFF \"auto\": mlx5's rule for topology.link_gbps, topology.cable_m and the port MTU; set lossless.xoff_bytes to choose another)",
    CrossNeedsStream = "scenario.conflict.cross_needs_stream" => "0 unless workload.stream_us > 0 (cross traffic runs beside a stream)",
    CrossNeedsSwitch = "scenario.conflict.cross_needs_switch" => "0 unless topology.kind = \"switch\" (the bursts share one switch's egress queue with the path; {kind} does not build that switch)",
    CrossNeedsHosts = "scenario.conflict.cross_needs_hosts" => "at least {hosts} on a switch with cross_traffic.senders = {senders} (hosts 0 and 1 carry the path, 2.. send the bursts)",
    CrossTotalBytes = "scenario.conflict.cross_total_bytes" => "at most {max} with {senders} sender(s) and {bursts} bursts (1 TiB in total)",
    CrossTooManyBursts = "scenario.conflict.cross_too_many_bursts" => "at least {min} µs for a {stream} µs stream (at most {max_bursts} bursts)",
    UdSendOnly = "scenario.conflict.ud_send_only" => "\"send\" when rdma.qp_type = \"ud\"",
    UcNoRead = "scenario.conflict.uc_no_read" => "\"write\" or \"send\" when rdma.qp_type = \"uc\"",
    UdMessageAboveMtu = "scenario.conflict.ud_message_above_mtu" => "at most rdma.mtu_bytes ({mtu}) when rdma.qp_type = \"ud\"",
    DcqcnNeedsEcn = "scenario.conflict.dcqcn_needs_ecn" => "false unless switch.ecn = true",
    DctcpNeedsEcn = "scenario.conflict.dctcp_needs_ecn" => "\"cubic\" or \"newreno\" unless tcp.ecn = true",
    TotalBytes = "scenario.conflict.total_bytes" => "at most {max} with {bytes}-byte messages (1 TiB in total)",

    // ---- inapplicable keys: why the key cannot change this run ----
    LeaveDefault = "scenario.inapplicable.leave_default" => "{why}; leave it at {default}",
    NeedsSwitch = "scenario.inapplicable.needs_switch" => "{key} needs a switch: topology.kind = back_to_back has none",
    FleetRunsNoTcp = "scenario.inapplicable.fleet_runs_no_tcp" => "{key} needs the TCP path: workload.pattern = {pattern} runs RDMA WRITEs only",
    MatrixOnly = "scenario.inapplicable.matrix_only" => "workload.matrix is read by workload.pattern = \"matrix\" only (this plan runs {pattern})",
    MatrixGivesSizes = "scenario.inapplicable.matrix_gives_sizes" => "workload.message_bytes: the connection matrix gives each flow's size",
    RdmaOnly = "scenario.inapplicable.rdma_only" => "{key} needs the TCP path: workload.paths = \"rdma\" runs only RDMA",
    TcpOnly = "scenario.inapplicable.tcp_only" => "{key} needs the RDMA path: workload.paths = \"tcp\" runs only TCP",
    NeedsCollective = "scenario.inapplicable.needs_collective" => "{key} needs workload.pattern = \"collective\"",
    NeedsLeafSpine = "scenario.inapplicable.needs_leaf_spine" => "{key} needs topology.kind = leaf_spine: {kind} has no spines",
    KNeedsFatTree = "scenario.inapplicable.k_needs_fat_tree" => "topology.k needs topology.kind = fat_tree: {kind} has no radix to set",
    FatTreeHosts = "scenario.inapplicable.fat_tree_hosts" => "topology.hosts does not size a fat_tree: topology.k does (k³/4 hosts)",
    PairHosts = "scenario.inapplicable.pair_hosts" => "the pair pattern uses {used} hosts (0 and 1, and one per cross-traffic sender); topology.hosts = {hosts} would leave the rest idle",
    EcmpOneSwitch = "scenario.inapplicable.ecmp_one_switch" => "switch.ecmp_hash needs equal-cost paths: topology.kind = switch has one switch",
    NeedsEcn = "scenario.inapplicable.needs_ecn" => "{key} needs switch.ecn = true: no switch marks",
    WatchdogNeedsPfc = "scenario.inapplicable.watchdog_needs_pfc" => "switch.pfc_watchdog_us needs lossless.enabled = true: nothing sends PAUSE",
    ProfileNeedsDcqcn = "scenario.inapplicable.profile_needs_dcqcn" => "rdma.dcqcn_profile needs rdma.dcqcn = true: no NIC runs DCQCN",
    NeedsBursts = "scenario.inapplicable.needs_bursts" => "{key} needs cross_traffic.burst_bytes > 0: no host bursts",
}

/// One argument of a [`Why`].
#[derive(Clone, Debug, Eq, PartialEq)]
pub enum RuleArg {
    /// A number.
    Int(u64),
    /// A key, a name or a value as the English writes it (`"matrix"`, `leaf_spine`).
    Str(String),
    /// A reason quoted inside another ([`Rule::LeaveDefault`]'s `why`).
    Why(Box<Why>),
}

impl From<u64> for RuleArg {
    fn from(n: u64) -> RuleArg {
        RuleArg::Int(n)
    }
}

impl From<&str> for RuleArg {
    fn from(s: &str) -> RuleArg {
        RuleArg::Str(s.to_string())
    }
}

impl From<String> for RuleArg {
    fn from(s: String) -> RuleArg {
        RuleArg::Str(s)
    }
}

impl From<Why> for RuleArg {
    fn from(w: Why) -> RuleArg {
        RuleArg::Why(Box::new(w))
    }
}

/// A rule and its arguments: the reason for one refusal.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Why {
    /// Which rule.
    pub rule: Rule,
    /// Its arguments by placeholder name, in the order given.
    pub args: Vec<(&'static str, RuleArg)>,
}

impl Why {
    /// A reason with no arguments yet.
    pub fn new(rule: Rule) -> Why {
        Why {
            rule,
            args: Vec::new(),
        }
    }

    /// Adds argument `name`.
    pub fn arg(mut self, name: &'static str, value: impl Into<RuleArg>) -> Why {
        self.args.push((name, value.into()));
        self
    }

    /// The reason in English: the rule's template with each `{name}` replaced (the templates
    /// have no literal braces; `tests::templates_name_their_arguments` checks).
    pub fn text(&self) -> String {
        let t = self.rule.en();
        let mut out = String::with_capacity(t.len() + 16);
        let mut rest = t;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let after = &rest[open + 1..];
            let close = after.find('}').unwrap_or(after.len());
            let name = &after[..close];
            match self.args.iter().find(|(n, _)| *n == name) {
                Some((_, RuleArg::Int(n))) => out.push_str(&n.to_string()),
                Some((_, RuleArg::Str(s))) => out.push_str(s),
                Some((_, RuleArg::Why(w))) => out.push_str(&w.text()),
                None => out.push_str(name),
            }
            rest = after.get(close + 1..).unwrap_or("");
        }
        out.push_str(rest);
        out
    }
}

/// The placeholder names of a template, in order.
pub fn placeholders(template: &str) -> Vec<&str> {
    template
        .split('{')
        .skip(1)
        .filter_map(|s| s.split_once('}').map(|(n, _)| n))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_dotted() {
        let mut seen = std::collections::BTreeSet::new();
        for r in Rule::ALL {
            assert!(seen.insert(r.id()), "{} twice", r.id());
            assert!(
                r.id().starts_with("scenario.conflict.")
                    || r.id().starts_with("scenario.inapplicable."),
                "{}",
                r.id()
            );
        }
    }

    #[test]
    fn templates_name_their_arguments() {
        for r in Rule::ALL {
            let t = r.en();
            assert_eq!(t.matches('{').count(), t.matches('}').count(), "{t}");
            for p in placeholders(t) {
                assert!(
                    !p.is_empty() && p.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                    "{}: {p:?}",
                    r.id()
                );
            }
        }
    }

    #[test]
    fn text_fills_arguments_and_nested_reasons() {
        let inner = Why::new(Rule::NeedsEcn).arg("key", "switch.ecn_pmax");
        let w = Why::new(Rule::LeaveDefault)
            .arg("why", inner)
            .arg("default", "0.2");
        assert_eq!(
            w.text(),
            "switch.ecn_pmax needs switch.ecn = true: no switch marks; leave it at 0.2"
        );
        assert_eq!(
            Why::new(Rule::XonAboveXoff).arg("xoff", 100u64).text(),
            "at most lossless.xoff_bytes (100)"
        );
    }
}
