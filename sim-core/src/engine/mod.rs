//! The deterministic event engine: one logical process (LP) per rank.
//!
//! Each LP is a state machine (model clock, frame stack, matching queues),
//! not a thread; an idle one is a few hundred bytes in one array. A single
//! event loop takes events in time order and runs the LP or the protocol
//! step each one concerns. Same input, same output, bit for bit.
//!
//! # Where things are
//!
//! - `api.rs`: the public types ([`SimConfig`], [`SimReport`], [`SimError`],
//!   [`Progress`], [`TraceEvent`], ...) and the entry points [`simulate`]
//!   and [`simulate_with_progress`], re-exported here.
//! - `state.rs`: the records: events, messages, requests, wait sets, frames
//!   and the LP.
//! - `ring.rs`: `Ring`, the compact deque of the LP's matching queues.
//! - `event_loop.rs`: setting up a run ([`Engine::new`]), the queue in
//!   front of the event heap (`push`, `next_event`) and the loop itself
//!   ([`Engine::run`]), which dispatches each event.
//! - `interp.rs`: the statement interpreter (`run_lp`, `exec_stmt`).
//! - `p2p.rs`: point-to-point posting, matching, eager and rendezvous
//!   protocols, waits and probes; `collective.rs`: collectives and
//!   communicator creation as point-to-point schedules; `comms.rs`: the
//!   communicators and matching contexts.
//! - `observe.rs`: the optional recording (timeline, comm matrix, wildcard
//!   matches, kernel profile, progress) behind one `Observers` value.
//! - `watch.rs`: runaway-loop detection (`Watch`).
//! - `fastforward.rs`: with `SimConfig::fast_forward`, skipping the
//!   iterations of a steady outer loop (all ranks parked at its head with
//!   nothing in flight, then moved forward by whole periods); a run it
//!   cannot skip is abandoned and run again in full by `api::simulate`.
//! - `deadlock.rs`: where the ranks stand when a run stops: the deadlock
//!   report, runaway positions, end-of-run leftovers.
//!
//! # The order of events at one model time
//!
//! Events are taken in time order. Among events at the same time `t`, the
//! order is exactly this (`Engine::push`, `Engine::next_event`,
//! [`crate::queue::EventQueue`]):
//!
//! 1. The event queue (a radix heap) holds every event not described in 2;
//!    at equal times it pops them in push order (each of its lists keeps
//!    its items in push order; see [`crate::queue::EventQueue`]).
//! 2. A `Resume` pushed for a time not after the current one (`time <=
//!    now`) bypasses the queue: it is appended to `ready_now`, a FIFO that
//!    `next_event` drains completely before it pops the queue again. These
//!    are LPs made ready at the current time: woken by a completion or an
//!    arrival handled now, an LP whose slice of `SLICE_BLOCKS` blocks
//!    ended at its clock `== now`, and at the start every rank, in rank
//!    order.
//! 3. So at time `t`: the first queued event at `t` runs; then every LP that
//!    became ready at `t` while it ran, in the order they became ready,
//!    each run to its next yield or block, and the LPs that those make
//!    ready, appended to the same FIFO; only then the next queued event at
//!    `t`, and so on. A `Resume` at `t` pushed *before* the loop reached
//!    `t` (an LP that yields because compute took its clock ahead to `t`,
//!    a wake-up scheduled for `t` earlier) is an ordinary queued event, in
//!    push order among the arrivals, CTSs and payloads at `t`; an arrival,
//!    CTS or payload pushed at `t` while the loop is at `t` (a zero-time
//!    transfer) queues behind every event at `t` already queued.
//! 4. A `Resume` of a blocked LP at a time other than its `wake_at` is
//!    stale (an earlier completion pre-empted it) and does nothing; nor does
//!    one of a finished LP. Both still count as events.
//!
//! # Invariants
//!
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
//!   construction rather than by polling the clocks. (An eager message may
//!   be matched at send time instead, when that gives exactly the match its
//!   arrival would: `try_early_match` in `p2p.rs`.)
//! - For one (source, destination) pair arrivals are nondecreasing in send
//!   order (the model's contract, see `model.rs`; equal arrival times pop in
//!   push order, which is send order), so MPI's non-overtaking rule holds.
//! - No event is pushed for a time before the current one (the radix heap
//!   relies on it; see `queue.rs`).
//! - A ready LP (`LpState::Ready`) is running or has a pending `Resume`;
//!   a blocked one is resumed only by the `Resume` at its `wake_at`.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::rc::Rc;
use std::sync::Arc;

