//! Host-side tagging policies: the priority each data packet carries (0 is the highest). A switch maps a
//! priority to one of its queues; tagging and queueing are separate concerns.
//!
//! Only the "fixed" policy exists today: every packet of a flow carries the flow's own priority, taken from
//! the trace (`priority` column) or from `scheme.priority`. PIAS, QCLIMB and RAX tag by bytes sent, bounds and
//! remaining time: they come with their issues.

/// How a flow's data packets are tagged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tagging {
    /// One priority per flow.
    Fixed,
}

impl Tagging {
    /// Priority of a flow's packets under the fixed policy: its own if the trace gave one, else the default.
    #[inline]
    pub fn flow_priority(&self, given: Option<u8>, default: u8) -> u8 {
        match self {
            Tagging::Fixed => given.unwrap_or(default),
        }
    }
}
