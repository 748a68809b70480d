//! MPICH 4.0's selection and its node-aware CH4 compositions, as a build
//! with the CH4 device and no shared-memory collective module runs them
//! (`--with-device=ch4:ucx`, e.g. Debian's and Ubuntu's packages: configure
//! then defines `MPIDI_CH4_DIRECT_NETMOD`, `src/mpid/ch4/subconfigure.m4`
//! lines 279-286 at tag v4.0.2, and every `MPIDI_SHM_*` call of a
//! composition is the netmod's, i.e. `MPIR_<Coll>_impl`).
//!
//! Two JSON trees decide (tag v4.0.2):
//! - `maint/tuning/coll/ch4/generic.json` (CJ) picks a *composition* of the
//!   user's communicator from its node structure: `alpha`/`beta` work on the
//!   node communicators (`node_comm`: the ranks of one node;
//!   `node_roots_comm`: the lowest rank of every node, see
//!   [`NodeLayout`](super::NodeLayout)), `gamma` and the others call
//!   `MPIR_<Coll>_impl` on the communicator itself
//!   (`src/mpid/ch4/src/ch4_coll_impl.h`);
//! - `maint/tuning/coll/mpir/generic.json` (MJ) picks the algorithm on
//!   whichever communicator `MPIR_<Coll>_impl` is called: all of them are
//!   MPICH's classic point-to-point algorithms, with thresholds of their
//!   own (allreduce leaves recursive doubling above 8 bytes; alltoall's
//!   `comm_size<8` is evaluated as `<= 8` at search time,
//!   `src/mpi/coll/src/csel.c` lines 1211-1216).
//!
//! A communicator whose ranks each run on a node of their own is *flat*
//! (`MPIR_Comm_create_subcomms`, `src/mpi/comm/commutil.c` lines 595-598);
//! any other (one node with several ranks included) is a *parent*. The node
//! communicators are flat. Not modelled: the POSIX `release_gather`
//! algorithms of builds with the shared-memory module (`ch4:ofi`), which
//! take over bcast, reduce, allreduce and barrier on a node from the 5th
//! call on a communicator.

use super::util::{self, Ctx, is_pof2, pof2_floor};
use super::{Algorithm, CollCall, Counts, NodeLayout, ShmTrees, Step};
use crate::ir::CollKind;

/// MJ bcast (lines 2-98): binomial up to this many bytes.
const BCAST_SHORT: u64 = 12288;
/// MJ bcast: scatter + recursive-doubling allgather up to this many bytes
/// on a power of two.
const BCAST_LONG: u64 = 524288;
/// MJ and CJ bcast: `comm_size<8` (binomial / composition alpha below).
const BCAST_MIN_PROCS: u64 = 8;
/// MJ allreduce (lines 99-141): recursive doubling up to this many bytes.
const ALLREDUCE_SHORT: u64 = 8;
/// MJ reduce (lines 206-276) and CJ reduce (lines 79-106): binomial /
/// composition beta up to this many bytes.
const REDUCE_SHORT: u64 = 2048;
/// MJ allgather (lines 142-173): recursive doubling below this total on a
/// power of two.
const ALLGATHER_LONG: u64 = 524288;
/// MJ allgather: Bruck below this total otherwise.
const ALLGATHER_SHORT: u64 = 81920;
/// MJ alltoall (lines 432-474): `comm_size<8`, searched as `<= 8`.
const ALLTOALL_SMALL_COMM: u64 = 8;
/// MJ alltoall: Bruck up to this many bytes per block (larger
/// communicators).
const ALLTOALL_SHORT: u64 = 256;
/// MJ alltoall: scattered up to this many bytes per block.
const ALLTOALL_MEDIUM: u64 = 32768;
/// MJ reduce_scatter (lines 277-315), commutative: recursive halving below
/// this total.
const REDUCE_SCATTER_LONG: u64 = 524288;

