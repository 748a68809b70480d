//! The deterministic event engine: one logical process (LP) per rank.
//!
//! Each LP is a state machine (model clock, frame stack, matching queues),
//! not a thread. One event loop pops events in (time, sequence) order.
//!
//! Invariants:
//! - Every communication operation (and `print`) executes with
//!   `lp.clock == now`: an LP whose clock ran ahead through compute yields
//!   first. Hence all sends, receives and model `transfer` calls happen in
//!   global time order, which makes shared NIC state causal and makes
//!   ANY_SOURCE matching exact (see below).
//! - Message envelopes are matched when their *arrival event* is processed,
//!   against the receiver's posted receives in posting order; a receive that
//!   is posted searches the envelopes that have already arrived, in arrival
//!   order. Because arrival events are processed in time order and every
//!   send happens at its sender's clock, a wildcard receive can never match
//!   a message while another LP could still send one that arrives earlier:
//!   this is ParJava's condition `min TM(m) < min T_i`, enforced by
//!   construction rather than by polling the clocks.
//! - For one (source, destination) pair arrivals are nondecreasing in send
//!   order (the model's contract, see `model.rs`; ties are broken by the
//!   event sequence, which is send order), so MPI's non-overtaking rule holds.
//! - An LP is in the event queue at most once (`LpState::Ready` means it is
//!   queued or running).

use std::collections::VecDeque;

use smallvec::{SmallVec, smallvec};

use crate::ir::{BlockId, CommOp, Expr, MsgArgs, PrintArg, Program, Slot, Span, Stmt, Terminator};
use crate::model::{Machine, MessageKind};
use crate::queue::EventQueue;
use crate::value::{EvalCx, MsgStatus, ReqRef, Value, eval};

/// Limits and options of one simulation.
#[derive(Debug, Clone)]
pub struct SimConfig {
    pub ranks: u32,
    /// Stop with [`SimError::Runaway`] after this many events.
    pub max_events: u64,
    /// Stop with [`SimError::Runaway`] once model time passes this.
    pub max_sim_time: f64,
    /// Maximum call depth of user functions.
    pub max_call_depth: usize,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            ranks: 1,
            max_events: 2_000_000_000,
            max_sim_time: 1.0e7,
            max_call_depth: 10_000,
        }
    }
}

/// Blocks an LP may execute in one slice before it yields (so that a loop
/// without communication still counts events and meets `max_events`).
const SLICE_BLOCKS: u32 = 4096;

/// Per-rank results.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RankStats {
    pub finish: f64,
    pub compute: f64,
    pub comm: f64,
    pub messages_sent: u64,
    pub bytes_sent: u64,
}

