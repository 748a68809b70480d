//! Barrier: zero-byte messages only.

use super::util::{Ctx, Sched, pof2_floor, recv, send};
use super::{Algorithm, Step};

pub(super) fn schedule(alg: Algorithm, c: &Ctx) -> Result<Vec<Step>, String> {
    Ok(match alg {
        Algorithm::Dissemination | Algorithm::Bruck => dissemination(c),
        Algorithm::RecursiveDoubling => recursive_doubling(c),
        Algorithm::Linear => linear(c),
        Algorithm::DoubleRing => double_ring(c),
        Algorithm::Tree => tree(c),
        other => return Err(format!("barrier has no algorithm \"{}\"", other.name())),
    })
}

/// MPICH `MPIR_Barrier_intra_dissemination` (barrier/barrier_intra_dissemination.c)
/// and Open MPI `ompi_coll_base_barrier_intra_bruck` (coll_base_barrier.c):
/// in round k, receive from `rank - 2^k` and send to `rank + 2^k`;
/// `ceil(log2 p)` rounds.
fn dissemination(c: &Ctx) -> Vec<Step> {
    let (p, r) = (c.size, c.rank);
    let mut s = Sched::new();
    let mut mask = 1u64;
    while mask < p {
        let dst = (r + mask) % p;
        let src = (r + p - mask) % p;
        s.sendrecv(dst, 0, src, 0, 0);
        mask <<= 1;
    }
    s.finish()
}

/// Open MPI `ompi_coll_base_barrier_intra_recursivedoubling`: ranks beyond
/// the largest power of two first pair with `rank - adjsize`, the power of
/// two exchanges with `rank ^ 2^k`, then the extra ranks are released.
fn recursive_doubling(c: &Ctx) -> Vec<Step> {
    let (p, r) = (c.size, c.rank);
    let adj = pof2_floor(p);
    let mut s = Sched::new();
    if adj != p {
        if r >= adj {
            // sendrecv_zero with the lower partner: its send is the entry
            // message, its receive waits for the release at the end.
            s.sendrecv(r - adj, 0, r - adj, 0, 0);
        } else if r < p - adj {
            s.recv(r + adj, 0, 0);
        }
    }
    if r < adj {
        let mut mask = 1u64;
        while mask < adj {
            let remote = r ^ mask;
            mask <<= 1;
            if remote >= adj {
                continue;
            }
            s.sendrecv(remote, 0, remote, 0, 0);
        }
    }
    if adj != p && r < p - adj {
        s.send(r + adj, 0);
    }
    s.finish()
}

/// Open MPI `ompi_coll_base_barrier_intra_basic_linear`: everyone sends to
/// rank 0, which receives them all at once, then releases each in rank order
/// with a blocking send.
fn linear(c: &Ctx) -> Vec<Step> {
    let (p, r) = (c.size, c.rank);
    let mut s = Sched::new();
    if r > 0 {
        s.send(0, 0);
        s.recv(0, 0, 0);
    } else {
        s.step((1..p).map(|i| recv(i, 0)).collect(), 0);
        for i in 1..p {
            s.send(i, 0);
        }
    }
    s.finish()
}

/// Open MPI `ompi_coll_base_barrier_intra_doublering`: a token goes twice
/// around the ring 0 -> 1 -> ... -> p-1 -> 0 (rank 0's `left` is computed as
/// `(rank - 1) % size`, i.e. `MPI_ANY_SOURCE`; the only sender to rank 0 is
/// p-1).
fn double_ring(c: &Ctx) -> Vec<Step> {
    let (p, r) = (c.size, c.rank);
    let left = (r + p - 1) % p;
    let right = (r + 1) % p;
    let mut s = Sched::new();
    for _ in 0..2 {
        if r > 0 {
            s.recv(left, 0, 0);
            s.send(right, 0);
        } else {
            s.send(right, 0);
            s.recv(left, 0, 0);
        }
    }
    s.finish()
}

/// Open MPI `ompi_coll_base_barrier_intra_tree`: a binomial fan-in to rank 0
/// followed by the mirror fan-out.
fn tree(c: &Ctx) -> Vec<Step> {
    let (p, r) = (c.size, c.rank);
    // opal_next_poweroftwo_inclusive(size)
    let mut depth = 1u64;
    while depth < p {
        depth <<= 1;
    }
    let mut s = Sched::new();
    let mut jump = 1u64;
    while jump < depth {
        let partner = r ^ jump;
        if partner & (jump - 1) == 0 && partner < p {
            if partner > r {
                s.recv(partner, 0, 0);
            } else if partner < r {
                s.send(partner, 0);
            }
        }
        jump <<= 1;
    }
    let mut jump = depth >> 1;
    while jump > 0 {
        let partner = r ^ jump;
        if partner & (jump - 1) == 0 && partner < p {
            if partner > r {
                s.step(vec![send(partner, 0)], 0);
            } else if partner < r {
                s.recv(partner, 0, 0);
            }
        }
        jump >>= 1;
    }
    s.finish()
}
