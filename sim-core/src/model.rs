//! The traits a machine model implements.
//!
//! A model has two parts:
//! - a [`MachineDesc`], the machine's *description*: what a machine file
//!   says, parsed once, immutable, `Send + Sync`, so that one description
//!   serves every run of a sweep or every noise draw, also from several
//!   threads at once;
//! - a *run state*, which [`MachineDesc::start`] hands out for one run and
//!   which implements [`Machine`]: the per-run network state (NIC "busy
//!   until" timelines) that `transfer` updates. The engine receives a run
//!   state as `&mut dyn Machine`.
//!
//! The engine asks a run state three kinds of question: how long a piece of
//! compute or a memory copy takes on a rank's node, when a message that a
//! rank starts to send is fully at its destination (and when the sender's
//! CPU and NIC are free again), and which protocol a message uses. The
//! per-rank and per-pair questions (everything but `transfer` and `reset`)
//! are pure within a run; they are asked of the run state and not of the
//! description because a model may answer them from what it knows about
//! the run (a plugin learns the rank count only when a run starts).
//!
//! Invariants a model must uphold (the engine relies on them):
//! - Every returned time is finite and `>=` the time passed in.
//! - For one `(src, dst)` pair, `Transfer::arrival` is nondecreasing in the
//!   order of `transfer` calls (MPI's non-overtaking rule needs envelopes of
//!   one pair to arrive in send order). The engine clamps defensively anyway.
//! - `transfer` calls arrive in nondecreasing `ready` order across the whole
//!   run (the engine executes communication in global time order), so a run
//!   state may keep per-NIC "busy until" state.
//! - Two run states started from one description with the same rank count
//!   and asked the same questions in the same order give the same answers:
//!   a run never sees another run's state.

/// What a transfer carries; models may charge protocol messages differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    /// A whole message sent eagerly (envelope and data together).
    Eager,
    /// Rendezvous request-to-send (envelope only).
    RendezvousRts,
    /// Rendezvous clear-to-send, from receiver back to sender.
    RendezvousCts,
    /// Rendezvous payload, after the handshake.
    RendezvousData,
}

/// How many channel sets [`Machine::channel_of`] may tell apart (the SMP
/// model has three: network, shared memory, between sockets).
pub const CHANNEL_SETS: usize = 4;

/// The timing of one transfer, in seconds of model time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Transfer {
    /// When the sending CPU has handed the last byte to the network and the
    /// send buffer may be reused (local completion of the send).
    pub cpu_free: f64,
    /// When the last byte is at the receiver's node (receive overhead not
    /// included).
    pub arrival: f64,
}

/// One run on a machine: the nodes and the network between them, with the
/// network's state for this run. Started by [`MachineDesc::start`].
pub trait Machine {
    /// Seconds that `nominal` seconds of reference compute take on `rank`'s node
    /// (ParJava's `//CPURate`).
    fn compute_seconds(&self, rank: u32, nominal: f64) -> f64;

    /// Seconds for a memory copy of `bytes` on `rank`'s node (ParJava's
    /// `//memcpy`): the program's own `copy(bytes: n)`.
    fn copy_seconds(&self, rank: u32, bytes: u64) -> f64;

    /// Seconds for a copy the MPI library makes of a call's buffers (a
    /// collective's own block, a message to self): buffers that a program
    /// passes to the same call again and again, so priced by their size,
    /// which decides the cache level that holds them. Default: as
    /// [`Machine::copy_seconds`].
    fn library_copy_seconds(&self, rank: u32, bytes: u64) -> f64 {
        self.copy_seconds(rank, bytes)
    }

    /// Seconds one read of the clock (`wtime()`, a benchmark's
    /// `MPI_Wtime`) costs the rank. A benchmark reads it on both sides of
    /// what it times, so each timed interval holds about one read beyond
    /// its work. Default 0 (free).
    fn timer_seconds(&self, rank: u32) -> f64 {
        let _ = rank;
        0.0
    }

    /// Messages of at least this many bytes use the rendezvous protocol.
    fn eager_limit(&self, src: u32, dst: u32) -> u64;

