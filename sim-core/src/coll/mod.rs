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
//!
//! What this module provides on top of that contract:
//! - [`schedule`]: the steps of one rank for a named [`Algorithm`]; the
//!   schedules of all ranks of one call match each other exactly (see
//!   `docs/collectives.md` and the tests in `tests.rs`).
//! - [`select`]: the algorithm a [`Library`] would pick for the call (or the
//!   one the machine file forces), reproducing MPICH's classic
//!   `MPIR_*_intra_auto` rules and Open MPI's `coll/tuned` fixed rules of
//!   4.0 (`openmpi4.rs`) and 5.0 (`openmpi.rs`, under 5.0's `coll/han`,
//!   `han.rs`), and Intel MPI's default tuning table (`intelmpi.rs`).
//! - [`algorithms_for`], [`Algorithm::name`], [`Algorithm::from_name`],
//!   [`Algorithm::resolve`] and [`Library::from_name`] for machine files.
//!
//! Sizes are in bytes and the algorithms split them with byte granularity.
//! Where a library compares an element count (`count < pof2`, `count >
//! comm_size`) the rules use [`CollCall::count`]: the bytes divided by the
//! call's element size (`elem:` in the language, 1 by default).

use crate::ir::CollKind;

pub use compact::{Compact, Cursor};
pub use layout::NodeLayout;

mod allgather;
mod allreduce;
mod alltoall;
mod barrier;
mod bcast;
mod compact;
mod gather;
mod han;
mod intelmpi;
mod layout;
mod mpich;
mod mpich4;
mod openmpi;
mod openmpi4;
mod reduce;
mod reduce_scatter;
mod scan;
mod shm;
mod topo;
mod util;

#[cfg(test)]
mod tests;

/// One point-to-point operation of a schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `written`: the data is the library's, written by this rank's core
    /// in the call (a temporary filled by a copy or a reduction, a block
    /// received and forwarded, the own block copied into the receive
    /// buffer first), priced by `Machine::transfer_written` where it moves
    /// by rendezvous; `false` for data sent straight from the user's send
    /// buffer (a bcast's or scatter's root, a gather's leaves, alltoall's
    /// blocks), which the call has not written. Per algorithm, from the
    /// libraries' sources: docs/collectives.md, "Data the library just
    /// wrote".
    Send {
        peer: u32,
        bytes: u64,
        written: bool,
    },
    /// `bytes` is the receive's capacity; [`ANY_SIZE`] where the size is
    /// only known from the message (v-variants).
    Recv { peer: u32, bytes: u64 },
    /// A store to a flag in memory shared with `peer` (a rank of the same
    /// node) that `peer` waits for with [`Op::Await`]: the release and
    /// gather signals of the shared-memory collectives (`shm.rs`). Costs the
    /// storing rank no time; `peer` sees it one cache-line transfer later
    /// (`Machine::flag_latency`). Not an MPI message: no overheads, no
    /// adapter, no matching beyond the order of one pair's flags.
    Flag { peer: u32 },
    /// Waits until `peer`'s next [`Op::Flag`] to this rank is visible.
    Await { peer: u32 },
    /// A copy of `bytes` by this rank's core (into or out of a shared
    /// cell), charged at the node's copy rate (`Machine::copy_seconds`)
    /// when the step reaches it: the operations after it in the step start
    /// when it ends.
    Copy { bytes: u64 },
    /// The rank's core creates, commits and later frees a derived datatype
    /// of `blocks` blocks (Bruck's alltoall: `MPI_Type_create_indexed_block`
    /// per step in MPICH and Open MPI), charged `Machine::datatype_seconds`
    /// when the step reaches it.
    Datatype { blocks: u32 },
    /// The rank's core packs or unpacks `blocks` blocks through a derived
    /// datatype (`Machine::pack_seconds`).
    Pack { blocks: u32 },
    /// The library allocates a temporary buffer of `bytes` for the call
    /// (MPICH's `MPIR_CHKLMEM_MALLOC`: a `malloc` at the algorithm's start),
    /// of which the algorithm writes the part `touch`; charged
    /// `Machine::heap_alloc`: the page faults of the written memory that the
    /// process's allocator hands out fresh (see `mpich_temporaries`).
    /// Placed first in a schedule's first step.
    Alloc { bytes: u64, touch: Touch },
    /// The temporary buffer of `bytes` allocated last and not yet freed is
    /// freed (`MPIR_CHKLMEM_FREEALL`, in reverse order of allocation):
    /// `Machine::heap_free`, no time. Placed last in a schedule's last
    /// step.
    Free { bytes: u64 },
}

/// Which part of a temporary buffer its algorithm writes during the call:
/// the pages that fault in if the allocator hands them out fresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Touch {
    /// The whole buffer (a copy of the send buffer, a whole vector
    /// received).
    All,
    /// The first half of the bytes (the half a recursive-halving rank keeps
    /// after its first exchange; later exchanges receive inside it).
    FirstHalf,
    /// The second half.
    SecondHalf,
    /// Nothing (a rank that only sends, or a tree's leaf).
    Nothing,
}

impl Touch {
    /// The written bytes of a buffer of `bytes`.
    pub fn range(self, bytes: u64) -> std::ops::Range<u64> {
        match self {
            Touch::All => 0..bytes,
            Touch::FirstHalf => 0..bytes / 2,
            Touch::SecondHalf => bytes / 2..bytes,
            Touch::Nothing => 0..0,
        }
    }
}

impl Op {
    /// The other rank of the operation (`None` for a copy).
    pub fn peer(self) -> Option<u32> {
        match self {
            Op::Send { peer, .. }
            | Op::Recv { peer, .. }
            | Op::Flag { peer }
            | Op::Await { peer } => Some(peer),
            Op::Copy { .. }
            | Op::Datatype { .. }
            | Op::Pack { .. }
            | Op::Alloc { .. }
            | Op::Free { .. } => None,
        }
    }

    /// The operation with its peer replaced (a copy is unchanged).
    pub fn with_peer(self, peer: u32) -> Op {
        match self {
            Op::Send { bytes, written, .. } => Op::Send {
                peer,
                bytes,
                written,
            },
            Op::Recv { bytes, .. } => Op::Recv { peer, bytes },
            Op::Flag { .. } => Op::Flag { peer },
            Op::Await { .. } => Op::Await { peer },
            op @ (Op::Copy { .. }
            | Op::Datatype { .. }
            | Op::Pack { .. }
            | Op::Alloc { .. }
            | Op::Free { .. }) => op,
        }
    }
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

impl Counts<'_> {
    /// The single byte count the selection rules compare: the uniform or
    /// own count, or the first rank's of per-rank counts.
    pub(crate) fn single(self) -> u64 {
        match self {
            Counts::Uniform(n) | Counts::Own(n) => n,
            Counts::PerRank(c) => c.first().copied().unwrap_or(0),
        }
    }

    /// The total bytes of a call as all ranks know it alike: a uniform
    /// count times `factor`, the sum of per-rank counts, or the own count.
    pub(crate) fn total(self, factor: u64) -> u64 {
        match self {
            Counts::Uniform(n) => n.saturating_mul(factor),
            Counts::PerRank(c) => c.iter().fold(0u64, |a, &x| a.saturating_add(x)),
            Counts::Own(n) => n,
        }
    }
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
    /// The size in bytes of one element of the call's datatype
    /// (`MPI_Type_size`; 1 for `MPI_BYTE`, 4 for `MPI_FLOAT` or `MPI_INT`, 8
    /// for `MPI_DOUBLE`), >= 1: the libraries compare element counts in some
    /// rules (MPICH's `count < pof2`, Open MPI's `count > comm_size`), which
    /// are `bytes / elem` ([`CollCall::count`]).
    pub elem: u64,
    /// Which ranks of the communicator share a node; `None` where the
    /// caller does not know (node-aware algorithms then take every rank to
    /// be on a node of its own). Only node-aware libraries read it
    /// ([`Library::node_aware`]).
    pub layout: Option<&'a NodeLayout>,
}

impl CollCall<'_> {
    /// The element count of `bytes` of this call's datatype.
    pub fn count(&self, bytes: u64) -> u64 {
        bytes / self.elem.max(1)
    }
}

