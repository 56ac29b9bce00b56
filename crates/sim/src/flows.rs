//! Flows in and results out, as columns (one entry per flow, in flow-id order).

use crate::config::SizeInfo;
use crate::units::Ps;
use std::fmt;

/// The flows of a run. Flow i is (src[i], dst[i], size_bytes[i], start_ps[i], priority[i]).
#[derive(Debug, Clone, Default)]
pub struct FlowSet {
    pub src: Vec<u32>,
    pub dst: Vec<u32>,
    pub size_bytes: Vec<u64>,
    pub start_ps: Vec<Ps>,
    /// Priority for the "fixed" tagging policy (0 is the highest); empty means the scheme's default for all.
    pub priority: Vec<u8>,
    /// Estimated flow sizes (pFabric ranked by estimate; QCLIMB-PP and -FP); empty means the true sizes.
    pub estimate_bytes: Vec<u64>,
    /// Predicted lower and upper bounds of flow sizes (QCLIMB); empty when not given.
    pub lower_bytes: Vec<u64>,
    pub upper_bytes: Vec<u64>,
    /// Dependencies: flow i starts at max(start_ps[i], the instant flow after[i] finishes) (its receiver holds
    /// every byte). [`NO_PARENT`] for an independent flow; a parent is always an earlier flow (after[i] < i),
    /// so chains cannot loop. Empty means no flow depends on another.
    pub after: Vec<u32>,
    /// Scheme qclimb only: false marks a flow QCLIMB knows nothing of, scheduled as PIAS (tagged by bytes sent
    /// over the same thresholds, TCP's own out-of-order handling). Empty means every flow uses QCLIMB.
    pub qclimb: Vec<bool>,
    /// Connection ids (`transport.connections = "trace"`): flows with the same id share one TCP connection's
    /// state, and must have the same src and dst. Empty when the trace names no connections.
    pub conn: Vec<u32>,
    /// Deadlines, as an absolute time (the flow must finish by `deadline_ps[i]`), or [`NO_DEADLINE`]; empty when
    /// no flow has one. Deadline-aware schemes (D3, PDQ) schedule by them and may terminate a flow that cannot
    /// meet its own; the others ignore them (the results say whether each flow met it).
    pub deadline_ps: Vec<Ps>,
    /// The application model (TCP family; see `transport::tcp`): each flow's data generation rate in bit/s, or
    /// [`NO_RATE`] for a flow whose bytes are all ready at its start. Empty when no flow has one.
    pub gen_rate_bps: Vec<u64>,
    /// Bytes of each flow available at once (cached), written at its start before the generation at
    /// `gen_rate_bps` produces the rest; at most the flow's size. Empty means none cached.
    pub cached_bytes: Vec<u64>,
    /// Source routes (TCP-family schemes with strict-priority switches): the index of each flow's path among the
    /// equal-cost paths from its source to its destination, or [`NO_PATH`] for ECMP. Paths are ordered by the
    /// index of the port taken at each switch with a choice, the first such switch most significant
    /// (`engine::family::routed`). Empty when no flow has one.
    pub path: Vec<u32>,
}

/// `FlowSet::path` of a flow routed by ECMP.
pub const NO_PATH: u32 = u32::MAX;

/// `FlowSet::gen_rate_bps` of a flow whose bytes are all ready at its start.
pub const NO_RATE: u64 = 0;

/// `FlowSet::deadline_ps` of a flow without a deadline.
pub const NO_DEADLINE: Ps = crate::units::NEVER;

/// `FlowSet::after` of a flow that depends on none.
pub const NO_PARENT: u32 = u32::MAX;

/// The type of a flow input column's entries, by numpy's name for it (`"uint32"`, `"uint64"`, `"uint8"`,
/// `"bool"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    Uint32,
    Uint64,
    Uint8,
    Bool,
}

impl Dtype {
    /// numpy's name of the type.
    pub fn as_str(self) -> &'static str {
        match self {
            Dtype::Uint32 => "uint32",
            Dtype::Uint64 => "uint64",
            Dtype::Uint8 => "uint8",
            Dtype::Bool => "bool",
        }
    }
}

/// One input column of [`FlowSet`], as a front end hands it over (the binding's `flow_columns()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct FlowColumn {
    /// The column's name across the binding (FlowSet's field, except `after_flow` for `after`).
    pub name: &'static str,
    pub dtype: Dtype,
    /// Every run needs it; an optional column left out is empty in the FlowSet.
    pub required: bool,
    /// The entry that means "none" for one flow in a given column, if the column has one.
    pub none: Option<u64>,
    /// What an entry means, in one line.
    pub meaning: &'static str,
}

