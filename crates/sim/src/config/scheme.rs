//! The `scheme` section: which scheme runs, its parameters, and the published values a preset fills in.

use super::TransportKind;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SchemeName {
    Tcp,
    Dctcp,
    Pfabric,
    Las,
    Pias,
    L2dct,
    Qclimb,
    Rcp,
    D3,
    Pdq,
    #[serde(rename = "pdq-basic")]
    PdqBasic,
    #[serde(rename = "pdq-es")]
    PdqEs,
    #[serde(rename = "pdq-es-et")]
    PdqEsEt,
    Homa,
    Rax,
    #[serde(rename = "rax-plus")]
    RaxPlus,
    Hyline,
    Qjump,
}

/// The transport families (see `engine::family`): one run uses one.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FamilyName {
    /// Window-based TCP and its variants, with host-side tagging and rank queues (`transport::tcp`).
    Tcp,
    /// Explicit-rate transports whose switches compute each flow's rate (`transport::rate`): RCP, D3, PDQ.
    Rate,
    /// Receiver-driven message transport over priority queues (`transport::homa`): Homa.
    Homa,
    /// TCP under a central manager that admits, routes and stops large flows (`engine::family::hyline`, the
    /// manager in `control::hyline`): HyLine.
    Hyline,
    /// TCP behind per-flow token buckets at the hosts (`engine::family::qjump`): QJump.
    Qjump,
}

/// Everything the engine, the flow level and the front end know about a scheme that is a fact of the scheme
/// itself, in one place: its row of [`SCHEMES`]. Code that needs such a fact reads the row
/// ([`SchemeName::row`]) instead of matching the scheme's name. Serialized as is (with `scheme` left out: `name`
/// names it) for `fctlab._core.scheme_rows()`.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct SchemeRow {
    #[serde(skip)]
    pub scheme: SchemeName,
    /// The name as written in configs (`scheme.name`).
    pub name: &'static str,
    /// What the scheme does, in one line (`fctlab schemes`).
    pub summary: &'static str,
    /// The transport family that runs it (the engine's dispatch).
    pub family: FamilyName,
    /// The protocol its hosts speak.
    pub protocol: Protocol,
    /// How the hosts choose the priority a data packet carries.
    pub tagging: HostTagging,
    /// The switch discipline when it is a rank queue instead of strict-priority FIFOs.
    pub rank_queue: RankQueue,
    /// The flow level's model of the scheme (`run.level = "flow"`); `None`: no flow-level model.
    pub flow_level: Option<FlowLevelModel>,
    /// A congestion window limits what a flow has in flight (the flow level's slow start applies).
    pub window: bool,
    /// Round trips the flow level charges before a flow's data, besides the handshake's (which it charges when
    /// `transport.handshake` is on and the scheme is window-based): the rate request of the explicit-rate
    /// schemes' SYN.
    pub setup_rtts: u32,
    /// Tags by queue thresholds (`scheme.thresholds_bytes`), which it needs when `switch.queues > 1`.
    pub needs_thresholds: bool,
    /// The presets that fill different values ([`scheme_defaults`]); `native` always, first.
    pub presets: &'static [Preset],
    /// The scheme's own keys (in the `scheme` section) that `fctlab schemes` shows with their defaults.
    pub keys: &'static [&'static str],
    /// The timer whose expiries the run counts as timeouts: the dotted key of its (minimum) duration and how
    /// the analysis names that duration ("RTOmin 2 ms"; Homa's receivers' RESEND rounds: "RESEND after 2 ms").
    pub timer: Timer,
}

/// A scheme's timeout timer, as the analysis of its results names it (see [`SchemeRow::timer`]).
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Timer {
    pub key: &'static str,
    pub label: &'static str,
}

const RTO: Timer = Timer { key: "transport.rto_min_us", label: "RTOmin" };

/// The protocol a scheme's hosts speak.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// TCP NewReno with SACK (`transport.kind = "tcp"`).
    Tcp,
    /// DCTCP (`transport.kind = "dctcp"`).
    Dctcp,
    /// RCP's explicit rates (`transport::rate`).
    Rcp,
    /// D3's explicit rates.
    D3,
    /// PDQ's explicit rates and pauses.
    Pdq,
    /// Homa's receiver-driven messages (`transport::homa`).
    Homa,
}

impl Protocol {
    /// The value of `transport.kind` this protocol is, for the schemes that run TCP; `None` for the families
    /// with a transport of their own.
    pub const fn tcp_kind(self) -> Option<TransportKind> {
        match self {
            Protocol::Tcp => Some(TransportKind::Tcp),
            Protocol::Dctcp => Some(TransportKind::Dctcp),
            _ => None,
        }
    }
}

/// How a scheme's hosts choose the priority of a data packet (`policy`).
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum HostTagging {
    /// One priority for the whole flow (`scheme.priority`, or the flow's own).
    Fixed,
    /// PIAS: by bytes sent, over the queue thresholds (MLFQ).
    Pias,
    /// QCLIMB: by the flow's size bounds and bytes sent (queue climbing, slack, demotion).
    Qclimb,
    /// RAX: by the estimated remaining time.
    Rax,
    /// RAX+: by the true remaining time.
    RaxPlus,
    /// A priority per flow from its size, chosen by the family: HyLine's two classes, QJump's levels, Homa's
    /// unscheduled priorities (its scheduled packets carry the receiver's grants).
    BySize,
}

/// The rank queue a scheme's switches run (`net::rank_queue`).
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RankQueue {
    /// Strict-priority FIFOs.
    None,
    /// pFabric: ranked by remaining size (or what `scheme.rank` says).
    Pfabric,
    /// LAS: ranked by bytes sent.
    Las,
    /// Ranked by the packet's priority field (data: its flow's level; ACKs: `transport.ack_priority`): QJump with
    /// `scheme.qjump_queue = "ranked"` (no scheme's row has it: the option chooses it, see
    /// [`SchemeConfig::switch_rank_queue`]).
    Priority,
}

/// The flow level's allocation rules (`flowlevel`'s module docs describe each).
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FluidModel {
    /// Max-min fair shares (progressive filling).
    MaxMin,
    /// Shortest remaining first, each flow taking what its path has left.
    Srpt,
    /// Least attained service: strict priority by bits sent, equal service shared max-min.
    Las,
    /// Strict priority by queue, max-min within a queue: PIAS's queue is the number of demotion thresholds its
    /// bytes sent have passed (QCLIMB and RAX: their tag of the bytes sent).
    Mlfq,
    /// D3: flows in order of arrival each granted their desired rate where their path has it left (what is left
    /// of it otherwise), then max-min on what the grants leave.
    D3,
    /// PDQ: flows in order of criticality (earliest deadline first, flows without one after; then fewest bytes
    /// left, or the flow's rank when `size_aware` is false), each taking what its path has left.
    Critical { size_aware: bool },
    /// Homa: a message's first RTTbytes blind, ahead of every granted byte; the rest only while its receiver
    /// grants it (its `overcommit` messages with the fewest bytes left, from distinct senders); each, in order of
    /// fewest bytes left, taking what its path has left.
    Homa,
}

/// A scheme's model at the flow level: the rule and how the flow level names it for this scheme.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct FlowLevelModel {
    pub model: FluidModel,
    pub text: &'static str,
}

const fn fluid(model: FluidModel, text: &'static str) -> Option<FlowLevelModel> {
    Some(FlowLevelModel { model, text })
}

const NATIVE: &[Preset] = &[Preset::Native];
const BOTH: &[Preset] = &[Preset::Native, Preset::Pias];
const PFABRIC_PRESETS: &[Preset] = &[Preset::Native, Preset::PfabricNs2, Preset::Pias];

/// A row with the values most schemes share: TCP family, fixed priorities, FIFOs, no flow-level model, not
/// window-based, no set-up, no thresholds, the native preset only, no keys shown.
const fn row(scheme: SchemeName, name: &'static str, summary: &'static str) -> SchemeRow {
    SchemeRow {
        scheme,
        name,
        summary,
        family: FamilyName::Tcp,
        protocol: Protocol::Tcp,
        tagging: HostTagging::Fixed,
        rank_queue: RankQueue::None,
        flow_level: None,
        window: false,
        setup_rtts: 0,
        needs_thresholds: false,
        presets: NATIVE,
        keys: &[],
        timer: RTO,
    }
}

/// The number of schemes.
pub const SCHEME_COUNT: usize = 18;

