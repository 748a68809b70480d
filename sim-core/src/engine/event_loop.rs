//! Setting up a run and the event loop: events in order, each dispatched to
//! the LP it resumes or to the message protocol it advances (`p2p.rs`).

use super::*;

impl<'a> Engine<'a> {
    pub fn new(
        program: &'a Program,
        machine: &'a mut dyn Machine,
        cfg: SimConfig,
        output: &'a mut dyn FnMut(PrintLine),
    ) -> RunResult<Engine<'a>> {
        if cfg.ranks == 0 {
            return Err(Box::new(SimError::Config(
                "the number of ranks must be at least 1".to_owned(),
            )));
        }
        if i32::try_from(cfg.ranks).is_err() {
            return Err(Box::new(SimError::Config(format!(
                "{} ranks is more than this simulator supports (2^31 - 1)",
                cfg.ranks
            ))));
        }
        // The LP records first, and fallibly: a rank count whose records
        // alone cannot be allocated is an input error, not an abort.
        let mut lps: Vec<Lp> = Vec::new();
        if lps.try_reserve_exact(cfg.ranks as usize).is_err() {
            let gib = cfg.ranks as f64 * std::mem::size_of::<Lp>() as f64 / (1u64 << 30) as f64;
            return Err(Box::new(SimError::Config(format!(
                "cannot allocate the state of {} ranks ({gib:.1} GiB for their records alone, \
                 {} B per rank, before any message)",
                cfg.ranks,
                std::mem::size_of::<Lp>()
            ))));
        }
        let params = eval_params(program, cfg.ranks)?;
        let kernel_times: Vec<Option<Arc<dyn KernelTime>>> = program
            .kernels
            .iter()
            .map(|k| {
                cfg.kernel_times
                    .iter()
                    .find(|(name, _)| *name == k.name)
                    .map(|(_, t)| Arc::clone(t))
            })
            .collect();
        if !cfg.kernel_profile {
            check_kernel_costs(program, &kernel_times)?;
        }
        let obs = Observers::new(&cfg, program.kernels.len(), cfg.ranks);
        let calibrated = kernel_times.iter().any(Option::is_some);
        let kernels_called = if calibrated {
            vec![0; cfg.ranks as usize]
        } else {
            Vec::new()
        };
        let noise = match cfg.noise_seed {
            Some(seed) if calibrated => (0..cfg.ranks).map(|r| NoiseStream::new(seed, r)).collect(),
            _ => Vec::new(),
        };
        machine.reset(cfg.ranks);
        let main = program.function(program.main);
        lps.extend((0..cfg.ranks).map(|_| {
            Lp::new(Frame {
                func: program.main,
                block: main.entry,
                stmt: 0,
                locals: smallvec![Value::Null; main.num_locals as usize],
                ret_dst: NO_SLOT,
            })
        }));
        let world = cfg.ranks;
        let coll_cfg = machine.collectives();
        let progress_in_calls = machine.progress_in_calls();
        let timer = machine.timer_seconds(0);
        let record_above = machine.extrapolated_above();
        let ff = cfg
            .fast_forward
            .then(|| Box::new(fastforward::FastForward::new(program, cfg.ranks)));
        let observes = program
            .functions
            .iter()
            .map(|f| f.cfg.node_weights().map(block_observes).collect())
            .collect();
        Ok(Engine {
            program,
            observes,
            machine,
            cfg,
            params,
            kernel_times,
            kernels_called,
            program_heap: std::collections::HashMap::new(),
            noise,
            lps,
            queue: EventQueue::new(),
            ready_now: VecDeque::new(),
            free_waitsets: Vec::new(),
            scratch_order: Vec::new(),
            now: 0.0,
            msgs: Vec::new(),
            free_msgs: Vec::new(),
            reqs: Vec::new(),
            spans: SpanTable::default(),
            events: 0,
            comm_calls: 0,
            in_call: NO_RANK,
            progress_in_calls,
            timer,
            messages: 0,
            bytes: 0,
            largest: [0; crate::model::CHANNEL_SETS],
            record_above,
            output,
            comms: Comms::new(world),
            coll_cfg,
            instances: HashMap::new(),
            obs,
            finished: 0,
            ff,
            ff_shift_due: false,
        })
    }

    pub(super) fn push(&mut self, time: f64, kind: EventKind) {
        match kind {
            // An LP to resume at the current time skips the heap: any order of
            // events at one time is a valid simulation, and this one is
            // deterministic (FIFO after the current event).
            EventKind::Resume(lp) if time <= self.now => self.ready_now.push_back(lp),
            _ => {
                let (tag, x) = kind.encode();
                self.queue.push(time, tag, x);
            }
        }
    }

    /// The next event: LPs ready at the current time first, then the heap.
    #[inline]
    pub(super) fn next_event(&mut self) -> Option<(f64, EventKind)> {
        if let Some(lp) = self.ready_now.pop_front() {
            return Some((self.now, EventKind::Resume(lp)));
        }
        if self.ready_now.capacity() > READY_NOW_KEEP {
            // Drained after a burst (every rank at the start): its buffer
            // goes back to the system rather than staying resident.
            self.ready_now = VecDeque::new();
        }
        let (time, tag, x) = self.queue.pop()?;
        Some((time, EventKind::decode(tag, x)))
    }

    /// Runs to completion.
    pub fn run(self) -> RunResult<SimReport> {
        match self.run_or_abandon()? {
            Ok(report) => Ok(report),
            Err(reason) => Err(Box::new(SimError::Config(format!(
                "internal error: the fast-forward was abandoned ({reason})"
            )))),
        }
    }

    /// Runs to completion, or stops when a fast-forward (only with
    /// `SimConfig::fast_forward`) cannot be made, with the reason: then the
    /// run must be made again without it (`api::simulate` does).
    pub(super) fn run_or_abandon(mut self) -> RunResult<Result<SimReport, String>> {
        for r in 0..self.cfg.ranks {
            self.push(0.0, EventKind::Resume(r));
        }
        loop {
            if self.ff_shift_due {
                self.ff_shift_due = false;
                self.ff_shift();
            }
            let Some((time, ev_kind)) = self.next_event() else {
                match self.ff_release()? {
                    Ok(true) => continue,
                    Ok(false) => break,
                    Err(reason) => return Ok(Err(reason)),
                }
            };
            self.events += 1;
            self.obs.event(self.events, time, self.finished, &self.lps);
            self.now = time;
            if self.events.saturating_add(self.comm_calls) > self.cfg.max_events {
                return Err(self.runaway(Runaway::Events {
                    events: self.events,
                    calls: self.comm_calls,
                    limit: self.cfg.max_events,
                }));
            }
            if time > self.cfg.max_sim_time {
                return Err(self.runaway(Runaway::SimTime {
                    limit: self.cfg.max_sim_time,
                }));
            }
            match ev_kind {
                EventKind::Resume(lp) => {
                    let l = &mut self.lps[lp as usize];
                    match l.state {
                        LpState::Ready => self.run_lp(lp)?,
                        LpState::Blocked if l.wake_at == time => {
                            l.state = LpState::Ready;
                            l.wake_at = f64::INFINITY;
                            self.run_lp(lp)?;
                        }
                        // A superseded wake-up, or a finished LP.
                        _ => {}
                    }
                }
                EventKind::Arrival(m) => self.on_arrival(m)?,
                EventKind::Cts(m) => self.on_cts(m),
                EventKind::Data(m) => self.on_data(m),
            }
        }
        let finished = self
            .lps
            .iter()
            .filter(|lp| lp.state == LpState::Finished)
            .count();
        if finished < self.lps.len() {
            return Err(self.deadlock(finished as u32));
        }
        let leftovers = self.leftovers();
        // The LP records become the per-rank figures by value: the standard
        // library collects a `vec::IntoIter` into a `Vec` of smaller items
        // in its buffer, so the end of a run does not hold both arrays (for
        // ranks that stay idle, the 40 B of `RankStats` per rank were a
        // tenth of the peak). Every LP has finished here (else a deadlock or
        // a runaway was reported), at its clock.
        let ranks: Vec<RankStats> = std::mem::take(&mut self.lps)
            .into_iter()
            .map(|lp| lp.stats.finished_at(lp.clock))
            .collect();
        let predicted_seconds = ranks.iter().map(|r| r.finish).fold(0.0, f64::max);
        let recorded = self.obs.finish(self.program);
        let fast_forward = self.ff.map(|f| f.outcome());
        Ok(Ok(SimReport {
            fast_forward,
            comm_matrix: recorded.comm_matrix,
            kernel_profile: recorded.kernel_profile,
            call_profile: recorded.call_profile,
            trace: recorded.trace,
            trace_truncated: recorded.trace_truncated,
            predicted_seconds,
            ranks,
            messages: self.messages,
            bytes: self.bytes,
            largest_message: self.largest,
            events: self.events,
            leftovers,
            wildcards: recorded.wildcards,
        }))
    }
}

