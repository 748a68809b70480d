//! Collectives and communicator creation, executed as point-to-point
//! schedules (see [`crate::coll`]) in the communicator's collective context.
//!
//! Each rank's n-th collective call on a communicator is instance `(comm, n)`.
//! The first rank to enter records the call's signature; every later rank is
//! checked against it (operation, root, sizes), so mismatched collectives are
//! reported as errors with both source lines instead of being simulated.

use super::comms::coll_context;
use super::p2p::{Envelope, value_bytes};
use super::*;
use crate::coll::{self, CollCall, Counts, Op, Step};
use crate::ir::{CollArgs, CollKind};

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

/// One rank's collective in progress.
#[derive(Debug)]
pub(super) struct CollExec {
    op: CollOp,
    steps: Vec<Step>,
    pos: usize,
    /// The current step's operations are posted (its wait set is in `Lp::wait`).
    posted: bool,
    comm: u32,
    key: (u32, u64),
}

/// A collective call under way on a communicator.
#[derive(Debug)]
pub(super) struct Instance {
    op: CollOp,
    root: u32,
    size_arg: Option<SizeArg>,
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
        if self.lps[lpi].coll.is_none() {
            let exec = self.start_collective(id, op, span)?;
            self.lps[lpi].coll = Some(Box::new(exec));
        }
        loop {
            // Invariant: set just above or by an earlier slice of this statement.
            let Some(mut exec) = self.lps[lpi].coll.take() else {
                return Ok(Flow::Continue);
            };
            if exec.posted {
                if let Flow::Block = self.try_complete_wait(id, None)? {
                    self.lps[lpi].coll = Some(exec);
                    return Ok(Flow::Block);
                }
                let reduce = exec.steps[exec.pos].reduce_bytes;
                if reduce > 0 {
                    let t = self.machine.reduce_seconds(id, reduce);
                    let lp = &mut self.lps[lpi];
                    lp.clock += t;
                    lp.stats.compute += t;
                }
                exec.pos += 1;
                exec.posted = false;
            }
            if exec.pos == exec.steps.len() {
                let result = self.finish_collective(id, &exec, span)?;
                if let Some(d) = dst {
                    self.set_local(id, d, result);
                }
                return Ok(Flow::Continue);
            }
            if self.lps[lpi].clock > self.now {
                self.lps[lpi].coll = Some(exec);
                return Ok(Flow::Yield);
            }
            let mut ws = self.free_waitsets.pop().unwrap_or_default();
            let ctx = coll_context(exec.comm);
            for op in &exec.steps[exec.pos].ops {
                let (peer, bytes, is_send) = match *op {
                    Op::Send { peer, bytes } => (peer, bytes, true),
                    Op::Recv { peer, bytes } => (peer, bytes, false),
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
                let env = Envelope {
                    peer: world,
                    tag: 0,
                    bytes,
                    ctx,
                    comm: exec.comm,
                };
                let r = if is_send {
                    self.post_send(id, env, SendMode::Standard, span)?
                } else {
                    self.post_recv(id, env, span)?
                };
                ws.reqs.push(r);
            }
            exec.posted = true;
            self.lps[lpi].wait = Some(ws);
            self.lps[lpi].coll = Some(exec);
        }
    }

