//! Collectives and communicator creation, executed as point-to-point
//! schedules (see [`crate::coll`]) in the communicator's collective context.
//!
//! Each rank's n-th collective call on a communicator is instance `(comm, n)`.
//! The first rank to enter records the call's signature; every later rank is
//! checked against it (operation, root, sizes), so mismatched collectives are
//! reported as errors with both source lines instead of being simulated.

use super::comms::coll_context;
use super::p2p::{Envelope, FLAG_TAG, value_bytes};
use super::*;
use crate::coll::{self, CollCall, Compact, Counts, Cursor, NodeLayout, Op, Step, ZeroCount};
use crate::ir::{BinOp, Builtin};
use crate::ir::{CollArgs, CollKind, ReduceOp};
use crate::value::{binary, builtin};

/// What a collective call is, for matching calls across ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CollOp {
    Coll(CollKind),
    Split,
    Dup,
}

impl CollOp {
    fn name(self) -> &'static str {
        match self {
            CollOp::Coll(k) => k.name(),
            CollOp::Split => "comm_split",
            CollOp::Dup => "comm_dup",
        }
    }
}

/// The sizes of a call, as given.
#[derive(Debug, Clone, PartialEq, Eq)]
enum SizeArg {
    Int(u64),
    Array(Vec<u64>),
}

impl SizeArg {
    /// The sum of an array of counts; one count times `times`.
    fn total(&self, times: u64) -> u64 {
        match self {
            SizeArg::Int(n) => n.saturating_mul(times),
            SizeArg::Array(v) => v.iter().fold(0u64, |a, &b| a.saturating_add(b)),
        }
    }
}

/// One rank's collective in progress.
#[derive(Debug)]
pub(super) struct CollExec {
    op: CollOp,
    /// This rank's schedule, as runs (`coll::Compact`: a ring is one run,
    /// not `p - 1` steps).
    steps: Compact,
    /// The current step.
    at: Cursor,
    /// The current step's operations are posted (its wait set is in `Lp::wait`).
    posted: bool,
    comm: u32,
    key: (u32, u64),
    /// This rank in the communicator, and the root.
    me: u32,
    root: u32,
    op_kind: ReduceOp,
    /// When the call started (timelines) and its line, and the rank's
    /// compute + comm time then.
    started: f64,
    busy_before: f64,
    line: u32,
}

impl CollExec {
    /// The fast-forward's exact shift (`Engine::ff_shift`): the call
    /// started `delta` later, with `busy` more compute and communication
    /// time before it.
    pub(super) fn shift(&mut self, delta: f64, busy: f64) {
        self.started += delta;
        self.busy_before += busy;
    }
}

/// A collective call under way on a communicator.
#[derive(Debug)]
pub(super) struct Instance {
    op: CollOp,
    root: u32,
    size_arg: Option<SizeArg>,
    /// `elem:` of the first rank (bytes per element).
    elem: u64,
    first_rank: u32,
    first_span: Span,
    arrived: u32,
    /// comm_split: (color, key, world rank) of each arrived rank.
    split: Vec<(i64, i64, u32)>,
    /// comm_split/dup: the new communicator of each world rank (sorted by
    /// world rank), once every rank has arrived.
    result: Option<Vec<(u32, Option<u32>)>>,
    /// Ranks that have finished the call (the instance is dropped at `size`).
    finished: u32,
    /// `value:` of each comm rank (empty until a rank gives one).
    values: Vec<Option<Value>>,
    /// `op:` of the first rank.
    reduce_op: ReduceOp,
    /// The carried result once computed, for the calls whose result does
    /// not depend on the rank (allreduce, allgather) and the prefixes of a
    /// scan: computed once per call, not once per rank, which would be
    /// quadratic in the ranks.
    shared: Option<Shared>,
}

/// A carried result computed once for every rank of a call (`Instance::shared`).
#[derive(Debug)]
enum Shared {
    /// Every rank's result (allreduce, allgather).
    All(Value),
    /// `scan`: element i is comm rank i's inclusive prefix, as far as
    /// computed.
    Prefixes(Vec<Value>),
}

