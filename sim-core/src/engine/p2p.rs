//! Point-to-point communication: posting, matching, protocols, waits.

use super::comms::p2p_context;
use super::*;

/// A resolved message description: world ranks and a matching context.
#[derive(Debug, Clone, Copy)]
pub(super) struct Envelope {
    /// World rank of the peer, or `ANY_SOURCE`.
    pub peer: u32,
    pub tag: i32,
    pub bytes: u64,
    pub ctx: u32,
    /// The communicator (for translating the status's source).
    pub comm: u32,
}

/// What the protocol decided about a message being sent
/// (`Engine::start_message`).
#[derive(Clone, Copy)]
struct Started {
    /// Whether the send request is complete at once (eager, a flag).
    done: bool,
    /// When the sender's CPU is free of it.
    ready_at: f64,
    /// When its envelope (or data) arrives.
    arrival: f64,
    /// Whether it is a rendezvous RTS (the message then keeps its send
    /// request, which completes when the data has gone).
    rendezvous: bool,
    /// Whether its data is library data the sender just wrote
    /// ([`Msg::written`](super::state::Msg)).
    written: bool,
}

impl<'a> Engine<'a> {
    pub(super) fn exec_comm(
        &mut self,
        id: u32,
        op: &'a CommOp,
        dst: Option<Slot>,
        span: Span,
    ) -> RunResult<Flow> {
        let lpi = id as usize;
        // A collective (or comm_split/comm_dup) in progress.
        if self.lps[lpi].in_collective() {
            return self.exec_collective(id, op, dst, span);
        }
        // Phase 2 of a blocking statement: its requests are posted, wait for them.
        if self.lps[lpi].wait.is_some() {
            return self.try_complete_wait(id, dst);
        }
        let started = self.lps[lpi].clock;
        let busy_before = self.lps[lpi].stats.busy();
        let mut ws = self.free_waitsets.pop().unwrap_or_default();
        match op {
            CommOp::Isend(a, mode) => {
                let env = self.resolve(id, a, span, false)?;
                self.count_call(id, op, &env, span);
                let r = self.post_send(id, env, *mode, span, false)?;
                self.lps[lpi].pending.push(r.id());
                self.free_waitsets.push(ws);
                if let Some(d) = dst {
                    self.set_local(id, d, Value::Req(r));
                }
                return Ok(Flow::Continue);
            }
            CommOp::Irecv(a) => {
                let env = self.resolve(id, a, span, true)?;
                self.count_call(id, op, &env, span);
                let r = self.post_recv(id, env, span)?;
                self.lps[lpi].pending.push(r.id());
                self.free_waitsets.push(ws);
                if let Some(d) = dst {
                    self.set_local(id, d, Value::Req(r));
                }
                return Ok(Flow::Continue);
            }
            CommOp::Send(a, mode) => {
                let env = self.resolve(id, a, span, false)?;
                self.count_call(id, op, &env, span);
                ws.reqs.push(self.post_send(id, env, *mode, span, false)?);
            }
            CommOp::Recv(a) => {
                let env = self.resolve(id, a, span, true)?;
                self.count_call(id, op, &env, span);
                ws.reqs.push(self.post_recv(id, env, span)?);
                ws.result = WaitResult::StatusOf(0);
            }
            CommOp::Sendrecv { send, recv } => {
                // MPI_Sendrecv: both posted before either is waited for.
                let se = self.resolve(id, send, span, false)?;
                let re = self.resolve(id, recv, span, true)?;
                self.count_call(id, op, &se, span);
                let s = self.post_send(id, se, SendMode::Standard, span, false)?;
                let r = self.post_recv(id, re, span)?;
                ws.reqs.push(s);
                ws.reqs.push(r);
                ws.result = WaitResult::StatusOf(1);
            }
            CommOp::Wait(slot) => {
                if let Some(r) = self.live_req_in(id, *slot, "wait", span)? {
                    ws.reqs.push(r);
                    if !self.reqs[r.id() as usize].is_send {
                        ws.result = WaitResult::StatusOf(0);
                    }
                }
                ws.null_slots.push(*slot);
            }
            CommOp::Waitall(slots) => {
                if slots.is_empty() {
                    // Copied, and the list cleared but not freed: a steady
                    // loop allocates no `pending` vector per iteration (the
                    // wait set's buffer is recycled with it). Every id in
                    // `pending` is a live request (`Lp::pending`).
                    let reqs = &self.reqs;
                    ws.reqs.extend(
                        self.lps[lpi]
                            .pending
                            .iter()
                            .map(|&id| ReqRef::new(id, reqs[id as usize].generation)),
                    );
                    self.lps[lpi].pending.clear();
                } else {
                    for slot in slots {
                        if let Some(r) = self.live_req_in(id, *slot, "waitall", span)? {
                            ws.reqs.push(r);
                        }
                        ws.null_slots.push(*slot);
                    }
                }
            }
            CommOp::Waitany(slots) => {
                for (pos, slot) in slots.iter().enumerate() {
                    // The result is the argument's index, counting dead entries.
                    if let Some(r) = self.live_req_in(id, *slot, "waitany", span)? {
                        ws.reqs.push(r);
                        ws.any_slots.push((*slot, pos));
                    }
                }
                if ws.reqs.is_empty() {
                    // MPI_UNDEFINED: no active request.
                    self.free_waitsets.push(ws);
                    if let Some(d) = dst {
                        self.set_local(id, d, Value::Int(-1));
                    }
                    return Ok(Flow::Continue);
                }
                ws.any = true;
            }
            CommOp::Test(slot) => {
                self.free_waitsets.push(ws);
                return self.exec_test(id, *slot, dst, span);
            }
            CommOp::Probe(a) | CommOp::Iprobe(a) => {
                self.free_waitsets.push(ws);
                let blocking = matches!(op, CommOp::Probe(_));
                return self.exec_probe(id, a, blocking, dst, span);
            }
            CommOp::Collective(_) | CommOp::CommSplit { .. } | CommOp::CommDup(_) => {
                self.free_waitsets.push(ws);
                return self.exec_collective(id, op, dst, span);
            }
        }
        ws.started = started;
        ws.busy_before = busy_before;
        ws.what = super::comm_name(op);
        ws.line = span.line;
        self.lps[lpi].wait = Some(ws);
        self.try_complete_wait(id, dst)
    }

