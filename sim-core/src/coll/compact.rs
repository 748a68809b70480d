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

use smallvec::SmallVec;

use super::{Op, Step};

/// One run: `reps` consecutive steps of the same shape. Step `k` of the run
/// (`0 <= k < reps`) has the operations `ops` with each peer advanced by `k`
/// times its stride, modulo the size.
#[derive(Debug, Clone)]
struct Run {
    /// Index of the run's first step in the schedule.
    first: usize,
    reps: u32,
    reduce_bytes: u64,
    /// The operations of the run's first step, each with its peer's stride
    /// per step (in `0 .. size`); inline for the usual one or two (a send,
    /// a receive, a sendrecv), so a step costs one record.
    ops: SmallVec<[(Op, u32); 2]>,
}

/// A schedule as runs (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct Compact {
    runs: Vec<Run>,
    len: usize,
    size: u32,
}

/// A position in a [`Compact`] schedule: the step `pos`, which is step `k`
/// of run `run`. Moving through the schedule in order with
/// [`Compact::advance`] costs no search.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cursor {
    pub pos: usize,
    run: u32,
    k: u32,
}

/// The operation's peer (0 for a copy, which has none and so never moves).
fn peer_of(op: &Op) -> u32 {
    op.peer().unwrap_or(0)
}

fn with_peer(op: Op, peer: u32) -> Op {
    op.with_peer(peer)
}

/// Whether two operations differ at most in their peer.
fn same_shape(a: &Op, b: &Op) -> bool {
    match (*a, *b) {
        (
            Op::Send {
                bytes: x,
                written: v,
                ..
            },
            Op::Send {
                bytes: y,
                written: w,
                ..
            },
        ) => x == y && v == w,
        (Op::Recv { bytes: x, .. }, Op::Recv { bytes: y, .. })
        | (Op::Copy { bytes: x }, Op::Copy { bytes: y })
        | (Op::Free { bytes: x }, Op::Free { bytes: y }) => x == y,
        (Op::Alloc { bytes: x, touch: s }, Op::Alloc { bytes: y, touch: t }) => x == y && s == t,
        (Op::Datatype { blocks: x }, Op::Datatype { blocks: y })
        | (Op::Pack { blocks: x }, Op::Pack { blocks: y }) => x == y,
        (Op::Flag { .. }, Op::Flag { .. }) | (Op::Await { .. }, Op::Await { .. }) => true,
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
            len: steps.len(),
            size,
        };
        for (i, step) in steps.iter().enumerate() {
            if !c.extend_last(step) {
                c.runs.push(Run {
                    first: i,
                    reps: 1,
                    reduce_bytes: step.reduce_bytes,
                    ops: step.ops.iter().map(|&op| (op, 0)).collect(),
                });
            }
        }
        c
    }

    /// Appends `step` to the last run if it continues it; false if not.
    fn extend_last(&mut self, step: &Step) -> bool {
        let size = u64::from(self.size);
        let Some(run) = self.runs.last_mut() else {
            return false;
        };
        if run.reduce_bytes != step.reduce_bytes || run.ops.len() != step.ops.len() {
            return false;
        }
        let reps = u64::from(run.reps);
        let fits = run.ops.iter().zip(&step.ops).all(|((b, stride), s)| {
            if !same_shape(b, s) {
                return false;
            }
            if reps == 1 {
                return true;
            }
            let want = (u64::from(peer_of(b)) + reps * u64::from(*stride)) % size;
            want == u64::from(peer_of(s))
        });
        if !fits {
            return false;
        }
        if reps == 1 {
            for ((b, stride), s) in run.ops.iter_mut().zip(&step.ops) {
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

    /// The position of step `i` (`i <= len`; `len` is the end).
    pub fn cursor(&self, i: usize) -> Cursor {
        // Runs are sorted by `first` and the first starts at 0.
        match self.runs.partition_point(|r| r.first <= i).checked_sub(1) {
            Some(r) if i < self.len => Cursor {
                pos: i,
                run: r as u32,
                k: (i - self.runs[r].first) as u32,
            },
            _ => Cursor {
                pos: self.len,
                run: self.runs.len() as u32,
                k: 0,
            },
        }
    }

    /// The next step's position.
    pub fn advance(&self, c: &mut Cursor) {
        c.pos += 1;
        c.k += 1;
        if let Some(run) = self.runs.get(c.run as usize)
            && c.k >= run.reps
        {
            c.run += 1;
            c.k = 0;
        }
    }

    /// The reduction bytes of the step at `c` (not the end).
    pub fn reduce_bytes(&self, c: Cursor) -> u64 {
        self.runs[c.run as usize].reduce_bytes
    }

    /// The operations of the step at `c` (not the end), in order.
    pub fn ops(&self, c: Cursor) -> impl Iterator<Item = Op> + '_ {
        let size = u64::from(self.size);
        let k = u64::from(c.k);
        self.runs[c.run as usize]
            .ops
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