impl<'a> Engine<'a> {
    pub(super) fn exec_collective(
        &mut self,
        id: u32,
        op: &'a CommOp,
        dst: Option<Slot>,
        span: Span,
    ) -> RunResult<Flow> {
        let lpi = id as usize;
        if !self.lps[lpi].in_collective() {
            let exec = self.start_collective(id, op, span)?;
            self.lps[lpi].put_coll(exec);
        }
        loop {
            // Invariant: set just above or by an earlier slice of this statement.
            let Some(mut exec) = self.lps[lpi].take_coll() else {
                return Ok(Flow::Continue);
            };
            if exec.posted {
                if let Flow::Block = self.try_complete_wait(id, None)? {
                    self.lps[lpi].put_coll(exec);
                    return Ok(Flow::Block);
                }
                let reduce = exec.steps.reduce_bytes(exec.at);
                if reduce > 0 {
                    let t = self.machine.reduce_seconds(id, reduce);
                    let lp = &mut self.lps[lpi];
                    lp.clock += t;
                    lp.stats.compute += t;
                }
                exec.steps.advance(&mut exec.at);
                exec.posted = false;
            }
            if exec.at.pos == exec.steps.len() {
                let lp = &self.lps[lpi];
                self.obs.trace(|| {
                    let busy = lp.stats.busy() - exec.busy_before;
                    TraceEvent::Interval {
                        rank: id,
                        start: exec.started,
                        end: lp.clock,
                        what: exec.op.name().to_owned(),
                        comm: true,
                        line: exec.line,
                        wait: (lp.clock - exec.started - busy).max(0.0),
                    }
                });
                let result = self.finish_collective(id, &exec, span)?;
                self.lps[lpi].end_coll();
                if let Some(d) = dst {
                    self.set_local(id, d, result);
                }
                return Ok(Flow::Continue);
            }
            if self.lps[lpi].clock > self.now {
                self.lps[lpi].put_coll(exec);
                return Ok(Flow::Yield);
            }
            let mut ws = self.free_waitsets.pop().unwrap_or_default();
            let ctx = coll_context(exec.comm);
            for op in exec.steps.ops(exec.at) {
                let (peer, bytes) = match op {
                    Op::Send { peer, bytes, .. } | Op::Recv { peer, bytes } => (peer, bytes),
                    Op::Flag { peer } | Op::Await { peer } => (peer, 0),
                    // Work of the rank's core in the call: a copy into or
                    // out of a shared cell, a derived datatype's creation, a
                    // pack or unpack through it (the operations after it
                    // start when it ends).
                    Op::Copy { bytes } => {
                        self.in_call_work(lpi, self.machine.library_copy_seconds(id, bytes));
                        continue;
                    }
                    Op::Datatype { blocks } => {
                        let t = self.machine.datatype_seconds(id, u64::from(blocks));
                        self.in_call_work(lpi, t);
                        continue;
                    }
                    Op::Pack { blocks } => {
                        self.in_call_work(lpi, self.machine.pack_seconds(id, u64::from(blocks)));
                        continue;
                    }
                    // The library's temporary buffers: the page faults of
                    // fresh memory, and the allocator's state for the next.
                    Op::Alloc { bytes, touch } => {
                        let t = self.machine.heap_alloc(id, bytes, touch.range(bytes));
                        self.in_call_work(lpi, t);
                        continue;
                    }
                    Op::Free { bytes } => {
                        self.machine.heap_free(id, bytes);
                        continue;
                    }
                };
                let Some(world) = self
                    .comms
                    .get(exec.comm)
                    .filter(|c| peer < c.size())
                    .map(|c| c.world(peer))
                else {
                    return Err(self.rt(
                        id,
                        span,
                        format!("internal error: {} schedule names rank {peer} outside the communicator", exec.op.name()),
                    ));
                };
                let flag = matches!(op, Op::Flag { .. } | Op::Await { .. });
                let env = Envelope {
                    peer: world,
                    tag: if flag { FLAG_TAG } else { 0 },
                    bytes,
                    ctx,
                    comm: exec.comm,
                };
                let r = match op {
                    Op::Send { written, .. } => {
                        self.post_send(id, env, SendMode::Standard, span, written)?
                    }
                    Op::Flag { .. } => self.post_flag(id, env, span)?,
                    _ => self.post_recv(id, env, span)?,
                };
                ws.reqs.push(r);
            }
            exec.posted = true;
            self.lps[lpi].wait = Some(ws);
            self.lps[lpi].put_coll(exec);
        }
    }

    /// `t` seconds of the rank's core inside a collective call.
    fn in_call_work(&mut self, lpi: usize, t: f64) {
        let lp = &mut self.lps[lpi];
        lp.clock += t;
        lp.stats.comm += t;
    }

