//! Reduce. The operation is taken to be commutative (the built-in
//! reductions), so both libraries use their commutative code paths.
//!
//! MPICH's algorithms first copy the send buffer into the receive buffer
//! or a temporary on every rank (`MPIR_Localcopy(sendbuf, ..., recvbuf,
//! ...)`, reduce_intra_binomial.c at v4.0.2 line 52) and send from there:
//! library data (`send`). Open MPI's leaves and its linear reduce's
//! senders send straight from the send buffer (`send_user`;
//! `ompi_coll_base_reduce_generic`: a leaf's `sendtmpbuf` is `sendbuf`).

use super::bcast::CHAIN_FANOUT;
use super::topo::{self, Tree};
use super::util::{Ctx, Sched, is_odd, log2, pof2_floor, recv, scaled, segments, send};
use super::{Algorithm, Step};

pub(super) fn schedule(alg: Algorithm, c: &Ctx) -> Result<Vec<Step>, String> {
    let n = c.bytes()?;
    // Whether a tree's leaves send straight from the user's send buffer.
    let leaf = if c.library.is_open_mpi() {
        Leaf::User
    } else {
        Leaf::Copied
    };
    match alg {
        Algorithm::BinomialTree => generic(n, &topo::in_order_bmtree(c), 0, leaf),
        // `ompi_coll_base_reduce_intra_binomial` with a segment size.
        Algorithm::SegmentedBinomial(seg) => generic(n, &topo::in_order_bmtree(c), seg, leaf),
        Algorithm::Linear => Ok(linear(c, n)),
        Algorithm::Pipeline(seg) => generic(n, &topo::chain(c, 1), seg, leaf),
        Algorithm::Chain(seg) => generic(n, &topo::chain(c, CHAIN_FANOUT), seg, leaf),
        Algorithm::BinaryTree(seg) => generic(n, &topo::kary(c, 2), seg, leaf),
        Algorithm::InOrderBinary => in_order_binary(c, n, leaf),
        // Rabenseifner's blocks are element counts (MPICH's `cnts`, Open
        // MPI's window halving): run on elements, then scaled to bytes.
        Algorithm::Rabenseifner => {
            let (count, unit) = c.units(n);
            Ok(scaled(mpich_rabenseifner(c, count), unit))
        }
        Algorithm::OmpiRabenseifner => {
            let (count, unit) = c.units(n);
            Ok(scaled(ompi_rabenseifner(c, count), unit))
        }
        other => Err(format!("reduce has no algorithm \"{}\"", other.name())),
    }
}

/// Where a reduction tree's leaves send from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Leaf {
    /// The user's send buffer (Open MPI).
    User,
    /// The receive buffer or a temporary the send buffer was copied into
    /// (MPICH).
    Copied,
}

/// Open MPI `ompi_coll_base_reduce_generic` (coll_base_reduce.c) over `tree`
/// with segments of `segsize` bytes, and with one segment over the in-order
/// binomial tree also MPICH `MPIR_Reduce_intra_binomial`
/// (reduce_intra_binomial.c): an inner node receives segment k from each
/// child in turn and combines it (`reduce_bytes` = the segment), and sends
/// segment k-1 to its parent together with the first receive of segment k;
/// a leaf sends its segments with blocking sends, from where `leaf` says.
fn generic(n: u64, tree: &Tree, segsize: u64, leaf: Leaf) -> Result<Vec<Step>, String> {
    let segs = segments(n, segsize)?;
    let mut s = Sched::new();
    if tree.children.is_empty() {
        if let Some(parent) = tree.parent {
            for &seg in &segs {
                s.send_from(leaf == Leaf::User, parent, seg);
            }
        }
        return Ok(s.finish());
    }
    for k in 0..segs.len() {
        for (i, &child) in tree.children.iter().enumerate() {
            let mut ops = vec![recv(child, segs[k])];
            if let (0, Some(parent), Some(prev)) = (i, tree.parent, k.checked_sub(1)) {
                ops.push(send(parent, segs[prev]));
            }
            s.step(ops, segs[k]);
        }
    }
    if let (Some(parent), Some(&last)) = (tree.parent, segs.last()) {
        s.send(parent, last);
    }
    Ok(s.finish())
}

