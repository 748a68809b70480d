//! Runaway-loop detection for LPs that run without communicating.

use super::*;

/// The runaway-loop detector of one LP that keeps running without
/// communicating or reading the clock (the only ways its variables can
/// learn anything from outside: expressions read locals, params, `rank`,
/// `size`, communicators and `wtime()`).
///
/// - **A proof of an infinite loop.** `snapshot` is the LP's whole
///   interpreter state (frames: positions and variables) at a block's
///   terminator. If the LP comes back to the same terminator with the same
///   state, having only run blocks that neither communicate nor read
///   `wtime()` ([`Engine::observes`]), it will repeat that stretch forever:
///   every block is a function of that state. Compared exactly (floats by
///   their bits). Checked at the first [`WATCH_PASSES`] passes through the
///   snapshot's terminator; the snapshot is retaken every [`SLICE_BLOCKS`]
///   quiet blocks once it is used up or [`WATCH_AGE`] such periods old, so
///   cycles of up to that many passes through one point are found.
/// - **A budget.** `idle_blocks` counts the blocks run since the clock last
///   moved; a loop whose state keeps changing (a counter) and that costs
///   nothing is stopped at [`SimConfig::max_zero_time_blocks`].
#[derive(Debug)]
pub(super) struct Watch {
    pub(super) snapshot: Option<SmallVec<[Frame; 1]>>,
    /// Passes through the snapshot's terminator compared so far.
    pub(super) passes: u32,
    /// Periods of [`SLICE_BLOCKS`] quiet blocks since the snapshot was
    /// taken.
    pub(super) age: u32,
    pub(super) clock: f64,
    pub(super) idle_blocks: u64,
}

/// Passes through a snapshot's terminator compared before it is retaken.
pub(super) const WATCH_PASSES: u32 = 8;
/// Slices after which a snapshot that has not been passed again is retaken.
pub(super) const WATCH_AGE: u32 = 4;
/// No snapshot of states with more values than this (variables plus array
/// elements): comparing them would cost more than the loop.
pub(super) const WATCH_MAX_VALUES: usize = 4096;

impl<'a> Engine<'a> {
    /// The runaway-loop detector's step at a block's terminator, just
    /// before it runs (see [`Watch`]).
    #[inline]
    pub(super) fn watch_step(&mut self, id: u32, func: FuncId, block: BlockId) -> RunResult<()> {
        let observes = self.observes[func as usize][block.index()];
        let lp = &mut self.lps[id as usize];
        if observes {
            lp.quiet_blocks = 0;
            lp.clear_watch();
            return Ok(());
        }
        lp.quiet_blocks = lp.quiet_blocks.wrapping_add(1);
        let (frames, watch) = lp.frames_and_watch();
        if let Some(w) = watch
            && let Some(snapshot) = &w.snapshot
            && snapshot.len() == frames.len()
            && snapshot
                .last()
                .is_some_and(|f| f.func == func && f.block == block)
        {
            if same_frames(frames, snapshot) {
                return Err(self.infinite_loop(id));
            }
            w.passes += 1;
            if w.passes >= WATCH_PASSES {
                w.snapshot = None;
            }
        }
        // `Lp::quiet_blocks` is 16 bits; SLICE_BLOCKS divides 2^16.
        const _: () = assert!((1u32 << 16).is_multiple_of(SLICE_BLOCKS));
        if u32::from(lp.quiet_blocks).is_multiple_of(SLICE_BLOCKS) {
            self.watch_tick(id)?;
        }
        Ok(())
    }

    /// Every [`SLICE_BLOCKS`] quiet blocks: the zero-time budget, and a new
    /// snapshot when the old one is used up or old.
    pub(super) fn watch_tick(&mut self, id: u32) -> RunResult<()> {
        let max = self.cfg.max_zero_time_blocks;
        let lp = &mut self.lps[id as usize];
        let clock = lp.clock;
        let (frames, w) = lp.frames_and_watch_or_insert(|| Watch {
            snapshot: None,
            passes: 0,
            age: 0,
            clock,
            idle_blocks: 0,
        });
        if w.clock == clock {
            w.idle_blocks += u64::from(SLICE_BLOCKS);
        } else {
            w.clock = clock;
            w.idle_blocks = 0;
        }
        if w.idle_blocks >= max {
            let reason = Runaway::ZeroTime {
                rank: id,
                blocks: w.idle_blocks,
            };
            return Err(self.runaway_at(id, reason));
        }
        w.age += 1;
        if w.snapshot.is_none() || w.age > WATCH_AGE {
            w.snapshot =
                (state_size(frames, WATCH_MAX_VALUES) <= WATCH_MAX_VALUES).then(|| frames.clone());
            w.passes = 0;
            w.age = 0;
        }
        Ok(())
    }

