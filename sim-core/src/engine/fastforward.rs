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
//!    branch), the iteration since its last pass is compared with the
//!    first iteration of its current run: the same counter (the one
//!    integer variable that changed) with the same step, the same messages
//!    and bytes, and a period within [`REL_PERIOD`]; otherwise a new run
//!    starts. A rank is steady when its run is [`WINDOW`] iterations long
//!    or more and its variables (the counter aside; request handles by
//!    kind) came back within [`MAX_CYCLE`] passes, by a hash of them: ranks
//!    that wait for each other alternately vary the period every second
//!    iteration. A rank keeps only the run's sums and extremes, the last
//!    variables and a few hashes: a few hundred bytes.
//! 3. *Decision.* When every rank is steady on the same loop, every rank
//!    stops (parks) at the header of the next pass that no rank has
//!    reached yet.
//! 4. *Release.* When every rank is parked and no event is left, nothing is
//!    in flight: every message of the iterations before was received. The
//!    iterations left are counted from the loop's condition (the same on
//!    every rank); all but [`TAIL`] are skipped: every rank's clock moves
//!    by the same time, the skipped count times the mean of the ranks'
//!    mean periods (so the ranks' offsets stay as they were), its counter
//!    by as many steps and its statistics by as many mean iterations.
//!
//! What it can get wrong, reported with the result as a bound: the
//! skipped periods may differ from the mean by the largest deviation seen
//! in the runs, and the first iteration after the jump does not meet the
//! traffic of the iteration before it (contention across the iteration
//! boundary), which can change it by at most its time beyond computing.
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

/// What one rank showed at its passes of a candidate header: a few
/// hundred bytes, whatever the length of the run observed.
#[derive(Debug, Clone)]
pub(super) struct Pass {
    head: BlockId,
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
            || i.messages != f.messages
            || i.bytes != f.bytes
        {
            return false;
        }
        self.count += 1;
        true
    }
}

/// A hash of the variables but `skip` (request and status handles count
/// by their kind only, as in [`same_value`]).
fn hash_locals(locals: &Locals, skip: usize) -> u64 {
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
        if i != skip {
            value(v, &mut h);
        }
    }
    h.finish()
}

impl Pass {
    fn first(head: BlockId, clock: f64, stats: Counters, locals: &Locals) -> Pass {
        Pass {
            head,
            passes: 1,
            clock,
            stats,
            last: locals.clone(),
            hashes: VecDeque::new(),
            window: VecDeque::from([(clock, stats.compute, stats.comm)]),
            run: None,
            steady: false,
            parked: false,
        }
    }

    /// A pass with the variables `now`, the clock and the statistics.
    fn observe(&mut self, now: &Locals, clock: f64, stats: Counters) {
        let iteration = counter_of(&self.last, now).map(|(counter, step)| Iteration {
            period: clock - self.clock,
            counter,
            step,
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
            self.window
                .push_back((self.clock, self.stats.compute, self.stats.comm));
        }
        if self.window.len() == WINDOW + 1 {
            self.window.pop_front();
        }
        self.window.push_back((clock, stats.compute, stats.comm));
        self.steady = false;
        if let Some(r) = &self.run {
            let h = hash_locals(now, r.first.counter as usize);
            // The variables come back within MAX_CYCLE passes.
            let back = self.hashes.contains(&h);
            self.steady = back && r.count as usize >= WINDOW && self.periods_agree();
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

    /// The window's periods, oldest first.
    fn periods(&self) -> impl Iterator<Item = f64> + '_ {
        self.window
            .iter()
            .zip(self.window.iter().skip(1))
            .map(|(a, b)| b.0 - a.0)
    }

    /// Every period of the window within [`REL_PERIOD`] of their mean.
    fn periods_agree(&self) -> bool {
        let mean = self.mean().period;
        self.periods()
            .all(|p| (p - mean).abs() <= REL_PERIOD * mean)
    }

    /// The window's mean iteration, with the run's counter and traffic.
    fn mean(&self) -> Iteration {
        let (Some(a), Some(b), Some(r)) = (self.window.front(), self.window.back(), self.run)
        else {
            return Iteration {
                period: 0.0,
                counter: 0,
                step: 0,
                compute: 0.0,
                comm: 0.0,
                messages: 0,
                bytes: 0,
            };
        };
        let n = (self.window.len().saturating_sub(1)).max(1) as f64;
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
        (Value::Req(_), Value::Req(_))
        | (Value::Status(_) | Value::BigStatus(_), Value::Status(_) | Value::BigStatus(_)) => true,
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
                p.observe(&frame.locals, lp.clock, lp.stats);
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
            let Some(run) = p.run else {
                return Ok(Err(format!("rank {id} has no steady iteration")));
            };
            let it = run.first;
            sums.push((p.mean(), p.extremes()));
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