/// One row per scheme, in the order of [`SchemeName`]'s variants (the order `fctlab schemes` lists them in).
pub const SCHEMES: [SchemeRow; SCHEME_COUNT] = {
    use SchemeName as S;
    const PDQ_ROW: SchemeRow = SchemeRow {
        family: FamilyName::Rate,
        protocol: Protocol::Pdq,
        setup_rtts: 1,
        ..row(S::Pdq, "", "")
    };
    const fn pdq(scheme: SchemeName, name: &'static str, summary: &'static str, text: &'static str) -> SchemeRow {
        SchemeRow {
            scheme,
            name,
            summary,
            flow_level: fluid(FluidModel::Critical { size_aware: true }, text),
            ..PDQ_ROW
        }
    }
    [
        SchemeRow {
            flow_level: fluid(FluidModel::MaxMin, "max-min"),
            window: true,
            ..row(S::Tcp, "tcp", "TCP NewReno with SACK; drop-tail strict-priority switches; one priority per flow")
        },
        SchemeRow {
            protocol: Protocol::Dctcp,
            flow_level: fluid(FluidModel::MaxMin, "max-min"),
            window: true,
            ..row(S::Dctcp, "dctcp", "DCTCP: ECN marking on instantaneous occupancy, alpha-proportional window cuts")
        },
        SchemeRow {
            rank_queue: RankQueue::Pfabric,
            flow_level: fluid(FluidModel::Srpt, "SRPT"),
            window: true,
            presets: PFABRIC_PRESETS,
            keys: &["rank"],
            ..row(
                S::Pfabric,
                "pfabric",
                "pFabric: packets carry remaining flow size; switches serve the most urgent flow and drop the least \
                 urgent packets; senders start at line rate, fixed small RTO, timeouts only, probe mode after \
                 repeated timeouts",
            )
        },
        SchemeRow {
            rank_queue: RankQueue::Las,
            flow_level: fluid(
                FluidModel::Las,
                "least attained service: strict priority by bytes sent, equal service shared max-min",
            ),
            window: true,
            ..row(S::Las, "las", "LAS: pFabric's switch queue ranked by bytes the flow has sent (least attained service first)")
        },
        SchemeRow {
            protocol: Protocol::Dctcp,
            tagging: HostTagging::Pias,
            flow_level: fluid(FluidModel::Mlfq, "MLFQ: strict priority by bytes sent, max-min within a queue"),
            window: true,
            needs_thresholds: true,
            ..row(
                S::Pias,
                "pias",
                "PIAS: hosts tag packets by bytes sent over K strict-priority queues (MLFQ), DCTCP, probe-based \
                 handling of packets trapped in low queues",
            )
        },
        SchemeRow {
            protocol: Protocol::Dctcp,
            flow_level: fluid(FluidModel::MaxMin, "max-min"),
            window: true,
            presets: BOTH,
            keys: &["l2dct_w_min", "l2dct_w_max", "l2dct_size_min_bytes", "l2dct_size_max_bytes", "l2dct_increase"],
            ..row(S::L2dct, "l2dct", "L2DCT: DCTCP whose window increase and decrease are weighted by the bytes a flow has sent")
        },
        SchemeRow {
            protocol: Protocol::Dctcp,
            tagging: HostTagging::Qclimb,
            flow_level: fluid(
                FluidModel::Mlfq,
                "strict priority by QCLIMB's tag of the bytes sent, max-min within a queue",
            ),
            window: true,
            needs_thresholds: true,
            ..row(
                S::Qclimb,
                "qclimb",
                "QCLIMB: tagging by predicted lower/upper bounds (queue climbing up, slack, demotion), DCTCP, \
                 priority-based loss detection with customized ACKs at the receiver",
            )
        },
        SchemeRow {
            family: FamilyName::Rate,
            protocol: Protocol::Rcp,
            flow_level: fluid(FluidModel::MaxMin, "max-min"),
            setup_rtts: 1,
            ..row(
                S::Rcp,
                "rcp",
                "RCP: each switch port computes one fair rate per control interval from spare capacity and queue; \
                 senders send at the smallest rate along their path",
            )
        },
        SchemeRow {
            family: FamilyName::Rate,
            protocol: Protocol::D3,
            flow_level: fluid(
                FluidModel::D3,
                "D3: desired rates granted first come first served, the rest max-min; quenching",
            ),
            setup_rtts: 1,
            ..row(
                S::D3,
                "d3",
                "D3: deadline-aware rate requests once per RTT, granted greedily first come first served at each \
                 switch with spare capacity shared fairly; flows without deadlines get the fair share",
            )
        },
        pdq(
            S::Pdq,
            "pdq",
            "PDQ (full): switches keep the most critical flows (earliest deadline, then shortest remaining time), \
             let them send at the rate controller's rate and pause the rest; Early Start, Early Termination and \
             Suppressed Probing",
            "criticality order with Early Start and Early Termination",
        ),
        pdq(
            S::PdqBasic,
            "pdq-basic",
            "PDQ without Early Start, Early Termination or Suppressed Probing",
            "criticality order, one RTT's hand-over gap",
        ),
        pdq(S::PdqEs, "pdq-es", "PDQ with Early Start only", "criticality order with Early Start"),
        pdq(
            S::PdqEsEt,
            "pdq-es-et",
            "PDQ with Early Start and Early Termination (no Suppressed Probing)",
            "criticality order with Early Start and Early Termination",
        ),
        SchemeRow {
            family: FamilyName::Homa,
            protocol: Protocol::Homa,
            tagging: HostTagging::BySize,
            flow_level: fluid(
                FluidModel::Homa,
                "SRPT over the receivers' grants with overcommitment, the first RTTbytes blind",
            ),
            timer: Timer { key: "scheme.homa_resend_timeout_us", label: "RESEND after" },
            ..row(
                S::Homa,
                "homa",
                "Homa: the first RTTbytes of each message sent blind at a priority chosen by its size; the rest \
                 only against the receiver's grants, SRPT over a few messages at once on the scheduled priorities",
            )
        },
        SchemeRow {
            protocol: Protocol::Dctcp,
            tagging: HostTagging::Rax,
            flow_level: fluid(
                FluidModel::Mlfq,
                "strict priority by RAX's remaining-time estimate, max-min within a queue",
            ),
            window: true,
            ..row(
                S::Rax,
                "rax",
                "RAX: hosts tag packets by the estimated remaining time (b_s + b_b) / min(r_c, C) + b_b / C, r_c \
                 being the measured copy rate into the send buffer, over exponential thresholds; DCTCP; no fast \
                 retransmit while a flow's priority rises",
            )
        },
        SchemeRow {
            protocol: Protocol::Dctcp,
            tagging: HostTagging::RaxPlus,
            flow_level: fluid(FluidModel::Mlfq, "strict priority by the remaining time, max-min within a queue"),
            window: true,
            ..row(S::RaxPlus, "rax-plus", "RAX+: RAX tagging by the true remaining time (true size and generation rate)")
        },
        SchemeRow {
            family: FamilyName::Hyline,
            tagging: HostTagging::BySize,
            flow_level: fluid(
                FluidModel::Mlfq,
                "the manager's admission and preemption; first class above second, max-min within a class",
            ),
            window: true,
            ..row(
                S::Hyline,
                "hyline",
                "HyLine: flows up to H bytes at line rate in the high-priority queue over ECMP; larger flows ask a \
                 central manager, which admits, source-routes and stops them with path-aware preemption (TCP \
                 underneath)",
            )
        },
        SchemeRow {
            family: FamilyName::Qjump,
            tagging: HostTagging::BySize,
            flow_level: fluid(
                FluidModel::Mlfq,
                "strict priority by level, max-min within a level, each flow capped at its level's rate",
            ),
            window: true,
            // the switch queue its levels (one per `qjump_bucket_bytes` entry) go to
            keys: &["qjump_queue"],
            ..row(
                S::Qjump,
                "qjump",
                "QJump: TCP with a priority level per flow by its size, each level's flows rate-limited at the host \
                 by a token bucket refilled every interval (packets beyond it dropped); the smallest flows highest",
            )
        },
    ]
};

impl SchemeName {
    /// Every scheme the engine runs, with a one-line description (the rows' names and summaries).
    pub const ALL: [(&'static str, &'static str); SCHEME_COUNT] = {
        let mut all = [("", ""); SCHEME_COUNT];
        let mut i = 0;
        while i < SCHEME_COUNT {
            all[i] = (SCHEMES[i].name, SCHEMES[i].summary);
            i += 1;
        }
        all
    };

    /// The scheme's row of [`SCHEMES`].
    #[inline]
    pub const fn row(self) -> &'static SchemeRow {
        &SCHEMES[self as usize]
    }

    /// The name as written in configs.
    pub fn as_str(self) -> &'static str {
        self.row().name
    }

    /// The transport family the scheme belongs to.
    pub fn family(self) -> FamilyName {
        self.row().family
    }

    /// Is this one of the PDQ variants?
    pub fn is_pdq(self) -> bool {
        self.row().protocol == Protocol::Pdq
    }

    /// Does the scheme's row give its switches pFabric's rank queue (instead of strict-priority FIFOs)? (What a
    /// run's ports hold also depends on options: [`SchemeConfig::switch_rank_queue`].)
    pub fn rank_queue(self) -> bool {
        self.row().rank_queue != RankQueue::None
    }
}

impl SchemeConfig {
    /// The rank queue a run's ports hold: the scheme row's, or for QJump the one `qjump_queue` chooses
    /// ([`RankQueue::Priority`] for `"ranked"`); [`RankQueue::None`] for strict-priority FIFOs.
    pub fn switch_rank_queue(&self) -> RankQueue {
        match (self.name, self.qjump_queue) {
            (SchemeName::Qjump, QjumpQueue::Ranked) => RankQueue::Priority,
            (name, _) => name.row().rank_queue,
        }
    }

    /// Do a run's ports hold a rank queue (see [`SchemeConfig::switch_rank_queue`])?
    pub fn ranked_ports(&self) -> bool {
        self.switch_rank_queue() != RankQueue::None
    }

    /// Does the scheme read flow sizes (and so `scheme.size_info`)?
    pub fn size_aware(&self) -> bool {
        use SchemeName as S;
        matches!(
            self.name,
            S::Pfabric | S::Homa | S::Pdq | S::PdqBasic | S::PdqEs | S::PdqEsEt | S::D3 | S::Hyline | S::Qjump
                | S::RaxPlus | S::Qclimb
        )
    }