/// Every input column of [`FlowSet`], in field order: the single description front ends build their flows from.
pub const FLOW_COLUMNS: &[FlowColumn] = &[
    FlowColumn { name: "src", dtype: Dtype::Uint32, required: true, none: None, meaning: "the sending host" },
    FlowColumn {
        name: "dst",
        dtype: Dtype::Uint32,
        required: true,
        none: None,
        meaning: "the receiving host (not src)",
    },
    FlowColumn {
        name: "size_bytes",
        dtype: Dtype::Uint64,
        required: true,
        none: None,
        meaning: "bytes to deliver (more than 0)",
    },
    FlowColumn {
        name: "start_ps",
        dtype: Dtype::Uint64,
        required: true,
        none: None,
        meaning: "arrival time in picoseconds",
    },
    FlowColumn {
        name: "priority",
        dtype: Dtype::Uint8,
        required: false,
        none: None,
        meaning: "priority for the fixed tagging policy (0 is the highest)",
    },
    FlowColumn {
        name: "estimate_bytes",
        dtype: Dtype::Uint64,
        required: false,
        none: None,
        meaning: "estimated size (scheme.size_info = \"estimate\"; pFabric ranked by estimate, QCLIMB-PP and -FP, Homa announcing it)",
    },
    FlowColumn {
        name: "lower_bytes",
        dtype: Dtype::Uint64,
        required: false,
        none: None,
        meaning: "predicted lower bound of the size (scheme.size_info = \"bounds\" or \"lower\"; QCLIMB; given with upper_bytes)",
    },
    FlowColumn {
        name: "upper_bytes",
        dtype: Dtype::Uint64,
        required: false,
        none: None,
        meaning: "predicted upper bound of the size (scheme.size_info = \"bounds\" or \"upper\"; QCLIMB; given with lower_bytes)",
    },
    FlowColumn {
        name: "after_flow",
        dtype: Dtype::Uint32,
        required: false,
        none: Some(NO_PARENT as u64),
        meaning: "the earlier flow this one waits for before it starts",
    },
    FlowColumn {
        name: "qclimb",
        dtype: Dtype::Bool,
        required: false,
        none: None,
        meaning: "scheme qclimb: false hands the flow to PIAS",
    },
    FlowColumn {
        name: "conn",
        dtype: Dtype::Uint32,
        required: false,
        none: None,
        meaning: "connection id (transport.connections = \"trace\"; one pair of hosts per id)",
    },
    FlowColumn {
        name: "deadline_ps",
        dtype: Dtype::Uint64,
        required: false,
        none: Some(NO_DEADLINE),
        meaning: "absolute deadline in picoseconds (after start_ps)",
    },
    FlowColumn {
        name: "gen_rate_bps",
        dtype: Dtype::Uint64,
        required: false,
        none: Some(NO_RATE),
        meaning: "the application's data generation rate in bit/s",
    },
    FlowColumn {
        name: "cached_bytes",
        dtype: Dtype::Uint64,
        required: false,
        none: None,
        meaning: "bytes ready at the start before generation (at most size_bytes)",
    },
    FlowColumn {
        name: "path",
        dtype: Dtype::Uint32,
        required: false,
        none: Some(NO_PATH as u64),
        meaning: "index of the source route among the equal-cost paths",
    },
];