    /// Counts a point-to-point call for the call profile
    /// (`SimConfig::call_profile`; its conventions are at `CallCount`).
    #[inline]
    fn count_call(&mut self, id: u32, op: &CommOp, env: &Envelope, span: Span) {
        if self.obs.counting_calls() {
            let size = self.comms.get(env.comm).map_or(0, |c| c.size());
            let peer = (env.peer != ANY_SOURCE).then_some(env.peer);
            self.obs
                .comm_call(id, span.line, super::comm_name(op), peer, env.bytes, size);
        }
    }

    /// `test(r)`: true (and `r` becomes null) once `r` is complete.
    fn exec_test(&mut self, id: u32, slot: Slot, dst: Option<Slot>, span: Span) -> RunResult<Flow> {
        let lpi = id as usize;
        let done = match self.live_req_in(id, slot, "test", span)? {
            None => true,
            Some(r) => {
                let q = &self.reqs[r.id() as usize];
                let clock = self.lps[lpi].clock;
                if q.done && q.ready_at <= clock {
                    let o = self.overhead_of(q);
                    self.release_req(r);
                    let lp = &mut self.lps[lpi];
                    lp.pending.retain(|p| *p != r.id());
                    lp.clock += o;
                    lp.stats.comm += o;
                    self.set_local(id, slot, Value::Null);
                    true
                } else {
                    false
                }
            }
        };
        if let Some(d) = dst {
            self.set_local(id, d, Value::Bool(done));
        }
        Ok(Flow::Continue)
    }

    /// `probe` (`blocking`) or `iprobe`: the status of a matching envelope
    /// that has arrived; `probe` blocks until there is one.
    fn exec_probe(
        &mut self,
        id: u32,
        a: &MsgArgs,
        blocking: bool,
        dst: Option<Slot>,
        span: Span,
    ) -> RunResult<Flow> {
        let lpi = id as usize;
        let any = self.resolve_probe(id, a, span)?;
        // A probe of ANY_SOURCE user messages chooses a sender as a
        // wildcard receive does (MPI 4.1 section 3.8.1: the message a
        // probe returns is the one a receive in its place would match), so
        // it is counted among the rank's wildcards, recorded, and may be
        // forced to one sender by `--explore`. Its number is taken when it
        // finds a message: a blocked probe runs again when one arrives, and
        // an `iprobe` that finds nothing has chosen nothing. An `iprobe`
        // forced to a sender whose message has not arrived finds nothing,
        // which MPI allows at that moment (section 3.8.1: iprobe returns
        // false when no matching message is available); a polling loop then
        // asks again with the same number until that message is there.
        let wild = any.peer == ANY_SOURCE && any.ctx.is_multiple_of(2);
        let nth = self.lps[lpi].wildcards_posted;
        let mut env = any;
        if wild
            && let Some(f) =
                (self.cfg.forced_wildcards.iter()).find(|f| f.rank == id && f.nth == nth)
        {
            env.peer = f.source;
        }
        let found = self.probe_unexpected(id, env);
        if wild && let Some((_, m)) = found {
            self.lps[lpi].wildcards_posted += 1;
            if self.obs.recording_wildcards() {
                self.record_probe(id, nth, span, any, m);
            }
        }
        let found = found.map(|(st, _)| st);
        match (found, blocking) {
            (Some(st), _) => {
                if let Some(d) = dst {
                    self.set_local(id, d, Value::status(st));
                }
                self.lps[lpi].set_probing(None);
                Ok(Flow::Continue)
            }
            (None, false) => {
                if let Some(d) = dst {
                    self.set_local(id, d, Value::Null);
                }
                Ok(Flow::Continue)
            }
            (None, true) => {
                // Blocks until a matching envelope arrives; then the
                // statement runs again and finds it.
                self.lps[lpi].set_probing(Some(env));
                Ok(Flow::Block)
            }
        }
    }