    fn start_collective(&mut self, id: u32, op: &'a CommOp, span: Span) -> RunResult<CollExec> {
        let started = self.lps[id as usize].clock;
        let busy_before = self.lps[id as usize].stats.busy();
        let (cop, comm_expr, root_expr, bytes_expr, elem_expr): (
            CollOp,
            Option<&Expr>,
            Option<&Expr>,
            Option<&Expr>,
            Option<&Expr>,
        ) = match op {
            CommOp::Collective(CollArgs {
                kind,
                root,
                bytes,
                comm,
                elem,
                ..
            }) => (
                CollOp::Coll(*kind),
                comm.as_ref(),
                root.as_ref(),
                bytes.as_ref(),
                elem.as_ref(),
            ),
            CommOp::CommSplit { comm, .. } => (CollOp::Split, comm.as_ref(), None, None, None),
            CommOp::CommDup(c) => (CollOp::Dup, Some(c), None, None, None),
            _ => return Err(self.rt(id, span, "internal error: not a collective".to_owned())),
        };
        let comm = self.eval_comm(id, comm_expr, span)?;
        // Invariant: `eval_comm` checked membership.
        let (size, me) = match self.comms.get(comm) {
            Some(c) => (c.size(), c.rank_of(id).unwrap_or(0)),
            None => return Err(self.rt(id, span, format!("communicator #{comm} does not exist"))),
        };
        let root = self.eval_root(id, root_expr, size, span)?;
        let size_arg = self.eval_sizes(id, bytes_expr, span)?;
        let elem = self.eval_elem(id, elem_expr, size_arg.as_ref(), span)?;
        let value = match op {
            CommOp::Collective(CollArgs { value: Some(e), .. }) => Some(self.eval_in(id, e, span)?),
            _ => None,
        };
        if value.is_some() && matches!(size_arg, Some(SizeArg::Int(0))) {
            // A value travels in the call's bytes; MPI moves no data for a
            // count of 0, and such a call need not wait for the others, so
            // their values would not be there to combine.
            return Err(self.rt(
                id,
                span,
                format!(
                    "{}: `value:` needs `bytes:` above 0 (a call of 0 bytes carries nothing)",
                    cop.name()
                ),
            ));
        }
        let op_kind = match op {
            CommOp::Collective(a) => a.op,
            _ => ReduceOp::Sum,
        };
        let (color, key) = self.eval_color_key(id, op, me, span)?;
        if self.obs.counting_calls() {
            // The conventions of `CallCount`.
            let (peer, bytes) = match (cop, &size_arg) {
                (CollOp::Coll(k), _) if k.rooted() => (
                    self.comms.get(comm).map(|c| c.world(root)),
                    size_arg.as_ref().map_or(0, |a| a.total(1)),
                ),
                (CollOp::Coll(CollKind::Alltoallv | CollKind::Allgatherv), Some(a)) => {
                    (None, a.total(u64::from(size)))
                }
                (_, a) => (None, a.as_ref().map_or(0, |a| a.total(1))),
            };
            self.obs
                .comm_call(id, span.line, cop.name(), peer, bytes, size);
        }
        // The instance: this rank's next collective on `comm`.
        let seq = match self.comms.get_mut(comm) {
            Some(c) => c.next_collective(me),
            None => 0,
        };
        let key_ = (comm, seq);
        self.register(
            id,
            key_,
            cop,
            root,
            (size_arg.clone(), elem),
            span,
            size,
            (color, key),
            me,
            value,
            op_kind,
        )?;
        if self.coll_cfg.library.node_aware() {
            self.ensure_layout(comm);
        }
        let (steps, copy) = self.schedule(
            id,
            cop,
            (size_arg.as_ref(), elem),
            comm,
            me,
            size,
            root,
            span,
        )?;
        let overhead = match cop {
            CollOp::Coll(kind) => self.coll_cfg.call_overhead_for(kind),
            CollOp::Split | CollOp::Dup => self.coll_cfg.call_overhead,
        };
        if !steps.is_empty() && overhead > 0.0 {
            // The library's own work on entering a call that communicates
            // (`CollConfig::call_overhead`, per kind where the machine
            // names one), on the rank's CPU before its first message, like
            // a send overhead.
            let lp = &mut self.lps[id as usize];
            lp.clock += overhead;
            lp.stats.comm += overhead;
        }
        if copy > 0 {
            let t = self.machine.library_copy_seconds(id, copy);
            let lp = &mut self.lps[id as usize];
            lp.clock += t;
            lp.stats.compute += t;
        }
        Ok(CollExec {
            op: cop,
            steps: Compact::from_steps(&steps, size),
            at: Cursor::default(),
            posted: false,
            comm,
            key: key_,
            me,
            root,
            op_kind,
            started,
            busy_before,
            line: span.line,
        })
    }

    /// `root:` as a rank of a communicator of `size` ranks (0 without one).
    fn eval_root(
        &self,
        id: u32,
        root_expr: Option<&Expr>,
        size: u32,
        span: Span,
    ) -> RunResult<u32> {
        Ok(match root_expr {
            None => 0,
            Some(e) => {
                match self.eval_in(id, e, span)? {
                    Value::Int(r) if r >= 0 && r < i64::from(size) => r as u32,
                    v => {
                        return Err(self.rt(
                        id,
                        span,
                        format!("`root: {v}` is not a valid rank (the communicator has {size} ranks)"),
                    ));
                    }
                }
            }
        })
    }

