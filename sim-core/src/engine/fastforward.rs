//! Fast-forward of steady loops (`SimConfig::fast_forward`, issue 15):
//! once every rank repeats a loop with the same period (or the same cycle
//! of periods), the same variables and the same traffic per iteration, the
//! remaining iterations but a few are skipped by moving every rank's clock,
//! loop counter, accumulated floats and statistics forward by whole
//! cycles.
//!
//! How (ParJava's partial interpretation and SMPI's sampling skip repeated
//! work the same way):
//! 1. *Candidates.* The outermost loops whose bodies print nothing,
//!    directly or in a function they call, store into no array element
//!    (a table filled element by element never repeats its variables) and
//!    communicate or compute (headers of back edges, `petgraph`
//!    dominators): a time-step loop at the top of `main`, in a function
//!    that main calls (NPB LU's `ssor`), or a benchmark's repetitions
//!    inside its loop over message sizes (which prints a row per size).
//!    "Outermost": a function called from inside a candidate loop (or from
//!    such a function) has none of its own; a recursive function has none.
//! 2. *Observation.* Each time a rank reaches a candidate's header (its
//!    branch), the iteration since its last pass is compared with the
//!    first iteration of its current run: the same counter (the one
//!    integer variable that changed) with the same step, the same floats
//!    changed (*drifting*: `timer += t1 - t0`, `let t0 = wtime()`), the
//!    same messages and bytes; otherwise a new run starts. A rank is
//!    steady when its run is [`WINDOW`] iterations long or more, its
//!    periods and each drifting float's steps repeat with a cycle of 1 to
//!    [`MAX_CYCLE`] iterations (each within [`REL_PERIOD`] of the one a
//!    cycle before: ranks that wait for each other alternate long and
//!    short iterations, CG on 256 ranks or an allgather on 16), and its
//!    other variables (request handles by kind) came back within
//!    [`MAX_CYCLE`] passes, by a hash of them. Means are taken over the
//!    window's whole cycles, which makes them exact for a repeating cycle.
//!    A run of twice [`WINDOW`] without a cycle counts too if the window
//!    does not trend (its halves' means within [`REL_PERIOD`], every
//!    period within [`REL_SETTLED`] of the mean: CG on 1,024 ranks varies
//!    by +-0.5% without repeating); its mean is extrapolated and the bound
//!    grows with the window's largest change from one iteration to the
//!    next.
//!    A rank keeps only the window's clocks and drifting floats, the last
//!    variables and a few hashes: a few hundred bytes.
//! 3. *Decision.* When every rank is steady on the same loop, the state
//!    of the whole simulation repeats every (cycle of) iteration(s),
//!    shifted by its period, and it is shifted forward by whole cycles at
//!    once, before the next event, wherever each rank stands in its
//!    iteration (`ff_shift`, *the exact jump*): every time the engine
//!    holds (clocks, wake-ups, queued events, messages in flight,
//!    requests, wait sets, collectives under way) and the machine's busy
//!    timelines ([`crate::model::Machine::shift_time`]) move by k times the
//!    mean period, each rank's counter and drifting floats in the loop's
//!    frame by k steps, its statistics by k mean iterations. For a state
//!    that repeats exactly this is the full run's state k periods later:
//!    nothing stops, nothing drains, messages may cross iterations. It
//!    needs a machine that can shift its state (not a plugin), no
//!    communication argument in the body or in a function the body passes
//!    them to that reads the counter, a drifting float or the clock (a
//!    message in flight keeps the tag of its own iteration: a tag that
//!    counts iterations would no longer match) and no function called
//!    from the body that reads the clock (its frame could hold a time the
//!    shift does not move: `ff_exact`). Otherwise, every rank
//!    will stop (park) at the header of the next pass that no rank has
//!    reached yet, if from there at least one iteration can be skipped on
//!    every rank: the ranks' mean periods agree (pairs that never wait
//!    for each other keep paces of their own, which one period cannot
//!    move), all ranks have as many iterations left, and the body's
//!    branches that read the counter, a drifting float or the clock take
//!    the same ways over the window and the skipped iterations (evaluated
//!    with those stepped; `if i >= skip { timer += ... }` limits the skip
//!    to the iterations before the timed ones). Otherwise observation
//!    starts again. Once the first rank has stopped, the windows are not
//!    updated: the iterations that end then meet ranks that have stopped
//!    already, without the traffic of their next iteration.
//! 4. *Release* (parking only). When every rank is parked and no event is left, nothing is
//!    in flight: every message of the iterations before was received. The
//!    iterations left are counted from the loop's condition (the same on
//!    every rank); all but [`TAIL`] are skipped (fewer if a branch changes
//!    its way), rounded down to whole cycles of every rank (the least
//!    common multiple of their cycles), so that the ranks' offsets after
//!    the jump are those of the full run: every rank's clock moves by the
//!    same time, the skipped
//!    count times the mean of the ranks' mean periods (so the ranks'
//!    offsets stay as they were), its counter by as many steps, each
//!    drifting float by as many of its mean steps and its statistics by as
//!    many mean iterations. Observation then starts again: the same loop
//!    is skipped again the next time it runs (the next message size), and
//!    a later loop can be.
//!
//! What it can get wrong, reported with the result as a bound per jump:
//! each skipped period may differ from the cycle by the largest change
//! from one cycle to the next seen in the windows (zero for a state that
//! repeats exactly: the exact jump then adds only the rounding of the
//! clock), and, when the ranks were parked, the iteration
//! before the stop and the first
//! after the jump do not meet the traffic of their neighbours on other
//! ranks (contention across the iteration boundary), which can change the
//! run by at most one period beyond computing. A float accumulated over the
//! loop (a benchmark's timer) can differ by about one iteration's value per
//! jump for the same reason. Not bounded: a later loop whose model has
//! more than one steady state (ranks on a ring that settle into one of two
//! alternations) can settle into another one after a perturbation of
//! the ranks' offsets (a parked jump, or an exact jump over a window that
//! was not exactly periodic); its own figures then differ from the full
//! run's by as much as its steady states differ. Which one the full run
//! reaches is itself fragile: IMB Allgather on 16 EKSS-1 ranks gives 1,310
//! us per call at 2 KiB after the sizes before it and 992 us when the
//! sizes stop at 2 KiB (BENCHMARKS.md).
//!
//! When the release finds something in flight, ranks with different
//! iteration counts, or too few iterations left, the run is abandoned and
//! [`super::api::simulate`] runs the program again in full: the result is
//! then exactly the full run's, with the reason reported. A loop that
//! passes its counter, the clock or a drifting float to a function that
//! branches on it (followed through the function's assignments and the
//! calls it passes it on to: `branches_on`) is never skipped.

use std::collections::{HashMap, HashSet};

use petgraph::algo::dominators::simple_fast;
use petgraph::visit::EdgeRef;

use super::*;
use crate::ir::Function;

/// The longest lag at which a rank's variables (the counter aside) must
/// come back: a loop may alternate a value every second or fourth
/// iteration.
pub(super) const MAX_CYCLE: usize = 4;
/// The iterations a rank's run must last before the rank counts as steady.
pub(super) const WINDOW: usize = 16;
/// Iterations simulated after the jump (the loop's end is simulated).
pub(super) const TAIL: i64 = 2;
/// How far the periods of a steady window may differ from their mean,
/// relatively. Ranks that wait for each other alternately, or a phase
/// defect that travels along a chain of ranks, vary the period by a few
/// tenths of a microsecond while its mean stays put; the report's bound
/// counts what the variation can add up to.
const REL_PERIOD: f64 = 1e-3;
/// How far a period of a window without a cycle may lie from the mean
/// ([`Pass::settled`]).
const REL_SETTLED: f64 = 2e-2;

/// One iteration of a rank: from one pass of the header to the next.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Iteration {
    period: f64,
    counter: Slot,
    step: i64,
    /// The float variables that changed (bit i: slot i), extrapolated by
    /// their mean step at the jump: an accumulated time (`timer += t1 -
    /// t0`), a copy of the clock (`let t0 = wtime()`).
    drift: u64,
    compute: f64,
    comm: f64,
    messages: u64,
    bytes: u64,
}

