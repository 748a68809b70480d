//! Allreduce (commutative built-in operations).

use super::reduce::{mpich_block_sum, ompi_fold, ompi_halving};
use super::util::{Ctx, MAX_SEGMENTS, Sched, is_even, is_odd, pof2_floor, scaled, segment_count};
use super::{Algorithm, Counts, Step, bcast, reduce, util};
use crate::ir::CollKind;

pub(super) fn schedule(alg: Algorithm, c: &Ctx) -> Result<Vec<Step>, String> {
    let n = c.bytes()?;
    // The algorithms that split the vector do it by elements (MPICH's
    // `cnts`, Open MPI's `COLL_BASE_COMPUTE_BLOCKCOUNT` and segment counts):
    // they run on `count` units of `unit` bytes.
    let (count, unit) = c.units(n);
    match alg {
        Algorithm::RecursiveDoubling => Ok(recursive_doubling(c, n)),
        Algorithm::Rabenseifner => Ok(scaled(mpich_rabenseifner(c, count), unit)),
        // `ompi_coll_base_allreduce_intra_redscat_allgather`: recursive
        // doubling when `count < nprocs_pof2` (coll_base_allreduce.c).
        Algorithm::OmpiRabenseifner if count < pof2_floor(c.size) => Ok(recursive_doubling(c, n)),
        Algorithm::OmpiRabenseifner => Ok(scaled(ompi_rabenseifner(c, count), unit)),
        Algorithm::Ring => Ok(scaled(ring(c, count), unit)),
        // `COLL_BASE_COMPUTED_SEGCOUNT`: `segsize / typelng` elements.
        Algorithm::SegmentedRing(seg) => Ok(scaled(ring_segmented(c, count, seg / unit)?, unit)),
        Algorithm::NonOverlapping => nonoverlapping(c, n),
        Algorithm::Linear => {
            let r = c.sub(CollKind::Reduce, 0, Counts::Uniform(n));
            let b = c.sub(CollKind::Bcast, 0, Counts::Uniform(n));
            let mut steps = reduce::linear(&r, n);
            steps.extend(bcast::linear(&b, n));
            // The root's bcast sends the result it combined.
            util::written_after_receipt(&mut steps);
            Ok(steps)
        }
        other => Err(format!("allreduce has no algorithm \"{}\"", other.name())),
    }
}

/// The fold of MPICH's and Open MPI's allreduce for a non-power-of-two size:
/// among the first `2r` ranks (r = p - pof2) the even ones send their vector
/// to the odd right neighbour, which combines it and stands for both.
/// Returns the new rank, `None` for the ranks that drop out.
pub(super) fn fold_in(s: &mut Sched, rank: u64, rem: u64, n: u64) -> Option<u64> {
    if rank < 2 * rem {
        if is_even(rank) {
            s.send(rank + 1, n);
            None
        } else {
            s.recv(rank - 1, n, n);
            Some(rank / 2)
        }
    } else {
        Some(rank - rem)
    }
}

/// The unfold: the odd ranks send the result back to the even ones.
fn fold_out(s: &mut Sched, rank: u64, rem: u64, n: u64) {
    if rank < 2 * rem {
        if is_odd(rank) {
            s.send(rank - 1, n);
        } else {
            s.recv(rank + 1, n, 0);
        }
    }
}

/// The actual rank of new rank `nd` after [`fold_in`].
fn unfolded(nd: u64, rem: u64) -> u64 {
    if nd < rem { nd * 2 + 1 } else { nd + rem }
}

/// MPICH `MPIR_Allreduce_intra_recursive_doubling`
/// (allreduce_intra_recursive_doubling.c), identical pattern in Open MPI
/// `ompi_coll_base_allreduce_intra_recursivedoubling`: fold to a power of
/// two, `log2 pof2` sendrecv steps of the whole vector with `newrank ^ 2^k`
/// (each followed by a combination of `n` bytes), unfold.
pub(super) fn recursive_doubling(c: &Ctx, n: u64) -> Vec<Step> {
    let (p, rank) = (c.size, c.rank);
    let pof2 = pof2_floor(p);
    let rem = p - pof2;
    let mut s = Sched::new();
    if let Some(nr) = fold_in(&mut s, rank, rem, n) {
        let mut mask = 1u64;
        while mask < pof2 {
            let dst = unfolded(nr ^ mask, rem);
            s.sendrecv(dst, n, dst, n, n);
            mask <<= 1;
        }
    }
    fold_out(&mut s, rank, rem, n);
    s.finish()
}