    /// What the run's scheme knows of flow sizes: `size_info` if given, else what the scheme's own keys say
    /// (pFabric's `rank = "estimate"`, Homa's `homa_sizes`, QCLIMB's `qclimb_info`, PDQ's `pdq_criticality`
    /// other than `"size"`: none); `exact` for schemes that read no sizes.
    pub fn size_view(&self) -> SizeInfo {
        if !self.size_aware() {
            return SizeInfo::Exact;
        }
        if let Some(info) = self.size_info {
            return info;
        }
        match self.name {
            SchemeName::Pfabric if self.rank == RankBy::Estimate => SizeInfo::Estimate,
            SchemeName::Homa => match self.homa_sizes {
                HomaSizes::Exact => SizeInfo::Exact,
                HomaSizes::Estimate => SizeInfo::Estimate,
                HomaSizes::Lower => SizeInfo::Lower,
                HomaSizes::Upper => SizeInfo::Upper,
            },
            SchemeName::Qclimb => match self.qclimb_info {
                QclimbInfo::Bounds => SizeInfo::Bounds,
                QclimbInfo::Precise => SizeInfo::Exact,
                QclimbInfo::PointFixed | QclimbInfo::PointClimb => SizeInfo::Estimate,
            },
            _ if self.name.is_pdq() && self.pdq_criticality != Criticality::Size => SizeInfo::None,
            _ => SizeInfo::Exact,
        }
    }

    /// QCLIMB's variant as `size_info` and `qclimb_info` decide it (see [`SizeInfo`]); `None` when QCLIMB runs
    /// as PIAS (`size_info = "none"`).
    pub fn qclimb_variant(&self) -> Option<QclimbInfo> {
        match self.size_info {
            Option::None => Some(self.qclimb_info),
            Some(SizeInfo::Bounds) => Some(QclimbInfo::Bounds),
            Some(SizeInfo::Exact) => Some(QclimbInfo::Precise),
            Some(SizeInfo::Estimate) if self.qclimb_info == QclimbInfo::PointFixed => Some(QclimbInfo::PointFixed),
            Some(SizeInfo::Estimate) => Some(QclimbInfo::PointClimb),
            // (lower and upper alone are refused by the range checks)
            Some(SizeInfo::Lower | SizeInfo::Upper | SizeInfo::None) => Option::None,
        }
    }

    /// PDQ's criticality as `size_info` and `pdq_criticality` decide it: by bytes sent with `size_info = "none"`.
    pub fn pdq_criticality_used(&self) -> Criticality {
        match self.size_info {
            Some(SizeInfo::None) => Criticality::BytesSent,
            _ => self.pdq_criticality,
        }
    }

    /// The range checks of `size_info` against the scheme, its own keys and the level: the key at fault and
    /// why (a one-line message naming the scheme).
    pub fn check_size_info(&self, flow_level: bool) -> Result<(), (&'static str, String)> {
        let Some(info) = self.size_info else { return Ok(()) };
        let name = self.name.as_str();
        let what = info.as_str();
        let bad = |key: &'static str, why: String| Err((key, why));
        if !self.size_aware() {
            if matches!(info, SizeInfo::Exact | SizeInfo::None) {
                return Ok(());
            }
            return bad(
                "scheme.size_info",
                format!(
                    "scheme {name} reads no flow sizes, so \"{what}\" means nothing to it (only \"exact\" or \"none\"); \
                     the size-aware schemes are pfabric, homa, pdq (and its variants), d3, hyline, qjump, rax-plus \
                     and qclimb"
                ),
            );
        }
        match (self.name, info) {
            (SchemeName::Homa, SizeInfo::None) => {
                return bad(
                    "scheme.size_info",
                    "scheme homa has no size-unaware mode: its receiver grants against the announced length".into(),
                )
            }
            (SchemeName::D3, SizeInfo::None) => {
                return bad(
                    "scheme.size_info",
                    "scheme d3 has no rule for a deadline flow whose size it does not know (its desired rate is \
                     bytes left over time left)"
                        .into(),
                )
            }
            (SchemeName::Hyline, SizeInfo::None) => {
                return bad(
                    "scheme.size_info",
                    "scheme hyline decides a flow's class from its size before it sends; \"none\" is not modelled"
                        .into(),
                )
            }
            (SchemeName::Qclimb, SizeInfo::Lower | SizeInfo::Upper) => {
                return bad(
                    "scheme.size_info",
                    format!("scheme qclimb reads both bounds or a point estimate: use \"bounds\", not \"{what}\""),
                )
            }
            _ => {}
        }
        // the schemes' own keys: at their defaults they yield, otherwise they must agree
        let agrees = match self.name {
            SchemeName::Pfabric => match self.rank {
                RankBy::RemainingSize => true,
                RankBy::Estimate => info == SizeInfo::Estimate,
                RankBy::RemainingTime => info == SizeInfo::Exact,
            },
            SchemeName::Homa => match self.homa_sizes {
                HomaSizes::Exact => true,
                HomaSizes::Estimate => info == SizeInfo::Estimate,
                HomaSizes::Lower => info == SizeInfo::Lower,
                HomaSizes::Upper => info == SizeInfo::Upper,
            },
            SchemeName::Qclimb => match self.qclimb_info {
                QclimbInfo::Bounds => true,
                QclimbInfo::Precise => info == SizeInfo::Exact,
                QclimbInfo::PointFixed | QclimbInfo::PointClimb => info == SizeInfo::Estimate,
            },
            n if n.is_pdq() => match self.pdq_criticality {
                Criticality::Size => true,
                Criticality::BytesSent => info == SizeInfo::None,
                Criticality::Random => false,
            },
            _ => true,
        };
        if !agrees {
            let (key, value) = match self.name {
                SchemeName::Pfabric => ("scheme.rank", serde_json::to_value(self.rank)),
                SchemeName::Homa => ("scheme.homa_sizes", serde_json::to_value(self.homa_sizes)),
                SchemeName::Qclimb => ("scheme.qclimb_info", serde_json::to_value(self.qclimb_info)),
                _ => ("scheme.pdq_criticality", serde_json::to_value(self.pdq_criticality)),
            };
            let value = value.map(|v| v.to_string()).unwrap_or_default();
            return bad(
                key,
                format!("scheme {name}: {key} = {value} contradicts scheme.size_info = \"{what}\" (leave one out)"),
            );
        }
        if flow_level && self.name != SchemeName::Qclimb && info != SizeInfo::Exact {
            return bad(
                "scheme.size_info",
                format!("run.level = \"flow\": scheme {name} with scheme.size_info = \"{what}\" runs at the packet level only"),
            );
        }
        if flow_level && self.name == SchemeName::Qclimb && info == SizeInfo::None {
            return bad(
                "scheme.size_info",
                "run.level = \"flow\": scheme qclimb with scheme.size_info = \"none\" runs at the packet level only".into(),
            );
        }
        Ok(())
    }
}

/// QJump's switch queue (`scheme.qjump_queue`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QjumpQueue {
    /// `switch.queues` strict-priority FIFOs sharing the port's buffer, drop-tail: a flow's level is its queue
    /// (levels past the last queue share the last), an arrival that finds the port full is dropped whatever its
    /// level. What the QJump paper's switches do (802.1Q priorities in commodity hardware), and fctlab's default.
    PriorityFifos,
    /// One queue per port ordered by priority, the QJump authors' ns-2 model (camsas/qjump-ns2 @deb0d63: its
    /// `run_qjump.sh` sets `DROP_PRIO`, `DEQUE_PRIO` and `KEEP_ORDER` true for every DropTail queue, hosts' and
    /// switches', over pFabric's ns-2 patch `queue/drop-tail.cc`): the packet's priority is its ns-2 `prio_`,
    /// the flow's level for data (the QJUMP connector writes it), 0 for ACKs (never written: the agent's
    /// default); fctlab gives ACKs `transport.ack_priority` (default 0, as theirs).
    ///  - dequeue (`deque_prio_`): the earliest-arrived packet of the most urgent priority (lowest number), FIFO
    ///    within a priority; `keep_order_` then sends that flow's earliest packet, which with one level per flow
    ///    is the same packet;
    ///  - full port (`drop_prio_`): the least urgent packet goes, the latest-arrived among equals, the arrival
    ///    included: an arrival at the worst priority present is itself dropped, a more urgent one pushes out the
    ///    newest packet of the worst level. Their code drops one packet, the worst of those whose removal alone
    ///    makes room; fctlab's rank queue evicts worst-first until the arrival fits, all strictly less urgent
    ///    (`net::rank_queue`), which differs only when packets of unequal sizes meet a full port.
    ///
    /// fctlab runs it on pFabric's rank queue (`net::rank_queue`) ranked by the priority field
    /// ([`RankQueue::Priority`]): per-port buffer only (`switch.buffer = "port"`), no ECN marking, no PFC; the
    /// hosts' NICs hold the same queue (`host.nic_buffer_bytes`), as the authors' host links do. Drops are counted
    /// in `drops_per_queue` at the dropped packet's priority (capped at the last queue).
    Ranked,
}

/// Which published parameter set fills the keys a config leaves out (see [`scheme_defaults`]).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Preset {
    /// The scheme's own paper. Where the paper states a value in terms of the fabric (pFabric: RTO about 3
    /// RTTs, initial window one BDP, queue 2 BDPs), the value is kept in those terms (the `*_rtts` and `*_bdp`
    /// keys) and scales with the fabric the run builds (`net::scale`); PIAS: the PIAS ns-2 scripts.
    Native,
    /// pFabric's ns-2 scripts' absolute values for their own fabric (~14.7 us RTT, 12-packet BDP): 36 KB
    /// queues, initial window 12, cap 15, fixed RTO 45 us. What `native` meant before it scaled; meaningful only
    /// on a fabric with that RTT (the Homa and HyLine recipes name it).
    #[serde(rename = "pfabric_ns2")]
    PfabricNs2,
    /// As the PIAS paper ran the scheme (pFabric: 140-packet queue, RTO 250 us, initial window 70), absolute
    /// values for the PIAS fabric (~85 us RTT).
    Pias,
}