/// Whose selection rules pick the algorithms: a library and the version
/// whose defaults are reproduced (`docs/collectives.md` cites the source of
/// each rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Library {
    /// MPICH 3.x: the classic `MPIR_<Coll>_intra_auto` CVAR thresholds
    /// (`src/mpi/coll/*`, MPICH 3.3) over a flat communicator.
    #[default]
    Mpich3,
    /// MPICH 4.0 with the CH4 device and no shared-memory collectives
    /// (a `ch4:ucx` build, as Debian ships it): the JSON selection trees
    /// (`maint/tuning/coll/{ch4,mpir}/generic.json`) and the node-aware
    /// CH4 compositions.
    Mpich4,
    /// Open MPI 4.0's `coll/tuned` fixed decision rules (thresholds and
    /// fitted models with segment sizes; also what 3.1 decides) over a flat
    /// communicator.
    OpenMpi4,
    /// Open MPI 5.0: the hierarchical `coll/han` component where it takes
    /// the call (node-aware), else `coll/tuned`'s fixed decision rules (the
    /// tables also of 4.1).
    OpenMpi5,
    /// Open MPI 4.1: `coll/tuned`'s fixed decision rules of 5.0 (the same
    /// tables, `openmpi.rs`) over a flat communicator. 4.1 ships `coll/han`
    /// with priority 0, so han never takes a call
    /// (`docs/sources/openmpi-5.0-han.md`).
    OpenMpi41,
    /// Intel MPI 2019 (Update 4's Skylake tuning table, `intelmpi.rs`).
    IntelMpi2019,
    /// Intel MPI 2021 (the generic tuning table of 2021.1-2021.13: the same
    /// bytes as 2019 Update 4's Skylake one, `intelmpi.rs`).
    IntelMpi2021,
}

impl Library {
    /// Every library, for listings and messages.
    pub const ALL: [Library; 7] = [
        Library::Mpich3,
        Library::Mpich4,
        Library::OpenMpi4,
        Library::OpenMpi41,
        Library::OpenMpi5,
        Library::IntelMpi2019,
        Library::IntelMpi2021,
    ];

    /// A machine file's `[collectives] library = "..."`: the canonical
    /// names of [`Library::name`], and the aliases `"mpich"` (MPICH 3,
    /// the classic rules), `"openmpi"` (also `"open-mpi"`, `"ompi"`:
    /// Open MPI 5) and `"openmpi-4.0"`, `"openmpi-3"`, `"openmpi-3.1"`
    /// (Open MPI 4: 3.1 has the same fixed rules), `"openmpi4.1"` (Open MPI
    /// 4.1), `"intelmpi"` (also
    /// `"impi"`: Intel MPI 2021). Case and `-`/`_` are not significant.
    pub fn from_name(name: &str) -> Option<Library> {
        let key = name.trim().to_ascii_lowercase().replace('_', "-");
        match key.as_str() {
            "mpich" | "mpich-3" | "mpich3" => Some(Library::Mpich3),
            "mpich-4" | "mpich4" | "mpich-4.0" => Some(Library::Mpich4),
            "openmpi-4" | "openmpi4" | "open-mpi-4" | "openmpi-4.0" | "openmpi-3" | "openmpi3"
            | "open-mpi-3" | "openmpi-3.1" => Some(Library::OpenMpi4),
            "openmpi-4.1" | "openmpi4.1" | "open-mpi-4.1" => Some(Library::OpenMpi41),
            "openmpi" | "open-mpi" | "ompi" | "openmpi-5" | "openmpi5" | "open-mpi-5" => {
                Some(Library::OpenMpi5)
            }
            "intelmpi-2019" | "impi-2019" | "intel-mpi-2019" => Some(Library::IntelMpi2019),
            "intelmpi" | "impi" | "intel-mpi" | "intelmpi-2021" | "impi-2021"
            | "intel-mpi-2021" => Some(Library::IntelMpi2021),
            _ => None,
        }
    }

    /// The canonical name (`"mpich-3"`, `"mpich-4"`, `"openmpi-4"`,
    /// `"openmpi-4.1"`, `"openmpi-5"`, `"intelmpi-2019"`, `"intelmpi-2021"`).
    pub fn name(self) -> &'static str {
        match self {
            Library::Mpich3 => "mpich-3",
            Library::Mpich4 => "mpich-4",
            Library::OpenMpi4 => "openmpi-4",
            Library::OpenMpi41 => "openmpi-4.1",
            Library::OpenMpi5 => "openmpi-5",
            Library::IntelMpi2019 => "intelmpi-2019",
            Library::IntelMpi2021 => "intelmpi-2021",
        }
    }

    /// The names a machine file accepts, for error messages.
    pub fn known() -> String {
        let mut names: Vec<String> = Library::ALL
            .iter()
            .map(|l| format!("\"{}\"", l.name()))
            .collect();
        names.push("\"mpich\" (= mpich-3)".into());
        names.push("\"openmpi\" (= openmpi-5)".into());
        names.push("\"openmpi-4.0\", \"openmpi-3.1\" (= openmpi-4)".into());
        names.push("\"intelmpi\" (= intelmpi-2021)".into());
        names.join(", ")
    }

    /// Whether the library's choices depend on which ranks share a node
    /// (then the engine passes [`CollCall::layout`]).
    pub fn node_aware(self) -> bool {
        matches!(
            self,
            Library::Mpich4 | Library::OpenMpi5 | Library::IntelMpi2019 | Library::IntelMpi2021
        )
    }

    /// What the library does with a call of `kind` that moves no data, when
    /// the machine does not say (`[collectives] zero_count`). MPICH 4.0.2
    /// runs MPI_Allreduce of count 0 like a call of count 1 (0.36-0.51 us
    /// against 0.44-0.60 us for count 1 on 2 ranks of one node, while its
    /// Reduce, Allgather, Alltoall, Gather and Scatter of count 0 take
    /// 0.006-0.026 us: `validation/dev-machine/zero-count.c`, VALIDATION.md
    /// section 4.3); every other case returns at once as far as measured.
    pub fn zero_count(self, kind: CollKind) -> ZeroCount {
        match (self, kind) {
            (Library::Mpich4, CollKind::Allreduce) => ZeroCount::Communicate,
            _ => ZeroCount::Return,
        }
    }

    /// Whether the library, as a default build runs it, has collectives
    /// through shared memory inside a node: Intel MPI (its tuning table's
    /// SHM-based leaves); not MPICH 4 as Debian builds it (`ch4:ucx`, no
    /// POSIX module: `docs/sources/mpich-4.0.2-collectives.md`), which a
    /// machine turns on for a `ch4:ofi` build (`[collectives]
    /// shared_memory = true`); never MPICH 3 or Open MPI (whose `coll/sm`
    /// never wins a call against `coll/tuned`).
    pub fn shared_memory(self) -> bool {
        matches!(self, Library::IntelMpi2019 | Library::IntelMpi2021)
    }

    /// Whether the library can run collectives through shared memory at
    /// all (MPICH 4 and Intel MPI).
    pub fn has_shared_memory(self) -> bool {
        matches!(
            self,
            Library::Mpich4 | Library::IntelMpi2019 | Library::IntelMpi2021
        )
    }

    /// Whether the library's algorithm names are Open MPI's (see
    /// [`Algorithm::resolve`]).
    pub fn is_open_mpi(self) -> bool {
        matches!(
            self,
            Library::OpenMpi4 | Library::OpenMpi41 | Library::OpenMpi5
        )
    }
}

