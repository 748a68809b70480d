//! Open MPI 5.0's default collectives on a communicator that spans nodes:
//! the hierarchical `coll/han` component where it takes the call, else
//! `coll/tuned`'s fixed rules ([`openmpi::select`]). Read from
//! `ompi/mca/coll/han/` at tag v5.0.9 (the selection and the algorithms are
//! the same in every 5.0.x release: v5.0.0..v5.0.9 only changed the MCA
//! variables' flags and a scatter buffer bookkeeping fix); the full reading
//! with file:line is `docs/sources/openmpi-5.0-han.md`.
//!
//! - `han` (priority 35, `coll_han_component.c` line 94) sits above `tuned`
//!   (30). It declines a communicator of one rank or whose ranks all share
//!   a node (`coll_han_module.c` lines 197-202, 237-246), and the first call
//!   finds whether any node holds two ranks: if none does, `han` passes every
//!   collective to `tuned` for good (`coll_han_subcomms.c` lines 93-111 and
//!   251-266). It provides barrier, bcast, reduce, allreduce, gather,
//!   scatter and allgather (lines 249-271); bcast, reduce, gather, scatter
//!   and allgather also fall back when the nodes hold different numbers of
//!   ranks (`coll_han_topo.c` lines 119-126, 147-154; e.g.
//!   `coll_han_bcast.c` lines 92-102). Allreduce and barrier run on
//!   unbalanced nodes.
//! - Sub-communicators (`coll_han_subcomms.c`): the *low* one is a node's
//!   ranks in rank order ([`NodeLayout::members`]); the *up* ones are the
//!   k-th ranks of every node ([`NodeLayout::peers_at`]). On them blocking
//!   collectives are `tuned`'s (the low communicators prefer `tuned`, lines
//!   282-284; the `simple` algorithms' sub-communicators carry `han` with
//!   its default per-level module `TUNED`, `coll_han_component.c` lines
//!   441-444), and the up communicators of the pipelined algorithms prefer
//!   `libnbc` (line 305), whose `ibcast`/`ireduce` run there while their
//!   blocking collectives are `tuned`'s (libnbc has no blocking ones,
//!   `coll_libnbc_component.c` lines 360-364).
//! - Algorithms (default `use_<coll>_algorithm` 0 and `use_simple_<coll>`,
//!   `coll_han_component.c` lines 382, 407-412; `coll_han_dynamic.c`):
//!   barrier `simple`, gather `simple`, the others `intra` (task-based).
//!   Bcast, reduce and allreduce cut the buffer in segments of 65536 bytes
//!   (`coll_han_{bcast,reduce,allreduce}_segsize`, `coll_han_component.c`
//!   lines 266, 286, 305) and pipeline them through the two levels.
//!
//! A pipelined task starts nonblocking collectives on the up communicator
//! and runs blocking ones on the low one before it waits; here the up
//! operations (the task's libnbc collectives, one after the other) and the
//! low ones are merged step by step ([`util::merge`]): their pairs of ranks
//! differ (across nodes, inside a node), so the merge keeps every pair's
//! message order.

use super::openmpi;
use super::util::{self, Ctx, merge, on_group, pof2_floor, segments};
use super::{Algorithm, CollCall, Counts, Library, NodeLayout, Step};
use crate::ir::CollKind;

/// `coll_han_bcast_segsize`, `coll_han_reduce_segsize`,
/// `coll_han_allreduce_segsize` (`coll_han_component.c` lines 266, 286,
/// 305): 65536 bytes.
pub(super) const SEGSIZE: u64 = 65536;

/// libnbc `ibcast` (`nbc_ibcast.c` lines 78-86, with
/// `coll_libnbc_ibcast_skip_dt_decision` true by default,
/// `coll_libnbc_component.c` line 206): linear up to this many ranks.
const NBC_BCAST_LINEAR_MAX: u64 = 4;
/// libnbc `ireduce` (`nbc_ireduce.c` lines 107-115): binomial below this
/// many bytes on at most 4 ranks (when not redscat_gather), else chain.
const NBC_REDUCE_CHAIN_MIN: u64 = 65536;
/// libnbc `ireduce` chain fragment (`nbc_ireduce.c` line 143: 16384/2).
const NBC_REDUCE_CHAIN_FRAG: u64 = 8192;

/// Open MPI 5's choice for `call`: `han` where it takes the call, with its
/// segment size where it pipelines; otherwise `tuned`'s fixed rules.
pub(super) fn select(call: &CollCall<'_>) -> Algorithm {
    match call.layout {
        Some(l) if l.size() == call.size && takes(call.kind, l) => {
            if segmented(call.kind) {
                Algorithm::Han(SEGSIZE)
            } else {
                Algorithm::Han(0)
            }
        }
        _ => openmpi::select(call),
    }
}

