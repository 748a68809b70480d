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

mod api;
mod collective;
mod comms;
mod deadlock;
mod event_loop;
mod interp;
mod observe;
mod p2p;
mod state;
mod watch;

pub use api::*;
use comms::Comms;
use deadlock::comm_name;
use observe::Observers;
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
    finished: u32,
    comms: Comms,
    coll_cfg: crate::coll::CollConfig,
    /// The optional recording: timeline, comm matrix, wildcard matches,
    /// kernel profile, progress.
    obs: Observers<'a>,
    /// Collective calls under way, by (communicator, sequence number).
    instances: HashMap<(u32, u64), collective::Instance>,
}

type RunResult<T> = Result<T, SimError>;
