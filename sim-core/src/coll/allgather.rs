//! Allgather and allgatherv (`counts[i]`: the block of rank i).
//!
//! Every algorithm sends library data (`send`): both libraries copy the own
//! block into the receive buffer (or a temporary) first and send from
//! there, and forward what they received (MPICH
//! `allgather_intra_recursive_doubling.c` at v4.0.2: `MPIR_Localcopy` of
//! the own block, then `MPIC_Sendrecv` from `recvbuf`).

use super::util::{Blocks, Ctx, Sched, is_even, is_odd};
use super::{Algorithm, Counts, Op, Step};
use crate::ir::CollKind;

/// MPICH `MPIR_CVAR_ALLGATHERV_PIPELINE_MSG_SIZE` default (allgatherv.c):
/// the ring allgatherv moves blocks in pieces of at most
/// `max(min(counts), 32768)` bytes.
const ALLGATHERV_PIPELINE_MSG_SIZE: u64 = 32768;

pub(super) fn schedule(alg: Algorithm, c: &Ctx) -> Result<Vec<Step>, String> {
    let counts = match c.kind {
        CollKind::Allgather => Blocks::uniform(c.bytes()?, c.size),
        _ => c.blocks()?,
    };
    let mut s = Sched::new();
    match alg {
        Algorithm::RecursiveDoubling => {
            let range = |lo: u64, hi: u64| counts.range(lo, hi);
            rd_allgather(&mut s, c.rank, c.size, &|r| r, &range);
            if c.kind == CollKind::Allgatherv {
                // MPICH's allgatherv gathers into a temporary (`tmp_buf`,
                // the own block copied in first: the engine's local copy)
                // and copies every block out of it into the receive buffer
                // at the end ("copy data from tmp_buf to recvbuf",
                // allgatherv_intra_recursive_doubling.c lines 233-246 at
                // v4.0.2); its allgather works in the receive buffer.
                s.step(
                    vec![Op::Copy {
                        bytes: counts.total(),
                    }],
                    0,
                );
            }
        }
        Algorithm::Bruck => bruck(&mut s, c, &counts),
        Algorithm::Ring => {
            if c.kind == CollKind::Allgather {
                ring(&mut s, c, &counts);
            } else {
                ring_pipelined(&mut s, c, &counts);
            }
        }
        // Open MPI's allgatherv ring moves whole blocks, as its allgather
        // ring does.
        Algorithm::OmpiRing => ring(&mut s, c, &counts),
        Algorithm::Neighbor => {
            if is_odd(c.size) {
                // Open MPI switches to the ring for an odd size.
                ring(&mut s, c, &counts);
            } else {
                neighbor(&mut s, c, &counts);
            }
        }
        Algorithm::TwoProcs => {
            if c.size != 2 {
                return Err(format!(
                    "{} two_procs runs on 2 ranks only, not {}",
                    c.kind.name(),
                    c.size
                ));
            }
            let other = 1 - c.rank;
            // `tmpsend = (char*)sbuf`: the user's send buffer.
            s.sendrecv_from(true, other, counts.get(c.rank), other, counts.get(other));
        }
        Algorithm::Linear => return gather_bcast(c, &counts),
        other => {
            return Err(format!(
                "{} has no algorithm \"{}\"",
                c.kind.name(),
                other.name()
            ));
        }
    }
    Ok(s.finish())
}

