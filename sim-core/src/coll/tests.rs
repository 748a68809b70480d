//! Tests of the schedules (an abstract matcher that runs all ranks of a
//! call) and of the selectors (tables derived from the libraries' sources).

use super::*;

/// What running all ranks' schedules produced.
#[derive(Debug)]
struct Outcome {
    /// Per rank: the set of ranks whose initial data can have reached it
    /// (causal influence through the messages).
    knows: Vec<Vec<bool>>,
    /// Per rank: bytes received (the senders' sizes).
    received: Vec<u64>,
    /// Per rank: messages sent.
    sent_msgs: Vec<u64>,
    /// Per rank: bytes combined by reductions.
    reduced: Vec<u64>,
    /// Per rank: the schedule.
    steps: Vec<Vec<Step>>,
}

/// Where one operation sits: its step.
#[derive(Debug, Clone, Copy)]
struct At {
    step: usize,
}

/// Runs the schedules of all ranks: checks that the k-th send from a to b
/// matches the k-th receive at b from a with the same size (or
/// [`ANY_SIZE`]), that every operation is matched, and that all ranks finish
/// when a send completes only once its receive is posted and a receive once
/// its send is posted (no buffering at all: the strictest case, so the
/// schedules finish under any buffering).
fn simulate(steps: Vec<Vec<Step>>) -> Result<Outcome, String> {
    let p = steps.len();
    // Per (sender, receiver): the sends and receives in program order;
    // shared-memory flags and their waits (`Op::Flag`, `Op::Await`) in
    // lists of their own (the engine matches them by a tag of their own).
    let mut sends: Vec<Vec<Vec<(At, u64)>>> = vec![vec![Vec::new(); p]; p];
    let mut recvs: Vec<Vec<Vec<(At, u64)>>> = vec![vec![Vec::new(); p]; p];
    let mut fsends: Vec<Vec<Vec<(At, u64)>>> = vec![vec![Vec::new(); p]; p];
    let mut frecvs: Vec<Vec<Vec<(At, u64)>>> = vec![vec![Vec::new(); p]; p];
    for (r, sched) in steps.iter().enumerate() {
        for (si, step) in sched.iter().enumerate() {
            for op in &step.ops {
                let at = At { step: si };
                let (q, bytes, list) = match *op {
                    Op::Send { peer, bytes, .. } => (peer as usize, bytes, &mut sends),
                    Op::Recv { peer, bytes } => (peer as usize, bytes, &mut recvs),
                    Op::Flag { peer } => (peer as usize, 0, &mut fsends),
                    Op::Await { peer } => (peer as usize, 0, &mut frecvs),
                    Op::Copy { .. }
                    | Op::Datatype { .. }
                    | Op::Pack { .. }
                    | Op::Alloc { .. }
                    | Op::Free { .. } => continue,
                };
                // A rank may send to itself (MPICH's scattered alltoall
                // does); under the strict rule below its receive must then
                // be posted in the same step or an earlier one.
                let to_itself_allowed = matches!(op, Op::Send { .. } | Op::Recv { .. });
                if q >= p || (q == r && !to_itself_allowed) {
                    return Err(format!("rank {r} step {si}: {op:?}"));
                }
                match op {
                    Op::Send { .. } | Op::Flag { .. } => list[r][q].push((at, bytes)),
                    _ => list[q][r].push((at, bytes)),
                }
            }
        }
    }
    // Partner of each op: (step of the partner op, bytes of the message).
    // Indexed by (rank, step, op index).
    let mut partner: Vec<Vec<Vec<(usize, usize, u64)>>> = steps
        .iter()
        .map(|s| s.iter().map(|st| vec![(0, 0, 0); st.ops.len()]).collect())
        .collect();
    for (flag, sends, recvs) in [(false, &sends, &recvs), (true, &fsends, &frecvs)] {
        for a in 0..p {
            for b in 0..p {
                let (ss, rs) = (&sends[a][b], &recvs[a][b]);
                if ss.len() != rs.len() {
                    return Err(format!(
                        "{} {} from {a} to {b} but {} {}",
                        ss.len(),
                        if flag { "flags" } else { "sends" },
                        rs.len(),
                        if flag { "waits" } else { "receives" },
                    ));
                }
                for (k, (&(sat, sbytes), &(rat, rbytes))) in ss.iter().zip(rs).enumerate() {
                    if rbytes != ANY_SIZE && rbytes != sbytes {
                        return Err(format!(
                            "message {k} from {a} to {b}: {sbytes} bytes sent, {rbytes} expected \
                         (sender step {}, receiver step {})",
                            sat.step, rat.step
                        ));
                    }
                    // Find op indices.
                    let si = op_index(
                        &steps[a][sat.step],
                        b,
                        true,
                        flag,
                        &sends[a][b],
                        k,
                        sat.step,
                    );
                    let ri = op_index(
                        &steps[b][rat.step],
                        a,
                        false,
                        flag,
                        &recvs[a][b],
                        k,
                        rat.step,
                    );
                    partner[a][sat.step][si] = (b, rat.step, sbytes);
                    partner[b][rat.step][ri] = (a, sat.step, sbytes);
                }
            }
        }
    }
    let mut pc = vec![0usize; p];
    let mut knows: Vec<Vec<bool>> = (0..p).map(|r| (0..p).map(|q| q == r).collect()).collect();
    // Knowledge of each rank when it posted each of its steps.
    let mut snapshot: Vec<Vec<Vec<bool>>> =
        steps.iter().map(|s| vec![Vec::new(); s.len()]).collect();
    for r in 0..p {
        if !steps[r].is_empty() {
            snapshot[r][0] = knows[r].clone();
        }
    }
    let mut received = vec![0u64; p];
    let mut sent_msgs = vec![0u64; p];
    let mut reduced = vec![0u64; p];
    loop {
        let mut progress = false;
        for r in 0..p {
            while pc[r] < steps[r].len() {
                let si = pc[r];
                let step = &steps[r][si];
                // A flag is a store: it never waits for its reader. A copy
                // has no partner.
                let ready = step.ops.iter().enumerate().all(|(oi, op)| {
                    let (q, qs, _) = partner[r][si][oi];
                    matches!(
                        op,
                        Op::Flag { .. }
                            | Op::Copy { .. }
                            | Op::Datatype { .. }
                            | Op::Pack { .. }
                            | Op::Alloc { .. }
                            | Op::Free { .. }
                    ) || pc[q] >= qs
                });
                if !ready {
                    break;
                }
                for (oi, op) in step.ops.iter().enumerate() {
                    let (q, qs, bytes) = partner[r][si][oi];
                    match op {
                        Op::Recv { .. } | Op::Await { .. } => {
                            received[r] += bytes;
                            let snap = snapshot[q][qs].clone();
                            for (k, v) in snap.into_iter().enumerate() {
                                knows[r][k] |= v;
                            }
                        }
                        Op::Send { .. } => sent_msgs[r] += 1,
                        // Data through a shared cell: what a copy moves
                        // counts as received (the flow itself goes with
                        // the flags).
                        Op::Copy { bytes } => received[r] += bytes,
                        Op::Flag { .. }
                        | Op::Datatype { .. }
                        | Op::Pack { .. }
                        | Op::Alloc { .. }
                        | Op::Free { .. } => {}
                    }
                }
                reduced[r] += step.reduce_bytes;
                pc[r] += 1;
                if pc[r] < steps[r].len() {
                    snapshot[r][pc[r]] = knows[r].clone();
                }
                progress = true;
            }
        }
        if !progress {
            break;
        }
    }
    let stuck: Vec<usize> = (0..p).filter(|&r| pc[r] < steps[r].len()).collect();
    if !stuck.is_empty() {
        let detail: Vec<String> = stuck
            .iter()
            .map(|&r| format!("rank {r} at step {} {:?}", pc[r], steps[r][pc[r]].ops))
            .collect();
        return Err(format!("deadlock: {}", detail.join("; ")));
    }
    Ok(Outcome {
        knows,
        received,
        sent_msgs,
        reduced,
        steps,
    })
}

/// The index in `step` of the k-th op of a pair, found by counting the
/// pair's ops of the same direction in earlier steps.
fn op_index(
    step: &Step,
    peer: usize,
    is_send: bool,
    flag: bool,
    list: &[(At, u64)],
    k: usize,
    si: usize,
) -> usize {
    // Ops of this pair and direction in the same step before the k-th.
    let before = list[..k].iter().filter(|(at, _)| at.step == si).count();
    let mut seen = 0;
    for (i, op) in step.ops.iter().enumerate() {
        let hit = match *op {
            Op::Send { peer: q, .. } => !flag && is_send && q as usize == peer,
            Op::Recv { peer: q, .. } => !flag && !is_send && q as usize == peer,
            Op::Flag { peer: q } => flag && is_send && q as usize == peer,
            Op::Await { peer: q } => flag && !is_send && q as usize == peer,
            Op::Copy { .. }
            | Op::Datatype { .. }
            | Op::Pack { .. }
            | Op::Alloc { .. }
            | Op::Free { .. } => false,
        };
        if hit {
            if seen == before {
                return i;
            }
            seen += 1;
        }
    }
    unreachable!("op of a listed pair is in its step")
}

/// All ranks' schedules of one call; `counts(rank)` gives each rank's view.
fn schedules<'a>(
    alg: Algorithm,
    kind: CollKind,
    p: u32,
    root: u32,
    counts: &dyn Fn(u32) -> Counts<'a>,
) -> Result<Vec<Vec<Step>>, String> {
    schedules_in(Library::OpenMpi5, alg, kind, p, root, counts)
}

/// [`schedules`] with the inner collectives of composite algorithms chosen
/// by `library`'s rules.
fn schedules_in<'a>(
    library: Library,
    alg: Algorithm,
    kind: CollKind,
    p: u32,
    root: u32,
    counts: &dyn Fn(u32) -> Counts<'a>,
) -> Result<Vec<Vec<Step>>, String> {
    (0..p)
        .map(|rank| {
            schedule_in(
                library,
                alg,
                &CollCall {
                    kind,
                    rank,
                    size: p,
                    root,
                    counts: counts(rank),
                    elem: 1,
                    layout: None,
                },
            )
        })
        .collect()
}

fn run<'a>(
    alg: Algorithm,
    kind: CollKind,
    p: u32,
    root: u32,
    counts: &dyn Fn(u32) -> Counts<'a>,
) -> Outcome {
    run_in(Library::OpenMpi5, alg, kind, p, root, counts)
}

fn run_in<'a>(
    library: Library,
    alg: Algorithm,
    kind: CollKind,
    p: u32,
    root: u32,
    counts: &dyn Fn(u32) -> Counts<'a>,
) -> Outcome {
    let steps = schedules_in(library, alg, kind, p, root, counts)
        .unwrap_or_else(|e| panic!("{kind:?} {alg} p={p} root={root}: schedule: {e}"));
    for (r, s) in steps.iter().enumerate() {
        assert_compact_is(s, p, &format!("{kind:?} {alg} p={p} root={root} rank {r}"));
    }
    simulate(steps).unwrap_or_else(|e| panic!("{kind:?} {alg} p={p} root={root}: {e}"))
}

/// The invariant of [`Compact`]: it gives back every step of `steps`.
fn assert_compact_is(steps: &[Step], p: u32, ctx: &str) {
    let c = Compact::from_steps(steps, p);
    assert_eq!(c.len(), steps.len(), "{ctx}: length");
    let mut at = c.cursor(0);
    for (i, step) in steps.iter().enumerate() {
        assert_eq!(at, c.cursor(i), "{ctx}: the cursor of step {i}");
        let ops: Vec<Op> = c.ops(at).collect();
        assert_eq!(ops, step.ops, "{ctx}: step {i}");
        assert_eq!(c.reduce_bytes(at), step.reduce_bytes, "{ctx}: step {i}");
        c.advance(&mut at);
    }
    assert_eq!(at.pos, steps.len(), "{ctx}: the end");
}

#[test]
fn compact_schedules_are_one_run_per_ring_and_exchange() {
    let call = |kind, rank| CollCall {
        kind,
        rank,
        size: 9216,
        root: 0,
        counts: Counts::Uniform(16),
        elem: 1,
        layout: None,
    };
    for (kind, alg, runs) in [
        (CollKind::Allgather, Algorithm::Ring, 1),
        (CollKind::Alltoall, Algorithm::OmpiPairwise, 1),
        // MPICH pairs by XOR only on powers of two.
        (CollKind::Alltoall, Algorithm::Pairwise, 1),
    ] {
        for rank in [0, 1, 4607, 9215] {
            let steps = schedule(alg, &call(kind, rank)).expect("a schedule");
            assert_eq!(steps.len(), 9215, "{kind:?} {alg}");
            let c = Compact::from_steps(&steps, 9216);
            assert_eq!(c.runs(), runs, "{kind:?} {alg} rank {rank}");
            assert_compact_is(&steps, 9216, &format!("{kind:?} {alg} rank {rank}"));
        }
    }
}

const SIZES: [u32; 20] = [
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 32, 64, 24,
];

fn roots(p: u32) -> Vec<u32> {
    let mut r = vec![0, 1 % p, p - 1, p / 2, (p / 3 + 1) % p];
    r.sort_unstable();
    r.dedup();
    r
}

fn all_know(o: &Outcome, who: usize, of: impl Iterator<Item = usize>) -> bool {
    of.into_iter().all(|q| o.knows[who][q])
}

/// The textbook data-flow properties of each collective.
#[expect(
    clippy::needless_range_loop,
    reason = "a rank indexes several per-rank vectors"
)]
fn check_flow(
    kind: CollKind,
    alg: Algorithm,
    p: usize,
    root: usize,
    n: u64,
    counts: &[u64],
    o: &Outcome,
) {
    let ctx = format!("{kind:?} {alg} p={p} root={root} n={n}");
    let total: u64 = counts.iter().sum();
    match kind {
        CollKind::Barrier | CollKind::Allreduce | CollKind::Alltoall | CollKind::Alltoallv => {
            for r in 0..p {
                assert!(all_know(o, r, 0..p), "{ctx}: rank {r} misses someone");
            }
        }
        CollKind::Allgather | CollKind::Allgatherv => {
            // Everyone has heard from every rank with a non-empty block.
            for r in 0..p {
                let nonempty = (0..p).filter(|&q| counts[q] > 0);
                assert!(all_know(o, r, nonempty), "{ctx}: rank {r} misses someone");
            }
        }
        CollKind::ReduceScatter => {
            // A non-empty result block combines everyone's data.
            for r in (0..p).filter(|&r| counts[r] > 0) {
                assert!(all_know(o, r, 0..p), "{ctx}: rank {r} misses someone");
            }
        }
        CollKind::Bcast | CollKind::Scatter | CollKind::Scatterv => {
            for r in 0..p {
                assert!(
                    o.knows[r][root],
                    "{ctx}: rank {r} never heard from the root"
                );
            }
        }
        CollKind::Reduce | CollKind::Gather | CollKind::Gatherv => {
            assert!(all_know(o, root, 0..p), "{ctx}: the root misses someone");
        }
        CollKind::Scan => {
            for r in 0..p {
                assert!(all_know(o, r, 0..=r), "{ctx}: rank {r} misses a lower rank");
            }
        }
        CollKind::Exscan => {
            for r in 0..p {
                assert!(all_know(o, r, 0..r), "{ctx}: rank {r} misses a lower rank");
            }
        }
    }
    // Byte totals.
    match kind {
        CollKind::Bcast => {
            for r in (0..p).filter(|&r| r != root) {
                assert!(
                    o.received[r] >= n,
                    "{ctx}: rank {r} received {} < {n}",
                    o.received[r]
                );
            }
        }
        CollKind::Reduce => {
            let sum: u64 = o.reduced.iter().sum();
            assert_eq!(sum, (p as u64 - 1) * n, "{ctx}: combined bytes");
        }
        CollKind::Allreduce => {
            let sum: u64 = o.reduced.iter().sum();
            assert!(sum >= (p as u64 - 1) * n, "{ctx}: combined {sum} bytes");
        }
        CollKind::Scan => {
            for r in 1..p {
                assert!(
                    o.reduced[r] >= n,
                    "{ctx}: rank {r} combined {}",
                    o.reduced[r]
                );
            }
        }
        CollKind::Gather => {
            assert_eq!(o.received[root], (p as u64 - 1) * n, "{ctx}: root received");
        }
        CollKind::Gatherv => {
            assert_eq!(
                o.received[root],
                total - counts[root],
                "{ctx}: root received"
            );
        }
        CollKind::Scatter => {
            for r in (0..p).filter(|&r| r != root) {
                assert!(o.received[r] >= n, "{ctx}: rank {r} received too little");
            }
        }
        CollKind::Scatterv => {
            for r in (0..p).filter(|&r| r != root) {
                assert_eq!(o.received[r], counts[r], "{ctx}: rank {r} received");
            }
        }
        CollKind::Allgather | CollKind::Allgatherv => {
            for r in 0..p {
                assert!(
                    o.received[r] >= total - counts[r],
                    "{ctx}: rank {r} received {} < {}",
                    o.received[r],
                    total - counts[r]
                );
            }
        }
        CollKind::Alltoall => {
            for r in 0..p {
                assert!(
                    o.received[r] >= (p as u64 - 1) * n,
                    "{ctx}: rank {r} received"
                );
            }
        }
        CollKind::ReduceScatter => {
            let sum: u64 = o.reduced.iter().sum();
            assert!(
                sum >= total - counts.iter().max().copied().unwrap_or(0),
                "{ctx}: combined {sum}"
            );
        }
        _ => {}
    }
}

fn uniform_counts(kind: CollKind, p: usize, n: u64) -> Vec<u64> {
    match kind {
        CollKind::Bcast
        | CollKind::Reduce
        | CollKind::Allreduce
        | CollKind::Scan
        | CollKind::Exscan => {
            vec![n; p]
        }
        _ => vec![n; p],
    }
}

/// Whether `alg` runs on `p` ranks (Open MPI's two_procs on 2 only; a
/// forced one elsewhere is refused, as the library refuses it).
fn runs_on(alg: Algorithm, p: u32) -> bool {
    alg != Algorithm::TwoProcs || p == 2
}

/// Runs `alg` for `kind` on every size and several roots and byte counts,
/// with uniform counts.
fn exercise(kind: CollKind, alg: Algorithm, bytes: &[u64]) {
    for &p in &SIZES {
        if !runs_on(alg, p) {
            continue;
        }
        let rs = if kind.rooted() { roots(p) } else { vec![0] };
        for &root in &rs {
            for &n in bytes {
                let o = run(alg, kind, p, root, &|_| Counts::Uniform(n));
                check_flow(
                    kind,
                    alg,
                    p as usize,
                    root as usize,
                    n,
                    &uniform_counts(kind, p as usize, n),
                    &o,
                );
            }
        }
    }
}

#[test]
fn every_algorithm_of_every_collective_matches_and_finishes() {
    for kind in CollKind::ALL {
        for &alg in algorithms_for(kind) {
            if matches!(
                kind,
                CollKind::Gatherv
                    | CollKind::Scatterv
                    | CollKind::Allgatherv
                    | CollKind::Alltoallv
                    | CollKind::ReduceScatter
            ) {
                // Uniform counts here; per-rank counts below.
                exercise(kind, alg, &[1, 13, 1000]);
            } else if kind == CollKind::Barrier {
                exercise(kind, alg, &[0]);
            } else {
                exercise(kind, alg, &[1, 7, 100, 1000, 70_001]);
            }
        }
    }
}

