//! A rank's schedule stored as runs of steps that repeat with a stride.
//!
//! The algorithms whose step count grows with the communicator (rings,
//! pairwise exchanges, linear roots) repeat one step shape `p - 1` times,
//! with the same bytes and peers that move by a fixed amount each step: a
//! ring allgather sends to `rank + 1` and receives from `rank - 1` in every
//! step; a pairwise alltoall sends to `rank + i` and receives from
//! `rank - i` in step `i`. Held as a `Vec<Step>`, every rank of a
//! `p`-rank ring holds `p - 1` steps at once, `O(p^2)` memory for the
//! call: 6.4 GiB for a 16-byte allgather on 9,216 ranks, where each step
//! the event loop touched was a cache miss. [`Compact`] keeps each maximal
//! run of such steps as one entry, so a ring is one run and the call needs
//! `O(p)` memory in total.
//!
//! Invariant: `Compact::from_steps(steps, size)` yields, for every `i`,
//! exactly `steps[i]`'s operations in order and its `reduce_bytes`
//! (checked for every algorithm in `tests.rs`).

use super::{Op, Step};

/// One run: `reps` consecutive steps of the same shape. Step `k` of the run
/// (`0 <= k < reps`) has the operations `ops[op_start ..][.. op_count]` with
/// each peer advanced by `k` times its stride, modulo the size.
#[derive(Debug, Clone, Copy)]
struct Run {
    /// Index of the run's first step in the schedule.
    first: usize,
    reps: u32,
    op_start: u32,
    op_count: u32,
    reduce_bytes: u64,
}

/// A schedule as runs (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct Compact {
    runs: Vec<Run>,
    /// The operations of each run's first step, each with its peer's stride
    /// per step (in `0 .. size`).
    ops: Vec<(Op, u32)>,
    len: usize,
    size: u32,
}

fn peer_of(op: &Op) -> u32 {
    match *op {
        Op::Send { peer, .. } | Op::Recv { peer, .. } => peer,
    }
}

fn with_peer(op: Op, peer: u32) -> Op {
    match op {
        Op::Send { bytes, .. } => Op::Send { peer, bytes },
        Op::Recv { bytes, .. } => Op::Recv { peer, bytes },
    }
}

/// Whether two operations differ at most in their peer.
fn same_shape(a: &Op, b: &Op) -> bool {
    match (*a, *b) {
        (Op::Send { bytes: x, .. }, Op::Send { bytes: y, .. })
        | (Op::Recv { bytes: x, .. }, Op::Recv { bytes: y, .. }) => x == y,
        _ => false,
    }
}

impl Compact {
    /// The schedule `steps` of a rank in a communicator of `size` ranks
    /// (every peer is below `size`).
    pub fn from_steps(steps: &[Step], size: u32) -> Compact {
        let size = size.max(1);
        let mut c = Compact {
            runs: Vec::new(),
            ops: Vec::new(),
            len: steps.len(),
            size,
        };
        for (i, step) in steps.iter().enumerate() {
            if !c.extend_last(step) {
                c.runs.push(Run {
                    first: i,
                    reps: 1,
                    op_start: c.ops.len() as u32,
                    op_count: step.ops.len() as u32,
                    reduce_bytes: step.reduce_bytes,
                });
                c.ops.extend(step.ops.iter().map(|&op| (op, 0)));
            }
        }
        c.runs.shrink_to_fit();
        c.ops.shrink_to_fit();
        c
    }

    /// Appends `step` to the last run if it continues it; false if not.
    fn extend_last(&mut self, step: &Step) -> bool {
        let size = u64::from(self.size);
        let Some(run) = self.runs.last_mut() else {
            return false;
        };
        if run.reduce_bytes != step.reduce_bytes || run.op_count as usize != step.ops.len() {
            return false;
        }
        let base = &mut self.ops[run.op_start as usize..][..run.op_count as usize];
        let fits = base.iter().zip(&step.ops).all(|((b, stride), s)| {
            if !same_shape(b, s) {
                return false;
            }
            if run.reps == 1 {
                return true;
            }
            let want = (u64::from(peer_of(b)) + u64::from(run.reps) * u64::from(*stride)) % size;
            want == u64::from(peer_of(s))
        });
        if !fits {
            return false;
        }
        if run.reps == 1 {
            for ((b, stride), s) in base.iter_mut().zip(&step.ops) {
                let (from, to) = (u64::from(peer_of(b)), u64::from(peer_of(s)));
                // In 0 .. size, so it fits in u32.
                *stride = ((to + size - from % size) % size) as u32;
            }
        }
        run.reps += 1;
        true
    }

    /// The number of steps.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The run holding step `i`, and `i`'s place in it.
    fn locate(&self, i: usize) -> (&Run, u64) {
        // Runs are sorted by `first` and the first starts at 0.
        let r = self.runs.partition_point(|r| r.first <= i) - 1;
        let run = &self.runs[r];
        (run, (i - run.first) as u64)
    }

    /// Step `i`'s reduction bytes (`i < len`).
    pub fn reduce_bytes(&self, i: usize) -> u64 {
        self.locate(i).0.reduce_bytes
    }

    /// Step `i`'s operations, in order (`i < len`).
    pub fn ops(&self, i: usize) -> impl Iterator<Item = Op> + '_ {
        let (run, k) = self.locate(i);
        let size = u64::from(self.size);
        self.ops[run.op_start as usize..][..run.op_count as usize]
            .iter()
            .map(move |&(op, stride)| {
                let peer = (u64::from(peer_of(&op)) + k * u64::from(stride)) % size;
                // Below `size`, a u32.
                with_peer(op, peer as u32)
            })
    }

    /// The number of runs (for tests and memory figures).
    pub fn runs(&self) -> usize {
        self.runs.len()
    }
}