/// A named algorithm. Where MPICH and Open MPI implement an algorithm of the
/// same name with a different message pattern, the Open MPI one is a
/// separate variant (`ompi_*`); [`Algorithm::resolve`] maps a library's own
/// name to the right variant. Segmented algorithms carry their segment size
/// in bytes (0: no segmentation, which is what Open MPI's fixed rules use).
/// `docs/collectives.md` describes each one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// Root exchanges with every rank directly (Open MPI `basic_linear`;
    /// for scan/exscan the chain of `coll/basic`). Sequential blocking
    /// operations where the library uses them.
    Linear,
    /// Linear with every operation posted at once (MPICH gatherv/scatterv,
    /// Open MPI `scatter_intra_linear_nb` and `coll/basic` gatherv).
    LinearNb,
    /// Open MPI `gather_intra_linear_sync` (zero-byte handshake first), with
    /// the size in bytes of the first of the two segments each rank sends
    /// (0: the whole block).
    LinearSync(u64),
    /// MPICH's binomial tree (`MPIR_*_intra_binomial`).
    BinomialTree,
    /// Open MPI's binomial tree (`ompi_coll_base_topo_build_bmtree` /
    /// in-order bmtree), with its own send order.
    OmpiBinomial,
    RecursiveDoubling,
    /// Recursive halving reduce-scatter (MPICH; copied into Open MPI).
    RecursiveHalving,
    /// MPICH's Rabenseifner (`reduce_scatter_allgather` /
    /// `reduce_scatter_gather`).
    Rabenseifner,
    /// Open MPI's Rabenseifner (`redscat_allgather` / `redscat_gather`).
    OmpiRabenseifner,
    Ring,
    /// Open MPI allgatherv ring (`allgatherv_intra_ring`): whole blocks,
    /// unlike MPICH's pipelined [`Algorithm::Ring`] for allgatherv.
    OmpiRing,
    /// Open MPI `allgather(v)_intra_two_procs` (2 ranks only): one sendrecv
    /// of the own block straight from the send buffer, the local copy
    /// after (coll_base_allgather.c, coll_base_allgatherv.c), where the
    /// ring sends from the receive buffer it copied the block into.
    TwoProcs,
    /// Open MPI `allreduce_intra_ring_segmented`, segment bytes (0: the
    /// plain ring).
    SegmentedRing(u64),
    Bruck,
    /// MPICH pairwise exchange (XOR partners on powers of two).
    Pairwise,
    /// Open MPI pairwise exchange (partners rank ± step).
    OmpiPairwise,
    /// MPICH alltoall "medium" algorithm: isend/irecv in blocks of
    /// `MPIR_CVAR_ALLTOALL_THROTTLE`.
    Scattered,
    /// MPICH barrier (and Open MPI's `bruck` barrier is the same pattern).
    Dissemination,
    /// Open MPI `barrier_intra_doublering`.
    DoubleRing,
    /// Open MPI `barrier_intra_tree`.
    Tree,
    /// Bcast as binomial scatter + ring allgather (MPICH
    /// `scatter_ring_allgather`, Open MPI `scatter_allgather_ring`).
    ScatterRingAllgather,
    /// Bcast as binomial scatter + recursive-doubling allgather (van de
    /// Geijn; MPICH `scatter_recursive_doubling_allgather`, Open MPI
    /// `scatter_allgather`).
    ScatterRecursiveDoublingAllgather,
    /// Open MPI pipeline (chain of fanout 1), segment bytes.
    Pipeline(u64),
    /// Open MPI chain of fanout 4, segment bytes.
    Chain(u64),
    /// Open MPI binary tree, segment bytes.
    BinaryTree(u64),
    /// Open MPI split binary tree bcast, segment bytes.
    SplitBinaryTree(u64),
    /// Open MPI's binomial bcast (bmtree) and reduce (in-order bmtree) with
    /// segments of the given bytes (`ompi_coll_base_bcast_intra_binomial`,
    /// `ompi_coll_base_reduce_intra_binomial`); 0 is the unsegmented
    /// [`Algorithm::OmpiBinomial`] bcast and [`Algorithm::BinomialTree`]
    /// reduce.
    SegmentedBinomial(u64),
    /// Open MPI k-nomial tree, radix 4.
    Knomial,
    /// Open MPI in-order binary tree reduce.
    InOrderBinary,
    /// Open MPI neighbor-exchange allgather(v).
    Neighbor,
    /// Open MPI butterfly reduce-scatter (Träff).
    Butterfly,
    /// Open MPI `nonoverlapping`: allreduce = reduce + bcast,
    /// reduce_scatter = reduce + scatterv (inner collectives chosen by the
    /// Open MPI rules).
    NonOverlapping,
    /// MPICH 4's CH4 composition alpha: the collective on each node's
    /// ranks, among the nodes' first ranks, and on each node again, each
    /// part by MPICH 4's own choice (`ch4_coll_impl.h`; barrier, bcast,
    /// reduce, allreduce, scan).
    Ch4Alpha,
    /// MPICH 4's CH4 composition beta (bcast from a root's node outwards,
    /// reduce by MPICH's smp reduce).
    Ch4Beta,
    /// Open MPI 5's `coll/han` default algorithm of the collective (barrier,
    /// bcast, reduce, allreduce, gather, scatter, allgather: intra-node and
    /// inter-node steps), with the segment size in bytes of the pipelined
    /// ones (bcast, reduce, allreduce; 0: one segment); see `han.rs`.
    Han(u64),
    /// MPICH's shared-memory `release_gather` (bcast, reduce, allreduce,
    /// barrier) on a communicator whose ranks share one node, with its
    /// trees; see `shm.rs`.
    ReleaseGather(ShmTrees),
    /// [`Algorithm::Ch4Alpha`] whose parts on each node run through shared
    /// memory ([`Algorithm::ReleaseGather`] for bcast, reduce, allreduce and
    /// barrier): MPICH 4 built with its POSIX module (`ch4:ofi`), Intel
    /// MPI's "topology aware SHM-based" algorithms.
    ShmAlpha(ShmTrees),
    /// [`Algorithm::Ch4Beta`] with its node parts through shared memory.
    ShmBeta(ShmTrees),
}

/// The shape of a tree of a shared-memory collective (MPICH's
/// `treeutil.c`; Intel MPI's SHM-based "flat", "Knomial", "Knary").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TreeKind {
    /// Local rank 0 is every other rank's parent.
    Flat,
    /// k-nomial of the radix.
    Knomial,
    /// k-ary of the radix (parent `(x - 1) / k`).
    Kary,
}

/// One tree of a shared-memory collective: its shape and radix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ShmTree {
    pub kind: TreeKind,
    pub radix: u16,
}

impl ShmTree {
    pub const fn kary(radix: u16) -> ShmTree {
        ShmTree {
            kind: TreeKind::Kary,
            radix,
        }
    }

    fn text(self) -> String {
        match self.kind {
            TreeKind::Flat => "flat".into(),
            TreeKind::Knomial => format!("knomial{}", self.radix),
            TreeKind::Kary => format!("kary{}", self.radix),
        }
    }

    fn parse(t: &str) -> Option<ShmTree> {
        let t = t.trim();
        if t == "flat" {
            return Some(ShmTree {
                kind: TreeKind::Flat,
                radix: 0,
            });
        }
        let (kind, digits) = if let Some(d) = t.strip_prefix("knomial") {
            (TreeKind::Knomial, d)
        } else if let Some(d) = t.strip_prefix("kary") {
            (TreeKind::Kary, d)
        } else {
            return None;
        };
        let radix: u16 = digits.parse().ok()?;
        (radix >= 1 && (kind != TreeKind::Knomial || radix >= 2)).then_some(ShmTree { kind, radix })
    }
}

/// The trees of the shared-memory collectives: `reduce` gathers reduce
/// and allreduce, `bcast` releases bcast, allreduce and barrier and
/// gathers bcast and barrier (`shm.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ShmTrees {
    pub reduce: ShmTree,
    pub bcast: ShmTree,
}

impl ShmTrees {
    /// MPICH 4.0's defaults: `MPIR_CVAR_REDUCE_INTRANODE_TREE_KVAL` 4 and
    /// `MPIR_CVAR_BCAST_INTRANODE_TREE_KVAL` 64, both k-ary
    /// (`release_gather.c` 20-104).
    pub const MPICH: ShmTrees = ShmTrees {
        reduce: ShmTree::kary(4),
        bcast: ShmTree::kary(64),
    };

    /// Both steps on one tree (Intel MPI's SHM-based leaves name one).
    pub const fn both(t: ShmTree) -> ShmTrees {
        ShmTrees {
            reduce: t,
            bcast: t,
        }
    }
}

