//! Collectives through shared memory inside a node: MPICH's POSIX
//! `release_gather` algorithms (bcast, reduce, allreduce, barrier), which
//! Intel MPI's "SHM-based" topology-aware algorithms are (Jain et al.,
//! "Framework for Scalable Intra-Node Collective Operations using Shared
//! Memory", SC18, the Intel authors of MPICH's implementation).
//!
//! No message moves inside the node. Each rank has a gather flag and a
//! release flag in a shared segment; data goes through cells of that
//! segment. From `src/mpid/ch4/shm/posix/release_gather/release_gather.h`
//! (MPICH v4.0.2; read in `docs/sources/mpich-4.0.2-collectives.md`,
//! Appendix A):
//! - *Release*: the tree's root (local rank 0) stores its release flag;
//!   every other rank waits for its parent's, then stores its own. A bcast
//!   copies its data into a cell first (at the root) and out of it after
//!   the flag (everywhere else); an allreduce's ranks all copy the result
//!   out of rank 0's reduce cell.
//! - *Gather*: every rank of a reduce or allreduce copies its chunk into its
//!   own reduce cell; a parent waits for each child's gather flag, combines
//!   the child's cell into its own (`MPIR_Reduce_local`), then stores its
//!   own gather flag.
//! - bcast = release then gather, per chunk; reduce = release then gather;
//!   allreduce = gather then release; barrier = gather then release on the
//!   bcast tree with no data. Bcast and barrier use the bcast tree (default
//!   k-ary, k = 64), reduce the reduce tree (k-ary, k = 4) for both steps,
//!   allreduce the reduce tree to gather and the bcast tree to release.
//! - The segment has 4 cells per buffer, so a step may run 3 chunks ahead
//!   of the step that frees a cell ("relax" 3): a bcast's gather and a
//!   reduce's release wait for the flags of chunk `c - 3` at chunk `c`.
//!   parsim stores only the flags that the call itself waits for (those of
//!   chunks `c < N - 3`); in the library the rest are read by the next
//!   call, which parsim does not link to this one.
//! - Chunks: 8192-byte cells; a bcast puts 8064 bytes in each (128 bytes
//!   of header with error checking, the build default), the first chunk
//!   being `n mod 8064` (`algo_common.h` 24-57); a reduction's chunks are
//!   8192 bytes (1,024 doubles), the last one partial.
//!
//! A flag is an [`Op::Flag`] to each rank that waits for it, seen one
//! cache-line transfer later ([`Op::Await`]); copies are [`Op::Copy`].
//! Not modelled: the first four calls on a communicator, which MPICH runs
//! with point-to-point algorithms while it sets the segment up
//! (`MPIR_CVAR_POSIX_NUM_COLLS_THRESHOLD` = 5); the contention of many
//! ranks polling one line.

use super::util::Sched;
use super::{Op, ShmTree, ShmTrees, Step, TreeKind};
use crate::ir::CollKind;

/// Bytes of one cell of the shared segment
/// (`MPIR_CVAR_BCAST_INTRANODE_BUFFER_TOTAL_SIZE` 32768 / 4 cells).
const CELL: u64 = 8192;
/// Data bytes of a bcast cell with MPICH's error checking (its header is
/// 128 bytes; `release_gather.h`).
const BCAST_CELL_DATA: u64 = CELL - 128;
/// How many chunks a step may run ahead of the cells' reuse (4 cells).
const RELAX: usize = 3;

/// Parent and children of local rank `x` (the tree's root is local rank 0)
/// in a tree of `p` ranks.
fn tree(t: ShmTree, x: u64, p: u64) -> (Option<u64>, Vec<u64>) {
    let k = u64::from(t.radix).max(1);
    match t.kind {
        TreeKind::Flat => {
            if x == 0 {
                (None, (1..p).collect())
            } else {
                (Some(0), Vec::new())
            }
        }
        // `treeutil.c` 33-69 (`MPIR_Treealgo_tree_create_kary`): parent
        // (x - 1) / k, children k x + 1 ..= k x + k.
        TreeKind::Kary => {
            let parent = (x > 0).then(|| (x - 1) / k);
            let first = x.saturating_mul(k).saturating_add(1);
            let children = (first..first.saturating_add(k))
                .filter(|&c| c < p)
                .collect();
            (parent, children)
        }
        // `MPIR_Treealgo_tree_create_knomial_1`: the parent of x is x with
        // its lowest non-zero base-k digit cleared; children x + j k^i for
        // the digits below it.
        TreeKind::Knomial => {
            let k = k.max(2);
            let mut parent = None;
            let mut mask = 1u64;
            while mask < p {
                let span = mask.saturating_mul(k);
                if !x.is_multiple_of(span) {
                    parent = Some(x / span * span);
                    break;
                }
                mask = span;
            }
            let mut children = Vec::new();
            mask /= k;
            while mask > 0 {
                for j in 1..k {
                    let c = x.saturating_add(mask.saturating_mul(j));
                    if c < p {
                        children.push(c);
                    }
                }
                mask /= k;
            }
            (parent, children)
        }
    }
}

fn flags(to: &[u64]) -> Vec<Op> {
    to.iter()
        .map(|&c| Op::Flag {
            peer: super::util::peer(c),
        })
        .collect()
}

fn awaits(from: &[u64]) -> Vec<Op> {
    from.iter()
        .map(|&c| Op::Await {
            peer: super::util::peer(c),
        })
        .collect()
}

