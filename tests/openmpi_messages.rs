//! parsim's Open MPI 5 collectives against the real library's messages.
//!
//! `validation/openmpi-coll/ompi-5.0.11/` holds what Open MPI 5.0.11 sent
//! in one call of each of 13 collectives at 19 sizes (4 B to 1 MiB), every
//! rank's messages and bytes to every peer, counted by the library's own
//! pml monitoring (`validation/openmpi-coll/measure.sh`, `mon.c`): on one
//! node at 2 to 64 ranks (`coll/tuned`'s fixed rules: `han` declines a
//! communicator on one node), on two nodes at 1 to 32 ranks per node and
//! on three at 1 to 8, balanced and (but at 32 per node) one rank short on
//! the last node (`han` over `tuned`); the rooted collectives at root 0, and in the files named
//! `-root<R>` at root R.
//! Each call's schedules under `openmpi-5`, as the engine builds them
//! (`coll::select`, `coll::schedule_opts`), must send exactly those
//! messages: the same (source, destination) pairs, the same number of
//! messages and bytes on each.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use sim_core::coll::{self, CollCall, CollConfig, Counts, Library, NodeLayout, Op};
use sim_core::ir::CollKind;

/// (source, destination) -> (messages, bytes).
type Matrix = BTreeMap<(u32, u32), (u64, u64)>;

/// The data directory of one layout family.
fn data(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("validation/openmpi-coll/ompi-5.0.11")
        .join(dir)
}

/// The collectives as `mon.c` names and calls them: reductions of floats
/// (`elem` 4), the rest of chars.
fn kind_of(name: &str) -> (CollKind, u64) {
    let kind = match name {
        "allreduce" => CollKind::Allreduce,
        "reduce" => CollKind::Reduce,
        "bcast" => CollKind::Bcast,
        "barrier" => CollKind::Barrier,
        "allgather" => CollKind::Allgather,
        "alltoall" => CollKind::Alltoall,
        "gather" => CollKind::Gather,
        "scatter" => CollKind::Scatter,
        "reduce_scatter" => CollKind::ReduceScatter,
        "allgatherv" => CollKind::Allgatherv,
        "alltoallv" => CollKind::Alltoallv,
        "scan" => CollKind::Scan,
        "exscan" => CollKind::Exscan,
        other => panic!("mon.c has no collective {other}"),
    };
    let elem = match kind {
        CollKind::Allreduce
        | CollKind::Reduce
        | CollKind::ReduceScatter
        | CollKind::Scan
        | CollKind::Exscan => 4,
        _ => 1,
    };
    (kind, elem)
}

/// One measured file: every call it made ("# calls: kind@bytes ...", the
/// calls that sent nothing included) with its matrix.
fn read(path: &Path) -> Vec<((String, u64), Matrix)> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).expect("the measured file exists"))
        .read_to_string(&mut text)
        .expect("gzip text");
    let mut calls: Vec<((String, u64), Matrix)> = Vec::new();
    let mut lines = text.lines();
    let header = lines.next().expect("a header line");
    let list = header
        .strip_prefix("# calls: ")
        .expect("the header lists the calls");
    for item in list.split_whitespace() {
        let (k, n) = item.split_once('@').expect("kind@bytes");
        calls.push(((k.to_string(), n.parse().expect("bytes")), Matrix::new()));
    }
    let index: BTreeMap<(String, u64), usize> = calls
        .iter()
        .enumerate()
        .map(|(i, (key, _))| (key.clone(), i))
        .collect();
    for line in lines {
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f.len(), 6, "{}: {line}", path.display());
        let num = |s: &str| -> u64 { s.parse().expect("a number") };
        let key = (f[0].to_string(), num(f[1]));
        let i = index[&key];
        let (src, dst) = (num(f[2]) as u32, num(f[3]) as u32);
        calls[i].1.insert((src, dst), (num(f[4]), num(f[5])));
    }
    calls
}

/// The collectives `mon.c` calls with `$MON_ROOT` as their root.
fn rooted(kind: CollKind) -> bool {
    matches!(
        kind,
        CollKind::Bcast | CollKind::Reduce | CollKind::Gather | CollKind::Scatter
    )
}