/// Every algorithm with its default parameters, in a fixed order.
const ALL_ALGORITHMS: [Algorithm; 38] = [
    Algorithm::Linear,
    Algorithm::LinearNb,
    Algorithm::LinearSync(0),
    Algorithm::BinomialTree,
    Algorithm::OmpiBinomial,
    Algorithm::RecursiveDoubling,
    Algorithm::RecursiveHalving,
    Algorithm::Rabenseifner,
    Algorithm::OmpiRabenseifner,
    Algorithm::Ring,
    Algorithm::OmpiRing,
    Algorithm::TwoProcs,
    Algorithm::SegmentedRing(0),
    Algorithm::Bruck,
    Algorithm::Pairwise,
    Algorithm::OmpiPairwise,
    Algorithm::Scattered,
    Algorithm::Dissemination,
    Algorithm::DoubleRing,
    Algorithm::Tree,
    Algorithm::ScatterRingAllgather,
    Algorithm::ScatterRecursiveDoublingAllgather,
    Algorithm::Pipeline(0),
    Algorithm::Chain(0),
    Algorithm::BinaryTree(0),
    Algorithm::SplitBinaryTree(0),
    Algorithm::SegmentedBinomial(0),
    Algorithm::Knomial,
    Algorithm::InOrderBinary,
    Algorithm::Neighbor,
    Algorithm::Butterfly,
    Algorithm::NonOverlapping,
    Algorithm::Ch4Alpha,
    Algorithm::Ch4Beta,
    Algorithm::Han(0),
    Algorithm::ReleaseGather(ShmTrees::MPICH),
    Algorithm::ShmAlpha(ShmTrees::MPICH),
    Algorithm::ShmBeta(ShmTrees::MPICH),
];

impl Algorithm {
    /// The algorithm's name (without a segment size).
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Linear => "linear",
            Algorithm::LinearNb => "linear_nb",
            Algorithm::LinearSync(_) => "linear_sync",
            Algorithm::BinomialTree => "binomial",
            Algorithm::OmpiBinomial => "ompi_binomial",
            Algorithm::RecursiveDoubling => "recursive_doubling",
            Algorithm::RecursiveHalving => "recursive_halving",
            Algorithm::Rabenseifner => "rabenseifner",
            Algorithm::OmpiRabenseifner => "ompi_rabenseifner",
            Algorithm::Ring => "ring",
            Algorithm::OmpiRing => "ompi_ring",
            Algorithm::TwoProcs => "two_procs",
            Algorithm::SegmentedRing(_) => "segmented_ring",
            Algorithm::Bruck => "bruck",
            Algorithm::Pairwise => "pairwise",
            Algorithm::OmpiPairwise => "ompi_pairwise",
            Algorithm::Scattered => "scattered",
            Algorithm::Dissemination => "dissemination",
            Algorithm::DoubleRing => "double_ring",
            Algorithm::Tree => "tree",
            Algorithm::ScatterRingAllgather => "scatter_ring_allgather",
            Algorithm::ScatterRecursiveDoublingAllgather => "scatter_recursive_doubling_allgather",
            Algorithm::Pipeline(_) => "pipeline",
            Algorithm::Chain(_) => "chain",
            Algorithm::BinaryTree(_) => "binary_tree",
            Algorithm::SplitBinaryTree(_) => "split_binary_tree",
            Algorithm::SegmentedBinomial(_) => "segmented_binomial",
            Algorithm::Knomial => "knomial",
            Algorithm::InOrderBinary => "in_order_binary",
            Algorithm::Neighbor => "neighbor",
            Algorithm::Butterfly => "butterfly",
            Algorithm::NonOverlapping => "nonoverlapping",
            Algorithm::Ch4Alpha => "ch4_alpha",
            Algorithm::Ch4Beta => "ch4_beta",
            Algorithm::Han(_) => "han",
            Algorithm::ReleaseGather(_) => "release_gather",
            Algorithm::ShmAlpha(_) => "shm_alpha",
            Algorithm::ShmBeta(_) => "shm_beta",
        }
    }

    /// The segment size of a segmented algorithm (0: unsegmented; for
    /// `linear_sync` the first segment, 0: the whole block), `None` for the
    /// others.
    pub fn segment(self) -> Option<u64> {
        match self {
            Algorithm::Pipeline(s)
            | Algorithm::Chain(s)
            | Algorithm::BinaryTree(s)
            | Algorithm::SplitBinaryTree(s)
            | Algorithm::SegmentedBinomial(s)
            | Algorithm::SegmentedRing(s)
            | Algorithm::LinearSync(s)
            | Algorithm::Han(s) => Some(s),
            _ => None,
        }
    }

    /// The shared-memory trees of the algorithms that have them.
    pub fn trees(self) -> Option<ShmTrees> {
        match self {
            Algorithm::ReleaseGather(t) | Algorithm::ShmAlpha(t) | Algorithm::ShmBeta(t) => Some(t),
            _ => None,
        }
    }

    /// The algorithm with segment size `s`, if it takes one.
    fn with_segment(self, s: u64) -> Option<Algorithm> {
        Some(match self {
            Algorithm::Pipeline(_) => Algorithm::Pipeline(s),
            Algorithm::Chain(_) => Algorithm::Chain(s),
            Algorithm::BinaryTree(_) => Algorithm::BinaryTree(s),
            Algorithm::SplitBinaryTree(_) => Algorithm::SplitBinaryTree(s),
            Algorithm::SegmentedBinomial(_) => Algorithm::SegmentedBinomial(s),
            Algorithm::SegmentedRing(_) => Algorithm::SegmentedRing(s),
            Algorithm::LinearSync(_) => Algorithm::LinearSync(s),
            Algorithm::Han(_) => Algorithm::Han(s),
            _ => return None,
        })
    }

    /// The algorithm of a name: [`Algorithm::name`], a few of the libraries'
    /// own spellings (`brucks`, `basic_linear`, `scatter_allgather`,
    /// `reduce_scatter_allgather`, `modified_bruck`, `neighbor_exchange`,
    /// `reduce_bcast`, ...), and for the segmented ones an optional segment
    /// size in bytes: `"pipeline:65536"`. Case-insensitive.
    pub fn from_name(name: &str) -> Option<Algorithm> {
        let name = name.trim().to_ascii_lowercase();
        // The shared-memory algorithms take trees: `release_gather:kary4/kary64`
        // (the reduce tree, then the bcast tree; one tree for both).
        if let Some((b, t)) = name.split_once(':')
            && let Some(alg) = Algorithm::from_name(b)
            && alg.trees().is_some()
        {
            let trees = match t.split_once('/') {
                Some((r, b)) => ShmTrees {
                    reduce: ShmTree::parse(r)?,
                    bcast: ShmTree::parse(b)?,
                },
                None => ShmTrees::both(ShmTree::parse(t)?),
            };
            return Some(alg.with_trees(trees));
        }
        let (base, segment) = match name.split_once(':') {
            Some((b, s)) => (b.trim().to_string(), Some(s.trim().parse::<u64>().ok()?)),
            None => (name, None),
        };
        let alg = match base.as_str() {
            "linear" | "basic_linear" | "default" => Algorithm::Linear,
            "linear_nb" => Algorithm::LinearNb,
            "linear_sync" => Algorithm::LinearSync(0),
            "binomial" | "binomial_tree" => Algorithm::BinomialTree,
            "ompi_binomial" => Algorithm::OmpiBinomial,
            "recursive_doubling" => Algorithm::RecursiveDoubling,
            "recursive_halving" => Algorithm::RecursiveHalving,
            "rabenseifner" | "reduce_scatter_allgather" | "reduce_scatter_gather" => {
                Algorithm::Rabenseifner
            }
            "ompi_rabenseifner" | "redscat_allgather" | "redscat_gather" => {
                Algorithm::OmpiRabenseifner
            }
            "ring" => Algorithm::Ring,
            "ompi_ring" => Algorithm::OmpiRing,
            "two_procs" | "two_proc" => Algorithm::TwoProcs,
            "segmented_ring" | "ring_segmented" => Algorithm::SegmentedRing(0),
            "bruck" | "brucks" | "modified_bruck" => Algorithm::Bruck,
            "pairwise" | "pairwise_exchange" => Algorithm::Pairwise,
            "ompi_pairwise" => Algorithm::OmpiPairwise,
            "scattered" | "medium" => Algorithm::Scattered,
            "dissemination" => Algorithm::Dissemination,
            "double_ring" | "doublering" => Algorithm::DoubleRing,
            "tree" => Algorithm::Tree,
            "scatter_ring_allgather" | "scatter_allgather_ring" => Algorithm::ScatterRingAllgather,
            "scatter_recursive_doubling_allgather" | "scatter_allgather" => {
                Algorithm::ScatterRecursiveDoublingAllgather
            }
            "pipeline" => Algorithm::Pipeline(0),
            "chain" => Algorithm::Chain(0),
            "binary_tree" | "binary" => Algorithm::BinaryTree(0),
            "split_binary_tree" | "split_bintree" => Algorithm::SplitBinaryTree(0),
            "segmented_binomial" => Algorithm::SegmentedBinomial(0),
            "knomial" => Algorithm::Knomial,
            "in_order_binary" | "in-order_binary" => Algorithm::InOrderBinary,
            "neighbor" | "neighbor_exchange" | "neighborexchange" => Algorithm::Neighbor,
            "butterfly" => Algorithm::Butterfly,
            "nonoverlapping" | "non-overlapping" | "reduce_bcast" => Algorithm::NonOverlapping,
            "ch4_alpha" | "composition_alpha" => Algorithm::Ch4Alpha,
            "ch4_beta" | "composition_beta" => Algorithm::Ch4Beta,
            "han" | "coll_han" => Algorithm::Han(0),
            "release_gather" => Algorithm::ReleaseGather(ShmTrees::MPICH),
            "shm_alpha" => Algorithm::ShmAlpha(ShmTrees::MPICH),
            "shm_beta" => Algorithm::ShmBeta(ShmTrees::MPICH),
            _ => return None,
        };
        match segment {
            None => Some(alg),
            Some(s) => alg.with_segment(s),
        }
    }

    /// A machine file's `kind = "name"` under `library`: like
    /// [`Algorithm::from_name`], but a name both libraries use maps to that
    /// library's variant (`"binomial"` is [`Algorithm::OmpiBinomial`] for an
    /// Open MPI bcast or scatter, `"pairwise"` is [`Algorithm::OmpiPairwise`]
    /// for an Open MPI alltoall(v), `"rabenseifner"` is
    /// [`Algorithm::OmpiRabenseifner`] for an Open MPI reduce or allreduce,
    /// `"ring"` is [`Algorithm::OmpiRing`] for an Open MPI allgatherv).
    /// Errors name the algorithms the collective has.
    pub fn resolve(library: Library, kind: CollKind, name: &str) -> Result<Algorithm, String> {
        let mut alg = Algorithm::from_name(name).ok_or_else(|| {
            format!(
                "unknown algorithm \"{name}\" for {} (known: {})",
                kind.name(),
                names_of(kind)
            )
        })?;
        if library.is_open_mpi() {
            alg = match (kind, alg) {
                (CollKind::Bcast | CollKind::Scatter, Algorithm::BinomialTree) => {
                    Algorithm::OmpiBinomial
                }
                (CollKind::Alltoall | CollKind::Alltoallv, Algorithm::Pairwise) => {
                    Algorithm::OmpiPairwise
                }
                (CollKind::Reduce | CollKind::Allreduce, Algorithm::Rabenseifner) => {
                    Algorithm::OmpiRabenseifner
                }
                (CollKind::Allgatherv, Algorithm::Ring) => Algorithm::OmpiRing,
                (_, a) => a,
            };
        }
        // han segments only bcast, reduce and allreduce.
        if matches!(alg, Algorithm::Han(_)) && !han::segmented(kind) {
            alg = Algorithm::Han(0);
        }
        if supports(kind, alg) {
            Ok(alg)
        } else {
            Err(format!(
                "{} has no algorithm \"{}\" (known: {})",
                kind.name(),
                alg.name(),
                names_of(kind)
            ))
        }
    }
}