/// MPICH `MPIR_Allreduce_intra_reduce_scatter_allgather`
/// (allreduce_intra_reduce_scatter_allgather.c), Rabenseifner's algorithm:
/// fold, reduce-scatter by recursive halving over `pof2` blocks of
/// `count / pof2` (MPICH's `cnts`), allgather by recursive doubling, unfold.
fn mpich_rabenseifner(c: &Ctx, n: u64) -> Vec<Step> {
    let (p, rank) = (c.size, c.rank);
    let pof2 = pof2_floor(p);
    let rem = p - pof2;
    let cnts = |lo: i64, hi: i64| mpich_block_sum(n, pof2, lo, hi);
    let mut s = Sched::new();
    if let Some(nr) = fold_in(&mut s, rank, rem, n) {
        let (mut send_idx, mut last_idx) =
            super::reduce::halving_reduce_scatter(&mut s, nr, pof2, n, |nd| unfolded(nd, rem));
        let mut recv_idx: i64;
        let mut mask = pof2 >> 1;
        while mask > 0 {
            let nd = nr ^ mask;
            let dst = unfolded(nd, rem);
            let half = (pof2 / (mask * 2)) as i64;
            let (send_cnt, recv_cnt);
            if nr < nd {
                if mask != pof2 / 2 {
                    last_idx += half;
                }
                recv_idx = send_idx + half;
                send_cnt = cnts(send_idx, recv_idx);
                recv_cnt = cnts(recv_idx, last_idx);
            } else {
                recv_idx = send_idx - half;
                send_cnt = cnts(send_idx, last_idx);
                recv_cnt = cnts(recv_idx, send_idx);
            }
            s.sendrecv(dst, send_cnt, dst, recv_cnt, 0);
            if nr > nd {
                send_idx = recv_idx;
            }
            mask >>= 1;
        }
    }
    fold_out(&mut s, rank, rem, n);
    s.finish()
}

/// Open MPI `ompi_coll_base_allreduce_intra_redscat_allgather`
/// (coll_base_allreduce.c): its own fold (halves swapped, the odd rank drops
/// out), recursive vector halving, recursive vector doubling allgather in
/// reverse order, and the result sent to the dropped-out odd ranks.
fn ompi_rabenseifner(c: &Ctx, n: u64) -> Vec<Step> {
    let (p, rank) = (c.size, c.rank);
    let pof2 = pof2_floor(p);
    let rem = p - pof2;
    let mut s = Sched::new();
    if let Some(v) = ompi_fold(&mut s, rank, rem, n) {
        let h = ompi_halving(&mut s, rank, v, pof2, rem, n);
        let mut step = h.rcount.len();
        let mut mask = pof2 >> 1;
        while mask > 0 && step > 0 {
            step -= 1;
            let vdest = v ^ mask;
            let dest = if vdest < rem { vdest * 2 } else { vdest + rem };
            s.sendrecv(dest, h.rcount[step], dest, h.scount[step], 0);
            mask >>= 1;
        }
    }
    if rank < 2 * rem {
        if is_odd(rank) {
            s.recv(rank - 1, n, 0);
        } else {
            s.send(rank + 1, n);
        }
    }
    s.finish()
}

/// `COLL_BASE_COMPUTE_BLOCKCOUNT` (coll_base_functions.h): `count` split in
/// `num` blocks, the first `count % num` ("early") one larger. Returns
/// `(split, early, late)`.
fn blockcount(count: u64, num: u64) -> (u64, u64, u64) {
    let late = count / num;
    let split = count % num;
    (split, late + u64::from(split > 0), late)
}

/// Open MPI `ompi_coll_base_allreduce_intra_ring`: the vector in `p` blocks
/// (the first `n % p` one byte larger); `p - 1` steps in which each rank
/// passes a partial block to the right and combines the one from the left,
/// then a `p - 1`-step ring allgather of the finished blocks. Falls back to
/// recursive doubling when `count < p`, as the library does. (The fixed
/// rules' `segmented_ring` with segment size 0 runs this same ring.)
fn ring(c: &Ctx, n: u64) -> Vec<Step> {
    let p = c.size;
    if n < p {
        return recursive_doubling(c, n);
    }
    let (split, early, late) = blockcount(n, p);
    let blk = |b: u64| if b < split { early } else { late };
    let mut s = Sched::new();
    ring_reduce_scatter(&mut s, c, &blk);
    ring_allgather(&mut s, c, &blk);
    s.finish()
}