/// Every `compute` of a kernel without a cost (and without a calibrated
/// time) is an error before the simulation starts.
pub(super) fn check_kernel_costs(
    program: &Program,
    calibrated: &[Option<Arc<dyn KernelTime>>],
) -> RunResult<()> {
    for f in &program.functions {
        for b in f.cfg.node_weights() {
            for s in &b.stmts {
                if let Stmt::Compute { kernel, span, .. } = s {
                    let k = &program.kernels[*kernel as usize];
                    if k.cost.is_none()
                        && calibrated.get(*kernel as usize).is_none_or(Option::is_none)
                    {
                        return Err(Box::new(SimError::KernelWithoutCost {
                            kernel: k.name.clone(),
                            span: *span,
                        }));
                    }
                }
            }
        }
    }
    Ok(())
}

/// Params: evaluated once, in order; a default may use earlier params.
pub(super) fn eval_params(program: &Program, size: u32) -> RunResult<Vec<Value>> {
    let mut params = Vec::with_capacity(program.params.len());
    for p in &program.params {
        let cx = EvalCx {
            locals: &[],
            params: &params,
            rank: 0,
            size,
            clock: 0.0,
            comms: &crate::value::WorldOnly(size),
        };
        let v = eval(&p.default, &cx).map_err(|m| SimError::Runtime {
            rank: 0,
            span: p.span,
            message: format!("param `{}`: {m}", p.name),
        })?;
        params.push(v);
    }
    Ok(params)
}
