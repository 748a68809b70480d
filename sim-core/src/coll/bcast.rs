//! Broadcast.
//!
//! The root sends from the user's buffer, which the call has not written
//! (`send_user`); every other rank forwards what it received, which its
//! core wrote in the call (library data, `send`). A scatter-allgather's
//! root sends its own piece in its first allgather step and pieces it
//! received (rewritten) afterwards.

use super::allgather::rd_allgather;
use super::topo::{self, Tree};
use super::util::{Ctx, Sched, is_odd, recv, segments, send, send_user};
use super::{Algorithm, Step};

/// Open MPI's default chain fanout for a forced `chain`
/// (`ompi_coll_tuned_init_chain_fanout = 4`, coll_tuned_component.c).
pub(super) const CHAIN_FANOUT: u64 = 4;
/// Open MPI's k-nomial radix (`coll_tuned_bcast_knomial_radix = 4`,
/// coll_tuned_bcast_decision.c).
pub(super) const KNOMIAL_RADIX: u64 = 4;

pub(super) fn schedule(alg: Algorithm, c: &Ctx) -> Result<Vec<Step>, String> {
    let n = c.bytes()?;
    match alg {
        Algorithm::BinomialTree => Ok(binomial(c, n)),
        Algorithm::OmpiBinomial => generic(n, &topo::ompi_bmtree(c), 0),
        Algorithm::SegmentedBinomial(seg) => generic(n, &topo::ompi_bmtree(c), seg),
        Algorithm::ScatterRingAllgather => Ok(scatter_ring_allgather(c, n)),
        Algorithm::ScatterRecursiveDoublingAllgather => Ok(scatter_rd_allgather(c, n)),
        Algorithm::Linear => Ok(linear(c, n)),
        Algorithm::Pipeline(seg) => generic(n, &topo::chain(c, 1), seg),
        Algorithm::Chain(seg) => generic(n, &topo::chain(c, CHAIN_FANOUT), seg),
        Algorithm::BinaryTree(seg) => generic(n, &topo::kary(c, 2), seg),
        Algorithm::SplitBinaryTree(seg) => split_bintree(c, n, seg),
        Algorithm::Knomial => generic(n, &topo::kmtree(c, KNOMIAL_RADIX), 0),
        other => Err(format!("bcast has no algorithm \"{}\"", other.name())),
    }
}

/// MPICH `MPIR_Bcast_intra_binomial` (bcast/bcast_intra_binomial.c): receive
/// from the parent, then blocking sends to the children, largest subtree
/// first. `p - 1` messages in all.
fn binomial(c: &Ctx, n: u64) -> Vec<Step> {
    let t = topo::mpich_binomial(c);
    let mut s = Sched::new();
    if let Some(parent) = t.parent {
        s.recv(parent, n, 0);
    }
    for &child in &t.children {
        s.send_from(t.parent.is_none(), child, n);
    }
    s.finish()
}

/// Open MPI `ompi_coll_base_bcast_intra_generic` (coll_base_bcast.c) over
/// `tree`, with the message cut in segments of `segsize` bytes: the root
/// sends each segment to all children and waits; an inner node receives
/// segment k while forwarding segment k-1 (the library posts the receive of
/// segment k one step earlier, double buffering; a step waits for all its
/// operations, so here it is posted with the forward); a leaf receives the
/// segments in order.
pub(super) fn generic(n: u64, tree: &Tree, segsize: u64) -> Result<Vec<Step>, String> {
    let segs = segments(n, segsize)?;
    if tree.parent.is_some() {
        return Ok(generic_segments(tree, &segs));
    }
    let mut s = Sched::new();
    if !tree.children.is_empty() {
        for &seg in &segs {
            s.step(
                tree.children.iter().map(|&ch| send_user(ch, seg)).collect(),
                0,
            );
        }
    }
    Ok(s.finish())
}

/// Open MPI `ompi_coll_base_bcast_intra_basic_linear`: the root posts a send
/// to every other rank at once.
pub(super) fn linear(c: &Ctx, n: u64) -> Vec<Step> {
    let mut s = Sched::new();
    if c.rank == c.root {
        let ops = (0..c.size)
            .filter(|&i| i != c.root)
            .map(|i| send_user(i, n))
            .collect();
        s.step(ops, 0);
    } else {
        s.recv(c.root, n, 0);
    }
    s.finish()
}

