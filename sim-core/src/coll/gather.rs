//! Gather, gatherv, scatter, scatterv.
//!
//! Sends straight from the user's send buffer (`send_user`, data the call
//! has not written): a gather's leaves and every linear sender, a scatter's
//! root when it sends from its send buffer (linear; binomial at root 0).
//! Library data (`send`): what a tree's inner ranks received and forward,
//! and a binomial scatter's root at another rank, which first rotates its
//! send buffer into a temporary (MPICH `scatter_intra_binomial.c` at
//! v4.0.2 lines 78-97, 161-172; `gather_intra_binomial.c` lines 231-245).

use super::topo::{self, binomial_subtree};
use super::util::{Ctx, Sched, as_len, recv, segment_count, send, send_user};
use super::{ANY_SIZE, Algorithm, Counts, Step};
use crate::ir::CollKind;

pub(super) fn schedule(alg: Algorithm, c: &Ctx) -> Result<Vec<Step>, String> {
    let mut s = Sched::new();
    match (c.kind, alg) {
        (CollKind::Gather, Algorithm::BinomialTree) => gather_binomial(&mut s, c, c.bytes()?),
        (CollKind::Gather, Algorithm::Linear) => {
            let n = c.bytes()?;
            gather_linear(&mut s, c, n, &|_| n);
        }
        (CollKind::Gather, Algorithm::LinearSync(first)) => {
            gather_linear_sync(&mut s, c, c.bytes()?, first);
        }
        (CollKind::Scatter, Algorithm::BinomialTree) => {
            scatter_binomial(&mut s, c, c.bytes()?, false);
        }
        (CollKind::Scatter, Algorithm::OmpiBinomial) => {
            scatter_binomial(&mut s, c, c.bytes()?, true);
        }
        (CollKind::Scatter, Algorithm::Linear | Algorithm::LinearNb) => {
            let n = c.bytes()?;
            scatter_linear(&mut s, c, &|_| n, n, alg == Algorithm::LinearNb);
        }
        (CollKind::Gatherv, Algorithm::Linear | Algorithm::LinearNb) => {
            let own = own_count(c);
            let from = |i: u64| match c.counts {
                Counts::Uniform(n) => n,
                Counts::PerRank(cs) => cs[as_len(i)],
                Counts::Own(_) => ANY_SIZE,
            };
            if alg == Algorithm::LinearNb {
                gather_linear_nb(&mut s, c, own, &from);
            } else {
                gather_linear(&mut s, c, own, &from);
            }
        }
        (CollKind::Scatterv, Algorithm::Linear | Algorithm::LinearNb) => {
            if c.rank == c.root && matches!(c.counts, Counts::Own(_)) {
                return Err(
                    "scatterv: the root needs the count of every rank, not only its own".into(),
                );
            }
            let to = |i: u64| match c.counts {
                Counts::Uniform(n) | Counts::Own(n) => n,
                Counts::PerRank(cs) => cs[as_len(i)],
            };
            scatter_linear(&mut s, c, &to, own_count(c), alg == Algorithm::LinearNb);
        }
        (kind, other) => {
            return Err(format!(
                "{} has no algorithm \"{}\"",
                kind.name(),
                other.name()
            ));
        }
    }
    Ok(s.finish())
}

/// This rank's own count of a gatherv/scatterv.
fn own_count(c: &Ctx) -> u64 {
    match c.counts {
        Counts::Uniform(n) | Counts::Own(n) => n,
        Counts::PerRank(cs) => cs[as_len(c.rank)],
    }
}

/// MPICH `MPIR_Gather_intra_binomial` (gather_intra_binomial.c), Open MPI
/// `ompi_coll_base_gather_intra_binomial` (in-order binomial tree): receive
/// the subtrees of the children, smallest first, then send everything
/// gathered to the parent.
fn gather_binomial(s: &mut Sched, c: &Ctx, n: u64) {
    let t = topo::in_order_bmtree(c);
    let p = c.size;
    for &child in &t.children {
        let rel = (child + p - c.root) % p;
        s.recv(child, binomial_subtree(rel, p) * n, 0);
    }
    if let Some(parent) = t.parent {
        // "leaf nodes send directly from sendbuf"; inner ones send their
        // temporary of what they gathered.
        s.send_from(
            t.children.is_empty(),
            parent,
            binomial_subtree(c.rel(), p) * n,
        );
    }
}

/// Open MPI `ompi_coll_base_gather_intra_basic_linear` (and older
/// `coll/basic` gatherv): the root receives from each rank in rank order,
/// one blocking receive after the other.
fn gather_linear(s: &mut Sched, c: &Ctx, own: u64, from: &dyn Fn(u64) -> u64) {
    if c.rank == c.root {
        for i in (0..c.size).filter(|&i| i != c.root) {
            s.recv(i, from(i), 0);
        }
    } else {
        s.send_from(true, c.root, own);
    }
}

