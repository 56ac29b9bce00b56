//! Controllers: central logic that some schemes put beside the fabric. A controller sees requests, finishes and
//! time, and answers with signals; it never touches packets or the event queue. The engine's side of a scheme
//! carries the messages with their delays and makes the hosts obey (`engine::family::hyline` for HyLine).
//!
//! - [`hyline`]: HyLine's manager (IFIP Networking 2018): flows above a size threshold H are admitted, given a
//!   path and preempted by it; flows up to H go at once at high priority over ECMP and never ask.

pub mod hyline;