use smallvec::{SmallVec, smallvec};
use thin_vec::ThinVec;

mod api;
mod collective;
mod comms;
mod deadlock;
mod event_loop;
mod fastforward;
mod interp;
mod observe;
mod p2p;
mod ring;
mod state;
mod watch;

pub use api::*;
use comms::Comms;
use deadlock::comm_name;
use observe::Observers;
use ring::Ring;
use state::*;
use watch::*;

use crate::ir::{
    Block, BlockId, CommOp, Expr, FuncId, KernelId, MsgArgs, PrintArg, Program, SendMode, Slot,
    Span, Stmt, Terminator,
};
use crate::kernels::{KernelCall, KernelProfile, KernelTime, NoiseStream, ProfileRecorder};
use crate::model::{Machine, MessageKind};
use crate::queue::EventQueue;
use crate::value::{EvalCx, MsgStatus, ReqRef, Value, eval};

/// The largest capacity `ready_now` keeps once drained (4 KiB of ids): a
/// larger buffer, left by a burst such as every rank starting at time 0,
/// is freed (4 MiB at a million ranks, resident for the whole run
/// otherwise).
const READY_NOW_KEEP: usize = 1024;

/// Blocks an LP may execute in one slice before it yields (so that a loop
/// without communication still counts events and meets `max_events`).
const SLICE_BLOCKS: u32 = 4096;

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
    /// With calibrated kernels: per rank, bit k set once the rank has called
    /// kernel k (k < 64), so a first call can cost its measured first-call
    /// time. Empty without calibrated kernels.
    kernels_called: Vec<u64>,
    /// Per rank that called `malloc`: the sizes of its live allocations, in
    /// order, so that `free(bytes: n)` finds one (or is an error). Only the
    /// ranks that allocate have an entry.
    program_heap: std::collections::HashMap<u32, Vec<u64>>,
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
    /// The request slab. Its free slots are kept per rank (`Lp::free_req`,
    /// a list threaded through the slots' `span`, last freed first): a rank
    /// reuses its own slots, which stay next to each other.
    reqs: Vec<Request>,
    /// The spans of `reqs` and `msgs`, interned.
    spans: SpanTable,
    events: u64,
    /// Communication statements executed (for `max_events`).
    comm_calls: u64,
    /// The rank whose communication statement is executing ([`NO_RANK`]:
    /// none): with `progress_in_calls` it is inside MPI, and answers a
    /// rendezvous at once.
    in_call: u32,
    /// [`crate::model::Machine::progress_in_calls`], read once.
    progress_in_calls: bool,
    /// `Machine::timer_seconds` of rank 0 at the start: what a statement
    /// that reads the clock adds per read (`charge_clock_reads`); 0 on
    /// most machines, which then pay nothing for the check.
    timer: f64,
    messages: u64,
    bytes: u64,
    /// The largest message of each channel set (`Machine::channel_of`),
    /// of those above `record_above` (`Machine::extrapolated_above`, read
    /// once).
    largest: [u64; crate::model::CHANNEL_SETS],
    record_above: u64,
    output: &'a mut dyn FnMut(PrintLine),
    finished: u32,
    comms: Comms,
    coll_cfg: crate::coll::CollConfig,
    /// The optional recording: timeline, comm matrix, wildcard matches,
    /// kernel profile, progress.
    obs: Observers<'a>,
    /// Collective calls under way, by (communicator, sequence number).
    instances: HashMap<(u32, u64), collective::Instance>,
    /// With `SimConfig::fast_forward`: the steady-loop detector
    /// (`fastforward.rs`).
    ff: Option<Box<fastforward::FastForward>>,
    /// `ff_decide` chose an exact shift: `ff_shift` runs before the next
    /// event.
    ff_shift_due: bool,
}

/// The engine's internal result: the error boxed, so that the `Ok` path of
/// every statement and event handler moves 16 bytes, not a whole `SimError`.
type RunResult<T> = Result<T, Box<SimError>>;
