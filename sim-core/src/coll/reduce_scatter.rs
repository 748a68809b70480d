//! Reduce_scatter (`counts[i]`: the result block of rank i; commutative
//! operation).

use super::util::{Blocks, Ctx, Sched, is_even, log2, pof2_floor, recv, send};
use super::{Algorithm, Counts, Step};
use crate::ir::CollKind;

pub(super) fn schedule(alg: Algorithm, c: &Ctx) -> Result<Vec<Step>, String> {
    let counts = c.blocks()?;
    let mut s = Sched::new();
    // Every algorithm but the composite starts with a local copy of the
    // send buffer (no MPI_IN_PLACE): the whole vector into the buffer it
    // combines in (MPICH `reduce_scatter_intra_recursive_halving.c` v4.0.2
    // line 97; Open MPI v5.0.9 `coll_base_reduce_scatter.c` 190
    // (recursive halving), 530 (ring), 732 (butterfly)), or, pairwise,
    // this rank's block into its receive buffer
    // (`reduce_scatter_intra_pairwise.c` line 61).
    match alg {
        Algorithm::RecursiveHalving | Algorithm::Ring | Algorithm::Butterfly => {
            s.copy(counts.total());
        }
        Algorithm::Pairwise => s.copy(counts.get(c.rank)),
        _ => {}
    }
    match alg {
        Algorithm::RecursiveHalving => recursive_halving(&mut s, c, &counts),
        Algorithm::Pairwise => pairwise(&mut s, c, &counts),
        Algorithm::Ring => ring(&mut s, c, &counts),
        Algorithm::Butterfly => butterfly(&mut s, c, &counts),
        Algorithm::NonOverlapping => return nonoverlapping(c, &counts),
        other => {
            return Err(format!(
                "reduce_scatter has no algorithm \"{}\"",
                other.name()
            ));
        }
    }
    Ok(s.finish())
}

/// MPICH `MPIR_Reduce_scatter_intra_recursive_halving`
/// (reduce_scatter_intra_recursive_halving.c), copied into Open MPI as
/// `ompi_coll_base_reduce_scatter_intra_basic_recursivehalving`: the even
/// ranks among the first `2r` give their whole vector to the odd right
/// neighbour (which combines it), the power of two halves the vector with
/// distance `pof2/2, pof2/4, ..., 1` (empty halves are not sent), and the odd
/// ranks finally send their left neighbour its block.
fn recursive_halving(s: &mut Sched, c: &Ctx, counts: &Blocks) {
    let (p, rank) = (c.size, c.rank);
    let cnt = |i: u64| counts.get(i);
    let total = counts.total();
    let pof2 = pof2_floor(p);
    let rem = p - pof2;
    let tmp_rank = super::allreduce::fold_in(s, rank, rem, total);
    if let Some(tr) = tmp_rank {
        // The blocks of the power of two: new rank i < r stands for ranks
        // 2i and 2i+1, the others for rank i + r.
        let sum = |lo: u64, hi: u64| {
            let folded = if lo < rem.min(hi) {
                counts.range(2 * lo, 2 * rem.min(hi))
            } else {
                0
            };
            let plain = if lo.max(rem) < hi {
                counts.range(lo.max(rem) + rem, hi + rem)
            } else {
                0
            };
            folded + plain
        };
        let (mut send_index, mut recv_index, mut last_index) = (0u64, 0u64, pof2);
        let mut mask = pof2 >> 1;
        while mask > 0 {
            let tp = tr ^ mask;
            let peer = if tp < rem { tp * 2 + 1 } else { tp + rem };
            let (send_count, recv_count);
            if tr < tp {
                send_index = recv_index + mask;
                send_count = sum(send_index, last_index);
                recv_count = sum(recv_index, send_index);
            } else {
                recv_index = send_index + mask;
                send_count = sum(send_index, recv_index);
                recv_count = sum(recv_index, last_index);
            }
            let mut ops = Vec::new();
            if recv_count > 0 {
                ops.push(recv(peer, recv_count));
            }
            if send_count > 0 {
                ops.push(send(peer, send_count));
            }
            s.step(ops, recv_count);
            send_index = recv_index;
            last_index = recv_index + mask;
            mask >>= 1;
        }
        // This rank's result out of the combining buffer into its receive
        // buffer (MPICH line 259, Open MPI 349); a rank that dropped out
        // receives its block straight into it.
        s.copy(cnt(rank));
    }
    if rank < 2 * rem {
        if is_even(rank) {
            if cnt(rank) > 0 {
                s.recv(rank + 1, cnt(rank), 0);
            }
        } else if cnt(rank - 1) > 0 {
            s.send(rank - 1, cnt(rank - 1));
        }
    }
}