impl Algorithm {
    /// The algorithm with the shared-memory trees `t`, if it has trees.
    fn with_trees(self, t: ShmTrees) -> Algorithm {
        match self {
            Algorithm::ReleaseGather(_) => Algorithm::ReleaseGather(t),
            Algorithm::ShmAlpha(_) => Algorithm::ShmAlpha(t),
            Algorithm::ShmBeta(_) => Algorithm::ShmBeta(t),
            a => a,
        }
    }
}

impl std::fmt::Display for Algorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(t) = self.trees() {
            return if t == ShmTrees::MPICH {
                f.write_str(self.name())
            } else if t.reduce == t.bcast {
                write!(f, "{}:{}", self.name(), t.reduce.text())
            } else {
                write!(f, "{}:{}/{}", self.name(), t.reduce.text(), t.bcast.text())
            };
        }
        match self.segment() {
            Some(s) if s > 0 => write!(f, "{}:{s}", self.name()),
            _ => f.write_str(self.name()),
        }
    }
}

/// The machine's choice of collective algorithms, and what a call costs
/// beyond its messages.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CollConfig {
    pub library: Library,
    /// Algorithms forced per collective (`alltoall = "pairwise"`).
    pub forced: Vec<(CollKind, Algorithm)>,
    /// What a call that moves no data does, for every collective; `None`:
    /// the library's rule per collective ([`Library::zero_count`]).
    pub zero_count: Option<ZeroCount>,
    /// Seconds of the calling rank's CPU that a collective call costs
    /// before its first message, beyond the messages' own overheads: the
    /// library's entry (argument checks, the selection, the schedule, its
    /// requests). Charged once per call that communicates (a call on one
    /// rank, or a zero-count call that returns at once, is a shortcut in
    /// the libraries: MPICH 4.0.2 takes 4-80 ns for `MPI_COMM_SELF`
    /// calls, VALIDATION.md section 4.1). Invariant: finite and >= 0.
    /// The default of every kind not in `call_overhead_by_kind`, and of
    /// `comm_split`/`comm_dup`.
    pub call_overhead: f64,
    /// Per collective, a call overhead that replaces `call_overhead` (the
    /// library's path differs per call: MPICH 4.0.2's 2-rank calls of 4
    /// bytes cost 0.05-0.45 µs beyond their messages, VALIDATION.md 4.18
    /// and 4.19). At most one entry per kind. Invariant: finite and >= 0.
    pub call_overhead_by_kind: Vec<(CollKind, f64)>,
    /// Whether the library runs its collectives inside a node through
    /// shared memory (MPICH's `release_gather`, Intel MPI's SHM-based
    /// algorithms: `shm.rs`) where its rules say so; `None`: the
    /// library's default ([`Library::shared_memory`]).
    pub shared_memory: Option<bool>,
    /// Whether the schedules carry the library's temporary buffers
    /// (`Op::Alloc`, `Op::Free`): set by a machine that prices them
    /// (`Machine::heap_alloc`), so that the others build and run no such
    /// operations. Default false.
    pub temporaries: bool,
}

/// What a collective call that moves no data does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ZeroCount {
    /// Returns at once (MPICH, Open MPI, except [`Library::zero_count`]'s
    /// cases).
    #[default]
    Return,
    /// Runs the algorithm's message pattern with empty messages.
    Communicate,
    /// Synchronises like a barrier (the barrier's algorithm). ScaMPI 2.1 on
    /// EKSS-1: its 0-byte Alltoall times (8.2, 16.4, 27.0, 35.7 µs on 2, 4,
    /// 8, 16 nodes) are its Barrier times (7.6, 15.7, 26.3, 34.7 µs).
    Barrier,
}

impl ZeroCount {
    pub fn name(self) -> &'static str {
        match self {
            ZeroCount::Return => "return",
            ZeroCount::Communicate => "communicate",
            ZeroCount::Barrier => "barrier",
        }
    }
}

impl CollConfig {
    /// What a call of `kind` that moves no data does on this machine.
    pub fn zero_count_for(&self, kind: CollKind) -> ZeroCount {
        self.zero_count
            .unwrap_or_else(|| self.library.zero_count(kind))
    }