#[test]
fn segmented_algorithms_match() {
    let cases = [
        (CollKind::Bcast, Algorithm::Pipeline(100)),
        (CollKind::Bcast, Algorithm::Chain(64)),
        (CollKind::Bcast, Algorithm::BinaryTree(33)),
        (CollKind::Bcast, Algorithm::SplitBinaryTree(10)),
        (CollKind::Bcast, Algorithm::SplitBinaryTree(600)),
        (CollKind::Reduce, Algorithm::Pipeline(100)),
        (CollKind::Reduce, Algorithm::Chain(64)),
        (CollKind::Reduce, Algorithm::BinaryTree(33)),
        (CollKind::Bcast, Algorithm::SegmentedBinomial(100)),
        (CollKind::Reduce, Algorithm::SegmentedBinomial(33)),
        (CollKind::Allreduce, Algorithm::SegmentedRing(7)),
        (CollKind::Allreduce, Algorithm::SegmentedRing(10)),
        (CollKind::Allreduce, Algorithm::SegmentedRing(100)),
        (CollKind::Gather, Algorithm::LinearSync(10)),
        (CollKind::Gather, Algorithm::LinearSync(500)),
    ];
    for (kind, alg) in cases {
        exercise(kind, alg, &[1, 99, 100, 1000, 1001]);
    }
}

#[test]
fn segment_zero_is_the_unsegmented_algorithm() {
    let same = |kind, a: Algorithm, b: Algorithm| {
        for &p in &SIZES {
            for root in roots(p) {
                for n in [1u64, 100, 70_001] {
                    let x = schedules(a, kind, p, root, &|_| Counts::Uniform(n)).unwrap();
                    let y = schedules(b, kind, p, root, &|_| Counts::Uniform(n)).unwrap();
                    assert_eq!(x, y, "{kind:?} {a} vs {b} p={p} root={root} n={n}");
                }
            }
        }
    };
    same(
        CollKind::Bcast,
        Algorithm::SegmentedBinomial(0),
        Algorithm::OmpiBinomial,
    );
    same(
        CollKind::Reduce,
        Algorithm::SegmentedBinomial(0),
        Algorithm::BinomialTree,
    );
    same(
        CollKind::Allreduce,
        Algorithm::SegmentedRing(0),
        Algorithm::Ring,
    );
    // A segment at least as large as the whole buffer is one segment.
    same(
        CollKind::Reduce,
        Algorithm::SegmentedBinomial(1 << 20),
        Algorithm::BinomialTree,
    );
    same(
        CollKind::Gather,
        Algorithm::LinearSync(1 << 20),
        Algorithm::LinearSync(0),
    );
}

#[test]
fn segmented_binomial_reduce_sends_every_segment_up() {
    // Every non-root sends ceil(n / s) segments to its parent; the root
    // combines (p-1) n bytes in all.
    for &p in &SIZES {
        for root in roots(p) {
            let o = run(
                Algorithm::SegmentedBinomial(1024),
                CollKind::Reduce,
                p,
                root,
                &|_| Counts::Uniform(10_000),
            );
            for r in 0..p as usize {
                let expect = if r == root as usize { 0 } else { 10 };
                assert_eq!(o.sent_msgs[r], expect, "p={p} root={root} rank {r}");
            }
        }
    }
}

#[test]
fn segmented_ring_allreduce_runs_in_phases() {
    // Open MPI ring_segmented: num_phases = count / (p * segcount), plus one
    // when the remainder is >= p and > p * segcount / 2.
    let phases = |p: u64, n: u64, seg: u64| {
        let per = p * seg;
        n / per + u64::from(n % per >= p && n % per > per / 2)
    };
    for &(p, n, seg, expect) in &[
        (4u32, 1000u64, 100u64, 2u64),
        (4, 1100, 100, 3),
        (4, 1200, 100, 3),
        (5, 1249, 100, 2),
        (5, 1251, 100, 3),
        (3, 1 << 22, 1 << 20, 1),
        (3, 5 << 20, 1 << 20, 2),
    ] {
        assert_eq!(phases(u64::from(p), n, seg), expect, "p={p} n={n}");
        let o = run(
            Algorithm::SegmentedRing(seg),
            CollKind::Allreduce,
            p,
            0,
            &|_| Counts::Uniform(n),
        );
        let ring = run(Algorithm::Ring, CollKind::Allreduce, p, 0, &|_| {
            Counts::Uniform(n)
        });
        let p64 = u64::from(p);
        for r in 0..p as usize {
            // (p - 1) steps per phase, then p - 1 allgather steps.
            assert_eq!(
                o.steps[r].len() as u64,
                (expect + 1) * (p64 - 1),
                "p={p} n={n} rank {r}"
            );
            // The same bytes as the plain ring, in smaller messages.
            assert_eq!(o.received[r], ring.received[r], "p={p} n={n} rank {r}");
            assert_eq!(o.reduced[r], ring.reduced[r], "p={p} n={n} rank {r}");
            let largest = o.steps[r][..(expect * (p64 - 1)) as usize]
                .iter()
                .flat_map(|s| &s.ops)
                .map(|op| match op {
                    Op::Send { bytes, .. } | Op::Recv { bytes, .. } | Op::Copy { bytes } => *bytes,
                    Op::Flag { .. }
                    | Op::Await { .. }
                    | Op::Datatype { .. }
                    | Op::Pack { .. }
                    | Op::Alloc { .. }
                    | Op::Free { .. } => 0,
                })
                .max()
                .unwrap();
            assert_eq!(largest, n.div_ceil(p64).div_ceil(expect), "p={p} n={n}");
        }
    }
    // Below p * segcount: the plain ring.
    let o = schedules(
        Algorithm::SegmentedRing(100),
        CollKind::Allreduce,
        4,
        0,
        &|_| Counts::Uniform(399),
    )
    .unwrap();
    let ring = schedules(Algorithm::Ring, CollKind::Allreduce, 4, 0, &|_| {
        Counts::Uniform(399)
    })
    .unwrap();
    assert_eq!(o, ring);
}

#[test]
fn linear_sync_gather_sends_two_segments_after_the_go() {
    for &(n, first_size, first) in &[(10_000u64, 1024u64, 1024u64), (500, 1024, 500), (10, 0, 10)] {
        for &p in &SIZES {
            for root in roots(p) {
                let o = run(
                    Algorithm::LinearSync(first_size),
                    CollKind::Gather,
                    p,
                    root,
                    &|_| Counts::Uniform(n),
                );
                for r in 0..p as usize {
                    let ops: Vec<Op> = o.steps[r].iter().flat_map(|s| s.ops.clone()).collect();
                    if r == root as usize {
                        let gos = ops
                            .iter()
                            .filter(|op| matches!(op, Op::Send { bytes: 0, .. }))
                            .count();
                        assert_eq!(gos, p as usize - 1);
                        assert_eq!(o.received[r], (u64::from(p) - 1) * n);
                    } else {
                        let q = root;
                        assert_eq!(
                            ops,
                            vec![
                                Op::Recv { peer: q, bytes: 0 },
                                Op::Send {
                                    peer: q,
                                    bytes: first,
                                    written: false
                                },
                                Op::Send {
                                    peer: q,
                                    bytes: n - first,
                                    written: false
                                },
                            ]
                        );
                    }
                }
            }
        }
    }
}

/// Per-rank count patterns for the v-variants: uneven, with zeros, all
/// zero but one.
fn patterns(p: usize) -> Vec<Vec<u64>> {
    vec![
        (0..p).map(|i| (i as u64 * 37 + 5) % 11 * 100).collect(),
        (0..p)
            .map(|i| if i % 3 == 1 { 0 } else { i as u64 * 5000 + 1 })
            .collect(),
        (0..p)
            .map(|i| if i == p / 2 { 40_000 } else { 0 })
            .collect(),
        (0..p).map(|i| 1 + i as u64).collect(),
    ]
}

#[test]
fn v_variants_with_per_rank_counts() {
    for &p in &SIZES {
        for counts in patterns(p as usize) {
            let cs: &[u64] = &counts;
            for kind in [
                CollKind::Allgatherv,
                CollKind::ReduceScatter,
                CollKind::Alltoallv,
            ] {
                for &alg in algorithms_for(kind).iter().filter(|&&a| runs_on(a, p)) {
                    let o = run(alg, kind, p, 0, &|_| Counts::PerRank(cs));
                    check_flow(kind, alg, p as usize, 0, 0, cs, &o);
                }
            }
            for &root in &roots(p) {
                for &alg in algorithms_for(CollKind::Gatherv) {
                    // Every rank knows only its own count.
                    let o = run(alg, CollKind::Gatherv, p, root, &|r| {
                        Counts::Own(cs[r as usize])
                    });
                    check_flow(CollKind::Gatherv, alg, p as usize, root as usize, 0, cs, &o);
                    // The root knows all counts.
                    let o = run(alg, CollKind::Gatherv, p, root, &|r| {
                        if r == root {
                            Counts::PerRank(cs)
                        } else {
                            Counts::Own(cs[r as usize])
                        }
                    });
                    check_flow(CollKind::Gatherv, alg, p as usize, root as usize, 0, cs, &o);
                    // Exact sizes then: no ANY_SIZE receive.
                    assert!(
                        o.steps
                            .iter()
                            .flatten()
                            .all(|s| s.ops.iter().all(|op| !matches!(
                                op,
                                Op::Recv {
                                    bytes: ANY_SIZE,
                                    ..
                                }
                            )))
                    );
                }
                for &alg in algorithms_for(CollKind::Scatterv) {
                    let o = run(alg, CollKind::Scatterv, p, root, &|r| {
                        if r == root {
                            Counts::PerRank(cs)
                        } else {
                            Counts::Own(cs[r as usize])
                        }
                    });
                    check_flow(
                        CollKind::Scatterv,
                        alg,
                        p as usize,
                        root as usize,
                        0,
                        cs,
                        &o,
                    );
                }
            }
        }
    }
}