    /// `bytes:` of a collective: one count or one per rank.
    fn eval_sizes(
        &self,
        id: u32,
        bytes_expr: Option<&Expr>,
        span: Span,
    ) -> RunResult<Option<SizeArg>> {
        Ok(match bytes_expr {
            None => None,
            Some(e) => Some(match self.eval_in(id, e, span)? {
                Value::Array(a) => {
                    let mut v = Vec::with_capacity(a.len());
                    for x in a.iter() {
                        v.push(value_bytes(x).ok_or_else(|| {
                            self.rt(
                                id,
                                span,
                                format!("`bytes:` counts must be non-negative integers, got {x}"),
                            )
                        })?);
                    }
                    SizeArg::Array(v)
                }
                v => SizeArg::Int(value_bytes(&v).ok_or_else(|| {
                    self.rt(
                        id,
                        span,
                        format!(
                            "`bytes:` must be a non-negative integer or an array of them, got {v}"
                        ),
                    )
                })?),
            }),
        })
    }

    /// `elem:` of a collective (1 without one): an integer from 1 to 2^20
    /// that divides every byte count of the call (a call moves whole
    /// elements of its datatype).
    fn eval_elem(
        &self,
        id: u32,
        elem_expr: Option<&Expr>,
        sizes: Option<&SizeArg>,
        span: Span,
    ) -> RunResult<u64> {
        let Some(e) = elem_expr else {
            return Ok(1);
        };
        let elem = match self.eval_in(id, e, span)? {
            Value::Int(n) if (1..=1 << 20).contains(&n) => n as u64,
            v => {
                return Err(self.rt(
                    id,
                    span,
                    format!(
                        "`elem:` must be the size in bytes of one element, an integer from 1 to \
                         1048576, got {v}"
                    ),
                ));
            }
        };
        let counts: &[u64] = match sizes {
            Some(SizeArg::Int(n)) => std::slice::from_ref(n),
            Some(SizeArg::Array(v)) => v,
            None => &[],
        };
        if let Some(n) = counts.iter().find(|n| !n.is_multiple_of(elem)) {
            return Err(self.rt(
                id,
                span,
                format!(
                    "`bytes: {n}` is not a whole number of {elem}-byte elements (`elem: {elem}`)"
                ),
            ));
        }
        Ok(elem)
    }

    /// `comm_split`'s `color:` and `key:` (other operations: 0 and the
    /// rank's own rank `me`).
    fn eval_color_key(&self, id: u32, op: &CommOp, me: u32, span: Span) -> RunResult<(i64, i64)> {
        Ok(match op {
            CommOp::CommSplit { color, key, .. } => {
                let c = match self.eval_in(id, color, span)? {
                    Value::Int(c) => c,
                    Value::Null => -1,
                    v => {
                        return Err(self.rt(
                            id,
                            span,
                            format!("`color:` must be an integer, got {v}"),
                        ));
                    }
                };
                let k = match self.eval_in(id, key, span)? {
                    Value::Int(k) => k,
                    v => {
                        return Err(self.rt(
                            id,
                            span,
                            format!("`key:` must be an integer, got {v}"),
                        ));
                    }
                };
                (c, k)
            }
            _ => (0, i64::from(me)),
        })
    }

    /// Computes `comm`'s node layout from the machine's placement, once.
    fn ensure_layout(&mut self, comm: u32) {
        let Some(c) = self.comms.get(comm) else {
            return;
        };
        if c.layout.is_some() {
            return;
        }
        let nodes: Vec<u32> = (0..c.size())
            .map(|r| self.machine.node_of(c.world(r)))
            .collect();
        if let Some(c) = self.comms.get_mut(comm) {
            c.layout = Some(NodeLayout::new(&nodes));
        }
    }