/// Whether `han`'s algorithm for `kind` cuts the buffer in segments.
pub(super) fn segmented(kind: CollKind) -> bool {
    matches!(
        kind,
        CollKind::Bcast | CollKind::Reduce | CollKind::Allreduce
    )
}

/// Whether `han` runs `kind` on a communicator laid out as `l` (else it
/// passes the call to `tuned`).
fn takes(kind: CollKind, l: &NodeLayout) -> bool {
    // One rank, all on one node, or no node with two ranks.
    if l.size() < 2 || l.one_node() || l.max_per_node() < 2 {
        return false;
    }
    match kind {
        CollKind::Allreduce | CollKind::Barrier => true,
        CollKind::Bcast
        | CollKind::Reduce
        | CollKind::Gather
        | CollKind::Scatter
        | CollKind::Allgather => l.balanced(),
        _ => false,
    }
}

/// `tuned`'s schedule of the call itself (han declined it).
fn tuned_fallback(ctx: &Ctx<'_>) -> Result<Vec<Step>, String> {
    let call = ctx.as_call();
    let alg = openmpi::select(&call);
    super::schedule_in(Library::OpenMpi5, alg, &call)
}

/// `tuned`'s blocking `kind` on a sub-communicator (`group`, this rank's
/// index `me`), with the algorithm of its fixed rules for the group's size.
/// `elem` is the call's element size ([`CollCall::elem`]).
fn tuned(
    group: &[u32],
    me: u32,
    kind: CollKind,
    root: u32,
    n: u64,
    elem: u64,
) -> Result<Vec<Step>, String> {
    let call = CollCall {
        kind,
        rank: me,
        size: group.len() as u32,
        root,
        counts: Counts::Uniform(n),
        elem,
        layout: None,
    };
    on_group(
        (Library::OpenMpi5, false),
        group,
        me,
        kind,
        root,
        n,
        elem,
        openmpi::select(&call),
    )
}

/// `group` with its members 0 and `root` swapped, and `me`'s index in it:
/// libnbc's `RANK2VRANK` (`nbc_ibcast.c` lines 226-231), which gives the
/// root virtual rank 0 and rank 0 the root's.
fn swapped(group: &[u32], me: u32, root: u32) -> (Vec<u32>, u32) {
    let mut g = group.to_vec();
    g.swap(0, root as usize);
    let v = if me == root {
        0
    } else if me == 0 {
        root
    } else {
        me
    };
    (g, v)
}

/// libnbc's `ibcast` (`nbc_ibcast.c`, default selection lines 78-86):
/// linear on up to 4 ranks (the root posts a send to every rank, lines
/// 278-301), else its binomial tree on virtual ranks (receive from the
/// parent, then post the sends to all children, lines 238-275), which is
/// Open MPI's bmtree rooted at virtual rank 0.
fn nbc_ibcast(group: &[u32], me: u32, root: u32, n: u64, elem: u64) -> Result<Vec<Step>, String> {
    if group.len() as u64 <= NBC_BCAST_LINEAR_MAX {
        return on_group(
            (Library::OpenMpi5, false),
            group,
            me,
            CollKind::Bcast,
            root,
            n,
            elem,
            Algorithm::Linear,
        );
    }
    let (g, v) = swapped(group, me, root);
    on_group(
        (Library::OpenMpi5, false),
        &g,
        v,
        CollKind::Bcast,
        0,
        n,
        elem,
        Algorithm::OmpiBinomial,
    )
}

/// libnbc's `ireduce` (`nbc_ireduce.c` lines 107-115), commutative:
/// redscat_gather on more than 2 ranks when the count is at least the
/// largest power of two `<= p` (an element count: `n / elem`; the pattern of Open MPI's
/// `reduce_intra_redscat_gather`, lines 649-...); else binomial on virtual
/// ranks (lines 356-458: receive and combine each child, smallest subtree
/// first, then send to the parent) if `p > 4` or below 65536 bytes; else
/// the chain in 8192-byte fragments (lines 461-535).
fn nbc_ireduce(group: &[u32], me: u32, root: u32, n: u64, elem: u64) -> Result<Vec<Step>, String> {
    let p = group.len() as u64;
    if p < 2 {
        return Ok(Vec::new());
    }
    if p > 2 && n / elem.max(1) >= pof2_floor(p) {
        return on_group(
            (Library::OpenMpi5, false),
            group,
            me,
            CollKind::Reduce,
            root,
            n,
            elem,
            Algorithm::OmpiRabenseifner,
        );
    }
    let (g, v) = swapped(group, me, root);
    if p > 4 || n < NBC_REDUCE_CHAIN_MIN {
        return on_group(
            (Library::OpenMpi5, false),
            &g,
            v,
            CollKind::Reduce,
            0,
            n,
            elem,
            Algorithm::BinomialTree,
        );
    }
    Ok(nbc_reduce_chain(&g, u64::from(v), n))
}

