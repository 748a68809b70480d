//! Intel MPI's default collective selection (`intelmpi-2019`,
//! `intelmpi-2021`), from the binary tuning table the library loads.
//!
//! Intel MPI is closed source; its defaults are data. Intel MPI 2021.1 to
//! 2021.13 load `etc/tuning_generic_shm-ofi.dat` on a CPU without a file of
//! its own (Broadwell, Haswell, AMD: `I_MPI_DEBUG` prints `Load tuning
//! file`), and Intel MPI 2019 Update 4 ships the same bytes as
//! `etc/tuning_skx_shm-ofi.dat`, its Skylake table (md5 `954a28b6...`,
//! `docs/sources/intelmpi-tuning.md`). `scripts/intelmpi/impi_tuning.py`
//! decodes the file; `scripts/intelmpi/gen_table.py` turns its composition
//! level into `intelmpi/table.rs`, mapping every leaf to a [`Pick`].
//!
//! The table is a tree: collective, ranks per node (`ppn`), communicator
//! size, message size, each a list of keys. A call takes, at each level,
//! the first key at least its own value (`-1` and `2147483647` match
//! anything; past the last key the last one), as measured on Intel MPI
//! 2021.13 (`scripts/intelmpi/lookup_experiment.sh`: JSON tunings whose
//! rows pick algorithms that put different byte counts on the wire). The
//! message size is the byte count parsim compares for the collective
//! ([`Counts::single`]: the whole buffer of bcast, reduce and allreduce,
//! the per-rank block of allgather, alltoall, gather and scatter), `ppn`
//! the most ranks the communicator has on one node (1 without a layout).
//!
//! A leaf is a composition and its parts' algorithms. Where it names an
//! algorithm parsim has, that algorithm runs; node-aware compositions run as
//! MPICH 4's [`Algorithm::Ch4Alpha`] / [`Algorithm::Ch4Beta`] (the same
//! structure: node, node leaders, node), whose parts MPICH 4's rules choose,
//! not Intel's netmod and shm tables. Where a leaf runs the netmod on the
//! whole communicator and leaves the algorithm to the netmod table
//! ([`Pick::Netmod`]: allreduce, bcast, reduce), that table's leaf decides,
//! its algorithm ids told apart by the bytes each rank sends; where it
//! leaves it to the shm table, or names something not modelled
//! ([`Pick::Mpir`]), MPICH 4's MPIR choice on the whole communicator stands
//! in. Algorithms whose pattern is not public
//! (Shumilin's, Plum's) run as the closest classic one. Each substitution
//! is listed in `docs/collectives.md` ("Intel MPI selection").

use super::{Algorithm, CollCall, mpich4};
use crate::ir::CollKind;

mod table;

/// What a leaf of Intel's table runs in parsim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Pick {
    /// An algorithm parsim has (a substitute where the leaf's is not
    /// modelled; see the generator's map).
    Alg(Algorithm),
    /// The leaf runs the netmod on the whole communicator and leaves the
    /// algorithm to Intel's netmod table (allreduce and reduce `2 -1`, bcast
    /// `3 -1`), which is translated too (`NET_*` in the table).
    Netmod,
    /// The leaf defers to Intel's shm table, to the netmod's `auto`, names a
    /// composition or netmod algorithm parsim does not model, or the netmod
    /// table has no translation for the collective: MPICH 4's MPIR choice
    /// for the whole communicator.
    Mpir,
}

/// The rows of one communicator size: `(bound, pick)` with ascending
/// message-size bounds, `u64::MAX` for "any".
#[derive(Debug)]
pub(super) struct Comm {
    pub np: u32,
    pub sizes: &'static [(u64, Pick)],
}

/// The rows of one ranks-per-node value, communicator sizes ascending.
#[derive(Debug)]
pub(super) struct Ppn {
    pub ppn: u32,
    pub comms: &'static [Comm],
}