    /// The live request in variable `slot`, `None` for null or a completed one.
    fn live_req_in(
        &self,
        id: u32,
        slot: Slot,
        what: &str,
        span: Span,
    ) -> RunResult<Option<ReqRef>> {
        match self.local(id, slot) {
            Value::Req(r) => Ok(self.req_live(r).then_some(r)),
            Value::Null => Ok(None),
            other => Err(self.rt(
                id,
                span,
                format!("`{what}` needs a request, got {}", other.type_name()),
            )),
        }
    }

    pub(super) fn local(&self, id: u32, slot: Slot) -> Value {
        self.lps[id as usize]
            .frames
            .last()
            .map(|f| f.locals[slot as usize].clone())
            .unwrap_or(Value::Null)
    }

    fn req_live(&self, r: ReqRef) -> bool {
        self.reqs
            .get(r.id() as usize)
            .is_some_and(|q| q.generation == r.generation())
    }

    /// The communicator of a `comm:` argument (the world when absent), which
    /// `id` must belong to.
    pub(super) fn eval_comm(&self, id: u32, e: Option<&Expr>, span: Span) -> RunResult<u32> {
        let Some(e) = e else { return Ok(0) };
        match self.eval_in(id, e, span)? {
            Value::Comm(c) => match self.comms.get(c) {
                Some(comm) if comm.rank_of(id).is_some() => Ok(c),
                Some(_) => Err(self.rt(
                    id,
                    span,
                    format!("rank {id} is not a member of communicator #{c}"),
                )),
                None => Err(self.rt(id, span, format!("communicator #{c} does not exist"))),
            },
            Value::Null => Err(self.rt(
                id,
                span,
                "`comm:` is null (a comm_split with a negative color gives no communicator)"
                    .to_owned(),
            )),
            v => Err(self.rt(id, span, format!("`comm:` needs a communicator, got {v}"))),
        }
    }

    /// Peer (in `comm`) → world rank.
    fn eval_peer_in(
        &self,
        id: u32,
        e: &Expr,
        span: Span,
        is_recv: bool,
        comm: u32,
    ) -> RunResult<u32> {
        let what = if is_recv { "from" } else { "to" };
        // Invariant: `comm` was checked by `eval_comm`.
        let Some(c) = self.comms.get(comm) else {
            return Err(self.rt(id, span, "no communicator".to_owned()));
        };
        match self.eval_in(id, e, span)? {
            Value::Any if is_recv => Ok(ANY_SOURCE),
            Value::Int(r) if r >= 0 && r < i64::from(c.size()) => Ok(c.world(r as u32)),
            v => {
                let of = if comm == 0 {
                    String::new()
                } else {
                    format!(" of communicator #{comm}")
                };
                Err(self.rt(
                    id,
                    span,
                    format!(
                        "`{what}: {v}` is not a valid rank (size{of} is {})",
                        c.size()
                    ),
                ))
            }
        }
    }

    pub(super) fn eval_bytes(&self, id: u32, e: &Expr, span: Span) -> RunResult<u64> {
        let v = self.eval_in(id, e, span)?;
        value_bytes(&v).ok_or_else(|| {
            self.rt(
                id,
                span,
                format!("`bytes:` must be a non-negative integer, got {v}"),
            )
        })
    }

    fn eval_tag(&self, id: u32, e: &Expr, span: Span, is_recv: bool) -> RunResult<i32> {
        match self.eval_in(id, e, span)? {
            Value::Any if is_recv => Ok(ANY_TAG),
            Value::Int(t) if (0..=i64::from(i32::MAX)).contains(&t) => Ok(t as i32),
            v => Err(self.rt(
                id,
                span,
                format!("`tag: {v}` is not a valid tag (0 ..= {})", i32::MAX),
            )),
        }
    }

    // Inlined into its callers: returned through memory, the envelope was
    // written field by field and read back in 16-byte loads, a
    // store-forwarding stall per isend and irecv (`perf annotate` of W2:
    // a quarter of `exec_stmt`'s samples on the two loads).
    #[inline(always)]
    fn resolve(&self, id: u32, a: &MsgArgs, span: Span, is_recv: bool) -> RunResult<Envelope> {
        let comm = self.eval_comm(id, a.comm.as_ref(), span)?;
        let peer = self.eval_peer_in(id, &a.peer, span, is_recv, comm)?;
        let tag = self.eval_tag(id, &a.tag, span, is_recv)?;
        let bytes = self.eval_bytes(id, &a.bytes, span)?;
        Ok(Envelope {
            peer,
            tag,
            bytes,
            ctx: p2p_context(comm),
            comm,
        })
    }

    fn resolve_probe(&self, id: u32, a: &MsgArgs, span: Span) -> RunResult<Envelope> {
        let comm = self.eval_comm(id, a.comm.as_ref(), span)?;
        let peer = self.eval_peer_in(id, &a.peer, span, true, comm)?;
        let tag = self.eval_tag(id, &a.tag, span, true)?;
        Ok(Envelope {
            peer,
            tag,
            bytes: 0,
            ctx: p2p_context(comm),
            comm,
        })
    }

