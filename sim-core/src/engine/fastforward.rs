//! Fast-forward of a steady loop (`SimConfig::fast_forward`, issue 15):
//! once every rank repeats an outer loop of `main` with the same period,
//! the same variables and the same traffic per iteration, the remaining
//! iterations but a few are skipped by moving every rank's clock, loop
//! counter and statistics forward by whole periods.
//!
//! How (ParJava's partial interpretation and SMPI's sampling skip repeated
//! work the same way):
//! 1. *Candidates.* The outermost loops of `main` (headers of back edges,
//!    `petgraph` dominators) whose bodies print nothing, directly or in a
//!    function they call.
//! 2. *Observation.* Each time a rank reaches a candidate's header (its
//!    branch), its clock, statistics and variables are compared with the
//!    last pass: the pass is *steady* when exactly one integer variable
//!    changed, by the same step as last time (the counter), every other
//!    variable is equal (request handles aside), and the period and the
//!    per-iteration compute, overhead, messages and bytes equal the last
//!    pass's (periods to a relative 1e-9). A rank is steady when its last
//!    [`WINDOW`] iterations repeat with a cycle of at most [`MAX_CYCLE`]
//!    iterations (ranks that wait for each other alternately repeat every
//!    second iteration).
//! 3. *Decision.* When every rank is steady on the same loop with the same
//!    period, every rank stops (parks) at the header of the next pass that
//!    no rank has reached yet.
//! 4. *Release.* When every rank is parked and no event is left, nothing is
//!    in flight: every message of the iterations before was received. The
//!    iterations left are counted from the loop's condition (the same on
//!    every rank); whole cycles of them, leaving at least [`TAIL`], are
//!    skipped: counter + m steps, clock + m periods, statistics + m times
//!    one iteration's, and the ranks go on from their new clocks.
//!
//! What it can get wrong, reported with the result: the skipped iterations
//! are taken to repeat exactly; the periods agreed to the spread recorded;
//! and the first iteration after the jump does not meet the traffic of the
//! iteration before it (contention across the iteration boundary), at most
//! one period.
//!
//! When the release finds something in flight, ranks with different
//! iteration counts, or too few iterations left, the run is abandoned and
//! [`super::api::simulate`] runs the program again in full: the result is
//! then exactly the full run's, with the reason reported.

use std::collections::HashSet;

use petgraph::algo::dominators::simple_fast;
use petgraph::visit::EdgeRef;

use super::*;

/// The longest lag at which a rank's variables (the counter aside) must
/// come back: a loop may alternate a value every second or fourth
/// iteration.
pub(super) const MAX_CYCLE: usize = 4;
/// Iterations observed per rank; a rank is steady when its last `WINDOW`
/// iterations have the same traffic and periods within [`REL_PERIOD`].
pub(super) const WINDOW: usize = 16;
/// Iterations simulated after the jump (the loop's end is simulated).
pub(super) const TAIL: i64 = 2;
/// How far the periods of a steady window may differ from their mean,
/// relatively. Ranks that wait for each other alternately, or a phase
/// defect that travels along a chain of ranks, vary the period by a few
/// tenths of a microsecond while its mean stays put; the report's bound
/// counts what the variation can add up to.
const REL_PERIOD: f64 = 1e-3;

/// One iteration of a rank: from one pass of the header to the next.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Iteration {
    period: f64,
    counter: Slot,
    step: i64,
    compute: f64,
    comm: f64,
    messages: u64,
    bytes: u64,
}

/// What one rank showed at its passes of a candidate header.
#[derive(Debug, Clone)]
pub(super) struct Pass {
    head: BlockId,
    passes: u32,
    clock: f64,
    stats: RankStats,
    /// The variables at the last `MAX_CYCLE` passes, the latest last.
    locals: VecDeque<Locals>,
    /// The last `WINDOW` iterations, the latest last.
    iterations: VecDeque<Iteration>,
    /// The window is steady.
    steady: bool,
    /// Parked at the header (the next pass resumes without counting).
    parked: bool,
}

impl Pass {
    fn first(head: BlockId, clock: f64, stats: RankStats, locals: &Locals) -> Pass {
        Pass {
            head,
            passes: 1,
            clock,
            stats,
            locals: VecDeque::from([locals.clone()]),
            iterations: VecDeque::new(),
            steady: false,
            parked: false,
        }
    }