impl RankStats {
    /// Time neither computing nor in communication overheads: waiting for
    /// partners, messages and busy NICs.
    pub fn wait(&self) -> f64 {
        (self.finish - self.compute - self.comm).max(0.0)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SimReport {
    /// The maximum over ranks of the finish time.
    pub predicted_seconds: f64,
    pub ranks: Vec<RankStats>,
    pub messages: u64,
    pub bytes: u64,
    pub events: u64,
}

/// One line of `print` output.
#[derive(Debug, Clone, PartialEq)]
pub struct PrintLine {
    pub rank: u32,
    pub time: f64,
    pub text: String,
}

/// What a blocked rank waits for (deadlock reports).
#[derive(Debug, Clone, PartialEq)]
pub struct BlockedRank {
    pub rank: u32,
    /// The statement the rank is blocked in.
    pub span: Span,
    pub op: &'static str,
    pub waits: Vec<PendingOp>,
}

/// An incomplete request a blocked rank waits on.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingOp {
    pub kind: PendingKind,
    /// Peer rank; `None` for ANY_SOURCE.
    pub peer: Option<u32>,
    /// Tag; `None` for ANY_TAG.
    pub tag: Option<i32>,
    pub bytes: u64,
    /// Where the request was started.
    pub span: Span,
    /// The peer had already finished when the deadlock was found.
    pub peer_finished: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PendingKind {
    Send,
    Recv,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    #[error("rank {rank}: {message}")]
    Runtime {
        rank: u32,
        span: Span,
        message: String,
    },
    #[error("deadlock: {} rank(s) blocked with no event left", blocked.len())]
    Deadlock {
        time: f64,
        blocked: Vec<BlockedRank>,
        finished: u32,
    },
    #[error("{reason}")]
    Runaway {
        reason: String,
        events: u64,
        time: f64,
        positions: Vec<(u32, Span)>,
    },
    #[error("kernel `{kernel}` has no cost")]
    KernelWithoutCost { kernel: String, span: Span },
    #[error("bad configuration: {0}")]
    Config(String),
}

// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
enum EventKind {
    Resume(u32),
    /// A message envelope (eager message or rendezvous RTS) reaches its destination.
    Arrival(u32),
    /// A rendezvous clear-to-send reaches the sender.
    Cts(u32),
    /// A rendezvous payload reaches the receiver.
    Data(u32),
}

impl EventKind {
    fn encode(self) -> (u8, u32) {
        match self {
            EventKind::Resume(x) => (0, x),
            EventKind::Arrival(x) => (1, x),
            EventKind::Cts(x) => (2, x),
            EventKind::Data(x) => (3, x),
        }
    }

    fn decode(tag: u8, x: u32) -> EventKind {
        match tag {
            0 => EventKind::Resume(x),
            1 => EventKind::Arrival(x),
            2 => EventKind::Cts(x),
            _ => EventKind::Data(x),
        }
    }
}

const ANY_SOURCE: u32 = u32::MAX;
const ANY_TAG: i32 = -1;

#[derive(Debug, Clone)]
struct Msg {
    src: u32,
    dst: u32,
    tag: i32,
    bytes: u64,
    /// Arrival of the envelope at the destination.
    arrival: f64,
    /// The send request, for rendezvous messages (completed after CTS).
    send_req: Option<u32>,
    /// The matched receive request.
    recv_req: u32,
}

#[derive(Debug, Clone)]
struct Request {
    generation: u32,
    owner: u32,
    is_send: bool,
    done: bool,
    /// When the operation's data is there (recv) or the buffer is free (send).
    ready_at: f64,
    /// CPU time charged when the owner waits for it (o_r for receives).
    overhead: f64,
    status: MsgStatus,
    /// Receive filters / send description (for matching and reports).
    peer: u32,
    tag: i32,
    bytes: u64,
    span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LpState {
    /// In the event queue (or running).
    Ready,
    Blocked,
    Finished,
}

/// What a blocked LP waits for, and where the result goes.
#[derive(Debug, Clone, Default)]
struct WaitSet {
    reqs: Vec<ReqRef>,
    /// Index in `reqs` whose status is the statement's result.
    result_of: Option<usize>,
    /// Named variables (in the current frame) to set to null once done.
    null_slots: Vec<Slot>,
}

/// A frame's variables: inline for the usual handful, so that resuming an
/// LP touches one contiguous record (the LP array) rather than chasing
/// pointers (measured: ~20% more events/s at 65,536 ranks).
type Locals = SmallVec<[Value; 6]>;

#[derive(Debug, Clone)]
struct Frame {
    func: u32,
    block: BlockId,
    stmt: u32,
    locals: Locals,
    /// Where the caller wants the return value.
    ret_dst: Option<Slot>,
}

/// A logical process: one rank.
#[derive(Debug)]
struct Lp {
    clock: f64,
    state: LpState,
    frames: SmallVec<[Frame; 1]>,
    /// Arrived, unmatched envelopes, in arrival order.
    unexpected: VecDeque<u32>,
    /// Posted, unmatched receive requests, in posting order.
    posted: VecDeque<u32>,
    /// Envelopes sent to this rank whose arrival event is still queued.
    inflight: u32,
    /// Requests started and not yet waited for (`waitall()`).
    pending: Vec<ReqRef>,
    /// Set while a blocking statement is between its post and wait phases.
    wait: Option<Box<WaitSet>>,
    stats: RankStats,
}

enum Flow {
    Continue,
    Yield,
    Block,
}

/// The simulation of one program on one machine.
pub struct Engine<'a> {
    program: &'a Program,
    machine: &'a mut dyn Machine,
    cfg: SimConfig,
    params: Vec<Value>,
    kernel_costs: Vec<Option<f64>>,
    lps: Vec<Lp>,
    queue: EventQueue,
    /// Recycled wait sets (no allocation per blocking call).
    #[expect(
        clippy::vec_box,
        reason = "the boxes move in and out of `Lp::wait`, which stays one pointer wide"
    )]
    free_waitsets: Vec<Box<WaitSet>>,
    /// Reused buffer of `try_complete_wait`.
    scratch_order: Vec<(f64, usize)>,
    /// LPs to resume at `now`, in order (see `push`).
    ready_now: VecDeque<u32>,
    now: f64,
    msgs: Vec<Msg>,
    free_msgs: Vec<u32>,
    reqs: Vec<Request>,
    free_reqs: Vec<u32>,
    events: u64,
    messages: u64,
    bytes: u64,
    output: &'a mut dyn FnMut(PrintLine),
}

type RunResult<T> = Result<T, SimError>;