/// A [`FlowSet`] column to fill, typed by its entries.
#[derive(Debug)]
pub enum ColumnMut<'a> {
    Uint32(&'a mut Vec<u32>),
    Uint64(&'a mut Vec<u64>),
    Uint8(&'a mut Vec<u8>),
    Bool(&'a mut Vec<bool>),
}

/// Most flows a run may have: flow ids travel in 30 bits inside events.
pub const MAX_FLOWS: usize = (1 << 30) - 2;

/// Flows that cannot be simulated: a message naming the flow and the column, and where it is known, the cell
/// itself ([`FlowCell`]), so that a front end can point at the row and column of the file the flows came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowError {
    /// The whole message, as printed.
    pub message: String,
    /// The cell at fault, when the fault is one flow's (or one column's).
    pub cell: Option<FlowCell>,
}

/// Where a [`FlowError`] is: a column and, when one flow is at fault, that flow (its id, 0-based), with the fault
/// said of the cell alone (`problem`), for a message that names a file's row instead of the flow id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowCell {
    pub flow: Option<usize>,
    pub column: &'static str,
    pub problem: String,
}

impl FlowError {
    /// An error of the flows as a whole.
    pub fn new(message: impl Into<String>) -> Self {
        FlowError { message: message.into(), cell: None }
    }

    /// An error of one flow's cell in `column` (`flow`: None for the column as a whole).
    pub fn at(flow: Option<usize>, column: &'static str, problem: impl Into<String>, message: impl Into<String>) -> Self {
        FlowError { message: message.into(), cell: Some(FlowCell { flow, column, problem: problem.into() }) }
    }
}

impl fmt::Display for FlowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for FlowError {}

impl FlowSet {
    pub fn len(&self) -> usize {
        self.src.len()
    }

    /// Are QCLIMB's bounds given for every flow?
    pub fn has_bounds(&self) -> bool {
        self.lower_bytes.len() == self.len() && self.upper_bytes.len() == self.len()
    }

    pub fn is_empty(&self) -> bool {
        self.src.is_empty()
    }

    /// The bytes a scheme that knows `info` of flow `i`'s size believes it has left after `done` bytes
    /// ([`SizeInfo::remaining`] over the flow's columns; a column the check of the flows let be absent is not
    /// read).
    #[inline]
    pub fn known_remaining(&self, i: usize, info: SizeInfo, done: u64) -> u64 {
        let size = self.size_bytes[i];
        let col = |c: &Vec<u64>| c.get(i).copied().unwrap_or(size);
        info.remaining(size, col(&self.estimate_bytes), col(&self.lower_bytes), col(&self.upper_bytes), done)
    }

    /// The size a scheme that knows `info` believes flow `i` has before it sends ([`SizeInfo::at_start`]).
    #[inline]
    pub fn known_at_start(&self, i: usize, info: SizeInfo) -> u64 {
        self.known_remaining(i, info, 0)
    }

    /// Does flow i wait for another flow before it starts?
    #[inline]
    pub fn parent(&self, i: usize) -> Option<u32> {
        self.after.get(i).copied().filter(|&a| a != NO_PARENT)
    }

    /// The column named `name` in [`FLOW_COLUMNS`], to fill; `None` for a name not in the table. Every field is
    /// named here (the destructuring stops compiling when a field is added without its column).
    pub fn column_mut(&mut self, name: &str) -> Option<ColumnMut<'_>> {
        let FlowSet {
            src,
            dst,
            size_bytes,
            start_ps,
            priority,
            estimate_bytes,
            lower_bytes,
            upper_bytes,
            after,
            qclimb,
            conn,
            deadline_ps,
            gen_rate_bps,
            cached_bytes,
            path,
        } = self;
        Some(match name {
            "src" => ColumnMut::Uint32(src),
            "dst" => ColumnMut::Uint32(dst),
            "size_bytes" => ColumnMut::Uint64(size_bytes),
            "start_ps" => ColumnMut::Uint64(start_ps),
            "priority" => ColumnMut::Uint8(priority),
            "estimate_bytes" => ColumnMut::Uint64(estimate_bytes),
            "lower_bytes" => ColumnMut::Uint64(lower_bytes),
            "upper_bytes" => ColumnMut::Uint64(upper_bytes),
            "after_flow" => ColumnMut::Uint32(after),
            "qclimb" => ColumnMut::Bool(qclimb),
            "conn" => ColumnMut::Uint32(conn),
            "deadline_ps" => ColumnMut::Uint64(deadline_ps),
            "gen_rate_bps" => ColumnMut::Uint64(gen_rate_bps),
            "cached_bytes" => ColumnMut::Uint64(cached_bytes),
            "path" => ColumnMut::Uint32(path),
            _ => return None,
        })
    }

    /// Check every flow against the fabric: lengths agree, hosts exist, src != dst, size > 0.
    pub fn validate(&self, hosts: u32) -> Result<(), FlowError> {
        let n = self.src.len();
        let same = |name: &str, len: usize| {
            if len != n {
                Err(FlowError::new(format!("flows.{name}: has {len} entries but flows.src has {n}")))
            } else {
                Ok(())
            }
        };
        same("dst", self.dst.len())?;
        same("size_bytes", self.size_bytes.len())?;
        same("start_ps", self.start_ps.len())?;
        if !self.priority.is_empty() {
            same("priority", self.priority.len())?;
        }
        if !self.estimate_bytes.is_empty() {
            same("estimate_bytes", self.estimate_bytes.len())?;
        }
        if !self.lower_bytes.is_empty() || !self.upper_bytes.is_empty() {
            same("lower_bytes", self.lower_bytes.len())?;
            same("upper_bytes", self.upper_bytes.len())?;
            for i in 0..n {
                if self.lower_bytes[i] > self.upper_bytes[i] {
                    return Err(FlowError::new(format!(
                        "flow {i} has lower_bytes {} > upper_bytes {}",
                        self.lower_bytes[i], self.upper_bytes[i]
                    )));
                }
            }
        }
        if !self.after.is_empty() {
            same("after", self.after.len())?;
            for (i, &a) in self.after.iter().enumerate() {
                if a != NO_PARENT && a as usize >= i {
                    return Err(FlowError::new(format!(
                        "flow {i} has after_flow {a}: a flow may only wait for an earlier flow (a smaller flow id)"
                    )));
                }
            }
        }
        if !self.qclimb.is_empty() {
            same("qclimb", self.qclimb.len())?;
        }
        if !self.conn.is_empty() {
            same("conn", self.conn.len())?;
            // one connection joins one pair of hosts: the first flow of each id fixes its pair
            let mut pair: std::collections::HashMap<u32, (u32, u32, usize)> = std::collections::HashMap::new();
            for i in 0..n {
                let (s, d) = (self.src[i], self.dst[i]);
                let &mut (s0, d0, first) = pair.entry(self.conn[i]).or_insert((s, d, i));
                if (s0, d0) != (s, d) {
                    return Err(FlowError::new(format!(
                        "flow {i} has conn {} from host {s} to {d}, but flow {first} of that connection goes from {s0} to {d0}",
                        self.conn[i]
                    )));
                }
            }
        }
        if !self.deadline_ps.is_empty() {
            same("deadline_ps", self.deadline_ps.len())?;
            for i in 0..n {
                if self.deadline_ps[i] != NO_DEADLINE && self.deadline_ps[i] <= self.start_ps[i] {
                    return Err(FlowError::new(format!(
                        "flow {i} has deadline_ps {} at or before its start_ps {}",
                        self.deadline_ps[i], self.start_ps[i]
                    )));
                }
            }
        }
        if !self.gen_rate_bps.is_empty() {
            same("gen_rate_bps", self.gen_rate_bps.len())?;
        }
        if !self.cached_bytes.is_empty() {
            same("cached_bytes", self.cached_bytes.len())?;
            for i in 0..n {
                if self.cached_bytes[i] > self.size_bytes[i] {
                    return Err(FlowError::new(format!(
                        "flow {i} has cached_bytes {} > size_bytes {}",
                        self.cached_bytes[i], self.size_bytes[i]
                    )));
                }
            }
        }
        if !self.path.is_empty() {
            same("path", self.path.len())?;
        }
        if n > MAX_FLOWS {
            return Err(FlowError::new(format!("flows: too many flows ({n}; at most {MAX_FLOWS})")));
        }
        for i in 0..n {
            if self.src[i] >= hosts {
                return Err(FlowError::new(format!("flow {i} has src {} but the topology has {hosts} hosts", self.src[i])));
            }
            if self.dst[i] >= hosts {
                return Err(FlowError::new(format!("flow {i} has dst {} but the topology has {hosts} hosts", self.dst[i])));
            }
            if self.src[i] == self.dst[i] {
                return Err(FlowError::new(format!("flow {i} has src == dst ({})", self.src[i])));
            }
            if self.size_bytes[i] == 0 {
                return Err(FlowError::new(format!("flow {i} has size_bytes 0")));
            }
        }
        Ok(())
    }
}