/// Open MPI `ompi_coll_base_reduce_intra_basic_linear`: every rank sends to
/// the root; the root starts from rank p-1's data and receives and combines
/// the others in decreasing rank order (its own data is combined without a
/// message). `p - 1` combinations of `n` bytes at the root.
pub(super) fn linear(c: &Ctx, n: u64) -> Vec<Step> {
    let (p, r) = (c.size, c.rank);
    let mut s = Sched::new();
    if r != c.root {
        s.send_from(true, c.root, n);
        return s.finish();
    }
    if r != p - 1 {
        s.recv(p - 1, n, 0);
    }
    for i in (0..p - 1).rev() {
        if i == r {
            s.reduce(n);
        } else {
            s.recv(i, n, n);
        }
    }
    s.finish()
}

/// Open MPI `ompi_coll_base_reduce_intra_in_order_binary`: the generic
/// reduce over the in-order binary tree rooted at rank p-1, then p-1 sends
/// the result to the real root.
fn in_order_binary(c: &Ctx, n: u64, leaf: Leaf) -> Result<Vec<Step>, String> {
    let (p, r) = (c.size, c.rank);
    let io_root = p - 1;
    let tree = topo::in_order_bintree(r, p);
    let mut s = Sched::new();
    s.append(generic(n, &tree, 0, leaf)?);
    if io_root != c.root {
        if r == c.root {
            s.recv(io_root, n, 0);
        } else if r == io_root {
            s.send(c.root, n);
        }
    }
    Ok(s.finish())
}

/// The recursive-halving reduce-scatter of MPICH's Rabenseifner reduce and
/// allreduce (the first loop of `MPIR_Reduce_intra_reduce_scatter_gather`
/// and `MPIR_Allreduce_intra_reduce_scatter_allgather`): new rank `nr` of
/// `pof2` exchanges with `nr ^ mask` (actual rank `real(nd)`), halving its
/// block range each step and combining what it receives. Returns
/// `(send_idx, last_idx)` for the gather or allgather that follows (MPICH's
/// `recv_idx` then equals `send_idx`).
pub(super) fn halving_reduce_scatter(
    s: &mut Sched,
    nr: u64,
    pof2: u64,
    n: u64,
    real: impl Fn(u64) -> u64,
) -> (i64, i64) {
    let cnts = |lo: i64, hi: i64| mpich_block_sum(n, pof2, lo, hi);
    let (mut send_idx, mut recv_idx, mut last_idx) = (0i64, 0i64, pof2 as i64);
    let mut mask = 1u64;
    while mask < pof2 {
        let nd = nr ^ mask;
        let dst = real(nd);
        let half = (pof2 / (mask * 2)) as i64;
        let (send_cnt, recv_cnt);
        if nr < nd {
            send_idx = recv_idx + half;
            send_cnt = cnts(send_idx, last_idx);
            recv_cnt = cnts(recv_idx, send_idx);
        } else {
            recv_idx = send_idx + half;
            send_cnt = cnts(send_idx, recv_idx);
            recv_cnt = cnts(recv_idx, last_idx);
        }
        s.sendrecv(dst, send_cnt, dst, recv_cnt, recv_cnt);
        send_idx = recv_idx;
        mask <<= 1;
        if mask < pof2 {
            last_idx = recv_idx + (pof2 / mask) as i64;
        }
    }
    (send_idx, last_idx)
}