impl<'a> Engine<'a> {
    pub fn new(
        program: &'a Program,
        machine: &'a mut dyn Machine,
        cfg: SimConfig,
        output: &'a mut dyn FnMut(PrintLine),
    ) -> RunResult<Engine<'a>> {
        if cfg.ranks == 0 {
            return Err(SimError::Config(
                "the number of ranks must be at least 1".to_owned(),
            ));
        }
        if i32::try_from(cfg.ranks).is_err() {
            return Err(SimError::Config(format!(
                "{} ranks is more than this simulator supports (2^31 - 1)",
                cfg.ranks
            )));
        }
        let params = eval_params(program, cfg.ranks)?;
        let kernel_costs = vec![None; program.kernels.len()];
        check_kernel_costs(program, &kernel_costs)?;
        machine.reset(cfg.ranks);
        let main = program.function(program.main);
        let lps = (0..cfg.ranks)
            .map(|_| Lp {
                clock: 0.0,
                state: LpState::Ready,
                frames: smallvec![Frame {
                    func: program.main,
                    block: main.entry,
                    stmt: 0,
                    locals: smallvec![Value::Null; main.num_locals as usize],
                    ret_dst: None,
                }],
                unexpected: VecDeque::new(),
                posted: VecDeque::new(),
                inflight: 0,
                pending: Vec::new(),
                wait: None,
                stats: RankStats::default(),
            })
            .collect();
        Ok(Engine {
            program,
            machine,
            cfg,
            params,
            kernel_costs,
            lps,
            queue: EventQueue::new(),
            ready_now: VecDeque::new(),
            free_waitsets: Vec::new(),
            scratch_order: Vec::new(),
            now: 0.0,
            msgs: Vec::new(),
            free_msgs: Vec::new(),
            reqs: Vec::new(),
            free_reqs: Vec::new(),
            events: 0,
            messages: 0,
            bytes: 0,
            output,
        })
    }

    fn push(&mut self, time: f64, kind: EventKind) {
        match kind {
            // An LP to resume at the current time skips the heap: any order of
            // events at one time is a valid simulation, and this one is
            // deterministic (FIFO after the current event).
            EventKind::Resume(lp) if time <= self.now => self.ready_now.push_back(lp),
            _ => {
                let (tag, x) = kind.encode();
                self.queue.push(time, tag, x);
            }
        }
    }

    /// The next event: LPs ready at the current time first, then the heap.
    #[inline]
    fn next_event(&mut self) -> Option<(f64, EventKind)> {
        if let Some(lp) = self.ready_now.pop_front() {
            return Some((self.now, EventKind::Resume(lp)));
        }
        let (time, tag, x) = self.queue.pop()?;
        Some((time, EventKind::decode(tag, x)))
    }

    /// Runs to completion.
    pub fn run(mut self) -> RunResult<SimReport> {
        for r in 0..self.cfg.ranks {
            self.push(0.0, EventKind::Resume(r));
        }
        while let Some((time, ev_kind)) = self.next_event() {
            self.events += 1;
            self.now = time;
            if self.events > self.cfg.max_events {
                return Err(self.runaway(format!(
                    "stopped after {} events (--max-events)",
                    self.cfg.max_events
                )));
            }
            if time > self.cfg.max_sim_time {
                return Err(self.runaway(format!(
                    "model time passed {} s (--max-sim-time)",
                    self.cfg.max_sim_time
                )));
            }
            match ev_kind {
                EventKind::Resume(lp) => self.run_lp(lp)?,
                EventKind::Arrival(m) => self.on_arrival(m)?,
                EventKind::Cts(m) => self.on_cts(m),
                EventKind::Data(m) => self.on_data(m),
            }
        }
        let finished = self
            .lps
            .iter()
            .filter(|lp| lp.state == LpState::Finished)
            .count();
        if finished < self.lps.len() {
            return Err(self.deadlock(finished as u32));
        }
        let ranks: Vec<RankStats> = self.lps.iter().map(|lp| lp.stats).collect();
        let predicted_seconds = ranks.iter().map(|r| r.finish).fold(0.0, f64::max);
        Ok(SimReport {
            predicted_seconds,
            ranks,
            messages: self.messages,
            bytes: self.bytes,
            events: self.events,
        })
    }

    // --- the interpreter -----------------------------------------------------

    fn run_lp(&mut self, id: u32) -> RunResult<()> {
        let lpi = id as usize;
        debug_assert!(self.lps[lpi].state == LpState::Ready);
        let program = self.program;
        let mut blocks = 0u32;
        loop {
            // Invariant: a Ready LP that is not finished has at least one frame.
            let Some(frame) = self.lps[lpi].frames.last() else {
                return Ok(());
            };
            let func = program.function(frame.func);
            let block = &func.cfg[frame.block];
            let stmt_ix = frame.stmt as usize;
            if let Some(stmt) = block.stmts.get(stmt_ix) {
                match self.exec_stmt(id, stmt)? {
                    Flow::Continue => {
                        // Invariant: exec_stmt leaves the frame stack non-empty on Continue
                        // (a call pushes a frame whose entry starts at stmt 0).
                        if !matches!(stmt, Stmt::Call { .. })
                            && let Some(f) = self.lps[lpi].frames.last_mut()
                        {
                            f.stmt += 1;
                        }
                    }
                    Flow::Yield => {
                        let t = self.lps[lpi].clock;
                        self.push(t, EventKind::Resume(id));
                        return Ok(());
                    }
                    Flow::Block => {
                        self.lps[lpi].state = LpState::Blocked;
                        return Ok(());
                    }
                }
                continue;
            }
            // End of block: the terminator.
            blocks += 1;
            if blocks >= SLICE_BLOCKS {
                let t = self.lps[lpi].clock;
                // Do not advance: the terminator runs after the yield.
                self.push(t, EventKind::Resume(id));
                return Ok(());
            }
            let next = match &block.term {
                Terminator::Goto(b) => Some(*b),
                Terminator::Branch {
                    cond,
                    then_,
                    else_,
                    span,
                } => {
                    let v = self.eval_in(id, cond, *span)?;
                    let taken = v.truthy().map_err(|m| self.rt(id, *span, m))?;
                    Some(if taken { *then_ } else { *else_ })
                }
                Terminator::Return { value, span } => {
                    let v = match value {
                        Some(e) => self.eval_in(id, e, *span)?,
                        None => Value::Null,
                    };
                    let lp = &mut self.lps[lpi];
                    let done = lp.frames.pop();
                    match (lp.frames.last_mut(), done) {
                        (Some(caller), Some(done)) => {
                            if let Some(dst) = done.ret_dst {
                                caller.locals[dst as usize] = v;
                            }
                            caller.stmt += 1;
                        }
                        _ => {
                            self.finish(id);
                            return Ok(());
                        }
                    }
                    None
                }
            };
            if let Some(b) = next {
                // Invariant: frames is non-empty here (checked at loop top, not popped).
                if let Some(f) = self.lps[lpi].frames.last_mut() {
                    f.block = b;
                    f.stmt = 0;
                }
            }
        }
    }

    fn finish(&mut self, id: u32) {
        let lp = &mut self.lps[id as usize];
        lp.state = LpState::Finished;
        lp.stats.finish = lp.clock;
        lp.frames = SmallVec::new();
    }

    fn rt(&self, rank: u32, span: Span, message: String) -> SimError {
        SimError::Runtime {
            rank,
            span,
            message,
        }
    }

    #[inline]
    fn eval_in(&self, id: u32, e: &Expr, span: Span) -> RunResult<Value> {
        // Fast path: most communication arguments are folded constants.
        if let Expr::Const(c) = e {
            return Ok(Value::from(*c));
        }
        let lp = &self.lps[id as usize];
        let locals = lp.frames.last().map(|f| f.locals.as_slice()).unwrap_or(&[]);
        let cx = EvalCx {
            locals,
            params: &self.params,
            rank: id,
            size: self.cfg.ranks,
            clock: lp.clock,
        };
        eval(e, &cx).map_err(|m| self.rt(id, span, m))
    }

    fn set_local(&mut self, id: u32, slot: Slot, v: Value) {
        if let Some(f) = self.lps[id as usize].frames.last_mut() {
            f.locals[slot as usize] = v;
        }
    }

    fn exec_stmt(&mut self, id: u32, stmt: &'a Stmt) -> RunResult<Flow> {
        match stmt {
            Stmt::Assign { dst, value, span } => {
                let v = self.eval_in(id, value, *span)?;
                self.set_local(id, *dst, v);
                Ok(Flow::Continue)
            }
            Stmt::Compute { kernel, args, span } => {
                let k = &self.program.kernels[*kernel as usize];
                // Kernel arguments: on the stack for the usual few, else on the heap.
                let mut small = [Value::Null; 8];
                let mut large = Vec::new();
                let vals: &mut [Value] = if args.len() <= small.len() {
                    &mut small[..args.len()]
                } else {
                    large.resize(args.len(), Value::Null);
                    &mut large
                };
                for (slot, a) in vals.iter_mut().zip(args) {
                    *slot = self.eval_in(id, a, *span)?;
                }
                let vals: &[Value] = vals;
                let nominal = match (self.kernel_costs[*kernel as usize], &k.cost) {
                    (Some(t), _) => t,
                    (None, Some(cost)) => {
                        let cx = EvalCx {
                            locals: vals,
                            params: &self.params,
                            rank: id,
                            size: self.cfg.ranks,
                            clock: self.lps[id as usize].clock,
                        };
                        let v = eval(cost, &cx).map_err(|m| {
                            self.rt(id, *span, format!("cost of kernel `{}`: {m}", k.name))
                        })?;
                        v.as_f64().ok_or_else(|| {
                            self.rt(
                                id,
                                *span,
                                format!(
                                    "cost of kernel `{}` must be a number, got {}",
                                    k.name,
                                    v.type_name()
                                ),
                            )
                        })?
                    }
                    (None, None) => {
                        return Err(SimError::KernelWithoutCost {
                            kernel: k.name.clone(),
                            span: *span,
                        });
                    }
                };
                if !(nominal.is_finite() && nominal >= 0.0) {
                    return Err(self.rt(id, *span, format!("cost of kernel `{}` is {nominal} s; it must be finite and not negative", k.name)));
                }
                let t = self.machine.compute_seconds(id, nominal);
                let lp = &mut self.lps[id as usize];
                lp.clock += t;
                lp.stats.compute += t;
                Ok(Flow::Continue)
            }
            Stmt::Copy { bytes, span } => {
                let n = self.eval_bytes(id, bytes, *span)?;
                let t = self.machine.copy_seconds(id, n);
                let lp = &mut self.lps[id as usize];
                lp.clock += t;
                lp.stats.compute += t;
                Ok(Flow::Continue)
            }
            Stmt::Print { args, span } => {
                if self.lps[id as usize].clock > self.now {
                    return Ok(Flow::Yield);
                }
                let mut text = String::new();
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        text.push(' ');
                    }
                    match a {
                        PrintArg::Str(s) => text.push_str(s),
                        PrintArg::Expr(e) => {
                            use std::fmt::Write;
                            let v = self.eval_in(id, e, *span)?;
                            let _ = write!(text, "{v}");
                        }
                    }
                }
                let time = self.lps[id as usize].clock;
                (self.output)(PrintLine {
                    rank: id,
                    time,
                    text,
                });
                Ok(Flow::Continue)
            }
            Stmt::Call {
                func,
                args,
                dst,
                span,
            } => {
                let f = self.program.function(*func);
                let mut locals: Locals = smallvec![Value::Null; f.num_locals as usize];
                for (i, a) in args.iter().enumerate() {
                    locals[i] = self.eval_in(id, a, *span)?;
                }
                let lp = &mut self.lps[id as usize];
                if lp.frames.len() >= self.cfg.max_call_depth {
                    return Err(self.rt(
                        id,
                        *span,
                        format!(
                            "call depth exceeds {} (runaway recursion?)",
                            self.cfg.max_call_depth
                        ),
                    ));
                }
                lp.frames.push(Frame {
                    func: *func,
                    block: f.entry,
                    stmt: 0,
                    locals,
                    ret_dst: *dst,
                });
                Ok(Flow::Continue)
            }
            Stmt::Comm { op, dst, span } => {
                if self.lps[id as usize].clock > self.now {
                    return Ok(Flow::Yield);
                }
                self.exec_comm(id, op, *dst, *span)
            }
        }
    }

    fn eval_bytes(&self, id: u32, e: &Expr, span: Span) -> RunResult<u64> {
        match self.eval_in(id, e, span)? {
            Value::Int(n) if n >= 0 => Ok(n as u64),
            Value::Float(f) if f >= 0.0 && f.fract() == 0.0 && f < 9.0e18 => Ok(f as u64),
            v => Err(self.rt(
                id,
                span,
                format!("`bytes:` must be a non-negative integer, got {v}"),
            )),
        }
    }

    fn eval_peer(&self, id: u32, e: &Expr, span: Span, is_recv: bool) -> RunResult<u32> {
        let what = if is_recv { "from" } else { "to" };
        match self.eval_in(id, e, span)? {
            Value::Any if is_recv => Ok(ANY_SOURCE),
            Value::Int(r) if r >= 0 && r < i64::from(self.cfg.ranks) => Ok(r as u32),
            v => Err(self.rt(
                id,
                span,
                format!(
                    "`{what}: {v}` is not a valid rank (size is {})",
                    self.cfg.ranks
                ),
            )),
        }
    }

    fn eval_tag(&self, id: u32, e: &Expr, span: Span, is_recv: bool) -> RunResult<i32> {
        match self.eval_in(id, e, span)? {
            Value::Any if is_recv => Ok(ANY_TAG),
            Value::Int(t) if (0..=i64::from(i32::MAX)).contains(&t) => Ok(t as i32),
            v => Err(self.rt(
                id,
                span,
                format!("`tag: {v}` is not a valid tag (0 ..= {})", i32::MAX),
            )),
        }
    }

    // --- communication ---------------------------------------------------------

    fn exec_comm(
        &mut self,
        id: u32,
        op: &'a CommOp,
        dst: Option<Slot>,
        span: Span,
    ) -> RunResult<Flow> {
        let lpi = id as usize;
        // Phase 2 of a blocking statement: its requests are posted, wait for them.
        if self.lps[lpi].wait.is_some() {
            return Ok(self.try_complete_wait(id, dst));
        }
        let mut ws = self.free_waitsets.pop().unwrap_or_default();
        match op {
            CommOp::Isend(a) => {
                let r = self.post_send(id, a, span)?;
                self.lps[lpi].pending.push(r);
                if let Some(d) = dst {
                    self.set_local(id, d, Value::Req(r));
                }
                return Ok(Flow::Continue);
            }
            CommOp::Irecv(a) => {
                let r = self.post_recv(id, a, span)?;
                self.lps[lpi].pending.push(r);
                if let Some(d) = dst {
                    self.set_local(id, d, Value::Req(r));
                }
                return Ok(Flow::Continue);
            }
            CommOp::Send(a) => {
                ws.reqs.push(self.post_send(id, a, span)?);
            }
            CommOp::Recv(a) => {
                ws.reqs.push(self.post_recv(id, a, span)?);
                ws.result_of = Some(0);
            }
            CommOp::Sendrecv { send, recv } => {
                // MPI_Sendrecv: both posted before either is waited for.
                let s = self.post_send(id, send, span)?;
                let r = self.post_recv(id, recv, span)?;
                ws.reqs = vec![s, r];
                ws.result_of = Some(1);
            }
            CommOp::Wait(slot) => {
                let v = self.local(id, *slot);
                match v {
                    Value::Req(r) => {
                        if self.req_live(r) {
                            ws.reqs.push(r);
                            if !self.reqs[r.id as usize].is_send {
                                ws.result_of = Some(0);
                            }
                        }
                    }
                    Value::Null => {}
                    other => {
                        return Err(self.rt(
                            id,
                            span,
                            format!("`wait` needs a request, got {}", other.type_name()),
                        ));
                    }
                }
                ws.null_slots.push(*slot);
            }
            CommOp::Waitall(slots) => {
                if slots.is_empty() {
                    ws.reqs = std::mem::take(&mut self.lps[lpi].pending);
                } else {
                    for slot in slots {
                        match self.local(id, *slot) {
                            Value::Req(r) => {
                                if self.req_live(r) {
                                    ws.reqs.push(r);
                                }
                            }
                            Value::Null => {}
                            other => {
                                return Err(self.rt(
                                    id,
                                    span,
                                    format!("`waitall` needs requests, got {}", other.type_name()),
                                ));
                            }
                        }
                        ws.null_slots.push(*slot);
                    }
                }
            }
        }
        self.lps[lpi].wait = Some(ws);
        Ok(self.try_complete_wait(id, dst))
    }

    fn local(&self, id: u32, slot: Slot) -> Value {
        self.lps[id as usize]
            .frames
            .last()
            .map(|f| f.locals[slot as usize])
            .unwrap_or(Value::Null)
    }

    fn req_live(&self, r: ReqRef) -> bool {
        self.reqs
            .get(r.id as usize)
            .is_some_and(|q| q.generation == r.generation)
    }

    /// Completes the LP's wait set if every request is done; otherwise blocks.
    fn try_complete_wait(&mut self, id: u32, dst: Option<Slot>) -> Flow {
        let lpi = id as usize;
        let Some(ws) = self.lps[lpi].wait.as_ref() else {
            return Flow::Continue;
        };
        if !ws.reqs.iter().all(|r| self.reqs[r.id as usize].done) {
            return Flow::Block;
        }
        // Invariant: checked just above that the wait set exists.
        let Some(mut ws) = self.lps[lpi].wait.take() else {
            return Flow::Continue;
        };
        // Handle the requests in the order their data became ready; each
        // charges its overhead (o_r) on the CPU after it is ready.
        let mut order = std::mem::take(&mut self.scratch_order);
        order.clear();
        order.extend(
            ws.reqs
                .iter()
                .enumerate()
                .map(|(i, r)| (self.reqs[r.id as usize].ready_at, i)),
        );
        order.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut t = self.lps[lpi].clock;
        let mut comm = 0.0;
        let mut result = Value::Null;
        for &(ready, i) in &order {
            let q = &self.reqs[ws.reqs[i].id as usize];
            t = t.max(ready) + q.overhead;
            comm += q.overhead;
            if ws.result_of == Some(i) {
                result = Value::Status(q.status);
            }
        }
        for r in &ws.reqs {
            self.release_req(*r);
        }
        let lp = &mut self.lps[lpi];
        if !ws.reqs.is_empty() {
            lp.pending.retain(|p| !ws.reqs.contains(p));
        }
        lp.clock = t;
        lp.stats.comm += comm;
        for s in &ws.null_slots {
            self.set_local(id, *s, Value::Null);
        }
        if let Some(d) = dst {
            self.set_local(id, d, result);
        }
        self.scratch_order = order;
        ws.reqs.clear();
        ws.null_slots.clear();
        ws.result_of = None;
        self.free_waitsets.push(ws);
        Flow::Continue
    }

    fn new_req(&mut self, req: Request) -> ReqRef {
        if let Some(i) = self.free_reqs.pop() {
            let slot = &mut self.reqs[i as usize];
            let generation = slot.generation.wrapping_add(1);
            *slot = Request { generation, ..req };
            ReqRef { id: i, generation }
        } else {
            let id = self.reqs.len() as u32;
            self.reqs.push(Request {
                generation: 0,
                ..req
            });
            ReqRef { id, generation: 0 }
        }
    }

    fn release_req(&mut self, r: ReqRef) {
        let q = &mut self.reqs[r.id as usize];
        if q.generation == r.generation {
            q.generation = q.generation.wrapping_add(1);
            self.free_reqs.push(r.id);
        }
    }

    fn new_msg(&mut self, m: Msg) -> u32 {
        if let Some(i) = self.free_msgs.pop() {
            self.msgs[i as usize] = m;
            i
        } else {
            self.msgs.push(m);
            (self.msgs.len() - 1) as u32
        }
    }

    fn post_send(&mut self, id: u32, a: &MsgArgs, span: Span) -> RunResult<ReqRef> {
        let to = self.eval_peer(id, &a.peer, span, false)?;
        let tag = self.eval_tag(id, &a.tag, span, false)?;
        let bytes = self.eval_bytes(id, &a.bytes, span)?;
        let now = self.lps[id as usize].clock;
        let o_s = self.machine.send_overhead(id, to, bytes);
        let rendezvous = bytes >= self.machine.eager_limit(id, to);
        let (kind, wire_bytes) = if rendezvous {
            (
                MessageKind::RendezvousRts,
                self.machine.control_bytes(id, to),
            )
        } else {
            (MessageKind::Eager, bytes)
        };
        let tr = self.machine.transfer(id, to, wire_bytes, kind, now);
        let req = self.new_req(Request {
            generation: 0,
            owner: id,
            is_send: true,
            done: !rendezvous,
            ready_at: tr.cpu_free.max(now),
            overhead: 0.0,
            status: MsgStatus {
                source: id,
                tag,
                bytes,
            },
            peer: to,
            tag,
            bytes,
            span,
        });
        let m = self.new_msg(Msg {
            src: id,
            dst: to,
            tag,
            bytes,
            arrival: tr.arrival.max(now),
            send_req: rendezvous.then_some(req.id),
            recv_req: u32::MAX,
        });
        if !self.try_early_match(m)? {
            let arrival = self.msgs[m as usize].arrival;
            self.lps[to as usize].inflight += 1;
            self.push(arrival, EventKind::Arrival(m));
        }
        let lp = &mut self.lps[id as usize];
        lp.clock = now + o_s;
        lp.stats.comm += o_s;
        lp.stats.messages_sent += 1;
        lp.stats.bytes_sent += bytes;
        self.messages += 1;
        self.bytes += bytes;
        Ok(req)
    }

    fn post_recv(&mut self, id: u32, a: &MsgArgs, span: Span) -> RunResult<ReqRef> {
        let from = self.eval_peer(id, &a.peer, span, true)?;
        let tag = self.eval_tag(id, &a.tag, span, true)?;
        let bytes = self.eval_bytes(id, &a.bytes, span)?;
        let req = self.new_req(Request {
            generation: 0,
            owner: id,
            is_send: false,
            done: false,
            ready_at: f64::INFINITY,
            overhead: 0.0,
            status: MsgStatus {
                source: 0,
                tag: 0,
                bytes: 0,
            },
            peer: from,
            tag,
            bytes,
            span,
        });
        // Search the envelopes that already arrived, in arrival order.
        let lp = &self.lps[id as usize];
        let hit = lp.unexpected.iter().position(|&m| {
            let m = &self.msgs[m as usize];
            (from == ANY_SOURCE || from == m.src) && (tag == ANY_TAG || tag == m.tag)
        });
        match hit {
            Some(pos) => {
                // Invariant: `pos` was just found in this queue.
                let m = self.lps[id as usize]
                    .unexpected
                    .remove(pos)
                    .unwrap_or(u32::MAX);
                self.on_match(m, req.id)?;
            }
            None => self.lps[id as usize].posted.push_back(req.id),
        }
        Ok(req)
    }

    /// Matches an eager envelope at send time when that gives exactly the
    /// match its arrival would: no envelope to the receiver is in flight
    /// (so none from this sender can match first), and the first posted
    /// receive that matches names this sender (so no envelope from another
    /// rank, arriving earlier, could take it). Saves an arrival event.
    fn try_early_match(&mut self, m: u32) -> RunResult<bool> {
        let msg = &self.msgs[m as usize];
        if msg.send_req.is_some() {
            // Rendezvous: the CTS must be sent at match time, in time order.
            return Ok(false);
        }
        let (src, dst, tag) = (msg.src, msg.dst, msg.tag);
        let lp = &self.lps[dst as usize];
        if lp.inflight != 0 {
            return Ok(false);
        }
        let hit = lp.posted.iter().position(|&r| {
            let q = &self.reqs[r as usize];
            (q.peer == ANY_SOURCE || q.peer == src) && (q.tag == ANY_TAG || q.tag == tag)
        });
        let Some(pos) = hit else { return Ok(false) };
        let r = lp.posted[pos];
        if self.reqs[r as usize].peer == ANY_SOURCE {
            return Ok(false);
        }
        self.lps[dst as usize].posted.remove(pos);
        self.on_match(m, r)?;
        Ok(true)
    }

    fn on_arrival(&mut self, m: u32) -> RunResult<()> {
        let msg = &self.msgs[m as usize];
        let (src, dst, tag) = (msg.src, msg.dst, msg.tag);
        self.lps[dst as usize].inflight -= 1;
        let lp = &self.lps[dst as usize];
        let hit = lp.posted.iter().position(|&r| {
            let q = &self.reqs[r as usize];
            (q.peer == ANY_SOURCE || q.peer == src) && (q.tag == ANY_TAG || q.tag == tag)
        });
        match hit {
            Some(pos) => {
                // Invariant: `pos` was just found in this queue.
                let r = self.lps[dst as usize]
                    .posted
                    .remove(pos)
                    .unwrap_or(u32::MAX);
                self.on_match(m, r)
            }
            None => {
                self.lps[dst as usize].unexpected.push_back(m);
                Ok(())
            }
        }
    }

    /// Envelope `m` meets receive `r`, at `self.now` (the later of arrival and posting).
    fn on_match(&mut self, m: u32, r: u32) -> RunResult<()> {
        let msg = self.msgs[m as usize].clone();
        let q = &mut self.reqs[r as usize];
        if msg.bytes > q.bytes {
            let (owner, span, cap) = (q.owner, q.span, q.bytes);
            return Err(self.rt(
                owner,
                span,
                format!(
                    "message truncated: rank {} sent {} bytes with tag {} but this receive accepts at most {cap}",
                    msg.src, msg.bytes, msg.tag
                ),
            ));
        }
        q.status = MsgStatus {
            source: msg.src,
            tag: msg.tag,
            bytes: msg.bytes,
        };
        self.msgs[m as usize].recv_req = r;
        match msg.send_req {
            None => {
                let o_r = self.machine.recv_overhead(msg.src, msg.dst, msg.bytes);
                self.complete(r, self.now.max(msg.arrival), o_r);
                self.free_msgs.push(m);
            }
            Some(_) => {
                // Rendezvous: the receiver answers the RTS with a CTS.
                let cb = self.machine.control_bytes(msg.dst, msg.src);
                let tr = self.machine.transfer(
                    msg.dst,
                    msg.src,
                    cb,
                    MessageKind::RendezvousCts,
                    self.now,
                );
                let t = tr.arrival.max(self.now);
                self.push(t, EventKind::Cts(m));
            }
        }
        Ok(())
    }

    fn on_cts(&mut self, m: u32) {
        let msg = self.msgs[m as usize].clone();
        let tr = self.machine.transfer(
            msg.src,
            msg.dst,
            msg.bytes,
            MessageKind::RendezvousData,
            self.now,
        );
        if let Some(s) = msg.send_req {
            self.complete(s, tr.cpu_free.max(self.now), 0.0);
        }
        self.push(tr.arrival.max(self.now), EventKind::Data(m));
    }

    fn on_data(&mut self, m: u32) {
        let msg = &self.msgs[m as usize];
        let (r, src, dst, bytes) = (msg.recv_req, msg.src, msg.dst, msg.bytes);
        let o_r = self.machine.recv_overhead(src, dst, bytes);
        self.complete(r, self.now, o_r);
        self.free_msgs.push(m);
    }

    /// Marks request `r` done (data ready at `ready_at`, `overhead` to charge
    /// at the wait) and wakes its owner if that completes its wait set.
    fn complete(&mut self, r: u32, ready_at: f64, overhead: f64) {
        let q = &mut self.reqs[r as usize];
        q.done = true;
        q.ready_at = ready_at;
        q.overhead = overhead;
        let owner = q.owner as usize;
        let lp = &self.lps[owner];
        if lp.state != LpState::Blocked {
            return;
        }
        let Some(ws) = lp.wait.as_ref() else { return };
        if !ws.reqs.iter().all(|x| self.reqs[x.id as usize].done) {
            return;
        }
        let t = ws
            .reqs
            .iter()
            .map(|x| self.reqs[x.id as usize].ready_at)
            .fold(lp.clock, f64::max);
        let blocked_at = lp.clock;
        self.lps[owner].state = LpState::Ready;
        // The LP resumes at the time the last datum is ready; `try_complete_wait`
        // then charges the overheads in order.
        self.push(t.max(blocked_at), EventKind::Resume(owner as u32));
    }

    // --- reports ---------------------------------------------------------------

    fn position(&self, id: u32) -> Option<Span> {
        let lp = &self.lps[id as usize];
        let f = lp.frames.last()?;
        let func = self.program.function(f.func);
        let block = &func.cfg[f.block];
        Some(match block.stmts.get(f.stmt as usize) {
            Some(s) => stmt_span(s),
            None => match &block.term {
                Terminator::Branch { span, .. } | Terminator::Return { span, .. } => *span,
                Terminator::Goto(_) => block.span,
            },
        })
    }

    fn runaway(&self, reason: String) -> SimError {
        let positions = (0..self.cfg.ranks)
            .filter(|&r| self.lps[r as usize].state != LpState::Finished)
            .filter_map(|r| self.position(r).map(|s| (r, s)))
            .take(64)
            .collect();
        SimError::Runaway {
            reason,
            events: self.events,
            time: self.now,
            positions,
        }
    }

    fn deadlock(&self, finished: u32) -> SimError {
        let mut blocked = Vec::new();
        for (r, lp) in self.lps.iter().enumerate() {
            if lp.state == LpState::Finished {
                continue;
            }
            let span = self.position(r as u32).unwrap_or_default();
            let (op, reqs): (&'static str, &[ReqRef]) =
                match (&lp.wait, self.current_stmt(r as u32)) {
                    (Some(ws), Some(Stmt::Comm { op, .. })) => (comm_name(op), &ws.reqs),
                    (Some(ws), _) => ("wait", &ws.reqs),
                    (None, _) => ("(running)", &[]),
                };
            let waits = reqs
                .iter()
                .map(|x| &self.reqs[x.id as usize])
                .filter(|q| !q.done)
                .map(|q| PendingOp {
                    kind: if q.is_send {
                        PendingKind::Send
                    } else {
                        PendingKind::Recv
                    },
                    peer: (q.peer != ANY_SOURCE).then_some(q.peer),
                    tag: (q.tag != ANY_TAG).then_some(q.tag),
                    bytes: q.bytes,
                    span: q.span,
                    peer_finished: q.peer != ANY_SOURCE
                        && self.lps[q.peer as usize].state == LpState::Finished,
                })
                .collect();
            blocked.push(BlockedRank {
                rank: r as u32,
                span,
                op,
                waits,
            });
        }
        SimError::Deadlock {
            time: self.now,
            blocked,
            finished,
        }
    }

    fn current_stmt(&self, id: u32) -> Option<&'a Stmt> {
        let f = self.lps[id as usize].frames.last()?;
        let program: &'a Program = self.program;
        program.function(f.func).cfg[f.block]
            .stmts
            .get(f.stmt as usize)
    }
}