/// What QCLIMB knows of each flow's size (QCLIMB paper, section 5 and appendix A).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QclimbInfo {
    /// Lower and upper bounds (`lower_bytes`, `upper_bytes` columns): QCLIMB.
    Bounds,
    /// The true size as both bounds: QCLIMB-PS.
    Precise,
    /// One priority from the point estimate (`estimate_bytes`): QCLIMB-FP.
    PointFixed,
    /// Climb by the point estimate, then the lowest priority: QCLIMB-PP.
    PointClimb,
}

/// How a QCLIMB receiver treats out-of-order data.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OooHandling {
    /// Priority-based loss detection and customized ACKs (section 3.2).
    Qclimb,
    /// TCP's own: duplicate ACKs and fast retransmit.
    Tcp,
}

/// Which losses a QCLIMB receiver's priority-based detection reports (section 3.2.3).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PriorityLossRepair {
    /// As section 3.2.3 describes it: only the gap at the cumulative ACK; the sender retransmits that hole, and
    /// the next one only on a later ACK with a higher cumulative ACK and the retransmission flag (one lost
    /// segment per round trip).
    Cumulative,
    /// fctlab's variant, not in the paper: the receiver also applies the priority test to the gap just below
    /// each out-of-order segment it receives, and the sender retransmits every segment of such a gap (window
    /// permitting), as SACK recovery repairs all the holes of a window in one round trip.
    EveryGap,
}

/// What PIAS counts its bytes sent over, for demotion.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PiasCount {
    /// The flow's own bytes: a packet's byte offset in its flow (the PIAS ns-2 code, `seqno - startseq_`).
    PerFlow,
    /// The connection's bytes, as the PIAS kernel module counts them (HKUST-SING/PIAS-Software, pias4): the
    /// count carries over from one flow (message) of a connection to the next, and is reset to 0 only when a
    /// new message is written more than `scheme.pias_idle_us` after the previous write with nothing left
    /// unsent (jprobe.c), or after `scheme.pias_timeout_reset` consecutive timeouts (netfilter.c, "aging").
    /// A flow's write is its start. Needs `transport.connections` other than "per_flow" to matter.
    PerConnection,
}

/// How L2DCT's additive increase is weighted.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum L2dctIncrease {
    /// w_c segments per window of ACKs (the L2DCT paper: cwnd <- cwnd + w_c / cwnd per ACK).
    Weight,
    /// w_c / w_max segments per window (the PIAS ns-2 code, tcp.cc `opencwnd`: `increase_num_ =
    /// lldct_w_c_ / lldct_w_max_`), so a flow at w_max grows as TCP does and never faster.
    Normalized,
}

/// Where in its flow a packet's rank is measured (pFabric, LAS).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RankAt {
    /// At the packet itself, as the ns-2 code of the pFabric and PIAS simulations does (tcp-full.cc `set_prio`,
    /// `prio_scheme_` 2 and 3): pFabric's rank is the flow's bytes from this packet's offset to its end
    /// (`curseq_ - seqno`), LAS's the bytes before this packet (`seqno - startseq_`), so a retransmission
    /// carries the rank of its original position.
    Packet,
    /// At the sender's state when the packet leaves: pFabric's rank is the flow's size minus the bytes
    /// acknowledged, LAS's the highest byte sent so far (a retransmission takes the flow's high-water mark).
    Ack,
}