/// What parsim's `openmpi-5` schedules send in the call, on `p` ranks
/// placed in blocks of `rpn` per node, the rooted collectives at `root`.
fn simulated(kind: CollKind, elem: u64, bytes: u64, p: u32, rpn: u32, root: u32) -> Matrix {
    let nodes: Vec<u32> = (0..p).map(|r| r / rpn).collect();
    let layout = NodeLayout::new(&nodes);
    let cfg = CollConfig::new(Library::OpenMpi5);
    let mut m = Matrix::new();
    for rank in 0..p {
        let call = CollCall {
            kind,
            rank,
            size: p,
            root: if rooted(kind) { root } else { 0 },
            counts: Counts::Uniform(if kind == CollKind::Barrier { 0 } else { bytes }),
            elem,
            layout: Some(&layout),
        };
        let alg = coll::select(&cfg, &call);
        let steps = coll::schedule_opts(cfg.library, cfg.temporaries, alg, &call)
            .unwrap_or_else(|e| panic!("{kind:?} {bytes} B on {p} ranks: {e}"));
        for step in &steps {
            for op in &step.ops {
                if let Op::Send { peer, bytes, .. } = *op {
                    let e = m.entry((rank, peer)).or_default();
                    e.0 += 1;
                    e.1 += bytes;
                }
            }
        }
    }
    m
}

/// Compares every call of every file under `dir`; returns how many calls.
fn compare(dir: &str) -> usize {
    let mut files: Vec<PathBuf> = std::fs::read_dir(data(dir))
        .expect("the data directory exists")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "gz"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no measured files in {dir}");
    let mut calls = 0;
    let mut misses = Vec::new();
    for path in &files {
        // p<P>.txt.gz (one node) or p<P>-rpn<K>.txt.gz, either with
        // -root<R> before the extension
        let file = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".txt.gz"))
            .and_then(|n| n.strip_prefix('p'))
            .expect("p<P>[-rpn<K>][-root<R>].txt.gz");
        let (stem, root) = match file.split_once("-root") {
            Some((stem, r)) => (stem, r.parse::<u32>().expect("R")),
            None => (file, 0),
        };
        let (p, rpn) = match stem.split_once("-rpn") {
            Some((p, k)) => (p.parse().expect("P"), k.parse().expect("K")),
            None => {
                let p: u32 = stem.parse().expect("P");
                (p, p)
            }
        };
        for ((name, bytes), measured) in read(path) {
            let (kind, elem) = kind_of(&name);
            let got = simulated(kind, elem, bytes, p, rpn, root);
            calls += 1;
            if got != measured {
                let total = |m: &Matrix| m.values().fold((0, 0), |(a, b), &(c, d)| (a + c, b + d));
                misses.push(format!(
                    "{p} ranks, {rpn} per node, root {root}, {name} {bytes} B: measured (messages, bytes) {:?}, parsim {:?}",
                    total(&measured),
                    total(&got)
                ));
            }
        }
    }
    assert!(
        misses.is_empty(),
        "{} of {calls} calls differ from Open MPI 5.0.11's messages:\n{}",
        misses.len(),
        misses.join("\n")
    );
    calls
}

/// Calls per file: 13 collectives x 19 sizes.
const CALLS: usize = 13 * 19;

#[test]
fn one_node_calls_send_what_open_mpi_5_sends() {
    // 19 rank counts at root 0; 3, 7, 8, 16, 33, 64 ranks at root 2
    assert_eq!(compare("one-node"), (19 + 6) * CALLS);
}

#[test]
fn two_node_calls_send_what_open_mpi_5_sends() {
    // 1, 2, 3, 4, 8, 16 ranks per node, and one fewer on the second node,
    // and 32 per node, at root 0; 2, 3, 4, 8 per node (and one fewer) at
    // root 3
    assert_eq!(compare("two-nodes"), (12 + 7) * CALLS);
}

#[test]
fn three_node_calls_send_what_open_mpi_5_sends() {
    // 1, 2, 3, 4, 8 ranks per node, and one fewer on the third node
    assert_eq!(compare("three-nodes"), 9 * CALLS);
}