fn comm_name(op: &CommOp) -> &'static str {
    match op {
        CommOp::Send(_) => "send",
        CommOp::Recv(_) => "recv",
        CommOp::Isend(_) => "isend",
        CommOp::Irecv(_) => "irecv",
        CommOp::Sendrecv { .. } => "sendrecv",
        CommOp::Wait(_) => "wait",
        CommOp::Waitall(_) => "waitall",
    }
}

pub fn stmt_span(s: &Stmt) -> Span {
    match s {
        Stmt::Assign { span, .. }
        | Stmt::Compute { span, .. }
        | Stmt::Copy { span, .. }
        | Stmt::Print { span, .. }
        | Stmt::Call { span, .. }
        | Stmt::Comm { span, .. } => *span,
    }
}

/// Every `compute` of a kernel without a cost (and without a calibrated
/// time) is an error before the simulation starts.
fn check_kernel_costs(program: &Program, calibrated: &[Option<f64>]) -> RunResult<()> {
    for f in &program.functions {
        for b in f.cfg.node_weights() {
            for s in &b.stmts {
                if let Stmt::Compute { kernel, span, .. } = s {
                    let k = &program.kernels[*kernel as usize];
                    if k.cost.is_none()
                        && calibrated
                            .get(*kernel as usize)
                            .copied()
                            .flatten()
                            .is_none()
                    {
                        return Err(SimError::KernelWithoutCost {
                            kernel: k.name.clone(),
                            span: *span,
                        });
                    }
                }
            }
        }
    }
    Ok(())
}

