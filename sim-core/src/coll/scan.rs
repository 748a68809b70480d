//! Scan and exscan (commutative operation).

use super::util::{Ctx, Sched};
use super::{Algorithm, Step};
use crate::ir::CollKind;

pub(super) fn schedule(alg: Algorithm, c: &Ctx) -> Result<Vec<Step>, String> {
    let n = c.bytes()?;
    let exclusive = c.kind == CollKind::Exscan;
    Ok(match alg {
        Algorithm::RecursiveDoubling => recursive_doubling(c, n, exclusive),
        Algorithm::Linear => linear(c, n, exclusive),
        other => {
            return Err(format!(
                "{} has no algorithm \"{}\"",
                c.kind.name(),
                other.name()
            ));
        }
    })
}

/// MPICH `MPIR_Scan_intra_recursive_doubling` (scan_intra_recursive_doubling.c)
/// and `MPIR_Exscan_intra_recursive_doubling`: in step k exchange the partial
/// scan with `rank ^ 2^k` (if it exists). Scan: a rank above its partner
/// combines the received data into its partial scan and its result (2n
/// bytes), below into the partial scan only (n). Exscan: a rank above its
/// partner combines into the partial scan, and into its result except the
/// first time (a copy); below only into the partial scan.
fn recursive_doubling(c: &Ctx, n: u64, exclusive: bool) -> Vec<Step> {
    let (p, r) = (c.size, c.rank);
    let mut s = Sched::new();
    let mut have_result = false;
    let mut mask = 1u64;
    while mask < p {
        let dst = r ^ mask;
        if dst < p {
            let reduce = if r > dst {
                if exclusive {
                    let extra = if have_result { n } else { 0 };
                    have_result = true;
                    n + extra
                } else {
                    2 * n
                }
            } else {
                n
            };
            s.sendrecv(dst, n, dst, n, reduce);
        }
        mask <<= 1;
    }
    s.finish()
}

/// Open MPI `mca_coll_basic_scan_intra` / `mca_coll_basic_exscan_intra`
/// (the defaults: `coll/tuned` has no fixed rule for scan and exscan): a
/// chain; rank i receives the prefix from i-1, combines it, and sends its
/// prefix to i+1 (exscan: rank 0 only sends its data, the last rank only
/// receives).
fn linear(c: &Ctx, n: u64, exclusive: bool) -> Vec<Step> {
    let (p, r) = (c.size, c.rank);
    let mut s = Sched::new();
    if r > 0 {
        let last = r == p - 1;
        let reduce = if exclusive && last { 0 } else { n };
        s.recv(r - 1, n, reduce);
    }
    if r + 1 < p {
        s.send(r + 1, n);
    }
    s.finish()
}