    /// Whether this machine's library runs its collectives inside a node
    /// through shared memory (`shared_memory`, else the library's default;
    /// never for a library without such algorithms).
    pub fn shared_memory_on(&self) -> bool {
        self.shared_memory.unwrap_or(self.library.shared_memory())
            && self.library.has_shared_memory()
    }

    /// The configuration of `library` with nothing forced.
    pub fn new(library: Library) -> CollConfig {
        CollConfig {
            library,
            forced: Vec::new(),
            zero_count: None,
            call_overhead: 0.0,
            call_overhead_by_kind: Vec::new(),
            shared_memory: None,
            temporaries: false,
        }
    }

    /// Seconds a call of `kind` costs beyond its messages: its own entry in
    /// `call_overhead_by_kind`, else `call_overhead`.
    pub fn call_overhead_for(&self, kind: CollKind) -> f64 {
        self.call_overhead_by_kind
            .iter()
            .find(|(k, _)| *k == kind)
            .map_or(self.call_overhead, |(_, t)| *t)
    }

    /// Sets `kind`'s own call overhead (replacing an earlier one).
    pub fn set_call_overhead(&mut self, kind: CollKind, seconds: f64) {
        self.call_overhead_by_kind.retain(|(k, _)| *k != kind);
        self.call_overhead_by_kind.push((kind, seconds));
    }

    /// Forces `alg` for `kind` (replacing an earlier choice for `kind`).
    pub fn force(&mut self, kind: CollKind, alg: Algorithm) -> Result<(), String> {
        if !supports(kind, alg) {
            return Err(format!(
                "{} has no algorithm \"{}\" (known: {})",
                kind.name(),
                alg.name(),
                names_of(kind)
            ));
        }
        self.forced.retain(|(k, _)| *k != kind);
        self.forced.push((kind, alg));
        Ok(())
    }
}

/// The algorithms implemented for `kind` (segmented ones with segment 0).
pub fn algorithms_for(kind: CollKind) -> &'static [Algorithm] {
    use Algorithm as A;
    match kind {
        CollKind::Barrier => &[
            A::Dissemination,
            A::Bruck,
            A::RecursiveDoubling,
            A::Linear,
            A::DoubleRing,
            A::Tree,
            A::Ch4Alpha,
            A::Han(0),
            A::ReleaseGather(ShmTrees::MPICH),
            A::ShmAlpha(ShmTrees::MPICH),
        ],
        CollKind::Bcast => &[
            A::BinomialTree,
            A::OmpiBinomial,
            A::ScatterRingAllgather,
            A::ScatterRecursiveDoublingAllgather,
            A::Linear,
            A::Pipeline(0),
            A::Chain(0),
            A::BinaryTree(0),
            A::SplitBinaryTree(0),
            A::SegmentedBinomial(0),
            A::Knomial,
            A::Ch4Alpha,
            A::Ch4Beta,
            A::Han(0),
            A::ReleaseGather(ShmTrees::MPICH),
            A::ShmAlpha(ShmTrees::MPICH),
            A::ShmBeta(ShmTrees::MPICH),
        ],
        CollKind::Reduce => &[
            A::BinomialTree,
            A::Rabenseifner,
            A::OmpiRabenseifner,
            A::Linear,
            A::Pipeline(0),
            A::Chain(0),
            A::BinaryTree(0),
            A::SegmentedBinomial(0),
            A::InOrderBinary,
            A::Ch4Alpha,
            A::Ch4Beta,
            A::Han(0),
            A::ReleaseGather(ShmTrees::MPICH),
            A::ShmAlpha(ShmTrees::MPICH),
            A::ShmBeta(ShmTrees::MPICH),
        ],
        CollKind::Allreduce => &[
            A::RecursiveDoubling,
            A::Rabenseifner,
            A::OmpiRabenseifner,
            A::Ring,
            A::SegmentedRing(0),
            A::NonOverlapping,
            A::Linear,
            A::Ch4Alpha,
            A::Han(0),
            A::ReleaseGather(ShmTrees::MPICH),
            A::ShmAlpha(ShmTrees::MPICH),
        ],
        CollKind::Gather => &[A::BinomialTree, A::Linear, A::LinearSync(0), A::Han(0)],
        CollKind::Scatter => &[
            A::BinomialTree,
            A::OmpiBinomial,
            A::Linear,
            A::LinearNb,
            A::Han(0),
        ],
        CollKind::Gatherv | CollKind::Scatterv => &[A::LinearNb, A::Linear],
        CollKind::Allgather => &[
            A::RecursiveDoubling,
            A::Bruck,
            A::Ring,
            A::Neighbor,
            A::TwoProcs,
            A::Linear,
            A::Han(0),
        ],
        CollKind::Allgatherv => &[
            A::RecursiveDoubling,
            A::Bruck,
            A::Ring,
            A::OmpiRing,
            A::Neighbor,
            A::TwoProcs,
            A::Linear,
        ],
        CollKind::Alltoall => &[
            A::Bruck,
            A::Scattered,
            A::Pairwise,
            A::OmpiPairwise,
            A::Linear,
        ],
        CollKind::Alltoallv => &[A::Scattered, A::Pairwise, A::OmpiPairwise, A::Linear],
        CollKind::ReduceScatter => &[
            A::RecursiveHalving,
            A::Pairwise,
            A::Ring,
            A::Butterfly,
            A::NonOverlapping,
        ],
        CollKind::Scan => &[
            A::RecursiveDoubling,
            A::Linear,
            A::Ch4Alpha,
            A::ShmAlpha(ShmTrees::MPICH),
        ],
        CollKind::Exscan => &[A::RecursiveDoubling, A::Linear],
    }
}

/// Whether `alg` (with any segment size) is implemented for `kind`.
fn supports(kind: CollKind, alg: Algorithm) -> bool {
    let base = base_of(alg);
    algorithms_for(kind).contains(&base)
}

/// `alg` with its parameters reset (segment 0, MPICH's trees).
fn base_of(alg: Algorithm) -> Algorithm {
    alg.with_segment(0)
        .unwrap_or(alg)
        .with_trees(ShmTrees::MPICH)
}