/// The algorithm MJ picks on a communicator that is not a parent (a node
/// communicator, the node roots, or a flat communicator). `count<pow2`
/// compares MPICH's element count, `n / elem` (`elem` bytes per element).
pub(super) fn mpir_select(kind: CollKind, p: u64, counts: Counts<'_>, elem: u64) -> Algorithm {
    let n = counts.single();
    let count = n / elem.max(1);
    match kind {
        CollKind::Barrier => Algorithm::Dissemination,
        CollKind::Bcast => {
            if p < BCAST_MIN_PROCS || n <= BCAST_SHORT {
                Algorithm::BinomialTree
            } else if is_pof2(p) && n <= BCAST_LONG {
                Algorithm::ScatterRecursiveDoublingAllgather
            } else {
                Algorithm::ScatterRingAllgather
            }
        }
        CollKind::Allreduce => {
            if n <= ALLREDUCE_SHORT || count < pof2_floor(p) {
                Algorithm::RecursiveDoubling
            } else {
                Algorithm::Rabenseifner
            }
        }
        CollKind::Reduce => {
            if n <= REDUCE_SHORT || count < pof2_floor(p) {
                Algorithm::BinomialTree
            } else {
                Algorithm::Rabenseifner
            }
        }
        CollKind::Allgather | CollKind::Allgatherv => {
            let tot = counts.total(p);
            if is_pof2(p) {
                if tot < ALLGATHER_LONG {
                    Algorithm::RecursiveDoubling
                } else {
                    Algorithm::Ring
                }
            } else if tot < ALLGATHER_SHORT {
                Algorithm::Bruck
            } else {
                Algorithm::Ring
            }
        }
        CollKind::Alltoall => {
            if p <= ALLTOALL_SMALL_COMM {
                if n <= ALLTOALL_MEDIUM {
                    Algorithm::Scattered
                } else {
                    Algorithm::Pairwise
                }
            } else if n <= ALLTOALL_SHORT {
                Algorithm::Bruck
            } else if n <= ALLTOALL_MEDIUM {
                Algorithm::Scattered
            } else {
                Algorithm::Pairwise
            }
        }
        CollKind::Alltoallv => Algorithm::Scattered,
        CollKind::Gather | CollKind::Scatter => Algorithm::BinomialTree,
        CollKind::Gatherv | CollKind::Scatterv => Algorithm::LinearNb,
        CollKind::ReduceScatter => {
            if counts.total(p) < REDUCE_SCATTER_LONG {
                Algorithm::RecursiveHalving
            } else {
                Algorithm::Pairwise
            }
        }
        CollKind::Scan | CollKind::Exscan => Algorithm::RecursiveDoubling,
    }
}

/// The algorithm MPICH 4 runs for `call` on the user's communicator: a CJ
/// composition on a parent communicator where CJ names one that works on
/// the node communicators ([`Algorithm::Ch4Alpha`], [`Algorithm::Ch4Beta`]),
/// else MJ's choice for the communicator itself.
pub(super) fn select(call: &CollCall<'_>) -> Algorithm {
    let p = u64::from(call.size);
    let n = call.counts.single();
    let parent = call.size > 1 && call.layout.is_some_and(|l| !l.one_per_node());
    let one_node = call.layout.is_some_and(NodeLayout::one_node);
    let consecutive = call.layout.is_some_and(NodeLayout::consecutive);
    let flat = || mpir_select(call.kind, p, call.counts, call.elem);
    if !parent {
        return flat();
    }
    match call.kind {
        // CJ barrier (lines 107-120): alpha on a parent.
        CollKind::Barrier => Algorithm::Ch4Alpha,
        // CJ bcast (lines 2-47): `comm_size<8` is pruned, so strict.
        CollKind::Bcast => {
            if p < BCAST_MIN_PROCS || n < BCAST_SHORT {
                Algorithm::Ch4Alpha
            } else if is_pof2(p) && n < BCAST_LONG {
                Algorithm::Ch4Beta
            } else {
                flat()
            }
        }
        // CJ allreduce (lines 48-78): the whole communicator on one node
        // (`comm_size=node_comm_size`) -> gamma (MJ on the communicator);
        // else, commutative -> alpha.
        CollKind::Allreduce => {
            if one_node {
                flat()
            } else {
                Algorithm::Ch4Alpha
            }
        }
        // CJ reduce (lines 79-106), commutative: beta (the smp algorithm)
        // up to 2048 bytes, alpha above.
        CollKind::Reduce => {
            if n <= REDUCE_SHORT {
                Algorithm::Ch4Beta
            } else {
                Algorithm::Ch4Alpha
            }
        }
        // CJ scan (lines 198-208): alpha when each node's ranks are
        // consecutive.
        CollKind::Scan if consecutive => Algorithm::Ch4Alpha,
        _ => flat(),
    }
}