    /// This rank's schedule of the call (the library's algorithm for it),
    /// and the bytes of its own block copied locally.
    #[expect(clippy::too_many_arguments, reason = "one call's whole signature")]
    fn schedule(
        &self,
        id: u32,
        cop: CollOp,
        (size_arg, elem): (Option<&SizeArg>, u64),
        comm: u32,
        me: u32,
        size: u32,
        root: u32,
        span: Span,
    ) -> RunResult<(Vec<Step>, u64)> {
        // The schedule.
        let kind;
        // The datatype: the call's, or the ints of a split and a dup.
        let mut elem = elem;
        let counts: Counts<'_> = match (cop, &size_arg) {
            (CollOp::Split, _) => {
                elem = 4;
                // MPICH's comm_split exchanges (color, key) with an allgather
                // of two ints per rank: src/mpi/comm/comm_split_impl.c,
                // `struct splittype { int color, key; }` and
                // `MPIR_Allgather(MPI_IN_PLACE, 2, MPI_INT, table, 2, MPI_INT, ...)`.
                kind = CollKind::Allgather;
                Counts::Uniform(8)
            }
            (CollOp::Dup, _) => {
                elem = 4;
                // A new context id is agreed with an allreduce (MPICH).
                kind = CollKind::Allreduce;
                Counts::Uniform(8)
            }
            (CollOp::Coll(k), arg) => {
                kind = k;
                match (k, arg) {
                    (_, None) => Counts::Uniform(0),
                    (CollKind::Gatherv | CollKind::Scatterv, Some(SizeArg::Int(n))) => {
                        Counts::Own(*n)
                    }
                    (_, Some(SizeArg::Int(n))) => Counts::Uniform(*n),
                    (
                        CollKind::Gatherv
                        | CollKind::Scatterv
                        | CollKind::Allgatherv
                        | CollKind::Alltoallv
                        | CollKind::ReduceScatter,
                        Some(SizeArg::Array(v)),
                    ) => {
                        if v.len() != size as usize {
                            return Err(self.rt(
                                id,
                                span,
                                format!(
                                    "`bytes:` of {} has {} counts but the communicator has {size} ranks",
                                    k.name(),
                                    v.len()
                                ),
                            ));
                        }
                        Counts::PerRank(v)
                    }
                    (_, Some(SizeArg::Array(_))) => {
                        return Err(self.rt(
                            id,
                            span,
                            format!("`bytes:` of {} must be one integer, not an array", k.name()),
                        ));
                    }
                }
            }
        };
        let call = CollCall {
            kind,
            rank: me,
            size,
            root,
            counts,
            elem,
            layout: self.comms.get(comm).and_then(|c| c.layout.as_ref()),
        };
        let alg = coll::select(&self.coll_cfg, &call);
        let mut steps =
            coll::schedule_opts(self.coll_cfg.library, self.coll_cfg.temporaries, alg, &call)
                .map_err(|m| self.rt(id, span, format!("{} ({}): {m}", cop.name(), alg.name())))?;
        let zero_count = self.coll_cfg.zero_count_for(kind);
        if steps.is_empty() && size > 1 && zero_count != ZeroCount::Return {
            // A library that communicates on zero-count calls: the
            // algorithm's message pattern with empty messages, or a barrier.
            let (a, one) = match zero_count {
                ZeroCount::Barrier => {
                    let b = CollCall {
                        kind: CollKind::Barrier,
                        counts: Counts::Uniform(0),
                        ..call
                    };
                    (coll::select(&self.coll_cfg, &b), b)
                }
                _ => (
                    alg,
                    CollCall {
                        counts: Counts::Uniform(1),
                        ..call
                    },
                ),
            };
            steps = coll::schedule_opts(self.coll_cfg.library, self.coll_cfg.temporaries, a, &one)
                .unwrap_or_default();
            for st in &mut steps {
                st.reduce_bytes = 0;
                for op in &mut st.ops {
                    match op {
                        Op::Send { bytes, .. }
                        | Op::Recv { bytes, .. }
                        | Op::Copy { bytes }
                        | Op::Alloc { bytes, .. }
                        | Op::Free { bytes } => *bytes = 0,
                        Op::Flag { .. }
                        | Op::Await { .. }
                        | Op::Datatype { .. }
                        | Op::Pack { .. } => {}
                    }
                }
            }
        }
        // The rank's own block goes from its send buffer to its receive
        // buffer by a memory copy, as the libraries do when the call is not
        // MPI_IN_PLACE (e.g. MPICH's MPIR_Alltoall_intra_* and
        // MPIR_Allgather_intra_* start with MPIR_Localcopy of the own block;
        // MPIR_Allreduce_intra_* copies sendbuf into recvbuf first).
        // The shared-memory algorithms copy from the send buffer into their
        // cells and out of them into the receive buffer (`Op::Copy`), with
        // no copy of their own between the two buffers.
        // MPICH's scattered alltoall(v) and Open MPI 5's pairwise
        // alltoallv send the own block to themselves as a message instead
        // ([`coll::own_block_is_a_message`]; on one rank every algorithm is
        // the copy alone).
        let copy = if (steps.is_empty() && size > 1)
            || matches!(alg, coll::Algorithm::ReleaseGather(_))
            || (coll::own_block_is_a_message(self.coll_cfg.library, alg, kind) && !steps.is_empty())
        {
            0
        } else {
            local_copy_bytes(self.coll_cfg.library, alg, &call)
        };
        Ok((steps, copy))
    }

    /// Records rank `id`'s arrival at instance `key`; checks it against the
    /// first rank's call.
    #[expect(clippy::too_many_arguments, reason = "one call's whole signature")]
    fn register(
        &mut self,
        id: u32,
        key: (u32, u64),
        op: CollOp,
        root: u32,
        (size_arg, elem): (Option<SizeArg>, u64),
        span: Span,
        size: u32,
        split: (i64, i64),
        me: u32,
        value: Option<Value>,
        op_kind: ReduceOp,
    ) -> RunResult<()> {
        let checked = match op {
            CollOp::Coll(k) => !matches!(
                k,
                CollKind::Gatherv | CollKind::Scatterv | CollKind::Alltoallv
            ),
            CollOp::Split | CollOp::Dup => false,
        };
        let inst = self.instances.entry(key).or_insert_with(|| Instance {
            op,
            root,
            size_arg: size_arg.clone(),
            elem,
            first_rank: id,
            first_span: span,
            arrived: 0,
            split: Vec::new(),
            result: None,
            finished: 0,
            values: Vec::new(),
            reduce_op: op_kind,
            shared: None,
        });
        let mismatch = if inst.op != op {
            Some(format!(
                "{} here, but rank {} called {}",
                op.name(),
                inst.first_rank,
                inst.op.name()
            ))
        } else if inst.root != root {
            Some(format!(
                "{}(root: {root}) here, but rank {} gave root {}",
                op.name(),
                inst.first_rank,
                inst.root
            ))
        } else if value.is_some() && inst.reduce_op != op_kind {
            Some(format!(
                "{}(op: {}) here, but rank {} gave op: {}",
                op.name(),
                op_kind.name(),
                inst.first_rank,
                inst.reduce_op.name()
            ))
        } else if inst.elem != elem {
            Some(format!(
                "{}(elem: {elem}) here, but rank {} gave elem: {}",
                op.name(),
                inst.first_rank,
                inst.elem
            ))
        } else if checked && inst.size_arg != size_arg {
            Some(format!(
                "{} with bytes {} here, but rank {} gave {}",
                op.name(),
                size_text(&size_arg),
                inst.first_rank,
                size_text(&inst.size_arg)
            ))
        } else {
            None
        };
        if let Some(m) = mismatch {
            let (line, col) = (inst.first_span.line, inst.first_span.col);
            let comm = if key.0 == 0 {
                "the world".to_owned()
            } else {
                format!("communicator #{}", key.0)
            };
            return Err(Box::new(SimError::CollectiveMismatch {
                rank: id,
                span,
                message: format!(
                    "collective mismatch on {comm} (call #{}): {m} at line {line}:{col}",
                    key.1 + 1
                ),
            }));
        }
        inst.arrived += 1;
        if let Some(v) = value {
            if inst.values.is_empty() {
                inst.values = vec![None; size as usize];
            }
            inst.values[me as usize] = Some(v);
        }
        if matches!(op, CollOp::Split | CollOp::Dup) {
            inst.split.push((split.0, split.1, id));
        }
        if inst.arrived == size {
            match op {
                CollOp::Split | CollOp::Dup => {
                    let mut groups = std::mem::take(&mut inst.split);
                    // MPI: ranks with the same color form a communicator,
                    // ordered by key, ties by rank in the parent.
                    let parent = key.0;
                    let rank_in_parent = |w: u32| {
                        self.comms
                            .get(parent)
                            .and_then(|c| c.rank_of(w))
                            .unwrap_or(w)
                    };
                    groups.sort_by_key(|&(color, k, w)| (color, k, rank_in_parent(w)));
                    let mut result: Vec<(u32, Option<u32>)> = Vec::with_capacity(groups.len());
                    let mut i = 0;
                    while i < groups.len() {
                        let color = groups[i].0;
                        let mut j = i;
                        while j < groups.len() && groups[j].0 == color {
                            j += 1;
                        }
                        if color < 0 {
                            result.extend(groups[i..j].iter().map(|g| (g.2, None)));
                        } else {
                            let members: Vec<u32> = groups[i..j].iter().map(|g| g.2).collect();
                            let c = self.comms.create(members);
                            result.extend(groups[i..j].iter().map(|g| (g.2, Some(c))));
                        }
                        i = j;
                    }
                    result.sort_unstable();
                    if let Some(inst) = self.instances.get_mut(&key) {
                        inst.result = Some(result);
                    }
                }
                // Kept until every rank has finished (`finish_collective`):
                // a carried value may still be read.
                CollOp::Coll(_) => {}
            }
        }
        Ok(())
    }

    fn finish_collective(&mut self, id: u32, exec: &CollExec, span: Span) -> RunResult<Value> {
        match exec.op {
            CollOp::Coll(kind) => {
                let size = self.comms.get(exec.comm).map_or(1, |c| c.size());
                let Some(inst) = self.instances.get_mut(&exec.key) else {
                    return Err(self.rt(
                        id,
                        span,
                        "internal error: collective instance lost".to_owned(),
                    ));
                };
                inst.finished += 1;
                let result = if inst.values.is_empty() {
                    Ok(Value::Null)
                } else {
                    shared_result(inst, kind, exec.op_kind, exec.me).unwrap_or_else(|| {
                        carried_result(kind, exec.op_kind, exec.me, exec.root, &inst.values)
                    })
                };
                if inst.finished == size {
                    self.instances.remove(&exec.key);
                }
                result.map_err(|m| self.rt(id, span, format!("{}: {m}", kind.name())))
            }
            CollOp::Split | CollOp::Dup => {
                let size = self.comms.get(exec.comm).map_or(1, |c| c.size());
                let Some(inst) = self.instances.get_mut(&exec.key) else {
                    return Err(self.rt(
                        id,
                        span,
                        "internal error: communicator creation lost".to_owned(),
                    ));
                };
                // Invariant: every rank's allgather completes only after every
                // rank has entered, so the result exists.
                let Some(result) = inst.result.as_ref() else {
                    return Err(self.rt(
                        id,
                        span,
                        "internal error: communicator created too early".to_owned(),
                    ));
                };
                let new = result
                    .binary_search_by_key(&id, |&(w, _)| w)
                    .ok()
                    .and_then(|i| result[i].1);
                inst.finished += 1;
                if inst.finished == size {
                    self.instances.remove(&exec.key);
                }
                Ok(new.map_or(Value::Null, Value::Comm))
            }
        }
    }
}