/// Chunk sizes of `n` bytes for a bcast (the first chunk `n mod 8064`) or
/// a reduction (8192-byte chunks, the last partial).
fn chunks(n: u64, bcast: bool) -> Vec<u64> {
    let cell = if bcast { BCAST_CELL_DATA } else { CELL };
    let mut out = Vec::new();
    if n == 0 {
        out.push(0);
        return out;
    }
    let full = n / cell;
    let rest = n % cell;
    if bcast && rest > 0 {
        out.push(rest);
    }
    out.extend(std::iter::repeat_n(cell, full as usize));
    if !bcast && rest > 0 {
        out.push(rest);
    }
    out
}

/// Local rank `me`'s steps of `kind` (bcast, reduce, allreduce or barrier)
/// on `p` ranks of one node, from local rank `root`, `n` bytes, under the
/// trees `trees`. Peers are local ranks (`0 .. p`).
pub(super) fn schedule(
    kind: CollKind,
    me: u64,
    p: u64,
    root: u64,
    n: u64,
    trees: ShmTrees,
) -> Result<Vec<Step>, String> {
    if p < 2 {
        return Ok(Vec::new());
    }
    let mut s = Sched::new();
    let (bparent, bchildren) = tree(trees.bcast, me, p);
    let (rparent, rchildren) = tree(trees.reduce, me, p);
    match kind {
        CollKind::Barrier => {
            gather(&mut s, bparent, &bchildren, None);
            release(&mut s, me, bparent, &bchildren, None, None);
        }
        CollKind::Bcast => {
            let cs = chunks(n, true);
            let nc = cs.len();
            for (c, &sz) in cs.iter().enumerate() {
                // A root other than local rank 0 hands each chunk to it
                // (point to point, into the cell).
                if root != 0 {
                    if me == root {
                        // From the user's buffer (`MPIC_Send(buf, ...)`).
                        s.send_from(true, 0, sz);
                    } else if me == 0 {
                        s.recv(root, sz, 0);
                    }
                }
                let copy_in = (me == 0 && root == 0).then_some(sz);
                let copy_out = (me != root).then_some(sz);
                release(&mut s, me, bparent, &bchildren, copy_in, copy_out);
                // Gather with relax 3: wait for the children's flags of
                // chunk c - 3; store this chunk's flag only if the parent
                // waits for it in this call.
                if c >= RELAX && !bchildren.is_empty() {
                    s.step(awaits(&bchildren), 0);
                }
                if let Some(par) = bparent
                    && c + RELAX < nc
                {
                    s.step(flags(&[par]), 0);
                }
            }
        }
        CollKind::Reduce => {
            let cs = chunks(n, false);
            let nc = cs.len();
            for (c, &sz) in cs.iter().enumerate() {
                // Release with relax 3: wait for the parent's flag of chunk
                // c - 3, store this chunk's if a child waits for it.
                if c >= RELAX
                    && let Some(par) = rparent
                {
                    s.step(awaits(&[par]), 0);
                }
                if c + RELAX < nc {
                    s.step(flags(&rchildren), 0);
                }
                gather(&mut s, rparent, &rchildren, Some(sz));
                if root != 0 {
                    if me == 0 {
                        s.send(root, sz);
                    } else if me == root {
                        s.recv(0, sz, 0);
                    }
                }
            }
        }
        CollKind::Allreduce => {
            for sz in chunks(n, false) {
                gather(&mut s, rparent, &rchildren, Some(sz));
                release(&mut s, me, bparent, &bchildren, None, Some(sz));
            }
        }
        other => {
            return Err(format!(
                "{} has no shared-memory algorithm (release_gather: barrier, bcast, reduce, allreduce)",
                other.name()
            ));
        }
    }
    Ok(s.finish())
}

/// A gather step: copy `data` bytes into the own cell (`None`: a
/// barrier, no data), wait for every child's flag and combine the child's
/// `data` bytes, store the own flag for the parent.
fn gather(s: &mut Sched, parent: Option<u64>, children: &[u64], data: Option<u64>) {
    let mut first: Vec<Op> = data.map(|b| Op::Copy { bytes: b }).into_iter().collect();
    if children.is_empty() {
        // A leaf copies, then stores its flag, in one step.
        first.extend(parent.map(|par| Op::Flag {
            peer: super::util::peer(par),
        }));
        s.step(first, 0);
        return;
    }
    s.step(first, 0);
    let per_child = data.unwrap_or(0);
    s.step(
        awaits(children),
        per_child.saturating_mul(children.len() as u64),
    );
    if let Some(par) = parent {
        s.step(flags(&[par]), 0);
    }
}

/// A release step: the root copies `copy_in` bytes into the cell and
/// stores its flag; every other rank waits for its parent's flag and
/// stores its own; then `copy_out` bytes are copied out of the cell.
fn release(
    s: &mut Sched,
    me: u64,
    parent: Option<u64>,
    children: &[u64],
    copy_in: Option<u64>,
    copy_out: Option<u64>,
) {
    let mut ops = Vec::new();
    if me == 0 {
        ops.extend(copy_in.map(|b| Op::Copy { bytes: b }));
    } else if let Some(par) = parent {
        s.step(awaits(&[par]), 0);
    }
    ops.extend(flags(children));
    ops.extend(copy_out.map(|b| Op::Copy { bytes: b }));
    s.step(ops, 0);
}