/// libnbc `red_sched_chain` (`nbc_ireduce.c` lines 461-535) on the
/// virtual ranks `g` (root first): `ceil(n / 8192)` fragments of
/// `n / fragments` bytes (the last takes the rest); per fragment, a rank
/// receives it from virtual rank `v + 1` and combines it, then sends it to
/// `v - 1`, each a round of its own.
fn nbc_reduce_chain(g: &[u32], v: u64, n: u64) -> Vec<Step> {
    let p = g.len() as u64;
    let numfrag = n.div_ceil(NBC_REDUCE_CHAIN_FRAG);
    let fragcount = n / numfrag;
    let mut s = util::Sched::new();
    for k in 0..numfrag {
        let this = if k + 1 == numfrag {
            n - fragcount * k
        } else {
            fragcount
        };
        if v + 1 < p {
            s.recv(u64::from(g[(v + 1) as usize]), this, this);
        }
        if v > 0 {
            s.send(u64::from(g[(v - 1) as usize]), this);
        }
    }
    s.finish()
}

/// This rank's place in `han`'s two levels.
struct Levels<'a> {
    layout: &'a NodeLayout,
    /// The low communicator (this rank's node) and the rank in it.
    low: &'a [u32],
    low_rank: u32,
    /// The call's element size ([`CollCall::elem`]).
    elem: u64,
}

impl Levels<'_> {
    /// The up communicator of the ranks with node rank `local`, and this
    /// rank's index in it (`None` if this rank is not one of them).
    fn up(&self, me: u32, local: u32) -> (Vec<u32>, Option<u32>) {
        let up = self.layout.peers_at(local);
        let at = up.iter().position(|&r| r == me).map(|i| i as u32);
        (up, at)
    }
}

/// The steps of `han`'s default algorithm for `ctx`'s collective, with
/// segments of `segsize` bytes where it pipelines (0: one segment); where
/// `han` declines the communicator (see the module docs), `tuned`'s.
pub(super) fn composition(segsize: u64, ctx: &Ctx<'_>) -> Result<Vec<Step>, String> {
    let Some(layout) = ctx.layout.filter(|l| u64::from(l.size()) == ctx.size) else {
        return tuned_fallback(ctx);
    };
    if !takes(ctx.kind, layout) {
        return tuned_fallback(ctx);
    }
    // Invariant: `Ctx::new` checked rank < size and root < size <= u32::MAX.
    let me = ctx.rank as u32;
    let root = ctx.root as u32;
    let lv = Levels {
        layout,
        low: layout.members(layout.node_of(me)),
        low_rank: layout.local_rank(me),
        elem: ctx.elem,
    };
    let n = ctx.counts.single();
    match ctx.kind {
        CollKind::Barrier => barrier(&lv, me),
        CollKind::Bcast => bcast(&lv, me, root, n, segsize),
        CollKind::Reduce => reduce(&lv, me, root, n, segsize),
        CollKind::Allreduce => allreduce(&lv, me, n, segsize),
        CollKind::Gather => gather(&lv, me, root, n),
        CollKind::Scatter => scatter(&lv, me, root, n),
        CollKind::Allgather => allgather(&lv, me, n),
        kind => Err(format!("{} has no han algorithm", kind.name())),
    }
}

/// `mca_coll_han_barrier_intra_simple` (`coll_han_barrier.c` lines
/// 28-62): barrier on each node, barrier among the nodes' first ranks,
/// barrier on each node.
fn barrier(lv: &Levels<'_>, me: u32) -> Result<Vec<Step>, String> {
    let mut out = tuned(lv.low, lv.low_rank, CollKind::Barrier, 0, 0, lv.elem)?;
    if let (up, Some(at)) = lv.up(me, 0) {
        out.extend(tuned(&up, at, CollKind::Barrier, 0, 0, lv.elem)?);
    }
    out.extend(tuned(
        lv.low,
        lv.low_rank,
        CollKind::Barrier,
        0,
        0,
        lv.elem,
    )?);
    Ok(out)
}

