//! Where the ranks stand when a run stops early or ends with work left:
//! the deadlock report (blocked ranks and what they wait for), runaway
//! positions and the end-of-run leftovers.

use super::*;

impl<'a> Engine<'a> {
    /// Unreceived messages, unmatched receives and unwaited requests, in
    /// rank order (user communication only: collectives always complete).
    pub(super) fn leftovers(&self) -> Vec<Leftover> {
        let mut out = Vec::new();
        for lp in &self.lps {
            for m in lp.unexpected_envelopes() {
                let msg = &self.msgs[m as usize];
                if msg.ctx % 2 == 1 {
                    continue;
                }
                out.push(Leftover {
                    kind: LeftoverKind::UnreceivedMessage,
                    rank: msg.src,
                    peer: Some(msg.dst),
                    tag: Some(msg.tag),
                    bytes: msg.bytes,
                    span: self.spans.get(msg.span),
                    comm: msg.ctx / 2,
                });
            }
            for r in lp.posted_receives() {
                let q = &self.reqs[r as usize];
                out.push(Leftover {
                    kind: LeftoverKind::UnmatchedReceive,
                    rank: q.owner,
                    peer: q.named_peer(),
                    tag: q.named_tag(),
                    bytes: q.bytes,
                    span: self.spans.get(q.span),
                    comm: q.comm(),
                });
            }
            for &r in &lp.pending {
                let q = &self.reqs[r as usize];
                if !q.done {
                    continue;
                }
                out.push(Leftover {
                    kind: LeftoverKind::UnwaitedRequest,
                    rank: q.owner,
                    peer: q.named_peer(),
                    tag: q.named_tag(),
                    bytes: q.bytes,
                    span: self.spans.get(q.span),
                    comm: q.comm(),
                });
            }
        }
        out.sort_by_key(|l| (l.rank, l.span.start));
        out
    }

    pub(super) fn position(&self, id: u32) -> Option<Span> {
        let lp = &self.lps[id as usize];
        let f = lp.frames.last()?;
        let func = self.program.function(f.func);
        let block = &func.cfg[f.block];
        Some(match block.stmts.get(f.stmt as usize) {
            Some(s) => s.span(),
            None => match &block.term {
                Terminator::Branch { span, .. } | Terminator::Return { span, .. } => *span,
                Terminator::Goto(_) => block.span,
            },
        })
    }

    pub(super) fn runaway(&self, reason: Runaway) -> Box<SimError> {
        let positions = (0..self.cfg.ranks)
            .filter(|&r| self.lps[r as usize].state != LpState::Finished)
            .filter_map(|r| self.position(r).map(|s| (r, s)))
            .take(64)
            .collect();
        Box::new(SimError::Runaway {
            reason,
            events: self.events,
            time: self.now,
            positions,
        })
    }

    pub(super) fn deadlock(&self, finished: u32) -> Box<SimError> {
        let mut blocked = Vec::new();
        for (r, lp) in self.lps.iter().enumerate() {
            if lp.state == LpState::Finished {
                continue;
            }
            let span = self.position(r as u32).unwrap_or_default();
            let (op, reqs): (&'static str, &[ReqRef]) =
                match (&lp.wait, self.current_stmt(r as u32)) {
                    (Some(ws), Some(Stmt::Comm { op, .. })) => (comm_name(op), &ws.reqs),
                    (Some(ws), _) => ("wait", &ws.reqs),
                    (None, Some(Stmt::Comm { op, .. })) => (comm_name(op), &[]),
                    (None, _) => ("(running)", &[]),
                };
            let mut waits: Vec<PendingOp> = reqs
                .iter()
                .map(|x| &self.reqs[x.id() as usize])
                .filter(|q| !q.done)
                .map(|q| PendingOp {
                    kind: if q.is_send {
                        PendingKind::Send
                    } else {
                        PendingKind::Recv
                    },
                    peer: q.named_peer(),
                    tag: q.named_tag(),
                    bytes: q.bytes,
                    span: self.spans.get(q.span),
                    peer_finished: q
                        .named_peer()
                        .is_some_and(|p| self.lps[p as usize].state == LpState::Finished),
                    comm: q.comm(),
                    in_collective: q.ctx % 2 == 1,
                })
                .collect();
            if let Some(env) = lp.probing() {
                waits.push(PendingOp {
                    kind: PendingKind::Probe,
                    peer: (env.peer != ANY_SOURCE).then_some(env.peer),
                    tag: (env.tag != ANY_TAG).then_some(env.tag),
                    bytes: 0,
                    span,
                    peer_finished: env.peer != ANY_SOURCE
                        && self.lps[env.peer as usize].state == LpState::Finished,
                    comm: env.comm,
                    in_collective: false,
                });
            }
            blocked.push(BlockedRank {
                rank: r as u32,
                span,
                op,
                waits,
                any: lp.wait.as_ref().is_some_and(|ws| ws.any),
            });
        }
        Box::new(SimError::Deadlock {
            time: self.now,
            blocked,
            finished,
        })
    }

    pub(super) fn current_stmt(&self, id: u32) -> Option<&'a Stmt> {
        let f = self.lps[id as usize].frames.last()?;
        let program: &'a Program = self.program;
        program.function(f.func).cfg[f.block]
            .stmts
            .get(f.stmt as usize)
    }
}

pub(super) fn comm_name(op: &CommOp) -> &'static str {
    match op {
        CommOp::Send(_, SendMode::Standard) => "send",
        CommOp::Send(_, SendMode::Synchronous) => "ssend",
        CommOp::Send(_, SendMode::Buffered) => "bsend",
        CommOp::Recv(_) => "recv",
        CommOp::Isend(_, SendMode::Standard) => "isend",
        CommOp::Isend(_, SendMode::Synchronous) => "issend",
        CommOp::Isend(_, SendMode::Buffered) => "ibsend",
        CommOp::Irecv(_) => "irecv",
        CommOp::Sendrecv { .. } => "sendrecv",
        CommOp::Wait(_) => "wait",
        CommOp::Waitall(_) => "waitall",
        CommOp::Waitany(_) => "waitany",
        CommOp::Test(_) => "test",
        CommOp::Probe(_) => "probe",
        CommOp::Iprobe(_) => "iprobe",
        CommOp::Collective(a) => a.kind.name(),
        CommOp::CommSplit { .. } => "comm_split",
        CommOp::CommDup(_) => "comm_dup",
    }
}