fn size_text(s: &Option<SizeArg>) -> String {
    match s {
        None => "none".to_owned(),
        Some(SizeArg::Int(n)) => n.to_string(),
        Some(SizeArg::Array(v)) => format!("{v:?}"),
    }
}

/// What a carried collective returns to comm rank `me` when the result is
/// computed once per call (`Instance::shared`: allreduce, allgather, scan,
/// exscan), else `None`. The same values as [`carried_result`]'s, which
/// the other kinds use. Only what is complete is kept: a rank may finish
/// before a later rank has entered (a scan's rank 0; a call that moves no
/// bytes), so an allreduce's result is kept once it could be computed from
/// every rank's value, and a scan's prefixes grow as far as ranks have
/// given values (a scan's rank `me` needs those of ranks `0..=me` only).
fn shared_result(
    inst: &mut Instance,
    kind: CollKind,
    op: ReduceOp,
    me: u32,
) -> Option<Result<Value, String>> {
    match kind {
        CollKind::Allreduce | CollKind::Allgather => {
            if let Some(Shared::All(v)) = &inst.shared {
                return Some(Ok(v.clone()));
            }
            let r = carried_result(kind, op, 0, 0, &inst.values);
            if let Ok(v) = &r {
                inst.shared = Some(Shared::All(v.clone()));
            }
            Some(r)
        }
        CollKind::Scan | CollKind::Exscan => {
            // Scan: ranks 0..=me; exscan: ranks 0..me (null at rank 0).
            let upto = match kind {
                CollKind::Exscan if me == 0 => return Some(Ok(Value::Null)),
                CollKind::Exscan => me as usize - 1,
                _ => me as usize,
            };
            if !matches!(inst.shared, Some(Shared::Prefixes(_))) {
                inst.shared = Some(Shared::Prefixes(Vec::new()));
            }
            // Invariant: set just above if it was not.
            let Some(Shared::Prefixes(prefixes)) = &mut inst.shared else {
                return None;
            };
            while prefixes.len() <= upto {
                let r = prefixes.len();
                let Some(v) = inst.values.get(r).cloned().flatten() else {
                    return Some(Err(format!(
                        "rank {r} of the communicator gave no `value:`"
                    )));
                };
                let next = match prefixes.last() {
                    None => Ok(v),
                    Some(acc) => combine(op, acc.clone(), v),
                };
                match next {
                    Ok(x) => prefixes.push(x),
                    Err(e) => return Some(Err(e)),
                }
            }
            Some(Ok(prefixes[upto].clone()))
        }
        _ => None,
    }
}

