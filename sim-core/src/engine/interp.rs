//! The statement interpreter: one LP runs its blocks until it yields,
//! blocks or finishes.

use super::*;

impl<'a> Engine<'a> {
    pub(super) fn run_lp(&mut self, id: u32) -> RunResult<()> {
        let lpi = id as usize;
        debug_assert!(self.lps[lpi].state == LpState::Ready);
        let program = self.program;
        let mut blocks = 0u32;
        loop {
            let lp = &mut self.lps[lpi];
            let clock = lp.clock;
            // Invariant: a Ready LP that is not finished has at least one frame.
            let Some(frame) = lp.frames.last_mut() else {
                return Ok(());
            };
            let (func_id, block_id) = (frame.func, frame.block);
            let func = program.function(func_id);
            let block = &func.cfg[block_id];
            // The hot path: a run of assignments of numbers and bools, in
            // place, without the general evaluator's `Value`s and errors.
            // An assignment the fast evaluator cannot answer (another type,
            // an error to report) falls through to `exec_stmt`, which
            // evaluates it again: expressions are pure.
            let mut clock = clock;
            while let Some(Stmt::Assign { dst, value, .. }) = block.stmts.get(frame.stmt as usize) {
                let cx = EvalCx {
                    locals: &frame.locals,
                    params: &self.params,
                    rank: id,
                    size: self.cfg.ranks,
                    clock,
                    comms: &self.comms,
                };
                // Invariant (ir.rs): slots are < num_locals. The
                // destination is not borrowed by `cx` at the write: the
                // value is computed first.
                let Some(s) = crate::value::eval_fast_scalar(value, &cx) else {
                    break;
                };
                s.store(&mut frame.locals[*dst as usize]);
                frame.stmt += 1;
                // A read of the clock costs `timer` (`Machine::timer_seconds`),
                // charged once the statement is done (`charge_clock_reads`).
                if self.timer > 0.0 {
                    let reads = super::watch::clock_reads(value);
                    if reads > 0 {
                        let t = f64::from(reads) * self.timer;
                        clock += t;
                        lp.clock = clock;
                        lp.stats.compute += t;
                    }
                }
            }
            let stmt_ix = frame.stmt as usize;
            if let Some(stmt) = block.stmts.get(stmt_ix) {
                match self.exec_stmt(id, stmt)? {
                    Flow::Continue => {
                        // Only a block that communicates or reads the clock
                        // (`observes`, computed once) can hold a read.
                        if self.timer > 0.0 && self.observes[func_id as usize][block_id.index()] {
                            self.charge_clock_reads(id, stmt);
                        }
                        // Invariant: exec_stmt leaves the frame stack non-empty on Continue
                        // (a call pushes a frame whose entry starts at stmt 0).
                        if !matches!(stmt, Stmt::Call { .. })
                            && let Some(f) = self.lps[lpi].frames.last_mut()
                        {
                            f.stmt += 1;
                        }
                    }
                    Flow::Yield => {
                        let t = self.lps[lpi].clock;
                        self.push(t, EventKind::Resume(id));
                        return Ok(());
                    }
                    Flow::Block => {
                        self.lps[lpi].state = LpState::Blocked;
                        return Ok(());
                    }
                }
                continue;
            }
            // End of block: the terminator.
            blocks += 1;
            if blocks >= SLICE_BLOCKS {
                let t = self.lps[lpi].clock;
                // Do not advance: the terminator runs after the yield.
                self.push(t, EventKind::Resume(id));
                return Ok(());
            }
            if let Some(ff) = self.ff.as_deref()
                && ff.has_heads[func_id as usize]
                && matches!(block.term, Terminator::Branch { .. })
                && self.ff_pass(id, func_id, block_id)?
            {
                // Parked at the loop's head until every rank is (see
                // `fastforward.rs`); the branch runs when it is released.
                self.lps[lpi].state = LpState::Blocked;
                return Ok(());
            }
            self.watch_step(id, func_id, block_id)?;
            let next = match &block.term {
                Terminator::Goto(b) => Some(*b),
                Terminator::Branch {
                    cond,
                    then_,
                    else_,
                    span,
                } => {
                    let taken = match self.cond_fast(id, cond) {
                        Some(t) => t,
                        None => {
                            let v = self.eval_in(id, cond, *span)?;
                            v.truthy().map_err(|m| self.rt(id, *span, m))?
                        }
                    };
                    if self.timer > 0.0 {
                        self.charge_reads_of(id, cond);
                    }
                    Some(if taken { *then_ } else { *else_ })
                }
                Terminator::Return { value, span } => {
                    let v = match value {
                        Some(e) => self.eval_in(id, e, *span)?,
                        None => Value::Null,
                    };
                    if self.timer > 0.0
                        && let Some(e) = value
                    {
                        self.charge_reads_of(id, e);
                    }
                    let lp = &mut self.lps[lpi];
                    let done = lp.frames.pop();
                    match (lp.frames.last_mut(), done) {
                        (Some(caller), Some(done)) => {
                            if done.ret_dst != NO_SLOT {
                                caller.locals[done.ret_dst as usize] = v;
                            }
                            caller.stmt += 1;
                        }
                        _ => {
                            self.finish(id);
                            return Ok(());
                        }
                    }
                    None
                }
            };
            if let Some(b) = next {
                // Invariant: frames is non-empty here (checked at loop top, not popped).
                if let Some(f) = self.lps[lpi].frames.last_mut() {
                    f.block = b;
                    f.stmt = 0;
                }
            }
        }
    }