/// Recursive-doubling allgather over `p` participants with relative rank
/// `rel` (actual rank `abs(rel)`), `range(lo, hi)` being the bytes of the
/// blocks `lo..hi` (clipped to `0..p`). MPICH
/// `MPIR_Allgather_intra_recursive_doubling` (allgather_intra_recursive_doubling.c,
/// same code in the allgatherv and bcast versions) and Open MPI
/// `bcast_intra_scatter_allgather`: in step k exchange everything gathered so
/// far with `rel ^ 2^k`; for a size that is not a power of two, the ranks
/// whose partner does not exist get the missing blocks from the "haves" of
/// their subtree by recursive halving (the libraries' `nprocs_completed`
/// fix-up).
pub(super) fn rd_allgather(
    s: &mut Sched,
    rel: u64,
    p: u64,
    abs: &dyn Fn(u64) -> u64,
    range: &dyn Fn(u64, u64) -> u64,
) {
    let mut mask = 1u64;
    let mut i = 0u32;
    while mask < p {
        let dst = rel ^ mask;
        let dst_root = dst >> i << i;
        let my_root = rel >> i << i;
        if dst < p {
            s.sendrecv(
                abs(dst),
                range(my_root, my_root + mask),
                abs(dst),
                range(dst_root, dst_root + mask),
                0,
            );
        }
        if dst_root + mask > p {
            // Number of ranks of this subtree that got the other half; may be
            // zero or negative when the other half does not exist at all.
            let completed = p as i64 - my_root as i64 - mask as i64;
            let upper = range(my_root + mask, my_root + 2 * mask);
            let mut k = i;
            let mut tmp = mask >> 1;
            while tmp > 0 {
                let d = rel ^ tmp;
                let tree_root = (rel >> k << k) as i64;
                let (ri, di) = (rel as i64, d as i64);
                if d > rel && ri < tree_root + completed && di >= tree_root + completed {
                    s.send(abs(d), upper);
                } else if d < rel && di < tree_root + completed && ri >= tree_root + completed {
                    s.recv(abs(d), upper, 0);
                }
                tmp >>= 1;
                k = k.saturating_sub(1);
            }
        }
        mask <<= 1;
        i += 1;
    }
}

/// MPICH `MPIR_Allgather(v)_intra_brucks` (allgather_intra_brucks.c), Open
/// MPI `ompi_coll_base_allgather(v)_intra_bruck`: `ceil(log2 p)` steps; in
/// step k a rank holding the blocks `rank .. rank+2^k-1` sends them to
/// `rank - 2^k` and receives `rank+2^k ..` from `rank + 2^k`; the last step
/// moves only the remaining `p - 2^floor(log2 p)` blocks.
fn bruck(s: &mut Sched, c: &Ctx, counts: &Blocks) {
    let (p, r) = (c.size, c.rank);
    let mut pof2 = 1u64;
    let mut cnt = 1u64;
    while pof2 <= p / 2 {
        let src = (r + pof2) % p;
        let dst = (r + p - pof2) % p;
        s.sendrecv(
            dst,
            counts.wrapping(r, r + cnt),
            src,
            counts.wrapping(r + pof2, r + pof2 + cnt),
            0,
        );
        cnt *= 2;
        pof2 *= 2;
    }
    let rem = p - pof2;
    if rem > 0 {
        let src = (r + pof2) % p;
        let dst = (r + p - pof2) % p;
        s.sendrecv(
            dst,
            counts.wrapping(r, r + rem),
            src,
            counts.wrapping(r + pof2, r + pof2 + rem),
            0,
        );
    }
}

/// MPICH `MPIR_Allgather_intra_ring`, Open MPI
/// `ompi_coll_base_allgather(v)_intra_ring`: in step i send block
/// `rank - i` to the right, receive block `rank - i - 1` from the left
/// (whole blocks, empty ones too: `ompi_coll_base_sendrecv` sends zero
/// counts).
fn ring(s: &mut Sched, c: &Ctx, counts: &Blocks) {
    let (p, r) = (c.size, c.rank);
    let right = (r + 1) % p;
    let left = (r + p - 1) % p;
    for i in 0..p - 1 {
        let send_from = (r + p - i) % p;
        let recv_from = (r + 2 * p - i - 1) % p;
        s.sendrecv(right, counts.get(send_from), left, counts.get(recv_from), 0);
    }
}