/// What a collective carrying values returns to comm rank `me` (see
/// `CollArgs::value`), for every kind but scan and exscan, whose
/// prefixes [`shared_result`] computes (it computes allreduce and
/// allgather through this function, once per call).
fn carried_result(
    kind: CollKind,
    op: ReduceOp,
    me: u32,
    root: u32,
    values: &[Option<Value>],
) -> Result<Value, String> {
    let get = |r: usize| -> Result<Value, String> {
        values
            .get(r)
            .cloned()
            .flatten()
            .ok_or_else(|| format!("rank {r} of the communicator gave no `value:`"))
    };
    let fold = |range: std::ops::Range<usize>| -> Result<Value, String> {
        let mut acc: Option<Value> = None;
        for r in range {
            let v = get(r)?;
            acc = Some(match acc {
                None => v,
                Some(a) => combine(op, a, v)?,
            });
        }
        Ok(acc.unwrap_or(Value::Null))
    };
    let all = || -> Result<Value, String> {
        (0..values.len())
            .map(get)
            .collect::<Result<Vec<_>, _>>()
            .map(|v| Value::Array(v.into()))
    };
    let n = values.len();
    let (me, root) = (me as usize, root as usize);
    match kind {
        CollKind::Bcast => get(root),
        CollKind::Reduce if me == root => fold(0..n),
        CollKind::Allreduce => fold(0..n),
        CollKind::Gather if me == root => all(),
        CollKind::Allgather => all(),
        CollKind::Scatter => element(&get(root)?, me, n),
        CollKind::Alltoall => {
            let mut out = Vec::with_capacity(n);
            for r in 0..n {
                out.push(element(&get(r)?, me, n)?);
            }
            Ok(Value::Array(out.into()))
        }
        _ => Ok(Value::Null),
    }
}