/// What one rank showed at its passes of a candidate header: a few
/// hundred bytes, whatever the length of the run observed.
#[derive(Debug, Clone)]
pub(super) struct Pass {
    head: Head,
    passes: u32,
    clock: f64,
    stats: Counters,
    /// The variables at the last pass (to find the counter).
    last: Locals,
    /// Hashes of the variables but the counter at the last `MAX_CYCLE`
    /// passes of the current run, the latest last.
    hashes: VecDeque<u64>,
    /// (clock, compute, comm) at the last `WINDOW + 1` passes of the
    /// current run, the latest last: the window's iterations.
    window: VecDeque<(f64, f64, f64)>,
    /// The drifting floats of the run (`Iteration::drift`, slot order) at
    /// the same passes as `window`, one group per pass; empty for a loop
    /// without them (heat, W2), so most ranks pay nothing.
    drift_window: VecDeque<f64>,
    /// The iterations since the counter or the traffic last changed.
    run: Option<Run>,
    /// The window is steady.
    steady: bool,
    /// Parked at the header (the next pass resumes without counting).
    parked: bool,
}

/// Consecutive iterations like the first of them: one counter stepping
/// alike, the same messages and bytes.
#[derive(Debug, Clone, Copy)]
struct Run {
    first: Iteration,
    count: u32,
}

impl Run {
    /// Counts `i` if it continues the run.
    fn extend(&mut self, i: Iteration) -> bool {
        let f = &self.first;
        if i.counter != f.counter
            || i.step != f.step
            || i.drift != f.drift
            || i.messages != f.messages
            || i.bytes != f.bytes
        {
            return false;
        }
        self.count += 1;
        true
    }
}

/// A hash of the variables but the counter `skip` and the drifting floats
/// `drift` (request and status handles count by their kind only, as in
/// [`same_value`]).
fn hash_locals(locals: &Locals, skip: usize, drift: u64) -> u64 {
    use std::hash::{Hash, Hasher};
    fn value(v: &Value, h: &mut std::collections::hash_map::DefaultHasher) {
        std::mem::discriminant(v).hash(h);
        match v {
            Value::Int(i) => i.hash(h),
            Value::Float(f) => f.to_bits().hash(h),
            Value::Bool(b) => b.hash(h),
            Value::Comm(c) => c.hash(h),
            Value::Array(a) => a.iter().for_each(|x| value(x, h)),
            Value::Null | Value::Any | Value::Req(_) | Value::Status(_) | Value::BigStatus(_) => {}
        }
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for (i, v) in locals.iter().enumerate() {
        if i != skip && !is_drift(drift, i) {
            value(v, &mut h);
        }
    }
    h.finish()
}

impl Pass {
    fn first(head: Head, clock: f64, stats: Counters, locals: &Locals) -> Pass {
        Pass {
            head,
            passes: 1,
            clock,
            stats,
            last: locals.clone(),
            hashes: VecDeque::new(),
            window: VecDeque::from([(clock, stats.compute, stats.comm)]),
            drift_window: VecDeque::new(),
            run: None,
            steady: false,
            parked: false,
        }
    }

    /// A pass with the variables `now`, the clock and the statistics.
    fn observe(&mut self, now: &Locals, clock: f64, stats: Counters) {
        let iteration = changes_of(&self.last, now).map(|(counter, step, drift)| Iteration {
            period: clock - self.clock,
            counter,
            step,
            drift,
            compute: stats.compute - self.stats.compute,
            comm: stats.comm - self.stats.comm,
            messages: stats.messages_sent - self.stats.messages_sent,
            bytes: stats.bytes_sent - self.stats.bytes_sent,
        });
        let extended = match (iteration, self.run.as_mut()) {
            (Some(i), Some(r)) => r.extend(i),
            _ => false,
        };
        if !extended {
            self.run = iteration.map(|first| Run { first, count: 1 });
            self.hashes.clear();
            self.window.clear();
            self.drift_window.clear();
            self.window
                .push_back((self.clock, self.stats.compute, self.stats.comm));
            let drift = self.drift_mask();
            self.drift_window.extend(drift_values(&self.last, drift));
        }
        let drift = self.drift_mask();
        if self.window.len() == WINDOW + 1 {
            self.window.pop_front();
            self.drift_window.drain(..drift.count_ones() as usize);
        }
        self.window.push_back((clock, stats.compute, stats.comm));
        self.drift_window.extend(drift_values(now, drift));
        self.steady = false;
        if let Some(r) = &self.run {
            let h = hash_locals(now, r.first.counter as usize, drift);
            // The variables come back within MAX_CYCLE passes.
            let back = self.hashes.contains(&h);
            // A window without a cycle counts only after twice as long a
            // run: a cycle, whose mean is exact, has had its chance.
            self.steady = back
                && r.count as usize >= WINDOW
                && (self.cycle().is_some() || (r.count as usize >= 2 * WINDOW && self.settled()));
            if self.hashes.len() == MAX_CYCLE {
                self.hashes.pop_front();
            }
            self.hashes.push_back(h);
        }
        self.last = now.clone();
        self.passes += 1;
        self.clock = clock;
        self.stats = stats;
    }

    /// Observation starts again from this pass (the pass count goes on, so
    /// that every rank's count stays the same iteration).
    fn reset(&mut self) {
        self.run = None;
        self.hashes.clear();
        self.window.clear();
        self.window
            .push_back((self.clock, self.stats.compute, self.stats.comm));
        self.drift_window.clear();
        self.steady = false;
    }

    /// The window's periods, oldest first.
    fn periods(&self) -> impl Iterator<Item = f64> + '_ {
        self.window
            .iter()
            .zip(self.window.iter().skip(1))
            .map(|(a, b)| b.0 - a.0)
    }

    /// The shortest cycle, 1 ..= [`MAX_CYCLE`] iterations, with which the
    /// window's periods and each drifting float's steps repeat: every
    /// period within [`REL_PERIOD`] of the mean of the one `L` iterations
    /// before (each step likewise, relative to the float's mean step, which
    /// must not be 0). `None`: not periodic (yet). Ranks that wait for each
    /// other alternately make a period-2 cycle (long, short, long, ...);
    /// the cycle's mean is exact over whole cycles, which a mean over any
    /// window is not.
    fn cycle(&self) -> Option<usize> {
        let periods: Vec<f64> = self.periods().collect();
        let n = periods.len();
        if n == 0 {
            return None;
        }
        let scale = periods.iter().sum::<f64>() / n as f64;
        let drifts = self.drift_mask().count_ones() as usize;
        let steps: Vec<Vec<f64>> = (0..drifts).map(|k| self.drift_steps(k).collect()).collect();
        (1..=MAX_CYCLE.min(n / 2)).find(|&l| {
            let repeats = |xs: &[f64], scale: f64| {
                scale != 0.0
                    && xs
                        .iter()
                        .zip(&xs[l.min(xs.len())..])
                        .all(|(a, b)| (b - a).abs() <= REL_PERIOD * scale.abs())
            };
            repeats(&periods, scale)
                && steps
                    .iter()
                    .all(|d| repeats(d, d.iter().sum::<f64>() / d.len().max(1) as f64))
        })
    }

    /// Without a cycle: the window's periods (and drifting steps) vary
    /// but do not trend, the means of its two halves within
    /// [`REL_PERIOD`] of each other and every period within
    /// [`REL_SETTLED`] of the mean (CG on 1,024 ranks: +-0.5%, no cycle of
    /// up to 4), after a run of twice [`WINDOW`]. The mean is then
    /// extrapolated; the bound counts the largest change from one
    /// iteration to the next per skipped one.
    fn settled(&self) -> bool {
        let even = |xs: &[f64]| {
            let n = xs.len();
            if n < 2 {
                return false;
            }
            let mean = xs.iter().sum::<f64>() / n as f64;
            let half = |h: &[f64]| h.iter().sum::<f64>() / h.len().max(1) as f64;
            let (a, b) = xs.split_at(n / 2);
            mean != 0.0
                && (half(a) - half(b)).abs() <= REL_PERIOD * mean.abs()
                && xs
                    .iter()
                    .all(|x| (x - mean).abs() <= REL_SETTLED * mean.abs())
        };
        let periods: Vec<f64> = self.periods().collect();
        let drifts = self.drift_mask().count_ones() as usize;
        even(&periods) && (0..drifts).all(|k| even(&self.drift_steps(k).collect::<Vec<f64>>()))
    }

    /// How many of the window's latest iterations the means are taken
    /// over: whole cycles.
    fn span(&self) -> usize {
        let n = self.window.len().saturating_sub(1);
        let l = self.cycle().unwrap_or(1);
        (n / l * l).max(1).min(n)
    }

    /// The run's drifting floats (0 without a run).
    fn drift_mask(&self) -> u64 {
        self.run.map_or(0, |r| r.first.drift)
    }

    /// The steps of drifting float `k` (0-based among the run's) over the
    /// window, oldest first.
    fn drift_steps(&self, k: usize) -> impl Iterator<Item = f64> + '_ {
        let n = self.drift_mask().count_ones() as usize;
        let at = move |j: usize| self.drift_window.get(j * n + k).copied().unwrap_or(0.0);
        let passes = self.drift_window.len().checked_div(n).unwrap_or(0);
        (1..passes).map(move |j| at(j) - at(j - 1))
    }

    /// The mean step of each drifting float over the window's whole cycles
    /// ([`Pass::span`]), in slot order.
    fn drift_means(&self) -> Vec<f64> {
        let n = self.drift_mask().count_ones() as usize;
        let span = self.span();
        (0..n)
            .map(|k| {
                let steps: Vec<f64> = self.drift_steps(k).collect();
                let last = &steps[steps.len().saturating_sub(span)..];
                last.iter().sum::<f64>() / last.len().max(1) as f64
            })
            .collect()
    }

    /// The window's mean iteration over its whole cycles ([`Pass::span`]),
    /// with the run's counter and traffic.
    fn mean(&self) -> Iteration {
        let span = self.span();
        let (Some(a), Some(b), Some(r)) = (
            self.window.get(self.window.len().saturating_sub(span + 1)),
            self.window.back(),
            self.run,
        ) else {
            return Iteration {
                period: 0.0,
                counter: 0,
                step: 0,
                drift: 0,
                compute: 0.0,
                comm: 0.0,
                messages: 0,
                bytes: 0,
            };
        };
        let n = span as f64;
        Iteration {
            period: (b.0 - a.0) / n,
            compute: (b.1 - a.1) / n,
            comm: (b.2 - a.2) / n,
            ..r.first
        }
    }

    /// The window's shortest and longest period.
    fn extremes(&self) -> [f64; 2] {
        self.periods()
            .fold([f64::INFINITY, 0.0], |[lo, hi], p| [lo.min(p), hi.max(p)])
    }

    /// The largest change of a period from the one a cycle before: what
    /// the extrapolated cycle may be off by per iteration.
    fn cycle_change(&self) -> f64 {
        let l = self.cycle().unwrap_or(1);
        let periods: Vec<f64> = self.periods().collect();
        periods
            .iter()
            .zip(&periods[l.min(periods.len())..])
            .map(|(a, b)| (b - a).abs())
            .fold(0.0, f64::max)
    }
}