    /// Bytes of a rendezvous control message (RTS/CTS) between `src` and `dst`.
    fn control_bytes(&self, src: u32, dst: u32) -> u64;

    /// CPU time the sender spends in the call that starts a send (o_s).
    fn send_overhead(&self, src: u32, dst: u32, bytes: u64) -> f64;

    /// CPU time the receiver spends to complete a receive once the data is
    /// there (o_r). A function of its arguments only: the engine asks it
    /// when the receive's wait charges it, once per completed receive.
    fn recv_overhead(&self, src: u32, dst: u32, bytes: u64) -> f64;

    /// CPU time an eager send of `bytes` keeps its sender in the call
    /// beyond `o_s`: the copy of the message out of the user's buffer
    /// (LogGOPS's `O` per byte: Hoefler, Schneider, Lumsdaine, "LogGOPSim",
    /// HPDC 2010). The engine asks it only for eager sends (a rendezvous
    /// moves the data from the user's buffer); the message leaves after
    /// `o_s` all the same, so this delays the sender, not the arrival.
    /// Default 0 (LogGP: the call returns after `o_s`).
    fn send_copy(&self, src: u32, dst: u32, bytes: u64) -> f64 {
        let _ = (src, dst, bytes);
        0.0
    }

    /// Seconds from one rank's store to a flag in memory it shares with
    /// `dst` (a rank of its node) until `dst` sees it: one cache-line
    /// transfer between two cores, the step of the shared-memory
    /// collectives (MPICH's `release_gather`, Intel MPI's SHM-based
    /// algorithms; `coll::Op::Flag`). Default 0.1 µs, the order of a
    /// cache-to-cache transfer between two cores of one socket of a
    /// present-day server; models with a measured value override it.
    fn flag_latency(&self, src: u32, dst: u32) -> f64 {
        let _ = (src, dst);
        1e-7
    }

    /// Seconds `rank` spends creating, committing and freeing a derived
    /// datatype of `blocks` blocks (`MPI_Type_create_indexed_block`, as
    /// Bruck's alltoall does in each step). Default 0 (not modelled).
    fn datatype_seconds(&self, rank: u32, blocks: u64) -> f64 {
        let _ = (rank, blocks);
        0.0
    }

    /// Seconds `rank` spends packing or unpacking `blocks` blocks through a
    /// derived datatype. Default 0 (not modelled).
    fn pack_seconds(&self, rank: u32, blocks: u64) -> f64 {
        let _ = (rank, blocks);
        0.0
    }

    /// Seconds `rank` spends when its MPI library allocates a temporary
    /// buffer of `bytes` for a collective call (`coll::Op::Alloc`) and
    /// writes its bytes `touched` (offsets into the buffer): the page faults
    /// of the written memory that the process's allocator hands out fresh.
    /// The run remembers the allocator's state per rank (what it keeps, its
    /// thresholds), so the answer depends on the rank's earlier calls.
    /// Default 0 (not modelled: memory the library reuses costs nothing
    /// more).
    fn heap_alloc(&mut self, rank: u32, bytes: u64, touched: std::ops::Range<u64>) -> f64 {
        let _ = (rank, bytes, touched);
        0.0
    }

    /// `rank`'s library frees the temporary buffer of `bytes` it allocated
    /// last (`coll::Op::Free`). Takes no time; it changes what the
    /// allocator keeps for the next call. Default: nothing.
    fn heap_free(&mut self, rank: u32, bytes: u64) {
        let _ = (rank, bytes);
    }

    /// A transfer of `bytes` from `src` to `dst` that the sender starts at
    /// `ready`. Updates the model's NIC state.
    fn transfer(
        &mut self,
        src: u32,
        dst: u32,
        bytes: u64,
        kind: MessageKind,
        ready: f64,
    ) -> Transfer;

