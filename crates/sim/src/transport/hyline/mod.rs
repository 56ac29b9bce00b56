//! HyLine (IFIP Networking 2018; authors' ns-2 code at github.com/Soheil-ab/HyLine): small flows at line rate in the high-priority queue;
//! large flows scheduled by a central manager with path-aware preemption, paused by PFC. What exists so far: the
//! manager's logic ([`manager`]), tested on the paper's worked example; the engine's control plane, PFC and
//! source routing are not built yet.

pub mod manager;
