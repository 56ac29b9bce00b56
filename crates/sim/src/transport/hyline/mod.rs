//! HyLine (IFIP Networking 2018; the authors' ns-2 code is at github.com/Soheil-ab/HyLine): flows up to a
//! threshold H go at line rate in the high-priority queue over ECMP; larger flows are scheduled by a central
//! manager with path-aware preemption ([`manager`]), source-routed on the path it gives them, and paused by PFC
//! when first-class traffic fills a queue. The engine's side (the control plane, the hosts' TCP under the
//! manager's signals, source routing) is `engine::hyline`.

pub mod manager;
