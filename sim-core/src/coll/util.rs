//! Shared pieces: the validated call, the schedule builder, small integer
//! helpers.
//!
//! Ranks are handled as `u64` inside the algorithms (so that `rank + mask`
//! and `2 * mask` cannot overflow for any `u32` communicator size) and
//! converted back to `u32` peers when a step is emitted: every emitted peer
//! is a rank of the communicator, hence `< size <= u32::MAX`.

use super::{Algorithm, CollCall, Counts, Library, NodeLayout, Op, Step};
use crate::ir::CollKind;

/// Largest byte count (of one buffer, or of all blocks of a call) accepted:
/// keeps every intermediate product of the algorithms (`rank * block`,
/// `2 * total`, ...) far below `u64::MAX` and away from
/// [`ANY_SIZE`](super::ANY_SIZE).
pub(super) const MAX_BYTES: u64 = 1 << 62;

/// A validated call: rank, size and root as `u64`, counts checked against
/// the kind and the communicator size.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ctx<'a> {
    pub kind: CollKind,
    pub rank: u64,
    pub size: u64,
    /// The root (0 for operations without one).
    pub root: u64,
    pub counts: Counts<'a>,
    /// Bytes per element of the call's datatype ([`CollCall::elem`]).
    pub elem: u64,
    /// The communicator's node structure, where the caller knows it.
    pub layout: Option<&'a NodeLayout>,
    /// Whose Open MPI rules pick the inner collectives of composite
    /// algorithms (see `coll::schedule_in`).
    pub library: Library,
    /// Whether the schedule carries the library's temporary buffers
    /// (`coll::schedule_opts`).
    pub temporaries: bool,
}

impl<'a> Ctx<'a> {
    pub fn new(call: &CollCall<'a>) -> Result<Ctx<'a>, String> {
        let kind = call.kind;
        if call.size == 0 {
            return Err(format!("{}: communicator of size 0", kind.name()));
        }
        if call.rank >= call.size {
            return Err(format!(
                "{}: rank {} out of range for a communicator of {} ranks",
                kind.name(),
                call.rank,
                call.size
            ));
        }
        let root = if kind.rooted() {
            if call.root >= call.size {
                return Err(format!(
                    "{}: root {} out of range for a communicator of {} ranks",
                    kind.name(),
                    call.root,
                    call.size
                ));
            }
            u64::from(call.root)
        } else {
            0
        };
        let size = u64::from(call.size);
        check_counts(kind, size, call.counts)?;
        Ok(Ctx {
            kind,
            rank: u64::from(call.rank),
            size,
            root,
            counts: call.counts,
            elem: call.elem.max(1),
            layout: call.layout,
            library: Library::OpenMpi5,
            temporaries: false,
        })
    }

    /// Whether the call moves no data at all (both libraries return at once
    /// from a zero-count call). A barrier is never empty.
    pub fn is_empty(&self) -> bool {
        match (self.kind, self.counts) {
            (CollKind::Barrier, _) => false,
            (_, Counts::Uniform(0)) => true,
            (CollKind::Allgatherv | CollKind::ReduceScatter, Counts::PerRank(c)) => {
                c.iter().all(|&x| x == 0)
            }
            _ => false,
        }
    }

    /// The single byte count of bcast, reduce, allreduce, scan, exscan, or
    /// the per-rank block of gather, scatter, allgather, alltoall.
    pub fn bytes(&self) -> Result<u64, String> {
        match self.counts {
            Counts::Uniform(n) => Ok(n),
            _ => Err(format!("{} takes a single byte count", self.kind.name())),
        }
    }

    /// The per-rank blocks of allgather(v) and reduce_scatter (all ranks
    /// know all of them).
    pub fn blocks(&self) -> Result<Blocks<'a>, String> {
        match self.counts {
            Counts::Uniform(n) => Ok(Blocks::uniform(n, self.size)),
            Counts::PerRank(c) => Ok(Blocks::varied(c)),
            Counts::Own(_) => Err(format!(
                "{} needs the counts of every rank, not only this rank's",
                self.kind.name()
            )),
        }
    }