/// Element `i` of an array of `n` elements (scatter, alltoall values).
fn element(v: &Value, i: usize, n: usize) -> Result<Value, String> {
    match v {
        Value::Array(a) if a.len() == n => Ok(a[i].clone()),
        Value::Array(a) => Err(format!(
            "`value:` must be an array of {n} elements (one per rank), it has {}",
            a.len()
        )),
        other => Err(format!(
            "`value:` must be an array of one element per rank, got {}",
            other.type_name()
        )),
    }
}

fn combine(op: ReduceOp, a: Value, b: Value) -> Result<Value, String> {
    match op {
        ReduceOp::Sum => binary(BinOp::Add, a, b),
        ReduceOp::Prod => binary(BinOp::Mul, a, b),
        ReduceOp::Min => builtin(Builtin::Min, &[a, b]),
        ReduceOp::Max => builtin(Builtin::Max, &[a, b]),
        ReduceOp::Land => Ok(Value::Bool(a.truthy()? && b.truthy()?)),
        ReduceOp::Lor => Ok(Value::Bool(a.truthy()? || b.truthy()?)),
    }
}

/// Bytes a rank copies locally in a collective (its own block), see
/// `start_collective`.
fn local_copy_bytes(library: coll::Library, alg: coll::Algorithm, call: &CollCall<'_>) -> u64 {
    use coll::Algorithm as A;
    let me = call.rank as usize;
    let own = match call.counts {
        Counts::Uniform(n) | Counts::Own(n) => n,
        Counts::PerRank(v) => v.get(me).copied().unwrap_or(0),
    };
    let at_root = call.rank == call.root;
    // Reduce, per library and algorithm (commutative operation, no
    // MPI_IN_PLACE), on more than one rank:
    // - MPICH's binomial and Rabenseifner copy the send buffer into the
    //   receive buffer (a temporary off the root) on every rank
    //   (`reduce_intra_binomial.c` v4.0.2 line 52,
    //   `reduce_intra_reduce_scatter_gather.c` 77), as does Open MPI's
    //   `ompi_coll_base_reduce_intra_redscat_gather` (v5.0.9
    //   `coll_base_reduce.c` 861-865);
    // - Open MPI's tree and chain algorithms (`ompi_coll_base_reduce_generic`)
    //   receive the first child's data straight into the accumulator and
    //   combine the send buffer into it (lines 160-175, 195-205): no copy;
    //   so does the in-order binary tree, which runs the generic one at
    //   rank p - 1 (540-580);
    // - Open MPI's linear reduce copies at rank p - 1 only, which starts
    //   the accumulation (line 695); the root receives rank p - 1's vector
    //   straight into its receive buffer otherwise.
    // Any other algorithm (Intel MPI's, the compositions): the root's copy.
    if call.kind == CollKind::Reduce && call.size > 1 {
        return match (library.is_open_mpi(), alg) {
            (false, A::BinomialTree | A::Rabenseifner) | (true, A::OmpiRabenseifner) => own,
            (
                true,
                A::BinomialTree
                | A::SegmentedBinomial(_)
                | A::Pipeline(_)
                | A::Chain(_)
                | A::BinaryTree(_)
                | A::InOrderBinary,
            ) => 0,
            (true, A::Linear) if at_root && call.rank == call.size - 1 => own,
            (true, A::Linear) => 0,
            _ if at_root => own,
            _ => 0,
        };
    }
    match call.kind {
        CollKind::Alltoall | CollKind::Alltoallv | CollKind::Allgather | CollKind::Allgatherv => {
            own
        }
        CollKind::Gather | CollKind::Gatherv | CollKind::Scatter | CollKind::Scatterv
            if at_root =>
        {
            own
        }
        CollKind::Allreduce | CollKind::Scan => own,
        CollKind::Reduce if at_root => own,
        _ => 0,
    }
}
