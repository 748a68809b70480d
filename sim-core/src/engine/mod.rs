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

use std::collections::{HashMap, VecDeque};
use std::rc::Rc;
use std::sync::Arc;

use smallvec::{SmallVec, smallvec};

mod collective;
mod comms;
mod p2p;

use comms::Comms;

use crate::ir::{
    Block, BlockId, CommOp, Expr, FuncId, MsgArgs, PrintArg, Program, SendMode, Slot, Span, Stmt,
    Terminator,
};
use crate::kernels::{KernelCall, KernelProfile, KernelTime, NoiseStream, ProfileRecorder};
use crate::model::{Machine, MessageKind};
use crate::queue::EventQueue;
use crate::value::{EvalCx, MsgStatus, ReqRef, Value, eval};

/// Limits and options of one simulation.
#[derive(Debug, Clone)]
pub struct SimConfig {
    pub ranks: u32,
    /// Stop with [`SimError::Runaway`] after this many events plus
    /// communication calls (a call that completes at once, such as a
    /// zero-byte collective, makes no event, and a loop of them would
    /// otherwise never meet the limit).
    pub max_events: u64,
    /// Stop with [`SimError::Runaway`] once model time passes this.
    pub max_sim_time: f64,
    /// Stop with [`SimError::Runaway`] when one rank has run this many
    /// basic blocks in a row without its clock advancing and without
    /// communicating or reading `wtime()` (a loop that costs nothing and
    /// never ends would otherwise run until `max_events`, which at 4096
    /// blocks per event takes days).
    pub max_zero_time_blocks: u64,
    /// Maximum call depth of user functions.
    pub max_call_depth: usize,
    /// Record, for every ANY_SOURCE receive, which other senders could have
    /// matched it under different timing (`SimReport::wildcards`).
    pub record_wildcards: bool,
    /// Force the n-th ANY_SOURCE receive of a rank to match one sender
    /// (`parsim check --explore`).
    pub forced_wildcards: Vec<ForcedMatch>,
    /// Record a timeline of at most this many events (`SimReport::trace`);
    /// 0: none.
    pub trace_limit: usize,
    /// Record messages, bytes and time per (source, destination) pair
    /// (`SimReport::comm_matrix`).
    pub comm_matrix: bool,
    /// Calibrated kernel times by kernel name (`parsim run --blocks`); they
    /// take precedence over a kernel's `cost`. Names the program does not
    /// declare are ignored.
    pub kernel_times: Vec<(String, Arc<dyn KernelTime>)>,
    /// Draw every calibrated kernel call's time from its measured
    /// distribution, with one deterministic stream per rank from this seed
    /// (`KernelCall::uniform`); `None`: every call costs the mean. Kernels
    /// with cost formulas are not affected.
    pub noise_seed: Option<u64>,
    /// Record every kernel call's arguments (`SimReport::kernel_profile`).
    /// Kernels with neither a cost nor a calibrated time cost 0 s in such a
    /// run instead of being an error: a profile run finds out what to time.
    pub kernel_profile: bool,
}

/// Traffic between one pair of ranks.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PairTraffic {
    pub messages: u64,
    pub bytes: u64,
    /// Sum over the messages of (arrival - send start), seconds.
    pub seconds: f64,
}

/// One event of a timeline (`parsim run --trace`).
#[derive(Debug, Clone, PartialEq)]
pub enum TraceEvent {
    /// Rank `rank` was busy from `start` to `end` (seconds) in `what`
    /// (a kernel's name, or a communication operation) at source `line`;
    /// `wait` seconds of a communication interval were spent blocked (on
    /// partners, messages or a busy NIC), the rest in CPU overheads (and a
    /// collective's reductions). 0 for compute.
    Interval {
        rank: u32,
        start: f64,
        end: f64,
        what: String,
        comm: bool,
        line: u32,
        wait: f64,
    },
    /// A message from `src` (sent at `sent`) to `dst` (matched at `received`).
    Message {
        src: u32,
        dst: u32,
        sent: f64,
        received: f64,
        bytes: u64,
    },
}

/// `rank`'s `nth` ANY_SOURCE receive (counting from 0, user messages only)
/// receives from world rank `source`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForcedMatch {
    pub rank: u32,
    pub nth: u32,
    pub source: u32,
}