    /// The status of the first arrived envelope matching `env`, translated
    /// to `env.comm`'s ranks, and the envelope.
    fn probe_unexpected(&self, id: u32, env: Envelope) -> Option<(MsgStatus, u32)> {
        let (_, m) = self.lps[id as usize].find_unexpected(&env, &self.msgs)?;
        let msg = &self.msgs[m as usize];
        Some((
            MsgStatus {
                source: self.comm_rank(env.comm, msg.src),
                tag: msg.tag,
                bytes: msg.bytes,
            },
            m,
        ))
    }

    /// Records an ANY_SOURCE probe of rank `id` (its `nth` wildcard, at
    /// `span`) that found envelope `m`, with the other senders whose
    /// envelopes matching `any` had arrived or were in flight.
    fn record_probe(&mut self, id: u32, nth: u32, span: Span, any: Envelope, m: u32) {
        let chosen = self.msgs[m as usize].src;
        let mut alternatives: Vec<u32> = Vec::new();
        let inflight = self.obs.in_flight_to(id);
        let arrived = self.lps[id as usize].unexpected_envelopes();
        for &o in arrived.iter().chain(inflight.iter()) {
            let other = &self.msgs[o as usize];
            if other.src != chosen && other.matches(&any) && !alternatives.contains(&other.src) {
                alternatives.push(other.src);
            }
        }
        alternatives.sort_unstable();
        self.obs.wildcard_matched(
            WildcardMatch {
                rank: id,
                nth,
                span,
                chosen,
                alternatives,
                probe: true,
            },
            any.ctx,
            any.tag,
        );
    }

    fn comm_rank(&self, comm: u32, world: u32) -> u32 {
        self.comms
            .get(comm)
            .and_then(|c| c.rank_of(world))
            .unwrap_or(world)
    }

    /// Completes the LP's wait set if it is satisfied; otherwise blocks.
    /// The timeline interval of a finished blocking call (with a timeline):
    /// from its start to `end`, the part not spent in overheads as waiting.
    fn trace_wait(&mut self, id: u32, ws: &WaitSet, end: f64) {
        if !self.obs.tracing() || ws.what.is_empty() {
            return;
        }
        let busy = self.lps[id as usize].stats.busy() - ws.busy_before;
        let ev = TraceEvent::Interval {
            rank: id,
            start: ws.started,
            end,
            what: ws.what.to_owned(),
            comm: true,
            line: ws.line,
            wait: (end - ws.started - busy).max(0.0),
        };
        self.obs.trace(|| ev);
    }

    pub(super) fn try_complete_wait(&mut self, id: u32, dst: Option<Slot>) -> RunResult<Flow> {
        let lpi = id as usize;
        let Some(ws) = self.lps[lpi].wait.as_mut() else {
            return Ok(Flow::Continue);
        };
        if !Self::wait_satisfied(&self.reqs, ws) {
            return Ok(Flow::Block);
        }
        // Invariant: checked just above that the wait set exists.
        let Some(mut ws) = self.lps[lpi].wait.take() else {
            return Ok(Flow::Continue);
        };
        if ws.any {
            // waitany: the request whose data was ready first (the first in
            // the argument list among equals).
            let mut best: Option<(f64, usize)> = None;
            for (i, r) in ws.reqs.iter().enumerate() {
                let q = &self.reqs[r.id() as usize];
                if q.done && best.is_none_or(|(t, _)| q.ready_at < t) {
                    best = Some((q.ready_at, i));
                }
            }
            // Invariant: `wait_satisfied` found a done request.
            let (ready, i) = best.unwrap_or((self.lps[lpi].clock, 0));
            let r = ws.reqs[i];
            let o = self.overhead_of(&self.reqs[r.id() as usize]);
            self.release_req(r);
            let (slot, index) = ws.any_slots[i];
            let lp = &mut self.lps[lpi];
            lp.pending.retain(|p| *p != r.id());
            lp.clock = lp.clock.max(ready) + o;
            lp.stats.comm += o;
            let end = lp.clock;
            self.trace_wait(id, &ws, end);
            self.set_local(id, slot, Value::Null);
            if let Some(d) = dst {
                self.set_local(id, d, Value::Int(index as i64));
            }
        } else {
            // Handle the requests in the order their data became ready; each
            // charges its overhead (o_r) on the CPU after it is ready.
            let mut order = std::mem::take(&mut self.scratch_order);
            order.clear();
            order.extend(
                ws.reqs
                    .iter()
                    .enumerate()
                    .map(|(i, r)| (self.reqs[r.id() as usize].ready_at, i)),
            );
            order.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let mut t = self.lps[lpi].clock;
            let mut comm = 0.0;
            let mut result = Value::Null;
            for &(ready, i) in &order {
                let q = &self.reqs[ws.reqs[i].id() as usize];
                let o = self.overhead_of(q);
                t = t.max(ready) + o;
                comm += o;
                if ws.result == WaitResult::StatusOf(i) {
                    let mut st = q.status();
                    st.source = self.comm_rank(q.comm(), st.source);
                    result = Value::status(st);
                }
            }
            for r in &ws.reqs {
                self.release_req(*r);
            }
            let lp = &mut self.lps[lpi];
            if !ws.reqs.is_empty() && !lp.pending.is_empty() {
                lp.pending.retain(|p| !ws.reqs.iter().any(|r| r.id() == *p));
            }
            lp.clock = t;
            lp.stats.comm += comm;
            self.trace_wait(id, &ws, t);
            for s in &ws.null_slots {
                self.set_local(id, *s, Value::Null);
            }
            if let Some(d) = dst {
                self.set_local(id, d, result);
            }
            self.scratch_order = order;
        }
        ws.clear();
        self.free_waitsets.push(ws);
        Ok(Flow::Continue)
    }