/// A loop header: the function and its block.
pub(super) type Head = (FuncId, BlockId);

#[derive(Debug)]
pub(super) enum Phase {
    Observing,
    /// Every rank parks at this pass of the header.
    Parking {
        head: Head,
        pass: u32,
        /// The most iterations that may be skipped from there: the loop's
        /// branches take the same ways in all of them (`ff_decide`).
        max_skip: i64,
    },
    /// Every rank is steady and the whole simulation is shifted at the
    /// next event (`ff_shift`): exact for a periodic state.
    Shift {
        head: Head,
        /// As in `Parking`.
        max_skip: i64,
    },
    /// Nothing to observe: no candidate loop.
    Done,
}

#[derive(Debug)]
pub(super) struct FastForward {
    /// The candidate headers, each with its body's other blocks.
    heads: HashMap<Head, Vec<BlockId>>,
    /// Per function: whether it holds a candidate header (the
    /// interpreter's quick test at every branch).
    pub(super) has_heads: Vec<bool>,
    pub(super) passes: Vec<Option<Pass>>,
    /// Per header, the ranks whose last pass was there and steady.
    steady: HashMap<Head, u32>,
    pub(super) parked: u32,
    pub(super) phase: Phase,
    /// The jumps made, in order (a loop inside a loop is skipped each time
    /// it runs).
    applied: Vec<api::SkippedLoop>,
    /// Why nothing can be skipped, when that is known from the program.
    not_applied: Option<String>,
    /// Why the last loop found steady on every rank was not skipped.
    declined: Option<String>,
}

/// Whether statement `s` is one that `hit` picks, or calls a function
/// that holds one, directly or further down (`seen`: the functions already
/// searched).
fn reaches(
    program: &Program,
    s: &Stmt,
    seen: &mut HashSet<FuncId>,
    hit: &impl Fn(&Stmt) -> bool,
) -> bool {
    if hit(s) {
        return true;
    }
    let Stmt::Call { func, .. } = s else {
        return false;
    };
    seen.insert(*func)
        && program
            .function(*func)
            .cfg
            .node_weights()
            .any(|b| b.stmts.iter().any(|t| reaches(program, t, seen, hit)))
}

/// Whether a call of `func` whose parameters marked in `params` receive a
/// value that changes from one iteration to the next (the loop's counter,
/// a drifting float, the clock) can take a branch on such a value: the
/// line of the first such branch, in `func` or in a function it passes
/// such a value to. The values are followed through the function's
/// assignments (flow-insensitively: a variable assigned from one anywhere
/// is one everywhere) and into the calls that receive them; a call's or a
/// communication's result counts as one as soon as the function holds
/// one, and `wtime()` is one everywhere. A branch that reads none of them
/// goes the same way in every iteration that reaches it with the same
/// other variables, which the steady window checks: so such a call needs
/// no stepping of its own (`ff_first_change` steps only the body's
/// branches). `seen` stops recursion (a function already followed with
/// these parameters).
fn branches_on(
    program: &Program,
    func: FuncId,
    params: &[bool],
    seen: &mut HashSet<(FuncId, Vec<bool>)>,
) -> Option<u32> {
    taint_walk(program, func, params, seen, &mut |f, tainted| {
        f.cfg.node_weights().find_map(|b| match &b.term {
            Terminator::Branch { cond, span, .. } if reads_taint(cond, tainted) => Some(span.line),
            _ => None,
        })
    })
}

/// Whether `e` reads a marked variable or the clock.
fn reads_taint(e: &Expr, tainted: &[bool]) -> bool {
    e.any(&|x| match x {
        Expr::Local(s) => tainted.get(*s as usize).copied().unwrap_or(true),
        Expr::Wtime => true,
        _ => false,
    })
}

/// Marks, in `tainted` (one flag per variable of `f`, the ones given
/// marked already), every variable of `f` that holds a value computed from
/// a marked one or the clock, among the statements of `blocks` (every
/// block of `f` if `None`), flow-insensitively: assignments, a call's
/// result when it is passed a marked value, a communication's result as
/// soon as any variable is marked. Calls passed a marked value are handed
/// to `callee` (with the callee and which of its parameters are marked);
/// its first `Some` is returned.
fn propagate<'p>(
    f: &'p Function,
    blocks: Option<&[BlockId]>,
    tainted: &mut [bool],
    callee: &mut dyn FnMut(FuncId, &[bool]) -> Option<u32>,
) -> Option<u32> {
    let all: Vec<BlockId>;
    let blocks = match blocks {
        Some(b) => b,
        None => {
            all = f.cfg.node_indices().collect();
            &all
        }
    };
    let taint = |d: Slot, tainted: &mut [bool]| match tainted.get_mut(d as usize) {
        Some(slot) if !*slot => {
            *slot = true;
            true
        }
        _ => false,
    };
    loop {
        let mut changed = false;
        for &b in blocks {
            for st in &f.cfg[b].stmts {
                match st {
                    Stmt::Assign { dst, value, .. } => {
                        if reads_taint(value, tainted) {
                            changed |= taint(*dst, tainted);
                        }
                    }
                    Stmt::AssignIndex {
                        dst, index, value, ..
                    } => {
                        if reads_taint(index, tainted) || reads_taint(value, tainted) {
                            changed |= taint(*dst, tainted);
                        }
                    }
                    Stmt::Call {
                        func: c, args, dst, ..
                    } => {
                        let inner: Vec<bool> =
                            args.iter().map(|a| reads_taint(a, tainted)).collect();
                        if inner.contains(&true) {
                            if let Some(line) = callee(*c, &inner) {
                                return Some(line);
                            }
                            if let Some(d) = dst {
                                changed |= taint(*d, tainted);
                            }
                        }
                    }
                    Stmt::Comm { dst: Some(d), .. } => {
                        if tainted.contains(&true) {
                            changed |= taint(*d, tainted);
                        }
                    }
                    Stmt::Comm { dst: None, .. }
                    | Stmt::Compute { .. }
                    | Stmt::Copy { .. }
                    | Stmt::Heap { .. }
                    | Stmt::Print { .. } => {}
                }
            }
        }
        if !changed {
            return None;
        }
    }
}

