//! The engine's public types: the configuration of a run, its report, its
//! errors and progress, and the two entry points.

use super::event_loop::eval_params;
use super::*;

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
    /// Count every communication call per rank, source line, operation,
    /// peer, bytes and communicator size (`SimReport::call_profile`), as
    /// an MPI profiling wrapper counts a real run's calls.
    pub call_profile: bool,
    /// Skip the iterations of an outer loop of `main` once every rank
    /// repeats it in a steady state (`fastforward.rs`); the report says
    /// whether it did ([`SimReport::fast_forward`]). Prints and recordings
    /// of the skipped iterations do not happen: use it for predictions.
    pub fast_forward: bool,
    /// Let variables of a function that are never live at once share a
    /// frame slot (`crate::slots`): fewer bytes per rank, the same run.
    /// On by default; off only to compare the two (`tests/fuzz.rs`).
    pub share_slots: bool,
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
    /// `collective`: a message of a collective's algorithm, which the
    /// critical path follows through the collective and the timeline
    /// exports leave out (they draw the program's own messages).
    Message {
        src: u32,
        dst: u32,
        sent: f64,
        received: f64,
        bytes: u64,
        collective: bool,
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
    /// Other senders one of whose messages MPI allows it to match: every
    /// sender of a message to this rank that matches the receive, that the
    /// rank had not received before it, and that was not sent causally
    /// after it (vector clocks, up to 4096 ranks; above, only the messages
    /// that had arrived or were in flight when it matched). Under other
    /// timing one of them could have matched.
    pub alternatives: Vec<u32>,
    /// A blocking `probe(from: any)`, not a receive: it chose the sender
    /// whose message the next receive of that sender takes.
    pub probe: bool,
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
            call_profile: false,
            fast_forward: false,
            share_slots: true,
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
    pub(super) lps: &'a [Lp],
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
            LpState::Ready if lp.wait.is_some() || lp.in_collective() || lp.probing().is_some() => {
                RankState::Communicating
            }
            LpState::Ready => RankState::Computing,
        }));
    }
}

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
    /// The largest message (bytes) each channel set of the machine carried,
    /// of those above
    /// [`Machine::extrapolated_above`](crate::model::Machine::extrapolated_above)
    /// ([`Machine::channel_of`](crate::model::Machine::channel_of); 0: none).
    pub largest_message: [u64; crate::model::CHANNEL_SETS],
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
    /// Communication calls counted (with `SimConfig::call_profile`), sorted
    /// by rank, line, operation, peer, bytes and communicator size.
    pub call_profile: Vec<CallCount>,
    /// With `SimConfig::fast_forward`: what it did.
    pub fast_forward: Option<FastForward>,
}

/// What `SimConfig::fast_forward` did.
#[derive(Debug, Clone, PartialEq)]
pub enum FastForward {
    /// Iterations were skipped on every rank: one entry per jump, in the
    /// order made (a loop inside a loop that prints, such as a benchmark's
    /// repetitions inside its loop over message sizes, is skipped each
    /// time it runs). Never empty.
    Applied { loops: Vec<SkippedLoop> },
    /// Nothing was skipped, and why (the run is then the full run).
    NotApplied { reason: String },
}

impl FastForward {
    /// The iterations skipped in all.
    pub fn iterations(&self) -> u64 {
        match self {
            FastForward::Applied { loops } => loops.iter().map(|l| l.iterations).sum(),
            FastForward::NotApplied { .. } => 0,
        }
    }

    /// What the skips can change in the result at most: the sum of each
    /// jump's bound.
    pub fn bound(&self) -> f64 {
        match self {
            FastForward::Applied { loops } => loops.iter().map(|l| l.bound).sum(),
            FastForward::NotApplied { .. } => 0.0,
        }
    }
}

/// One jump of `SimConfig::fast_forward`: `iterations` iterations of the
/// loop at `line` were skipped on every rank, each taken to last `period`
/// seconds (the ranks' periods agreed to `period_spread`). `bound` is what
/// the skip can change in the result at most: the periods' spread over the
/// skipped iterations, plus one period for the contention the first
/// iteration after the jump does not meet.
#[derive(Debug, Clone, PartialEq)]
pub struct SkippedLoop {
    pub line: u32,
    pub iterations: u64,
    pub period: f64,
    pub period_spread: f64,
    pub bound: f64,
}