    /// Whether the wait set is satisfied: one request done (`waitany`) or
    /// all of them, counted from [`WaitSet::done_prefix`] on.
    fn wait_satisfied(reqs: &[Request], ws: &mut WaitSet) -> bool {
        if ws.any {
            return ws.reqs.iter().any(|r| reqs[r.id() as usize].done);
        }
        let done = ws.reqs[ws.done_prefix as usize..]
            .iter()
            .take_while(|r| reqs[r.id() as usize].done)
            .count();
        // At most `reqs.len()`, the number of live requests, which is
        // below 2^32 (request ids are `u32`).
        ws.done_prefix += done as u32;
        ws.done_prefix as usize == ws.reqs.len()
    }

    /// A request slot for `req`: one its owner freed before, else a new
    /// one at the end of the slab. Reusing the owner's own slots (instead
    /// of one list for every rank, which after the first iteration hands a
    /// rank the slots some other rank just freed) keeps a rank's requests
    /// together in memory, so that posting, matching and waiting touch a
    /// few neighbouring cache lines. Which slot a request gets changes no
    /// prediction: ids are compared, never ordered (a printed request shows
    /// its id, `request#N`, an opaque handle).
    fn new_req(&mut self, mut req: Request) -> ReqRef {
        let owner = req.owner as usize;
        let head = self.lps[owner].free_req;
        if head != NO_REQ {
            let slot = &mut self.reqs[head as usize];
            self.lps[owner].free_req = slot.span;
            req.generation = slot.generation.wrapping_add(1);
            let generation = req.generation;
            *slot = req;
            ReqRef::new(head, generation)
        } else {
            let id = self.reqs.len() as u32;
            req.generation = 0;
            self.reqs.push(req);
            ReqRef::new(id, 0)
        }
    }

    fn release_req(&mut self, r: ReqRef) {
        let q = &mut self.reqs[r.id() as usize];
        if q.generation == r.generation() {
            q.generation = q.generation.wrapping_add(1);
            let lp = &mut self.lps[q.owner as usize];
            q.span = lp.free_req;
            lp.free_req = r.id();
        }
    }

    fn new_msg(&mut self, m: Msg) -> u32 {
        if let Some(i) = self.free_msgs.pop() {
            self.msgs[i as usize] = m;
            i
        } else {
            self.msgs.push(m);
            (self.msgs.len() - 1) as u32
        }
    }

    /// Starts a send of `env` from `id` at its clock (which is `now`);
    /// `written`: a collective's library data, which its sender's core
    /// wrote in the call (its rendezvous data is priced by
    /// `Machine::transfer_written`); a program's sends are not.
    pub(super) fn post_send(
        &mut self,
        id: u32,
        env: Envelope,
        mode: SendMode,
        span: Span,
        written: bool,
    ) -> RunResult<ReqRef> {
        let span = self.spans.intern(span);
        let to = env.peer;
        let bytes = env.bytes;
        let now = self.lps[id as usize].clock;
        let o_s = self.machine.send_overhead(id, to, bytes);
        let rendezvous = match mode {
            SendMode::Standard => bytes >= self.machine.eager_limit(id, to),
            SendMode::Synchronous => true,
            SendMode::Buffered => false,
        };
        let (kind, wire_bytes) = if rendezvous {
            (
                MessageKind::RendezvousRts,
                self.machine.control_bytes(id, to),
            )
        } else {
            (MessageKind::Eager, bytes)
        };
        let tr = self.machine.transfer(id, to, wire_bytes, kind, now);
        let req = self.start_message(
            id,
            &env,
            span,
            Started {
                done: !rendezvous,
                ready_at: tr.cpu_free.max(now),
                arrival: tr.arrival.max(now),
                rendezvous,
                written,
            },
        )?;
        self.obs
            .message_sent(id, to, bytes, tr.arrival.max(now) - now);
        // An eager send's copy out of the user's buffer (LogGOPS's O) keeps
        // the sender in the call; the message left after `o_s`.
        let in_call = if rendezvous {
            o_s
        } else {
            o_s + self.machine.send_copy(id, to, bytes)
        };
        let lp = &mut self.lps[id as usize];
        lp.clock = now + in_call;
        lp.stats.comm += in_call;
        lp.stats.messages_sent += 1;
        lp.stats.bytes_sent += bytes;
        self.messages += 1;
        self.bytes += bytes;
        // Beyond the table a channel was calibrated with, its time is
        // extrapolated: the caller warns (api.rs, `largest_message`).
        if bytes > self.record_above {
            let set = self
                .machine
                .channel_of(id, to)
                .min(crate::model::CHANNEL_SETS - 1);
            self.largest[set] = self.largest[set].max(bytes);
        }
        Ok(req)
    }