/// The computation loop of Open MPI's ring allreduce: `p - 1` steps; in step
/// k a rank receives (and then combines) block `rank - k` from the left and
/// sends block `rank - k + 1`, which it combined in the previous step, to
/// the right. `piece(b)` is the bytes of block `b` that take part.
fn ring_reduce_scatter(s: &mut Sched, c: &Ctx, piece: &dyn Fn(u64) -> u64) {
    let (p, r) = (c.size, c.rank);
    let right = (r + 1) % p;
    let left = (r + p - 1) % p;
    for k in 1..p {
        let recv_block = (r + p - k) % p;
        let send_block = (r + p - k + 1) % p;
        s.sendrecv(
            right,
            piece(send_block),
            left,
            piece(recv_block),
            piece(recv_block),
        );
    }
}

/// The distribution loop of Open MPI's ring allreduce: a `p - 1`-step ring
/// allgather of the finished blocks `blk(b)`.
fn ring_allgather(s: &mut Sched, c: &Ctx, blk: &dyn Fn(u64) -> u64) {
    let (p, r) = (c.size, c.rank);
    let right = (r + 1) % p;
    let left = (r + p - 1) % p;
    for k in 0..p - 1 {
        let recv_from = (r + p - k) % p;
        let send_from = (r + 1 + p - k) % p;
        s.sendrecv(right, blk(send_from), left, blk(recv_from), 0);
    }
}

/// Open MPI `ompi_coll_base_allreduce_intra_ring_segmented`
/// (coll_base_allreduce.c): the ring with the computation loop repeated in
/// `num_phases` phases, each on one segment of every block, so that no
/// message exceeds about `segsize` bytes; the distribution loop then moves
/// whole blocks as in the plain ring. With `segcount` the segment length
/// (`COLL_BASE_COMPUTED_SEGCOUNT`), the plain [`ring`] runs when `count <
/// p * segcount`; else `num_phases = count / (p * segcount)`, plus one when
/// the remainder is at least `p` and more than half of `p * segcount`; each
/// block is split in `num_phases` segments by `COLL_BASE_COMPUTE_BLOCKCOUNT`.
fn ring_segmented(c: &Ctx, n: u64, segsize: u64) -> Result<Vec<Step>, String> {
    let p = c.size;
    let segcount = segment_count(segsize, n);
    let per_phase = p.saturating_mul(segcount);
    if n < per_phase {
        return Ok(ring(c, n));
    }
    let rem = n % per_phase;
    let phases = n / per_phase + u64::from(rem >= p && rem > per_phase / 2);
    if phases > MAX_SEGMENTS {
        return Err(format!(
            "{phases} phases of {segcount}-byte segments: more than {MAX_SEGMENTS}; use a larger segment size"
        ));
    }
    let (split, early, late) = blockcount(n, p);
    let blk = |b: u64| if b < split { early } else { late };
    let mut s = Sched::new();
    for phase in 0..phases {
        let piece = |b: u64| {
            let (split_phase, early_seg, late_seg) = blockcount(blk(b), phases);
            if phase < split_phase {
                early_seg
            } else {
                late_seg
            }
        };
        ring_reduce_scatter(&mut s, c, &piece);
    }
    ring_allgather(&mut s, c, &blk);
    Ok(s.finish())
}

/// Open MPI `ompi_coll_base_allreduce_intra_nonoverlapping`: reduce to rank
/// 0, then bcast from rank 0 (`comm->c_coll->coll_reduce`, `coll_bcast`),
/// each with the algorithm the Open MPI library's fixed rules pick for it.
fn nonoverlapping(c: &Ctx, n: u64) -> Result<Vec<Step>, String> {
    let r = c.sub(CollKind::Reduce, 0, Counts::Uniform(n)).as_call();
    let b = c.sub(CollKind::Bcast, 0, Counts::Uniform(n)).as_call();
    let mut steps = super::inner_schedule(c.library, &r)?;
    steps.extend(super::inner_schedule(c.library, &b)?);
    util::written_after_receipt(&mut steps);
    Ok(steps)
}