/// What pFabric's packets are ranked by.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RankBy {
    /// Remaining flow size: bytes not yet acknowledged when the packet is sent (pFabric).
    RemainingSize,
    /// Remaining size by the flow's estimated size (`estimate_bytes` in the trace): estimate minus bytes
    /// acknowledged, floored at 0 (pFabric with imprecise sizes, QCLIMB App. A).
    Estimate,
    /// Remaining time (the RAX paper's section II-B variant of pFabric): the remaining size (as for
    /// `remaining_size`) divided by the smaller of the flow's generation rate and the host link rate, in ns
    /// (saturating at about 4.3 s). Without a generation rate this orders flows as `remaining_size` does.
    RemainingTime,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SchemeConfig {
    /// The scheme that runs (the scheme table, `fctlab schemes`); its preset fills the keys a config leaves out.
    pub name: SchemeName,
    /// Which parameter set fills unspecified switch/transport keys for this scheme.
    pub preset: Preset,
    /// Priority of every flow whose trace gives none ("fixed" tagging of tcp, dctcp, l2dct).
    pub priority: u8,
    /// PIAS demotion thresholds alpha_1 < ... < alpha_{K-1} in bytes: a packet sent after more than alpha_j
    /// bytes of its flow goes below queue j-1. Must have switch.queues - 1 entries (fewer is allowed: the
    /// lower queues are then unused).
    pub thresholds_bytes: Vec<u64>,
    /// After this many consecutive timeouts a flow stops retransmitting and sends probes until an ACK comes
    /// back (pFabric's probe mode; PIAS's handling of trapped packets). 0 turns it off.
    pub probe_after_timeouts: u32,
    /// What pFabric's packets are ranked by (see [`RankBy`]); `rank_at` says where in the flow ranks are measured.
    pub rank: RankBy,
    /// pFabric and LAS: where in its flow a packet's rank is measured (see [`RankAt`]).
    pub rank_at: RankAt,
    /// What every size-aware scheme knows of flow sizes: `"exact"`, `"estimate"`, `"lower"`, `"upper"`,
    /// `"bounds"` or `"none"`, from the trace's `estimate_bytes` / `lower_bytes` / `upper_bytes` (see
    /// [`SizeInfo`] for each scheme's rule). Unset (the default): each scheme's own keys decide (`rank`,
    /// `homa_sizes`, `qclimb_info`, `pdq_criticality`), exact sizes but for QCLIMB's bounds.
    pub size_info: Option<SizeInfo>,
    /// L2DCT weights (Munir et al., INFOCOM 2013; values from the PIAS ns-2 scripts): w_max up to
    /// `l2dct_size_min_bytes` sent, w_min from `l2dct_size_max_bytes`, linear in between.
    pub l2dct_w_min: f64,
    /// L2DCT's largest weight w_max, a flow's weight until it has sent `l2dct_size_min_bytes`.
    pub l2dct_w_max: f64,
    /// L2DCT: the bytes sent up to which a flow has weight `l2dct_w_max`.
    pub l2dct_size_min_bytes: u64,
    /// L2DCT: the bytes sent from which a flow has weight `l2dct_w_min`; larger than `l2dct_size_min_bytes`.
    pub l2dct_size_max_bytes: u64,
    /// QCLIMB: what it knows of flow sizes (see [`QclimbInfo`]). Its slack is `slack_bytes`, its out-of-order
    /// handling `ooo_handling`, its thresholds `thresholds_bytes` (the paper uses PIAS's).
    pub qclimb_info: QclimbInfo,
    /// QCLIMB's slack S in bytes (the paper's 100 KB).
    pub slack_bytes: u64,
    /// QCLIMB: how its receivers treat out-of-order data (see [`OooHandling`]).
    pub ooo_handling: OooHandling,
    /// QCLIMB: which priority-detected losses are repaired at once (see [`PriorityLossRepair`]).
    pub priority_loss_repair: PriorityLossRepair,
    /// PIAS: what bytes sent are counted over (see [`PiasCount`]); per connection, the idle time after which a
    /// new message starts from 0 (the kernel module's 500 us), and the consecutive timeouts after which the
    /// count restarts (its 3; 0 turns that off).
    pub pias_count: PiasCount,
    /// PIAS counting per connection: the idle time in us after which a connection's next message counts its bytes
    /// from 0 again (the kernel module's 500 us).
    pub pias_idle_us: f64,
    /// PIAS counting per connection: the consecutive timeouts after which the connection's byte count restarts from
    /// 0 (the kernel module's 3); 0 turns that off.
    pub pias_timeout_reset: u32,
    /// L2DCT: how the additive increase is weighted (see [`L2dctIncrease`]).
    pub l2dct_increase: L2dctIncrease,
    /// Explicit-rate schemes (RCP, D3, PDQ): the switches' control interval in us, over which a port measures
    /// its input rate and updates its rate; 0 (the default) means the average RTT the port reads from the
    /// headers of the flows that cross it (RCP's d0; PDQ updates its rate controller every 2 such RTTs).
    pub rate_interval_us: f64,
    /// RCP's gains alpha and beta. 0.4 and 0.4: RCP's ns-2 reference code (`alpha_`, `beta_` in its
    /// ns-default.tcl), as its initial rate and floor. The RCP papers' analysis and simulations use 0.1 and 1
    /// (fctlab's earlier default, kept as an option): with beta = 1 a queue of one bandwidth-delay product
    /// makes the update's step -1 or less, so R falls to its floor, and datacenter BDPs are a dozen packets
    /// (measured on the PDQ recipe's tree, Poisson all-to-all at load 0.25, 100 KB mean: mean FCT 385 ms with
    /// 0.1 and 1 against 6.5 ms with 0.4 and 0.4, both from R(0) = 0.05 C; two 1 MB flows arriving together on
    /// one 1 Gbps link: 21.3 ms against 17.7, their fair share 16.4).
    pub rcp_alpha: f64,
    /// RCP's gain beta, the weight of the queue in its rate update (see `rcp_alpha`, the weight of the spare
    /// capacity).
    pub rcp_beta: f64,
    /// PDQ's Early Start: a flow about to finish does not hold back the next (`pdq_early_start_k`). PDQ's three
    /// optimizations (this, `pdq_early_termination`, `pdq_suppressed_probing`) are set by the scheme names
    /// pdq-basic, pdq-es, pdq-es-et and pdq (explicit keys win).
    pub pdq_early_start: bool,
    /// PDQ's Early Termination: a flow that can no longer meet its deadline is terminated (set by the scheme name;
    /// an explicit key wins).
    pub pdq_early_termination: bool,
    /// PDQ's Suppressed Probing: a paused flow probes less often the more flows are ahead of it
    /// (`pdq_probe_factor`; set by the scheme name; an explicit key wins).
    pub pdq_suppressed_probing: bool,
    /// PDQ's Early Start threshold K in RTTs: flows that will finish within K RTTs do not hold back the next.
    pub pdq_early_start_k: f64,
    /// How Early Start counts the nearly completed flows ahead of a flow (see [`EarlyStartRule`]).
    pub pdq_early_start_rule: EarlyStartRule,
    /// What a PDQ switch gives a flow its flow list has no room for (see [`OutsideList`]).
    pub pdq_outside_list: OutsideList,
    /// What PDQ's criticality is computed from (see [`Criticality`]).
    pub pdq_criticality: Criticality,
    /// Criticality `bytes_sent`: the sender updates its estimate every this many bytes (the paper's 50 KB).
    pub pdq_criticality_update_bytes: u64,
    /// PDQ's choices where the paper gives no number (`transport::rate`): Suppressed Probing's X (a flow with i
    /// flows ahead probes every max(1, ceil(X i)) RTTs; 0.2), dampening in average RTTs (1; 0 turns it off), and
    /// the flow list's bounds (at most max(2 kappa, min) entries, never more than max; 8 and 64).
    pub pdq_probe_factor: f64,
    /// PDQ's dampening, in average RTTs: after accepting a flow that was not sending, a port accepts no other
    /// paused flow for this long (1; 0 turns it off).
    pub pdq_dampening_rtts: f64,
    /// PDQ: the flow list holds at most max(2 kappa, `pdq_list_min`) entries (8).
    pub pdq_list_min: u32,
    /// PDQ: the flow list never holds more than this many entries (64); at least `pdq_list_min`.
    pub pdq_list_max: u32,
    /// RCP's lowest rate, in full-size packets per average RTT (0.01, as RCP's reference code's `min_pprtt_`).
    pub rcp_min_packets_per_rtt: f64,
    /// RCP's rate R(0) of a port before its first update, as a fraction of the link rate. 0.05: RCP's ns-2
    /// reference code (`init_rate_fact_` in its ns-default.tcl; the router sets R = init_rate_fact_ x C when its
    /// capacity is configured). 1.0 starts at line rate (fctlab's choice before): flows that arrive together
    /// then all get C, the queue they build drives R to the floor, and R recovers by at most 1 + alpha per RTT
    /// (two 1 MB flows on one 1 Gbps link: 28.6 ms instead of about 16.6).
    pub rcp_init_rate_fraction: f64,
    /// Explicit-rate schemes: whether a host's NIC port runs an agent too (RCP's rate, D3's counters, PDQ's flow
    /// list) besides the switch ports. false (the default): only switches compute rates, as the three papers
    /// place their rate computation in routers and switches, and senders obey the path's answer; a host's own
    /// flows share its NIC through its queue. true: fctlab's earlier model, in which a sender's NIC arbitrates
    /// among the host's flows like a switch port (PDQ then pauses a host's less critical flows at the host,
    /// which keeps the switches' flow lists short, so Suppressed Probing's I_H stays at 1).
    pub rate_nic_agents: bool,
    /// Explicit-rate senders' retransmission timeout, in smoothed RTTs (at least `transport.rto_min_us`; 3).
    pub rate_rto_rtts: f64,
    /// Homa (`transport::homa`): RTTbytes, the unscheduled bytes of every message and how far ahead of arrivals a
    /// granted message is kept (0: from the fabric, the bytes a host link carries while a full packet reaches
    /// the farthest host and a control packet comes back).
    pub homa_rtt_bytes: u64,
    /// Homa: how many of the `switch.queues` levels carry unscheduled packets (0: from the run's message sizes,
    /// in proportion to the unscheduled bytes), and their size cutoffs in bytes (empty: each level carries an
    /// equal share of the unscheduled bytes; given, they also set the number of unscheduled levels).
    pub homa_unscheduled_levels: u32,
    /// Homa: the message-size cutoffs of the unscheduled levels in bytes, ascending (empty: each level carries an
    /// equal share of the unscheduled bytes; given, they also set the number of unscheduled levels).
    pub homa_unscheduled_cutoffs_bytes: Vec<u64>,
    /// Homa: how many messages a receiver grants to at once, the degree of overcommitment (0: the number of
    /// scheduled levels, as the paper does).
    pub homa_overcommit: u32,
    /// Homa: the time without news of a message after which its receiver asks for missing data again (RESEND)
    /// and its sender checks on it, in us. Chosen: 10 ms (Homa's are "a few milliseconds"), long enough that
    /// granted data waiting in a low-priority queue behind a few more urgent messages is not asked for again.
    pub homa_resend_timeout_us: f64,
    /// Homa: what the sender announces as a message's length (see [`HomaSizes`]; `size_info` sets it too).
    pub homa_sizes: HomaSizes,
    /// Homa: how an unscheduled packet's priority is chosen (see [`HomaUnschedPrio`]). Default `"message"`.
    pub homa_unscheduled_priority: HomaUnschedPrio,
    /// Homa: the last RTTbytes of a scheduled message travel at an unscheduled priority ("tail boost"). The
    /// paper does not describe it; the authors' simulator, HomaSimulation, does it in every configuration of
    /// its evaluation (`boostTailBytesPrio = RTT`): a grant issued while fewer than RTTbytes of the message are
    /// left to grant carries the better of the scheduler's level and an unscheduled level, the one a message of
    /// the message's length gets (`homa_unscheduled_priority = "message"`) or the one for the bytes left to
    /// grant (`"remaining"`, HomaSimulation's `STATIC_CBF_GRADUATED`). A message nearly done thus finishes
    /// ahead of the scheduled traffic, as an unscheduled message of that size would. fctlab counts RTTbytes in
    /// payload (`homa_rtt_bytes`, rounded to whole segments), HomaSimulation in wire bytes (10,000 B, six full
    /// packets); fctlab's grants usually add one segment each, as HomaSimulation's do, and a grant's level is
    /// decided by the bytes left from its first newly granted segment. With the option on, the automatic cutoffs
    /// count these bytes as unscheduled too (as HomaSimulation's cutoffs do). Off by default: the paper's
    /// Homa, and fctlab's results before the option existed.
    pub homa_tail_boost: bool,
    /// RAX's first threshold Q_1 in us: a flow whose estimated remaining time is below it is in the top queue.
    /// 0 (the default) takes the paper's value for the host link rate: 1,280 us up to 1 Gbps, 160 us above.
    pub rax_q1_us: f64,
    /// RAX's threshold base E (the paper's 2): consecutive thresholds differ by the factor E; where the series
    /// starts is `rax_thresholds`.
    pub rax_base: f64,
    /// How RAX lays Eq. 3's exponential series on the queues (see [`RaxThresholds`]).
    pub rax_thresholds: RaxThresholds,
    /// What RAX's flow table is keyed by (see [`RaxState`]).
    pub rax_state: RaxState,
    /// RAX's EWMA gain for the copy rate (the paper's alpha = 0.25): r_c <- alpha sample + (1 - alpha) r_c.
    pub rax_alpha: f64,
    /// RAX's copy-rate sampling interval in us. The paper's kernel hook takes a sample at each call that copies
    /// data into the send buffer (bytes copied over the time since the previous call); the simulated
    /// application writes continuously, so a sample is taken at the first of the flow's data packets at least
    /// this long after the previous sample, over the time since it, while the application has bytes left to
    /// write. 100 us: a few samples per Q_1 at 10 Gbps, a dozen at 1 Gbps.
    pub rax_rate_interval_us: f64,
    /// HyLine (`engine::family::hyline`): the threshold H in bytes; flows larger than H are second-class (the manager
    /// schedules them), the others first-class (the paper's 1 MB, from its §IV-E band).
    pub hyline_threshold_bytes: u64,
    /// HyLine: T_cost in us, the time from a second-class flow's arrival to its request's decision at the manager
    /// (network and computation delay of reaching the MAN; the paper's 100 us, which the authors' ns-2 agent
    /// waits before it calls the manager).
    pub hyline_tcost_us: f64,
    /// HyLine: the time the manager's signals (CTS, STS) take to reach the hosts, and a FIN the manager, in us
    /// (0: instantaneous, as in the authors' ns-2 code, where T_cost covers the whole exchange).
    pub hyline_signal_us: f64,
    /// HyLine: second-class flows' initial window in packets (also the window they restart from at each CTS),
    /// RTO floor in us (Table I: 25 packets, 1 s) and window cap in packets (the authors' scripts: the queue size
    /// less one, 225); first-class flows use `transport.*`.
    pub hyline_large_init_cwnd_packets: f64,
    /// HyLine: second-class flows' RTO floor in us (Table I: 1 s).
    pub hyline_large_rto_min_us: f64,
    /// HyLine: second-class flows' window cap in packets (the authors' scripts: 225, the queue size less one).
    pub hyline_large_max_cwnd_packets: f64,
    /// QJump (`engine::family::qjump`): a flow of at most `qjump_size_thresholds_bytes[i]` bytes (and more than the one
    /// before) is at level i, priority i; larger ones at the last level. Each level's flows may send
    /// `qjump_bucket_bytes[i]` wire bytes per `qjump_interval_us` (one more bucket than thresholds). Defaults:
    /// the QJump authors' ns-2 scripts (camsas/qjump-ns2 @2a37e60, `tcp-common-opt.tcl`), whose buckets (72,000
    /// to 10,500,000 bits per 1.05 ms on 10 Gbps hosts) hold each level's largest flow, the last being line rate.
    pub qjump_size_thresholds_bytes: Vec<u64>,
    /// QJump: the wire bytes each level's flows may send per `qjump_interval_us`, one entry per level (one more
    /// than `qjump_size_thresholds_bytes`), each at least one full packet.
    pub qjump_bucket_bytes: Vec<u64>,
    /// QJump: the buckets' refill interval in us (0: the scripts' 1.05 ms at 10 Gbps, scaled to the host link rate,
    /// so that every level keeps its share of the link and its flows still fit one bucket: 10.5 ms at 1 Gbps).
    pub qjump_interval_us: f64,
    /// QJump: the ports' queue, `"priority_fifos"` (the default: strict-priority FIFOs, drop-tail) or `"ranked"`
    /// (one queue that drops the least urgent packet and serves the most urgent, the QJump authors' ns-2 model);
    /// see [`QjumpQueue`].
    pub qjump_queue: QjumpQueue,
}