/// MPICH `MPIR_Gatherv_allcomm_linear` (gatherv), Open MPI
/// `mca_coll_basic_gatherv_intra`: the root posts all receives at once.
/// (Both skip zero counts; receivers that only know their own count cannot,
/// so zero-byte messages are sent.)
fn gather_linear_nb(s: &mut Sched, c: &Ctx, own: u64, from: &dyn Fn(u64) -> u64) {
    if c.rank == c.root {
        let ops = (0..c.size)
            .filter(|&i| i != c.root)
            .map(|i| recv(i, from(i)))
            .collect();
        s.step(ops, 0);
    } else {
        s.send_from(true, c.root, own);
    }
}

/// Open MPI `ompi_coll_base_gather_intra_linear_sync` (coll_base_gather.c):
/// each rank sends its block in two segments, the first of
/// `first_segment_size` bytes (`COLL_BASE_COMPUTED_SEGCOUNT`: 0, or a size
/// at least the block's, keeps the whole block in the first segment and
/// leaves the second empty). For each rank in turn the root posts the
/// receive of the first segment, sends a zero-byte "go" and waits for the
/// first segment; a rank waits for the "go", then sends both segments with
/// blocking sends. The library posts the receive of rank i's second
/// segment right after the "go" and waits for all of them at the end; a
/// step waits for all its operations, so here it is posted one rank later,
/// with the next rank's handshake (and the last one alone at the end).
fn gather_linear_sync(s: &mut Sched, c: &Ctx, n: u64, first_segment_size: u64) {
    let first = segment_count(first_segment_size, n);
    let second = n - first;
    if c.rank == c.root {
        let mut pending: Option<u64> = None;
        for i in (0..c.size).filter(|&i| i != c.root) {
            let mut ops = vec![recv(i, first), send(i, 0)];
            if let Some(prev) = pending {
                ops.push(recv(prev, second));
            }
            s.step(ops, 0);
            pending = Some(i);
        }
        if let Some(prev) = pending {
            s.recv(prev, second, 0);
        }
    } else {
        s.recv(c.root, 0, 0);
        s.send_from(true, c.root, first);
        s.send_from(true, c.root, second);
    }
}

/// MPICH `MPIR_Scatter_intra_binomial` (scatter_intra_binomial.c) and, with
/// `ompi`, Open MPI `ompi_coll_base_scatter_intra_binomial` over the
/// in-order binomial tree (the same tree): receive the subtree's blocks from
/// the parent, then send each child its subtree's blocks, largest subtree
/// first. Open MPI walks its children list (built smallest subtree first)
/// backwards, `for (i = tree_nextsize - 1; i >= 0; i--)`, since 4.0
/// (coll_base_scatter.c of v4.0.0 to v5.0.x; 3.1.x walked it forwards).
fn scatter_binomial(s: &mut Sched, c: &Ctx, n: u64, ompi: bool) {
    let t = if ompi {
        let mut t = topo::in_order_bmtree(c);
        t.children.reverse();
        t
    } else {
        topo::mpich_binomial(c)
    };
    let p = c.size;
    if let Some(parent) = t.parent {
        s.recv(parent, binomial_subtree(c.rel(), p) * n, 0);
    }
    // The root sends from its send buffer only at rank 0; elsewhere it
    // first rotates it into a temporary.
    let user = c.rank == c.root && c.root == 0;
    for &child in &t.children {
        let rel = (child + p - c.root) % p;
        s.send_from(user, child, binomial_subtree(rel, p) * n);
    }
}

/// Linear scatter(v). Sequential (Open MPI
/// `ompi_coll_base_scatter_intra_basic_linear`, `mca_coll_basic_scatterv_intra`:
/// blocking sends in rank order) or, with `nb`, all sends posted at once
/// (Open MPI `ompi_coll_base_scatter_intra_linear_nb`, MPICH
/// `MPIR_Scatterv_allcomm_linear`).
fn scatter_linear(s: &mut Sched, c: &Ctx, to: &dyn Fn(u64) -> u64, own: u64, nb: bool) {
    if c.rank == c.root {
        let others = (0..c.size).filter(|&i| i != c.root);
        if nb {
            s.step(others.map(|i| send_user(i, to(i))).collect(), 0);
        } else {
            for i in others {
                s.send_from(true, i, to(i));
            }
        }
    } else {
        s.recv(c.root, own, 0);
    }
}