/// Sum of the blocks `lo..hi` (clipped to `0..pof2`) of `count` split in
/// `pof2` blocks as MPICH's Rabenseifner does (`cnts[i] = count / pof2`, the
/// first `count % pof2` one larger).
pub(super) fn mpich_block_sum(count: u64, pof2: u64, lo: i64, hi: i64) -> u64 {
    let top = i64::try_from(pof2).unwrap_or(i64::MAX);
    let (lo, hi) = (lo.clamp(0, top) as u64, hi.clamp(0, top) as u64);
    if lo >= hi {
        return 0;
    }
    let (base, extra) = (count / pof2, count % pof2);
    (hi - lo) * base + (hi.min(extra) - lo.min(extra))
}

/// MPICH `MPIR_Reduce_intra_reduce_scatter_gather` (reduce_intra_reduce_scatter_gather.c),
/// Rabenseifner's reduce: the odd ranks among the first `2r` (r = p - pof2)
/// give their vector to their left neighbour, the remaining power of two
/// does a recursive-halving reduce-scatter and a binomial gather of the
/// pieces to the root (rank 0 hands its piece over first when the root was
/// one of the excluded ranks).
fn mpich_rabenseifner(c: &Ctx, n: u64) -> Vec<Step> {
    let (p, rank, root) = (c.size, c.rank, c.root);
    let pof2 = pof2_floor(p);
    let rem = p - pof2;
    let real = |nd: u64| if nd < rem { nd * 2 } else { nd + rem };
    let cnts = |lo: i64, hi: i64| mpich_block_sum(n, pof2, lo, hi);
    let pof2i = pof2 as i64;
    let mut s = Sched::new();
    let mut newrank = if rank < 2 * rem {
        if is_odd(rank) {
            s.send(rank - 1, n);
            None
        } else {
            s.recv(rank + 1, n, n);
            Some(rank / 2)
        }
    } else {
        Some(rank - rem)
    };
    let (mut send_idx, mut last_idx) = match newrank {
        Some(nr) => halving_reduce_scatter(&mut s, nr, pof2, n, real),
        None => (0i64, pof2i),
    };
    let mut recv_idx: i64;
    let newroot = if root < 2 * rem {
        if is_odd(root) {
            if rank == root {
                s.recv(0, cnts(0, 1), 0);
                newrank = Some(0);
                send_idx = 0;
                last_idx = 2;
            } else if newrank == Some(0) {
                s.send(root, cnts(0, 1));
                newrank = None;
            }
            0
        } else {
            root / 2
        }
    } else {
        root - rem
    };
    if let Some(nr) = newrank {
        let mut j = log2(pof2) as i64 - 1;
        let mut mask = pof2 >> 1;
        while mask > 0 {
            let nd = nr ^ mask;
            let mut dst = real(nd);
            if nd == 0 && root < 2 * rem && is_odd(root) {
                dst = root;
            }
            let jj = j.max(0) as u32;
            let nd_tree = nd >> jj << jj;
            let root_tree = newroot >> jj << jj;
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
            if nd_tree == root_tree {
                s.send(dst, send_cnt);
                break;
            }
            s.recv(dst, recv_cnt, 0);
            if nr > nd {
                send_idx = recv_idx;
            }
            mask >>= 1;
            j -= 1;
        }
    }
    s.finish()
}

/// The halving of Open MPI's Rabenseifner (`redscat_allgather`,
/// `redscat_gather`): per step, what this rank receives and combines
/// (`rcount`) and what it sends (`scount`); the lower rank of a pair keeps
/// the left half of the current window (`wsize / 2` elements).
pub(super) struct OmpiHalving {
    pub rcount: Vec<u64>,
    pub scount: Vec<u64>,
}