/// MPICH `MPIR_Reduce_scatter_intra_pairwise` (reduce_scatter_intra_pairwise.c):
/// `p - 1` steps; in step i send to `rank + i` the part of the vector it
/// owns and receive from `rank - i` this rank's part, then combine it.
fn pairwise(s: &mut Sched, c: &Ctx, counts: &Blocks) {
    let (p, r) = (c.size, c.rank);
    let cnt = |i: u64| counts.get(i);
    for i in 1..p {
        let src = (r + p - i) % p;
        let dst = (r + i) % p;
        s.sendrecv(dst, cnt(dst), src, cnt(r), cnt(r));
    }
}

/// Open MPI `ompi_coll_base_reduce_scatter_intra_ring`: `p - 1` steps; in
/// step k send block `rank - k` (combined in the previous step) to the right
/// and receive block `rank - k - 1` from the left, then combine it; the last
/// block received is this rank's own.
fn ring(s: &mut Sched, c: &Ctx, counts: &Blocks) {
    let (p, r) = (c.size, c.rank);
    let cnt = |i: u64| counts.get(i);
    let right = (r + 1) % p;
    let left = (r + p - 1) % p;
    for k in 1..p {
        let send_block = (r + p - k) % p;
        let recv_block = (r + 2 * p - k - 1) % p;
        s.sendrecv(
            right,
            cnt(send_block),
            left,
            cnt(recv_block),
            cnt(recv_block),
        );
    }
    // The own block, combined last, out of `accumbuf` (line 604).
    s.copy(cnt(r));
}

/// `ompi_mirror_perm`: `x` with its low `nbits` bits reversed.
fn mirror(x: u64, nbits: u32) -> u64 {
    if nbits == 0 {
        return 0;
    }
    (x as u32).reverse_bits() as u64 >> (32 - nbits)
}

/// Open MPI `ompi_coll_base_reduce_scatter_intra_butterfly` (Träff,
/// EuroPVM/MPI 2005): fold to a power of two (even ranks give their vector
/// to the odd neighbour), `log2 pof2` butterfly rounds exchanging halves of
/// the remaining blocks with `vrank ^ 2^k`, then each result block goes to
/// its owner through the mirror permutation.
fn butterfly(s: &mut Sched, c: &Ctx, counts: &Blocks) {
    let (p, rank) = (c.size, c.rank);
    let cnt = |i: u64| counts.get(i);
    let total = counts.total();
    let pof2 = pof2_floor(p);
    let rem = p - pof2;
    let log2size = log2(pof2);
    let real = |v: u64| if v < rem { v * 2 + 1 } else { v + rem };
    // ompi_sum_counts: blocks lo..=hi of the power of two, in ranks.
    let sum_counts = |lo: u64, hi: u64| {
        let lo = if lo < rem { lo * 2 } else { lo + rem };
        let hi = if hi < rem { hi * 2 + 1 } else { hi + rem };
        counts.range(lo, hi + 1)
    };
    let vrank = super::allreduce::fold_in(s, rank, rem, total);
    match vrank {
        Some(v) => {
            let mut nblocks = pof2;
            let (mut send_index, mut recv_index) = (0u64, 0u64);
            let mut mask = 1u64;
            while mask < pof2 {
                let peer = real(v ^ mask);
                nblocks /= 2;
                if v & mask == 0 {
                    send_index += nblocks;
                } else {
                    recv_index += nblocks;
                }
                let send_count = sum_counts(send_index, send_index + nblocks - 1);
                let recv_count = sum_counts(recv_index, recv_index + nblocks - 1);
                s.sendrecv(peer, send_count, peer, recv_count, recv_count);
                send_index = recv_index;
                mask <<= 1;
            }
            let vpeer = mirror(v, log2size);
            let peer = real(vpeer);
            let mut index = if send_index < rem {
                2 * send_index
            } else {
                rem + send_index
            };
            if vpeer < rem {
                s.send(peer - 1, cnt(index));
                index += 1;
            }
            if vpeer != v {
                s.sendrecv(peer, cnt(index), peer, cnt(rank), 0);
            } else {
                // Its own block stayed here: copied out of `psend` (line
                // 874).
                s.copy(cnt(rank));
            }
        }
        None => {
            // An even rank that dropped out: its block comes from the rank
            // whose mirror is its odd neighbour's virtual rank.
            let vpeer = mirror(rank.div_ceil(2), log2size);
            s.recv(real(vpeer), cnt(rank), 0);
        }
    }
}

/// Open MPI `ompi_coll_base_reduce_scatter_intra_nonoverlapping`: reduce the
/// whole vector to rank 0 (algorithm of the Open MPI library's fixed rules),
/// then scatterv the blocks from rank 0 (`coll/basic` scatterv: blocking
/// sends in rank order).
fn nonoverlapping(c: &Ctx, counts: &Blocks) -> Result<Vec<Step>, String> {
    let total = counts.total();
    let r = c.sub(CollKind::Reduce, 0, Counts::Uniform(total)).as_call();
    let sv = c.sub(CollKind::Scatterv, 0, c.counts).as_call();
    let mut steps = super::inner_schedule(c.library, &r)?;
    steps.extend(super::inner_schedule(c.library, &sv)?);
    Ok(steps)
}