    /// A proven infinite loop of rank `id` (see [`Watch`]).
    pub(super) fn infinite_loop(&self, id: u32) -> Box<SimError> {
        self.runaway_at(id, Runaway::Loop { rank: id })
    }

    /// A runaway error that points at rank `id` only.
    pub(super) fn runaway_at(&self, id: u32, reason: Runaway) -> Box<SimError> {
        Box::new(SimError::Runaway {
            reason,
            events: self.events,
            time: self.lps[id as usize].clock,
            positions: self.position(id).map(|s| (id, s)).into_iter().collect(),
        })
    }
}

/// Whether a block can learn anything from outside its LP: a communication
/// statement, or `wtime()` anywhere in its statements or terminator.
pub(super) fn block_observes(block: &Block) -> bool {
    let stmt = |s: &Stmt| match s {
        Stmt::Comm { .. } => true,
        Stmt::Assign { value, .. } => reads_clock(value),
        Stmt::AssignIndex { index, value, .. } => reads_clock(index) || reads_clock(value),
        Stmt::Compute { args, .. } | Stmt::Call { args, .. } => args.iter().any(reads_clock),
        Stmt::Copy { bytes, .. } | Stmt::Heap { bytes, .. } => reads_clock(bytes),
        Stmt::Print { args, .. } => args.iter().any(|a| match a {
            PrintArg::Expr(e) => reads_clock(e),
            PrintArg::Str(_) => false,
        }),
    };
    block.stmts.iter().any(stmt)
        || match &block.term {
            Terminator::Goto(_) => false,
            Terminator::Branch { cond, .. } => reads_clock(cond),
            Terminator::Return { value, .. } => value.as_ref().is_some_and(reads_clock),
        }
}

pub(super) fn reads_clock(e: &Expr) -> bool {
    e.any(&|x| matches!(x, Expr::Wtime))
}

/// How many times `e` reads the clock (`wtime()`).
pub(super) fn clock_reads(e: &Expr) -> u32 {
    e.count(&|x| matches!(x, Expr::Wtime))
}

/// The same interpreter state: positions, return slots and variables, floats
/// compared by their bits (so `0.0` and `-0.0` differ, and a NaN equals
/// itself), arrays by identity first.
pub(super) fn same_frames(a: &[Frame], b: &[Frame]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.func == y.func
                && x.block == y.block
                && x.stmt == y.stmt
                && x.ret_dst == y.ret_dst
                && x.locals.len() == y.locals.len()
                && x.locals
                    .iter()
                    .zip(&y.locals)
                    .all(|(u, v)| same_value(u, v))
        })
}

pub(super) fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
        (Value::Array(x), Value::Array(y)) => {
            Rc::ptr_eq(x, y)
                || (x.len() == y.len() && x.iter().zip(y.iter()).all(|(u, v)| same_value(u, v)))
        }
        _ => a == b,
    }
}

/// The number of values in `frames` (variables plus array elements), up to
/// a little past `limit`.
pub(super) fn state_size(frames: &[Frame], limit: usize) -> usize {
    pub(super) fn value_size(v: &Value, budget: usize) -> usize {
        match v {
            Value::Array(items) => {
                let mut n = 1;
                for item in items.iter() {
                    if n > budget {
                        break;
                    }
                    n += value_size(item, budget - n);
                }
                n
            }
            _ => 1,
        }
    }
    let mut n = 0;
    for frame in frames {
        for v in &frame.locals {
            if n > limit {
                return n;
            }
            n += value_size(v, limit - n);
        }
    }
    n
}