/// Step 1 of Open MPI's Rabenseifner for a non-power-of-two size
/// (coll_base_allreduce.c / coll_base_reduce.c): among the first `2r` ranks,
/// neighbours swap halves and combine, then the odd rank sends its combined
/// right half to the even one and drops out. Returns the virtual rank.
pub(super) fn ompi_fold(s: &mut Sched, rank: u64, rem: u64, n: u64) -> Option<u64> {
    if rank >= 2 * rem {
        return Some(rank - rem);
    }
    let lhalf = n / 2;
    let rhalf = n - lhalf;
    if is_odd(rank) {
        s.sendrecv(rank - 1, lhalf, rank - 1, rhalf, rhalf);
        s.send(rank - 1, rhalf);
        None
    } else {
        s.sendrecv(rank + 1, rhalf, rank + 1, lhalf, lhalf);
        s.recv(rank + 1, rhalf, 0);
        Some(rank / 2)
    }
}

/// Step 2 of Open MPI's Rabenseifner: the recursive vector halving,
/// distance doubling reduce-scatter among the power of two.
pub(super) fn ompi_halving(
    s: &mut Sched,
    rank: u64,
    vrank: u64,
    pof2: u64,
    rem: u64,
    n: u64,
) -> OmpiHalving {
    let mut h = OmpiHalving {
        rcount: Vec::new(),
        scount: Vec::new(),
    };
    let mut wsize = n;
    let mut mask = 1u64;
    while mask < pof2 {
        let vdest = vrank ^ mask;
        let dest = if vdest < rem { vdest * 2 } else { vdest + rem };
        let (rcount, scount) = if rank < dest {
            (wsize / 2, wsize - wsize / 2)
        } else {
            (wsize - wsize / 2, wsize / 2)
        };
        s.sendrecv(dest, scount, dest, rcount, rcount);
        h.rcount.push(rcount);
        h.scount.push(scount);
        wsize = rcount;
        mask <<= 1;
    }
    h
}

/// Open MPI `ompi_coll_base_reduce_intra_redscat_gather` (coll_base_reduce.c):
/// the fold and halving above, then a binomial gather of the pieces to the
/// root by recursive vector doubling (rank 0 hands its piece to the root
/// first when the root dropped out in the fold). Falls back to the linear
/// reduce when `count < pof2`, as the library does.
fn ompi_rabenseifner(c: &Ctx, n: u64) -> Vec<Step> {
    let (p, rank, root) = (c.size, c.rank, c.root);
    let pof2 = pof2_floor(p);
    if pof2 < 2 || n < pof2 {
        return linear(c, n);
    }
    let nsteps = log2(pof2) as usize;
    let rem = p - pof2;
    let mut s = Sched::new();
    let mut vrank = ompi_fold(&mut s, rank, rem, n);
    let mut h = match vrank {
        Some(v) => ompi_halving(&mut s, rank, v, pof2, rem, n),
        None => OmpiHalving {
            rcount: Vec::new(),
            scount: Vec::new(),
        },
    };
    let vroot = if root < 2 * rem {
        if is_odd(root) {
            if rank == root {
                // The root takes over virtual rank 0: its windows are the
                // left halves all the way down.
                let mut wsize = n;
                h.rcount.clear();
                h.scount.clear();
                for _ in 0..nsteps {
                    h.rcount.push(wsize / 2);
                    h.scount.push(wsize - wsize / 2);
                    wsize /= 2;
                }
                s.recv(0, h.rcount[nsteps - 1], 0);
                vrank = Some(0);
            } else if vrank == Some(0) {
                s.send(root, h.rcount[nsteps - 1]);
                vrank = None;
            }
            0
        } else {
            root / 2
        }
    } else {
        root - rem
    };
    if let Some(v) = vrank {
        let mut step = nsteps - 1;
        let mut mask = pof2 >> 1;
        while mask > 0 {
            let vdest = v ^ mask;
            let mut dest = if vdest < rem { vdest * 2 } else { vdest + rem };
            if vdest == 0 && root < 2 * rem && is_odd(root) {
                dest = root;
            }
            let sh = step as u32;
            if vdest >> sh << sh == vroot >> sh << sh {
                s.send(dest, h.rcount[step]);
                break;
            }
            s.recv(dest, h.scount[step], 0);
            mask >>= 1;
            step = step.saturating_sub(1);
        }
    }
    s.finish()
}
