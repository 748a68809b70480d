//! Alltoall and alltoallv (block per destination). A rank's own block is a
//! local copy, not a message, except where the library sends it to itself
//! through MPI: MPICH's scattered algorithm, and Open MPI 5.0.3+'s pairwise
//! alltoallv (its step 0).
//!
//! The scattered, pairwise and linear algorithms send each block straight
//! from the user's send buffer (`MPIC_Isend(sendbuf + ...)` in MPICH's,
//! `ompi_coll_base_sendrecv(sbuf + ...)` in Open MPI's): data the call has
//! not written (`send_user`). Bruck's sends what it rotated into its
//! temporary and received (library data, `send`).

use super::util::{Ctx, Sched, as_len, is_pof2, recv, send, send_user};
use super::{ANY_SIZE, Algorithm, Counts, Op, Step};
use crate::ir::CollKind;

/// MPICH `MPIR_CVAR_ALLTOALL_THROTTLE` default (alltoall.c): the scattered
/// algorithm posts at most 32 receives and 32 sends at a time.
pub(super) const ALLTOALL_THROTTLE: u64 = 32;

/// The sizes of one rank's alltoall(v): what it sends to each destination,
/// what it expects from each source ([`ANY_SIZE`] for alltoallv, whose
/// receive counts the IR does not carry).
struct Blocks<'a> {
    send: Counts<'a>,
    any_recv: bool,
}

impl Blocks<'_> {
    fn sent_to(&self, dst: u64) -> u64 {
        match self.send {
            Counts::Uniform(n) | Counts::Own(n) => n,
            Counts::PerRank(c) => c[as_len(dst)],
        }
    }

    fn expected_from(&self, _src: u64) -> u64 {
        match (self.any_recv, self.send) {
            (false, Counts::Uniform(n)) => n,
            _ => ANY_SIZE,
        }
    }
}