/// The root's node rank and its up communicator, with the root's and this
/// rank's index in it (`mca_coll_han_get_ranks`, `coll_han.h` lines
/// 435-440: on balanced nodes the root's up rank is its node's position
/// among the nodes ordered by their ranks at the root's node rank).
struct Rooted {
    root_low: u32,
    up: Vec<u32>,
    root_up: u32,
    /// This rank's index in `up`; `None` for the ranks that skip the up
    /// level (`noop`).
    at: Option<u32>,
}

fn rooted(lv: &Levels<'_>, me: u32, root: u32) -> Result<Rooted, String> {
    let root_low = lv.layout.local_rank(root);
    let (up, at) = lv.up(me, root_low);
    let root_up = up
        .iter()
        .position(|&r| r == root)
        .ok_or_else(|| format!("han: root {root} missing from its up communicator"))?
        as u32;
    Ok(Rooted {
        root_low,
        up,
        root_up,
        at,
    })
}

/// `mca_coll_han_bcast_intra` (`coll_han_bcast.c` lines 65-218): the
/// ranks at the root's node rank broadcast segment 0 among the nodes with
/// `tuned`'s blocking bcast (task t0, lines 164-177); then per segment k
/// (task t1, lines 184-218) they start libnbc's `ibcast` of segment k+1 on
/// the up communicator while every node broadcasts segment k from them
/// with `tuned`, and wait.
fn bcast(lv: &Levels<'_>, me: u32, root: u32, n: u64, segsize: u64) -> Result<Vec<Step>, String> {
    let r = rooted(lv, me, root)?;
    let segs = segments(n, segsize)?;
    let mut out = Vec::new();
    if let Some(at) = r.at {
        out.extend(tuned(
            &r.up,
            at,
            CollKind::Bcast,
            r.root_up,
            segs[0],
            lv.elem,
        )?);
    }
    for k in 0..segs.len() {
        let mut up = Vec::new();
        if let (Some(at), Some(&next)) = (r.at, segs.get(k + 1)) {
            up = nbc_ibcast(&r.up, at, r.root_up, next, lv.elem)?;
        }
        let low = tuned(
            lv.low,
            lv.low_rank,
            CollKind::Bcast,
            r.root_low,
            segs[k],
            lv.elem,
        )?;
        out.extend(merge(vec![up, low]));
    }
    Ok(out)
}

/// `mca_coll_han_reduce_intra` (`coll_han_reduce.c` lines 66-271): every
/// node reduces segment 0 to its rank at the root's node rank with
/// `tuned` (task t0, lines 200-212); then per segment k (task t1, lines
/// 215-271) those ranks start libnbc's `ireduce` of segment k to the root
/// while every node reduces segment k+1, and wait.
fn reduce(lv: &Levels<'_>, me: u32, root: u32, n: u64, segsize: u64) -> Result<Vec<Step>, String> {
    let r = rooted(lv, me, root)?;
    let segs = segments(n, segsize)?;
    let low = |bytes: u64| {
        tuned(
            lv.low,
            lv.low_rank,
            CollKind::Reduce,
            r.root_low,
            bytes,
            lv.elem,
        )
    };
    let mut out = low(segs[0])?;
    for k in 0..segs.len() {
        let mut up = Vec::new();
        if let Some(at) = r.at {
            up = nbc_ireduce(&r.up, at, r.root_up, segs[k], lv.elem)?;
        }
        let next = match segs.get(k + 1) {
            Some(&b) => low(b)?,
            None => Vec::new(),
        };
        out.extend(merge(vec![up, next]));
    }
    Ok(out)
}