    /// Stores a shared-memory flag for `env.peer` (a collective's
    /// [`Op::Flag`](crate::coll::Op::Flag)): no overhead, no adapter; the
    /// peer sees it `Machine::flag_latency` later. Matched like a message
    /// (tag [`FLAG_TAG`], so never with a collective's data), so a pair's
    /// flags are seen in the order they were stored. Not counted as a
    /// message in the statistics.
    pub(super) fn post_flag(&mut self, id: u32, env: Envelope, span: Span) -> RunResult<ReqRef> {
        let span = self.spans.intern(span);
        let to = env.peer;
        let now = self.lps[id as usize].clock;
        let arrival = now + self.machine.flag_latency(id, to);
        self.start_message(
            id,
            &Envelope { bytes: 0, ..env },
            span,
            Started {
                done: true,
                ready_at: now,
                arrival,
                rendezvous: false,
                written: false,
            },
        )
    }

    /// The request and the message of a send from `id` at its clock
    /// (`now`), and the message's arrival queued, or matched at once when
    /// that gives the match its arrival would (`try_early_match`): what a
    /// send and a shared-memory flag share.
    fn start_message(
        &mut self,
        id: u32,
        env: &Envelope,
        span: SpanId,
        started: Started,
    ) -> RunResult<ReqRef> {
        let to = env.peer;
        let now = self.lps[id as usize].clock;
        let req = self.new_req(Request::send(id, env, started.done, started.ready_at, span));
        let m = self.new_msg(Msg {
            src: id,
            dst: to,
            tag: env.tag,
            ctx: env.ctx,
            bytes: env.bytes,
            arrival: started.arrival,
            send_req_id: if started.rendezvous {
                req.id()
            } else {
                NO_SEND_REQ
            },
            recv_req: u32::MAX,
            span,
            written: started.written,
            sent: now,
        });
        self.obs.causal_send(m, id, to, env.ctx, env.tag);
        if !self.try_early_match(m)? {
            self.lps[to as usize].inflight += 1;
            self.obs.in_flight(to, m);
            self.push(started.arrival, EventKind::Arrival(m));
        }
        Ok(req)
    }

    /// Posts a receive of `env` (its `bytes` is the capacity).
    pub(super) fn post_recv(
        &mut self,
        id: u32,
        mut env: Envelope,
        span: Span,
    ) -> RunResult<ReqRef> {
        let span = self.spans.intern(span);
        // ANY_SOURCE receives of user messages are counted (and may be
        // forced to one sender by `--explore`).
        let mut wild_nth = u32::MAX;
        if env.peer == ANY_SOURCE && env.ctx.is_multiple_of(2) {
            let lp = &mut self.lps[id as usize];
            wild_nth = lp.wildcards_posted;
            lp.wildcards_posted += 1;
            if let Some(f) = self
                .cfg
                .forced_wildcards
                .iter()
                .find(|f| f.rank == id && f.nth == wild_nth)
            {
                env.peer = f.source;
            }
        }
        let req = self.new_req(Request::receive(id, wild_nth, &env, span));
        // Search the envelopes that already arrived, in arrival order.
        let hit = self.lps[id as usize].find_unexpected(&env, &self.msgs);
        match hit {
            Some((at, m)) => {
                // Invariant: `at` was just found for `m`.
                let lp = &mut self.lps[id as usize];
                lp.remove_unexpected(at, &self.msgs[m as usize]);
                self.on_match(m, req.id())?;
            }
            None => {
                let lp = &mut self.lps[id as usize];
                lp.push_posted(req.id(), &self.reqs);
            }
        }
        Ok(req)
    }

    /// Matches an eager envelope at send time when that gives exactly the
    /// match its arrival would: no envelope to the receiver is in flight
    /// (so none from this sender can match first), and the first posted
    /// receive that matches names this sender (so no envelope from another
    /// rank, arriving earlier, could take it). Saves an arrival event.
    fn try_early_match(&mut self, m: u32) -> RunResult<bool> {
        let msg = &self.msgs[m as usize];
        if msg.send_req().is_some() {
            // Rendezvous: the CTS must be sent at match time, in time order.
            return Ok(false);
        }
        let dst = msg.dst;
        let lp = &self.lps[dst as usize];
        if lp.inflight != 0 || lp.probing().is_some() {
            return Ok(false);
        }
        let Some((at, r)) = lp.find_posted(msg, &self.reqs) else {
            return Ok(false);
        };
        if self.reqs[r as usize].filter_peer() == ANY_SOURCE {
            return Ok(false);
        }
        let msg = &self.msgs[m as usize];
        self.lps[dst as usize].remove_posted(at, msg);
        self.on_match(m, r)?;
        Ok(true)
    }