/// What a Homa sender announces as its message's length (QCLIMB paper, App. D: Homa with imprecise sizes). The
/// announced length sets the unscheduled priority, the sender's and the receiver's SRPT order.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HomaSizes {
    /// The true size (Homa).
    Exact,
    /// The trace's `estimate_bytes`.
    Estimate,
    /// The trace's `lower_bytes`.
    Lower,
    /// The trace's `upper_bytes`.
    Upper,
}

/// What a size-aware scheme knows of each flow's size (`scheme.size_info`): the same information, from the same
/// trace columns (`estimate_bytes`, `lower_bytes`, `upper_bytes`, which `fctlab predict annotate` or a
/// workload's `size_error` model writes), for every scheme that reads sizes. Each scheme's rule:
///
/// - A scheme that reads one number reads the *known remaining bytes* [`SizeInfo::remaining`]: `exact` the true
///   size less the bytes done, `estimate`/`lower`/`upper` that column less the bytes done (floored at 0), and
///   `bounds` the lower bound's remaining bytes until the lower bound is done, then the upper bound's (what the
///   flow is sure to have left, then the most it can have left: QCLIMB's reading of bounds, climb while under the
///   lower bound and demote past it, applied to a remaining size; fctlab's choice, no paper gives one). A
///   decision taken once at the start reads the same rule at 0 bytes done ([`SizeInfo::at_start`]: the
///   estimate, a bound, or for `bounds` the lower bound, the upper one where the lower is 0).
/// - pFabric: the packet's rank is the known remaining bytes (QCLIMB App. A ranks pFabric by the estimate);
///   `none`: ranked by bytes sent, LAS on the same queue (pFabric's own size-unaware limit).
/// - Homa: the announced message length is the known size at the start (QCLIMB App. D announces the estimate);
///   it sets the unscheduled priority, the grants and both SRPT orders. `none` is refused: Homa has no
///   size-unaware mode (its receiver grants against the announced length).
/// - PDQ (and its variants): criticality is the known remaining bytes' time at line rate, as are Early
///   Termination's test (the paper's section 5.6 studies inaccurate criticality); `none`: criticality by bytes
///   sent (`pdq_criticality = "bytes_sent"`, the paper's own size-unaware variant).
/// - D3: a deadline flow's desired rate is its known remaining bytes over the time to its deadline; `none` is
///   refused (D3 has no rule for a deadline flow whose size it does not know).
/// - HyLine: the class is the known size at the start against H (second class above H), and the manager's
///   remaining bytes of a second-class sender are its known remaining bytes; `none` is refused (a class by
///   bytes sent would be a different scheme: HyLine decides before the first byte).
/// - QJump: the level is the known size at the start against the thresholds; `none`: every flow at the last
///   level (one class, as an application that declares none).
/// - RAX+: the remaining time T_est counts the known remaining bytes (its written bytes capped there); `none`:
///   RAX's own estimate from bytes sent and the copy rate (plain RAX, the paper's size-unaware scheme).
/// - QCLIMB: `bounds` is QCLIMB, `exact` QCLIMB-PS (the true size as both bounds), `estimate` QCLIMB-PP (the
///   estimate as both bounds, no slack; QCLIMB-FP with `qclimb_info = "point_fixed"`), `none` PIAS (QCLIMB
///   hands a flow it knows nothing of to PIAS, section 5.2.2); `lower` and `upper` alone are refused.
///
/// Unset (the default), every scheme reads what its own keys say (`rank`, `homa_sizes`, `qclimb_info`,
/// `pdq_criticality`): exact sizes, except QCLIMB's bounds. Those keys still work; left at their defaults they
/// yield to `size_info`, set to anything else they must agree with it. Size-unaware schemes take only `exact`
/// and `none` (both change nothing). At the flow level only QCLIMB takes it (`bounds`, `exact`, `estimate`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SizeInfo {
    /// The true size.
    Exact,
    /// The trace's `estimate_bytes`.
    Estimate,
    /// The trace's `lower_bytes` alone.
    Lower,
    /// The trace's `upper_bytes` alone.
    Upper,
    /// Both `lower_bytes` and `upper_bytes`.
    Bounds,
    /// Nothing: each scheme's size-unaware fallback, or a refusal.
    None,
}

impl SizeInfo {
    pub fn as_str(self) -> &'static str {
        match self {
            SizeInfo::Exact => "exact",
            SizeInfo::Estimate => "estimate",
            SizeInfo::Lower => "lower",
            SizeInfo::Upper => "upper",
            SizeInfo::Bounds => "bounds",
            SizeInfo::None => "none",
        }
    }

    /// The bytes a scheme with this information believes a flow of `size` bytes (estimate, bounds as the trace
    /// gives them) has left once `done` bytes are done (see [`SizeInfo`]). `exact` and `none` return the true
    /// remainder (a scheme with `none` does not call it).
    #[inline]
    pub fn remaining(self, size: u64, estimate: u64, lower: u64, upper: u64, done: u64) -> u64 {
        match self {
            SizeInfo::Exact | SizeInfo::None => size.saturating_sub(done),
            SizeInfo::Estimate => estimate.saturating_sub(done),
            SizeInfo::Lower => lower.saturating_sub(done),
            SizeInfo::Upper => upper.saturating_sub(done),
            SizeInfo::Bounds if done < lower => lower - done,
            SizeInfo::Bounds => upper.saturating_sub(done),
        }
    }

    /// The size a scheme with this information believes a flow has before it sends: [`SizeInfo::remaining`]
    /// at 0 bytes done.
    #[inline]
    pub fn at_start(self, size: u64, estimate: u64, lower: u64, upper: u64) -> u64 {
        self.remaining(size, estimate, lower, upper, 0)
    }

    /// Which trace columns it reads.
    pub fn columns(self) -> &'static [&'static str] {
        match self {
            SizeInfo::Exact | SizeInfo::None => &[],
            SizeInfo::Estimate => &["estimate_bytes"],
            SizeInfo::Lower => &["lower_bytes"],
            SizeInfo::Upper => &["upper_bytes"],
            SizeInfo::Bounds => &["lower_bytes", "upper_bytes"],
        }
    }
}

/// How a Homa sender picks an unscheduled packet's priority (`scheme.homa_unscheduled_priority`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HomaUnschedPrio {
    /// One level per message, from its (announced) length; the cutoffs give each level an equal share of the
    /// run's unscheduled bytes, counted per message (paper §3.4). The default.
    Message,
    /// One level per packet, from the bytes the message has left *including* this packet (its length for the
    /// first packet, then less by each packet's payload), so a message's later unscheduled packets may climb to
    /// higher levels; the cutoffs give each level an equal share of the unscheduled bytes counted per packet by
    /// that remaining size, with the grants' bytes counted at size 0 (they go at the top level). This is the
    /// authors' simulator's `STATIC_CBF_GRADUATED` mode, the one its evaluation configuration sets
    /// (HomaSimulation `homaTransportConfig.ini`, `PriorityResolver::getUnschedPktsPrio`,
    /// `WorkloadEstimator::getRemainSizeCdfCbf`); the paper describes only the per-message rule. fctlab weighs
    /// each packet by its wire bytes (payload + `transport.header_bytes`) and a grant by `transport.ack_bytes`,
    /// from the run's own messages rather than the workload's CDF file.
    Remaining,
}

/// Two readings of the RAX paper's Eq. 3, Q_i = Q_1 E^(i-1), on a switch with K = `switch.queues` queues
/// (K - 1 thresholds between them). The paper's text is not consistent with itself on the last threshold: it
/// defines priority i as Q_(i-1) <= T < Q_i with Q_0 = 0 and Q_K = infinite, so with Q_1 = 1,280 us and E = 2 the
/// last finite threshold is Q_7 = 64 Q_1 = 81.92 ms at 1 GbE; yet it motivates the choice with "a slow flow may
/// take more than 200 ms to complete, which is 154x longer than the fast ones" (200 ms / 154 = Q_1), a span that
/// E = 2 covers in seven steps of E (Q_1 E^7 = 164 ms), not six.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RaxThresholds {
    /// Eq. 3 as printed: the thresholds are Q_1, Q_1 E, ..., Q_1 E^(K-2); the top queue holds T < Q_1 (the
    /// reading of the paper's parameter study, "Q_1, the threshold for the first priority"). 1 GbE, E = 2:
    /// 1.28 ms to 81.92 ms. The default.
    #[default]
    Literal,
    /// Q_1 is the fast flows' remaining time and E how much slower a flow may be in each queue down (the text
    /// beside Eq. 3, "E is the base that determines how much slower a flow can be in this priority queue"): the
    /// thresholds are Q_1 E, Q_1 E^2, ..., Q_1 E^(K-1), so that E = 2 spans the 154x the text asks for with 8
    /// queues. 1 GbE, E = 2: 2.56 ms to 163.84 ms (the same thresholds as `literal` with Q_1 doubled).
    Span,
}

