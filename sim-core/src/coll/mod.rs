//! Collective operations as point-to-point schedules.
//!
//! A collective runs inside the engine as the messages of a named algorithm,
//! so it meets the same network model, contention and deadlock detection as
//! user messages. This module is pure: given the operation, this rank's
//! position in the communicator and the sizes, it returns the rank's
//! schedule, a list of [`Step`]s; the engine executes it.
//!
//! Step semantics (the contract with the engine): the operations of one
//! step are all started together (receives posted, sends started, in the
//! order listed), then the rank waits for all of them; then it charges the
//! reduction of `reduce_bytes` bytes on its CPU; then the next step starts.
//! Peers are ranks *in the communicator*. All messages of collectives use a
//! context of their own, so they never match user messages; messages between
//! two ranks are matched in order (MPI's non-overtaking rule), so schedules
//! need no tags.

use crate::ir::CollKind;

/// One point-to-point operation of a schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Send {
        peer: u32,
        bytes: u64,
    },
    /// `bytes` is the receive's capacity; [`ANY_SIZE`] where the size is
    /// only known from the message (v-variants).
    Recv {
        peer: u32,
        bytes: u64,
    },
}

/// Capacity of a receive whose size the receiver does not know in advance.
pub const ANY_SIZE: u64 = u64::MAX;

/// One step of a schedule: start all `ops`, wait for all, then reduce.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Step {
    pub ops: Vec<Op>,
    /// Bytes combined by the reduction operation after the step's messages
    /// (charged by `Machine::reduce_seconds`); 0 for none.
    pub reduce_bytes: u64,
}

/// The sizes of a collective call, as MPI counts them (see
/// [`crate::ir::CollArgs`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counts<'a> {
    /// The same count for every rank (or the whole buffer, for bcast,
    /// reduce, allreduce, scan, exscan).
    Uniform(u64),
    /// One count per rank of the communicator (scatterv at the root,
    /// allgatherv, reduce_scatter) or per destination (alltoallv).
    PerRank(&'a [u64]),
    /// Only this rank's own count is known (gatherv at any rank, scatterv at
    /// a non-root): receives from others use [`ANY_SIZE`].
    Own(u64),
}

/// One rank's call of a collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CollCall<'a> {
    pub kind: CollKind,
    /// This rank's rank in the communicator.
    pub rank: u32,
    /// The communicator's size (>= 1).
    pub size: u32,
    /// The root (0 for operations without one).
    pub root: u32,
    pub counts: Counts<'a>,
}

/// Whose selection rules pick the algorithms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Library {
    /// MPICH's classic CVAR thresholds (`src/mpi/coll/*`).
    #[default]
    Mpich,
    /// Open MPI `coll/tuned` fixed decision rules.
    OpenMpi,
}

/// A named algorithm. (The list grows with the selectors' needs.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Algorithm {
    Linear,
    BinomialTree,
    RecursiveDoubling,
    Ring,
    Bruck,
    Pairwise,
    Dissemination,
}

/// The machine's choice of collective algorithms.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CollConfig {
    pub library: Library,
    /// Algorithms forced per collective (`alltoall = "pairwise"`).
    pub forced: Vec<(CollKind, Algorithm)>,
}