/// Params: evaluated once, in order; a default may use earlier params.
fn eval_params(program: &Program, size: u32) -> RunResult<Vec<Value>> {
    let mut params = Vec::with_capacity(program.params.len());
    for p in &program.params {
        let cx = EvalCx {
            locals: &[],
            params: &params,
            rank: 0,
            size,
            clock: 0.0,
        };
        let v = eval(&p.default, &cx).map_err(|m| SimError::Runtime {
            rank: 0,
            span: p.span,
            message: format!("param `{}`: {m}", p.name),
        })?;
        params.push(v);
    }
    Ok(params)
}

/// Runs `program` on `machine` with `cfg`, sending `print` output to `output`.
///
/// The program is first specialised for the run (params and `size` folded
/// into constants, see [`crate::fold`]); the result is the same as
/// interpreting the original.
pub fn simulate(
    program: &Program,
    machine: &mut dyn Machine,
    cfg: SimConfig,
    output: &mut dyn FnMut(PrintLine),
) -> Result<SimReport, SimError> {
    let params = eval_params(program, cfg.ranks)?;
    let mut specialized = program.clone();
    crate::fold::specialize(&mut specialized, &params, cfg.ranks);
    Engine::new(&specialized, machine, cfg, output)?.run()
}

#[cfg(test)]
mod size_tests {
    use super::*;

    /// An idle LP must stay well under 1 KiB (issue 2); this is the part of
    /// it in the LP array. Its requests and wait set live in slabs.
    #[test]
    fn lp_record_is_small() {
        let lp = std::mem::size_of::<Lp>();
        eprintln!(
            "Lp {lp} B, Frame {} B, Request {} B, Msg {} B",
            std::mem::size_of::<Frame>(),
            std::mem::size_of::<Request>(),
            std::mem::size_of::<Msg>()
        );
        assert!(lp <= 512, "Lp is {lp} bytes");
    }
}
