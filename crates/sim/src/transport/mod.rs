//! Transports: per-flow state machines. A packet goes in, packets come out, and the flow says when its
//! retransmission timer should fire (`rto_deadline`); the engine owns time and the event queue.

pub mod bitset;
pub mod homa;
pub mod rate;
pub mod scoreboard;
pub mod tcp;