fn names_of(kind: CollKind) -> String {
    algorithms_for(kind)
        .iter()
        .map(|a| a.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every algorithm (default parameters), for tools listing them.
pub fn all_algorithms() -> &'static [Algorithm] {
    &ALL_ALGORITHMS
}

/// This rank's steps of `call` under `alg`, with the inner collectives of
/// Open MPI's composite algorithms chosen by Open MPI 5's rules (see
/// [`schedule_in`]).
///
/// Errors: an invalid call (size 0, rank or root out of range, counts of the
/// wrong shape or too large) or an algorithm that `call.kind` does not have.
/// A communicator of one rank, or a zero-byte call, has no steps.
pub fn schedule(alg: Algorithm, call: &CollCall<'_>) -> Result<Vec<Step>, String> {
    schedule_in(Library::OpenMpi5, alg, call)
}

/// [`schedule`] under `library`: Open MPI's algorithms made of other
/// collectives (`nonoverlapping` allreduce and reduce_scatter, `linear`
/// allgather(v)) call the communicator's reduce, bcast and gather, which
/// under an Open MPI library follow that library's fixed rules (Open MPI 5's
/// under any other library).
pub fn schedule_in(
    library: Library,
    alg: Algorithm,
    call: &CollCall<'_>,
) -> Result<Vec<Step>, String> {
    schedule_opts(library, true, alg, call)
}

/// [`schedule_in`], with the library's temporary buffers in the schedule
/// (`Op::Alloc`, `Op::Free`) only when `temporaries` (a machine that
/// prices them: [`CollConfig::temporaries`]).
pub fn schedule_opts(
    library: Library,
    temporaries: bool,
    alg: Algorithm,
    call: &CollCall<'_>,
) -> Result<Vec<Step>, String> {
    let mut ctx = util::Ctx::new(call)?;
    ctx.library = library;
    ctx.temporaries = temporaries;
    if !supports(call.kind, alg) {
        return Err(format!(
            "{} has no algorithm \"{}\" (known: {})",
            call.kind.name(),
            alg.name(),
            names_of(call.kind)
        ));
    }
    if ctx.size == 1 || ctx.is_empty() {
        return Ok(Vec::new());
    }
    if matches!(
        alg,
        Algorithm::Ch4Alpha | Algorithm::Ch4Beta | Algorithm::ShmAlpha(_) | Algorithm::ShmBeta(_)
    ) {
        let mut steps = mpich4::composition(alg, &ctx)?;
        util::written_after_receipt(&mut steps);
        return Ok(steps);
    }
    if let Algorithm::ReleaseGather(trees) = alg {
        return shm::schedule(
            call.kind,
            ctx.rank,
            ctx.size,
            ctx.root,
            ctx.counts.single(),
            trees,
        );
    }
    if let Algorithm::Han(segsize) = alg {
        let mut steps = han::composition(segsize, &ctx)?;
        util::written_after_receipt(&mut steps);
        return Ok(steps);
    }
    let mut steps = match call.kind {
        CollKind::Barrier => barrier::schedule(alg, &ctx),
        CollKind::Bcast => bcast::schedule(alg, &ctx),
        CollKind::Reduce => reduce::schedule(alg, &ctx),
        CollKind::Allreduce => allreduce::schedule(alg, &ctx),
        CollKind::Gather | CollKind::Gatherv | CollKind::Scatter | CollKind::Scatterv => {
            gather::schedule(alg, &ctx)
        }
        CollKind::Allgather | CollKind::Allgatherv => allgather::schedule(alg, &ctx),
        CollKind::Alltoall | CollKind::Alltoallv => alltoall::schedule(alg, &ctx),
        CollKind::ReduceScatter => reduce_scatter::schedule(alg, &ctx),
        CollKind::Scan | CollKind::Exscan => scan::schedule(alg, &ctx),
    }?;
    if temporaries && matches!(library, Library::Mpich3 | Library::Mpich4) {
        with_temporaries(&mut steps, mpich_temporaries(alg, &ctx).as_slice());
    }
    Ok(steps)
}

/// Whether `library`'s algorithm `alg` for `kind` sends the rank's own
/// block to itself as a message (then the schedule has that message and the
/// call makes no local copy of it): MPICH's scattered alltoall(v)
/// (`alltoall_intra_scattered.c`, its loop from `i = 0`), and Open MPI
/// 5.0.3+'s pairwise alltoallv (`coll_base_alltoallv.c` v5.0.9 lines
/// 224-258, step 0: an `irecv` and a `send` to the rank itself). Every
/// other algorithm copies the own block locally.
pub fn own_block_is_a_message(library: Library, alg: Algorithm, kind: CollKind) -> bool {
    match alg {
        Algorithm::Scattered => true,
        Algorithm::OmpiPairwise => kind == CollKind::Alltoallv && library == Library::OpenMpi5,
        _ => false,
    }
}

/// The temporary buffers (bytes each, in the order allocated) that MPICH's
/// algorithm `alg` allocates on this rank for the call and frees at its end,
/// with a contiguous predefined datatype, a commutative operation and no
/// `MPI_IN_PLACE` (tag v4.0.2, `src/mpi/coll/`; the same buffers since
/// MPICH 3.3, whose `MPIR_CHKLMEM_MALLOC`s these are):
/// - reduce, binomial (`reduce_intra_binomial.c` lines 37-46) and
///   Rabenseifner (`reduce_intra_reduce_scatter_gather.c` lines 62-71):
///   `tmp_buf` of the vector, and at a rank other than the root a
///   `recvbuf` of the vector ("my recvbuf may not be valid");
/// - allreduce, recursive doubling (`allreduce_intra_recursive_doubling.c`
///   line 44) and Rabenseifner (`allreduce_intra_reduce_scatter_allgather.c`
///   line 64): `tmp_buf` of the vector;
/// - reduce_scatter, recursive halving
///   (`reduce_scatter_intra_recursive_halving.c` lines 83-91): `tmp_recvbuf`
///   and `tmp_results` of the whole vector; pairwise
///   (`reduce_scatter_intra_pairwise.c` line 67): `tmp_recvbuf` of this
///   rank's block plus one byte;
/// - allgatherv by recursive doubling, allgather(v) and alltoall by Bruck:
///   one `tmp_buf` of the whole result.
///
/// Which part of each the algorithm writes is [`Touch`]'s. The arrays of
/// counts and displacements some of them allocate too (a few ints per rank)
/// are left out, and so are the algorithms that allocate nothing of the
/// vector for such a call (bcast; allgather by recursive doubling or ring;
/// alltoall scattered or pairwise; the v-variants' linear algorithms). Not
/// listed yet: binomial gather and scatter at inner tree ranks (a buffer of
/// the subtree's blocks, of which a rank writes what its subtree sends).
fn mpich_temporaries(alg: Algorithm, ctx: &util::Ctx<'_>) -> Temps {
    let (rank, size) = (ctx.rank, ctx.size);
    let pof2 = util::pof2_floor(size);
    let rem = size - pof2;
    // The half of the vector a recursive-halving rank keeps after its first
    // exchange (with `newrank ^ first_mask`), or all of it for a rank that
    // also takes an excluded rank's whole vector first (`received_all`), or
    // nothing for an excluded rank (`newrank == -1`).
    let halving = |excluded: bool, received_all: bool, lower: bool| {
        if excluded {
            Touch::Nothing
        } else if received_all {
            Touch::All
        } else if lower {
            Touch::FirstHalf
        } else {
            Touch::SecondHalf
        }
    };
    match (ctx.kind, alg) {
        // MPIR_Reduce_intra_binomial: a rank receives children's whole
        // vectors into `tmp_buf` when its relative rank is even and has a
        // successor (mask 1: `source = relrank | 1 < size`).
        (CollKind::Reduce, Algorithm::BinomialTree) => {
            let rel = ctx.rel();
            let tmp = if rel.is_multiple_of(2) && rel + 1 < size {
                Touch::All
            } else {
                Touch::Nothing
            };
            let recvbuf = (rank != ctx.root).then(|| (ctx.counts.single(), Touch::All));
            Temps::of((ctx.counts.single(), tmp), recvbuf)
        }
        // MPIR_Reduce_intra_reduce_scatter_gather: ranks below 2 rem, odd
        // ones send their vector to the even one below (lines 104-130);
        // then recursive halving from mask 1, the lower rank of each pair
        // keeping the first half (`newrank < newdst`), received into
        // `tmp_buf`; `recvbuf` (off the root) is a copy of the send buffer.
        (CollKind::Reduce, Algorithm::Rabenseifner) => {
            let (excluded, all, newrank) = if rank < 2 * rem {
                (rank % 2 == 1, rank % 2 == 0, rank / 2)
            } else {
                (false, false, rank - rem)
            };
            let recvbuf = (rank != ctx.root).then(|| (ctx.counts.single(), Touch::All));
            Temps::of(
                (
                    ctx.counts.single(),
                    halving(excluded, all, newrank % 2 == 0),
                ),
                recvbuf,
            )
        }
        // MPIR_Allreduce_intra_recursive_doubling: below 2 rem the even
        // ranks send and wait, the odd ones receive a whole vector into
        // `tmp_buf`; every exchange receives a whole vector into it.
        (CollKind::Allreduce, Algorithm::RecursiveDoubling) => {
            let excluded = rank < 2 * rem && rank % 2 == 0;
            Temps::of(
                (
                    ctx.counts.single(),
                    if excluded { Touch::Nothing } else { Touch::All },
                ),
                None,
            )
        }
        // MPIR_Allreduce_intra_reduce_scatter_allgather: the same pairing
        // below 2 rem, then recursive halving from mask 1 into `tmp_buf`.
        (CollKind::Allreduce, Algorithm::Rabenseifner) => {
            let (excluded, all, newrank) = if rank < 2 * rem {
                (rank % 2 == 0, rank % 2 == 1, rank / 2)
            } else {
                (false, false, rank - rem)
            };
            Temps::of(
                (
                    ctx.counts.single(),
                    halving(excluded, all, newrank % 2 == 0),
                ),
                None,
            )
        }
        // Allgatherv by recursive doubling (`allgatherv_intra_recursive_doubling.c`
        // line 60), allgather and allgatherv by Bruck (`allgather_intra_brucks.c`
        // line 45, `allgatherv_intra_brucks.c` line 54), alltoall by Bruck
        // (`alltoall_intra_brucks.c` lines 54-55): one `tmp_buf` of the whole
        // result, into which the own block is copied (or the send buffer
        // packed) and every other block received.
        (CollKind::Allgatherv, Algorithm::RecursiveDoubling)
        | (CollKind::Allgather | CollKind::Allgatherv | CollKind::Alltoall, Algorithm::Bruck) => {
            Temps::of((ctx.counts.total(size), Touch::All), None)
        }
        (CollKind::ReduceScatter, Algorithm::RecursiveHalving | Algorithm::Pairwise) => {
            let Ok(blocks) = ctx.blocks() else {
                return Temps::NONE;
            };
            if alg == Algorithm::Pairwise {
                // `tmp_recvbuf` receives this rank's block in every step.
                return Temps::of((blocks.get(rank) + 1, Touch::All), None);
            }
            // `tmp_recvbuf`: the even ranks below 2 rem send, the odd ones
            // receive a whole vector; then halving from mask pof2/2, the
            // ranks below it keeping the first half (by bytes here; MPICH
            // halves the blocks of the new ranks). `tmp_results`: a copy of
            // the send buffer.
            let total = blocks.range(0, size);
            let (excluded, all, newrank) = if rank < 2 * rem {
                (rank % 2 == 0, rank % 2 == 1, rank / 2)
            } else {
                (false, false, rank - rem)
            };
            Temps::of(
                (total, halving(excluded, all, newrank < pof2 / 2)),
                Some((total, Touch::All)),
            )
        }
        _ => Temps::NONE,
    }
}

/// At most two temporary buffers of one algorithm (bytes, written part),
/// without an allocation: schedules are built per rank and call.
#[derive(Debug, Clone, Copy)]
struct Temps {
    list: [(u64, Touch); 2],
    len: usize,
}

impl Temps {
    const NONE: Temps = Temps {
        list: [(0, Touch::Nothing); 2],
        len: 0,
    };

    fn of(first: (u64, Touch), second: Option<(u64, Touch)>) -> Temps {
        match second {
            Some(s) => Temps {
                list: [first, s],
                len: 2,
            },
            None => Temps {
                list: [first, (0, Touch::Nothing)],
                len: 1,
            },
        }
    }

    fn as_slice(&self) -> &[(u64, Touch)] {
        &self.list[..self.len]
    }
}

/// `temps` allocated (`Op::Alloc`, first in the first step) and freed in
/// reverse order (`Op::Free`, last in the last step) around `steps`, as
/// MPICH's `MPIR_CHKLMEM_MALLOC` at an algorithm's start and
/// `MPIR_CHKLMEM_FREEALL` at its end. Nothing for an empty schedule (a
/// rank with no part in the call) or a zero-byte buffer.
pub(crate) fn with_temporaries(steps: &mut [Step], temps: &[(u64, Touch)]) {
    let count = temps.iter().filter(|&&(b, _)| b > 0).count();
    if count == 0 {
        return;
    }
    let live = || temps.iter().filter(|&&(b, _)| b > 0);
    if let Some(first) = steps.first_mut() {
        let mut ops = Vec::with_capacity(count + first.ops.len());
        ops.extend(live().map(|&(bytes, touch)| Op::Alloc { bytes, touch }));
        ops.append(&mut first.ops);
        first.ops = ops;
    }
    if let Some(last) = steps.last_mut() {
        last.ops
            .extend(live().rev().map(|&(bytes, _)| Op::Free { bytes }));
    }
}

/// The algorithm for `call`: the one `cfg.forced` names for its kind, else
/// the choice of `cfg.library`'s rules (see `docs/collectives.md`). The
/// choice depends only on what every rank of the call knows alike.
pub fn select(cfg: &CollConfig, call: &CollCall<'_>) -> Algorithm {
    if let Some((_, alg)) = cfg.forced.iter().find(|(k, _)| *k == call.kind) {
        return *alg;
    }
    let shm = cfg.shared_memory_on();
    let alg = match cfg.library {
        Library::Mpich3 => mpich::select(call),
        Library::Mpich4 => mpich4::select(call),
        Library::OpenMpi4 => openmpi4::select(call),
        Library::OpenMpi5 => han::select(call),
        Library::OpenMpi41 => openmpi::select(call),
        Library::IntelMpi2019 | Library::IntelMpi2021 => intelmpi::select(call),
    };
    with_shared_memory(cfg.library, alg, call, shm)
}

/// `alg` as `library` runs it with (`shm`) or without shared-memory
/// collectives: MPICH 4's compositions take their node parts through
/// shared memory (`posix_coll.h`), and its allreduce on one node
/// (composition gamma) calls the shared-memory allreduce on the
/// communicator itself (`ch4_coll_impl.h`); Intel MPI's table names its
/// SHM-based leaves itself. Without shared memory, SHM-based leaves run
/// their node parts as messages.
fn with_shared_memory(
    library: Library,
    alg: Algorithm,
    call: &CollCall<'_>,
    shm: bool,
) -> Algorithm {
    let one_node = call.size > 1 && call.layout.is_some_and(NodeLayout::one_node);
    let mpich4 = library == Library::Mpich4;
    match (alg, shm) {
        (Algorithm::ShmAlpha(_), false) => Algorithm::Ch4Alpha,
        (Algorithm::ShmBeta(_), false) => Algorithm::Ch4Beta,
        (Algorithm::Ch4Alpha, true) if mpich4 => Algorithm::ShmAlpha(ShmTrees::MPICH),
        (Algorithm::Ch4Beta, true) if mpich4 => Algorithm::ShmBeta(ShmTrees::MPICH),
        (_, true) if mpich4 && one_node && call.kind == CollKind::Allreduce => {
            Algorithm::ReleaseGather(ShmTrees::MPICH)
        }
        (a, _) => a,
    }
}

/// The algorithm of an inner collective of an Open MPI composite algorithm
/// run under `library` (see [`schedule_in`]), and its steps.
fn inner_schedule(library: Library, call: &CollCall<'_>) -> Result<Vec<Step>, String> {
    let alg = inner_select(library, call);
    // These composites are Open MPI's and Intel MPI's code (forced under
    // MPICH, which has none), inner collectives included: no MPICH
    // temporary buffers, and under MPICH Open MPI 5's code for what
    // depends on it (where a reduce's leaves send from, Bruck's copies),
    // as its rules choose the inner algorithms (`inner_select`).
    let code = match library {
        Library::Mpich3 | Library::Mpich4 => Library::OpenMpi5,
        other => other,
    };
    schedule_opts(code, false, alg, call)
}

/// The rules that pick the inner collectives of composite algorithms under
/// `library` (Open MPI's, or Intel MPI's own for its "Reduce + Bcast").
fn inner_select(library: Library, call: &CollCall<'_>) -> Algorithm {
    match library {
        Library::OpenMpi4 => openmpi4::select(call),
        // Intel MPI's "Reduce + Bcast" allreduce runs its own reduce and
        // bcast selection.
        Library::IntelMpi2019 | Library::IntelMpi2021 => intelmpi::select(call),
        Library::Mpich3 | Library::Mpich4 | Library::OpenMpi41 => openmpi::select(call),
        // The composites call the communicator's own collectives
        // (`comm->c_coll->coll_bcast`, ..., in `coll_base_allgather.c`
        // 846-859, `coll_base_allgatherv.c` 764-795, `coll_base_allreduce.c`
        // 71-86, `coll_base_reduce_scatter.c` 70-87 at v5.0.9): under Open
        // MPI 5 those are han's where han takes the call (a gatherv + bcast
        // allgatherv on two nodes broadcasts among the node leaders, then in
        // each node), as the real library's messages show
        // (`validation/openmpi-coll/`).
        Library::OpenMpi5 => han::select(call),
    }
}