/// How often one rank made one kind of communication call at one line
/// (`SimConfig::call_profile`). The conventions are those of an MPI
/// profiling wrapper (`validation/npb/mpicount.c` writes the same columns):
/// - `peer`: the peer's world rank for point-to-point calls (`None` for
///   ANY_SOURCE; `sendrecv`: the destination), the root's world rank for
///   rooted collectives, `None` for the other collectives;
/// - `bytes`: the call's `bytes:` (a receive: its buffer); `alltoall`: the
///   block for each peer; for an array of counts their sum, and for an
///   `alltoallv` or `allgatherv` given one count, that count times the
///   communicator's size; `comm_split`/`comm_dup`: 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallCount {
    pub rank: u32,
    pub line: u32,
    /// The language's name of the call (`isend`, `allreduce`, ...).
    pub operation: &'static str,
    pub peer: Option<u32>,
    pub bytes: u64,
    /// The size of the communicator the call was made on.
    pub comm_size: u32,
    pub calls: u64,
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
    /// The ranks of one communicator called different collectives, or the
    /// same one with different roots, sizes or reduction ops (a run-time
    /// error of the rank that found the difference, like `Runtime`).
    #[error("rank {rank}: {message}")]
    CollectiveMismatch {
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
        reason: Runaway,
        events: u64,
        time: f64,
        positions: Vec<(u32, Span)>,
    },
    #[error("kernel `{kernel}` has no cost")]
    KernelWithoutCost { kernel: String, span: Span },
    #[error("bad configuration: {0}")]
    Config(String),
}

/// Why a program was stopped as runaway, in the engine's terms (a
/// front end names the setting behind each limit).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Runaway {
    /// Events plus communication calls passed [`SimConfig::max_events`].
    #[error(
        "stopped after {events} events and {calls} communication calls (the limit of {limit} counts both)"
    )]
    Events { events: u64, calls: u64, limit: u64 },
    /// Model time passed [`SimConfig::max_sim_time`].
    #[error("model time passed {limit} s")]
    SimTime { limit: f64 },
    /// A rank ran [`SimConfig::max_zero_time_blocks`] blocks or more without
    /// its clock advancing and without communicating.
    #[error(
        "rank {rank} ran {blocks} basic blocks without its model time advancing and without communicating: a loop that never ends?"
    )]
    ZeroTime { rank: u32, blocks: u64 },
    /// A rank came back to a loop's head with every variable unchanged, in
    /// a loop that neither communicates nor reads `wtime()`.
    #[error(
        "rank {rank} loops forever: it came back to the same point of a loop with every variable unchanged, and the loop neither communicates nor reads wtime(), so nothing can change"
    )]
    Loop { rank: u32 },
}

/// Runs `program` on `machine` with `cfg`, sending `print` output to `output`.
///
/// The program is first specialised for the run (params and `size` folded
/// into constants, see [`crate::fold`]; variables never live at once
/// sharing a slot, see [`crate::slots`]); the result is the same as
/// interpreting the original.
pub fn simulate(
    program: &Program,
    machine: &mut dyn Machine,
    cfg: SimConfig,
    output: &mut dyn FnMut(PrintLine),
) -> Result<SimReport, SimError> {
    simulate_with(program, machine, cfg, output, None)
}

/// The run itself. With `fast_forward` the prints are held back until the
/// run ends, so that a run abandoned for a full one (`fastforward.rs`)
/// prints nothing twice.
fn simulate_with(
    program: &Program,
    machine: &mut dyn Machine,
    cfg: SimConfig,
    output: &mut dyn FnMut(PrintLine),
    mut progress: Option<&mut dyn FnMut(&Progress)>,
) -> Result<SimReport, SimError> {
    let params = eval_params(program, cfg.ranks).map_err(|e| *e)?;
    let mut specialized = program.clone();
    crate::fold::specialize(&mut specialized, &params, cfg.ranks);
    if cfg.share_slots {
        crate::slots::compact(&mut specialized);
    }
    if !cfg.fast_forward {
        let mut engine = Engine::new(&specialized, machine, cfg, output).map_err(|e| *e)?;
        if let Some(p) = progress {
            engine.obs.report_progress(p);
        }
        return engine.run().map_err(|e| *e);
    }
    let mut held: Vec<PrintLine> = Vec::new();
    let outcome = {
        let mut hold = |l: PrintLine| held.push(l);
        let mut engine =
            Engine::new(&specialized, machine, cfg.clone(), &mut hold).map_err(|e| *e)?;
        if let Some(p) = progress.as_deref_mut() {
            engine.obs.report_progress(p);
        }
        engine.run_or_abandon()
    };
    match outcome {
        Ok(Ok(report)) => {
            held.into_iter().for_each(&mut *output);
            Ok(report)
        }
        Err(e) => {
            held.into_iter().for_each(&mut *output);
            Err(*e)
        }
        Ok(Err(reason)) => {
            let full = SimConfig {
                fast_forward: false,
                ..cfg
            };
            let mut engine = Engine::new(&specialized, machine, full, output).map_err(|e| *e)?;
            if let Some(p) = progress {
                engine.obs.report_progress(p);
            }
            let mut report = engine.run().map_err(|e| *e)?;
            report.fast_forward = Some(FastForward::NotApplied { reason });
            Ok(report)
        }
    }
}

/// [`simulate`], calling `progress` every quarter million events or so.
pub fn simulate_with_progress(
    program: &Program,
    machine: &mut dyn Machine,
    cfg: SimConfig,
    output: &mut dyn FnMut(PrintLine),
    progress: &mut dyn FnMut(&Progress),
) -> Result<SimReport, SimError> {
    simulate_with(program, machine, cfg, output, Some(progress))
}