    /// The relative rank `(rank - root) mod size`.
    pub fn rel(&self) -> u64 {
        (self.rank + self.size - self.root) % self.size
    }

    /// The actual rank of relative rank `rel`.
    pub fn abs(&self, rel: u64) -> u64 {
        (rel + self.root) % self.size
    }

    /// The call with another kind, root and counts (for algorithms made of
    /// other collectives).
    pub fn sub(&self, kind: CollKind, root: u64, counts: Counts<'a>) -> Ctx<'a> {
        Ctx {
            kind,
            rank: self.rank,
            size: self.size,
            root,
            counts,
            elem: self.elem,
            layout: self.layout,
            library: self.library,
            temporaries: self.temporaries,
        }
    }

    /// `bytes` as (units, bytes per unit) for the algorithms that split a
    /// vector by elements (Rabenseifner's blocks, the ring's, Open MPI's
    /// segments): the element count and the element size, or bytes and 1
    /// when `bytes` is not a whole number of elements (a sub-call of one).
    /// Such an algorithm runs on the units and its steps are [`scaled`].
    pub fn units(&self, bytes: u64) -> (u64, u64) {
        if self.elem > 1 && bytes.is_multiple_of(self.elem) {
            (bytes / self.elem, self.elem)
        } else {
            (bytes, 1)
        }
    }

    /// The call as the public type (for the selectors of sub-collectives).
    pub fn as_call(&self) -> CollCall<'a> {
        CollCall {
            kind: self.kind,
            rank: peer(self.rank),
            size: peer(self.size),
            root: peer(self.root),
            counts: self.counts,
            elem: self.elem,
            layout: self.layout,
        }
    }
}

/// Checks the shape and magnitude of the counts for `kind`.
fn check_counts(kind: CollKind, size: u64, counts: Counts<'_>) -> Result<(), String> {
    let name = kind.name();
    let too_large = || format!("{name}: byte counts too large (at most 2^62 bytes in one call)");
    let whole_buffer = matches!(
        kind,
        CollKind::Bcast
            | CollKind::Reduce
            | CollKind::Allreduce
            | CollKind::Scan
            | CollKind::Exscan
            | CollKind::Barrier
    );
    match counts {
        Counts::Uniform(n) => {
            let total = if whole_buffer {
                Some(n)
            } else {
                n.checked_mul(size)
            };
            match total {
                Some(t) if t <= MAX_BYTES => Ok(()),
                _ => Err(too_large()),
            }
        }
        Counts::PerRank(c) => {
            if !matches!(
                kind,
                CollKind::Gatherv
                    | CollKind::Scatterv
                    | CollKind::Allgatherv
                    | CollKind::Alltoallv
                    | CollKind::ReduceScatter
            ) {
                return Err(format!(
                    "{name} takes a single byte count, not one per rank"
                ));
            }
            if c.len() as u64 != size {
                return Err(format!(
                    "{name}: {} counts for a communicator of {size} ranks",
                    c.len()
                ));
            }
            let mut total: u64 = 0;
            for &x in c {
                total = total.checked_add(x).ok_or_else(too_large)?;
            }
            if total > MAX_BYTES {
                return Err(too_large());
            }
            Ok(())
        }
        Counts::Own(n) => {
            if !matches!(kind, CollKind::Gatherv | CollKind::Scatterv) {
                return Err(format!(
                    "{name}: only gatherv and scatterv take just this rank's count"
                ));
            }
            if n > MAX_BYTES {
                return Err(too_large());
            }
            Ok(())
        }
    }
}

/// A rank of the communicator as a peer. Invariant: `r < size <= u32::MAX`
/// (every caller passes a rank reduced modulo the size or checked against
/// it), so the conversion is exact.
pub(super) fn peer(r: u64) -> u32 {
    debug_assert!(r <= u64::from(u32::MAX));
    r as u32
}

/// A communicator size as a vector length. Invariant: sizes are `u32`.
pub(super) fn as_len(n: u64) -> usize {
    n as usize
}