    pub(super) fn on_arrival(&mut self, m: u32) -> RunResult<()> {
        let dst = self.msgs[m as usize].dst;
        self.lps[dst as usize].inflight -= 1;
        self.obs.arrived(dst, m);
        let lp = &self.lps[dst as usize];
        let msg = &self.msgs[m as usize];
        match lp.find_posted(msg, &self.reqs) {
            Some((at, r)) => {
                self.lps[dst as usize].remove_posted(at, msg);
                self.on_match(m, r)
            }
            None => {
                self.lps[dst as usize].push_unexpected(m, &self.msgs);
                // A rank blocked in `probe` for this envelope wakes up.
                let lp = &self.lps[dst as usize];
                if lp.state == LpState::Blocked
                    && let Some(env) = lp.probing()
                    && self.msgs[m as usize].matches(env)
                {
                    self.wake(dst, self.now);
                }
                Ok(())
            }
        }
    }

    /// Envelope `m` meets receive `r`, at `self.now` (the later of arrival and posting).
    fn on_match(&mut self, m: u32, r: u32) -> RunResult<()> {
        let msg = self.msgs[m as usize].clone();
        let q = &mut self.reqs[r as usize];
        if msg.bytes > q.bytes {
            let (owner, span, cap) = (q.owner, self.spans.get(q.span), q.bytes);
            let src = self.comm_rank(self.reqs[r as usize].comm(), msg.src);
            return Err(self.rt(
                owner,
                span,
                format!(
                    "message truncated: rank {src} sent {} bytes with tag {} but this receive accepts at most {cap}",
                    msg.bytes, msg.tag
                ),
            ));
        }
        q.set_status(msg.src, msg.tag, msg.bytes);
        if self.obs.tracing() {
            let received = self.now.max(msg.arrival);
            self.obs.trace(|| TraceEvent::Message {
                src: msg.src,
                dst: msg.dst,
                sent: msg.sent,
                received,
                bytes: msg.bytes,
                // Odd contexts are collectives' (`comm::Context`).
                collective: !msg.ctx.is_multiple_of(2),
            });
        }
        self.msgs[m as usize].recv_req = r;
        self.obs.causal_match(m, msg.dst);
        if self.obs.recording_wildcards() && self.reqs[r as usize].wild_nth != u32::MAX {
            self.record_wildcard(r, &msg);
        }
        match msg.send_req() {
            None => {
                self.complete(r, self.now.max(msg.arrival));
                self.free_msgs.push(m);
            }
            Some(_) => {
                // Rendezvous: the receiver answers the RTS with a CTS, at
                // once if a progress thread or the hardware does it, or if
                // the receiver is inside MPI; else at its next MPI call
                // (MPICH, Open MPI and Intel MPI without async progress
                // match a rendezvous request in their progress engine,
                // which runs only inside MPI calls).
                if self.progress_in_calls && !self.in_mpi(msg.dst) {
                    self.lps[msg.dst as usize].defer_cts(m);
                } else {
                    self.send_cts(m, self.now);
                }
            }
        }
        Ok(())
    }

    /// Whether rank `r` is inside MPI now: blocked in a call, executing a
    /// communication statement, or finished (MPI_Finalize). Invariant: a
    /// blocked LP has no deferred clear-to-send (its call answered them
    /// when it started, and none is deferred while it is blocked). An LP
    /// parked by `--fast-forward` at its loop's head is blocked too and so
    /// counts as inside MPI: an RTS reaching it there is answered at once,
    /// where the full run would answer it at the rank's next call (a
    /// difference `fastforward.rs`'s reported bound does not cover).
    fn in_mpi(&self, r: u32) -> bool {
        self.in_call == r
            || matches!(
                self.lps[r as usize].state,
                LpState::Blocked | LpState::Finished
            )
    }

    /// The receiver of rendezvous message `m` sends its clear-to-send at
    /// `at`.
    fn send_cts(&mut self, m: u32, at: f64) {
        let (src, dst) = {
            let msg = &self.msgs[m as usize];
            (msg.src, msg.dst)
        };
        let cb = self.machine.control_bytes(dst, src);
        let tr = self
            .machine
            .transfer(dst, src, cb, MessageKind::RendezvousCts, at);
        let t = tr.arrival.max(at);
        self.push(t, EventKind::Cts(m));
    }

    /// Rank `id` has entered MPI (at its clock): the clear-to-send of the
    /// rendezvous requests matched while it computed go out, in match
    /// order.
    pub(super) fn answer_deferred(&mut self, id: u32) {
        let deferred = self.lps[id as usize].take_deferred();
        let at = self.lps[id as usize].clock.max(self.now);
        for m in deferred {
            self.send_cts(m, at);
        }
    }