/// MPICH `MPIR_Allgatherv_intra_ring` (allgatherv_intra_ring.c): the ring,
/// with blocks larger than `max(min(counts), 32768)` bytes moved in pieces
/// and empty blocks skipped (send only, receive only, or sendrecv).
fn ring_pipelined(s: &mut Sched, c: &Ctx, counts: &Blocks) {
    let (p, r) = (c.size, c.rank);
    let cnt = |i: u64| counts.get(i);
    let total = counts.total();
    let left = (r + p - 1) % p;
    let right = (r + 1) % p;
    let mut torecv = total - cnt(r);
    let mut tosend = total - cnt(right);
    let min = counts.min().max(ALLGATHERV_PIPELINE_MSG_SIZE);
    let (mut sidx, mut ridx) = (r, left);
    let (mut soff, mut roff) = (0u64, 0u64);
    while tosend > 0 || torecv > 0 {
        let mut sendnow = (cnt(sidx) - soff).min(min);
        let mut recvnow = (cnt(ridx) - roff).min(min);
        if tosend == 0 {
            sendnow = 0;
        }
        if torecv == 0 {
            recvnow = 0;
        }
        match (sendnow, recvnow) {
            (0, 0) => {}
            (0, rn) => s.recv(left, rn, 0),
            (sn, 0) => s.send(right, sn),
            (sn, rn) => s.sendrecv(right, sn, left, rn, 0),
        }
        tosend -= sendnow;
        torecv -= recvnow;
        soff += sendnow;
        roff += recvnow;
        if soff == cnt(sidx) {
            soff = 0;
            sidx = (sidx + p - 1) % p;
        }
        if roff == cnt(ridx) {
            roff = 0;
            ridx = (ridx + p - 1) % p;
        }
    }
}

/// Open MPI `ompi_coll_base_allgather(v)_intra_neighborexchange` (Chen et al.,
/// HPCAsia'05), even sizes: `p/2` steps; first a block with one neighbour,
/// then pairs of blocks alternately with the other neighbour and the first.
fn neighbor(s: &mut Sched, c: &Ctx, counts: &Blocks) {
    let (p, r) = (c.size, c.rank);
    let blk = |i: u64| counts.get(i % p);
    let pair = |i: u64| blk(i) + blk(i + 1);
    let even = is_even(r);
    let (nb, mut rdf, off): ([u64; 2], [u64; 2], [i64; 2]) = if even {
        ([(r + 1) % p, (r + p - 1) % p], [r, r], [2, -2])
    } else {
        let l = (r + p - 1) % p;
        ([l, (r + 1) % p], [l, l], [-2, 2])
    };
    s.sendrecv(nb[0], blk(r), nb[0], blk(nb[0]), 0);
    let mut send_from = if even { r } else { rdf[0] };
    for i in 1..p / 2 {
        let par = usize::from(is_odd(i));
        rdf[par] = (rdf[par] as i64 + off[par] + p as i64).rem_euclid(p as i64) as u64;
        s.sendrecv(nb[par], pair(send_from), nb[par], pair(rdf[par]), 0);
        send_from = rdf[par];
    }
}

/// Open MPI `ompi_coll_base_allgather_intra_basic_linear` (gather to 0, then
/// bcast of everything) and `ompi_coll_base_allgatherv_intra_basic_default`
/// (gatherv to 0, then bcast), the inner collectives chosen by the Open MPI
/// library's rules (gatherv: `coll/basic`).
fn gather_bcast(c: &Ctx, counts: &Blocks) -> Result<Vec<Step>, String> {
    let total = counts.total();
    let gather = match (c.kind, c.counts) {
        (CollKind::Allgather, counts) => c.sub(CollKind::Gather, 0, counts),
        (_, Counts::PerRank(cs)) => c.sub(CollKind::Gatherv, 0, Counts::PerRank(cs)),
        (_, counts) => c.sub(CollKind::Gatherv, 0, counts),
    };
    let bcast = c.sub(CollKind::Bcast, 0, Counts::Uniform(total));
    let mut steps = super::inner_schedule(c.library, &gather.as_call())?;
    steps.extend(super::inner_schedule(c.library, &bcast.as_call())?);
    // The root's bcast sends what it gathered.
    super::util::written_after_receipt(&mut steps);
    Ok(steps)
}