/// One phase of a composition: `kind` on the sub-communicator `group`
/// (communicator ranks, in the sub-communicator's order) with MJ's
/// algorithm for it; `me` is this rank's index in `group`. Peers are mapped
/// back to communicator ranks.
/// `temporaries`: whether the phase's schedule carries MPICH's temporary
/// buffers (`coll::schedule_opts`).
#[expect(clippy::too_many_arguments, reason = "one sub-call's whole signature")]
fn phase(
    out: &mut Vec<Step>,
    group: &[u32],
    me: u32,
    kind: CollKind,
    root: u32,
    n: u64,
    elem: u64,
    temporaries: bool,
) -> Result<(), String> {
    let alg = mpir_select(kind, group.len() as u64, Counts::Uniform(n), elem);
    out.extend(util::on_group(
        (super::Library::Mpich4, temporaries),
        group,
        me,
        kind,
        root,
        n,
        elem,
        alg,
    )?);
    Ok(())
}

/// This rank's two levels in a composition: its node (`local`, its index
/// there `my_local`, and `shm` when the node parts run through shared
/// memory) and the node roots (`leaders`, its node's index `node`), with
/// the call's element size.
struct Levels<'a> {
    local: &'a [u32],
    my_local: u32,
    shm: Option<ShmTrees>,
    leaders: &'a [u32],
    node: u32,
    elem: u64,
    /// Whether the phases carry MPICH's temporary buffers.
    temporaries: bool,
}

impl Levels<'_> {
    /// `kind` of `n` bytes of the call's elements on this rank's node, from
    /// node rank `root`.
    fn on_node(
        &self,
        out: &mut Vec<Step>,
        kind: CollKind,
        root: u32,
        n: u64,
    ) -> Result<(), String> {
        self.on_node_of(out, kind, root, n, self.elem)
    }

    /// [`Levels::on_node`] of `elem`-byte elements (a composition's own
    /// messages: the barrier's byte, scan's int): through shared memory
    /// (`shm.rs`) when the node parts run there and `kind` has a
    /// shared-memory algorithm (`posix_coll.h`: bcast, reduce, allreduce,
    /// barrier), else as [`phase`].
    fn on_node_of(
        &self,
        out: &mut Vec<Step>,
        kind: CollKind,
        root: u32,
        n: u64,
        elem: u64,
    ) -> Result<(), String> {
        match self.shm {
            Some(trees)
                if matches!(
                    kind,
                    CollKind::Barrier | CollKind::Bcast | CollKind::Reduce | CollKind::Allreduce
                ) =>
            {
                let mut steps = super::shm::schedule(
                    kind,
                    u64::from(self.my_local),
                    self.local.len() as u64,
                    u64::from(root),
                    n,
                    trees,
                )?;
                util::map_peers(&mut steps, self.local);
                out.extend(steps);
                Ok(())
            }
            _ => phase(
                out,
                self.local,
                self.my_local,
                kind,
                root,
                n,
                elem,
                self.temporaries,
            ),
        }
    }

    /// `kind` of `n` bytes of the call's elements among the node roots,
    /// from the roots' rank `root` (this rank is its node's root).
    fn among_leaders(
        &self,
        out: &mut Vec<Step>,
        kind: CollKind,
        root: u32,
        n: u64,
    ) -> Result<(), String> {
        phase(
            out,
            self.leaders,
            self.node,
            kind,
            root,
            n,
            self.elem,
            self.temporaries,
        )
    }
}