/// A send of library data: written by this rank's core in the call
/// (`Op::Send`'s `written`), what most sends inside an algorithm carry.
pub(super) fn send(to: u64, bytes: u64) -> Op {
    Op::Send {
        peer: peer(to),
        bytes,
        written: true,
    }
}

/// A send straight from the user's send buffer, which the call has not
/// written (a bcast's root, a gather's leaf, an alltoall's blocks).
pub(super) fn send_user(to: u64, bytes: u64) -> Op {
    Op::Send {
        peer: peer(to),
        bytes,
        written: false,
    }
}

/// [`send`] or [`send_user`]: `user` when the data comes straight from the
/// user's send buffer.
pub(super) fn send_from(user: bool, to: u64, bytes: u64) -> Op {
    if user {
        send_user(to, bytes)
    } else {
        send(to, bytes)
    }
}

pub(super) fn recv(from: u64, bytes: u64) -> Op {
    Op::Recv {
        peer: peer(from),
        bytes,
    }
}

/// Sets `Op::Send`'s `written` of every send of `step`.
fn mark_sends(step: &mut Step, written: bool) {
    for op in &mut step.ops {
        if let Op::Send { written: w, .. } = op {
            *w = written;
        }
    }
}

/// Marks as library data (`written`) every send of a composition's phase
/// after this rank has received, combined or copied data in an earlier
/// step: what a later phase sends from the buffer an earlier one filled
/// (a node leader's bcast of the result of its node's reduce, its inter-node
/// gather of what its node gathered) is data the rank's core wrote in the
/// call, whatever the phase's algorithm would send from the user's buffer
/// as a call of its own. For compositions of bcast, reduce, allreduce,
/// gather, scatter, allgather and barrier phases, whose buffers carry the
/// same data from phase to phase (not alltoall's, whose sends come from a
/// buffer its receives do not touch).
pub(super) fn written_after_receipt(steps: &mut [Step]) {
    let mut got = false;
    for step in steps {
        if got {
            mark_sends(step, true);
        }
        got |= step.reduce_bytes > 0
            || step
                .ops
                .iter()
                .any(|op| matches!(op, Op::Recv { .. } | Op::Copy { .. }));
    }
}

/// Builds a schedule step by step.
#[derive(Debug, Default)]
pub(super) struct Sched {
    steps: Vec<Step>,
}

impl Sched {
    pub fn new() -> Sched {
        Sched::default()
    }

    /// A step of `ops` followed by a reduction of `reduce_bytes`; nothing if
    /// both are empty.
    pub fn step(&mut self, ops: Vec<Op>, reduce_bytes: u64) {
        if ops.is_empty() && reduce_bytes == 0 {
            return;
        }
        self.steps.push(Step { ops, reduce_bytes });
    }

    /// A blocking send of library data ([`send`]).
    pub fn send(&mut self, to: u64, bytes: u64) {
        self.step(vec![send(to, bytes)], 0);
    }

    /// A blocking send, straight from the user's send buffer when `user`
    /// ([`send_from`]).
    pub fn send_from(&mut self, user: bool, to: u64, bytes: u64) {
        self.step(vec![send_from(user, to, bytes)], 0);
    }

    /// A blocking receive, then a reduction of `reduce_bytes`.
    pub fn recv(&mut self, from: u64, bytes: u64, reduce_bytes: u64) {
        self.step(vec![recv(from, bytes)], reduce_bytes);
    }

    /// `MPI_Sendrecv` (receive posted first, as MPICH's `MPIC_Sendrecv` and
    /// Open MPI's `ompi_coll_base_sendrecv` do), then a reduction.
    pub fn sendrecv(&mut self, to: u64, sbytes: u64, from: u64, rbytes: u64, reduce_bytes: u64) {
        self.step(vec![recv(from, rbytes), send(to, sbytes)], reduce_bytes);
    }

    /// [`Sched::sendrecv`] whose send comes straight from the user's send
    /// buffer when `user` ([`send_from`]).
    pub fn sendrecv_from(&mut self, user: bool, to: u64, sbytes: u64, from: u64, rbytes: u64) {
        self.step(vec![recv(from, rbytes), send_from(user, to, sbytes)], 0);
    }