/// What RAX's per-flow state belongs to when connections carry several flows (`transport.connections` other than
/// "per_flow"). The prototype keeps its flow table by 5-tuple (section IV-B: "the hook queries the flow table to
/// get its flow entry with the protocol, the IPs and ports"), so on a persistent connection, as the authors'
/// traffic generator keeps them (5 per host pair, reused request after request), the copy rate r_c and the
/// bytes counted in b_s + b_b run on from one response to the next; the paper says nothing of resetting them.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RaxState {
    /// Every flow starts afresh: r_c at the line rate, b_s + b_b from 0 (a new connection per flow, or a table
    /// that forgets a connection between its messages). The default.
    #[default]
    PerFlow,
    /// Keyed by connection: a flow on a reused connection starts from the r_c its previous flow left, and Eq. 2
    /// counts every byte the connection has carried (b_s + b_b over its flows; b_b is the flow's own backlog,
    /// since the previous flow's bytes were all acknowledged before it was reused). Needs
    /// `transport.connections` other than "per_flow"; RAX+ ignores it (it knows each flow's true remainder).
    PerConnection,
}

/// How PDQ's Early Start leaves nearly completed flows out of Availbw (PDQ paper, section 3.3.1 and its Availbw
/// algorithm).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EarlyStartRule {
    /// The paper's rule: walking the flows ahead in criticality order, a flow whose expected transmission time
    /// is under K of its RTTs (T_j / RTT_j < K) is not counted while the sum X of those ratios so far is under
    /// K (checked before it adds its ratio to X); every other flow ahead counts its rate. The next flow is
    /// granted the capacity the nearly completed flows hold, and the rate controller drains the overlap's
    /// queue. Not the default: any flow behind the nearly completed ones is granted that capacity, not only the
    /// next one, and at a bottleneck whose more critical flows were paused upstream (Algorithm 1 drops them
    /// from its list) that includes a long, least critical flow. Measured on Figure 7's burst across the
    /// recipe's tree (switch agents only): the long flow kept sending through the burst, the short flows'
    /// bytes used 55% of the bottleneck until the last one finished (25.0 ms) with up to 87 packets queued,
    /// against 83% (20.0 ms) and 14 packets with the projection; counting a flow only while X plus its ratio
    /// stays under K, or taking its least RTT, gave 61-65% and 53-68 packets.
    Paper,
    /// fctlab's projection (the default): each nearly completed flow ahead is projected from its bits left and
    /// its current rate, and the flow gets the share of the span one to two loop delays from now that they leave
    /// free (see `transport::rate`'s agent); the flows behind a flow not sending yet count its claim, so a less
    /// critical flow does not slip in. On a multi-port path the least share wins, and the bottleneck can
    /// under-fill (Figure 7 on the recipe's tree: 83% utilization by the short flows' bytes).
    Projection,
}

/// What a PDQ switch grants a flow its flow list has no room for (the list holds the 2 kappa most critical flows).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutsideList {
    /// A fair share of what the list's flows leave of the capacity, as RCP would give it: the capacity minus the
    /// rates of every flow in the list (Early Start exempts none here), split among the flows outside the list
    /// that requested over the last control period (each request weighted by its RTT over the period, so a
    /// flow counts about once). With a busy list that is nothing, and the flow is paused as before.
    FairShare,
    /// Paused (fctlab's earlier choice: the flow is less critical than every flow the list holds).
    Pause,
}

/// How a PDQ sender states its flow's criticality (PDQ paper, section 5.6, "Resilience to Inaccurate Flow
/// Information").
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Criticality {
    /// From the flow's true remaining size (the expected transmission time).
    Size,
    /// A random value drawn at the flow's start and kept.
    Random,
    /// From the bytes sent so far (fewer sent is more critical), updated every `pdq_criticality_update_bytes`.
    BytesSent,
}

impl Default for SchemeConfig {
    fn default() -> Self {
        SchemeConfig {
            name: SchemeName::Dctcp,
            preset: Preset::Native,
            priority: 0,
            thresholds_bytes: Vec::new(),
            probe_after_timeouts: 0,
            rank: RankBy::RemainingSize,
            rank_at: RankAt::Packet,
            size_info: None,
            l2dct_w_min: 0.125,
            l2dct_w_max: 2.5,
            l2dct_size_min_bytes: 204_800,
            l2dct_size_max_bytes: 1_048_576,
            qclimb_info: QclimbInfo::Bounds,
            slack_bytes: 100_000,
            ooo_handling: OooHandling::Qclimb,
            priority_loss_repair: PriorityLossRepair::Cumulative,
            pias_count: PiasCount::PerFlow,
            pias_idle_us: 500.0,
            pias_timeout_reset: 3,
            l2dct_increase: L2dctIncrease::Weight,
            rate_interval_us: 0.0,
            rcp_alpha: 0.4,
            rcp_beta: 0.4,
            pdq_early_start: true,
            pdq_early_termination: true,
            pdq_suppressed_probing: true,
            pdq_early_start_k: 2.0,
            pdq_early_start_rule: EarlyStartRule::Projection,
            pdq_outside_list: OutsideList::FairShare,
            pdq_criticality: Criticality::Size,
            pdq_criticality_update_bytes: 50_000,
            pdq_probe_factor: 0.2,
            pdq_dampening_rtts: 1.0,
            pdq_list_min: 8,
            pdq_list_max: 64,
            rcp_min_packets_per_rtt: 0.01,
            rcp_init_rate_fraction: 0.05,
            rate_nic_agents: false,
            rate_rto_rtts: 3.0,
            homa_rtt_bytes: 0,
            homa_unscheduled_levels: 0,
            homa_unscheduled_cutoffs_bytes: Vec::new(),
            homa_overcommit: 0,
            homa_resend_timeout_us: 10_000.0,
            homa_sizes: HomaSizes::Exact,
            homa_unscheduled_priority: HomaUnschedPrio::Message,
            homa_tail_boost: false,
            rax_q1_us: 0.0,
            rax_base: 2.0,
            rax_thresholds: RaxThresholds::Literal,
            rax_state: RaxState::PerFlow,
            rax_alpha: 0.25,
            rax_rate_interval_us: 100.0,
            hyline_threshold_bytes: 1_000_000,
            hyline_tcost_us: 100.0,
            hyline_signal_us: 0.0,
            hyline_large_init_cwnd_packets: 25.0,
            hyline_large_rto_min_us: 1_000_000.0,
            hyline_large_max_cwnd_packets: 225.0,
            qjump_size_thresholds_bytes: vec![8_760, 18_980, 27_740, 48_180, 77_380, 194_180, 973_820],
            qjump_bucket_bytes: vec![9_000, 19_500, 28_500, 49_500, 79_500, 199_500, 1_000_500, 1_312_500],
            qjump_interval_us: 0.0,
            qjump_queue: QjumpQueue::PriorityFifos,
        }
    }
}