/// Per-flow results, indexed by flow id.
/// Calls macro `$m` with the names of every column of [`FlowResults`] (a literal built from them names every
/// field, so a column added to the struct and not here does not compile).
macro_rules! result_columns {
    ($m:ident) => {
        $m!(
            start_ps, finish_ps, sender_done_ps, ideal_fct_ps, retransmits, timeouts, bytes_sent, bytes_delivered,
            bytes_dropped, ecn_marked, probes, fast_recoveries, priority_losses, duplicate_data, ooo_max_segments,
            data_arrivals, queue_delay_ps, terminated, app_done_ps, copy_rate_bps, man_wait_ps, man_stopped_ps,
            man_preemptions
        )
    };
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlowResults {
    /// When the flow started: its `start_ps`, or later when it waited for another flow; `NEVER` if it never
    /// started (its parent did not finish).
    pub start_ps: Vec<Ps>,
    /// When the receiver held every byte in order; `NEVER` if unfinished.
    pub finish_ps: Vec<Ps>,
    /// When the sender had every byte acknowledged; `NEVER` if not.
    pub sender_done_ps: Vec<Ps>,
    /// The flow alone in the idle fabric, sending at line rate from its first packet.
    pub ideal_fct_ps: Vec<Ps>,
    /// Data packets sent again (fast retransmit, recovery, or timeout).
    pub retransmits: Vec<u32>,
    /// Retransmission timeouts.
    pub timeouts: Vec<u32>,
    /// Payload bytes put on the wire by the sender, retransmissions included.
    pub bytes_sent: Vec<u64>,
    /// Payload bytes that reached the receiver host (duplicates included).
    pub bytes_delivered: Vec<u64>,
    /// Payload bytes dropped in the fabric.
    pub bytes_dropped: Vec<u64>,
    /// Data packets that arrived with the ECN mark (congestion experienced).
    pub ecn_marked: Vec<u32>,
    /// Probe packets sent in probe mode (pFabric, PIAS).
    pub probes: Vec<u32>,
    /// Loss events by how they were found: duplicate ACKs (fast recoveries), QCLIMB's priority-based detection;
    /// timeouts are `timeouts`.
    pub fast_recoveries: Vec<u32>,
    pub priority_losses: Vec<u32>,
    /// Data segments that reached the receiver when it already held them: spurious retransmissions (each
    /// such copy is one retransmission that was not needed). Exported as `spurious_retransmits`.
    pub duplicate_data: Vec<u32>,
    /// Most segments the receiver held out of order at once.
    pub ooo_max_segments: Vec<u32>,
    /// TCP family (empty for the others): the data packets that reached the receiver host (duplicates
    /// included), and the time they spent in queues, summed (ps): each packet's one-way delay, from its send
    /// stamp (whole ns) to its arrival, less its way through the idle fabric (serialization of its bytes and
    /// propagation at each hop of the flow's ECMP path: under spraying every path of a leaf-spine or fat-tree
    /// has the same), so the NIC's queue and every switch's; filled when the run ends. Exported as
    /// `queue_delay_ns`, the mean per data packet.
    pub data_arrivals: Vec<u32>,
    pub queue_delay_ps: Vec<u64>,
    /// The scheme gave up on the flow (D3's and PDQ's Early Termination): it never finishes.
    pub terminated: Vec<bool>,
    /// When the flow's application finished writing its bytes into the send buffer (TCP family): its start
    /// for a flow whose bytes are all ready and that fit the send buffer; `NEVER` if it never finished.
    pub app_done_ps: Vec<Ps>,
    /// RAX's measured copy rate r_c (bit/s) when the flow closed (or the run ended); 0 for flows of other
    /// schemes (not NaN: results compare equal run to run).
    pub copy_rate_bps: Vec<f64>,
    /// HyLine (empty for other schemes): the time from a flow's arrival to its first CTS (`NEVER` for
    /// first-class flows and for flows never let in), the time it spent stopped after having been let in, and how
    /// often the manager preempted it.
    pub man_wait_ps: Vec<Ps>,
    pub man_stopped_ps: Vec<Ps>,
    pub man_preemptions: Vec<u32>,
}

impl FlowResults {
    pub fn new(n: usize) -> Self {
        FlowResults {
            start_ps: vec![crate::units::NEVER; n],
            finish_ps: vec![crate::units::NEVER; n],
            sender_done_ps: vec![crate::units::NEVER; n],
            ideal_fct_ps: vec![0; n],
            retransmits: vec![0; n],
            timeouts: vec![0; n],
            bytes_sent: vec![0; n],
            bytes_delivered: vec![0; n],
            bytes_dropped: vec![0; n],
            ecn_marked: vec![0; n],
            probes: vec![0; n],
            fast_recoveries: vec![0; n],
            priority_losses: vec![0; n],
            duplicate_data: vec![0; n],
            ooo_max_segments: vec![0; n],
            data_arrivals: Vec::new(),
            queue_delay_ps: Vec::new(),
            terminated: vec![false; n],
            app_done_ps: vec![crate::units::NEVER; n],
            copy_rate_bps: vec![0.0; n],
            man_wait_ps: Vec::new(),
            man_stopped_ps: Vec::new(),
            man_preemptions: Vec::new(),
        }
    }

    /// Rows `lo..hi` of every column that holds rows (a column left empty stays empty): the results of flows
    /// `lo..hi` as a batch of their own.
    pub fn rows(&self, lo: usize, hi: usize) -> Self {
        macro_rules! cut {
            ($($c:ident),*) => {
                FlowResults { $($c: if self.$c.is_empty() { Vec::new() } else { self.$c[lo..hi].to_vec() }),* }
            };
        }
        result_columns!(cut)
    }

    /// Take the first `k` rows out of every column that holds rows, as a batch of their own (the rows after them
    /// move to the front).
    pub fn split_front(&mut self, k: usize) -> Self {
        macro_rules! take {
            ($($c:ident),*) => {
                FlowResults { $($c: if self.$c.is_empty() { Vec::new() } else { self.$c.drain(..k).collect() }),* }
            };
        }
        result_columns!(take)
    }

    /// Extend the columns that [`FlowResults::new`] fills to `len` rows, with its values (a flow not started,
    /// not finished); the others stay empty.
    pub fn grow(&mut self, len: usize) {
        let d = FlowResults::new(1);
        macro_rules! grow {
            ($($c:ident),*) => {{
                $(if !d.$c.is_empty() && self.$c.len() < len {
                    self.$c.resize(len, d.$c[0]);
                })*
            }};
        }
        result_columns!(grow);
    }

    /// Only `bytes_dropped` (for `n` flows), every other column empty: what the switches' side of a two-thread
    /// run records (`engine::parallel`).
    pub fn drops_only(n: usize) -> Self {
        FlowResults {
            start_ps: Vec::new(),
            finish_ps: Vec::new(),
            sender_done_ps: Vec::new(),
            ideal_fct_ps: Vec::new(),
            retransmits: Vec::new(),
            timeouts: Vec::new(),
            bytes_sent: Vec::new(),
            bytes_delivered: Vec::new(),
            bytes_dropped: vec![0; n],
            ecn_marked: Vec::new(),
            probes: Vec::new(),
            fast_recoveries: Vec::new(),
            priority_losses: Vec::new(),
            duplicate_data: Vec::new(),
            ooo_max_segments: Vec::new(),
            data_arrivals: Vec::new(),
            queue_delay_ps: Vec::new(),
            terminated: Vec::new(),
            app_done_ps: Vec::new(),
            copy_rate_bps: Vec::new(),
            man_wait_ps: Vec::new(),
            man_stopped_ps: Vec::new(),
            man_preemptions: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_column_of_the_table_is_a_field_of_its_type() {
        let mut f = FlowSet::default();
        let mut names: Vec<&str> = FLOW_COLUMNS.iter().map(|c| c.name).collect();
        for c in FLOW_COLUMNS {
            let got = match f.column_mut(c.name) {
                Some(ColumnMut::Uint32(_)) => Dtype::Uint32,
                Some(ColumnMut::Uint64(_)) => Dtype::Uint64,
                Some(ColumnMut::Uint8(_)) => Dtype::Uint8,
                Some(ColumnMut::Bool(_)) => Dtype::Bool,
                None => panic!("column {} has no field", c.name),
            };
            assert_eq!(got, c.dtype, "column {}", c.name);
        }
        assert!(f.column_mut("after").is_none());
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), FLOW_COLUMNS.len(), "a column is listed twice");
        // FlowSet's 15 fields, each bound by the destructuring in column_mut (a field without an arm is unused)
        assert_eq!(FLOW_COLUMNS.len(), 15);
        let required: Vec<&str> = FLOW_COLUMNS.iter().filter(|c| c.required).map(|c| c.name).collect();
        assert_eq!(required, ["src", "dst", "size_bytes", "start_ps"]);
    }

    #[test]
    fn the_sentinels_are_the_constants() {
        for c in FLOW_COLUMNS {
            assert_eq!(serde_json::to_value(c.dtype).unwrap(), c.dtype.as_str());
        }
        let none = |name: &str| FLOW_COLUMNS.iter().find(|c| c.name == name).unwrap().none;
        assert_eq!(none("after_flow"), Some(NO_PARENT as u64));
        assert_eq!(none("path"), Some(NO_PATH as u64));
        assert_eq!(none("deadline_ps"), Some(NO_DEADLINE));
        assert_eq!(none("gen_rate_bps"), Some(NO_RATE));
        let json = serde_json::to_string(&FLOW_COLUMNS[8]).unwrap();
        assert_eq!(
            json,
            r#"{"name":"after_flow","dtype":"uint32","required":false,"none":4294967295,"meaning":"the earlier flow this one waits for before it starts"}"#
        );
    }
}