    /// Whether the window is steady: full, one counter stepping alike,
    /// the same messages and bytes every iteration, periods within
    /// [`REL_PERIOD`] of their mean, and the variables (the counter aside)
    /// back to their values of at most [`MAX_CYCLE`] passes before.
    fn is_steady(&self, now: &Locals) -> bool {
        let it = &self.iterations;
        let Some(first) = it.front() else {
            return false;
        };
        if it.len() < WINDOW
            || it.iter().any(|i| {
                i.counter != first.counter
                    || i.step != first.step
                    || i.messages != first.messages
                    || i.bytes != first.bytes
            })
        {
            return false;
        }
        let mean = it.iter().map(|i| i.period).sum::<f64>() / it.len() as f64;
        if it
            .iter()
            .any(|i| (i.period - mean).abs() > REL_PERIOD * mean)
        {
            return false;
        }
        let counter = first.counter as usize;
        (1..=MAX_CYCLE.min(self.locals.len())).any(|k| {
            self.locals[self.locals.len() - k]
                .iter()
                .zip(now.iter())
                .enumerate()
                .all(|(i, (a, b))| i == counter || same_value(a, b))
        })
    }

    /// The window's mean iteration (period, compute and overhead), with its
    /// traffic, which is the same every iteration.
    fn mean(&self) -> Iteration {
        let n = self.iterations.len().max(1) as f64;
        let mut m = self.iterations.back().copied().unwrap_or(Iteration {
            period: 0.0,
            counter: 0,
            step: 0,
            compute: 0.0,
            comm: 0.0,
            messages: 0,
            bytes: 0,
        });
        m.period = self.iterations.iter().map(|i| i.period).sum::<f64>() / n;
        m.compute = self.iterations.iter().map(|i| i.compute).sum::<f64>() / n;
        m.comm = self.iterations.iter().map(|i| i.comm).sum::<f64>() / n;
        m
    }
}

#[derive(Debug)]
pub(super) enum Phase {
    Observing,
    /// Every rank parks at this pass of the header.
    Parking {
        head: BlockId,
        pass: u32,
    },
    Done,
}

#[derive(Debug)]
pub(super) struct FastForward {
    /// The candidate headers in `main`.
    heads: HashSet<BlockId>,
    pub(super) passes: Vec<Option<Pass>>,
    steady: u32,
    pub(super) parked: u32,
    pub(super) phase: Phase,
    /// What happened, for the report.
    pub(super) outcome: Option<api::FastForward>,
}

/// Whether `f` or a function it calls prints.
fn prints(program: &Program, f: FuncId, seen: &mut HashSet<FuncId>) -> bool {
    if !seen.insert(f) {
        return false;
    }
    program.function(f).cfg.node_weights().any(|b| {
        b.stmts.iter().any(|s| match s {
            Stmt::Print { .. } => true,
            Stmt::Call { func, .. } => prints(program, *func, seen),
            _ => false,
        })
    })
}

impl FastForward {
    pub(super) fn new(program: &Program, ranks: u32) -> FastForward {
        let main = program.function(program.main);
        let g = &main.cfg;
        let dom = simple_fast(g, main.entry);
        // Loops: back edges u -> h where h dominates u; the body is what
        // reaches u without passing h.
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
        let outer: Vec<&(BlockId, HashSet<BlockId>)> = loops
            .iter()
            .filter(|(h, _)| !loops.iter().any(|(o, b)| o != h && b.contains(h)))
            .collect();
        let mut heads = HashSet::new();
        let mut printing = None;
        for (h, body) in outer {
            let mut seen = HashSet::new();
            let quiet = body.iter().all(|&b| {
                g[b].stmts.iter().all(|s| match s {
                    Stmt::Print { .. } => false,
                    Stmt::Call { func, .. } => !prints(program, *func, &mut seen),
                    _ => true,
                })
            });
            if quiet {
                heads.insert(*h);
            } else if printing.is_none() {
                printing = Some(g[*h].span.line);
            }
        }
        let outcome = match (heads.is_empty(), printing) {
            (true, Some(line)) => Some(api::FastForward::NotApplied {
                reason: format!(
                    "the loop at line {line} prints, and the skipped iterations' output would be lost"
                ),
            }),
            _ => None,
        };
        let phase = if heads.is_empty() {
            Phase::Done
        } else {
            Phase::Observing
        };
        FastForward {
            heads,
            passes: vec![None; ranks as usize],
            steady: 0,
            parked: 0,
            phase,
            outcome,
        }
    }
}