/// `mca_coll_han_allreduce_intra` (`coll_han_allreduce.c` lines 73-458),
/// with node rank 0 as every node's root (lines 140-151): per segment a
/// `tuned` reduce on each node (lr), libnbc's `ireduce` to the first node
/// (ur) and `ibcast` from it (ub) among the nodes' first ranks, and a
/// `tuned` bcast on each node (lb), pipelined: t0 = lr(0); t1 = ur(0) with
/// lr(1); t2 = ub(0), ur(1) with lr(2); then t3(k) for every segment =
/// ub(k+1), ur(k+2) with lr(k+3), lb(k).
fn allreduce(lv: &Levels<'_>, me: u32, n: u64, segsize: u64) -> Result<Vec<Step>, String> {
    let segs = segments(n, segsize)?;
    let (up, at) = lv.up(me, 0);
    let seg = |k: usize| segs.get(k).copied();
    let lr = |k: usize| -> Result<Vec<Step>, String> {
        match seg(k) {
            Some(b) => tuned(lv.low, lv.low_rank, CollKind::Reduce, 0, b, lv.elem),
            None => Ok(Vec::new()),
        }
    };
    let ur = |k: usize| -> Result<Vec<Step>, String> {
        match (at, seg(k)) {
            (Some(a), Some(b)) => nbc_ireduce(&up, a, 0, b, lv.elem),
            _ => Ok(Vec::new()),
        }
    };
    let ub = |k: usize| -> Result<Vec<Step>, String> {
        match (at, seg(k)) {
            (Some(a), Some(b)) => nbc_ibcast(&up, a, 0, b, lv.elem),
            _ => Ok(Vec::new()),
        }
    };
    // t0 (lines 206-233).
    let mut out = lr(0)?;
    // t1 (lines 236-291).
    out.extend(merge(vec![ur(0)?, lr(1)?]));
    // t2 (lines 294-366).
    let mut up2 = ub(0)?;
    up2.extend(ur(1)?);
    out.extend(merge(vec![up2, lr(2)?]));
    // t3 for every segment (lines 369-458, issued by lines 182-193).
    for (k, &bytes) in segs.iter().enumerate() {
        let mut up3 = ub(k + 1)?;
        up3.extend(ur(k + 2)?);
        let mut low = lr(k + 3)?;
        low.extend(tuned(
            lv.low,
            lv.low_rank,
            CollKind::Bcast,
            0,
            bytes,
            lv.elem,
        )?);
        out.extend(merge(vec![up3, low]));
    }
    Ok(out)
}

/// `mca_coll_han_gather_intra_simple` (`coll_han_gather.c` lines
/// 304-441): a `tuned` gather of the blocks on each node to its rank at
/// the root's node rank, then a `tuned` gather of the nodes' `n * ranks
/// per node` bytes among those ranks to the root (the root then reorders
/// locally when the nodes' ranks are not consecutive).
fn gather(lv: &Levels<'_>, me: u32, root: u32, n: u64) -> Result<Vec<Step>, String> {
    let r = rooted(lv, me, root)?;
    let mut out = tuned(
        lv.low,
        lv.low_rank,
        CollKind::Gather,
        r.root_low,
        n,
        lv.elem,
    )?;
    if let Some(at) = r.at {
        let per_node = n.saturating_mul(lv.low.len() as u64);
        out.extend(tuned(
            &r.up,
            at,
            CollKind::Gather,
            r.root_up,
            per_node,
            lv.elem,
        )?);
    }
    Ok(out)
}

/// `mca_coll_han_scatter_intra` (`coll_han_scatter.c` lines 71-261): a
/// `tuned` scatter of `n * ranks per node` bytes per node from the root
/// among the ranks at its node rank (task us, lines 191-237), then a
/// `tuned` scatter of the blocks on each node (task ls, lines 240-261).
fn scatter(lv: &Levels<'_>, me: u32, root: u32, n: u64) -> Result<Vec<Step>, String> {
    let r = rooted(lv, me, root)?;
    let mut out = Vec::new();
    if let Some(at) = r.at {
        let per_node = n.saturating_mul(lv.low.len() as u64);
        out.extend(tuned(
            &r.up,
            at,
            CollKind::Scatter,
            r.root_up,
            per_node,
            lv.elem,
        )?);
    }
    out.extend(tuned(
        lv.low,
        lv.low_rank,
        CollKind::Scatter,
        r.root_low,
        n,
        lv.elem,
    )?);
    Ok(out)
}

/// `mca_coll_han_allgather_intra` (`coll_han_allgather.c` lines 72-288):
/// a `tuned` gather on each node to its first rank (task lg), a `tuned`
/// allgather of `n * ranks per node` bytes each among the nodes' first
/// ranks (task uag), and a `tuned` bcast of all `n * p` bytes on each node
/// (task lb).
fn allgather(lv: &Levels<'_>, me: u32, n: u64) -> Result<Vec<Step>, String> {
    let mut out = tuned(lv.low, lv.low_rank, CollKind::Gather, 0, n, lv.elem)?;
    if let (up, Some(at)) = lv.up(me, 0) {
        let per_node = n.saturating_mul(lv.low.len() as u64);
        out.extend(tuned(&up, at, CollKind::Allgather, 0, per_node, lv.elem)?);
    }
    let all = n.saturating_mul(u64::from(lv.layout.size()));
    out.extend(tuned(
        lv.low,
        lv.low_rank,
        CollKind::Bcast,
        0,
        all,
        lv.elem,
    )?);
    Ok(out)
}