pub(super) fn schedule(alg: Algorithm, c: &Ctx) -> Result<Vec<Step>, String> {
    let b = match (c.kind, c.counts) {
        (CollKind::Alltoall, Counts::Uniform(n)) => Blocks {
            send: Counts::Uniform(n),
            any_recv: false,
        },
        (CollKind::Alltoallv, Counts::Uniform(n)) => Blocks {
            send: Counts::Uniform(n),
            any_recv: false,
        },
        (CollKind::Alltoallv, Counts::PerRank(cs)) => Blocks {
            send: Counts::PerRank(cs),
            any_recv: true,
        },
        _ => return Err(format!("{}: unsupported counts", c.kind.name())),
    };
    let mut s = Sched::new();
    match alg {
        Algorithm::Bruck => {
            let n = c.bytes()?;
            bruck(&mut s, c, n);
        }
        Algorithm::Scattered => scattered(&mut s, c, &b),
        Algorithm::Pairwise => pairwise(&mut s, c, &b, is_pof2(c.size)),
        Algorithm::OmpiPairwise => {
            if super::own_block_is_a_message(c.library, alg, c.kind) {
                ompi5_alltoallv_self_step(&mut s, c, &b);
            }
            pairwise(&mut s, c, &b, false);
        }
        Algorithm::Linear => linear(&mut s, c, &b),
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

/// MPICH `MPIR_Alltoall_intra_brucks` (alltoall_intra_brucks.c), Open MPI
/// `ompi_coll_base_alltoall_intra_bruck` ("modified Bruck"): `ceil(log2 p)`
/// steps; in step k every rank sends to `rank + 2^k` (and receives from
/// `rank - 2^k`) the blocks whose index has bit k set.
fn bruck(s: &mut Sched, c: &Ctx, n: u64) {
    let (p, r) = (c.size, c.rank);
    let mut pof2 = 1u64;
    while pof2 < p {
        let dst = (r + pof2) % p;
        let src = (r + p - pof2) % p;
        // Indices in 0..p with bit `pof2` set.
        let blocks = (p / (2 * pof2)) * pof2 + (p % (2 * pof2)).saturating_sub(pof2);
        // Each step builds an indexed datatype of its blocks, sends
        // through it (the library packs them) and receives through it
        // (unpacks them), then frees it; Open MPI also copies the
        // received blocks back through it (`copy_content_same_ddt`).
        let k = u32::try_from(blocks).unwrap_or(u32::MAX);
        s.step(
            vec![
                Op::Datatype { blocks: k },
                Op::Pack { blocks: k },
                recv(src, blocks * n),
                send(dst, blocks * n),
            ],
            0,
        );
        let mut after = vec![Op::Pack { blocks: k }];
        if c.library.is_open_mpi() {
            after.push(Op::Pack { blocks: k });
        }
        s.step(after, 0);
        pof2 *= 2;
    }
}

/// MPICH `MPIR_Alltoall(v)_intra_scattered` (alltoall_intra_scattered.c):
/// in blocks of `ALLTOALL_THROTTLE` partners, post the receives from
/// `rank + i` and the sends to `rank - i`, then wait for them all. The
/// rank's own block is one of them (i = 0): MPICH sends it to itself
/// through MPI (`MPIC_Irecv`/`MPIC_Isend` to `rank`, v4.0.2 lines 70-88)
/// and makes no local copy, so the engine makes none for this algorithm.
/// (MPICH's alltoallv skips zero-count partners; here receivers do not know
/// their senders' counts, so zero-byte messages are sent.)
fn scattered(s: &mut Sched, c: &Ctx, b: &Blocks) {
    let (p, r) = (c.size, c.rank);
    let mut ii = 0u64;
    while ii < p {
        let ss = ALLTOALL_THROTTLE.min(p - ii);
        let mut ops = Vec::new();
        for i in 0..ss {
            let src = (r + i + ii) % p;
            ops.push(recv(src, b.expected_from(src)));
        }
        for i in 0..ss {
            let dst = (r + p - (i + ii) % p) % p;
            ops.push(send_user(dst, b.sent_to(dst)));
        }
        s.step(ops, 0);
        ii += ALLTOALL_THROTTLE;
    }
}

/// Pairwise exchange, `p - 1` sendrecv steps. With `xor` (MPICH
/// `MPIR_Alltoall_intra_pairwise` on a power-of-two size) the partner of
/// step i is `rank ^ i`; otherwise (MPICH on other sizes, Open MPI
/// `ompi_coll_base_alltoall(v)_intra_pairwise` always) send to `rank + i`
/// and receive from `rank - i`.
fn pairwise(s: &mut Sched, c: &Ctx, b: &Blocks, xor: bool) {
    let (p, r) = (c.size, c.rank);
    for i in 1..p {
        let (src, dst) = if xor {
            (r ^ i, r ^ i)
        } else {
            ((r + p - i) % p, (r + i) % p)
        };
        s.sendrecv_from(true, dst, b.sent_to(dst), src, b.expected_from(src));
    }
}

/// Step 0 of Open MPI 5.0.3+'s `ompi_coll_base_alltoallv_intra_pairwise`
/// (`coll_base_alltoallv.c`, v5.0.9 lines 224-258: `for (step = 0; step <
/// size; step++)`, an `irecv` from `rank - step` and a blocking `send` to
/// `rank + step`, each only for a count above 0): at step 0 both are the
/// rank itself, a message to self through `btl/self`. 5.0.0-5.0.2 (and
/// 4.x, 3.x) called `ompi_coll_base_sendrecv`, which copies locally when
/// both peers are the rank (commit ec4223666d, 2023-12-25, replaced it).
/// Found by the real library's messages (`validation/openmpi-coll/`). A
/// rank's count to itself is its count from itself, so a zero block has
/// neither.
fn ompi5_alltoallv_self_step(s: &mut Sched, c: &Ctx, b: &Blocks) {
    let r = c.rank;
    let n = b.sent_to(r);
    if n > 0 {
        s.step(vec![recv(r, n), send_user(r, n)], 0);
    }
}

/// Open MPI `ompi_coll_base_alltoall_intra_basic_linear` (receives from
/// `rank+1, rank+2, ...`, then sends to `rank-1, rank-2, ...`) and
/// `ompi_coll_base_alltoallv_intra_basic_linear` (both in rank order), all
/// posted at once.
fn linear(s: &mut Sched, c: &Ctx, b: &Blocks) {
    let (p, r) = (c.size, c.rank);
    let mut ops = Vec::new();
    if c.kind == CollKind::Alltoall {
        for i in 1..p {
            let src = (r + i) % p;
            ops.push(recv(src, b.expected_from(src)));
        }
        for i in 1..p {
            let dst = (r + p - i) % p;
            ops.push(send_user(dst, b.sent_to(dst)));
        }
    } else {
        for i in (0..p).filter(|&i| i != r) {
            ops.push(recv(i, b.expected_from(i)));
        }
        for i in (0..p).filter(|&i| i != r) {
            ops.push(send_user(i, b.sent_to(i)));
        }
    }
    s.step(ops, 0);
}