/// Variables equal but for request and status handles (a finished loop
/// iteration's requests differ in identity only).
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Req(_), Value::Req(_)) | (Value::Status(_), Value::Status(_)) => true,
        (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
        _ => a == b,
    }
}

/// The one integer variable that changed, and by how much; `None` if none
/// or several changed, or another kind of value did.
fn counter_of(before: &Locals, after: &Locals) -> Option<(Slot, i64)> {
    if before.len() != after.len() {
        return None;
    }
    let mut found = None;
    for (i, (a, b)) in before.iter().zip(after.iter()).enumerate() {
        if same_value(a, b) {
            continue;
        }
        match (a, b, found) {
            (Value::Int(x), Value::Int(y), None) => found = Some((i as Slot, y.checked_sub(*x)?)),
            _ => return None,
        }
    }
    found.filter(|&(_, step)| step != 0)
}

impl Engine<'_> {
    /// At the branch of `block` in `main`, frame depth 1: observe the pass;
    /// true if the rank parks here.
    pub(super) fn ff_pass(&mut self, id: u32, block: BlockId) -> bool {
        let Some(ff) = self.ff.as_deref_mut() else {
            return false;
        };
        if matches!(ff.phase, Phase::Done) || !ff.heads.contains(&block) {
            return false;
        }
        let lp = &self.lps[id as usize];
        let Some(frame) = lp.frames.last() else {
            return false;
        };
        let slot = &mut ff.passes[id as usize];
        if let Some(p) = slot.as_mut()
            && p.parked
        {
            // Resumed after the release: this is the pass that parked.
            p.parked = false;
            return false;
        }
        let was_steady = slot.as_ref().is_some_and(|p| p.steady);
        let next = match slot.take() {
            Some(mut p) if p.head == block => {
                let iteration = p.locals.back().and_then(|before| {
                    counter_of(before, &frame.locals).map(|(counter, step)| Iteration {
                        period: lp.clock - p.clock,
                        counter,
                        step,
                        compute: lp.stats.compute - p.stats.compute,
                        comm: lp.stats.comm - p.stats.comm,
                        messages: lp.stats.messages_sent - p.stats.messages_sent,
                        bytes: lp.stats.bytes_sent - p.stats.bytes_sent,
                    })
                });
                match iteration {
                    Some(i) => {
                        if p.iterations.len() == WINDOW {
                            p.iterations.pop_front();
                        }
                        p.iterations.push_back(i);
                    }
                    None => p.iterations.clear(),
                }
                p.steady = p.is_steady(&frame.locals);
                if p.locals.len() > MAX_CYCLE {
                    p.locals.pop_front();
                }
                p.locals.push_back(frame.locals.clone());
                p.passes += 1;
                p.clock = lp.clock;
                p.stats = lp.stats;
                p
            }
            _ => Pass::first(block, lp.clock, lp.stats, &frame.locals),
        };
        let is_steady = next.steady;
        let passes = next.passes;
        *slot = Some(next);
        match (was_steady, is_steady) {
            (false, true) => ff.steady += 1,
            (true, false) => ff.steady -= 1,
            _ => {}
        }
        let decide = matches!(ff.phase, Phase::Observing) && ff.steady == self.cfg.ranks;
        if decide {
            self.ff_decide(block);
        }
        self.ff_park_here(id, block, passes)
    }

    /// Every rank is steady on the same loop: park at the first pass no
    /// rank has reached.
    fn ff_decide(&mut self, block: BlockId) {
        let Some(ff) = self.ff.as_deref_mut() else {
            return;
        };
        if ff
            .passes
            .iter()
            .any(|p| p.as_ref().is_none_or(|p| p.head != block))
        {
            return;
        }
        let pass = ff
            .passes
            .iter()
            .flatten()
            .map(|p| p.passes)
            .max()
            .unwrap_or(0)
            + 1;
        ff.phase = Phase::Parking { head: block, pass };
    }

    fn ff_park_here(&mut self, id: u32, block: BlockId, passes: u32) -> bool {
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
        let Phase::Parking { head, .. } = ff.phase else {
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
            !lp.unexpected.is_empty()
                || !lp.posted.is_empty()
                || !lp.pending.is_empty()
                || lp.inflight > 0
                || lp.coll.is_some()
        }) {
            return Ok(Err(format!(
                "messages cross the loop's iterations (rank {r} has messages or requests \
                 outstanding at the loop's head)"
            )));
        }
        let main = self.program.function(self.program.main);
        let Terminator::Branch { cond, span, .. } = &main.cfg[head].term else {
            return Ok(Err("the loop's head does not branch".into()));
        };
        // Iterations left, per rank, from the loop's condition.
        let mut left: Option<i64> = None;
        let mut sums = Vec::with_capacity(self.cfg.ranks as usize);
        for id in 0..self.cfg.ranks {
            let Some(p) = self
                .ff
                .as_deref()
                .and_then(|f| f.passes[id as usize].as_ref())
            else {
                return Ok(Err(format!("rank {id} was not observed")));
            };
            let Some(it) = p.iterations.back().copied() else {
                return Ok(Err(format!("rank {id} has no steady iteration")));
            };
            sums.push((
                p.mean(),
                p.iterations.iter().map(|i| i.period).collect::<Vec<_>>(),
            ));
            let n = self.iterations_left(id, cond, *span, it.counter, it.step)?;
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
        let skip = left.unwrap_or(0) - TAIL;
        if skip < 1 {
            return Ok(Err("too few iterations left to skip any".into()));
        }
        // One period for all: the mean of the ranks' window means. The
        // ranks move by the same time, so their offsets stay as they were.
        let period = sums.iter().map(|(m, _)| m.period).sum::<f64>() / sums.len().max(1) as f64;
        let deviation = (sums.iter())
            .flat_map(|(_, ps)| ps.iter())
            .map(|p| (p - period).abs())
            .fold(0.0, f64::max);
        let min_compute = sums
            .iter()
            .map(|(m, _)| m.compute)
            .fold(f64::INFINITY, f64::min);
        let k = skip as f64;
        let shift = k * period;
        let mut messages = 0u64;
        let mut bytes = 0u64;
        for (id, (mean, _)) in sums.iter().enumerate() {
            let lp = &mut self.lps[id];
            let clock = lp.clock + shift;
            if clock < self.now {
                return Ok(Err(format!(
                    "rank {id}'s clock is more than the skipped time behind the others"
                )));
            }
            lp.clock = clock;
            lp.stats.compute += k * mean.compute;
            lp.stats.comm += k * mean.comm;
            lp.stats.messages_sent += skip as u64 * mean.messages;
            lp.stats.bytes_sent += skip as u64 * mean.bytes;
            messages += skip as u64 * mean.messages;
            bytes += skip as u64 * mean.bytes;
            if let Some(f) = lp.frames.last_mut()
                && let Some(Value::Int(v)) = f.locals.get_mut(mean.counter as usize)
            {
                *v += skip * mean.step;
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
            ff.phase = Phase::Done;
            ff.outcome = Some(api::FastForward::Applied {
                line: span.line,
                iterations: skip as u64,
                period,
                period_spread: deviation,
                // What the skipped periods may miss, and the first
                // iteration after the jump, which does not meet the
                // traffic of the one before: at most its time beyond
                // computing.
                bound: k * deviation + (period - min_compute).max(0.0),
            });
        }
        Ok(Ok(true))
    }

    /// How many more times rank `id`'s loop condition holds as its counter
    /// steps on: `Some(n)` when it holds for the next `n` values and not
    /// after (checked at both ends of a doubling search), `None` if that
    /// cannot be established.
    fn iterations_left(
        &self,
        id: u32,
        cond: &Expr,
        span: Span,
        counter: Slot,
        step: i64,
    ) -> RunResult<Option<i64>> {
        let lp = &self.lps[id as usize];
        let Some(frame) = lp.frames.last() else {
            return Ok(None);
        };
        let Some(Value::Int(c0)) = frame.locals.get(counter as usize).cloned() else {
            return Ok(None);
        };
        let mut locals = frame.locals.clone();
        let mut holds = |k: i64| -> RunResult<Option<bool>> {
            let Some(c) = k.checked_mul(step).and_then(|d| c0.checked_add(d)) else {
                return Ok(None);
            };
            locals[counter as usize] = Value::Int(c);
            let cx = EvalCx {
                locals: &locals,
                params: &self.params,
                rank: id,
                size: self.cfg.ranks,
                clock: lp.clock,
                comms: &self.comms,
            };
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