/// `propagate` over the whole of `func` with its `params` marked, then
/// `check` on the function and its marks; the calls passed a marked value
/// are walked the same way first (`seen`: a function already walked with
/// these parameters).
fn taint_walk(
    program: &Program,
    func: FuncId,
    params: &[bool],
    seen: &mut HashSet<(FuncId, Vec<bool>)>,
    check: &mut dyn FnMut(&Function, &[bool]) -> Option<u32>,
) -> Option<u32> {
    if !seen.insert((func, params.to_vec())) {
        return None;
    }
    let f = program.function(func);
    let mut tainted = vec![false; f.num_locals as usize];
    for (t, &p) in tainted.iter_mut().zip(params) {
        *t = p;
    }
    let mut inner = |c: FuncId, ps: &[bool]| taint_walk(program, c, ps, seen, check);
    if let Some(line) = propagate(f, None, &mut tainted, &mut inner) {
        return Some(line);
    }
    check(f, &tainted)
}

/// The line of the first communication statement of `blocks` of `f` (all
/// blocks if `None`) whose arguments read a marked variable or the clock.
fn comm_reads(f: &Function, blocks: Option<&[BlockId]>, tainted: &[bool]) -> Option<u32> {
    let visit = |b: &Block| {
        b.stmts.iter().find_map(|st| match st {
            Stmt::Comm { op, span, .. } if op.exprs().iter().any(|e| reads_taint(e, tainted)) => {
                Some(span.line)
            }
            _ => None,
        })
    };
    match blocks {
        Some(bs) => bs.iter().find_map(|&b| visit(&f.cfg[b])),
        None => f.cfg.node_weights().find_map(visit),
    }
}

/// Whether a function, or one it calls, reads the clock (`wtime()`): its
/// frame may then hold a time when the simulation is shifted, which the
/// shift would not move.
fn function_reads_clock(program: &Program, func: FuncId, seen: &mut HashSet<FuncId>) -> bool {
    if !seen.insert(func) {
        return false;
    }
    program.function(func).cfg.node_weights().any(|b| {
        let term = match &b.term {
            Terminator::Branch { cond, .. } => reads_clock(cond),
            Terminator::Return { value: Some(v), .. } => reads_clock(v),
            _ => false,
        };
        term || b.stmts.iter().any(|st| {
            st.exprs().into_iter().any(reads_clock)
                || matches!(st, Stmt::Call { func: c, .. } if function_reads_clock(program, *c, seen))
        })
    })
}

/// A statement that prints.
fn is_print(s: &Stmt) -> bool {
    matches!(s, Stmt::Print { .. })
}

/// A statement that allocates or frees the program's memory: it changes
/// the process's heap, which an iteration's events do not show.
fn is_heap(s: &Stmt) -> bool {
    matches!(s, Stmt::Heap { .. })
}

/// A statement that spends simulated time a jump could skip: it
/// communicates, computes or copies.
fn is_timed(s: &Stmt) -> bool {
    matches!(
        s,
        Stmt::Comm { .. } | Stmt::Compute { .. } | Stmt::Copy { .. }
    )
}

impl FastForward {
    pub(super) fn new(program: &Program, ranks: u32) -> FastForward {
        let nf = program.functions.len();
        // The functions each one calls (`Stmt::Call`: the frontend hoists
        // calls out of expressions).
        let callees: Vec<Vec<FuncId>> = (0..nf as FuncId)
            .map(|f| {
                let g = &program.function(f).cfg;
                g.node_weights()
                    .flat_map(|b| b.stmts.iter())
                    .filter_map(|s| match s {
                        Stmt::Call { func, .. } => Some(*func),
                        _ => None,
                    })
                    .collect()
            })
            .collect();
        // A recursive function's loops are never candidates: one header
        // would be passed at several depths.
        let recursive: Vec<bool> = (0..nf as FuncId)
            .map(|f| {
                let mut seen = HashSet::new();
                let mut stack = callees[f as usize].clone();
                while let Some(c) = stack.pop() {
                    if c == f {
                        return true;
                    }
                    if seen.insert(c) {
                        stack.extend(&callees[c as usize]);
                    }
                }
                false
            })
            .collect();
        // Each function's loops with their bodies, and whether each may be
        // skipped (quiet, no element stores).
        let mut loops_of: Vec<Vec<(BlockId, HashSet<BlockId>, bool)>> = Vec::with_capacity(nf);
        for f in 0..nf as FuncId {
            let func = program.function(f);
            let g = &func.cfg;
            let dom = simple_fast(g, func.entry);
            // Loops: back edges u -> h where h dominates u; the body is
            // what reaches u without passing h.
            let mut loops: Vec<(BlockId, HashSet<BlockId>)> = Vec::new();
            for e in g.edge_references() {
                let (u, h) = (e.source(), e.target());
                if !dom.dominators(u).is_some_and(|mut d| d.any(|x| x == h)) {
                    continue;
                }
                let mut body: HashSet<BlockId> = HashSet::from([h]);
                let mut stack = vec![u];
                while let Some(n) = stack.pop() {
                    if body.insert(n) {
                        stack.extend(g.neighbors_directed(n, petgraph::Direction::Incoming));
                    }
                }
                match loops.iter_mut().find(|(x, _)| *x == h) {
                    Some((_, b)) => b.extend(body),
                    None => loops.push((h, body)),
                }
            }
            // Whether a statement of the body reaches one that `hit` picks.
            let body_reaches = |body: &HashSet<BlockId>, hit: &dyn Fn(&Stmt) -> bool| {
                let mut seen = HashSet::new();
                body.iter().any(|&b| {
                    g[b].stmts
                        .iter()
                        .any(|s| reaches(program, s, &mut seen, &hit))
                })
            };
            let quiet = |body: &HashSet<BlockId>| !body_reaches(body, &is_print);
            // A loop that allocates or frees memory moves the process's
            // heap (what the library's temporaries find later), which a
            // jump would not: not a candidate.
            let keeps_heap = |body: &HashSet<BlockId>| !body_reaches(body, &is_heap);
            // A loop that stores into an array element changes the array
            // every iteration (it never repeats its variables: a setup loop
            // filling a table), and observing it would cost the run dearly:
            // each pass keeps a copy of the variables, so the next store
            // copies the whole array (arrays are values). Such loops are
            // not candidates; a quiet loop inside one can be.
            let stores = |body: &HashSet<BlockId>| {
                body.iter().any(|&b| {
                    g[b].stmts
                        .iter()
                        .any(|s| matches!(s, Stmt::AssignIndex { .. }))
                })
            };
            // A loop that neither communicates nor computes (a table's
            // arithmetic) spends no simulated time: nothing to skip.
            let spends_time = |body: &HashSet<BlockId>| body_reaches(body, &is_timed);
            loops_of.push(
                loops
                    .into_iter()
                    .map(|(h, body)| {
                        let ok = !recursive[f as usize]
                            && quiet(&body)
                            && keeps_heap(&body)
                            && !stores(&body)
                            && spends_time(&body);
                        (h, body, ok)
                    })
                    .collect(),
            );
        }
        // Covered functions: called from inside a loop that may be skipped,
        // or from a covered function. Their loops are part of the outer
        // loop's iterations, not candidates of their own.
        let mut covered = vec![false; nf];
        let mut stack: Vec<FuncId> = Vec::new();
        for (f, loops) in loops_of.iter().enumerate() {
            let g = &program.function(f as FuncId).cfg;
            for (_, body, ok) in loops {
                if *ok {
                    for &b in body {
                        for s in &g[b].stmts {
                            if let Stmt::Call { func, .. } = s {
                                stack.push(*func);
                            }
                        }
                    }
                }
            }
        }
        while let Some(f) = stack.pop() {
            if !std::mem::replace(&mut covered[f as usize], true) {
                stack.extend(&callees[f as usize]);
            }
        }
        // The candidates: the outermost loops that may be skipped, in
        // functions that are not covered: a time-step loop at the top of
        // `main` (heat), in a function `main` calls (LU's ssor), or a
        // benchmark's repetitions inside its loop over message sizes
        // (which prints a row per size).
        let mut heads: HashMap<Head, Vec<BlockId>> = HashMap::new();
        for (f, loops) in loops_of.iter().enumerate() {
            if covered[f] {
                continue;
            }
            for (h, body, ok) in loops {
                if *ok
                    && !loops
                        .iter()
                        .any(|(o, b, oo)| *oo && o != h && b.contains(h))
                {
                    let mut rest: Vec<BlockId> = body.iter().copied().filter(|b| b != h).collect();
                    // A fixed order: the scan of the body's branches is
                    // deterministic.
                    rest.sort_unstable();
                    heads.insert((f as FuncId, *h), rest);
                }
            }
        }
        let mut has_heads = vec![false; nf];
        for (f, _) in heads.keys() {
            has_heads[*f as usize] = true;
        }
        // Without a candidate, the reason names the first outermost loop
        // of `main` that prints.
        let main = program.function(program.main);
        let printing = loops_of[program.main as usize]
            .iter()
            .filter(|(h, b, _)| {
                let mut seen = HashSet::new();
                let prints_here = b.iter().any(|&x| {
                    main.cfg[x]
                        .stmts
                        .iter()
                        .any(|s| reaches(program, s, &mut seen, &is_print))
                });
                prints_here
                    && !loops_of[program.main as usize]
                        .iter()
                        .any(|(o, ob, _)| o != h && ob.contains(h))
            })
            .map(|(h, _, _)| main.cfg[*h].span.line)
            .min();
        let not_applied = match (heads.is_empty(), printing) {
            (true, Some(line)) => Some(format!(
                "the loop at line {line} prints, and the skipped iterations' output would be lost"
            )),
            _ => None,
        };
        let phase = if heads.is_empty() {
            Phase::Done
        } else {
            Phase::Observing
        };
        FastForward {
            heads,
            has_heads,
            passes: vec![None; ranks as usize],
            steady: HashMap::new(),
            parked: 0,
            phase,
            applied: Vec::new(),
            not_applied,
            declined: None,
        }
    }