/// The binomial scatter of a bcast: MPICH `MPII_Scatter_for_bcast`
/// (bcast/bcast_utils.c) and the first half of Open MPI's
/// `bcast_intra_scatter_allgather(_ring)`. The buffer is cut in `p` pieces of
/// `ceil(n/p)` bytes (the last ones shorter or empty); relative rank `r`
/// receives the pieces of its subtree from its parent (no message if they
/// are empty) and sends each child its subtree's pieces, largest subtree
/// first. Returns the piece size.
fn scatter_for_bcast(c: &Ctx, n: u64, s: &mut Sched) -> u64 {
    let (p, rel) = (c.size, c.rel());
    let ss = n.div_ceil(p);
    // Bytes of the subtree of relative rank `r` whose subtree spans `m` ranks.
    let amount = |r: u64, m: u64| n.min((r + m) * ss).saturating_sub(r * ss);
    let mut mask = 1u64;
    while mask < p {
        if rel & mask != 0 {
            let a = amount(rel, mask);
            if a > 0 {
                s.recv(c.abs(rel - mask), a, 0);
            }
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if rel + mask < p {
            let a = amount(rel + mask, mask);
            if a > 0 {
                s.send_from(rel == 0, c.abs(rel + mask), a);
            }
        }
        mask >>= 1;
    }
    ss
}

/// MPICH `MPIR_Bcast_intra_scatter_ring_allgather` (bcast_intra_scatter_ring_allgather.c),
/// Open MPI `ompi_coll_base_bcast_intra_scatter_allgather_ring`: binomial
/// scatter, then `p - 1` ring steps in which each rank passes on the piece it
/// received in the previous step (zero-byte pieces are still sent).
fn scatter_ring_allgather(c: &Ctx, n: u64) -> Vec<Step> {
    let (p, r) = (c.size, c.rank);
    let mut s = Sched::new();
    let ss = scatter_for_bcast(c, n, &mut s);
    let piece = |rel: u64| ss.min(n.saturating_sub(rel * ss));
    let left = (r + p - 1) % p;
    let right = (r + 1) % p;
    let mut j = r;
    let mut jnext = left;
    for step in 1..p {
        let rel_j = (j + p - c.root) % p;
        let rel_jnext = (jnext + p - c.root) % p;
        // The root's first piece is its own, from the user's buffer.
        let user = r == c.root && step == 1;
        s.sendrecv_from(user, right, piece(rel_j), left, piece(rel_jnext));
        j = jnext;
        jnext = (jnext + p - 1) % p;
    }
    s.finish()
}

/// MPICH `MPIR_Bcast_intra_scatter_recursive_doubling_allgather`
/// (bcast_intra_scatter_recursive_doubling_allgather.c), Open MPI
/// `ompi_coll_base_bcast_intra_scatter_allgather`: binomial scatter, then a
/// recursive-doubling allgather of the pieces over relative ranks (with the
/// libraries' recursive-halving fix-up for a non-power-of-two size).
fn scatter_rd_allgather(c: &Ctx, n: u64) -> Vec<Step> {
    let mut s = Sched::new();
    let ss = scatter_for_bcast(c, n, &mut s);
    let range = |lo: u64, hi: u64| {
        n.min(hi.saturating_mul(ss))
            .saturating_sub(lo.saturating_mul(ss))
    };
    let first = s.len();
    rd_allgather(&mut s, c.rel(), c.size, &|rel| c.abs(rel), &range);
    if c.rel() == 0 {
        // The root's first exchange sends its own piece, from the user's
        // buffer; later ones carry pieces it received.
        s.user_sends(first);
    }
    s.finish()
}

/// Open MPI `ompi_coll_base_bcast_intra_split_bintree` (coll_base_bcast.c):
/// the root sends the first half of the buffer down its left subtree and the
/// second half down its right subtree of a binary tree (segmented), then
/// every rank swaps halves with its twin in the other subtree (for an even
/// size the root sends the right half to the last rank). Falls back to the
/// pipeline when a half is empty or shorter than a segment, as the library
/// does.
fn split_bintree(c: &Ctx, n: u64, segsize: u64) -> Result<Vec<Step>, String> {
    let (p, r) = (c.size, c.rank);
    let counts = [n.div_ceil(2), n - n.div_ceil(2)];
    if counts[0] == 0 || counts[1] == 0 || segsize > counts[0] || segsize > counts[1] {
        return generic(n, &topo::chain(c, 1), segsize);
    }
    let halves = [split(counts[0], segsize)?, split(counts[1], segsize)?];
    let tree = topo::kary(c, 2);
    // Left (0) or right (1) subtree; the root counts as right.
    let lr = usize::from(is_odd(c.rel() + 1));
    let mut s = Sched::new();
    match tree.parent {
        None => {
            let nseg = halves[0].len().max(halves[1].len());
            for k in 0..nseg {
                for (i, &child) in tree.children.iter().take(2).enumerate() {
                    if let Some(&bytes) = halves[i].get(k) {
                        s.send_from(true, child, bytes);
                    }
                }
            }
        }
        Some(parent) => {
            let sub = Tree {
                parent: Some(parent),
                children: tree.children.clone(),
            };
            s.append(generic_segments(&sub, &halves[lr]));
        }
    }
    let pair = if lr == 0 {
        (r + 1) % p
    } else {
        (r + p - 1) % p
    };
    let last = (c.root + p - 1) % p;
    if is_odd(p) {
        if r != c.root {
            s.sendrecv(pair, counts[lr], pair, counts[1 - lr], 0);
        }
    } else if r == c.root {
        s.send_from(true, last, counts[1]);
    } else if r == last {
        s.recv(c.root, counts[1], 0);
    } else {
        s.sendrecv(pair, counts[lr], pair, counts[1 - lr], 0);
    }
    Ok(s.finish())
}

/// The segments of one half in `split_bintree`: `ceil(count / segsize)`
/// segments of `segsize` bytes (the last one shorter); one segment when
/// `segsize` is 0.
fn split(count: u64, segsize: u64) -> Result<Vec<u64>, String> {
    if segsize == 0 {
        Ok(vec![count])
    } else {
        segments(count, segsize)
    }
}

/// The non-root part of [`generic`] for given segment sizes.
fn generic_segments(tree: &Tree, segs: &[u64]) -> Vec<Step> {
    let mut s = Sched::new();
    let Some(parent) = tree.parent else {
        return Vec::new();
    };
    if tree.children.is_empty() {
        for &seg in segs {
            s.recv(parent, seg, 0);
        }
        return s.finish();
    }
    let fwd = |seg: u64| {
        tree.children
            .iter()
            .map(|&ch| send(ch, seg))
            .collect::<Vec<_>>()
    };
    // Receive segment k while forwarding segment k-1.
    let mut prev: Option<u64> = None;
    for &seg in segs {
        let mut ops = vec![recv(parent, seg)];
        if let Some(p) = prev {
            ops.extend(fwd(p));
        }
        s.step(ops, 0);
        prev = Some(seg);
    }
    if let Some(p) = prev {
        s.step(fwd(p), 0);
    }
    s.finish()
}