    /// A statement that read the clock (`wtime()`) and is done costs the
    /// rank `timer` per read (`Machine::timer_seconds`), after its value
    /// was taken: of two reads around a piece of work, the second then
    /// sees the work and one read, as a benchmark's `MPI_Wtime` pair does.
    /// A statement that communicates is charged nothing for a read in its
    /// arguments (benchmarks read the clock in statements of their own).
    fn charge_clock_reads(&mut self, id: u32, stmt: &Stmt) {
        if matches!(stmt, Stmt::Comm { .. }) {
            return;
        }
        let reads: u32 = stmt
            .exprs()
            .into_iter()
            .map(super::watch::clock_reads)
            .sum();
        self.charge_reads(id, reads);
    }

    /// [`Self::charge_clock_reads`] for a branch condition or a returned
    /// value.
    fn charge_reads_of(&mut self, id: u32, e: &Expr) {
        let reads = super::watch::clock_reads(e);
        self.charge_reads(id, reads);
    }

    fn charge_reads(&mut self, id: u32, reads: u32) {
        if reads > 0 {
            let t = f64::from(reads) * self.timer;
            let lp = &mut self.lps[id as usize];
            lp.clock += t;
            lp.stats.compute += t;
        }
    }

    pub(super) fn finish(&mut self, id: u32) {
        if self.progress_in_calls {
            // MPI_Finalize progresses what is left.
            self.answer_deferred(id);
        }
        let lp = &mut self.lps[id as usize];
        lp.state = LpState::Finished;
        lp.frames = SmallVec::new();
        self.finished += 1;
    }

    pub(super) fn rt(&self, rank: u32, span: Span, message: String) -> Box<SimError> {
        Box::new(SimError::Runtime {
            rank,
            span,
            message,
        })
    }

    #[inline]
    pub(super) fn eval_in(&self, id: u32, e: &Expr, span: Span) -> RunResult<Value> {
        // Fast path: most communication arguments are folded constants.
        if let Expr::Const(c) = e {
            return Ok(Value::from(*c));
        }
        let lp = &self.lps[id as usize];
        let locals = lp.frames.last().map(|f| f.locals.as_slice()).unwrap_or(&[]);
        let cx = EvalCx {
            locals,
            params: &self.params,
            rank: id,
            size: self.cfg.ranks,
            clock: lp.clock,
            comms: &self.comms,
        };
        eval(e, &cx).map_err(|m| self.rt(id, span, m))
    }

    /// A branch condition by the fast evaluator (`None`: ask `eval_in`).
    #[inline]
    fn cond_fast(&self, id: u32, cond: &Expr) -> Option<bool> {
        let lp = &self.lps[id as usize];
        let cx = EvalCx {
            locals: lp.frames.last().map(|f| f.locals.as_slice())?,
            params: &self.params,
            rank: id,
            size: self.cfg.ranks,
            clock: lp.clock,
            comms: &self.comms,
        };
        crate::value::cond_fast(cond, &cx)
    }

    pub(super) fn set_local(&mut self, id: u32, slot: Slot, v: Value) {
        if let Some(f) = self.lps[id as usize].frames.last_mut() {
            f.locals[slot as usize] = v;
        }
    }