/// How an ANY_SOURCE receive was matched, and who else could have matched it.
#[derive(Debug, Clone, PartialEq)]
pub struct WildcardMatch {
    pub rank: u32,
    pub nth: u32,
    pub span: Span,
    /// The sender it matched (world rank).
    pub chosen: u32,
    /// Other senders whose matching message had arrived or was in flight
    /// when it matched: under other timing, one of them could have matched.
    pub alternatives: Vec<u32>,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            ranks: 1,
            max_events: 2_000_000_000,
            max_sim_time: 1.0e7,
            max_zero_time_blocks: 100_000_000,
            max_call_depth: 10_000,
            record_wildcards: false,
            forced_wildcards: Vec::new(),
            trace_limit: 0,
            comm_matrix: false,
            kernel_times: Vec::new(),
            noise_seed: None,
            kernel_profile: false,
        }
    }
}

/// How far a simulation has got (for progress displays).
#[derive(Clone, Copy)]
pub struct Progress<'a> {
    pub events: u64,
    /// The current model time, seconds.
    pub sim_time: f64,
    pub finished: u32,
    pub ranks: u32,
    /// The LPs, read only by [`Progress::rank_states`].
    lps: &'a [Lp],
}

/// What a rank is doing at the current model time (`parsim run --monitor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RankState {
    /// Running its own code (its clock is at or ahead of model time).
    Computing,
    /// Inside a communication call and not blocked: in its CPU overheads.
    Communicating,
    /// Blocked on partners, messages or a busy NIC.
    Waiting,
    Finished,
}

impl Progress<'_> {
    /// Each rank's state, into `out` (cleared first). A pass over all LPs:
    /// the engine pays nothing for it unless a display asks.
    pub fn rank_states(&self, out: &mut Vec<RankState>) {
        out.clear();
        out.extend(self.lps.iter().map(|lp| match lp.state {
            LpState::Finished => RankState::Finished,
            LpState::Blocked => RankState::Waiting,
            LpState::Ready if lp.wait.is_some() || lp.coll.is_some() || lp.probing.is_some() => {
                RankState::Communicating
            }
            LpState::Ready => RankState::Computing,
        }));
    }
}