    /// Observation starts again on every rank (after a jump, or after a
    /// steady loop too near its end to skip anything).
    fn restart(&mut self) {
        self.passes.iter_mut().flatten().for_each(Pass::reset);
        self.steady.clear();
        self.parked = 0;
        self.phase = if self.heads.is_empty() {
            Phase::Done
        } else {
            Phase::Observing
        };
    }

    /// Loop `head` is never skipped, for `reason`.
    fn exclude(&mut self, head: Head, reason: String) {
        self.heads.remove(&head);
        self.not_applied.get_or_insert(reason);
        self.restart();
    }

    /// What it did, for the report.
    pub(super) fn outcome(self) -> api::FastForward {
        if !self.applied.is_empty() {
            return api::FastForward::Applied {
                loops: self.applied,
            };
        }
        api::FastForward::NotApplied {
            reason: self
                .not_applied
                .or(self.declined)
                .unwrap_or_else(|| "no quiet loop reached a steady state on every rank".into()),
        }
    }
}

/// The least common multiple of two cycle lengths (1 ..= MAX_CYCLE each).
fn lcm(a: usize, b: usize) -> usize {
    let gcd = |mut x: usize, mut y: usize| {
        while y != 0 {
            (x, y) = (y, x % y);
        }
        x
    };
    a / gcd(a, b).max(1) * b
}

/// `n` iterations rounded down to whole cycles of `cycle` (0 if fewer).
fn whole(n: i64, cycle: usize) -> i64 {
    let c = cycle.max(1) as i64;
    n.div_euclid(c) * c
}

/// Variables equal but for request and status handles (a finished loop
/// iteration's requests differ in identity only).
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Req(_), Value::Req(_))
        | (Value::Status(_) | Value::BigStatus(_), Value::Status(_) | Value::BigStatus(_)) => true,
        (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
        _ => a == b,
    }
}

/// `base` with the counter `k` steps on from `c0` and the drifting floats
/// `k` of their mean `steps` on, into `out`; false if the counter would
/// overflow.
fn stepped(
    base: &Locals,
    out: &mut Locals,
    c0: i64,
    it: &Iteration,
    steps: &[f64],
    k: i64,
) -> bool {
    let Some(c) = k.checked_mul(it.step).and_then(|d| c0.checked_add(d)) else {
        return false;
    };
    out.clone_from(base);
    out[it.counter as usize] = Value::Int(c);
    step_drift(out, it.drift, steps, k as f64);
    true
}

/// Moves the drifting floats `mask` of `locals` on by `k` of their mean
/// steps `steps` (slot order).
/// Each rank's window: its mean iteration, its extreme periods and the
/// largest change from one cycle to the next (`Pass::mean`,
/// `Pass::extremes`, `Pass::cycle_change`).
type Window = (Iteration, [f64; 2], f64);

/// The period every rank moves by in a jump, the mean of the ranks' window
/// means; how far any rank's periods lie from it; the largest change from
/// one cycle to the next of any rank.
fn one_period(sums: &[Window]) -> (f64, f64, f64) {
    let period = sums.iter().map(|(m, ..)| m.period).sum::<f64>() / sums.len().max(1) as f64;
    let deviation = (sums.iter())
        .flat_map(|(_, ps, _)| ps.iter())
        .map(|p| (p - period).abs())
        .fold(0.0, f64::max);
    let change = sums.iter().map(|(.., c)| *c).fold(0.0, f64::max);
    (period, deviation, change)
}

/// `skip` mean iterations `mean` added to a rank's statistics.
fn advance_stats(stats: &mut Counters, mean: &Iteration, skip: i64) {
    let k = skip as f64;
    stats.compute += k * mean.compute;
    stats.comm += k * mean.comm;
    stats.messages_sent += skip as u64 * mean.messages;
    stats.bytes_sent += skip as u64 * mean.bytes;
}

/// `skip` iterations on: the loop's counter by as many steps, its
/// drifting floats by as many of their mean `steps`.
fn advance_locals(locals: &mut Locals, mean: &Iteration, steps: &[f64], skip: i64) {
    if let Some(Value::Int(v)) = locals.get_mut(mean.counter as usize) {
        *v += skip * mean.step;
    }
    step_drift(locals, mean.drift, steps, skip as f64);
}

fn step_drift(locals: &mut Locals, mask: u64, steps: &[f64], k: f64) {
    let slots = locals
        .iter_mut()
        .enumerate()
        .filter(|(i, _)| is_drift(mask, *i));
    for ((_, v), d) in slots.zip(steps) {
        if let Value::Float(x) = v {
            *x += k * d;
        }
    }
}

/// Whether slot `i` is in the drift set `mask`.
fn is_drift(mask: u64, i: usize) -> bool {
    i < 64 && mask & (1 << i) != 0
}

/// The values of the drifting floats `mask` in `locals`, in slot order.
fn drift_values(locals: &Locals, mask: u64) -> impl Iterator<Item = f64> + '_ {
    locals
        .iter()
        .enumerate()
        .filter(move |(i, _)| is_drift(mask, *i))
        .map(|(_, v)| v.as_f64().unwrap_or(0.0))
}

/// What changed from one pass to the next: the one integer variable that
/// changed (the counter) and by how much, and the float variables that
/// changed (a mask of their slots, all below 64); `None` if no integer or
/// several changed, or another kind of value did.
fn changes_of(before: &Locals, after: &Locals) -> Option<(Slot, i64, u64)> {
    if before.len() != after.len() {
        return None;
    }
    let mut found = None;
    let mut drift = 0u64;
    for (i, (a, b)) in before.iter().zip(after.iter()).enumerate() {
        if same_value(a, b) {
            continue;
        }
        match (a, b, found) {
            (Value::Int(x), Value::Int(y), None) => found = Some((i as Slot, y.checked_sub(*x)?)),
            (Value::Float(_), Value::Float(_), _) if i < 64 => drift |= 1 << i,
            _ => return None,
        }
    }
    found
        .filter(|&(_, step)| step != 0)
        .map(|(slot, step)| (slot, step, drift))
}