    /// The nominal seconds of rank `id`'s call of `kernel` with `vals`: its
    /// calibrated time if it has one, else its cost formula (0 while
    /// profiling a kernel without either).
    fn kernel_seconds(
        &mut self,
        id: u32,
        kernel: KernelId,
        vals: &[Value],
        span: Span,
    ) -> RunResult<f64> {
        let k = &self.program.kernels[kernel as usize];
        let nominal = match (&self.kernel_times[kernel as usize], &k.cost) {
            (Some(t), _) => {
                let first = match self.kernels_called.get_mut(id as usize) {
                    Some(bits) if kernel < 64 => {
                        let bit = 1u64 << kernel;
                        let first = *bits & bit == 0;
                        *bits |= bit;
                        first
                    }
                    _ => false,
                };
                let uniform = self.noise.get_mut(id as usize).map(NoiseStream::uniform);
                t.seconds(
                    vals,
                    KernelCall {
                        rank: id,
                        first,
                        uniform,
                    },
                )
            }
            .map_err(|m| {
                self.rt(
                    id,
                    span,
                    format!("calibrated time of kernel `{}`: {m}", k.name),
                )
            })?,
            (None, Some(cost)) => {
                let cx = EvalCx {
                    locals: vals,
                    params: &self.params,
                    rank: id,
                    size: self.cfg.ranks,
                    clock: self.lps[id as usize].clock,
                    comms: &self.comms,
                };
                let v = eval(cost, &cx)
                    .map_err(|m| self.rt(id, span, format!("cost of kernel `{}`: {m}", k.name)))?;
                v.as_f64().ok_or_else(|| {
                    self.rt(
                        id,
                        span,
                        format!(
                            "cost of kernel `{}` must be a number, got {}",
                            k.name,
                            v.type_name()
                        ),
                    )
                })?
            }
            (None, None) if self.obs.profiling() => 0.0,
            (None, None) => {
                return Err(Box::new(SimError::KernelWithoutCost {
                    kernel: k.name.clone(),
                    span,
                }));
            }
        };
        if !(nominal.is_finite() && nominal >= 0.0) {
            return Err(self.rt(
                id,
                span,
                format!(
                    "cost of kernel `{}` is {nominal} s; it must be finite and not negative",
                    k.name
                ),
            ));
        }
        Ok(nominal)
    }