    /// The number of steps so far.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Marks the sends of step `index` (if there is one) as sent straight
    /// from the user's send buffer ([`send_user`]).
    pub fn user_sends(&mut self, index: usize) {
        if let Some(step) = self.steps.get_mut(index) {
            mark_sends(step, false);
        }
    }

    /// A local copy of `bytes` on the rank's core (`Op::Copy`: the steps
    /// after it start when it ends); nothing for 0 bytes.
    pub fn copy(&mut self, bytes: u64) {
        if bytes > 0 {
            self.step(vec![Op::Copy { bytes }], 0);
        }
    }

    /// A local reduction without messages.
    pub fn reduce(&mut self, bytes: u64) {
        self.step(Vec::new(), bytes);
    }

    pub fn append(&mut self, steps: Vec<Step>) {
        self.steps.extend(steps);
    }

    pub fn finish(self) -> Vec<Step> {
        self.steps
    }
}

/// The steps of `kind` under `alg` on a sub-communicator: `group` lists
/// its members as ranks of the calling communicator, in the
/// sub-communicator's rank order, and `me` is this rank's index in it. The
/// sub-schedule is built with `root` and the uniform count `n` as the
/// sub-communicator sees them, and its peers are mapped back to ranks of the
/// calling communicator. A group of fewer than two ranks has no steps.
/// (Node-aware compositions: MPICH 4's CH4 ones, Open MPI 5's `coll/han`.)
#[expect(clippy::too_many_arguments, reason = "one sub-call's whole signature")]
pub(super) fn on_group(
    (library, temporaries): (super::Library, bool),
    group: &[u32],
    me: u32,
    kind: CollKind,
    root: u32,
    n: u64,
    elem: u64,
    alg: Algorithm,
) -> Result<Vec<Step>, String> {
    if group.len() < 2 {
        return Ok(Vec::new());
    }
    let sub = CollCall {
        kind,
        rank: me,
        size: peer(group.len() as u64),
        root,
        counts: Counts::Uniform(n),
        elem,
        layout: None,
    };
    let mut steps = super::schedule_opts(library, temporaries, alg, &sub)?;
    map_peers(&mut steps, group);
    Ok(steps)
}

/// `steps` built on units of `unit` bytes ([`Ctx::units`]) as bytes: every
/// message, copy and reduction times `unit`.
pub(super) fn scaled(mut steps: Vec<Step>, unit: u64) -> Vec<Step> {
    if unit == 1 {
        return steps;
    }
    for step in &mut steps {
        step.reduce_bytes *= unit;
        for op in &mut step.ops {
            match op {
                Op::Send { bytes, .. } | Op::Recv { bytes, .. } | Op::Copy { bytes }
                    if *bytes != super::ANY_SIZE =>
                {
                    *bytes *= unit;
                }
                _ => {}
            }
        }
    }
    steps
}

/// Replaces every peer `i` of `steps` by `group[i]` (a sub-communicator's
/// schedule in the calling communicator's ranks).
pub(super) fn map_peers(steps: &mut [Step], group: &[u32]) {
    for step in steps {
        for op in &mut step.ops {
            if let Some(p) = op.peer() {
                *op = op.with_peer(group[p as usize]);
            }
        }
    }
}

/// Schedules that run at the same time on one rank, merged step by step:
/// step `i` starts the operations of every part's step `i` (in the order of
/// `parts`) and waits for all of them, then combines what they combine.
/// The parts must not share a pair of ranks in one direction (messages of
/// a pair are matched in order, and the merge would interleave them).
pub(super) fn merge(parts: Vec<Vec<Step>>) -> Vec<Step> {
    let len = parts.iter().map(Vec::len).max().unwrap_or(0);
    let mut out: Vec<Step> = (0..len).map(|_| Step::default()).collect();
    for part in parts {
        for (i, step) in part.into_iter().enumerate() {
            out[i].ops.extend(step.ops);
            out[i].reduce_bytes += step.reduce_bytes;
        }
    }
    out
}

/// Largest power of two `<= n` (`n >= 1`).
pub(super) fn pof2_floor(n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    1 << (63 - n.leading_zeros())
}