#[test]
fn the_libraries_choices_run_on_every_size() {
    for library in Library::ALL {
        let cfg = CollConfig::new(library);
        for kind in CollKind::ALL {
            for &p in &SIZES {
                for &n in &[
                    1u64, 8, 100, 2048, 2049, 7000, 10_000, 12288, 40_000, 100_000, 300_000,
                    600_000, 2_000_000,
                ] {
                    let call = CollCall {
                        kind,
                        rank: 0,
                        size: p,
                        root: 0,
                        counts: Counts::Uniform(n),
                        elem: 1,
                        layout: None,
                    };
                    let alg = select(&cfg, &call);
                    assert!(
                        algorithms_for(kind).contains(&super::base_of(alg)),
                        "{library:?} picked {alg} for {kind:?}"
                    );
                    let root = if kind.rooted() { p / 2 } else { 0 };
                    let o = run_in(library, alg, kind, p, root, &|_| Counts::Uniform(n));
                    check_flow(
                        kind,
                        alg,
                        p as usize,
                        root as usize,
                        n,
                        &vec![n; p as usize],
                        &o,
                    );
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Textbook message counts.

#[test]
fn binomial_bcast_sends_p_minus_1_messages() {
    for alg in [Algorithm::BinomialTree, Algorithm::OmpiBinomial] {
        for &p in &SIZES {
            for root in roots(p) {
                let o = run(alg, CollKind::Bcast, p, root, &|_| Counts::Uniform(64));
                assert_eq!(
                    o.sent_msgs.iter().sum::<u64>(),
                    u64::from(p) - 1,
                    "{alg} p={p}"
                );
                for r in 0..p as usize {
                    let expect = if r == root as usize { 0 } else { 64 };
                    assert_eq!(o.received[r], expect, "{alg} p={p} rank {r}");
                }
            }
        }
    }
}

#[test]
fn recursive_doubling_allreduce_on_powers_of_two_is_log_p_sendrecvs() {
    for k in 0..=6u32 {
        let p = 1u32 << k;
        let steps = schedules(
            Algorithm::RecursiveDoubling,
            CollKind::Allreduce,
            p,
            0,
            &|_| Counts::Uniform(8),
        )
        .unwrap();
        for (r, s) in steps.iter().enumerate() {
            assert_eq!(s.len(), k as usize, "p={p} rank {r}");
            for (i, step) in s.iter().enumerate() {
                let partner = (r ^ (1 << i)) as u32;
                assert_eq!(
                    step.ops,
                    vec![
                        Op::Recv {
                            peer: partner,
                            bytes: 8
                        },
                        Op::Send {
                            peer: partner,
                            bytes: 8,
                            written: true
                        }
                    ]
                );
                assert_eq!(step.reduce_bytes, 8);
            }
        }
    }
}

#[test]
fn dissemination_barrier_has_ceil_log2_p_rounds() {
    for &p in &SIZES {
        let rounds = (0..32).find(|&k| 1u64 << k >= u64::from(p)).unwrap_or(0);
        for alg in [Algorithm::Dissemination, Algorithm::Bruck] {
            let steps = schedules(alg, CollKind::Barrier, p, 0, &|_| Counts::Uniform(0)).unwrap();
            for s in &steps {
                assert_eq!(s.len(), rounds, "{alg} p={p}");
                assert!(s.iter().all(|st| st.ops.len() == 2));
            }
        }
    }
}

/// MPICH's scattered alltoall posts, per block of `ALLTOALL_THROTTLE`
/// partners, the receives from `rank + i` and the sends to `rank - i`,
/// `i = 0` included: the own block goes to itself as a message
/// (alltoall_intra_scattered.c at v4.0.2), p messages a rank in all (on
/// one rank no schedule runs: the engine copies the block).
#[test]
fn scattered_alltoall_sends_the_own_block_to_itself() {
    for &p in SIZES.iter().filter(|&&p| p > 1) {
        let steps = schedules(Algorithm::Scattered, CollKind::Alltoall, p, 0, &|_| {
            Counts::Uniform(10)
        })
        .unwrap();
        for (r, s) in steps.iter().enumerate() {
            let r = r as u32;
            assert_eq!(
                s.len() as u64,
                u64::from(p).div_ceil(super::alltoall::ALLTOALL_THROTTLE),
                "p={p}"
            );
            let first = &s[0].ops;
            assert_eq!(first[0], Op::Recv { peer: r, bytes: 10 }, "p={p} rank {r}");
            let sends: Vec<u32> = s
                .iter()
                .flat_map(|st| &st.ops)
                .filter_map(|op| match op {
                    Op::Send {
                        peer,
                        bytes: 10,
                        written: false,
                    } => Some(*peer),
                    _ => None,
                })
                .collect();
            let expected: Vec<u32> = (0..p).map(|i| (r + p - i) % p).collect();
            assert_eq!(sends, expected, "p={p} rank {r}");
        }
    }
}

#[test]
fn pairwise_alltoall_takes_p_minus_1_steps() {
    for &p in &SIZES {
        for alg in [Algorithm::Pairwise, Algorithm::OmpiPairwise] {
            let steps = schedules(alg, CollKind::Alltoall, p, 0, &|_| Counts::Uniform(10)).unwrap();
            for s in &steps {
                assert_eq!(s.len(), p as usize - 1, "{alg} p={p}");
                let bytes: u64 = s
                    .iter()
                    .flat_map(|st| &st.ops)
                    .map(|op| match op {
                        Op::Send { bytes, .. } => *bytes,
                        _ => 0,
                    })
                    .sum();
                assert_eq!(bytes, 10 * (u64::from(p) - 1));
            }
        }
        if p.is_power_of_two() {
            // MPICH pairs with rank ^ i on a power of two.
            let steps = schedules(Algorithm::Pairwise, CollKind::Alltoall, p, 0, &|_| {
                Counts::Uniform(10)
            })
            .unwrap();
            for (r, s) in steps.iter().enumerate() {
                for (i, st) in s.iter().enumerate() {
                    let q = (r ^ (i + 1)) as u32;
                    assert_eq!(
                        st.ops,
                        vec![
                            Op::Recv { peer: q, bytes: 10 },
                            Op::Send {
                                peer: q,
                                bytes: 10,
                                written: false
                            }
                        ]
                    );
                }
            }
        }
    }
}

#[test]
fn binomial_reduce_combines_at_the_root() {
    for &p in &SIZES {
        for root in roots(p) {
            let o = run(Algorithm::BinomialTree, CollKind::Reduce, p, root, &|_| {
                Counts::Uniform(32)
            });
            // The root has ceil(log2 p) children at most, one combination each.
            let children = o.steps[root as usize]
                .iter()
                .filter(|s| s.reduce_bytes > 0)
                .count() as u64;
            assert_eq!(o.reduced[root as usize], children * 32);
            assert_eq!(o.reduced.iter().sum::<u64>(), (u64::from(p) - 1) * 32);
        }
    }
}

#[test]
fn binomial_scatter_serves_the_largest_subtree_first() {
    // Open MPI (4.0 and later) walks the in-order bmtree's children
    // backwards, as MPICH serves them: the same sends in the same order.
    for &p in &SIZES {
        for root in roots(p) {
            let mpich = schedules(Algorithm::BinomialTree, CollKind::Scatter, p, root, &|_| {
                Counts::Uniform(10)
            })
            .unwrap();
            let ompi = schedules(Algorithm::OmpiBinomial, CollKind::Scatter, p, root, &|_| {
                Counts::Uniform(10)
            })
            .unwrap();
            assert_eq!(mpich, ompi, "p={p} root={root}");
        }
    }
    // 12 ranks, root 0: 8 (4 blocks), 4 (4), 2 (2), 1 (1).
    let root = schedules(Algorithm::OmpiBinomial, CollKind::Scatter, 12, 0, &|_| {
        Counts::Uniform(10)
    })
    .unwrap()
    .swap_remove(0);
    let sends: Vec<Op> = root.iter().flat_map(|s| s.ops.clone()).collect();
    assert_eq!(
        sends,
        vec![
            Op::Send {
                peer: 8,
                bytes: 40,
                written: false
            },
            Op::Send {
                peer: 4,
                bytes: 40,
                written: false
            },
            Op::Send {
                peer: 2,
                bytes: 20,
                written: false
            },
            Op::Send {
                peer: 1,
                bytes: 10,
                written: false
            },
        ]
    );
}

#[test]
fn rabenseifner_halves_the_traffic() {
    // 2^k ranks: each rank sends n (p-1)/p in the reduce-scatter and as
    // much in the allgather.
    let n = 1 << 20;
    for k in 1..=6u32 {
        let p = 1u32 << k;
        for alg in [Algorithm::Rabenseifner, Algorithm::OmpiRabenseifner] {
            let o = run(alg, CollKind::Allreduce, p, 0, &|_| Counts::Uniform(n));
            for r in 0..p as usize {
                assert_eq!(
                    o.received[r],
                    2 * n * (u64::from(p) - 1) / u64::from(p),
                    "{alg} p={p}"
                );
                assert_eq!(o.steps[r].len(), 2 * k as usize);
            }
        }
    }
}

#[test]
fn ring_allgather_moves_each_block_once() {
    for &p in &SIZES {
        let o = run(Algorithm::Ring, CollKind::Allgather, p, 0, &|_| {
            Counts::Uniform(100)
        });
        for r in 0..p as usize {
            assert_eq!(o.received[r], 100 * (u64::from(p) - 1));
            assert_eq!(o.steps[r].len(), p as usize - 1);
        }
    }
}

#[test]
fn open_mpi_allgatherv_ring_moves_whole_blocks() {
    // p - 1 sendrecv steps, each block whole (MPICH's ring cuts blocks above
    // 32 KiB into pieces and skips empty ones).
    for &p in &SIZES {
        for counts in patterns(p as usize) {
            let cs: &[u64] = &counts;
            let o = run(Algorithm::OmpiRing, CollKind::Allgatherv, p, 0, &|_| {
                Counts::PerRank(cs)
            });
            let total: u64 = cs.iter().sum();
            for (r, &own) in cs.iter().enumerate() {
                assert_eq!(o.steps[r].len(), p as usize - 1, "p={p}");
                assert_eq!(o.received[r], total - own, "p={p}");
            }
        }
    }
}

#[test]
fn bcast_scatter_allgather_moves_about_2n() {
    for &p in &[8u32, 9, 16, 17, 32] {
        for alg in [
            Algorithm::ScatterRingAllgather,
            Algorithm::ScatterRecursiveDoublingAllgather,
        ] {
            let n = 1 << 16;
            let o = run(alg, CollKind::Bcast, p, 3 % p, &|_| Counts::Uniform(n));
            let total: u64 = o.received.iter().sum();
            // Scatter: at most n (p-1)/p per level pair; allgather: n (p-1)/p per rank.
            assert!(total >= (u64::from(p) - 1) * n, "{alg} p={p}: {total}");
            assert!(total <= 3 * (u64::from(p) - 1) * n, "{alg} p={p}: {total}");
        }
    }
}

// ---------------------------------------------------------------------------
// Errors and edge cases.

fn call(kind: CollKind, rank: u32, size: u32, root: u32, counts: Counts<'_>) -> CollCall<'_> {
    CollCall {
        kind,
        rank,
        size,
        root,
        counts,
        elem: 1,
        layout: None,
    }
}

#[test]
fn bad_calls_are_errors_not_panics() {
    let u = Counts::Uniform(8);
    assert!(schedule(Algorithm::BinomialTree, &call(CollKind::Bcast, 0, 0, 0, u)).is_err());
    assert!(schedule(Algorithm::BinomialTree, &call(CollKind::Bcast, 4, 4, 0, u)).is_err());
    assert!(schedule(Algorithm::BinomialTree, &call(CollKind::Bcast, 0, 4, 4, u)).is_err());
    assert!(
        schedule(
            Algorithm::BinomialTree,
            &call(CollKind::Bcast, 0, 4, 0, Counts::PerRank(&[1, 2, 3, 4]))
        )
        .is_err()
    );
    assert!(
        schedule(
            Algorithm::Ring,
            &call(CollKind::Allgatherv, 0, 4, 0, Counts::PerRank(&[1, 2, 3]))
        )
        .is_err()
    );
    assert!(
        schedule(
            Algorithm::Ring,
            &call(CollKind::Allgatherv, 0, 4, 0, Counts::Own(3))
        )
        .is_err()
    );
    assert!(
        schedule(
            Algorithm::LinearNb,
            &call(CollKind::Scatterv, 0, 4, 0, Counts::Own(3))
        )
        .is_err()
    );
    assert!(schedule(Algorithm::Ring, &call(CollKind::Bcast, 0, 4, 0, u)).is_err());
    assert!(
        schedule(
            Algorithm::Bruck,
            &call(CollKind::Alltoallv, 0, 4, 0, Counts::PerRank(&[1, 2, 3, 4]))
        )
        .is_err()
    );
    assert!(
        schedule(
            Algorithm::Ring,
            &call(CollKind::Allgather, 0, 4, 0, Counts::Uniform(u64::MAX))
        )
        .is_err()
    );
    assert!(
        schedule(
            Algorithm::Ring,
            &call(
                CollKind::Allgatherv,
                0,
                2,
                0,
                Counts::PerRank(&[u64::MAX, 1])
            )
        )
        .is_err()
    );
    assert!(
        schedule(
            Algorithm::BinomialTree,
            &call(CollKind::Reduce, 0, 3, 0, Counts::Own(1))
        )
        .is_err()
    );
    // Non-rooted kinds ignore the root.
    assert!(schedule(Algorithm::Ring, &call(CollKind::Allgather, 0, 4, 9, u)).is_ok());
}

#[test]
fn one_rank_and_zero_bytes_have_no_steps() {
    for kind in CollKind::ALL {
        for &alg in algorithms_for(kind) {
            let steps = schedule(alg, &call(kind, 0, 1, 0, Counts::Uniform(8))).unwrap();
            assert!(steps.is_empty(), "{kind:?} {alg}");
            if kind != CollKind::Barrier {
                let steps = schedule(alg, &call(kind, 1, 4, 0, Counts::Uniform(0))).unwrap();
                assert!(steps.is_empty(), "{kind:?} {alg}");
            }
        }
    }
}

#[test]
fn large_communicators_do_not_overflow() {
    let p = u32::MAX;
    let big = call(CollKind::Bcast, p - 1, p, p - 2, Counts::Uniform(1 << 40));
    for alg in [
        Algorithm::BinomialTree,
        Algorithm::OmpiBinomial,
        Algorithm::Knomial,
        Algorithm::BinaryTree(0),
    ] {
        assert!(schedule(alg, &big).is_ok(), "{alg}");
    }
    let ar = call(CollKind::Allreduce, p - 1, p, 0, Counts::Uniform(1 << 30));
    assert!(schedule(Algorithm::RecursiveDoubling, &ar).is_ok());
    assert!(schedule(Algorithm::Rabenseifner, &ar).is_ok());
    let b = call(CollKind::Barrier, 12345, p, 0, Counts::Uniform(0));
    assert!(schedule(Algorithm::Dissemination, &b).is_ok());
    assert!(schedule(Algorithm::RecursiveDoubling, &b).is_ok());
}

// ---------------------------------------------------------------------------
// Names.

#[test]
fn names_round_trip() {
    for &alg in all_algorithms() {
        assert_eq!(Algorithm::from_name(alg.name()), Some(alg));
        assert_eq!(Algorithm::from_name(&alg.to_string()), Some(alg));
    }
    assert_eq!(
        Algorithm::from_name("pipeline:65536"),
        Some(Algorithm::Pipeline(65536))
    );
    assert_eq!(Algorithm::Pipeline(65536).to_string(), "pipeline:65536");
    assert_eq!(Algorithm::from_name("ring:12"), None);
    assert_eq!(Algorithm::from_name("brucks"), Some(Algorithm::Bruck));
    assert_eq!(
        Algorithm::from_name("Scatter_Ring_Allgather"),
        Some(Algorithm::ScatterRingAllgather)
    );
    assert_eq!(Algorithm::from_name("nonsense"), None);
    assert_eq!(Library::from_name("mpich"), Some(Library::Mpich3));
    assert_eq!(Library::from_name("openmpi"), Some(Library::OpenMpi5));
    assert_eq!(Library::from_name("lam"), None);
    for kind in CollKind::ALL {
        for &alg in algorithms_for(kind) {
            assert_eq!(
                Algorithm::resolve(Library::Mpich3, kind, alg.name()),
                Ok(alg)
            );
        }
    }
}

#[test]
fn resolve_maps_library_names() {
    use Algorithm as A;
    let r = |lib, kind, name| Algorithm::resolve(lib, kind, name);
    assert_eq!(
        r(Library::OpenMpi5, CollKind::Bcast, "binomial"),
        Ok(A::OmpiBinomial)
    );
    assert_eq!(
        r(Library::Mpich3, CollKind::Bcast, "binomial"),
        Ok(A::BinomialTree)
    );
    assert_eq!(
        r(Library::OpenMpi5, CollKind::Alltoall, "pairwise"),
        Ok(A::OmpiPairwise)
    );
    assert_eq!(
        r(Library::Mpich3, CollKind::Alltoall, "pairwise"),
        Ok(A::Pairwise)
    );
    assert_eq!(
        r(Library::OpenMpi5, CollKind::Allreduce, "rabenseifner"),
        Ok(A::OmpiRabenseifner)
    );
    assert_eq!(
        r(
            Library::Mpich3,
            CollKind::Allreduce,
            "reduce_scatter_allgather"
        ),
        Ok(A::Rabenseifner)
    );
    assert_eq!(
        r(Library::OpenMpi5, CollKind::Allgatherv, "ring"),
        Ok(A::OmpiRing)
    );
    assert_eq!(
        r(Library::Mpich3, CollKind::Allgatherv, "ring"),
        Ok(A::Ring)
    );
    assert_eq!(
        r(Library::OpenMpi5, CollKind::Allgather, "ring"),
        Ok(A::Ring)
    );
    assert_eq!(
        r(
            Library::OpenMpi5,
            CollKind::Allreduce,
            "segmented_ring:1048576"
        ),
        Ok(A::SegmentedRing(1 << 20))
    );
    assert_eq!(
        r(
            Library::OpenMpi5,
            CollKind::Reduce,
            "segmented_binomial:1024"
        ),
        Ok(A::SegmentedBinomial(1024))
    );
    assert_eq!(
        r(Library::OpenMpi5, CollKind::Gather, "linear_sync:32768"),
        Ok(A::LinearSync(32768))
    );
    assert!(r(Library::OpenMpi5, CollKind::Scatter, "segmented_binomial").is_err());
    assert!(r(Library::OpenMpi5, CollKind::Allreduce, "ring:1024").is_err());
    assert_eq!(
        r(Library::OpenMpi5, CollKind::Allreduce, "reduce_bcast"),
        Ok(A::NonOverlapping)
    );
    assert_eq!(
        r(Library::OpenMpi5, CollKind::Bcast, "pipeline:8192"),
        Ok(A::Pipeline(8192))
    );
    assert!(r(Library::Mpich3, CollKind::Barrier, "ring").is_err());
    assert!(r(Library::Mpich3, CollKind::Barrier, "nope").is_err());
    let mut cfg = CollConfig::new(Library::OpenMpi5);
    assert!(cfg.force(CollKind::Bcast, A::Bruck).is_err());
    cfg.force(CollKind::Alltoall, A::Pairwise).unwrap();
    cfg.force(CollKind::Alltoall, A::Bruck).unwrap();
    assert_eq!(cfg.forced, vec![(CollKind::Alltoall, A::Bruck)]);
    let c = call(CollKind::Alltoall, 0, 64, 0, Counts::Uniform(1 << 20));
    assert_eq!(select(&cfg, &c), A::Bruck);
}

// ---------------------------------------------------------------------------
// Selectors.

/// (kind, communicator size, bytes) -> expected algorithm under MPICH.
/// Bytes are the whole buffer (bcast, reduce, allreduce), the per-rank
/// block (gather, scatter, allgather, reduce_scatter) or the per-destination
/// block (alltoall).
#[test]
fn mpich_selection_table() {
    use Algorithm as A;
    use CollKind as K;
    let table: &[(CollKind, u32, u64, Algorithm)] = &[
        // bcast.c MPIR_Bcast_intra_auto: nbytes < 12288 || comm_size < 8 -> binomial
        (K::Bcast, 64, 12287, A::BinomialTree),
        (K::Bcast, 7, 1 << 20, A::BinomialTree),
        // nbytes < 524288 && pof2 -> scatter + recursive doubling allgather
        (K::Bcast, 8, 12288, A::ScatterRecursiveDoublingAllgather),
        (K::Bcast, 64, 524287, A::ScatterRecursiveDoublingAllgather),
        // otherwise scatter + ring allgather
        (K::Bcast, 64, 524288, A::ScatterRingAllgather),
        (K::Bcast, 12, 12288, A::ScatterRingAllgather),
        // reduce.c MPIR_Reduce_intra_auto: count*size > 2048 && count >= pof2 -> reduce_scatter_gather
        (K::Reduce, 16, 2048, A::BinomialTree),
        (K::Reduce, 16, 2049, A::Rabenseifner),
        (K::Reduce, 4096, 4000, A::BinomialTree),
        // allreduce.c MPIR_Allreduce_intra_auto: nbytes <= 2048 || count < pof2 -> recursive doubling
        (K::Allreduce, 16, 2048, A::RecursiveDoubling),
        (K::Allreduce, 16, 2049, A::Rabenseifner),
        (K::Allreduce, 9, 1 << 20, A::Rabenseifner),
        (K::Allreduce, 4096, 4000, A::RecursiveDoubling),
        // allgather.c MPIR_Allgather_intra(_auto): total < 524288 && pof2 -> recursive doubling,
        // total < 81920 -> Bruck, else ring
        (K::Allgather, 16, 32767, A::RecursiveDoubling),
        (K::Allgather, 16, 32768, A::Ring),
        (K::Allgather, 12, 6826, A::Bruck),
        (K::Allgather, 12, 6827, A::Ring),
        (K::Allgatherv, 12, 100, A::Bruck),
        // alltoall.c MPIR_Alltoall_intra_auto: <= 256 && comm_size >= 8 -> Bruck,
        // <= 32768 -> scattered, else pairwise
        (K::Alltoall, 8, 256, A::Bruck),
        (K::Alltoall, 7, 256, A::Scattered),
        (K::Alltoall, 8, 257, A::Scattered),
        (K::Alltoall, 8, 32768, A::Scattered),
        (K::Alltoall, 8, 32769, A::Pairwise),
        (K::Alltoallv, 8, 1, A::Scattered),
        // reduce_scatter.c: commutative, total < 524288 -> recursive halving, else pairwise
        (K::ReduceScatter, 8, 65535, A::RecursiveHalving),
        (K::ReduceScatter, 8, 65536, A::Pairwise),
        (K::Gather, 8, 1, A::BinomialTree),
        (K::Scatter, 8, 1 << 20, A::BinomialTree),
        (K::Gatherv, 8, 1, A::LinearNb),
        (K::Scatterv, 8, 1, A::LinearNb),
        (K::Barrier, 8, 0, A::Dissemination),
        (K::Scan, 8, 1, A::RecursiveDoubling),
        (K::Exscan, 8, 1, A::RecursiveDoubling),
    ];
    let cfg = CollConfig::new(Library::Mpich3);
    for &(kind, p, n, expect) in table {
        let c = call(kind, 0, p, 0, Counts::Uniform(n));
        assert_eq!(select(&cfg, &c), expect, "{kind:?} p={p} n={n}");
    }
}

/// (kind, communicator size, bytes) -> expected algorithm under Open MPI
/// 5.0's fixed rules (coll_tuned_decision_fixed.c), commutative operation.
#[test]
fn openmpi_selection_table() {
    use Algorithm as A;
    use CollKind as K;
    let table: &[(CollKind, u32, u64, Algorithm)] = &[
        // allreduce: p < 4: < 8 ring, < 4096 recursive doubling, ..., >= 262144 rabenseifner
        (K::Allreduce, 2, 4, A::Ring),
        (K::Allreduce, 2, 100, A::RecursiveDoubling),
        (K::Allreduce, 3, 100_000, A::Ring),
        (K::Allreduce, 3, 1 << 20, A::OmpiRabenseifner),
        // p < 16: < 8192 recursive doubling, else rabenseifner
        (K::Allreduce, 8, 8191, A::RecursiveDoubling),
        (K::Allreduce, 8, 8192, A::OmpiRabenseifner),
        // p < 256: < 131072 nonoverlapping
        (K::Allreduce, 128, 1000, A::NonOverlapping),
        (K::Allreduce, 5000, 1000, A::NonOverlapping),
        (K::Allreduce, 5000, 10_000, A::Ring),
        // alltoall: p == 2 -> pairwise / two_proc
        (K::Alltoall, 2, 1, A::OmpiPairwise),
        // p < 8: < 8192 linear_sync, < 16384 linear
        (K::Alltoall, 4, 100, A::Linear),
        (K::Alltoall, 4, 600_000, A::OmpiPairwise),
        // p < 32: < 512 modified_bruck
        (K::Alltoall, 16, 300, A::Bruck),
        (K::Alltoall, 64, 1023, A::Bruck),
        (K::Alltoall, 64, 300_000, A::OmpiPairwise),
        // alltoallv by size: < 4 pairwise, < 64 linear
        (K::Alltoallv, 3, 1, A::OmpiPairwise),
        (K::Alltoallv, 16, 1, A::Linear),
        (K::Alltoallv, 100, 1, A::OmpiPairwise),
        // barrier: < 4 recursive doubling, < 8 linear, < 64 recursive doubling,
        // < 256 bruck, < 512 tree
        (K::Barrier, 3, 0, A::RecursiveDoubling),
        (K::Barrier, 5, 0, A::Linear),
        (K::Barrier, 32, 0, A::RecursiveDoubling),
        (K::Barrier, 64, 0, A::Bruck),
        (K::Barrier, 300, 0, A::Tree),
        // bcast: p < 4: < 32 pipeline, < 256 binary tree, < 1024 knomial, < 32768 linear
        (K::Bcast, 2, 16, A::Pipeline(0)),
        (K::Bcast, 2, 100, A::BinaryTree(0)),
        (K::Bcast, 3, 600, A::Knomial),
        (K::Bcast, 3, 5000, A::Linear),
        (K::Bcast, 3, 200_000, A::Pipeline(0)),
        // p < 8: < 128 binomial at [64, 128)
        (K::Bcast, 6, 100, A::OmpiBinomial),
        // p < 32: >= 1048576 scatter_allgather
        (K::Bcast, 16, 4000, A::Knomial),
        (K::Bcast, 16, 1 << 21, A::ScatterRecursiveDoublingAllgather),
        (K::Bcast, 300, 20_000, A::SplitBinaryTree(0)),
        (
            K::Bcast,
            1500,
            1 << 20,
            A::ScatterRecursiveDoublingAllgather,
        ),
        // reduce: p < 4: < 8 rabenseifner (count < pof2 -> linear inside), < 16 binary
        (K::Reduce, 2, 4, A::OmpiRabenseifner),
        (K::Reduce, 2, 10, A::BinaryTree(0)),
        (K::Reduce, 2, 20, A::Pipeline(0)),
        (K::Reduce, 2, 1000, A::Linear),
        (K::Reduce, 6, 100_000, A::BinomialTree),
        (K::Reduce, 16, 100, A::BinaryTree(0)),
        (K::Reduce, 300, 10_000, A::InOrderBinary),
        // reduce_scatter on the total: p < 8, < 262144 recursive halving
        (K::ReduceScatter, 4, 1000, A::RecursiveHalving),
        (K::ReduceScatter, 2, 1 << 20, A::Ring),
        (K::ReduceScatter, 2, 40_000, A::Butterfly),
        (K::ReduceScatter, 64, 2, A::NonOverlapping),
        // allgather: p == 2 two_proc; p < 32 recursive doubling (Bruck off powers of two)
        (K::Allgather, 2, 1, A::TwoProcs),
        (K::Allgather, 16, 100, A::RecursiveDoubling),
        (K::Allgather, 12, 100, A::Bruck),
        (K::Allgather, 40, 2000, A::Neighbor),
        (K::Allgather, 40, 100_000, A::Ring),
        // allgatherv on the per-rank average: p < 8: < 256 default (gatherv + bcast)
        (K::Allgatherv, 4, 100, A::Linear),
        (K::Allgatherv, 4, 1000, A::Neighbor),
        (K::Allgatherv, 12, 2000, A::Bruck),
        // ring (Open MPI's whole blocks) above; two_proc on 2 ranks
        (K::Allgatherv, 2, 100, A::OmpiRing),
        (K::Allgatherv, 2, 3000, A::TwoProcs),
        (K::Allgatherv, 32, 300_000, A::OmpiRing),
        // gather: p < 4: < 32768 binomial; >= 131072 linear_sync
        (K::Gather, 3, 100, A::BinomialTree),
        (K::Gather, 3, 200_000, A::LinearSync(0)),
        (K::Gather, 6, 5000, A::Linear),
        // scatter: p < 4: < 131072 linear; p < 8: < 2048 binomial; >= 32768 linear_nb
        (K::Scatter, 3, 100, A::Linear),
        (K::Scatter, 6, 100, A::OmpiBinomial),
        (K::Scatter, 6, 40_000, A::LinearNb),
        // coll/basic
        (K::Gatherv, 8, 1, A::LinearNb),
        (K::Scatterv, 8, 1, A::Linear),
        (K::Scan, 8, 1, A::Linear),
        (K::Exscan, 8, 1, A::Linear),
    ];
    let cfg = CollConfig::new(Library::OpenMpi5);
    for &(kind, p, n, expect) in table {
        let c = call(kind, 0, p, 0, Counts::Uniform(n));
        assert_eq!(select(&cfg, &c), expect, "{kind:?} p={p} n={n}");
    }
}

#[test]
fn openmpi_tables_cover_the_boundaries() {
    // Spot checks of the raw ids at row and column boundaries.
    assert_eq!(openmpi::allreduce_id(3, 262143), 5);
    assert_eq!(openmpi::allreduce_id(4, 15), 4);
    assert_eq!(openmpi::allreduce_id(4, 16), 3);
    assert_eq!(openmpi::allreduce_id(4096, 3000), 5);
    assert_eq!(openmpi::bcast_id(127, 1), 7);
    assert_eq!(openmpi::bcast_id(128, 1), 6);
    assert_eq!(openmpi::bcast_id(4096, 10_000), 5);
    assert_eq!(openmpi::alltoall_id(5000, 70_000), 4);
    assert_eq!(openmpi::barrier_id(5000), 4);
    assert_eq!(openmpi::barrier_id(2000), 6);
    assert_eq!(openmpi::reduce_id(5000, 20), 6);
    assert_eq!(openmpi::scatter_id(100, 511), 2);
    assert_eq!(openmpi::gather_id(300, 4000), 1);
    assert_eq!(openmpi::allgatherv_id(2, 3000), 5);
    assert_eq!(openmpi::allgather_id(5000, 1), 3);
    assert_eq!(openmpi::reduce_scatter_id(5000, 5000), 2);
    assert_eq!(openmpi::alltoallv_id(2000), 1);
}

// ---------------------------------------------------------------------------
// The matcher itself.

fn st(ops: Vec<Op>) -> Step {
    Step {
        ops,
        reduce_bytes: 0,
    }
}

#[test]
fn the_matcher_finds_deadlocks_and_mismatches() {
    let s = |peer, bytes| Op::Send {
        peer,
        bytes,
        written: true,
    };
    let r = |peer, bytes| Op::Recv { peer, bytes };
    // A sendrecv in one step is safe.
    assert!(
        simulate(vec![
            vec![st(vec![r(1, 4), s(1, 4)])],
            vec![st(vec![r(0, 4), s(0, 4)])]
        ])
        .is_ok()
    );
    // Both receive first in separate steps: deadlock.
    let e = simulate(vec![
        vec![st(vec![r(1, 4)]), st(vec![s(1, 4)])],
        vec![st(vec![r(0, 4)]), st(vec![s(0, 4)])],
    ])
    .unwrap_err();
    assert!(e.contains("deadlock"), "{e}");
    // Both send first: fine with buffering, a deadlock without; the
    // matcher assumes no buffering.
    let e = simulate(vec![
        vec![st(vec![s(1, 4)]), st(vec![r(1, 4)])],
        vec![st(vec![s(0, 4)]), st(vec![r(0, 4)])],
    ])
    .unwrap_err();
    assert!(e.contains("deadlock"), "{e}");
    // Sizes must agree unless the receiver takes any size.
    let e = simulate(vec![vec![st(vec![s(1, 4)])], vec![st(vec![r(0, 5)])]]).unwrap_err();
    assert!(e.contains("expected"), "{e}");
    assert!(
        simulate(vec![
            vec![st(vec![s(1, 4)])],
            vec![st(vec![r(0, ANY_SIZE)])]
        ])
        .is_ok()
    );
    // An unmatched send.
    let e = simulate(vec![vec![st(vec![s(1, 4)])], vec![]]).unwrap_err();
    assert!(e.contains("receives"), "{e}");
    // Messages of a pair match in order: the second send meets the second
    // receive.
    let e = simulate(vec![
        vec![st(vec![s(1, 1)]), st(vec![s(1, 2)])],
        vec![st(vec![r(0, 2)]), st(vec![r(0, 1)])],
    ])
    .unwrap_err();
    assert!(e.contains("expected"), "{e}");
}

#[test]
fn the_matcher_tracks_what_each_rank_can_know() {
    // A chain 0 -> 1 -> 2: rank 2 hears from 0 through 1, rank 0 from
    // nobody.
    let s = |peer, bytes| Op::Send {
        peer,
        bytes,
        written: true,
    };
    let r = |peer, bytes| Op::Recv { peer, bytes };
    let o = simulate(vec![
        vec![st(vec![s(1, 8)])],
        vec![st(vec![r(0, 8)]), st(vec![s(2, 8)])],
        vec![st(vec![r(1, 8)])],
    ])
    .unwrap();
    assert_eq!(o.knows[2], vec![true, true, true]);
    assert_eq!(o.knows[0], vec![true, false, false]);
    assert_eq!(o.received, vec![0, 8, 8]);
    // A send posted before the sender heard from anyone carries only the
    // sender's own data.
    let o = simulate(vec![
        vec![st(vec![r(1, 8), s(1, 8)])],
        vec![st(vec![r(0, 8), s(0, 8)]), st(vec![s(2, 8)])],
        vec![st(vec![r(1, 8)])],
    ])
    .unwrap();
    assert_eq!(o.knows[2], vec![true, true, true]);
    let o = simulate(vec![
        vec![st(vec![s(1, 8)])],
        vec![st(vec![r(0, 8), s(2, 8)])],
        vec![st(vec![r(1, 8)])],
    ])
    .unwrap();
    assert_eq!(o.knows[2], vec![false, true, true]);
}

// ---------------------------------------------------------------------------
// MPICH 4 (CH4 compositions over node layouts).

/// All ranks' schedules of one call on a communicator laid out as `nodes`
/// (node of each rank).
fn schedules_on(
    alg: Algorithm,
    kind: CollKind,
    nodes: &[u32],
    root: u32,
    n: u64,
) -> Result<Vec<Vec<Step>>, String> {
    let layout = NodeLayout::new(nodes);
    let p = nodes.len() as u32;
    (0..p)
        .map(|rank| {
            schedule(
                alg,
                &CollCall {
                    kind,
                    rank,
                    size: p,
                    root,
                    counts: Counts::Uniform(n),
                    elem: 1,
                    layout: Some(&layout),
                },
            )
        })
        .collect()
}

/// Block placements of `p` ranks at 1-5 per node, and cyclic over 2 and 3
/// nodes.
fn layouts(p: u32) -> Vec<Vec<u32>> {
    let mut out: Vec<Vec<u32>> = (1..=5).map(|k| (0..p).map(|r| r / k).collect()).collect();
    out.push((0..p).map(|r| r % 2).collect());
    out.push((0..p).map(|r| r % 3).collect());
    out
}

#[test]
fn mpich4_compositions_match_and_finish_on_every_layout() {
    use Algorithm as A;
    use CollKind as K;
    let cases = [
        (K::Barrier, A::Ch4Alpha),
        (K::Bcast, A::Ch4Alpha),
        (K::Bcast, A::Ch4Beta),
        (K::Reduce, A::Ch4Alpha),
        (K::Reduce, A::Ch4Beta),
        (K::Allreduce, A::Ch4Alpha),
        (K::Scan, A::Ch4Alpha),
    ];
    for &p in &SIZES {
        for nodes in layouts(p) {
            for &(kind, alg) in &cases {
                let rs = if kind.rooted() { roots(p) } else { vec![0] };
                for &root in &rs {
                    for &n in &[1u64, 100, 5000, 70_000] {
                        let steps = schedules_on(alg, kind, &nodes, root, n)
                            .unwrap_or_else(|e| panic!("{kind:?} {alg} {nodes:?}: {e}"));
                        let o = simulate(steps).unwrap_or_else(|e| {
                            panic!("{kind:?} {alg} nodes={nodes:?} root={root} n={n}: {e}")
                        });
                        check_flow(
                            kind,
                            alg,
                            p as usize,
                            root as usize,
                            n,
                            &vec![n; p as usize],
                            &o,
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn mpich4_selection_follows_the_json_trees() {
    use Algorithm as A;
    use CollKind as K;
    let cfg = CollConfig::new(Library::Mpich4);
    let pick = |kind: CollKind, nodes: &[u32], n: u64| {
        let layout = NodeLayout::new(nodes);
        select(
            &cfg,
            &CollCall {
                kind,
                rank: 0,
                size: nodes.len() as u32,
                root: 0,
                counts: Counts::Uniform(n),
                elem: 1,
                layout: Some(&layout),
            },
        )
    };
    let flat = |p: u32| (0..p).collect::<Vec<u32>>();
    let block = |p: u32, k: u32| (0..p).map(|r| r / k).collect::<Vec<u32>>();
    let one = |p: u32| vec![0u32; p as usize];
    // mpir/generic.json allreduce: recursive doubling up to 8 bytes, then
    // reduce_scatter_allgather (count >= pof2).
    assert_eq!(pick(K::Allreduce, &flat(16), 8), A::RecursiveDoubling);
    assert_eq!(pick(K::Allreduce, &flat(16), 9), A::RecursiveDoubling); // 9 < pof2 16
    assert_eq!(pick(K::Allreduce, &flat(16), 16), A::Rabenseifner);
    assert_eq!(pick(K::Allreduce, &one(2), 8), A::RecursiveDoubling);
    assert_eq!(pick(K::Allreduce, &one(2), 16), A::Rabenseifner);
    // ch4/generic.json allreduce: the whole communicator on one node ->
    // gamma (MPIR on the communicator); several nodes -> alpha.
    assert_eq!(pick(K::Allreduce, &block(64, 32), 8), A::Ch4Alpha);
    // barrier: alpha on a parent communicator, dissemination when flat.
    assert_eq!(pick(K::Barrier, &one(2), 0), A::Ch4Alpha);
    assert_eq!(pick(K::Barrier, &flat(8), 0), A::Dissemination);
    // bcast (ch4, pruned so strict): p < 8 -> alpha at any size; pow2:
    // < 12288 alpha, < 524288 beta, else gamma; other p: < 12288 alpha.
    assert_eq!(pick(K::Bcast, &one(7), 1 << 20), A::Ch4Alpha);
    assert_eq!(pick(K::Bcast, &block(64, 32), 12287), A::Ch4Alpha);
    assert_eq!(pick(K::Bcast, &block(64, 32), 12288), A::Ch4Beta);
    assert_eq!(pick(K::Bcast, &block(64, 32), 524287), A::Ch4Beta);
    // gamma is MPIR on the parent communicator, whose thresholds are `<=`.
    assert_eq!(
        pick(K::Bcast, &block(64, 32), 524288),
        A::ScatterRecursiveDoublingAllgather
    );
    assert_eq!(
        pick(K::Bcast, &block(64, 32), 524289),
        A::ScatterRingAllgather
    );
    assert_eq!(pick(K::Bcast, &block(12, 4), 12288), A::BinomialTree);
    assert_eq!(
        pick(K::Bcast, &block(12, 4), 12289),
        A::ScatterRingAllgather
    );
    // bcast, flat (mpir, `<=`): binomial up to 12288 bytes or below 8 ranks.
    assert_eq!(pick(K::Bcast, &flat(16), 12288), A::BinomialTree);
    assert_eq!(
        pick(K::Bcast, &flat(16), 12289),
        A::ScatterRecursiveDoublingAllgather
    );
    assert_eq!(pick(K::Bcast, &flat(7), 1 << 20), A::BinomialTree);
    // reduce (ch4): beta (smp) up to 2048 bytes, alpha above.
    assert_eq!(pick(K::Reduce, &one(4), 2048), A::Ch4Beta);
    assert_eq!(pick(K::Reduce, &one(4), 2049), A::Ch4Alpha);
    assert_eq!(pick(K::Reduce, &flat(4), 2049), A::Rabenseifner);
    assert_eq!(pick(K::Reduce, &flat(4), 2048), A::BinomialTree);
    // alltoall (mpir): `comm_size<8` is searched as p <= 8.
    assert_eq!(pick(K::Alltoall, &flat(8), 8), A::Scattered);
    assert_eq!(pick(K::Alltoall, &flat(9), 256), A::Bruck);
    assert_eq!(pick(K::Alltoall, &flat(9), 257), A::Scattered);
    assert_eq!(pick(K::Alltoall, &flat(8), 32769), A::Pairwise);
    // allgather (mpir): on the total; pow2 < 524288 RD, other p < 81920 Bruck.
    assert_eq!(pick(K::Allgather, &flat(16), 32767), A::RecursiveDoubling);
    assert_eq!(pick(K::Allgather, &flat(16), 32768), A::Ring);
    assert_eq!(pick(K::Allgather, &flat(12), 6826), A::Bruck);
    assert_eq!(pick(K::Allgather, &flat(12), 6827), A::Ring);
    // scan: alpha on a parent communicator with consecutive nodes.
    assert_eq!(pick(K::Scan, &block(8, 4), 8), A::Ch4Alpha);
    assert_eq!(
        pick(K::Scan, &[0, 1, 0, 1, 0, 1, 0, 1], 8),
        A::RecursiveDoubling
    );
    assert_eq!(pick(K::Gather, &block(8, 4), 8), A::BinomialTree);
}

#[test]
fn mpich4_barrier_on_one_node_of_two_is_an_exchange_and_a_byte() {
    // Traced on MPICH 4.0.2 (ch4:ucx): rank 0 sendrecv 0 B with rank 1,
    // then sends rank 1 one byte (the release bcast of composition alpha).
    let s = schedules_on(Algorithm::Ch4Alpha, CollKind::Barrier, &[0, 0], 0, 0).unwrap();
    assert_eq!(
        s[0],
        vec![
            st(vec![
                Op::Recv { peer: 1, bytes: 0 },
                Op::Send {
                    peer: 1,
                    bytes: 0,
                    written: true
                }
            ]),
            // After a receipt, a composition's later phases send library
            // data (`written_after_receipt`).
            st(vec![Op::Send {
                peer: 1,
                bytes: 1,
                written: true
            }]),
        ]
    );
    assert_eq!(s[1].len(), 2);
    assert_eq!(s[1][1], st(vec![Op::Recv { peer: 0, bytes: 1 }]));
}

#[test]
fn mpich4_allreduce_alpha_reduces_on_nodes_then_among_leaders() {
    // 2 nodes of 4 ranks, 8 bytes: binomial reduce on each node (3
    // messages), recursive doubling between the two leaders (one
    // exchange), binomial bcast on each node (3 messages): 2*3 + 2 + 2*3.
    let nodes = [0, 0, 0, 0, 1, 1, 1, 1];
    let s = schedules_on(Algorithm::Ch4Alpha, CollKind::Allreduce, &nodes, 0, 8).unwrap();
    let o = simulate(s.clone()).unwrap();
    assert_eq!(o.sent_msgs.iter().sum::<u64>(), 14);
    // Only the leaders (ranks 0 and 4) talk across nodes.
    for (r, sched) in s.iter().enumerate() {
        for step in sched {
            for op in &step.ops {
                let Some(peer) = op.peer() else { continue };
                if nodes[r] != nodes[peer as usize] {
                    assert!(r == 0 || r == 4, "rank {r} crosses nodes");
                }
            }
        }
    }
    // Rank 0 combines the messages of ranks 1 and 2 (rank 2 brings rank
    // 3's) of the binomial tree, then the other leader's.
    assert_eq!(o.reduced[0], 3 * 8);
}

// ---------------------------------------------------------------------------
// Open MPI 4.0's fixed rules.

/// What `library` picks for a call of `p` ranks; `n` is the single count
/// (whole buffer, per-rank or per-destination block) except for
/// reduce_scatter and allgatherv, where it is the total, all on rank 0.
fn pick(library: Library, kind: CollKind, p: u32, n: u64) -> Algorithm {
    let mut totals = vec![0u64; p as usize];
    totals[0] = n;
    let counts = match kind {
        CollKind::ReduceScatter | CollKind::Allgatherv => Counts::PerRank(&totals),
        _ => Counts::Uniform(n),
    };
    select(&CollConfig::new(library), &call(kind, 0, p, 0, counts))
}

/// (kind, p, n, expected) on both sides of every threshold of Open MPI
/// 4.0.3's coll_tuned_decision_fixed.c. The `a * n + b` boundaries were
/// computed in double precision as the C code compares them.
const OMPI4_TABLE: &[(CollKind, u32, u64, Algorithm)] = {
    use Algorithm as A;
    use CollKind as K;
    &[
        // ompi_coll_tuned_allreduce_intra_dec_fixed: < 10000 bytes
        // recursive doubling; count > comm_size: ring while
        // comm_size * 1 MiB >= bytes, else segmented ring (1 MiB); else
        // nonoverlapping.
        (K::Allreduce, 2, 9999, A::RecursiveDoubling),
        (K::Allreduce, 2, 10_000, A::Ring),
        (K::Allreduce, 8, 9999, A::RecursiveDoubling),
        (K::Allreduce, 8, 10_000, A::Ring),
        (K::Allreduce, 3, 3 << 20, A::Ring),
        (K::Allreduce, 3, (3 << 20) + 1, A::SegmentedRing(1 << 20)),
        (K::Allreduce, 64, 64 << 20, A::Ring),
        (K::Allreduce, 64, (64 << 20) + 1, A::SegmentedRing(1 << 20)),
        (K::Allreduce, 9999, 10_000, A::Ring),
        (K::Allreduce, 10_000, 10_000, A::NonOverlapping),
        (K::Allreduce, 20_000, 20_000, A::NonOverlapping),
        (K::Allreduce, 20_000, 20_001, A::Ring),
        // ompi_coll_tuned_alltoall_intra_dec_fixed: two_procs; < 200 bytes
        // and > 12 ranks modified Bruck; < 3000 bytes basic linear; else
        // pairwise.
        (K::Alltoall, 2, 1, A::OmpiPairwise),
        (K::Alltoall, 2, 2999, A::OmpiPairwise),
        (K::Alltoall, 13, 199, A::Bruck),
        (K::Alltoall, 13, 200, A::Linear),
        (K::Alltoall, 12, 199, A::Linear),
        (K::Alltoall, 3, 1, A::Linear),
        (K::Alltoall, 13, 2999, A::Linear),
        (K::Alltoall, 13, 3000, A::OmpiPairwise),
        (K::Alltoall, 3, 2999, A::Linear),
        (K::Alltoall, 3, 3000, A::OmpiPairwise),
        (K::Alltoall, 64, 199, A::Bruck),
        // ompi_coll_tuned_alltoallv_intra_dec_fixed: pairwise.
        (K::Alltoallv, 3, 1, A::OmpiPairwise),
        (K::Alltoallv, 64, 1 << 20, A::OmpiPairwise),
        // ompi_coll_tuned_barrier_intra_dec_fixed: two_procs; power of two
        // recursive doubling; else Bruck.
        (K::Barrier, 2, 0, A::Bruck),
        (K::Barrier, 3, 0, A::Bruck),
        (K::Barrier, 4, 0, A::RecursiveDoubling),
        (K::Barrier, 5, 0, A::Bruck),
        (K::Barrier, 63, 0, A::Bruck),
        (K::Barrier, 64, 0, A::RecursiveDoubling),
        (K::Barrier, 65, 0, A::Bruck),
        // ompi_coll_tuned_bcast_intra_dec_fixed: < 2048 binomial; < 370728
        // split binary tree (1 KiB); p < 1.6134e-6 n + 2.1102 pipeline
        // 128 KiB; p < 13 split binary tree 8 KiB; p < 2.3679e-6 n + 1.1787
        // pipeline 64 KiB; p < 3.2118e-6 n + 8.7936 pipeline 16 KiB; else
        // pipeline 8 KiB.
        (K::Bcast, 16, 1, A::OmpiBinomial),
        (K::Bcast, 16, 2047, A::OmpiBinomial),
        (K::Bcast, 16, 2048, A::SplitBinaryTree(1024)),
        (K::Bcast, 2, 2048, A::SplitBinaryTree(1024)),
        (K::Bcast, 16, 370_727, A::SplitBinaryTree(1024)),
        (K::Bcast, 2, 370_728, A::Pipeline(131_072)),
        (K::Bcast, 2, 1 << 30, A::Pipeline(131_072)),
        (K::Bcast, 3, 370_728, A::SplitBinaryTree(8192)),
        (K::Bcast, 3, 551_506, A::SplitBinaryTree(8192)),
        (K::Bcast, 3, 551_507, A::Pipeline(131_072)),
        (K::Bcast, 12, 370_728, A::SplitBinaryTree(8192)),
        (K::Bcast, 12, 6_129_788, A::SplitBinaryTree(8192)),
        (K::Bcast, 12, 6_129_789, A::Pipeline(131_072)),
        (K::Bcast, 13, 370_728, A::Pipeline(8192)),
        (K::Bcast, 13, 1_309_670, A::Pipeline(8192)),
        (K::Bcast, 13, 1_309_671, A::Pipeline(16_384)),
        (K::Bcast, 13, 4_992_313, A::Pipeline(16_384)),
        (K::Bcast, 13, 4_992_314, A::Pipeline(65_536)),
        (K::Bcast, 13, 6_749_597, A::Pipeline(65_536)),
        (K::Bcast, 13, 6_749_598, A::Pipeline(131_072)),
        (K::Bcast, 64, 17_188_616, A::Pipeline(8192)),
        (K::Bcast, 64, 17_188_617, A::Pipeline(16_384)),
        (K::Bcast, 64, 26_530_385, A::Pipeline(16_384)),
        (K::Bcast, 64, 26_530_386, A::Pipeline(65_536)),
        (K::Bcast, 64, 38_359_861, A::Pipeline(65_536)),
        (K::Bcast, 64, 38_359_862, A::Pipeline(131_072)),
        // ompi_coll_tuned_reduce_intra_dec_fixed: p < 8 and < 512 linear;
        // (p < 8 and < 20480) or < 2048 binomial; p > a1 n + b1 binomial
        // 1 KiB; p > a2 n + b2 pipeline 1 KiB; p > a3 n + b3 binary 32 KiB;
        // p > a4 n + b4 pipeline 32 KiB; else pipeline 64 KiB.
        (K::Reduce, 7, 511, A::Linear),
        (K::Reduce, 7, 512, A::BinomialTree),
        (K::Reduce, 7, 20_479, A::BinomialTree),
        (K::Reduce, 7, 20_480, A::BinaryTree(32_768)),
        (K::Reduce, 7, 141_675, A::BinaryTree(32_768)),
        (K::Reduce, 7, 141_676, A::Pipeline(32_768)),
        (K::Reduce, 7, 1_652_022, A::Pipeline(32_768)),
        (K::Reduce, 7, 1_652_023, A::Pipeline(65_536)),
        (K::Reduce, 2, 20_480, A::Pipeline(32_768)),
        (K::Reduce, 2, 100_507, A::Pipeline(32_768)),
        (K::Reduce, 2, 100_508, A::Pipeline(65_536)),
        (K::Reduce, 8, 511, A::BinomialTree),
        (K::Reduce, 8, 2047, A::BinomialTree),
        (K::Reduce, 8, 2048, A::SegmentedBinomial(1024)),
        (K::Reduce, 8, 11_319, A::SegmentedBinomial(1024)),
        (K::Reduce, 8, 11_320, A::BinaryTree(32_768)),
        (K::Reduce, 8, 165_941, A::BinaryTree(32_768)),
        (K::Reduce, 8, 165_942, A::Pipeline(32_768)),
        (K::Reduce, 8, 1_962_325, A::Pipeline(32_768)),
        (K::Reduce, 8, 1_962_326, A::Pipeline(65_536)),
        (K::Reduce, 16, 24_936, A::SegmentedBinomial(1024)),
        (K::Reduce, 16, 24_937, A::Pipeline(1024)),
        (K::Reduce, 16, 157_026, A::Pipeline(1024)),
        (K::Reduce, 16, 157_027, A::BinaryTree(32_768)),
        (K::Reduce, 16, 360_064, A::BinaryTree(32_768)),
        (K::Reduce, 16, 360_065, A::Pipeline(32_768)),
        (K::Reduce, 16, 4_444_749, A::Pipeline(32_768)),
        (K::Reduce, 16, 4_444_750, A::Pipeline(65_536)),
        (K::Reduce, 64, 106_638, A::SegmentedBinomial(1024)),
        (K::Reduce, 64, 106_639, A::Pipeline(1024)),
        (K::Reduce, 64, 1_355_855, A::Pipeline(1024)),
        (K::Reduce, 64, 1_355_856, A::BinaryTree(32_768)),
        (K::Reduce, 64, 1_524_803, A::BinaryTree(32_768)),
        (K::Reduce, 64, 1_524_804, A::Pipeline(32_768)),
        (K::Reduce, 64, 19_339_295, A::Pipeline(32_768)),
        (K::Reduce, 64, 19_339_296, A::Pipeline(65_536)),
        // p = 1000: the pipeline's line ends after the binary tree's.
        (K::Reduce, 1000, 24_733_026, A::Pipeline(1024)),
        (K::Reduce, 1000, 24_733_027, A::Pipeline(32_768)),
        // ompi_coll_tuned_reduce_scatter_intra_dec_fixed on the total: <=
        // 12 KiB, or <= 256 KiB on a power of two, or p >= 0.0012 t + 8:
        // recursive halving; else ring.
        (K::ReduceScatter, 3, 12_288, A::RecursiveHalving),
        (K::ReduceScatter, 3, 12_289, A::Ring),
        (K::ReduceScatter, 4, 262_144, A::RecursiveHalving),
        (K::ReduceScatter, 4, 262_145, A::Ring),
        (K::ReduceScatter, 5, 262_144, A::Ring),
        (K::ReduceScatter, 24, 13_333, A::RecursiveHalving),
        (K::ReduceScatter, 24, 13_334, A::Ring),
        (K::ReduceScatter, 33, 20_833, A::RecursiveHalving),
        (K::ReduceScatter, 33, 20_834, A::Ring),
        (K::ReduceScatter, 1000, 826_666, A::RecursiveHalving),
        (K::ReduceScatter, 1000, 826_667, A::Ring),
        // ompi_coll_tuned_allgather_intra_dec_fixed on the total n p:
        // two_procs; < 50000 recursive doubling (power of two) or Bruck;
        // else ring (odd p) or neighbor exchange (even p).
        (K::Allgather, 2, 1, A::TwoProcs),
        (K::Allgather, 2, 1 << 20, A::TwoProcs),
        (K::Allgather, 4, 12_499, A::RecursiveDoubling),
        (K::Allgather, 4, 12_500, A::Neighbor),
        (K::Allgather, 16, 3124, A::RecursiveDoubling),
        (K::Allgather, 16, 3125, A::Neighbor),
        (K::Allgather, 12, 4166, A::Bruck),
        (K::Allgather, 12, 4167, A::Neighbor),
        (K::Allgather, 3, 16_666, A::Bruck),
        (K::Allgather, 3, 16_667, A::Ring),
        (K::Allgather, 13, 3846, A::Bruck),
        (K::Allgather, 13, 3847, A::Ring),
        // ompi_coll_tuned_allgatherv_intra_dec_fixed on the total:
        // two_procs; < 50000 Bruck; else ring (odd) or neighbor (even).
        (K::Allgatherv, 2, 1, A::TwoProcs),
        (K::Allgatherv, 2, 1 << 20, A::TwoProcs),
        (K::Allgatherv, 3, 49_999, A::Bruck),
        (K::Allgatherv, 3, 50_000, A::OmpiRing),
        (K::Allgatherv, 4, 49_999, A::Bruck),
        (K::Allgatherv, 4, 50_000, A::Neighbor),
        (K::Allgatherv, 16, 50_000, A::Neighbor),
        // ompi_coll_tuned_gather_intra_dec_fixed: > 92160 linear_sync
        // (32 KiB first segment); > 6000 linear_sync (1 KiB); p > 60, or
        // p > 10 and < 1024, binomial; else linear.
        (K::Gather, 64, 92_161, A::LinearSync(32_768)),
        (K::Gather, 64, 92_160, A::LinearSync(1024)),
        (K::Gather, 3, 92_161, A::LinearSync(32_768)),
        (K::Gather, 64, 6001, A::LinearSync(1024)),
        (K::Gather, 3, 6001, A::LinearSync(1024)),
        (K::Gather, 64, 6000, A::BinomialTree),
        (K::Gather, 61, 6000, A::BinomialTree),
        (K::Gather, 60, 6000, A::Linear),
        (K::Gather, 60, 1023, A::BinomialTree),
        (K::Gather, 60, 1024, A::Linear),
        (K::Gather, 11, 1023, A::BinomialTree),
        (K::Gather, 10, 1023, A::Linear),
        (K::Gather, 10, 6000, A::Linear),
        // ompi_coll_tuned_scatter_intra_dec_fixed: p > 10 and < 300
        // binomial; else linear.
        (K::Scatter, 11, 299, A::OmpiBinomial),
        (K::Scatter, 11, 300, A::Linear),
        (K::Scatter, 10, 299, A::Linear),
        (K::Scatter, 64, 1 << 20, A::Linear),
        // coll/basic
        (K::Gatherv, 8, 1, A::Linear),
        (K::Scatterv, 8, 1, A::Linear),
        (K::Scan, 8, 1, A::Linear),
        (K::Exscan, 8, 1, A::Linear),
    ]
};

#[test]
fn openmpi4_selection_table() {
    for &(kind, p, n, expect) in OMPI4_TABLE {
        assert_eq!(
            pick(Library::OpenMpi4, kind, p, n),
            expect,
            "{kind:?} p={p} n={n}"
        );
    }
    // Every collective has rows.
    for kind in CollKind::ALL {
        assert!(OMPI4_TABLE.iter().any(|row| row.0 == kind), "{kind:?}");
    }
}

#[test]
fn openmpi4_choices_match_on_every_rank() {
    // Every algorithm of the table (with its segment size) on the table's
    // call where the communicator is small enough for the matcher, else on
    // 13 ranks, rooted at the middle rank; the trees and pipelines with at
    // most 37 segments (the matcher is quadratic in a pair's messages).
    for &(kind, p, n, alg) in OMPI4_TABLE {
        let p = if p <= 64 { p } else { 13 };
        let n = match alg {
            Algorithm::Pipeline(s)
            | Algorithm::BinaryTree(s)
            | Algorithm::SplitBinaryTree(s)
            | Algorithm::SegmentedBinomial(s) => n.min(37 * s - 5),
            _ => n,
        };
        let root = if kind.rooted() { p / 2 } else { 0 };
        let counts: Vec<u64> = (0..u64::from(p))
            .map(|i| n / u64::from(p) + (i % 2))
            .collect();
        let cs: &[u64] = &counts;
        let o = match kind {
            CollKind::ReduceScatter | CollKind::Allgatherv | CollKind::Alltoallv => {
                run_in(Library::OpenMpi4, alg, kind, p, root, &|_| {
                    Counts::PerRank(cs)
                })
            }
            _ => run_in(Library::OpenMpi4, alg, kind, p, root, &|_| {
                Counts::Uniform(n)
            }),
        };
        let flow: Vec<u64> = match kind {
            CollKind::ReduceScatter | CollKind::Allgatherv | CollKind::Alltoallv => counts.clone(),
            _ => vec![n; p as usize],
        };
        check_flow(kind, alg, p as usize, root as usize, n, &flow, &o);
    }
}

#[test]
fn openmpi4_names_and_aliases() {
    for name in [
        "openmpi-4",
        "openmpi4",
        "OpenMPI-4.0",
        "open_mpi_4",
        "openmpi-3",
        "openmpi-3.1",
        "openmpi3",
    ] {
        assert_eq!(Library::from_name(name), Some(Library::OpenMpi4), "{name}");
    }
    assert_eq!(Library::OpenMpi4.name(), "openmpi-4");
    assert_eq!(
        Library::from_name(Library::OpenMpi4.name()),
        Some(Library::OpenMpi4)
    );
    assert!(Library::OpenMpi4.is_open_mpi());
    assert!(Library::known().contains("\"openmpi-4\""));
    assert_eq!(Library::from_name("openmpi-4.1"), Some(Library::OpenMpi41));
    assert_eq!(Library::from_name("openmpi"), Some(Library::OpenMpi5));
    // Open MPI's own variants of shared names.
    assert_eq!(
        Algorithm::resolve(Library::OpenMpi4, CollKind::Bcast, "binomial"),
        Ok(Algorithm::OmpiBinomial)
    );
    assert_eq!(
        Algorithm::resolve(Library::OpenMpi4, CollKind::Allgatherv, "ring"),
        Ok(Algorithm::OmpiRing)
    );
}

#[test]
fn composite_algorithms_use_the_librarys_rules_inside() {
    // nonoverlapping allreduce = reduce to 0 + bcast from 0, each picked by
    // the Open MPI library's rules: 4.0's under openmpi-4, 5.0's otherwise.
    let (p, n) = (16u32, 100_000u64);
    for library in [Library::OpenMpi4, Library::OpenMpi5] {
        let cfg = CollConfig::new(library);
        for rank in 0..p {
            let c = |kind| call(kind, rank, p, 0, Counts::Uniform(n));
            let ra = select(&cfg, &c(CollKind::Reduce));
            let ba = select(&cfg, &c(CollKind::Bcast));
            let mut expect = schedule_in(library, ra, &c(CollKind::Reduce)).unwrap();
            expect.extend(schedule_in(library, ba, &c(CollKind::Bcast)).unwrap());
            // The root's bcast sends the result it combined.
            super::util::written_after_receipt(&mut expect);
            let got = schedule_in(library, Algorithm::NonOverlapping, &c(CollKind::Allreduce));
            assert_eq!(got.unwrap(), expect, "{library:?} rank {rank}");
        }
    }
    // The two libraries differ here: 4.0 pipelines the reduce in 1 KiB
    // segments and splits the bcast, 5.0 uses binomial and linear.
    assert_eq!(
        pick(Library::OpenMpi4, CollKind::Reduce, p, n),
        Algorithm::Pipeline(1024)
    );
    assert_eq!(
        pick(Library::OpenMpi4, CollKind::Bcast, p, n),
        Algorithm::SplitBinaryTree(1024)
    );
    let four = schedules_in(
        Library::OpenMpi4,
        Algorithm::NonOverlapping,
        CollKind::Allreduce,
        p,
        0,
        &|_| Counts::Uniform(n),
    )
    .unwrap();
    let five = schedules(
        Algorithm::NonOverlapping,
        CollKind::Allreduce,
        p,
        0,
        &|_| Counts::Uniform(n),
    )
    .unwrap();
    assert_ne!(four, five);
    // Under MPICH a forced nonoverlapping follows Open MPI 5's rules.
    let mpich = schedules_in(
        Library::Mpich3,
        Algorithm::NonOverlapping,
        CollKind::Allreduce,
        p,
        0,
        &|_| Counts::Uniform(n),
    )
    .unwrap();
    assert_eq!(mpich, five);
    // linear allgatherv = gatherv (coll/basic) + bcast: 4.0.3's basic
    // gatherv receives in rank order, one blocking receive at a time.
    let counts: Vec<u64> = (1..=u64::from(p)).collect();
    let cs: &[u64] = &counts;
    let root = schedules_in(
        Library::OpenMpi4,
        Algorithm::Linear,
        CollKind::Allgatherv,
        p,
        0,
        &|_| Counts::PerRank(cs),
    )
    .unwrap()
    .swap_remove(0);
    assert!(root[..p as usize - 1].iter().all(|s| s.ops.len() == 1));
}

// ---------------------------------------------------------------------------
// Open MPI 5 (coll/han over node layouts).

/// Every han composition (default segment, small segments, one segment) on
/// block layouts of 1-5 ranks per node and cyclic ones, several roots and
/// sizes: the schedules match, finish, and move the collective's data.
/// Layouts han declines (one node, one rank per node, unbalanced nodes for
/// the rooted ones and allgather) run tuned's choice instead.
#[test]
fn han_compositions_match_and_finish_on_every_layout() {
    use CollKind as K;
    let kinds = [
        K::Barrier,
        K::Bcast,
        K::Reduce,
        K::Allreduce,
        K::Gather,
        K::Scatter,
        K::Allgather,
    ];
    for &p in &SIZES {
        for nodes in layouts(p) {
            for &kind in &kinds {
                let rs = if kind.rooted() { roots(p) } else { vec![0] };
                let sizes: &[u64] = if kind == K::Barrier {
                    &[0]
                } else {
                    &[1, 100, 5000, 70_000, 200_000]
                };
                for &root in &rs {
                    for &n in sizes {
                        for alg in [Algorithm::Han(han::SEGSIZE), Algorithm::Han(0)] {
                            let steps = schedules_on(alg, kind, &nodes, root, n)
                                .unwrap_or_else(|e| panic!("{kind:?} {alg} {nodes:?}: {e}"));
                            let o = simulate(steps).unwrap_or_else(|e| {
                                panic!("{kind:?} {alg} nodes={nodes:?} root={root} n={n}: {e}")
                            });
                            check_flow(
                                kind,
                                alg,
                                p as usize,
                                root as usize,
                                n,
                                &vec![n; p as usize],
                                &o,
                            );
                        }
                    }
                }
            }
        }
    }
    // Many segments, and a segment that does not divide the message.
    for nodes in [vec![0, 0, 0, 1, 1, 1, 2, 2, 2], vec![0, 1, 2, 0, 1, 2]] {
        let p = nodes.len();
        for kind in [K::Bcast, K::Reduce, K::Allreduce] {
            for root in 0..p as u32 {
                let alg = Algorithm::Han(1000);
                let o = simulate(schedules_on(alg, kind, &nodes, root, 12_345).unwrap())
                    .unwrap_or_else(|e| panic!("{kind:?} {nodes:?} root={root}: {e}"));
                check_flow(kind, alg, p, root as usize, 12_345, &vec![12_345; p], &o);
            }
        }
    }
}

/// The messages of a schedule set that cross nodes: (from, to, bytes).
fn crossing(s: &[Vec<Step>], nodes: &[u32]) -> Vec<(usize, usize, u64)> {
    let mut out = Vec::new();
    for (r, sched) in s.iter().enumerate() {
        for step in sched {
            for op in &step.ops {
                if let Op::Send { peer, bytes, .. } = *op
                    && nodes[r] != nodes[peer as usize]
                {
                    out.push((r, peer as usize, bytes));
                }
            }
        }
    }
    out
}

#[test]
fn han_allreduce_on_2_nodes_of_4_crosses_nodes_only_at_the_leaders() {
    // 8 bytes, one segment. Each node: tuned reduce on 4 ranks below 4096
    // bytes is the binary tree (3 messages); the two leaders: libnbc
    // ireduce on 2 ranks below 65536 bytes is binomial (1 message), ibcast
    // on <= 4 ranks linear (1 message); each node: tuned bcast on 4 ranks
    // below 64 bytes is the binary tree (3 messages). 2*3 + 1 + 1 + 2*3.
    let nodes = [0, 0, 0, 0, 1, 1, 1, 1];
    let alg = Algorithm::Han(han::SEGSIZE);
    let s = schedules_on(alg, CollKind::Allreduce, &nodes, 0, 8).unwrap();
    let o = simulate(s.clone()).unwrap();
    assert_eq!(o.sent_msgs.iter().sum::<u64>(), 14);
    assert_eq!(crossing(&s, &nodes), vec![(0, 4, 8), (4, 0, 8)]);
    // Per rank: the leaders send 2 (binary-tree bcast children 1, 2) + 1
    // (rank 0: the ibcast; rank 4: the ireduce); ranks 1 and 5 forward the
    // reduce and the bcast to 3 and 7; the others send their reduce
    // contribution only.
    assert_eq!(o.sent_msgs, vec![3, 2, 1, 1, 3, 2, 1, 1]);
    // Everyone's data is combined: 3 bytes-worths on each node, 1 at rank 0.
    assert_eq!(o.reduced.iter().sum::<u64>(), 7 * 8);
}

#[test]
fn han_pipelines_segments_between_the_levels() {
    // 200000 bytes in segments of 65536: 65536 * 3 + 3392.
    let nodes = [0, 0, 0, 0, 1, 1, 1, 1];
    let alg = Algorithm::Han(han::SEGSIZE);
    let segs = [65536, 65536, 65536, 3392];
    // Bcast from rank 0: segment 0 by tuned's bcast between the two
    // leaders, 1-3 by libnbc's ibcast (linear): the whole buffer crosses
    // once, from rank 0 to rank 4, one message per segment.
    let s = schedules_on(alg, CollKind::Bcast, &nodes, 0, 200_000).unwrap();
    let cross: Vec<u64> = crossing(&s, &nodes).iter().map(|c| c.2).collect();
    assert!(crossing(&s, &nodes).iter().all(|c| (c.0, c.1) == (0, 4)));
    assert_eq!(cross, segs);
    // The leader forwards segment k+1 to the other node in the step where
    // it sends segment k on its node.
    let both = s[0].iter().filter(|st| {
        let peers: Vec<u32> = st.ops.iter().filter_map(|op| op.peer()).collect();
        peers.contains(&4) && peers.iter().any(|&q| (1..4).contains(&q))
    });
    assert_eq!(both.count(), 3);
    // Allreduce: each direction carries the whole buffer once. Up, libnbc's
    // ireduce on 2 ranks chains a 65536-byte segment in 8 fragments of
    // 8192 and sends the 3392-byte one whole (binomial); down, its ibcast
    // sends each segment whole.
    let s = schedules_on(alg, CollKind::Allreduce, &nodes, 0, 200_000).unwrap();
    let c = crossing(&s, &nodes);
    let up: Vec<u64> = c.iter().filter(|c| c.0 == 4).map(|c| c.2).collect();
    let down: Vec<u64> = c.iter().filter(|c| c.0 == 0).map(|c| c.2).collect();
    assert_eq!(up.len(), 3 * 8 + 1);
    assert!(up[..24].iter().all(|&b| b == 8192) && up[24] == 3392);
    assert_eq!(down, segs);
    assert_eq!(c.len(), up.len() + down.len());
    // Reduce to rank 0: node 1's leader sends the chained fragments of
    // segment k to rank 0 while its node reduces segment k+1 to it (tuned's
    // binomial or binary tree on 4 ranks: it receives from ranks 5 and 6,
    // two steps): in the three tasks that overlap (segments 0-2 up, 1-3 on
    // the node) those two steps also carry a fragment, 6 steps in all.
    let s = schedules_on(alg, CollKind::Reduce, &nodes, 0, 200_000).unwrap();
    let c = crossing(&s, &nodes);
    assert!(c.iter().all(|c| (c.0, c.1) == (4, 0)));
    assert_eq!(c.iter().map(|c| c.2).sum::<u64>(), 200_000);
    assert_eq!(c.len(), 3 * 8 + 1);
    let mixed = s[4].iter().filter(|st| {
        let peers: Vec<u32> = st.ops.iter().filter_map(|op| op.peer()).collect();
        peers.contains(&0) && peers.iter().any(|&q| (5..8).contains(&q))
    });
    assert_eq!(mixed.count(), 6);
}

#[test]
fn han_reduce_and_gather_go_through_the_roots_node_rank() {
    // Root 5 (node 1, node rank 1): the ranks at node rank 1 (1 and 5)
    // carry the inter-node step; han's reduce ireduce is binomial on 2
    // ranks (8 bytes), its gather is tuned's on 2 ranks of 4 blocks.
    let nodes = [0, 0, 0, 0, 1, 1, 1, 1];
    for kind in [CollKind::Reduce, CollKind::Gather] {
        let s = schedules_on(Algorithm::Han(han::SEGSIZE), kind, &nodes, 5, 8).unwrap();
        let want = if kind == CollKind::Gather { 32 } else { 8 };
        assert_eq!(crossing(&s, &nodes), vec![(1, 5, want)], "{kind:?}");
    }
    // Scatter from root 2: the 4 blocks of node 1 go from rank 2 to 6.
    let s = schedules_on(Algorithm::Han(0), CollKind::Scatter, &nodes, 2, 8).unwrap();
    assert_eq!(crossing(&s, &nodes), vec![(2, 6, 32)]);
    // Cyclic placement: node 0 holds 0, 2, 4, 6; root 3 is node 1's rank 1,
    // whose up communicator is {2, 3}.
    let cyc = [0, 1, 0, 1, 0, 1, 0, 1];
    let s = schedules_on(Algorithm::Han(0), CollKind::Gather, &cyc, 3, 8).unwrap();
    assert_eq!(crossing(&s, &cyc), vec![(2, 3, 32)]);
}

#[test]
fn open_mpi_5_picks_han_where_its_defaults_do() {
    use Algorithm as A;
    use CollKind as K;
    let cfg = CollConfig::new(Library::OpenMpi5);
    let pick = |kind: CollKind, nodes: Option<&[u32]>, n: u64| {
        let layout = nodes.map(NodeLayout::new);
        let p = nodes.map_or(8, |x| x.len() as u32);
        select(
            &cfg,
            &CollCall {
                kind,
                rank: 0,
                size: p,
                root: 0,
                counts: Counts::Uniform(n),
                elem: 1,
                layout: layout.as_ref(),
            },
        )
    };
    let tuned = |kind: CollKind, p: u32, n: u64| {
        super::openmpi::select(&call(kind, 0, p, 0, Counts::Uniform(n)))
    };
    let two_by_four: &[u32] = &[0, 0, 0, 0, 1, 1, 1, 1];
    let cyclic: &[u32] = &[0, 1, 0, 1, 0, 1];
    let uneven: &[u32] = &[0, 0, 0, 1, 1];
    let pairs_and_singles: &[u32] = &[0, 0, 1, 2];
    let one_node: &[u32] = &[0; 8];
    let flat: &[u32] = &[0, 1, 2, 3, 4, 5, 6, 7];
    for n in [1u64, 65536, 1 << 20] {
        for kind in [K::Bcast, K::Reduce, K::Allreduce] {
            assert_eq!(pick(kind, Some(two_by_four), n), A::Han(65536));
            assert_eq!(pick(kind, Some(cyclic), n), A::Han(65536));
        }
        for kind in [K::Barrier, K::Gather, K::Scatter, K::Allgather] {
            assert_eq!(pick(kind, Some(two_by_four), n), A::Han(0));
        }
        // han provides no alltoall(v), allgatherv, reduce_scatter, scan,
        // exscan, gatherv, scatterv: tuned's (or basic's) choice.
        for kind in [K::Alltoall, K::ReduceScatter, K::Scan, K::Exscan] {
            assert_eq!(pick(kind, Some(two_by_four), n), tuned(kind, 8, n));
        }
        // Declined: no layout, one node, one rank per node.
        for kind in [K::Bcast, K::Allreduce, K::Barrier, K::Gather] {
            assert_eq!(pick(kind, None, n), tuned(kind, 8, n));
            assert_eq!(pick(kind, Some(one_node), n), tuned(kind, 8, n));
            assert_eq!(pick(kind, Some(flat), n), tuned(kind, 8, n));
        }
        // Unbalanced nodes: allreduce and barrier still han's, the others
        // fall back (coll_han_topo.c's imbalance check).
        for nodes in [uneven, pairs_and_singles] {
            let p = nodes.len() as u32;
            assert_eq!(pick(K::Allreduce, Some(nodes), n), A::Han(65536));
            assert_eq!(pick(K::Barrier, Some(nodes), n), A::Han(0));
            for kind in [K::Bcast, K::Reduce, K::Gather, K::Scatter, K::Allgather] {
                assert_eq!(pick(kind, Some(nodes), n), tuned(kind, p, n));
            }
        }
    }
    assert!(Library::OpenMpi5.node_aware());
}

/// Open MPI 4.1 has han at priority 0: on a communicator that spans nodes
/// it decides as tuned's fixed rules (5.0's tables), where `openmpi-5`
/// takes han.
#[test]
fn open_mpi_4_1_is_tuned_over_a_flat_communicator() {
    use CollKind as K;
    assert_eq!(Library::from_name("openmpi-4.1"), Some(Library::OpenMpi41));
    assert_eq!(Library::from_name("OpenMPI4.1"), Some(Library::OpenMpi41));
    assert_eq!(Library::OpenMpi41.name(), "openmpi-4.1");
    assert!(!Library::OpenMpi41.node_aware() && Library::OpenMpi41.is_open_mpi());
    let nodes: &[u32] = &[0, 0, 0, 0, 1, 1, 1, 1];
    let layout = NodeLayout::new(nodes);
    for kind in [K::Bcast, K::Allreduce, K::Barrier, K::Alltoall] {
        for n in [0u64, 8, 65536, 1 << 20] {
            let c = CollCall {
                kind,
                rank: 0,
                size: 8,
                root: 0,
                counts: Counts::Uniform(n),
                elem: 1,
                layout: Some(&layout),
            };
            let flat = super::openmpi::select(&call(kind, 0, 8, 0, Counts::Uniform(n)));
            assert_eq!(select(&CollConfig::new(Library::OpenMpi41), &c), flat);
            if kind != K::Alltoall && n > 0 {
                assert!(matches!(
                    select(&CollConfig::new(Library::OpenMpi5), &c),
                    Algorithm::Han(_)
                ));
            }
        }
    }
}

#[test]
fn han_names_resolve() {
    use Algorithm as A;
    for lib in Library::ALL {
        assert_eq!(
            Algorithm::resolve(lib, CollKind::Bcast, "han:65536"),
            Ok(A::Han(65536))
        );
        assert_eq!(
            Algorithm::resolve(lib, CollKind::Allreduce, "han"),
            Ok(A::Han(0))
        );
        // Only bcast, reduce and allreduce segment.
        assert_eq!(
            Algorithm::resolve(lib, CollKind::Barrier, "han:65536"),
            Ok(A::Han(0))
        );
        assert!(Algorithm::resolve(lib, CollKind::Alltoall, "han").is_err());
    }
    assert_eq!(A::Han(65536).to_string(), "han:65536");
    assert_eq!(A::Han(0).to_string(), "han");
}

// ---------------------------------------------------------------------------
// Intel MPI (intelmpi.rs, table from tuning_generic_shm-ofi.dat; every row
// below is a line of docs/sources/intelmpi/generic_shm-ofi-composition.tsv).

/// Intel MPI 2021's choice for `p` ranks placed `ppn` per node (block).
fn impi(kind: CollKind, ppn: u32, p: u32, n: u64) -> Algorithm {
    let nodes: Vec<u32> = (0..p).map(|r| r / ppn).collect();
    let layout = NodeLayout::new(&nodes);
    select(
        &CollConfig::new(Library::IntelMpi2021),
        &CollCall {
            kind,
            rank: 0,
            size: p,
            root: 0,
            counts: Counts::Uniform(n),
            elem: 1,
            layout: Some(&layout),
        },
    )
}

#[test]
fn intelmpi_selection_follows_the_tuning_table() {
    use Algorithm as A;
    use CollKind as K;
    use TreeKind as T;
    // A topology-aware SHM-based leaf on one tree.
    let shm = |kind, radix| A::ShmAlpha(ShmTrees::both(ShmTree { kind, radix }));
    // (kind, ppn, p, bytes, expected). "netmod" rows leave the algorithm
    // to Intel's netmod table (its row is quoted); "MPIR" rows take MPICH
    // 4's MPIR choice (named in the comment).
    let cases: &[(K, u32, u32, u64, A)] = &[
        // allreduce ppn=32 comm_size=64: 0 "8" (preset 3 reduce + bcast);
        // 128 "6,2,4 -1", 1166 "6,1,4 -1", 10408 "6,1,2 -1" (SHM-based);
        // 2623277 "2 -1" (netmod: 37121 "4" and 1508645 "12" Rabenseifner,
        // else "11" ring); else "1 -1 -1 -1" (preset 4 topology-aware
        // reduce + bcast).
        (K::Allreduce, 32, 64, 0, A::NonOverlapping),
        (K::Allreduce, 32, 64, 1, shm(T::Kary, 4)),
        (K::Allreduce, 32, 64, 128, shm(T::Kary, 4)),
        (K::Allreduce, 32, 64, 129, shm(T::Knomial, 4)),
        (K::Allreduce, 32, 64, 1167, shm(T::Knomial, 2)),
        (K::Allreduce, 32, 64, 10408, shm(T::Knomial, 2)),
        (K::Allreduce, 32, 64, 10409, A::Rabenseifner),
        (K::Allreduce, 32, 64, 1508645, A::Rabenseifner),
        (K::Allreduce, 32, 64, 1508646, A::Ring),
        (K::Allreduce, 32, 64, 2623277, A::Ring),
        (K::Allreduce, 32, 64, 2623278, A::Ch4Alpha),
        // allgather ppn=32 comm_size=64: 0 "1 2" Bruck's; 237 "1 4,2"
        // knomial radix 2 (Bruck's pattern); 304 "3" topology-aware gatherv
        // + bcast (MPIR: recursive doubling below 524288 bytes in all);
        // 512 knomial; 18850 "3" (MPIR); else "1 3" ring.
        (K::Allgather, 32, 64, 237, A::Bruck),
        (K::Allgather, 32, 64, 238, A::RecursiveDoubling),
        (K::Allgather, 32, 64, 304, A::RecursiveDoubling),
        (K::Allgather, 32, 64, 305, A::Bruck),
        (K::Allgather, 32, 64, 512, A::Bruck),
        (K::Allgather, 32, 64, 513, A::RecursiveDoubling),
        (K::Allgather, 32, 64, 8191, A::RecursiveDoubling),
        (K::Allgather, 32, 64, 8192, A::Ring),
        (K::Allgather, 32, 64, 18851, A::Ring),
        // allgather ppn=1 comm_size=2: 1 recursive doubling; 3 ring; 7
        // knomial; 16 ring.
        (K::Allgather, 1, 2, 1, A::RecursiveDoubling),
        (K::Allgather, 1, 2, 2, A::Ring),
        (K::Allgather, 1, 2, 7, A::Bruck),
        (K::Allgather, 1, 2, 8, A::Ring),
        (K::Allgather, 1, 2, 17, A::RecursiveDoubling),
        // alltoall ppn=32 comm_size=64: 219 "1 1" Bruck's; else "1 2"
        // isend/irecv + waitall, no throttle (all posted at once).
        (K::Alltoall, 32, 64, 219, A::Bruck),
        (K::Alltoall, 32, 64, 220, A::Linear),
        // alltoall ppn=1 comm_size=4: 0 Bruck's; 524288 isend/irecv; else
        // "1 5" (preset 4 Plum's: pairwise here). comm_size=2: pairwise.
        (K::Alltoall, 1, 4, 524288, A::Linear),
        (K::Alltoall, 1, 4, 524289, A::Pairwise),
        (K::Alltoall, 1, 2, 1, A::Pairwise),
        // barrier: every row is a node-aware composition: ppn=1 "1 -1 -1
        // -1" (topology aware); ppn=32 up to 512 ranks "6,1,4 -1"
        // (SHM-based knomial), beyond "6,0,4 -1" (SHM-based flat).
        (K::Barrier, 1, 8, 0, A::Ch4Alpha),
        (K::Barrier, 32, 64, 0, shm(T::Knomial, 4)),
        (K::Barrier, 32, 1024, 0, shm(T::Flat, 0)),
        // bcast ppn=32 comm_size=64: 11 "3 -1" (netmod: 8192 "1,2,4096,..."
        // knomial); 40 "1 -1 -1" (alpha); 233 netmod; 413 alpha; 1280 "2
        // -1 -1 -1" (beta); 2656764 alpha; else netmod (3022720
        // "10,8192", Shumilin's: the pipelined chain; else "10,32768").
        (K::Bcast, 32, 64, 11, A::Knomial),
        (K::Bcast, 32, 64, 12, A::Ch4Alpha),
        (K::Bcast, 32, 64, 41, A::Knomial),
        (K::Bcast, 32, 64, 413, A::Ch4Alpha),
        (K::Bcast, 32, 64, 414, A::Ch4Beta),
        (K::Bcast, 32, 64, 1281, A::Ch4Alpha),
        (K::Bcast, 32, 64, 2656764, A::Ch4Alpha),
        (K::Bcast, 32, 64, 2656765, A::Pipeline(8192)),
        (K::Bcast, 32, 64, 3022721, A::Pipeline(32768)),
        // reduce ppn=32 comm_size=64: 0 "1 -1 7" (SHM-based flat); 6 "1 -1
        // 7,1,4,1,4" (knomial 4); 11 knary 4; 358 knomial 2; 739 "1 -1 -1"
        // (alpha, its node part left to the shm table: MPICH's); 8408 "1
        // -1 7,1,2,1,2" (SHM-based knomial 2); 70898 "2 -1" (netmod:
        // 179099 "4" Rabenseifner); else "1 -1 -1" (alpha).
        (K::Reduce, 32, 64, 0, shm(T::Flat, 0)),
        (K::Reduce, 32, 64, 6, shm(T::Knomial, 4)),
        (K::Reduce, 32, 64, 11, shm(T::Kary, 4)),
        (K::Reduce, 32, 64, 358, shm(T::Knomial, 2)),
        (K::Reduce, 32, 64, 739, A::Ch4Alpha),
        (K::Reduce, 32, 64, 8408, shm(T::Knomial, 2)),
        (K::Reduce, 32, 64, 8409, A::Rabenseifner),
        (K::Reduce, 32, 64, 70898, A::Rabenseifner),
        (K::Reduce, 32, 64, 70899, A::Ch4Alpha),
        // reduce ppn=1 comm_size=16: 1068 "2 1,4,4096,1,4" (knomial:
        // binomial); 13817 knomial; 205003 "2 -1" (netmod: 86623
        // "1,2,8192,..." knomial, 156829 "2,2,8192,0,3", a binary tree in 8
        // KiB segments; else "6,16000", Shumilin's: the chain); 1145620 "1
        // 6,14000 6,14000" (alpha); else "2 6,14000" (Shumilin's in 14000
        // bytes segments: the chain).
        (K::Reduce, 1, 16, 1068, A::BinomialTree),
        (K::Reduce, 1, 16, 86623, A::BinomialTree),
        (K::Reduce, 1, 16, 86624, A::BinaryTree(8192)),
        (K::Reduce, 1, 16, 156830, A::Pipeline(16000)),
        (K::Reduce, 1, 16, 205003, A::Pipeline(16000)),
        (K::Reduce, 1, 16, 205004, A::Ch4Alpha),
        (K::Reduce, 1, 16, 1145621, A::Pipeline(14000)),
        // gather and scatter: binomial, Shumilin's, segmented/radix and
        // topology-aware binomial all run as the binomial tree.
        (K::Gather, 32, 64, 512, A::BinomialTree),
        (K::Gather, 2, 4, 16383, A::BinomialTree),
        (K::Scatter, 2, 4, 0, A::BinomialTree),
        (K::Scatter, 32, 64, 1 << 20, A::BinomialTree),
        // Between keys: ppn 3 takes the ppn=4 rows, comm_size 12 the
        // comm_size=16 row: 12 Bruck's; 351 Plum's; 298891 isend/irecv;
        // else pairwise.
        (K::Alltoall, 3, 12, 12, A::Bruck),
        (K::Alltoall, 3, 12, 13, A::Pairwise),
        (K::Alltoall, 3, 12, 352, A::Linear),
        (K::Alltoall, 3, 12, 298892, A::Pairwise),
        // Past the last key: comm_size 128 at ppn=1 takes the 64 row
        // (124115 netmod, 133521 alpha, else netmod; the netmod's 64 row:
        // 159110 "4", else "12", both Rabenseifner).
        (K::Allreduce, 1, 128, 124115, A::Rabenseifner),
        (K::Allreduce, 1, 128, 124116, A::Ch4Alpha),
        (K::Allreduce, 1, 128, 133522, A::Rabenseifner),
        // ppn 64 takes the ppn=56 rows, comm_size 128 the 144 row: 10228
        // "6,2,4 -1" (SHM-based knary); 1319125 "2 12" Rabenseifner's;
        // else "2 11" ring.
        (K::Allreduce, 64, 128, 10228, shm(T::Kary, 4)),
        (K::Allreduce, 64, 128, 10229, A::Rabenseifner),
        (K::Allreduce, 64, 128, 1319126, A::Ring),
        // Not in the translated table: MPICH 4's MPIR choice.
        (K::Allgatherv, 32, 64, 100, A::RecursiveDoubling),
        (K::Scan, 2, 8, 100, A::RecursiveDoubling),
    ];
    for &(kind, ppn, p, n, expect) in cases {
        assert_eq!(
            impi(kind, ppn, p, n),
            expect,
            "{kind:?} ppn={ppn} p={p} n={n}"
        );
    }
    // Without a layout every rank is on a node of its own (ppn 1).
    let flat = select(
        &CollConfig::new(Library::IntelMpi2021),
        &call(CollKind::Reduce, 0, 16, 0, Counts::Uniform(1068)),
    );
    assert_eq!(flat, Algorithm::BinomialTree);
    // 2019 and 2021 read the same table.
    assert_eq!(
        select(
            &CollConfig::new(Library::IntelMpi2019),
            &call(CollKind::Reduce, 0, 16, 0, Counts::Uniform(205004))
        ),
        Algorithm::Ch4Alpha
    );
}

#[test]
fn intelmpi_names_and_aliases() {
    for (name, lib) in [
        ("intelmpi", Library::IntelMpi2021),
        ("IntelMPI-2021", Library::IntelMpi2021),
        ("impi", Library::IntelMpi2021),
        ("intel_mpi", Library::IntelMpi2021),
        ("intelmpi-2019", Library::IntelMpi2019),
        ("impi_2019", Library::IntelMpi2019),
    ] {
        assert_eq!(Library::from_name(name), Some(lib), "{name}");
    }
    assert_eq!(Library::from_name("intelmpi-2018"), None);
    assert_eq!(Library::IntelMpi2019.name(), "intelmpi-2019");
    assert_eq!(Library::IntelMpi2021.name(), "intelmpi-2021");
    assert!(Library::IntelMpi2021.node_aware());
    assert!(!Library::IntelMpi2021.is_open_mpi());
    assert!(Library::known().contains("\"intelmpi\" (= intelmpi-2021)"));
}

#[test]
fn intelmpi_choices_run_on_their_layouts() {
    // Every (ppn, comm_size) row of the table up to 64 ranks, at each row's
    // message-size bounds and one byte past them, as a block placement: the
    // chosen algorithm's schedules match, finish and move the data.
    let cfg = CollConfig::new(Library::IntelMpi2021);
    let mut runs = 0;
    for kind in [
        CollKind::Allgather,
        CollKind::Allreduce,
        CollKind::Alltoall,
        CollKind::Barrier,
        CollKind::Bcast,
        CollKind::Gather,
        CollKind::Reduce,
        CollKind::Scatter,
    ] {
        for (ppn, p, bounds) in intelmpi::rows(kind) {
            if p > 64 || p < ppn {
                continue;
            }
            let nodes: Vec<u32> = (0..p).map(|r| r / ppn).collect();
            let layout = NodeLayout::new(&nodes);
            let mut sizes: Vec<u64> = bounds
                .iter()
                .filter(|&&b| b < 1 << 20)
                .flat_map(|&b| [b, b + 1])
                .collect();
            sizes.dedup();
            // A zero-byte call has no steps (barrier excepted): nothing to
            // check there.
            sizes.retain(|&n| n > 0 || kind == CollKind::Barrier);
            for n in sizes {
                let root = if kind.rooted() { p / 2 } else { 0 };
                let steps: Vec<Vec<Step>> = (0..p)
                    .map(|rank| {
                        let c = CollCall {
                            kind,
                            rank,
                            size: p,
                            root,
                            counts: Counts::Uniform(n),
                            elem: 1,
                            layout: Some(&layout),
                        };
                        let alg = select(&cfg, &c);
                        schedule_in(cfg.library, alg, &c)
                            .unwrap_or_else(|e| panic!("{kind:?} ppn={ppn} p={p} n={n}: {e}"))
                    })
                    .collect();
                let alg = impi(kind, ppn, p, n);
                let o = simulate(steps)
                    .unwrap_or_else(|e| panic!("{kind:?} {alg} ppn={ppn} p={p} n={n}: {e}"));
                check_flow(
                    kind,
                    alg,
                    p as usize,
                    root as usize,
                    n,
                    &vec![n; p as usize],
                    &o,
                );
                runs += 1;
            }
        }
    }
    assert!(runs > 500, "only {runs} runs");
}

// ---------------------------------------------------------------------------
// Element counts: `elem:` (the datatype's size) where the libraries compare
// or split counts, not bytes.

/// The algorithm `library` picks for `kind` on `p` ranks, `n` bytes of
/// `elem`-byte elements.
fn pick_elem(library: Library, kind: CollKind, p: u32, n: u64, elem: u64) -> Algorithm {
    let c = CollCall {
        elem,
        ..call(kind, 0, p, 0, Counts::Uniform(n))
    };
    select(&CollConfig::new(library), &c)
}

#[test]
fn selection_compares_element_counts_where_the_source_does() {
    use Algorithm as A;
    use CollKind as K;
    let rows: &[(Library, CollKind, u32, u64, u64, Algorithm)] = &[
        // MPICH 3 MPIR_Allreduce_intra_auto: above 2048 bytes, `count <
        // pof2` (pof2 = 2048 on 3,072 ranks): 4 KiB of bytes is 4096
        // elements, of floats 1024.
        (
            Library::Mpich3,
            K::Allreduce,
            3072,
            4096,
            1,
            A::Rabenseifner,
        ),
        (
            Library::Mpich3,
            K::Allreduce,
            3072,
            4096,
            4,
            A::RecursiveDoubling,
        ),
        (
            Library::Mpich3,
            K::Allreduce,
            3072,
            8192,
            4,
            A::Rabenseifner,
        ),
        (
            Library::Mpich3,
            K::Allreduce,
            3072,
            8188,
            4,
            A::RecursiveDoubling,
        ),
        // MPIR_Reduce_intra_auto: `count >= pof2` for Rabenseifner.
        (Library::Mpich3, K::Reduce, 3072, 4096, 1, A::Rabenseifner),
        (Library::Mpich3, K::Reduce, 3072, 4096, 4, A::BinomialTree),
        (Library::Mpich3, K::Reduce, 3072, 16384, 8, A::Rabenseifner),
        (Library::Mpich3, K::Reduce, 3072, 16376, 8, A::BinomialTree),
        // MPICH 4's MPIR tree on a flat communicator: the same `count<pow2`.
        (
            Library::Mpich4,
            K::Allreduce,
            3072,
            2048,
            4,
            A::RecursiveDoubling,
        ),
        (
            Library::Mpich4,
            K::Allreduce,
            3072,
            8192,
            4,
            A::Rabenseifner,
        ),
        (Library::Mpich4, K::Reduce, 3072, 16376, 8, A::BinomialTree),
        // Open MPI 4.0 ompi_coll_tuned_allreduce_intra_dec_fixed: the ring
        // needs `count > comm_size`: 16 KiB of doubles on 3,072 ranks is
        // 2,048 elements (reduce + bcast); one element more than p rings.
        (Library::OpenMpi4, K::Allreduce, 3072, 16384, 1, A::Ring),
        (
            Library::OpenMpi4,
            K::Allreduce,
            3072,
            16384,
            8,
            A::NonOverlapping,
        ),
        (
            Library::OpenMpi4,
            K::Allreduce,
            3072,
            3072 * 4,
            4,
            A::NonOverlapping,
        ),
        (Library::OpenMpi4, K::Allreduce, 3072, 3073 * 4, 4, A::Ring),
        // Open MPI 5's tuned bcast on 24 ranks above 1 MiB: scatter_allgather,
        // which leaves for basic_linear when `count < comm_size` (2 MiB of a
        // derived datatype of 64 KiB: 32 elements; of 128 KiB: 16).
        (
            Library::OpenMpi41,
            K::Bcast,
            24,
            1 << 21,
            1,
            A::ScatterRecursiveDoublingAllgather,
        ),
        (
            Library::OpenMpi41,
            K::Bcast,
            24,
            1 << 21,
            1 << 16,
            A::ScatterRecursiveDoublingAllgather,
        ),
        (
            Library::OpenMpi41,
            K::Bcast,
            24,
            1 << 21,
            1 << 17,
            A::Linear,
        ),
    ];
    for &(lib, kind, p, n, elem, expect) in rows {
        assert_eq!(
            pick_elem(lib, kind, p, n, elem),
            expect,
            "{lib:?} {kind:?} p={p} n={n} elem={elem}"
        );
    }
}

/// Every rank of `alg` on `p` ranks for `n` bytes of `elem`-byte elements,
/// run by [`simulate`] (the schedules match and finish).
fn run_elem(alg: Algorithm, kind: CollKind, p: u32, n: u64, elem: u64) -> Outcome {
    let steps = (0..p)
        .map(|rank| {
            let c = CollCall {
                elem,
                ..call(kind, rank, p, 0, Counts::Uniform(n))
            };
            schedule(alg, &c).unwrap_or_else(|e| panic!("{alg} elem={elem}: {e}"))
        })
        .collect();
    simulate(steps).unwrap_or_else(|e| panic!("{alg} elem={elem}: {e}"))
}

/// The bytes of every message of `steps` (`sends_only`: of its sends).
fn message_bytes(steps: &[Step], sends_only: bool) -> Vec<u64> {
    steps
        .iter()
        .flat_map(|s| &s.ops)
        .filter_map(|op| match *op {
            Op::Send { bytes, .. } => Some(bytes),
            Op::Recv { bytes, .. } if !sends_only => Some(bytes),
            _ => None,
        })
        .collect()
}

#[test]
fn vectors_split_by_elements() {
    // Open MPI's ring allreduce on 4 ranks: 40 bytes of doubles are 5
    // elements, COLL_BASE_COMPUTE_BLOCKCOUNT(5, 4) = blocks of 2, 1, 1, 1
    // elements: 16, 8, 8, 8 bytes; of bytes, 10 each.
    let doubles = run_elem(Algorithm::Ring, CollKind::Allreduce, 4, 40, 8);
    let bytes = run_elem(Algorithm::Ring, CollKind::Allreduce, 4, 40, 1);
    let block = |b: u32| if b.is_multiple_of(4) { 16 } else { 8 };
    for rank in 0..4u32 {
        let steps = &doubles.steps[rank as usize];
        let all = message_bytes(steps, false);
        assert!(all.iter().all(|b| b % 8 == 0), "rank {rank}: {all:?}");
        assert!(all.contains(&16) && all.contains(&8), "{all:?}");
        assert!(
            message_bytes(&bytes.steps[rank as usize], false)
                .iter()
                .all(|&b| b == 10)
        );
        // Sent: in the reduce-scatter the blocks rank, rank-1, rank-2
        // (all but rank+1's), in the allgather rank+1, rank, rank-1 (all but
        // rank+2's): 2 * 40 - block(rank + 1) - block(rank + 2).
        let sent: u64 = message_bytes(steps, true).iter().sum();
        assert_eq!(sent, 80 - block(rank + 1) - block(rank + 2), "rank {rank}");
        // Received: all but block(rank) in the reduce-scatter, all but
        // block(rank + 1) in the allgather.
        assert_eq!(
            doubles.received[rank as usize],
            80 - block(rank) - block(rank + 1),
            "rank {rank}"
        );
    }
    // MPICH's Rabenseifner allreduce and reduce on 4 ranks: `cnts` of 5
    // elements over pof2 = 4 blocks, the first one larger; the combined
    // bytes are whole elements too.
    for (kind, alg) in [
        (CollKind::Allreduce, Algorithm::Rabenseifner),
        (CollKind::Allreduce, Algorithm::OmpiRabenseifner),
        (CollKind::Reduce, Algorithm::Rabenseifner),
        (CollKind::Reduce, Algorithm::OmpiRabenseifner),
    ] {
        let o = run_elem(alg, kind, 4, 40, 8);
        for (rank, steps) in o.steps.iter().enumerate() {
            let bytes = message_bytes(steps, false);
            assert!(
                bytes.iter().all(|b| b % 8 == 0),
                "{alg:?} rank {rank}: {bytes:?}"
            );
            assert!(steps.iter().all(|s| s.reduce_bytes % 8 == 0), "{alg:?}");
        }
    }
    // Open MPI's Rabenseifner falls back to recursive doubling below
    // `nprocs_pof2` elements: 24 bytes of doubles on 4 ranks are 3.
    let c = CollCall {
        elem: 8,
        ..call(CollKind::Allreduce, 0, 4, 0, Counts::Uniform(24))
    };
    assert_eq!(
        schedule(Algorithm::OmpiRabenseifner, &c),
        schedule(Algorithm::RecursiveDoubling, &c)
    );
}

/// The temporaries of each op-kind of `steps`: (allocated, freed), in the
/// order they appear.
fn temporaries(steps: &[Step]) -> (Vec<u64>, Vec<u64>) {
    let mut alloc = Vec::new();
    let mut free = Vec::new();
    for op in steps.iter().flat_map(|s| &s.ops) {
        match *op {
            Op::Alloc { bytes, .. } => alloc.push(bytes),
            Op::Free { bytes } => free.push(bytes),
            _ => {}
        }
    }
    (alloc, free)
}

/// MPICH's `MPIR_CHKLMEM_MALLOC`s of the vector (tag v4.0.2): reduce's
/// `tmp_buf` everywhere and `recvbuf` off the root, allreduce's `tmp_buf`,
/// reduce_scatter's two whole-vector buffers (recursive halving) or the own
/// block plus one byte (pairwise); allocated first in the first step, freed
/// in reverse order last in the last; none under Open MPI.
#[test]
fn mpich_algorithms_allocate_their_temporaries() {
    let n = 1 << 20;
    for alg in [Algorithm::BinomialTree, Algorithm::Rabenseifner] {
        for (rank, temps) in [(0, vec![n]), (1, vec![n, n]), (3, vec![n, n])] {
            let c = call(CollKind::Reduce, rank, 4, 0, Counts::Uniform(n));
            let steps = schedule_in(Library::Mpich4, alg, &c).expect("schedule");
            let (alloc, free) = temporaries(&steps);
            assert_eq!(alloc, temps, "{alg:?} rank {rank}");
            assert_eq!(free, temps, "{alg:?} rank {rank}");
            let first = &steps[0].ops;
            assert!(
                first[..temps.len()]
                    .iter()
                    .all(|o| matches!(o, Op::Alloc { .. }))
            );
            let last = &steps[steps.len() - 1].ops;
            assert!(
                last[last.len() - temps.len()..]
                    .iter()
                    .all(|o| matches!(o, Op::Free { .. }))
            );
            let ompi = schedule_in(Library::OpenMpi5, alg, &c).expect("schedule");
            assert_eq!(temporaries(&ompi), (vec![], vec![]));
        }
    }
    for alg in [Algorithm::RecursiveDoubling, Algorithm::Rabenseifner] {
        let c = call(CollKind::Allreduce, 1, 4, 0, Counts::Uniform(n));
        let steps = schedule_in(Library::Mpich3, alg, &c).expect("schedule");
        assert_eq!(temporaries(&steps), (vec![n], vec![n]), "{alg:?}");
    }
    // What each writes: 2 ranks, root 0. Binomial: the root receives its
    // child's vector, the leaf writes only its `recvbuf`. Rabenseifner: the
    // root keeps the first half, rank 1 the second.
    let touches = |alg, rank| {
        let c = call(CollKind::Reduce, rank, 2, 0, Counts::Uniform(n));
        let steps = schedule_in(Library::Mpich4, alg, &c).expect("schedule");
        steps[0]
            .ops
            .iter()
            .filter_map(|o| match *o {
                Op::Alloc { touch, .. } => Some(touch),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(touches(Algorithm::BinomialTree, 0), [Touch::All]);
    assert_eq!(
        touches(Algorithm::BinomialTree, 1),
        [Touch::Nothing, Touch::All]
    );
    assert_eq!(touches(Algorithm::Rabenseifner, 0), [Touch::FirstHalf]);
    assert_eq!(
        touches(Algorithm::Rabenseifner, 1),
        [Touch::SecondHalf, Touch::All]
    );
    // 3 ranks (pof2 2, rem 1): rank 1 sends its vector to rank 0 and waits
    // (nothing received), rank 0 receives it whole.
    for (rank, touch) in [(1, Touch::Nothing), (0, Touch::All)] {
        let c = call(CollKind::Reduce, rank, 3, 2, Counts::Uniform(n));
        let steps = schedule_in(Library::Mpich4, Algorithm::Rabenseifner, &c).expect("schedule");
        assert_eq!(
            steps[0].ops[0],
            Op::Alloc { bytes: n, touch },
            "rank {rank}"
        );
    }
    let blocks = [1000, 3000, 5000, 7000];
    let c = call(CollKind::ReduceScatter, 2, 4, 0, Counts::PerRank(&blocks));
    let halving = schedule_in(Library::Mpich4, Algorithm::RecursiveHalving, &c).expect("schedule");
    assert_eq!(
        temporaries(&halving),
        (vec![16000, 16000], vec![16000, 16000])
    );
    let pairwise = schedule_in(Library::Mpich4, Algorithm::Pairwise, &c).expect("schedule");
    assert_eq!(temporaries(&pairwise), (vec![5001], vec![5001]));
    // One buffer of the whole result: allgatherv by recursive doubling,
    // allgather and alltoall by Bruck; none for the ring or pairwise.
    let c = call(CollKind::Allgatherv, 1, 4, 0, Counts::PerRank(&blocks));
    let rd = schedule_in(Library::Mpich4, Algorithm::RecursiveDoubling, &c).expect("schedule");
    assert_eq!(temporaries(&rd), (vec![16000], vec![16000]));
    let ring = schedule_in(Library::Mpich4, Algorithm::Ring, &c).expect("schedule");
    assert_eq!(temporaries(&ring), (vec![], vec![]));
    for kind in [CollKind::Allgather, CollKind::Alltoall] {
        let c = call(kind, 3, 4, 0, Counts::Uniform(100));
        let bruck = schedule_in(Library::Mpich3, Algorithm::Bruck, &c).expect("schedule");
        assert_eq!(temporaries(&bruck), (vec![400], vec![400]), "{kind:?}");
    }
    // Bcast allocates nothing of a contiguous vector.
    let c = call(CollKind::Bcast, 1, 4, 0, Counts::Uniform(n));
    let bcast = schedule_in(Library::Mpich4, Algorithm::BinomialTree, &c).expect("schedule");
    assert_eq!(temporaries(&bcast), (vec![], vec![]));
}

/// MPICH 4's node-aware reduce compositions allocate at the node roots on
/// top of what the reduces inside them allocate (`ch4_coll_impl.h` lines
/// 345-357 and 430-442): alpha a `recvbuf` at node roots but the root, beta
/// a `tmp_buf` at every node root.
#[test]
fn mpich4_reduce_compositions_allocate_at_node_roots() {
    let n = 1 << 20;
    // 4 ranks on 2 nodes of 2: node roots 0 and 2.
    let layout = NodeLayout::new(&[0, 0, 1, 1]);
    for (alg, rank, outer) in [
        (Algorithm::Ch4Alpha, 2, 1),
        (Algorithm::Ch4Alpha, 0, 0),
        (Algorithm::Ch4Beta, 0, 1),
        (Algorithm::Ch4Beta, 2, 1),
        (Algorithm::Ch4Beta, 1, 0),
    ] {
        let c = CollCall {
            layout: Some(&layout),
            ..call(CollKind::Reduce, rank, 4, 0, Counts::Uniform(n))
        };
        let steps = schedule_in(Library::Mpich4, alg, &c).expect("schedule");
        let (alloc, free) = temporaries(&steps);
        // Inside: the node reduce (root 0 of the node: 1 buffer at the node
        // root, 2 at the other) and, at node roots, the roots' reduce (1 at
        // its root, 2 at the other).
        let node_reduce = if rank % 2 == 0 { 1 } else { 2 };
        let roots_reduce = match rank {
            0 => 1,
            2 => 2,
            _ => 0,
        };
        assert_eq!(
            alloc.len(),
            outer + node_reduce + roots_reduce,
            "{alg:?} rank {rank}: {alloc:?}"
        );
        assert_eq!(free.len(), alloc.len());
        assert!(alloc.iter().chain(&free).all(|&b| b == n));
        if outer == 1 {
            assert_eq!(
                steps[0].ops[0],
                Op::Alloc {
                    bytes: n,
                    touch: Touch::All
                }
            );
            let last = &steps[steps.len() - 1].ops;
            assert_eq!(last[last.len() - 1], Op::Free { bytes: n });
        }
    }
}

/// Each send's `written` (library data) in a rank's schedule, in order.
fn written_marks(steps: &[Step]) -> Vec<bool> {
    steps
        .iter()
        .flat_map(|s| &s.ops)
        .filter_map(|op| match *op {
            Op::Send { written, .. } => Some(written),
            _ => None,
        })
        .collect()
}

#[test]
fn sends_from_the_users_buffer_are_not_library_data() {
    let uniform = |_| Counts::Uniform(1 << 20);
    let p = 8;
    // Bcast, binomial: the root sends the user's buffer, the others forward
    // what they received.
    for lib in [Library::Mpich4, Library::OpenMpi5] {
        for (alg, root) in [
            (Algorithm::BinomialTree, 0),
            (Algorithm::BinomialTree, 3),
            (Algorithm::OmpiBinomial, 5),
            (Algorithm::Pipeline(65536), 2),
            (Algorithm::Linear, 1),
        ] {
            let s = schedules_in(lib, alg, CollKind::Bcast, p, root, &uniform).unwrap();
            for (r, steps) in s.iter().enumerate() {
                let marks = written_marks(steps);
                let user = r as u32 == root;
                assert!(
                    marks.iter().all(|&w| w != user),
                    "{lib:?} {alg} root {root} rank {r}: {marks:?}"
                );
            }
        }
    }
    // Bcast by scatter and ring allgather: the root's first ring step sends
    // its own piece, later ones pieces it received.
    let s = schedules(
        Algorithm::ScatterRingAllgather,
        CollKind::Bcast,
        p,
        2,
        &uniform,
    )
    .unwrap();
    let root = written_marks(&s[2]);
    // Scatter: log2(8) = 3 sends from the user's buffer; ring: 7 steps.
    assert_eq!(root.len(), 3 + 7);
    assert!(root[..4].iter().all(|&w| !w), "{root:?}");
    assert!(root[4..].iter().all(|&w| w), "{root:?}");
    assert!(written_marks(&s[3]).iter().all(|&w| w));
    // Alltoall: scattered, pairwise and linear send the user's blocks
    // (scattered its own one to itself too); Bruck sends what it rotated
    // and received.
    for (lib, alg, sends) in [
        (Library::Mpich4, Algorithm::Scattered, p),
        (Library::Mpich4, Algorithm::Pairwise, p - 1),
        (Library::OpenMpi5, Algorithm::OmpiPairwise, p - 1),
        (Library::OpenMpi5, Algorithm::Linear, p - 1),
    ] {
        for steps in schedules_in(lib, alg, CollKind::Alltoall, p, 0, &uniform).unwrap() {
            let marks = written_marks(&steps);
            assert_eq!(marks.len(), sends as usize, "{alg}");
            assert!(marks.iter().all(|&w| !w), "{alg}: {marks:?}");
        }
    }
    for steps in schedules(Algorithm::Bruck, CollKind::Alltoall, p, 0, &uniform).unwrap() {
        assert!(written_marks(&steps).iter().all(|&w| w));
    }
    // Gather, binomial: the leaves (odd relative ranks) send their send
    // buffer, inner ranks their temporary.
    let s = schedules(Algorithm::BinomialTree, CollKind::Gather, p, 0, &uniform).unwrap();
    for (r, steps) in s.iter().enumerate().skip(1) {
        assert_eq!(written_marks(steps), vec![r % 2 == 0], "rank {r}");
    }
    // Scatter, binomial: the root sends from its send buffer at rank 0
    // only; at another rank it rotates it into a temporary first.
    for (root, user) in [(0, true), (3, false)] {
        let s = schedules_in(
            Library::Mpich4,
            Algorithm::BinomialTree,
            CollKind::Scatter,
            p,
            root,
            &uniform,
        )
        .unwrap();
        let marks = written_marks(&s[root as usize]);
        assert_eq!(marks.len(), 3);
        assert!(marks.iter().all(|&w| w != user), "root {root}: {marks:?}");
    }
    // Reduce, binomial: MPICH's leaves send the copy of their send buffer,
    // Open MPI's the send buffer itself.
    for (lib, leaf_written) in [(Library::Mpich4, true), (Library::OpenMpi5, false)] {
        let s = schedules_in(
            lib,
            Algorithm::BinomialTree,
            CollKind::Reduce,
            p,
            0,
            &uniform,
        )
        .unwrap();
        assert_eq!(written_marks(&s[1]), vec![leaf_written], "{lib:?}");
        assert_eq!(written_marks(&s[2]), vec![true], "{lib:?}");
    }
    // Allreduce and allgather send library data only.
    for (kind, alg) in [
        (CollKind::Allreduce, Algorithm::RecursiveDoubling),
        (CollKind::Allreduce, Algorithm::Rabenseifner),
        (CollKind::Allreduce, Algorithm::Ring),
        (CollKind::Allgather, Algorithm::Ring),
        (CollKind::Allgather, Algorithm::RecursiveDoubling),
    ] {
        for steps in schedules_in(Library::Mpich4, alg, kind, 6, 0, &uniform).unwrap() {
            assert!(written_marks(&steps).iter().all(|&w| w), "{kind:?} {alg}");
        }
    }
    // Open MPI's linear allreduce: the users' buffers to the root, whose
    // bcast sends the result it combined.
    let s = schedules(Algorithm::Linear, CollKind::Allreduce, 4, 0, &uniform).unwrap();
    assert_eq!(written_marks(&s[0]), vec![true; 3]);
    assert_eq!(written_marks(&s[1]), vec![false]);
}

#[test]
fn a_compositions_later_phases_send_library_data() {
    // MPICH 4's bcast composition on two nodes of four, root 1: the root
    // sends its buffer to its node's leader (rank 0), which forwards it to
    // the other node's leader and inside its node; that leader forwards
    // inside its node what it received.
    let nodes = [0, 0, 0, 0, 1, 1, 1, 1];
    let s = schedules_on(Algorithm::Ch4Alpha, CollKind::Bcast, &nodes, 1, 1 << 20).unwrap();
    let root = written_marks(&s[1]);
    assert!(!root.is_empty() && root.iter().all(|&w| !w), "{root:?}");
    for r in [0, 4] {
        let marks = written_marks(&s[r]);
        assert!(
            !marks.is_empty() && marks.iter().all(|&w| w),
            "rank {r}: {marks:?}"
        );
    }
}

#[test]
fn mpichs_recursive_doubling_allgatherv_copies_the_result_out_of_its_temporary() {
    let counts: Vec<u64> = vec![3, 0, 5, 7, 1];
    let cs: &[u64] = &counts;
    for steps in schedules_in(
        Library::Mpich4,
        Algorithm::RecursiveDoubling,
        CollKind::Allgatherv,
        5,
        0,
        &|_| Counts::PerRank(cs),
    )
    .unwrap()
    {
        // The copy, then the temporary's free.
        let last = steps.last().expect("steps");
        assert_eq!(last.ops[0], Op::Copy { bytes: 16 });
        assert!(
            steps[..steps.len() - 1]
                .iter()
                .all(|s| s.ops.iter().all(|op| !matches!(op, Op::Copy { .. })))
        );
    }
    // The allgather works in the receive buffer: no copy.
    for steps in schedules_in(
        Library::Mpich4,
        Algorithm::RecursiveDoubling,
        CollKind::Allgather,
        4,
        0,
        &|_| Counts::Uniform(8),
    )
    .unwrap()
    {
        assert!(
            steps
                .iter()
                .all(|s| s.ops.iter().all(|op| !matches!(op, Op::Copy { .. })))
        );
    }
}

#[test]
fn open_mpis_two_procs_allgather_sends_the_users_buffer() {
    for kind in [CollKind::Allgather, CollKind::Allgatherv] {
        let s = schedules(Algorithm::TwoProcs, kind, 2, 0, &|_| {
            Counts::Uniform(1 << 20)
        })
        .unwrap();
        for (r, steps) in s.iter().enumerate() {
            let other = 1 - r as u32;
            assert_eq!(
                steps.iter().map(|s| s.ops.clone()).collect::<Vec<_>>(),
                vec![vec![
                    Op::Recv {
                        peer: other,
                        bytes: 1 << 20
                    },
                    Op::Send {
                        peer: other,
                        bytes: 1 << 20,
                        written: false
                    }
                ]],
                "{kind:?} rank {r}"
            );
        }
        let e = schedules(Algorithm::TwoProcs, kind, 3, 0, &|_| Counts::Uniform(8)).unwrap_err();
        assert!(e.contains("2 ranks only"), "{e}");
    }
}

/// Every message of every rank's schedule of one call under `cfg`'s rules,
/// as (source, destination, bytes), sorted.
fn sends_under(cfg: &CollConfig, kind: CollKind, nodes: &[u32], n: u64) -> Vec<(u32, u32, u64)> {
    let layout = NodeLayout::new(nodes);
    let p = nodes.len() as u32;
    let mut out = Vec::new();
    for rank in 0..p {
        let c = CollCall {
            kind,
            rank,
            size: p,
            root: 0,
            counts: Counts::Uniform(n),
            elem: 1,
            layout: Some(&layout),
        };
        let alg = select(cfg, &c);
        let steps = schedule_opts(cfg.library, false, alg, &c).expect("a schedule");
        for step in steps {
            for op in step.ops {
                if let Op::Send { peer, bytes, .. } = op {
                    out.push((rank, peer, bytes));
                }
            }
        }
    }
    out.sort_unstable();
    out
}

/// The two differences the real library's messages showed
/// (`validation/openmpi-coll/`, Open MPI 5.0.11: `one-node/p3.txt.gz`,
/// `two-nodes/p4-rpn2.txt.gz`, the 16-byte calls).
#[test]
fn open_mpi_5_sends_what_5_0_11_sends() {
    use CollKind as K;
    let ompi5 = CollConfig::new(Library::OpenMpi5);
    let ompi41 = CollConfig::new(Library::OpenMpi41);
    // Pairwise alltoallv (tuned's choice below 4 ranks): 5.0.3+ starts with
    // a message to itself; 4.1's sendrecv copies the own block instead.
    let all_pairs: Vec<(u32, u32, u64)> = (0..3)
        .flat_map(|s| (0..3).map(move |d| (s, d, 16)))
        .collect();
    assert_eq!(sends_under(&ompi5, K::Alltoallv, &[0, 0, 0], 16), all_pairs);
    let others: Vec<(u32, u32, u64)> = all_pairs.into_iter().filter(|&(s, d, _)| s != d).collect();
    assert_eq!(sends_under(&ompi41, K::Alltoallv, &[0, 0, 0], 16), others);
    for (library, alg) in [
        (Library::OpenMpi5, Algorithm::OmpiPairwise),
        (Library::Mpich4, Algorithm::Scattered),
    ] {
        assert!(own_block_is_a_message(library, alg, K::Alltoallv));
    }
    assert!(!own_block_is_a_message(
        Library::OpenMpi5,
        Algorithm::OmpiPairwise,
        K::Alltoall
    ));
    assert!(!own_block_is_a_message(
        Library::OpenMpi41,
        Algorithm::OmpiPairwise,
        K::Alltoallv
    ));
    // A small allgatherv on 2 nodes of 2 is tuned's linear (gatherv to rank
    // 0, then a bcast of all 4 blocks through the communicator): the bcast
    // is han's, 0 -> 2 between the leaders, then 0 -> 1 and 2 -> 3.
    assert_eq!(
        sends_under(&ompi5, K::Allgatherv, &[0, 0, 1, 1], 16),
        vec![
            (0, 1, 64),
            (0, 2, 64),
            (1, 0, 16),
            (2, 0, 16),
            (2, 3, 64),
            (3, 0, 16)
        ]
    );
    // Under 4.1 (no han) the bcast is tuned's binomial tree: 1 -> 3.
    assert_eq!(
        sends_under(&ompi41, K::Allgatherv, &[0, 0, 1, 1], 16),
        vec![
            (0, 1, 64),
            (0, 2, 64),
            (1, 0, 16),
            (1, 3, 64),
            (2, 0, 16),
            (3, 0, 16)
        ]
    );
}

/// The local copies of each reduce_scatter algorithm, per rank, as the
/// sources make them (no `MPI_IN_PLACE`): the whole vector (or, pairwise,
/// the own block) first; recursive halving's ranks of the power of two,
/// the ring's every rank and the butterfly's ranks whose own block stayed
/// home copy that block out at the end (MPICH v4.0.2
/// `reduce_scatter_intra_recursive_halving.c` 97, 259,
/// `reduce_scatter_intra_pairwise.c` 61; Open MPI v5.0.9
/// `coll_base_reduce_scatter.c` 190, 349, 530, 604, 732, 874).
#[test]
fn reduce_scatter_copies_as_the_sources_do() {
    let copies = |alg: Algorithm, p: u32, rank: u32, counts: &[u64]| -> Vec<u64> {
        let c = call(CollKind::ReduceScatter, rank, p, 0, Counts::PerRank(counts));
        schedule_in(Library::OpenMpi5, alg, &c)
            .expect("schedules")
            .iter()
            .flat_map(|s| s.ops.iter())
            .filter_map(|op| match op {
                Op::Copy { bytes } => Some(*bytes),
                _ => None,
            })
            .collect()
    };
    let blocks = [100, 200, 300];
    // Ring (3 ranks): the vector, then the own block.
    for rank in 0..3 {
        assert_eq!(
            copies(Algorithm::Ring, 3, rank, &blocks),
            [600, blocks[rank as usize]]
        );
    }
    // Pairwise: the own block, once.
    assert_eq!(copies(Algorithm::Pairwise, 3, 1, &blocks), [200]);
    // Recursive halving on 3 ranks (rem 1): rank 0 drops out and receives
    // its block; ranks 1 and 2 copy theirs out.
    assert_eq!(copies(Algorithm::RecursiveHalving, 3, 0, &blocks), [600]);
    assert_eq!(
        copies(Algorithm::RecursiveHalving, 3, 1, &blocks),
        [600, 200]
    );
    assert_eq!(
        copies(Algorithm::RecursiveHalving, 3, 2, &blocks),
        [600, 300]
    );
    // Butterfly on 2 ranks: the mirror of a 1-bit rank is itself, so each
    // rank copies its own block out of `psend`.
    let two = [100, 200];
    assert_eq!(copies(Algorithm::Butterfly, 2, 0, &two), [300, 100]);
    assert_eq!(copies(Algorithm::Butterfly, 2, 1, &two), [300, 200]);
    // An empty own block: nothing copied out.
    assert_eq!(copies(Algorithm::Ring, 2, 1, &[8, 0]), [8]);
}
