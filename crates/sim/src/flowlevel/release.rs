//! The flow level's per-flow results: kept whole and returned when the run ends, or handed over in batches while
//! it runs ([`Batches`]), in flow-id order behind a watermark. Flow `i` is released once it and every flow
//! before it are done (finished, or given up by the scheme); the rows from the watermark to the highest flow
//! written so far are held. Flows arrive in order of start and finish roughly in that order, so what is held is
//! about the flows in flight (plus those that finish later than flows after them). When the run ends, every
//! flow not yet released is (unfinished, or never started: their rows as [`FlowResults::new`] leaves them).
//! The batches are cut at multiples of `rows` from flow 0 whatever the order flows finish in, so a batched
//! run's rows equal the whole run's row for row (tested).

use crate::flows::{FlowError, FlowResults};
use crate::record::Batches;

/// Rows added to the held ones at a time.
const GROW: usize = 4_096;

pub(crate) struct Release<'a> {
    /// The rows of flows `base..base + cols.len()` (whole runs: every flow, `base` 0).
    pub cols: FlowResults,
    base: usize,
    /// Rows held (`cols`' length: its columns grow together; rows past the last flow written are as
    /// [`FlowResults::new`] makes them, and not done).
    held: usize,
    n: usize,
    /// Batched runs: where the batches go, which held flows are done, and how many held flows from `base` on
    /// are done (the watermark, less `base`).
    out: Option<Batches<'a>>,
    done: Vec<bool>,
    ready: usize,
}

impl<'a> Release<'a> {
    pub fn new(n: usize, out: Option<Batches<'a>>) -> Self {
        let whole = out.is_none();
        Release {
            cols: FlowResults::new(if whole { n } else { 0 }),
            base: 0,
            held: if whole { n } else { 0 },
            n,
            out: out.map(|b| Batches { rows: b.rows.max(1), each: b.each }),
            done: Vec::new(),
            ready: 0,
        }
    }

    /// The row of flow `i` in `cols` (held from now on, with the flows before it).
    #[inline]
    pub fn row(&mut self, i: usize) -> usize {
        let r = i - self.base; // (a released flow is never written again: it is done)
        if r >= self.held {
            // (rows made GROW at a time, up to the last flow: a row each arrival cost an allocation per column)
            self.held = (r + 1).max(self.held + GROW).min(self.n - self.base);
            self.cols.grow(self.held);
            self.done.resize(self.held, false);
        }
        r
    }

    /// Flow `i` is done: finished, or given up.
    #[inline]
    pub fn done(&mut self, i: usize) {
        if self.out.is_some() {
            let r = self.row(i);
            self.done[r] = true;
        }
    }

    /// Hand over the full batches that the watermark has passed.
    pub fn release(&mut self) -> Result<(), FlowError> {
        let Some(rows) = self.out.as_ref().map(|o| o.rows) else { return Ok(()) };
        while self.ready < self.held && self.done[self.ready] {
            self.ready += 1;
        }
        while self.ready >= rows {
            self.hand_over(rows)?;
        }
        Ok(())
    }

    /// The run has ended: hand over every flow not yet released (whole runs: nothing), and return what is kept.
    pub fn finish(mut self) -> Result<FlowResults, FlowError> {
        let Some(rows) = self.out.as_ref().map(|o| o.rows) else { return Ok(self.cols) };
        if self.n == 0 {
            (self.out.as_mut().unwrap().each)(0, FlowResults::new(0))?;
        }
        while self.base < self.n {
            let k = rows.min(self.n - self.base);
            if self.held < k {
                self.row(self.base + k - 1);
            }
            self.ready = self.ready.max(k);
            self.hand_over(k)?;
        }
        Ok(FlowResults::new(0))
    }

    fn hand_over(&mut self, k: usize) -> Result<(), FlowError> {
        let batch = self.cols.split_front(k);
        self.done.drain(..k);
        let first = self.base;
        self.base += k;
        self.held -= k;
        self.ready -= k;
        (self.out.as_mut().unwrap().each)(first, batch)
    }
}