pub(super) fn is_even(n: u64) -> bool {
    n & 1 == 0
}

pub(super) fn is_odd(n: u64) -> bool {
    n & 1 == 1
}

pub(super) fn is_pof2(n: u64) -> bool {
    n != 0 && n & (n - 1) == 0
}

/// `log2` of a power of two.
pub(super) fn log2(n: u64) -> u32 {
    63 - n.max(1).leading_zeros()
}

/// Per-rank block sizes, uniform (computed, whatever the size) or given
/// (with prefix sums).
#[derive(Debug, Clone)]
pub(super) struct Blocks<'a> {
    n: u64,
    p: u64,
    counts: Option<&'a [u64]>,
    pre: Vec<u64>,
}

impl<'a> Blocks<'a> {
    pub fn uniform(n: u64, p: u64) -> Blocks<'a> {
        Blocks {
            n,
            p,
            counts: None,
            pre: Vec::new(),
        }
    }

    pub fn varied(counts: &'a [u64]) -> Blocks<'a> {
        let mut pre = Vec::with_capacity(counts.len() + 1);
        let mut acc = 0u64;
        pre.push(0);
        for &c in counts {
            acc = acc.saturating_add(c);
            pre.push(acc);
        }
        Blocks {
            n: 0,
            p: counts.len() as u64,
            counts: Some(counts),
            pre,
        }
    }

    /// The block of rank `i` (0 out of range).
    pub fn get(&self, i: u64) -> u64 {
        match self.counts {
            None if i < self.p => self.n,
            None => 0,
            Some(c) => c.get(as_len(i)).copied().unwrap_or(0),
        }
    }

    /// The blocks `lo..hi` clipped to `0..p`.
    pub fn range(&self, lo: u64, hi: u64) -> u64 {
        let lo = lo.min(self.p);
        let hi = hi.clamp(lo, self.p);
        match self.counts {
            None => (hi - lo) * self.n,
            Some(_) => self.pre[as_len(hi)] - self.pre[as_len(lo)],
        }
    }

    /// The blocks `lo, lo+1, ..., hi-1` taken modulo `p` (`hi - lo <= p`).
    pub fn wrapping(&self, lo: u64, hi: u64) -> u64 {
        if self.p == 0 {
            return 0;
        }
        let len = hi.saturating_sub(lo).min(self.p);
        let start = lo % self.p;
        if start + len <= self.p {
            self.range(start, start + len)
        } else {
            self.range(start, self.p) + self.range(0, start + len - self.p)
        }
    }

    pub fn total(&self) -> u64 {
        self.range(0, self.p)
    }

    /// The smallest block.
    pub fn min(&self) -> u64 {
        match self.counts {
            None => self.n,
            Some(c) => c.iter().copied().min().unwrap_or(0),
        }
    }
}

/// Open MPI's `COLL_BASE_COMPUTED_SEGCOUNT` for byte elements: the segment
/// length for a message of `count` bytes and a requested segment size
/// (`coll_base_util.h`); 0 or a segment at least as large as the message
/// means one segment.
pub(super) fn segment_count(segsize: u64, count: u64) -> u64 {
    if segsize >= 1 && segsize < count {
        segsize
    } else {
        count
    }
}

/// At most this many segments in a segmented algorithm (a guard against
/// schedules of absurd length, e.g. 1-byte segments of a huge message).
pub(super) const MAX_SEGMENTS: u64 = 1 << 20;

/// The segment lengths of a `count`-byte message cut in segments of
/// `segcount` bytes (the last one shorter), as Open MPI's segmented
/// algorithms do. `count > 0`.
pub(super) fn segments(count: u64, segsize: u64) -> Result<Vec<u64>, String> {
    let seg = segment_count(segsize, count).max(1);
    let n = count.div_ceil(seg);
    if n > MAX_SEGMENTS {
        return Err(format!(
            "{n} segments of {seg} bytes: more than {MAX_SEGMENTS}; use a larger segment size"
        ));
    }
    Ok((0..n)
        .map(|i| if i + 1 == n { count - i * seg } else { seg })
        .collect())
}