    /// Records a matched ANY_SOURCE receive with the other senders whose
    /// matching envelopes had arrived or were in flight: with other timing
    /// one of them could have been matched instead.
    fn record_wildcard(&mut self, r: u32, msg: &Msg) {
        let q = &self.reqs[r as usize];
        let owner = q.owner;
        let mut alternatives: Vec<u32> = Vec::new();
        let arrived = self.lps[owner as usize].unexpected_envelopes();
        let inflight = self.obs.in_flight_to(owner);
        for &m in arrived.iter().chain(inflight.iter()) {
            let other = &self.msgs[m as usize];
            if other.src != msg.src && q.accepts(other) && !alternatives.contains(&other.src) {
                alternatives.push(other.src);
            }
        }
        alternatives.sort_unstable();
        let (ctx, tag) = (q.ctx, q.filter_tag());
        self.obs.wildcard_matched(
            WildcardMatch {
                rank: owner,
                nth: q.wild_nth,
                span: self.spans.get(q.span),
                chosen: msg.src,
                alternatives,
                probe: false,
            },
            ctx,
            tag,
        );
    }

    pub(super) fn on_cts(&mut self, m: u32) {
        let msg = self.msgs[m as usize].clone();
        // Data the sender's core just wrote is pulled from its cache: only
        // a rendezvous moves the data from the sender's buffer after the
        // call (the receiver's core copies it, CMA); an eager message is
        // copied by its sender's own core, which has it in its cache.
        let transfer = if msg.written {
            Machine::transfer_written
        } else {
            Machine::transfer
        };
        let tr = transfer(
            &mut *self.machine,
            msg.src,
            msg.dst,
            msg.bytes,
            MessageKind::RendezvousData,
            self.now,
        );
        if let Some(s) = msg.send_req() {
            self.complete(s, tr.cpu_free.max(self.now));
        }
        self.push(tr.arrival.max(self.now), EventKind::Data(m));
    }

    pub(super) fn on_data(&mut self, m: u32) {
        let msg = &self.msgs[m as usize];
        let r = msg.recv_req;
        self.complete(r, self.now);
        self.free_msgs.push(m);
    }

    /// The CPU time a completed request charges its owner at the wait:
    /// none for a send; for a receive, o_r of the message it received
    /// (LogGP), except a shared-memory flag, which is seen by a load
    /// (`post_flag`). The status holds the message's world source and size
    /// from the match on, and the receiver is the owner.
    pub(super) fn overhead_of(&self, q: &Request) -> f64 {
        let st = q.status();
        let flag = st.tag == FLAG_TAG && !q.ctx.is_multiple_of(2);
        if q.is_send || flag {
            0.0
        } else {
            self.machine.recv_overhead(st.source, q.owner, st.bytes)
        }
    }

    /// Marks request `r` done (data ready at `ready_at`; its overhead is
    /// charged at the wait, [`Engine::overhead_of`]) and wakes its owner if
    /// that satisfies its wait set.
    fn complete(&mut self, r: u32, ready_at: f64) {
        let q = &mut self.reqs[r as usize];
        q.done = true;
        q.ready_at = ready_at;
        let owner = q.owner;
        let lp = &mut self.lps[owner as usize];
        if lp.state != LpState::Blocked {
            return;
        }
        let Some(ws) = lp.wait.as_mut() else { return };
        if !Self::wait_satisfied(&self.reqs, ws) {
            return;
        }
        let lp = &self.lps[owner as usize];
        // Invariant: just found.
        let Some(ws) = lp.wait.as_ref() else { return };
        // The LP resumes when the data it needs is ready (for waitany: the
        // first ready one); `try_complete_wait` then charges the overheads.
        let t = if ws.any {
            ws.reqs
                .iter()
                .map(|x| &self.reqs[x.id() as usize])
                .filter(|q| q.done)
                .map(|q| q.ready_at)
                .fold(f64::INFINITY, f64::min)
        } else {
            ws.reqs
                .iter()
                .map(|x| self.reqs[x.id() as usize].ready_at)
                .fold(f64::NEG_INFINITY, f64::max)
        };
        self.wake(owner, t.max(lp.clock).max(self.now));
    }

    /// Schedules blocked LP `id` to resume at `t` (if that is earlier than an
    /// already scheduled wake-up; the later event is then ignored).
    pub(super) fn wake(&mut self, id: u32, t: f64) {
        let lp = &mut self.lps[id as usize];
        if t < lp.wake_at {
            lp.wake_at = t;
            self.push(t, EventKind::Resume(id));
        }
    }
}

/// `bytes:` as a byte count.
pub(super) fn value_bytes(v: &Value) -> Option<u64> {
    match *v {
        Value::Int(n) if n >= 0 => Some(n as u64),
        Value::Float(f) if f >= 0.0 && f.fract() == 0.0 && f < 9.0e18 => Some(f as u64),
        _ => None,
    }
}

/// The tag of shared-memory flags in a collective's context (its messages
/// use tag 0), so that flags and data of one pair never match each other.
pub(super) const FLAG_TAG: i32 = 1;

impl Msg {
    pub(super) fn matches(&self, env: &Envelope) -> bool {
        self.ctx == env.ctx
            && (env.peer == ANY_SOURCE || env.peer == self.src)
            && (env.tag == ANY_TAG || env.tag == self.tag)
    }
}

impl Request {
    pub(super) fn accepts(&self, m: &Msg) -> bool {
        let (peer, tag) = (self.filter_peer(), self.filter_tag());
        self.ctx == m.ctx
            && (peer == ANY_SOURCE || peer == m.src)
            && (tag == ANY_TAG || tag == m.tag)
    }
}