    pub(super) fn exec_stmt(&mut self, id: u32, stmt: &'a Stmt) -> RunResult<Flow> {
        match stmt {
            Stmt::Assign { dst, value, span } => {
                let v = self.eval_in(id, value, *span)?;
                self.set_local(id, *dst, v);
                Ok(Flow::Continue)
            }
            Stmt::AssignIndex {
                dst,
                index,
                value,
                span,
            } => {
                let i = self.eval_in(id, index, *span)?;
                let v = self.eval_in(id, value, *span)?;
                let lpi = id as usize;
                // Invariant: a running LP has a frame; slots are in range (ir.rs).
                let Some(f) = self.lps[lpi].frames.last_mut() else {
                    return Ok(Flow::Continue);
                };
                match &mut f.locals[*dst as usize] {
                    Value::Array(a) => {
                        let k = crate::value::array_index(a.len(), &i).map_err(|m| {
                            SimError::Runtime {
                                rank: id,
                                span: *span,
                                message: m,
                            }
                        })?;
                        // Copy-on-write: other holders of this array keep theirs.
                        std::rc::Rc::make_mut(a)[k] = v;
                    }
                    other => {
                        let m = format!("cannot assign an element of {}", other.type_name());
                        return Err(self.rt(id, *span, m));
                    }
                }
                Ok(Flow::Continue)
            }
            Stmt::Compute { kernel, args, span } => {
                let k = &self.program.kernels[*kernel as usize];
                // Kernel arguments: on the stack for the usual few, else on the heap.
                let mut vals: SmallVec<[Value; 4]> = SmallVec::new();
                for a in args {
                    vals.push(self.eval_in(id, a, *span)?);
                }
                let vals: &[Value] = &vals;
                self.obs.kernel_call(id, *kernel as usize, vals);
                let nominal = self.kernel_seconds(id, *kernel, vals, *span)?;
                let t = self.machine.compute_seconds(id, nominal);
                let lp = &mut self.lps[id as usize];
                let start = lp.clock;
                lp.clock += t;
                lp.stats.compute += t;
                let end = lp.clock;
                self.obs.trace(|| TraceEvent::Interval {
                    rank: id,
                    start,
                    end,
                    what: format!("compute {}", k.name),
                    comm: false,
                    line: span.line,
                    wait: 0.0,
                });
                Ok(Flow::Continue)
            }
            Stmt::Copy { bytes, span } => {
                let n = self.eval_bytes(id, bytes, *span)?;
                let t = self.machine.copy_seconds(id, n);
                let lp = &mut self.lps[id as usize];
                lp.clock += t;
                lp.stats.compute += t;
                Ok(Flow::Continue)
            }
            // The program's own memory: `malloc` writes the whole buffer
            // (as a benchmark fills its buffers), so the pages the allocator
            // takes fresh from the kernel fault in, on the rank's CPU; both
            // change what the library's temporaries find later.
            Stmt::Heap { op, bytes, span } => {
                let n = self.eval_bytes(id, bytes, *span)?;
                match op {
                    crate::ir::HeapOp::Malloc => {
                        self.program_heap.entry(id).or_default().push(n);
                        let t = self.machine.heap_alloc(id, n, 0..n);
                        let lp = &mut self.lps[id as usize];
                        lp.clock += t;
                        lp.stats.compute += t;
                    }
                    crate::ir::HeapOp::Free => {
                        let live = self.program_heap.get_mut(&id);
                        let at = live.as_ref().and_then(|l| l.iter().rposition(|&b| b == n));
                        match (live, at) {
                            (Some(live), Some(at)) => {
                                live.remove(at);
                            }
                            _ => {
                                return Err(self.rt(
                                    id,
                                    *span,
                                    format!(
                                        "`free(bytes: {n})` frees nothing: this rank has no live `malloc` of {n} bytes"
                                    ),
                                ));
                            }
                        }
                        self.machine.heap_free(id, n);
                    }
                }
                Ok(Flow::Continue)
            }
            Stmt::Print { args, span, abort } => {
                if self.lps[id as usize].clock > self.now {
                    return Ok(Flow::Yield);
                }
                let mut text = String::new();
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        text.push(' ');
                    }
                    match a {
                        PrintArg::Str(s) => text.push_str(s),
                        PrintArg::Expr(e) => {
                            use std::fmt::Write;
                            let v = self.eval_in(id, e, *span)?;
                            let _ = write!(text, "{v}");
                        }
                    }
                }
                if *abort {
                    // The text is the error's message (MPI_Abort ends the job).
                    let text = if text.is_empty() {
                        "abort".to_owned()
                    } else {
                        format!("abort: {text}")
                    };
                    return Err(self.rt(id, *span, text));
                }
                let time = self.lps[id as usize].clock;
                (self.output)(PrintLine {
                    rank: id,
                    time,
                    text,
                });
                Ok(Flow::Continue)
            }
            Stmt::Call {
                func,
                args,
                dst,
                span,
            } => {
                let f = self.program.function(*func);
                let mut locals: Locals = smallvec![Value::Null; f.num_locals as usize];
                for (i, a) in args.iter().enumerate() {
                    locals[i] = self.eval_in(id, a, *span)?;
                }
                let lp = &mut self.lps[id as usize];
                if lp.frames.len() >= self.cfg.max_call_depth {
                    return Err(self.rt(
                        id,
                        *span,
                        format!(
                            "call depth exceeds {} (runaway recursion?)",
                            self.cfg.max_call_depth
                        ),
                    ));
                }
                lp.frames.push(Frame {
                    func: *func,
                    block: f.entry,
                    stmt: 0,
                    locals,
                    ret_dst: dst.unwrap_or(NO_SLOT),
                });
                Ok(Flow::Continue)
            }
            Stmt::Comm { op, dst, span } => {
                if self.lps[id as usize].clock > self.now {
                    return Ok(Flow::Yield);
                }
                self.comm_calls += 1;
                if self.progress_in_calls {
                    // Inside MPI now: the rendezvous it could not answer
                    // while computing get their clear-to-send.
                    self.answer_deferred(id);
                }
                self.in_call = id;
                let flow = self.exec_comm(id, op, *dst, *span);
                self.in_call = NO_RANK;
                flow
            }
        }
    }
}