impl Engine<'_> {
    /// At the branch of `block` of function `func` (the rank's innermost
    /// frame): observe the pass; true if the rank parks here.
    pub(super) fn ff_pass(&mut self, id: u32, func: FuncId, block: BlockId) -> RunResult<bool> {
        let block: Head = (func, block);
        let Some(ff) = self.ff.as_deref_mut() else {
            return Ok(false);
        };
        if matches!(ff.phase, Phase::Done) || !ff.heads.contains_key(&block) {
            return Ok(false);
        }
        let lp = &self.lps[id as usize];
        let Some(frame) = lp.frames.last() else {
            return Ok(false);
        };
        let slot = &mut ff.passes[id as usize];
        if let Some(p) = slot.as_mut()
            && p.parked
        {
            // Resumed after the release: this is the pass that parked.
            p.parked = false;
            return Ok(false);
        }
        if let Phase::Parking { head, .. } = ff.phase
            && head == block
            && ff.parked > 0
            && let Some(p) = slot.as_mut()
        {
            // Once a rank has stopped, the window stays as it was: the
            // iterations that end now meet ranks that have stopped already,
            // whose next iteration's traffic they would meet in the full
            // run.
            p.passes += 1;
            let passes = p.passes;
            return Ok(self.ff_park_here(id, block, passes));
        }
        let was_steady = slot.as_ref().filter(|p| p.steady).map(|p| p.head);
        let next = match slot.take() {
            Some(mut p) if p.head == block => {
                p.observe(&frame.locals, lp.clock, lp.stats);
                p
            }
            _ => Pass::first(block, lp.clock, lp.stats, &frame.locals),
        };
        let is_steady = next.steady.then_some(block);
        let passes = next.passes;
        *slot = Some(next);
        if was_steady != is_steady {
            if let Some(h) = was_steady
                && let Some(n) = ff.steady.get_mut(&h)
            {
                *n -= 1;
            }
            if let Some(h) = is_steady {
                *ff.steady.entry(h).or_insert(0) += 1;
            }
        }
        let decide = matches!(ff.phase, Phase::Observing)
            && ff.steady.get(&block).copied() == Some(self.cfg.ranks);
        if decide {
            self.ff_decide(block)?;
        }
        Ok(self.ff_park_here(id, block, passes))
    }

    /// Every rank is steady on loop `block`: park at the first pass no rank
    /// has reached, with the most iterations that can be skipped from there
    /// (the loop's end, less the tail, and the first iteration on any rank
    /// whose branches would take another way than the observed ones).
    /// Without any, observation starts again, for the next loop or the next
    /// time this one runs.
    fn ff_decide(&mut self, block: Head) -> RunResult<()> {
        let Some(ff) = self.ff.as_deref() else {
            return Ok(());
        };
        let pass = ff
            .passes
            .iter()
            .flatten()
            .map(|p| p.passes)
            .max()
            .unwrap_or(0)
            + 1;
        let func = self.program.function(block.0);
        let Terminator::Branch { cond, span, .. } = &func.cfg[block.1].term else {
            return Ok(());
        };
        let mut max_skip = i64::MAX;
        // Why not, if not.
        let mut declined: Option<String> = None;
        // Iterations left at the parking pass, the same on every rank: the
        // first rank's, with its id.
        let mut at_park: Option<(u32, i64)> = None;
        // The ranks' mean periods, lowest and highest (with the rank): one
        // period must serve every rank.
        let mut periods: Option<[(u32, f64); 2]> = None;
        // The ranks' cycles' least common multiple: whole cycles are skipped.
        let mut cycle = 1;
        for id in 0..self.cfg.ranks {
            let Some(p) = self.pass_of(id) else {
                declined = Some(format!("rank {id} was not observed at the loop's head"));
                break;
            };
            let Some(run) = p.run else {
                declined = Some(format!("rank {id} has no steady iteration"));
                break;
            };
            let ahead = i64::from(pass - p.passes);
            let (drift, period) = (p.drift_means(), p.mean().period);
            cycle = lcm(cycle, p.cycle().unwrap_or(1));
            let [lo, hi] = periods.get_or_insert([(id, period), (id, period)]);
            if period < lo.1 {
                *lo = (id, period);
            }
            if period > hi.1 {
                *hi = (id, period);
            }
            if hi.1 - lo.1 > REL_PERIOD * hi.1 {
                // Ranks that do not wait for each other (pairs streaming
                // apart) each keep their own pace; moving them all by one
                // period would be wrong.
                declined = Some(format!(
                    "the ranks repeat the loop at different paces (rank {}: {:.6e} s, rank {}: \
                     {:.6e} s per iteration)",
                    lo.0, lo.1, hi.0, hi.1
                ));
                break;
            }
            let back = i64::from(run.count).min(WINDOW as i64);
            let it = run.first;
            if self.lps[id as usize].state == LpState::Finished {
                declined = Some(format!("rank {id} finished while others ran the loop"));
                break;
            }
            // From the rank's last pass of the header (`p.last`, not its
            // live frame: the rank may be inside the body, or in a function
            // the body calls).
            let (at, clock) = (p.last.clone(), p.clock);
            let Some(left) = self.iterations_left(id, &at, clock, cond, *span, &it, &drift)? else {
                declined = Some(
                    "the loop's condition does not end after a counted number of iterations".into(),
                );
                break;
            };
            match at_park {
                Some((first, n)) if n != left - ahead => {
                    declined = Some(format!(
                        "the ranks run different numbers of iterations (ranks {first} and {id} \
                         differ by {})",
                        (n - (left - ahead)).abs()
                    ));
                    break;
                }
                Some(_) => {}
                None => at_park = Some((id, left - ahead)),
            }
            max_skip = max_skip.min(left - ahead - TAIL);
            if max_skip < 1 {
                // The other ranks' counts are still compared: a rank that
                // has fewer iterations than the others is the better reason.
                declined = Some("too few iterations left to skip any".into());
                continue;
            }
            match self.ff_first_change(id, &at, clock, block, &it, &drift, period, back, left)? {
                Err(reason) => {
                    if let Some(ff) = self.ff.as_deref_mut() {
                        ff.exclude(block, reason);
                    }
                    return Ok(());
                }
                // The iteration before the change is simulated too: a
                // branch on a variable set earlier in the body sees it one
                // iteration later than at the header.
                Ok(Some(change)) => max_skip = max_skip.min(change - ahead - 1),
                Ok(None) => {}
            }
        }
        let exact = declined.is_none() && self.ff_exact(block);
        let Some(ff) = self.ff.as_deref_mut() else {
            return Ok(());
        };
        if let Some(reason) = declined {
            // The first reason is the one reported: later ones often follow
            // from it (a rank that kept its own pace finishes first).
            ff.declined.get_or_insert(reason);
            ff.restart();
        } else if whole(max_skip, cycle) >= 1 && at_park.is_some() {
            if exact {
                ff.phase = Phase::Shift {
                    head: block,
                    max_skip,
                };
                self.ff_shift_due = true;
            } else {
                ff.phase = Phase::Parking {
                    head: block,
                    pass,
                    max_skip,
                };
            }
        } else {
            ff.restart();
        }
        Ok(())
    }

    /// The first iteration `k` (counted from rank `id`'s next, 0; from
    /// `-back`, the steady window's first, to `until`) at which a branch of
    /// loop `head`'s body that reads the counter, a drifting float or the
    /// clock would go another way than at `-back`, with those stepped `k`
    /// iterations on (`step_drift`, the clock by the mean period); `None`
    /// if none does. `Err` if the body passes one of them to a function
    /// that branches on it (`branches_on`).
    #[expect(
        clippy::too_many_arguments,
        reason = "the loop's observed run, unpacked"
    )]
    fn ff_first_change(
        &self,
        id: u32,
        at: &Locals,
        clock: f64,
        head: Head,
        it: &Iteration,
        drift_steps: &[f64],
        period: f64,
        back: i64,
        until: i64,
    ) -> RunResult<Result<Option<i64>, String>> {
        let Some(body) = self.ff.as_deref().and_then(|f| f.heads.get(&head)) else {
            return Ok(Ok(None));
        };
        let func = self.program.function(head.0);
        let varies = |e: &Expr| match e {
            Expr::Local(s) => *s == it.counter || is_drift(it.drift, *s as usize),
            Expr::Wtime => true,
            _ => false,
        };
        let mut conds: Vec<&Expr> = Vec::new();
        for &b in body {
            let block = &func.cfg[b];
            for s in &block.stmts {
                if let Stmt::Call {
                    func: callee,
                    args,
                    span,
                    ..
                } = s
                {
                    let mut params = vec![false; args.len()];
                    for (t, a) in params.iter_mut().zip(args) {
                        *t = a.any(&varies);
                    }
                    if !params.contains(&true) {
                        continue;
                    }
                    let mut seen = HashSet::new();
                    if let Some(line) = branches_on(self.program, *callee, &params, &mut seen) {
                        return Ok(Err(format!(
                            "the loop at line {} passes its counter, the clock or a value it \
                             accumulates to a function (line {}) that branches on it (line {line})",
                            func.cfg[head.1].span.line, span.line
                        )));
                    }
                }
            }
            if let Terminator::Branch { cond, .. } = &block.term
                && cond.any(&varies)
            {
                conds.push(cond);
            }
        }
        if conds.is_empty() {
            return Ok(Ok(None));
        }
        let Some(Value::Int(c0)) = at.get(it.counter as usize).cloned() else {
            return Ok(Ok(None));
        };
        let mut locals = at.clone();
        // Which way each branch goes at iteration k (None: an error or a
        // value that is no condition, which counts as a way of its own).
        let mut ways = |k: i64, out: &mut Vec<Option<bool>>| {
            out.clear();
            if !stepped(at, &mut locals, c0, it, drift_steps, k) {
                return false;
            }
            let cx = self.eval_cx(id, &locals, clock + k as f64 * period);
            out.extend(
                conds
                    .iter()
                    .map(|e| eval(e, &cx).ok().and_then(|v| v.truthy().ok())),
            );
            true
        };
        let (mut first, mut now) = (Vec::new(), Vec::new());
        if !ways(-back, &mut first) {
            return Ok(Ok(Some(-back)));
        }
        for k in (1 - back)..=until {
            if !ways(k, &mut now) || now != first {
                return Ok(Ok(Some(k)));
            }
        }
        Ok(Ok(None))
    }

    fn ff_park_here(&mut self, id: u32, block: Head, passes: u32) -> bool {
        let Some(ff) = self.ff.as_deref_mut() else {
            return false;
        };
        match ff.phase {
            Phase::Parking { head, pass, .. } if head == block && passes == pass => {
                if let Some(p) = ff.passes[id as usize].as_mut() {
                    p.parked = true;
                }
                ff.parked += 1;
                true
            }
            _ => false,
        }
    }

    /// The event queue is empty. If every rank is parked, jump; returns
    /// whether the run goes on, or why the fast-forward is abandoned.
    pub(super) fn ff_release(&mut self) -> RunResult<Result<bool, String>> {
        let Some(ff) = self.ff.as_deref() else {
            return Ok(Ok(false));
        };
        let Phase::Parking { head, max_skip, .. } = ff.phase else {
            return Ok(Ok(false));
        };
        if ff.parked != self.cfg.ranks {
            return Ok(Err(format!(
                "only {} of {} ranks reached the iteration where they were to stop together",
                ff.parked, self.cfg.ranks
            )));
        }
        // Nothing in flight: every message sent was received.
        if let Some(r) = self.lps.iter().position(|lp| {
            lp.has_unexpected()
                || lp.has_posted()
                || !lp.pending.is_empty()
                || lp.inflight > 0
                || lp.in_collective()
        }) {
            return Ok(Err(format!(
                "messages cross the loop's iterations (rank {r} has messages or requests \
                 outstanding at the loop's head)"
            )));
        }
        let func = self.program.function(head.0);
        let Terminator::Branch { cond, span, .. } = &func.cfg[head.1].term else {
            return Ok(Err("the loop's head does not branch".into()));
        };
        // Iterations left, per rank, from the loop's condition.
        let mut left: Option<i64> = None;
        let mut sums = Vec::with_capacity(self.cfg.ranks as usize);
        // Each rank's drifting floats' mean steps (empty for most loops).
        let mut drifts: Vec<Vec<f64>> = Vec::with_capacity(self.cfg.ranks as usize);
        // Whole cycles of every rank are skipped: the ranks' offsets after
        // the jump are then those the full run has there.
        let mut cycle = 1;
        for id in 0..self.cfg.ranks {
            let Some(p) = self.pass_of(id) else {
                return Ok(Err(format!("rank {id} was not observed")));
            };
            let Some(run) = p.run else {
                return Ok(Err(format!("rank {id} has no steady iteration")));
            };
            let it = run.first;
            let drift = p.drift_means();
            cycle = lcm(cycle, p.cycle().unwrap_or(1));
            sums.push((p.mean(), p.extremes(), p.cycle_change()));
            // Parked at the loop's header: its frame is the innermost one
            // (`p.last` stopped with the window).
            let lp = &self.lps[id as usize];
            let Some(frame) = lp.frames.last() else {
                return Ok(Err(format!("rank {id} has no frame")));
            };
            let n = self.iterations_left(id, &frame.locals, lp.clock, cond, *span, &it, &drift)?;
            drifts.push(drift);
            match (n, left) {
                (None, _) => {
                    return Ok(Err(
                        "the loop's condition does not end after a counted number of iterations"
                            .into(),
                    ));
                }
                (Some(n), None) => left = Some(n),
                (Some(n), Some(l)) if n != l => {
                    return Ok(Err(format!(
                        "the ranks have different numbers of iterations left ({l} and {n})"
                    )));
                }
                _ => {}
            }
        }
        let skip = whole((left.unwrap_or(0) - TAIL).min(max_skip), cycle);
        if skip < 1 {
            return Ok(Err("too few iterations left to skip any".into()));
        }
        // One period for all: the ranks move by the same time, so their
        // offsets stay as they were.
        let (period, deviation, change) = one_period(&sums);
        let min_compute = sums
            .iter()
            .map(|(m, ..)| m.compute)
            .fold(f64::INFINITY, f64::min);
        let k = skip as f64;
        let shift = k * period;
        let mut messages = 0u64;
        let mut bytes = 0u64;
        for (id, ((mean, ..), drift)) in sums.iter().zip(&drifts).enumerate() {
            let lp = &mut self.lps[id];
            let clock = lp.clock + shift;
            if clock < self.now {
                return Ok(Err(format!(
                    "rank {id}'s clock is more than the skipped time behind the others"
                )));
            }
            lp.clock = clock;
            advance_stats(&mut lp.stats, mean, skip);
            messages += skip as u64 * mean.messages;
            bytes += skip as u64 * mean.bytes;
            if let Some(f) = lp.frames.last_mut() {
                advance_locals(&mut f.locals, mean, drift, skip);
            }
            lp.state = LpState::Ready;
            lp.wake_at = f64::INFINITY;
        }
        self.messages += messages;
        self.bytes += bytes;
        for id in 0..self.cfg.ranks {
            let t = self.lps[id as usize].clock;
            let (tag, x) = EventKind::Resume(id).encode();
            self.queue.push(t, tag, x);
        }
        if let Some(ff) = self.ff.as_deref_mut() {
            ff.applied.push(api::SkippedLoop {
                line: span.line,
                iterations: skip as u64,
                period,
                period_spread: deviation,
                // What the skipped periods may miss, and the first
                // iteration after the jump, which does not meet the
                // traffic of the one before: at most its time beyond
                // computing.
                bound: k * change + (period - min_compute).max(0.0),
            });
            // The loop may run again (inside a loop that prints), or
            // another may follow: observation starts again from here, each
            // rank's pass at its state after the jump (the pass it stopped
            // at is not observed again when it resumes).
            ff.restart();
            for (p, lp) in ff.passes.iter_mut().zip(&self.lps) {
                if let Some(p) = p.as_mut()
                    && let Some(f) = lp.frames.last()
                {
                    p.last.clone_from(&f.locals);
                    p.clock = lp.clock;
                    p.stats = lp.stats;
                    p.reset();
                }
            }
        }
        Ok(Ok(true))
    }

    /// Whether loop `head` can be skipped by shifting the whole simulation
    /// at once (`ff_shift`) rather than by parking the ranks: the machine
    /// can shift its state, no communication of the body (or of a function
    /// it passes them to) takes an argument computed from the counter, a
    /// drifting float or the clock (a message in flight would carry the
    /// value of its own iteration, which the shift does not move: a tag
    /// that counts iterations would no longer match), and no function the
    /// body calls reads the clock (its frame could hold a time that the
    /// shift does not move).
    fn ff_exact(&mut self, head: Head) -> bool {
        if !self.machine.shift_time(0.0) {
            return false;
        }
        let program = self.program;
        let Some(ff) = self.ff.as_deref() else {
            return false;
        };
        let Some(body) = ff.heads.get(&head) else {
            return false;
        };
        let f = program.function(head.0);
        let mut tainted = vec![false; f.num_locals as usize];
        for p in ff.passes.iter().flatten() {
            let Some(run) = p.run else {
                return false;
            };
            let it = run.first;
            if let Some(t) = tainted.get_mut(it.counter as usize) {
                *t = true;
            }
            for (i, t) in tainted.iter_mut().enumerate().take(64) {
                *t |= is_drift(it.drift, i);
            }
        }
        let blocks: Vec<BlockId> = std::iter::once(head.1)
            .chain(body.iter().copied())
            .collect();
        let mut seen = HashSet::new();
        let mut callee = |c: FuncId, ps: &[bool]| {
            taint_walk(program, c, ps, &mut seen, &mut |cf, t| {
                comm_reads(cf, None, t)
            })
        };
        if propagate(f, Some(&blocks), &mut tainted, &mut callee).is_some()
            || comm_reads(f, Some(&blocks), &tainted).is_some()
        {
            return false;
        }
        let mut seen = HashSet::new();
        !blocks.iter().any(|&b| {
            f.cfg[b].stmts.iter().any(|st| match st {
                Stmt::Call { func, .. } => function_reads_clock(program, *func, &mut seen),
                _ => false,
            })
        })
    }

    /// The exact jump (`Phase::Shift`): every rank is steady on one loop
    /// with the same mean period, so the state of the whole simulation
    /// repeats, shifted by a period, every iteration. It is moved forward
    /// by `k` whole cycles at once, between two events, wherever each rank
    /// stands in its iteration: every time the engine and the machine hold
    /// (clocks, wake-ups, queued events, messages in flight, requests,
    /// busy timelines) `k` periods later; each rank's counter, drifting
    /// floats (in the loop function's frame) and statistics by `k` mean
    /// iterations; nothing is parked and nothing has to drain. For a state
    /// that repeats exactly this is the full run's state `k` periods on; the
    /// bound counts the largest change from one cycle to the next per
    /// skipped iteration.
    pub(super) fn ff_shift(&mut self) {
        let Some(ff) = self.ff.as_deref() else {
            return;
        };
        let Phase::Shift { head, max_skip } = ff.phase else {
            return;
        };
        let line = self.program.function(head.0).cfg[head.1].span.line;
        let mut sums = Vec::with_capacity(self.cfg.ranks as usize);
        let mut drifts: Vec<Vec<f64>> = Vec::with_capacity(self.cfg.ranks as usize);
        let mut frames = Vec::with_capacity(self.cfg.ranks as usize);
        let mut cycle = 1;
        for id in 0..self.cfg.ranks {
            let (Some(p), lp) = (self.pass_of(id), &self.lps[id as usize]) else {
                return self.ff_restart();
            };
            // The loop's function's frame (not recursive: one at most).
            let frame = lp.frames.iter().rposition(|f| f.func == head.0);
            let (Some(_), Some(frame)) = (p.run, frame) else {
                return self.ff_restart();
            };
            cycle = lcm(cycle, p.cycle().unwrap_or(1));
            sums.push((p.mean(), p.extremes(), p.cycle_change()));
            drifts.push(p.drift_means());
            frames.push(frame);
        }
        // The iterations each rank has left now, from the loop's condition
        // with its counter where it stands (a rank may have run on past
        // the header since the decision).
        let func = self.program.function(head.0);
        let Terminator::Branch { cond, span, .. } = &func.cfg[head.1].term else {
            return self.ff_restart();
        };
        let mut left = i64::MAX;
        for (id, ((mean, ..), &frame)) in sums.iter().zip(&frames).enumerate() {
            let lp = &self.lps[id];
            let Some(f) = lp.frames.get(frame) else {
                return self.ff_restart();
            };
            let it = Iteration { drift: 0, ..*mean };
            match self.iterations_left(id as u32, &f.locals, lp.clock, cond, *span, &it, &[]) {
                Ok(Some(n)) => left = left.min(n),
                _ => return self.ff_restart(),
            }
        }
        let skip = whole(max_skip.min(left - TAIL - 1), cycle);
        if skip < 1 {
            return self.ff_restart();
        }
        let (period, deviation, change) = one_period(&sums);
        let k = skip as f64;
        let delta = k * period;
        if !self.machine.shift_time(delta) {
            // `ff_exact` asked; a model that answers otherwise now is
            // not shifted, and neither is anything else.
            return self.ff_restart();
        }
        let (mut messages, mut bytes) = (0u64, 0u64);
        for (id, (((mean, ..), drift), &frame)) in sums.iter().zip(&drifts).zip(&frames).enumerate()
        {
            let lp = &mut self.lps[id];
            lp.shift_times(delta, k * (mean.compute + mean.comm));
            advance_stats(&mut lp.stats, mean, skip);
            messages += skip as u64 * mean.messages;
            bytes += skip as u64 * mean.bytes;
            if let Some(f) = lp.frames.get_mut(frame) {
                advance_locals(&mut f.locals, mean, drift, skip);
            }
        }
        self.messages += messages;
        self.bytes += bytes;
        for m in &mut self.msgs {
            m.arrival += delta;
            m.sent += delta;
        }
        for r in &mut self.reqs {
            if r.ready_at.is_finite() {
                r.ready_at += delta;
            }
        }
        self.now += delta;
        self.queue.shift(delta);
        let Some(ff) = self.ff.as_deref_mut() else {
            return;
        };
        ff.applied.push(api::SkippedLoop {
            line,
            iterations: skip as u64,
            period,
            period_spread: deviation,
            // Nothing is parked: only the skipped periods' own variation,
            // and the rounding of one shift by k periods against k steps
            // of the clock (an ulp of the clock per step).
            bound: k * change + k * (self.now * f64::EPSILON),
        });
        // Observation starts again, each rank's last pass moved as its
        // state was.
        ff.restart();
        for ((p, (mean, ..)), drift) in ff.passes.iter_mut().zip(&sums).zip(&drifts) {
            if let Some(p) = p.as_mut() {
                advance_locals(&mut p.last, mean, drift, skip);
                p.clock += delta;
                advance_stats(&mut p.stats, mean, skip);
                p.reset();
            }
        }
    }

    /// Observation starts again (a shift that could not be made).
    fn ff_restart(&mut self) {
        if let Some(ff) = self.ff.as_deref_mut() {
            ff.restart();
        }
    }

    /// Rank `id`'s observation of the candidate loops, if it has one.
    fn pass_of(&self, id: u32) -> Option<&Pass> {
        self.ff
            .as_deref()
            .and_then(|f| f.passes[id as usize].as_ref())
    }

    /// What an expression of rank `id` reads, with the variables `locals`
    /// and the clock at `clock` (a stepped copy of its own).
    fn eval_cx<'c>(&'c self, id: u32, locals: &'c [Value], clock: f64) -> EvalCx<'c> {
        EvalCx {
            locals,
            params: &self.params,
            rank: id,
            size: self.cfg.ranks,
            clock,
            comms: &self.comms,
        }
    }

    /// How many more times rank `id`'s loop condition holds as its counter
    /// steps on: `Some(n)` when it holds for the next `n` values and not
    /// after (checked at both ends of a doubling search), `None` if that
    /// cannot be established.
    #[expect(
        clippy::too_many_arguments,
        reason = "the loop's observed run, unpacked"
    )]
    fn iterations_left(
        &self,
        id: u32,
        at: &Locals,
        clock: f64,
        cond: &Expr,
        span: Span,
        it: &Iteration,
        drift_steps: &[f64],
    ) -> RunResult<Option<i64>> {
        let Some(Value::Int(c0)) = at.get(it.counter as usize).cloned() else {
            return Ok(None);
        };
        let mut locals = at.clone();
        let mut holds = |k: i64| -> RunResult<Option<bool>> {
            if !stepped(at, &mut locals, c0, it, drift_steps, k) {
                return Ok(None);
            }
            let cx = self.eval_cx(id, &locals, clock);
            let v = eval(cond, &cx).map_err(|m| self.rt(id, span, m))?;
            Ok(v.truthy().ok())
        };
        if holds(0)? != Some(true) {
            return Ok(Some(0));
        }
        // The first k with the condition false: double, then bisect.
        let mut hi = 1i64;
        loop {
            match holds(hi)? {
                Some(true) if hi < (1 << 50) => hi *= 2,
                Some(false) => break,
                _ => return Ok(None),
            }
        }
        let mut lo = hi / 2; // holds(lo) is true
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            match holds(mid)? {
                Some(true) => lo = mid,
                Some(false) => hi = mid,
                None => return Ok(None),
            }
        }
        Ok(Some(hi))
    }
}