/// The table of `kind`, for the collectives it is translated for.
fn table_of(kind: CollKind) -> Option<&'static [Ppn]> {
    Some(match kind {
        CollKind::Allgather => table::ALLGATHER,
        CollKind::Allreduce => table::ALLREDUCE,
        CollKind::Alltoall => table::ALLTOALL,
        CollKind::Barrier => table::BARRIER,
        CollKind::Bcast => table::BCAST,
        CollKind::Gather => table::GATHER,
        CollKind::Reduce => table::REDUCE,
        CollKind::Scatter => table::SCATTER,
        _ => return None,
    })
}

/// The netmod-level table of `kind`, where it is translated.
fn netmod_table_of(kind: CollKind) -> Option<&'static [Ppn]> {
    Some(match kind {
        CollKind::Allreduce => table::NET_ALLREDUCE,
        CollKind::Bcast => table::NET_BCAST,
        CollKind::Reduce => table::NET_REDUCE,
        _ => return None,
    })
}

/// The first item whose key is at least `v`, else the last (`None` only
/// for an empty list, which the generator never writes).
fn first_at_least<T>(items: &[T], key: impl Fn(&T) -> u64, v: u64) -> Option<&T> {
    items.iter().find(|t| key(t) >= v).or(items.last())
}

/// The leaf for a call of `kind` with `ppn` ranks per node, `p` ranks and
/// `n` bytes; `None` for a collective whose table is not translated.
pub(super) fn lookup(kind: CollKind, ppn: u32, p: u32, n: u64) -> Option<Pick> {
    find(table_of(kind)?, ppn, p, n)
}

/// The netmod table's leaf for the same call.
fn lookup_netmod(kind: CollKind, ppn: u32, p: u32, n: u64) -> Option<Pick> {
    find(netmod_table_of(kind)?, ppn, p, n)
}

/// The leaf of `rows` for `ppn`, `p`, `n` (see the module documentation).
fn find(rows: &[Ppn], ppn: u32, p: u32, n: u64) -> Option<Pick> {
    let by_ppn = first_at_least(rows, |r| u64::from(r.ppn), u64::from(ppn))?;
    let comm = first_at_least(by_ppn.comms, |c| u64::from(c.np), u64::from(p))?;
    let (_, pick) = first_at_least(comm.sizes, |s| s.0, n)?;
    Some(*pick)
}

/// The algorithm Intel MPI's default table picks for `call` (see the module
/// documentation); collectives outside the table (allgatherv, alltoallv,
/// gatherv, scatterv, reduce_scatter, scan, exscan) take MPICH 4's MPIR
/// choice.
pub(super) fn select(call: &CollCall<'_>) -> Algorithm {
    let ppn = call.layout.map_or(1, |l| l.max_per_node().max(1));
    let n = call.counts.single();
    let mpir = || mpich4::mpir_select(call.kind, u64::from(call.size), call.counts, call.elem);
    let pick = match lookup(call.kind, ppn, call.size, n) {
        Some(Pick::Netmod) => lookup_netmod(call.kind, ppn, call.size, n),
        other => other,
    };
    match pick {
        Some(Pick::Alg(alg)) => alg,
        Some(Pick::Netmod | Pick::Mpir) | None => mpir(),
    }
}

/// Every `(ppn, comm_size, message-size bounds)` row of `kind`'s table with
/// finite keys (for the tests that run each row's choices).
#[cfg(test)]
pub(super) fn rows(kind: CollKind) -> Vec<(u32, u32, Vec<u64>)> {
    let mut out = Vec::new();
    for r in table_of(kind)
        .unwrap_or(&[])
        .iter()
        .chain(netmod_table_of(kind).unwrap_or(&[]))
    {
        for c in r.comms {
            if r.ppn != u32::MAX && c.np != u32::MAX {
                out.push((r.ppn, c.np, c.sizes.iter().map(|s| s.0).collect()));
            }
        }
    }
    out
}