    /// [`Machine::transfer`] of data the sender's core has just written: a
    /// collective's library data (a temporary filled by a copy or a
    /// reduction, a block received and forwarded; `coll::Op::Send`'s
    /// `written`), where that costs more than the clean buffers that
    /// IMB's and OSU's ping-pongs send (on shared memory the receiver
    /// copies a rendezvous message straight from the sender's memory, and
    /// lines the sender's core holds modified come from its cache:
    /// VALIDATION.md section 4.8). Asked for eager messages and rendezvous
    /// data, never for control messages. Same contract as `transfer`, on
    /// the same timelines. Default: `transfer` (no difference modelled).
    fn transfer_written(
        &mut self,
        src: u32,
        dst: u32,
        bytes: u64,
        kind: MessageKind,
        ready: f64,
    ) -> Transfer {
        self.transfer(src, dst, bytes, kind, ready)
    }

    /// Seconds `rank` spends combining `bytes` bytes in a reduction
    /// (`reduce`, `allreduce`, `reduce_scatter`, `scan`). The default reads
    /// and writes the bytes once, like a memory copy; models with a measured
    /// rate (`reduce_op = "1 ns/B"`) override it.
    fn reduce_seconds(&self, rank: u32, bytes: u64) -> f64 {
        self.copy_seconds(rank, bytes)
    }

    /// Whether the MPI library progresses a rendezvous only inside MPI calls
    /// (true: no progress thread, the default of MPICH, Open MPI and Intel
    /// MPI), so that a rendezvous request matched while its receiver
    /// computes waits for the receiver's next MPI call before the
    /// clear-to-send; false: at any time (a progress thread, or hardware
    /// that answers it). Default: true, as those libraries run.
    fn progress_in_calls(&self) -> bool {
        true
    }

    /// Which algorithms run the collectives (the library's selection rules,
    /// per-collective overrides). Default: MPICH's rules.
    fn collectives(&self) -> crate::coll::CollConfig {
        crate::coll::CollConfig::default()
    }

    /// The node `rank` runs on (any numbering; ranks with the same number
    /// share a node). Node-aware collectives (MPICH 4's compositions) split
    /// communicators by it. Default: every rank on a node of its own.
    fn node_of(&self, rank: u32) -> u32 {
        rank
    }

    /// Which of the machine's channel sets (at most [`CHANNEL_SETS`], the
    /// model's own numbering) prices a message from `src` to `dst`. The
    /// engine keeps the largest message of each
    /// ([`SimReport::largest_message`](crate::engine::SimReport::largest_message)),
    /// so that a caller can say when a size went beyond what the channel
    /// was calibrated with. Default: one channel set, 0.
    fn channel_of(&self, _src: u32, _dst: u32) -> usize {
        0
    }

    /// The smallest size above which some channel set prices a message by
    /// extrapolation (beyond the table it was calibrated with): the engine
    /// asks [`Machine::channel_of`] and records the largest message only
    /// for messages above it, so that a machine without such a limit costs
    /// the event loop nothing. Default: `u64::MAX`, nothing recorded.
    fn extrapolated_above(&self) -> u64 {
        u64::MAX
    }

    /// Moves every time the run state holds (busy-until times, reserved
    /// intervals) `delta` seconds later, as if everything it has seen had
    /// happened `delta` later; returns whether it could. The engine's exact
    /// fast-forward shifts the whole simulation this way (`fastforward.rs`)
    /// and parks the ranks instead where a model cannot. Default: false (a
    /// model whose state the engine cannot see, such as a plugin).
    fn shift_time(&mut self, delta: f64) -> bool {
        let _ = delta;
        false
    }

    /// Clears all dynamic state (NIC busy times) for a new run of `ranks`
    /// ranks, as [`MachineDesc::start`] leaves it. The engine calls it
    /// before the first transfer of every run.
    fn reset(&mut self, ranks: u32);
}

/// A machine's description: the parsed machine file, immutable and
/// shareable between threads. Every run gets its own state from
/// [`start`](MachineDesc::start).
pub trait MachineDesc: Send + Sync {
    /// The state of one run (it may borrow the description).
    type Run<'a>: Machine
    where
        Self: 'a;

    /// A fresh run state for `ranks` ranks (all timelines idle, as after
    /// [`Machine::reset`]). A description may serialise its runs (e.g. a
    /// model plugin whose one model object holds the run's state): then
    /// `start` waits until the previous run state is dropped, so a thread
    /// must not hold two run states of such a description at once.
    fn start(&self, ranks: u32) -> Self::Run<'_>;
}