/// Events between two progress reports.
const PROGRESS_EVERY: u64 = 1 << 18;

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

    /// Time computing or in communication overheads so far.
    pub fn busy(&self) -> f64 {
        self.compute + self.comm
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct SimReport {
    /// The maximum over ranks of the finish time.
    pub predicted_seconds: f64,
    pub ranks: Vec<RankStats>,
    pub messages: u64,
    pub bytes: u64,
    pub events: u64,
    /// What the program left behind when every rank had finished: messages
    /// never received, receives never matched, requests never waited for.
    pub leftovers: Vec<Leftover>,
    /// ANY_SOURCE receives (with `SimConfig::record_wildcards`).
    pub wildcards: Vec<WildcardMatch>,
    /// The timeline (with `SimConfig::trace_limit`), and whether it was cut.
    pub trace: Vec<TraceEvent>,
    pub trace_truncated: bool,
    /// (source, destination, traffic), sorted, with `SimConfig::comm_matrix`
    /// (point-to-point and collective messages alike).
    pub comm_matrix: Vec<(u32, u32, PairTraffic)>,
    /// Kernel calls by argument tuple (with `SimConfig::kernel_profile`),
    /// in kernel declaration order.
    pub kernel_profile: Vec<KernelProfile>,
}

/// Something a finished program left incomplete (`parsim check` reports it).
#[derive(Debug, Clone, PartialEq)]
pub struct Leftover {
    pub kind: LeftoverKind,
    /// The rank that owns it (the sender of an unreceived message).
    pub rank: u32,
    /// The other side (world rank), `None` for ANY_SOURCE.
    pub peer: Option<u32>,
    /// `None` for ANY_TAG.
    pub tag: Option<i32>,
    pub bytes: u64,
    /// Where it was started (the send, the irecv, the isend).
    pub span: Span,
    pub comm: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeftoverKind {
    /// A message that arrived (or was offered, rendezvous) and was never received.
    UnreceivedMessage,
    /// A posted receive (irecv) that no message ever matched.
    UnmatchedReceive,
    /// A completed request (isend/irecv) never waited for or tested.
    UnwaitedRequest,
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
    /// An OR wait (`waitany`): any one of `waits` would release the rank;
    /// otherwise an AND wait (blocking calls, `waitall`, `sendrecv`): all of
    /// them are needed. (An ANY_SOURCE receive is an OR wait over senders,
    /// shown by its `peer` being `None`.)
    pub any: bool,
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
    /// The communicator (0: the world). Ranks above are world ranks.
    pub comm: u32,
    /// A message of a collective's algorithm (not a user message).
    pub in_collective: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PendingKind {
    Send,
    Recv,
    /// A blocking `probe`.
    Probe,
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
    /// Matching context (communicator, user or collective).
    ctx: u32,
    bytes: u64,
    /// Arrival of the envelope at the destination.
    arrival: f64,
    /// The send request, for rendezvous messages (completed after CTS).
    send_req: Option<u32>,
    /// The matched receive request.
    recv_req: u32,
    /// Where it was sent (reports of messages never received).
    span: Span,
    /// When it was sent (timelines).
    sent: f64,
}

#[derive(Debug, Clone)]
struct Request {
    generation: u32,
    owner: u32,
    /// For an ANY_SOURCE receive, which one of its rank's (`u32::MAX`: not one).
    wild_nth: u32,
    is_send: bool,
    done: bool,
    /// When the operation's data is there (recv) or the buffer is free (send).
    ready_at: f64,
    /// CPU time charged when the owner waits for it (o_r for receives).
    overhead: f64,
    status: MsgStatus,
    /// Receive filters / send description (for matching and reports), in
    /// world ranks.
    peer: u32,
    tag: i32,
    bytes: u64,
    ctx: u32,
    /// The communicator, to report the status's source in its ranks.
    comm: u32,
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
    result: WaitResult,
    /// Named variables (in the current frame) to set to null once done.
    null_slots: Vec<Slot>,
    /// `waitany`: one completed request suffices.
    any: bool,
    /// `waitany`: per entry of `reqs`, its variable and argument index.
    any_slots: Vec<(Slot, usize)>,
    /// When the statement started (timelines), its name and line, and the
    /// rank's compute + comm time then (the rest of its span is waiting).
    started: f64,
    busy_before: f64,
    what: &'static str,
    line: u32,
}

impl WaitSet {
    fn clear(&mut self) {
        self.reqs.clear();
        self.result = WaitResult::Null;
        self.null_slots.clear();
        self.any = false;
        self.any_slots.clear();
        self.what = "";
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum WaitResult {
    #[default]
    Null,
    /// The status of `reqs[i]`.
    StatusOf(usize),
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
    /// ANY_SOURCE receives posted so far (user messages).
    wildcards_posted: u32,
    /// Requests started and not yet waited for (`waitall()`).
    pending: Vec<ReqRef>,
    /// Set while a blocking statement is between its post and wait phases.
    wait: Option<Box<WaitSet>>,
    /// Set while a collective (or comm_split/comm_dup) is in progress.
    coll: Option<Box<collective::CollExec>>,
    /// Set while blocked in `probe`.
    probing: Option<Box<p2p::Envelope>>,
    /// When a blocked LP is scheduled to resume (`INFINITY`: not yet);
    /// a resume event at another time is stale and ignored.
    wake_at: f64,
    stats: RankStats,
    /// Blocks run since the last one that communicated or read `wtime()`.
    quiet_blocks: u32,
    /// Set once `quiet_blocks` reaches [`SLICE_BLOCKS`]; dropped when the
    /// LP communicates or reads `wtime()`. See [`Watch`].
    watch: Option<Box<Watch>>,
}

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
struct Watch {
    snapshot: Option<SmallVec<[Frame; 1]>>,
    /// Passes through the snapshot's terminator compared so far.
    passes: u32,
    /// Periods of [`SLICE_BLOCKS`] quiet blocks since the snapshot was
    /// taken.
    age: u32,
    clock: f64,
    idle_blocks: u64,
}

/// Passes through a snapshot's terminator compared before it is retaken.
const WATCH_PASSES: u32 = 8;
/// Slices after which a snapshot that has not been passed again is retaken.
const WATCH_AGE: u32 = 4;
/// No snapshot of states with more values than this (variables plus array
/// elements): comparing them would cost more than the loop.
const WATCH_MAX_VALUES: usize = 4096;

enum Flow {
    Continue,
    Yield,
    Block,
}

/// The simulation of one program on one machine.
pub struct Engine<'a> {
    program: &'a Program,
    /// Per function, per block index: whether the block communicates or
    /// reads `wtime()` (see [`Watch`]).
    observes: Vec<Vec<bool>>,
    machine: &'a mut dyn Machine,
    cfg: SimConfig,
    params: Vec<Value>,
    /// Per kernel: its calibrated time, if `SimConfig::kernel_times` has one.
    kernel_times: Vec<Option<Arc<dyn KernelTime>>>,
    /// `kernel_profile`: the calls so far.
    profile: Option<ProfileRecorder>,
    /// With calibrated kernels: per rank, bit k set once the rank has called
    /// kernel k (k < 64), so a first call can cost its measured first-call
    /// time. Empty without calibrated kernels.
    kernels_called: Vec<u64>,
    /// With `noise_seed` and calibrated kernels: each rank's stream.
    noise: Vec<NoiseStream>,
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
    /// Communication statements executed (for `max_events`).
    comm_calls: u64,
    messages: u64,
    bytes: u64,
    output: &'a mut dyn FnMut(PrintLine),
    /// Called every `PROGRESS_EVERY` events (`simulate_with_progress`).
    progress: Option<&'a mut dyn FnMut(&Progress)>,
    finished: u32,
    comms: Comms,
    coll_cfg: crate::coll::CollConfig,
    /// `comm_matrix`: traffic per (source, destination).
    pairs: HashMap<(u32, u32), PairTraffic>,
    /// `trace_limit`: the timeline so far.
    trace: Vec<TraceEvent>,
    trace_truncated: bool,
    /// `record_wildcards`: matched ANY_SOURCE receives, and the envelopes in
    /// flight to each rank.
    wild_matches: Vec<WildcardMatch>,
    inflight_to: HashMap<u32, Vec<u32>>,
    /// Collective calls under way, by (communicator, sequence number).
    instances: HashMap<(u32, u64), collective::Instance>,
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
        // The LP records first, and fallibly: a rank count whose records
        // alone cannot be allocated is an input error, not an abort.
        let mut lps: Vec<Lp> = Vec::new();
        if lps.try_reserve_exact(cfg.ranks as usize).is_err() {
            let gib = cfg.ranks as f64 * std::mem::size_of::<Lp>() as f64 / (1u64 << 30) as f64;
            return Err(SimError::Config(format!(
                "cannot allocate the state of {} ranks ({gib:.1} GiB for their records alone, \
                 {} B per rank, before any message)",
                cfg.ranks,
                std::mem::size_of::<Lp>()
            )));
        }
        let params = eval_params(program, cfg.ranks)?;
        let kernel_times: Vec<Option<Arc<dyn KernelTime>>> = program
            .kernels
            .iter()
            .map(|k| {
                cfg.kernel_times
                    .iter()
                    .find(|(name, _)| *name == k.name)
                    .map(|(_, t)| Arc::clone(t))
            })
            .collect();
        if !cfg.kernel_profile {
            check_kernel_costs(program, &kernel_times)?;
        }
        let profile = cfg
            .kernel_profile
            .then(|| ProfileRecorder::new(program.kernels.len()));
        let calibrated = kernel_times.iter().any(Option::is_some);
        let kernels_called = if calibrated {
            vec![0; cfg.ranks as usize]
        } else {
            Vec::new()
        };
        let noise = match cfg.noise_seed {
            Some(seed) if calibrated => (0..cfg.ranks).map(|r| NoiseStream::new(seed, r)).collect(),
            _ => Vec::new(),
        };
        machine.reset(cfg.ranks);
        let main = program.function(program.main);
        lps.extend((0..cfg.ranks).map(|_| Lp {
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
            wildcards_posted: 0,
            pending: Vec::new(),
            wait: None,
            coll: None,
            probing: None,
            wake_at: f64::INFINITY,
            stats: RankStats::default(),
            quiet_blocks: 0,
            watch: None,
        }));
        let world = cfg.ranks;
        let coll_cfg = machine.collectives();
        let observes = program
            .functions
            .iter()
            .map(|f| f.cfg.node_weights().map(block_observes).collect())
            .collect();
        Ok(Engine {
            program,
            observes,
            machine,
            cfg,
            params,
            kernel_times,
            profile,
            kernels_called,
            noise,
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
            comm_calls: 0,
            messages: 0,
            bytes: 0,
            output,
            comms: Comms::new(world),
            coll_cfg,
            instances: HashMap::new(),
            wild_matches: Vec::new(),
            inflight_to: HashMap::new(),
            trace: Vec::new(),
            trace_truncated: false,
            pairs: HashMap::new(),
            progress: None,
            finished: 0,
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
            if self.events.is_multiple_of(PROGRESS_EVERY)
                && let Some(p) = self.progress.as_mut()
            {
                p(&Progress {
                    events: self.events,
                    sim_time: time,
                    finished: self.finished,
                    ranks: self.cfg.ranks,
                    lps: &self.lps,
                });
            }
            self.now = time;
            if self.events.saturating_add(self.comm_calls) > self.cfg.max_events {
                return Err(self.runaway(format!(
                    "stopped after {} events and {} communication calls (--max-events {} counts both)",
                    self.events, self.comm_calls, self.cfg.max_events
                )));
            }
            if time > self.cfg.max_sim_time {
                return Err(self.runaway(format!(
                    "model time passed {} s (--max-sim-time)",
                    self.cfg.max_sim_time
                )));
            }
            match ev_kind {
                EventKind::Resume(lp) => {
                    let l = &mut self.lps[lp as usize];
                    match l.state {
                        LpState::Ready => self.run_lp(lp)?,
                        LpState::Blocked if l.wake_at == time => {
                            l.state = LpState::Ready;
                            l.wake_at = f64::INFINITY;
                            self.run_lp(lp)?;
                        }
                        // A superseded wake-up, or a finished LP.
                        _ => {}
                    }
                }
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
        let leftovers = self.leftovers();
        let wildcards = std::mem::take(&mut self.wild_matches);
        let trace = std::mem::take(&mut self.trace);
        let mut comm_matrix: Vec<(u32, u32, PairTraffic)> = std::mem::take(&mut self.pairs)
            .into_iter()
            .map(|((s, d), t)| (s, d, t))
            .collect();
        comm_matrix.sort_by_key(|&(s, d, _)| (s, d));
        let kernel_profile = self
            .profile
            .take()
            .map(|p| p.finish(self.program))
            .unwrap_or_default();
        Ok(SimReport {
            comm_matrix,
            kernel_profile,
            trace,
            trace_truncated: self.trace_truncated,
            predicted_seconds,
            ranks,
            messages: self.messages,
            bytes: self.bytes,
            events: self.events,
            leftovers,
            wildcards,
        })
    }

    /// Adds a timeline event, up to the limit.
    pub(super) fn trace_push(&mut self, ev: TraceEvent) {
        if self.trace.len() < self.cfg.trace_limit {
            self.trace.push(ev);
        } else {
            self.trace_truncated = true;
        }
    }

    /// Unreceived messages, unmatched receives and unwaited requests, in
    /// rank order (user communication only: collectives always complete).
    fn leftovers(&self) -> Vec<Leftover> {
        let mut out = Vec::new();
        for lp in &self.lps {
            for &m in &lp.unexpected {
                let msg = &self.msgs[m as usize];
                if msg.ctx % 2 == 1 {
                    continue;
                }
                out.push(Leftover {
                    kind: LeftoverKind::UnreceivedMessage,
                    rank: msg.src,
                    peer: Some(msg.dst),
                    tag: Some(msg.tag),
                    bytes: msg.bytes,
                    span: msg.span,
                    comm: msg.ctx / 2,
                });
            }
            for &r in &lp.posted {
                let q = &self.reqs[r as usize];
                out.push(Leftover {
                    kind: LeftoverKind::UnmatchedReceive,
                    rank: q.owner,
                    peer: (q.peer != ANY_SOURCE).then_some(q.peer),
                    tag: (q.tag != ANY_TAG).then_some(q.tag),
                    bytes: q.bytes,
                    span: q.span,
                    comm: q.comm,
                });
            }
            for r in &lp.pending {
                let q = &self.reqs[r.id as usize];
                if q.generation != r.generation || !q.done {
                    continue;
                }
                out.push(Leftover {
                    kind: LeftoverKind::UnwaitedRequest,
                    rank: q.owner,
                    peer: (q.peer != ANY_SOURCE).then_some(q.peer),
                    tag: (q.tag != ANY_TAG).then_some(q.tag),
                    bytes: q.bytes,
                    span: q.span,
                    comm: q.comm,
                });
            }
        }
        out.sort_by_key(|l| (l.rank, l.span.start));
        out
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
            let (func_id, block_id) = (frame.func, frame.block);
            let func = program.function(func_id);
            let block = &func.cfg[block_id];
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
            self.watch_step(id, func_id, block_id)?;
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

    /// The runaway-loop detector's step at a block's terminator, just
    /// before it runs (see [`Watch`]).
    #[inline]
    fn watch_step(&mut self, id: u32, func: FuncId, block: BlockId) -> RunResult<()> {
        let observes = self.observes[func as usize][block.index()];
        let lp = &mut self.lps[id as usize];
        if observes {
            lp.quiet_blocks = 0;
            lp.watch = None;
            return Ok(());
        }
        lp.quiet_blocks = lp.quiet_blocks.wrapping_add(1);
        if let Some(w) = lp.watch.as_deref_mut()
            && let Some(snapshot) = &w.snapshot
            && snapshot.len() == lp.frames.len()
            && snapshot
                .last()
                .is_some_and(|f| f.func == func && f.block == block)
        {
            if same_frames(&lp.frames, snapshot) {
                return Err(self.infinite_loop(id));
            }
            w.passes += 1;
            if w.passes >= WATCH_PASSES {
                w.snapshot = None;
            }
        }
        if lp.quiet_blocks.is_multiple_of(SLICE_BLOCKS) {
            self.watch_tick(id)?;
        }
        Ok(())
    }

    /// Every [`SLICE_BLOCKS`] quiet blocks: the zero-time budget, and a new
    /// snapshot when the old one is used up or old.
    fn watch_tick(&mut self, id: u32) -> RunResult<()> {
        let max = self.cfg.max_zero_time_blocks;
        let lp = &mut self.lps[id as usize];
        let clock = lp.clock;
        let w = lp.watch.get_or_insert_with(|| {
            Box::new(Watch {
                snapshot: None,
                passes: 0,
                age: 0,
                clock,
                idle_blocks: 0,
            })
        });
        if w.clock == clock {
            w.idle_blocks += u64::from(SLICE_BLOCKS);
        } else {
            w.clock = clock;
            w.idle_blocks = 0;
        }
        if w.idle_blocks >= max {
            let reason = format!(
                "rank {id} ran {} basic blocks without its model time advancing and \
                 without communicating (--max-zero-time-blocks): a loop that never ends?",
                w.idle_blocks
            );
            return Err(self.runaway_at(id, reason));
        }
        w.age += 1;
        if w.snapshot.is_none() || w.age > WATCH_AGE {
            w.snapshot = (state_size(&lp.frames, WATCH_MAX_VALUES) <= WATCH_MAX_VALUES)
                .then(|| lp.frames.clone());
            w.passes = 0;
            w.age = 0;
        }
        Ok(())
    }

    /// A proven infinite loop of rank `id` (see [`Watch`]).
    fn infinite_loop(&self, id: u32) -> SimError {
        let reason = format!(
            "rank {id} loops forever: it came back to the same point of a loop with \
             every variable unchanged, and the loop neither communicates nor reads wtime(), \
             so nothing can change"
        );
        self.runaway_at(id, reason)
    }

    /// A runaway error that points at rank `id` only.
    fn runaway_at(&self, id: u32, reason: String) -> SimError {
        SimError::Runaway {
            reason,
            events: self.events,
            time: self.lps[id as usize].clock,
            positions: self.position(id).map(|s| (id, s)).into_iter().collect(),
        }
    }

    fn finish(&mut self, id: u32) {
        let lp = &mut self.lps[id as usize];
        lp.state = LpState::Finished;
        lp.stats.finish = lp.clock;
        lp.frames = SmallVec::new();
        self.finished += 1;
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
            comms: &self.comms,
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
            Stmt::AssignIndex {
                dst,
                index,
                value,
                span,
            } => {
                let i = self.eval_in(id, index, *span)?;
                let v = self.eval_in(id, value, *span)?;
                let lpi = id as usize;
                // Invariant: a running LP has a frame; slots are in range (ir.rs).
                let Some(f) = self.lps[lpi].frames.last_mut() else {
                    return Ok(Flow::Continue);
                };
                match &mut f.locals[*dst as usize] {
                    Value::Array(a) => {
                        let k = crate::value::array_index(a.len(), &i).map_err(|m| {
                            SimError::Runtime {
                                rank: id,
                                span: *span,
                                message: m,
                            }
                        })?;
                        // Copy-on-write: other holders of this array keep theirs.
                        std::rc::Rc::make_mut(a)[k] = v;
                    }
                    other => {
                        let m = format!("cannot assign an element of {}", other.type_name());
                        return Err(self.rt(id, *span, m));
                    }
                }
                Ok(Flow::Continue)
            }
            Stmt::Compute { kernel, args, span } => {
                let k = &self.program.kernels[*kernel as usize];
                // Kernel arguments: on the stack for the usual few, else on the heap.
                let mut vals: SmallVec<[Value; 4]> = SmallVec::new();
                for a in args {
                    vals.push(self.eval_in(id, a, *span)?);
                }
                let vals: &[Value] = &vals;
                if let Some(p) = &mut self.profile {
                    p.record(id, *kernel as usize, vals);
                }
                let nominal = match (&self.kernel_times[*kernel as usize], &k.cost) {
                    (Some(t), _) => {
                        let first = match self.kernels_called.get_mut(id as usize) {
                            Some(bits) if *kernel < 64 => {
                                let bit = 1u64 << *kernel;
                                let first = *bits & bit == 0;
                                *bits |= bit;
                                first
                            }
                            _ => false,
                        };
                        let uniform = self.noise.get_mut(id as usize).map(NoiseStream::uniform);
                        t.seconds(
                            vals,
                            KernelCall {
                                rank: id,
                                first,
                                uniform,
                            },
                        )
                    }
                    .map_err(|m| {
                        self.rt(
                            id,
                            *span,
                            format!("calibrated time of kernel `{}`: {m}", k.name),
                        )
                    })?,
                    (None, Some(cost)) => {
                        let cx = EvalCx {
                            locals: vals,
                            params: &self.params,
                            rank: id,
                            size: self.cfg.ranks,
                            clock: self.lps[id as usize].clock,
                            comms: &self.comms,
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
                    (None, None) if self.profile.is_some() => 0.0,
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
                let start = lp.clock;
                lp.clock += t;
                lp.stats.compute += t;
                let end = lp.clock;
                if self.cfg.trace_limit > 0 {
                    let what = format!("compute {}", k.name);
                    self.trace_push(TraceEvent::Interval {
                        rank: id,
                        start,
                        end,
                        what,
                        comm: false,
                        line: span.line,
                        wait: 0.0,
                    });
                }
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
                self.comm_calls += 1;
                self.exec_comm(id, op, *dst, *span)
            }
        }
    }

    // --- reports ---------------------------------------------------------------

    fn position(&self, id: u32) -> Option<Span> {
        let lp = &self.lps[id as usize];
        let f = lp.frames.last()?;
        let func = self.program.function(f.func);
        let block = &func.cfg[f.block];
        Some(match block.stmts.get(f.stmt as usize) {
            Some(s) => s.span(),
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
                    (None, Some(Stmt::Comm { op, .. })) => (comm_name(op), &[]),
                    (None, _) => ("(running)", &[]),
                };
            let mut waits: Vec<PendingOp> = reqs
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
                    comm: q.comm,
                    in_collective: q.ctx % 2 == 1,
                })
                .collect();
            if let Some(env) = &lp.probing {
                waits.push(PendingOp {
                    kind: PendingKind::Probe,
                    peer: (env.peer != ANY_SOURCE).then_some(env.peer),
                    tag: (env.tag != ANY_TAG).then_some(env.tag),
                    bytes: 0,
                    span,
                    peer_finished: env.peer != ANY_SOURCE
                        && self.lps[env.peer as usize].state == LpState::Finished,
                    comm: env.comm,
                    in_collective: false,
                });
            }
            blocked.push(BlockedRank {
                rank: r as u32,
                span,
                op,
                waits,
                any: lp.wait.as_ref().is_some_and(|ws| ws.any),
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
        CommOp::Send(_, SendMode::Standard) => "send",
        CommOp::Send(_, SendMode::Synchronous) => "ssend",
        CommOp::Send(_, SendMode::Buffered) => "bsend",
        CommOp::Recv(_) => "recv",
        CommOp::Isend(_, SendMode::Standard) => "isend",
        CommOp::Isend(_, SendMode::Synchronous) => "issend",
        CommOp::Isend(_, SendMode::Buffered) => "ibsend",
        CommOp::Irecv(_) => "irecv",
        CommOp::Sendrecv { .. } => "sendrecv",
        CommOp::Wait(_) => "wait",
        CommOp::Waitall(_) => "waitall",
        CommOp::Waitany(_) => "waitany",
        CommOp::Test(_) => "test",
        CommOp::Probe(_) => "probe",
        CommOp::Iprobe(_) => "iprobe",
        CommOp::Collective(a) => a.kind.name(),
        CommOp::CommSplit { .. } => "comm_split",
        CommOp::CommDup(_) => "comm_dup",
    }
}

/// Every `compute` of a kernel without a cost (and without a calibrated
/// time) is an error before the simulation starts.
fn check_kernel_costs(
    program: &Program,
    calibrated: &[Option<Arc<dyn KernelTime>>],
) -> RunResult<()> {
    for f in &program.functions {
        for b in f.cfg.node_weights() {
            for s in &b.stmts {
                if let Stmt::Compute { kernel, span, .. } = s {
                    let k = &program.kernels[*kernel as usize];
                    if k.cost.is_none()
                        && calibrated.get(*kernel as usize).is_none_or(Option::is_none)
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
            comms: &crate::value::WorldOnly(size),
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

/// [`simulate`], calling `progress` every quarter million events or so.
pub fn simulate_with_progress(
    program: &Program,
    machine: &mut dyn Machine,
    cfg: SimConfig,
    output: &mut dyn FnMut(PrintLine),
    progress: &mut dyn FnMut(&Progress),
) -> Result<SimReport, SimError> {
    let params = eval_params(program, cfg.ranks)?;
    let mut specialized = program.clone();
    crate::fold::specialize(&mut specialized, &params, cfg.ranks);
    let mut engine = Engine::new(&specialized, machine, cfg, output)?;
    engine.progress = Some(progress);
    engine.run()
}

/// Whether a block can learn anything from outside its LP: a communication
/// statement, or `wtime()` anywhere in its statements or terminator.
fn block_observes(block: &Block) -> bool {
    let stmt = |s: &Stmt| match s {
        Stmt::Comm { .. } => true,
        Stmt::Assign { value, .. } => reads_clock(value),
        Stmt::AssignIndex { index, value, .. } => reads_clock(index) || reads_clock(value),
        Stmt::Compute { args, .. } | Stmt::Call { args, .. } => args.iter().any(reads_clock),
        Stmt::Copy { bytes, .. } => reads_clock(bytes),
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

fn reads_clock(e: &Expr) -> bool {
    match e {
        Expr::Wtime => true,
        Expr::Const(_)
        | Expr::Bool(_)
        | Expr::Null
        | Expr::Any
        | Expr::World
        | Expr::Local(_)
        | Expr::Param(_)
        | Expr::Rank
        | Expr::Size => false,
        Expr::RankIn(x) | Expr::SizeIn(x) | Expr::Unary(_, x) | Expr::Field(x, _) => reads_clock(x),
        Expr::Index(a, b) | Expr::Binary(_, a, b) | Expr::And(a, b) | Expr::Or(a, b) => {
            reads_clock(a) || reads_clock(b)
        }
        Expr::Array(items) | Expr::Builtin(_, items) => items.iter().any(reads_clock),
    }
}

/// The same interpreter state: positions, return slots and variables, floats
/// compared by their bits (so `0.0` and `-0.0` differ, and a NaN equals
/// itself), arrays by identity first.
fn same_frames(a: &[Frame], b: &[Frame]) -> bool {
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

fn same_value(a: &Value, b: &Value) -> bool {
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
fn state_size(frames: &[Frame], limit: usize) -> usize {
    fn value_size(v: &Value, budget: usize) -> usize {
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