    fn start_collective(&mut self, id: u32, op: &'a CommOp, span: Span) -> RunResult<CollExec> {
        let (cop, comm_expr, root_expr, bytes_expr): (
            CollOp,
            Option<&Expr>,
            Option<&Expr>,
            Option<&Expr>,
        ) = match op {
            CommOp::Collective(CollArgs {
                kind,
                root,
                bytes,
                comm,
            }) => (
                CollOp::Coll(*kind),
                comm.as_ref(),
                root.as_ref(),
                bytes.as_ref(),
            ),
            CommOp::CommSplit { comm, .. } => (CollOp::Split, comm.as_ref(), None, None),
            CommOp::CommDup(c) => (CollOp::Dup, Some(c), None, None),
            _ => return Err(self.rt(id, span, "internal error: not a collective".to_owned())),
        };
        let comm = self.eval_comm(id, comm_expr, span)?;
        // Invariant: `eval_comm` checked membership.
        let (size, me) = match self.comms.get(comm) {
            Some(c) => (c.size(), c.rank_of(id).unwrap_or(0)),
            None => return Err(self.rt(id, span, format!("communicator #{comm} does not exist"))),
        };
        let root = match root_expr {
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
        };
        let size_arg = match bytes_expr {
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
        };
        let (color, key) = match op {
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
        };
        // The instance: this rank's next collective on `comm`.
        let seq = match self.comms.get_mut(comm) {
            Some(c) => {
                let s = c.coll_seq[me as usize];
                c.coll_seq[me as usize] += 1;
                s
            }
            None => 0,
        };
        let key_ = (comm, seq);
        self.register(
            id,
            key_,
            cop,
            root,
            size_arg.clone(),
            span,
            size,
            (color, key),
        )?;
        // The schedule.
        let kind;
        let counts: Counts<'_> = match (cop, &size_arg) {
            (CollOp::Split, _) => {
                // MPICH's comm_split exchanges (color, key) with an allgather.
                kind = CollKind::Allgather;
                Counts::Uniform(16)
            }
            (CollOp::Dup, _) => {
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
                    (_, Some(SizeArg::Array(v))) => {
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
                }
            }
        };
        let call = CollCall {
            kind,
            rank: me,
            size,
            root,
            counts,
        };
        // TEMP(coll): until crate::coll provides select/schedule.
        let _ = &self.coll_cfg;
        let steps: Vec<Step> =
            tmp_schedule(&call).map_err(|m| self.rt(id, span, format!("{}: {m}", cop.name())))?;
        Ok(CollExec {
            op: cop,
            steps,
            pos: 0,
            posted: false,
            comm,
            key: key_,
        })
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
        size_arg: Option<SizeArg>,
        span: Span,
        size: u32,
        split: (i64, i64),
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
            first_rank: id,
            first_span: span,
            arrived: 0,
            split: Vec::new(),
            result: None,
            finished: 0,
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
            return Err(self.rt(
                id,
                span,
                format!(
                    "collective mismatch on {comm} (call #{}): {m} at line {line}:{col}",
                    key.1 + 1
                ),
            ));
        }
        inst.arrived += 1;
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
                CollOp::Coll(_) => {
                    self.instances.remove(&key);
                }
            }
        }
        Ok(())
    }

    fn finish_collective(&mut self, id: u32, exec: &CollExec, span: Span) -> RunResult<Value> {
        match exec.op {
            CollOp::Coll(_) => Ok(Value::Null),
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

// TEMP(coll): linear placeholder until crate::coll lands; removed then.
fn tmp_schedule(call: &CollCall<'_>) -> Result<Vec<Step>, String> {
    let _ = coll::ANY_SIZE;
    if call.size == 1 {
        return Ok(Vec::new());
    }
    let b = match call.counts {
        Counts::Uniform(b) | Counts::Own(b) => b,
        Counts::PerRank(v) => v.iter().sum(),
    };
    // gather to 0 then scatter from 0
    if call.rank == 0 {
        let recvs = (1..call.size)
            .map(|p| Op::Recv {
                peer: p,
                bytes: u64::MAX,
            })
            .collect();
        let sends = (1..call.size)
            .map(|p| Op::Send { peer: p, bytes: b })
            .collect();
        Ok(vec![
            Step {
                ops: recvs,
                reduce_bytes: 0,
            },
            Step {
                ops: sends,
                reduce_bytes: 0,
            },
        ])
    } else {
        Ok(vec![
            Step {
                ops: vec![Op::Send { peer: 0, bytes: b }],
                reduce_bytes: 0,
            },
            Step {
                ops: vec![Op::Recv {
                    peer: 0,
                    bytes: u64::MAX,
                }],
                reduce_bytes: 0,
            },
        ])
    }
}