/// A step of one blocking operation.
fn one(out: &mut Vec<Step>, op: super::Op) {
    out.push(Step {
        ops: vec![op],
        reduce_bytes: 0,
    });
}

/// A step of one blocking send (`MPIC_Send`) to `peer` of library data.
fn send(out: &mut Vec<Step>, peer: u32, bytes: u64) {
    one(out, util::send(u64::from(peer), bytes));
}

/// A step of one blocking send (`MPIC_Send`) to `peer` straight from the
/// user's buffer.
fn send_user(out: &mut Vec<Step>, peer: u32, bytes: u64) {
    one(out, util::send_user(u64::from(peer), bytes));
}

/// A step of one blocking receive (`MPIC_Recv`) from `peer`.
fn recv(out: &mut Vec<Step>, peer: u32, bytes: u64) {
    one(out, util::recv(u64::from(peer), bytes));
}

/// The steps of composition `alg` (alpha or beta) of `ctx`'s collective,
/// as `ch4_coll_impl.h` (v4.0.2) writes it with `MPIDI_CH4_DIRECT_NETMOD`.
pub(super) fn composition(alg: Algorithm, ctx: &Ctx<'_>) -> Result<Vec<Step>, String> {
    let owned;
    let layout = match ctx.layout {
        Some(l) if l.size() as u64 == ctx.size => l,
        _ => {
            owned = NodeLayout::flat(ctx.size as u32);
            &owned
        }
    };
    // Invariant: `Ctx::new` checked rank < size and root < size <= u32::MAX.
    let me = ctx.rank as u32;
    let root = ctx.root as u32;
    let node = layout.node_of(me);
    let local = layout.members(node);
    let my_local = layout.local_rank(me);
    let leaders = layout.leaders();
    let leader = my_local == 0;
    let root_node = layout.node_of(root);
    let root_local = layout.local_rank(root);
    let n = ctx.counts.single();
    let mut out = Vec::new();
    // The same compositions with the node parts through shared memory.
    let (alg, shm) = match alg {
        Algorithm::ShmAlpha(t) => (Algorithm::Ch4Alpha, Some(t)),
        Algorithm::ShmBeta(t) => (Algorithm::Ch4Beta, Some(t)),
        a => (a, None),
    };
    let lv = Levels {
        local,
        my_local,
        shm,
        leaders,
        node,
        elem: ctx.elem,
        temporaries: ctx.temporaries,
    };
    match (ctx.kind, alg) {
        // Barrier alpha (lines 11-54): barrier on each node, barrier among
        // the node roots, then a 1-byte bcast from each node's root.
        (CollKind::Barrier, Algorithm::Ch4Alpha) => {
            lv.on_node_of(&mut out, CollKind::Barrier, 0, 0, 1)?;
            if leader {
                lv.among_leaders(&mut out, CollKind::Barrier, 0, 0)?;
            }
            lv.on_node_of(&mut out, CollKind::Bcast, 0, 1, 1)?;
        }
        // Bcast alpha (lines 70-154): a root that is not its node's root
        // first sends the buffer to it; bcast among the node roots; then a
        // bcast on every node from its root (the root's node included).
        (CollKind::Bcast, Algorithm::Ch4Alpha) => {
            if root_local != 0 {
                if me == root {
                    send_user(&mut out, local[0], n);
                } else if leader && node == root_node {
                    recv(&mut out, root, n);
                }
            }
            if leader {
                lv.among_leaders(&mut out, CollKind::Bcast, root_node, n)?;
            }
            lv.on_node(&mut out, CollKind::Bcast, 0, n)?;
        }
        // Bcast beta (lines 156-199): on the root's node first when the
        // root is not its node's root, then among the node roots, then on
        // the other nodes.
        (CollKind::Bcast, Algorithm::Ch4Beta) => {
            if node == root_node && root_local > 0 {
                lv.on_node(&mut out, CollKind::Bcast, root_local, n)?;
            }
            if leader {
                lv.among_leaders(&mut out, CollKind::Bcast, root_node, n)?;
            }
            if node != root_node || root_local == 0 {
                lv.on_node(&mut out, CollKind::Bcast, 0, n)?;
            }
        }
        // Allreduce alpha (lines 217-286): reduce on each node to its root,
        // allreduce among the node roots, bcast on each node.
        (CollKind::Allreduce, Algorithm::Ch4Alpha) => {
            lv.on_node(&mut out, CollKind::Reduce, 0, n)?;
            if leader {
                lv.among_leaders(&mut out, CollKind::Allreduce, 0, n)?;
            }
            lv.on_node(&mut out, CollKind::Bcast, 0, n)?;
        }
        // Reduce alpha (lines 328-413): reduce on each node to its root,
        // reduce among the node roots to rank 0, which sends the result to
        // the root if that is another rank.
        (CollKind::Reduce, Algorithm::Ch4Alpha) => {
            lv.on_node(&mut out, CollKind::Reduce, 0, n)?;
            if leader {
                lv.among_leaders(&mut out, CollKind::Reduce, 0, n)?;
            }
            if root != 0 {
                if me == 0 {
                    send(&mut out, root, n);
                } else if me == root {
                    recv(&mut out, 0, n);
                }
            }
            // Lines 345-357: a temporary `recvbuf` on every node root
            // (the ranks with a `node_roots_comm`, which a flat
            // communicator does not make) but the root.
            if ctx.temporaries && leader && me != root && !layout.one_per_node() {
                super::with_temporaries(&mut out, &[(n, super::Touch::All)]);
            }
        }
        // Reduce beta (lines 415-551, MPICH's smp reduce): reduce on the
        // other nodes to their roots, among the node roots to the root's
        // node, then on the root's node to the root.
        (CollKind::Reduce, Algorithm::Ch4Beta) => {
            if node != root_node {
                lv.on_node(&mut out, CollKind::Reduce, 0, n)?;
            }
            if leader {
                lv.among_leaders(&mut out, CollKind::Reduce, root_node, n)?;
            }
            if node == root_node {
                lv.on_node(&mut out, CollKind::Reduce, root_local, n)?;
            }
            // Lines 430-442: a `tmp_buf` on every node root.
            if ctx.temporaries && leader && !layout.one_per_node() {
                super::with_temporaries(&mut out, &[(n, super::Touch::All)]);
            }
        }
        // Scan alpha (lines 825-979): scan on each node; the node's last
        // rank hands the node's total to its root; scan among the node
        // roots, each passing its prefix to the next; a 4-byte bcast on
        // each node says whether a prefix came, and if one did, it is
        // broadcast on the node and combined.
        (CollKind::Scan, Algorithm::Ch4Alpha) => {
            lv.on_node(&mut out, CollKind::Scan, 0, n)?;
            let last = local.len() as u32 - 1;
            if local.len() > 1 {
                if leader {
                    recv(&mut out, local[last as usize], n);
                } else if my_local == last {
                    send(&mut out, local[0], n);
                }
            }
            if leader {
                lv.among_leaders(&mut out, CollKind::Scan, 0, n)?;
                if (node as usize) + 1 < leaders.len() {
                    send(&mut out, leaders[node as usize + 1], n);
                }
                if node > 0 {
                    recv(&mut out, leaders[node as usize - 1], n);
                }
            }
            lv.on_node_of(&mut out, CollKind::Bcast, 0, 4, 4)?;
            if node > 0 {
                lv.on_node(&mut out, CollKind::Bcast, 0, n)?;
                out.push(Step {
                    ops: Vec::new(),
                    reduce_bytes: n,
                });
            }
        }
        (kind, alg) => {
            return Err(format!(
                "{} has no MPICH 4 composition \"{}\"",
                kind.name(),
                alg.name()
            ));
        }
    }
    Ok(out)
}