/// The keys a scheme sets when the config leaves them out, as a partial config. Explicit keys always win.
///
/// - pfabric, native (fabric-aware): pFabric's values in the terms its authors state them, scaled to the fabric
///   the run builds (`net::scale` resolves them from the longest base RTT and its BDP before the run; an
///   explicit absolute key wins over its relative one). The pFabric paper sets the initial window to the BDP,
///   the queues to about twice the BDP and the fixed RTO to about three RTTs (HyLine's Table I restates them
///   so: "qsize = 2xBDP, initCwnd = BDP, minRTO ~ 3xRTT"); the ns-2 scripts' 15-packet cap on their 12-packet
///   BDP (YAPS) is 1.25 BDP. So: `transport.init_cwnd_bdp` 1, `transport.max_cwnd_bdp` 1.25,
///   `transport.rto_min_rtts` 3, `switch.buffer_bdp` 2 (the hosts' NICs take the switches' buffer, as the ns-2
///   scripts build host links with the switch queue); the mechanisms as below (fixed RTO, no duplicate-ACK
///   recovery, probe mode after 5 timeouts, no ECN). On the scripts' own fabric this gives RTO 44 us, window
///   12, cap 15, queue 24 packets: the ns-2 values up to rounding (the RTO: 45 us there).
/// - pfabric, preset "pfabric_ns2": the pFabric ns-2 scripts' absolute values (PlatformLab/HomaSimulation
///   @e13e9cd): 24-packet (36,000 B) queues, initial window 12; window capped at 15 packets as in YAPS
///   (NetSys/simulator @179b64e); no ECN. Rate control as the paper's §4.2 describes it, which is also what its
///   ns-2 TCP (`MinTCP`) did:
///   - a fixed RTO of 45 us (`rto_fixed`: no RTT estimate, no exponential back-off), about three RTTs of the
///     scripts' fabric (host links 2.5 + 0.2 us, core links 0.2 us: ~14.7 us idle for a full-size packet and
///     its ACK across the spine, the paper's ~14.6 us); on a fabric with a longer RTT these values are
///     meaningless (every timeout spurious): use `native`, which scales;
///   - no loss detection from duplicate ACKs (`dupack_threshold = 0`; the scripts' `dynamic_dupack_ 1000000`):
///     losses are found by the timer alone, and the retransmission after a timeout skips SACKed segments;
///   - probe mode after 5 consecutive timeouts (the scripts' `prob_cap_`, YAPS): one minimum-size probe
///     (header and one byte) per RTO instead of retransmissions, and slow start from one segment once an ACK
///     returns (`transport::tcp`). With the rank queue's eviction of several packets for one arrival
///     (`net::rank_queue`), probes no longer cost other flows their packets.
/// - pfabric, preset "pias" (and las, which the PIAS paper ran on pFabric's switch): 140 packets (210,000 B),
///   initial window 70, window capped at queue size - 1 = 139 packets (`maxcwnd_` in the PIAS ns-2 scripts,
///   HKUST-SING/PIAS-NS2 @5fb5867); the same `MinTCP` rate control as the scripts ran it: a fixed 250 us RTO
///   (`minrto_`, about three RTTs of the PIAS fabric's ~85 us), no duplicate-ACK retransmission (the scripts
///   spray packets, `perflowMP = 0`, which leaves `dynamic_dupack_ 1000000` in force), probe mode after 5
///   consecutive timeouts (`prob_cap_`).
/// - Every pfabric preset and las give the hosts' NICs the switches' pFabric queue size: the ns-2 scripts build
///   host links with the switch discipline (`duplex-link ... $switchAlg`), so a host's own flows share one small
///   priority-dropping queue.
/// - pias: probe mode after 2 consecutive timeouts (the PIAS paper, section 2: "e.g., two").
/// - l2dct, preset "pias": the additive increase as the PIAS ns-2 code has it (w_c / w_max per window, see
///   [`L2dctIncrease`]); preset "native" follows the L2DCT paper (w_c per window).
/// - tcp, dctcp, l2dct: nothing beyond the engine's defaults (RFC 6298 timers, 3 duplicate ACKs).
pub fn scheme_defaults(name: SchemeName, preset: Preset) -> serde_json::Value {
    use serde_json::json;
    match (name, preset) {
        (SchemeName::Pfabric, Preset::Native) => json!({
            "switch": {"buffer_bdp": 2.0, "ecn": "off"},
            "transport": {
                "init_cwnd_bdp": 1.0, "max_cwnd_bdp": 1.25, "rto_min_rtts": 3.0, "rto_fixed": true,
                "dupack_threshold": 0,
            },
            "scheme": {"probe_after_timeouts": 5},
        }),
        (SchemeName::Pfabric, Preset::PfabricNs2) => json!({
            "switch": {"buffer_bytes": 36_000, "ecn": "off"},
            "host": {"nic_buffer_bytes": 36_000},
            "transport": {
                "init_cwnd_packets": 12, "max_cwnd_packets": 15, "rto_min_us": 45.0, "rto_fixed": true,
                "dupack_threshold": 0,
            },
            "scheme": {"probe_after_timeouts": 5},
        }),
        (SchemeName::Pfabric, Preset::Pias) | (SchemeName::Las, _) => json!({
            "switch": {"buffer_bytes": 210_000, "ecn": "off"},
            "host": {"nic_buffer_bytes": 210_000},
            "transport": {
                "init_cwnd_packets": 70, "max_cwnd_packets": 139, "rto_min_us": 250.0, "rto_fixed": true,
                "dupack_threshold": 0,
            },
            "scheme": {"probe_after_timeouts": 5},
        }),
        (SchemeName::Pias, _) => json!({"scheme": {"probe_after_timeouts": 2}}),
        (SchemeName::L2dct, Preset::Pias) => json!({"scheme": {"l2dct_increase": "normalized"}}),
        (SchemeName::PdqBasic, _) => json!({"scheme": {
            "pdq_early_start": false, "pdq_early_termination": false, "pdq_suppressed_probing": false,
        }}),
        (SchemeName::PdqEs, _) => json!({"scheme": {
            "pdq_early_start": true, "pdq_early_termination": false, "pdq_suppressed_probing": false,
        }}),
        (SchemeName::PdqEsEt, _) => json!({"scheme": {
            "pdq_early_start": true, "pdq_early_termination": true, "pdq_suppressed_probing": false,
        }}),
        // Homa reads no ECN marks and has no window to cut
        (SchemeName::Homa, _) => json!({"switch": {"ecn": "off"}}),
        // HyLine's Table I (first class: initial window 25, RTO floor 4 ms) and the authors' scripts (first-class
        // window cap 50 packets); TCP NewReno with SACK, no ECN
        // QJump in HyLine's Table I: initial window 25, RTO floor 4 ms; TCP with SACK, no ECN (the QJump
        // scripts' `Sack` source)
        (SchemeName::Qjump, _) => json!({
            "switch": {"ecn": "off"},
            "transport": {"init_cwnd_packets": 25, "rto_min_us": 4000.0},
        }),
        (SchemeName::Hyline, _) => json!({
            "switch": {"ecn": "off"},
            "transport": {"init_cwnd_packets": 25, "max_cwnd_packets": 50, "rto_min_us": 4000.0},
        }),
        _ => json!({}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each scheme's flow-level facts, stated from the papers' mechanisms rather than read back from the table: the
    /// model (`None`: refused at the flow level), window-based (a congestion window limits it), and the set-up
    /// round trips besides a handshake's (the explicit-rate schemes' rate request in the SYN). A new scheme
    /// needs its line here.
    #[test]
    fn rows_carry_what_the_flow_level_decides() {
        use FluidModel as M;
        use SchemeName as S;
        let pdq = Some(M::Critical { size_aware: true });
        let expected = [
            (S::Tcp, Some(M::MaxMin), true, 0),
            (S::Dctcp, Some(M::MaxMin), true, 0),
            (S::Pfabric, Some(M::Srpt), true, 0),
            (S::Las, Some(M::Las), true, 0),
            (S::Pias, Some(M::Mlfq), true, 0),
            (S::L2dct, Some(M::MaxMin), true, 0),
            (S::Qclimb, Some(M::Mlfq), true, 0),
            (S::Rcp, Some(M::MaxMin), false, 1),
            (S::D3, Some(M::D3), false, 1),
            (S::Pdq, pdq, false, 1),
            (S::PdqBasic, pdq, false, 1),
            (S::PdqEs, pdq, false, 1),
            (S::PdqEsEt, pdq, false, 1),
            (S::Homa, Some(M::Homa), false, 0),
            (S::Rax, Some(M::Mlfq), true, 0),
            (S::RaxPlus, Some(M::Mlfq), true, 0),
            (S::Hyline, Some(M::Mlfq), true, 0),
            (S::Qjump, Some(M::Mlfq), true, 0),
        ];
        assert_eq!(expected.len(), SCHEME_COUNT);
        for (name, model, window, setup) in expected {
            let row = name.row();
            assert_eq!(row.flow_level.map(|f| f.model), model, "{}", row.name);
            assert_eq!((row.window, row.setup_rtts), (window, setup), "{}", row.name);
        }
    }

    #[test]
    fn rows_carry_the_facts_the_name_matches_stated() {
        use SchemeName as S;
        let family = |s: SchemeName| s.family();
        for s in [S::Rcp, S::D3, S::Pdq, S::PdqBasic, S::PdqEs, S::PdqEsEt] {
            assert_eq!(family(s), FamilyName::Rate);
        }
        assert_eq!((family(S::Homa), family(S::Hyline), family(S::Qjump)), (FamilyName::Homa, FamilyName::Hyline, FamilyName::Qjump));
        let pdq: Vec<_> = SCHEMES.iter().filter(|r| r.scheme.is_pdq()).map(|r| r.name).collect();
        assert_eq!(pdq, ["pdq", "pdq-basic", "pdq-es", "pdq-es-et"]);
        let ranked: Vec<_> = SCHEMES.iter().filter(|r| r.scheme.rank_queue()).map(|r| r.name).collect();
        assert_eq!(ranked, ["pfabric", "las"]);
        let thresholds: Vec<_> = SCHEMES.iter().filter(|r| r.needs_thresholds).map(|r| r.name).collect();
        assert_eq!(thresholds, ["pias", "qclimb"]);
        let tcp: Vec<_> = SCHEMES.iter().filter(|r| r.protocol == Protocol::Tcp).map(|r| r.name).collect();
        assert_eq!(tcp, ["tcp", "pfabric", "las", "hyline", "qjump"]);
        let dctcp: Vec<_> = SCHEMES.iter().filter(|r| r.protocol == Protocol::Dctcp).map(|r| r.name).collect();
        assert_eq!(dctcp, ["dctcp", "pias", "l2dct", "qclimb", "rax", "rax-plus"]);
    }

    /// A row lists a preset besides native exactly when that preset fills something the native one does not.
    #[test]
    fn presets_listed_are_the_ones_that_differ() {
        for row in &SCHEMES {
            assert_eq!(row.presets.first(), Some(&Preset::Native), "{}", row.name);
            for preset in [Preset::Pias, Preset::PfabricNs2] {
                let differs = scheme_defaults(row.scheme, preset) != scheme_defaults(row.scheme, Preset::Native);
                assert_eq!(row.presets.contains(&preset), differs, "{} {preset:?}", row.name);
            }
        }
    }

    #[test]
    fn shown_keys_are_scheme_keys() {
        let keys = serde_json::to_value(SchemeConfig::default()).unwrap();
        for row in &SCHEMES {
            for k in row.keys {
                assert!(keys.get(k).is_some(), "{}: scheme.{k} is not a key", row.name);
            }
        }
    }
}
