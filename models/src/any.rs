//! One entry point for every kind of machine file: [`load_machine`] and
//! [`AnyMachine`], and its runs, [`AnyRun`].

use std::path::Path;

use sim_core::model::{Machine, MachineDesc, MessageKind, Transfer};

use crate::config;
use crate::error::MachineError;
use crate::machine::{LogGpMachine, LogGpRun};
use crate::plugin::{PluginMachine, PluginRun, PluginViolation, base_dir};

/// A machine of any kind a machine file can describe, chosen by its `model`
/// key: `"hardware"` or `"smp"` ([`LogGpMachine`]) or `"plugin"`
/// ([`PluginMachine`]). A description: parse it once, then
/// [`start`](MachineDesc::start) a run per simulation, from any thread.
#[derive(Debug)]
pub enum AnyMachine {
    /// The LogGP Hardware or SMP model.
    LogGp(LogGpMachine),
    /// A user's model plugin.
    Plugin(PluginMachine),
}

/// Reads a machine file of any kind (see [`AnyMachine`]).
pub fn load_machine(path: impl AsRef<Path>) -> Result<AnyMachine, MachineError> {
    AnyMachine::load(path)
}

impl AnyMachine {
    /// Reads a machine file of any kind; a plugin's relative
    /// `plugin.library` is relative to the file's directory.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, MachineError> {
        let path = path.as_ref();
        let (file, text) = config::read_file(path)?;
        Self::from_toml_str(&text, &file, &base_dir(path))
    }

    /// Parses a machine file's text of any kind; `file_name` is used in
    /// messages, `base_dir` for a plugin's relative `plugin.library`.
    pub fn from_toml_str(
        text: &str,
        file_name: &str,
        base_dir: &Path,
    ) -> Result<Self, MachineError> {
        let table = config::parse_table(text, file_name)?;
        if config::is_plugin(&table) {
            let spec = config::plugin_from_table(&table, file_name, base_dir)?;
            PluginMachine::new(spec, file_name).map(Self::Plugin)
        } else {
            config::from_table(&table, file_name)
                .map(|spec| Self::LogGp(LogGpMachine::from_spec(spec)))
        }
    }

    /// The built-in default machine ([`LogGpMachine::builtin_default`]).
    /// The same machine with `ranks_per_node` ranks on each node (LogGP
    /// machines only; a plugin places ranks itself).
    pub fn with_ranks_per_node(&self, ranks_per_node: u32) -> Result<Self, String> {
        self.with_ranks_per_node_in(ranks_per_node, crate::IN_MEMORY_FILE)
    }

    /// [`Self::with_ranks_per_node`] for the machine read from `origin`,
    /// which errors name.
    pub fn with_ranks_per_node_in(
        &self,
        ranks_per_node: u32,
        origin: &str,
    ) -> Result<Self, String> {
        match self {
            Self::LogGp(m) => m
                .with_ranks_per_node_in(ranks_per_node, origin)
                .map(Self::LogGp)
                .map_err(|e| e.to_string()),
            Self::Plugin(m) => Err(format!(
                "the plugin model {} places ranks itself: set ranks per node in its [plugin.params]",
                m.name()
            )),
        }
    }

    pub fn builtin_default() -> Self {
        Self::LogGp(LogGpMachine::builtin_default())
    }

    /// The machine's name.
    /// Ranks placed on one node (1 for a plugin model, which places ranks
    /// itself).
    pub fn ranks_per_node(&self) -> u32 {
        self.as_loggp().map_or(1, LogGpMachine::ranks_per_node)
    }

    pub fn name(&self) -> &str {
        match self {
            Self::LogGp(machine) => machine.name(),
            Self::Plugin(machine) => machine.name(),
        }
    }

    /// The machine's free-text description (may be empty).
    pub fn description(&self) -> &str {
        match self {
            Self::LogGp(machine) => machine.description(),
            Self::Plugin(machine) => machine.description(),
        }
    }

    /// What the machine file means, for `parsim machine` (a line per part for
    /// a LogGP machine, a paragraph for a plugin).
    pub fn describe(&self) -> String {
        match self {
            Self::LogGp(machine) => machine.describe(),
            Self::Plugin(machine) => machine.describe(),
        }
    }

    /// The LogGP machine, if it is one.
    pub fn as_loggp(&self) -> Option<&LogGpMachine> {
        match self {
            Self::LogGp(machine) => Some(machine),
            Self::Plugin(_) => None,
        }
    }

    /// The plugin machine, if it is one.
    pub fn as_plugin(&self) -> Option<&PluginMachine> {
        match self {
            Self::LogGp(_) => None,
            Self::Plugin(machine) => Some(machine),
        }
    }

    /// A run of `ranks` ranks ([`MachineDesc::start`], callable without
    /// the trait in scope).
    pub fn start(&self, ranks: u32) -> AnyRun<'_> {
        <Self as MachineDesc>::start(self, ranks)
    }

    /// The same machine with `limit` as the eager limit of every pair
    /// ([`LogGpMachine::with_eager_limit`],
    /// [`PluginMachine::with_eager_limit`]).
    #[must_use]
    pub fn with_eager_limit(&self, limit: u64) -> Self {
        match self {
            Self::LogGp(machine) => Self::LogGp(machine.with_eager_limit(limit)),
            Self::Plugin(machine) => Self::Plugin(machine.with_eager_limit(limit)),
        }
    }

    /// The same machine with zero buffering: every send waits for its
    /// receive (eager limit 0, so every message uses the rendezvous
    /// protocol). `parsim check` runs a program on it to find sends that
    /// complete only because the MPI library buffers them.
    #[must_use]
    pub fn zero_buffering(&self) -> Self {
        self.with_eager_limit(0)
    }
}

impl MachineDesc for AnyMachine {
    type Run<'a> = AnyRun<'a>;

    fn start(&self, ranks: u32) -> AnyRun<'_> {
        match self {
            Self::LogGp(machine) => AnyRun::LogGp(machine.start(ranks)),
            Self::Plugin(machine) => AnyRun::Plugin(machine.start(ranks)),
        }
    }
}

/// One run on an [`AnyMachine`].
#[derive(Debug)]
pub enum AnyRun<'a> {
    /// A run on a LogGP machine.
    LogGp(LogGpRun<'a>),
    /// A run on a model plugin (it holds the plugin's model object).
    Plugin(PluginRun<'a>),
}

impl AnyRun<'_> {
    /// The first result of a model plugin in this run that broke the
    /// [`Machine`] contract and was replaced (always `None` for LogGP). A
    /// CLI should report it after a run: the prediction is then not
    /// trustworthy.
    pub fn violation(&self) -> Option<&PluginViolation> {
        match self {
            Self::LogGp(_) => None,
            Self::Plugin(run) => run.violation(),
        }
    }

    /// How many results were replaced in this run (0 for LogGP).
    pub fn violations(&self) -> u64 {
        match self {
            Self::LogGp(_) => 0,
            Self::Plugin(run) => run.violations(),
        }
    }

    fn inner(&self) -> &dyn Machine {
        match self {
            Self::LogGp(run) => run,
            Self::Plugin(run) => run,
        }
    }

    fn inner_mut(&mut self) -> &mut dyn Machine {
        match self {
            Self::LogGp(run) => run,
            Self::Plugin(run) => run,
        }
    }
}

impl From<LogGpMachine> for AnyMachine {
    fn from(machine: LogGpMachine) -> Self {
        Self::LogGp(machine)
    }
}

impl From<PluginMachine> for AnyMachine {
    fn from(machine: PluginMachine) -> Self {
        Self::Plugin(machine)
    }
}

/// Every method forwards to the run inside, so that `&mut AnyRun` is a
/// `&mut dyn Machine` for the engine. (A method the trait adds later with a
/// default must be forwarded here too, or the inner run's override would be
/// skipped.)
impl Machine for AnyRun<'_> {
    fn compute_seconds(&self, rank: u32, nominal: f64) -> f64 {
        self.inner().compute_seconds(rank, nominal)
    }

    fn copy_seconds(&self, rank: u32, bytes: u64) -> f64 {
        self.inner().copy_seconds(rank, bytes)
    }

    fn library_copy_seconds(&self, rank: u32, bytes: u64) -> f64 {
        self.inner().library_copy_seconds(rank, bytes)
    }

    fn eager_limit(&self, src: u32, dst: u32) -> u64 {
        self.inner().eager_limit(src, dst)
    }

    fn control_bytes(&self, src: u32, dst: u32) -> u64 {
        self.inner().control_bytes(src, dst)
    }

    fn send_overhead(&self, src: u32, dst: u32, bytes: u64) -> f64 {
        self.inner().send_overhead(src, dst, bytes)
    }

    fn recv_overhead(&self, src: u32, dst: u32, bytes: u64) -> f64 {
        self.inner().recv_overhead(src, dst, bytes)
    }

    fn send_copy(&self, src: u32, dst: u32, bytes: u64) -> f64 {
        self.inner().send_copy(src, dst, bytes)
    }

    fn transfer(
        &mut self,
        src: u32,
        dst: u32,
        bytes: u64,
        kind: MessageKind,
        ready: f64,
    ) -> Transfer {
        self.inner_mut().transfer(src, dst, bytes, kind, ready)
    }

    fn transfer_written(
        &mut self,
        src: u32,
        dst: u32,
        bytes: u64,
        kind: MessageKind,
        ready: f64,
    ) -> Transfer {
        self.inner_mut()
            .transfer_written(src, dst, bytes, kind, ready)
    }

    fn reduce_seconds(&self, rank: u32, bytes: u64) -> f64 {
        self.inner().reduce_seconds(rank, bytes)
    }

    fn timer_seconds(&self, rank: u32) -> f64 {
        self.inner().timer_seconds(rank)
    }

    fn collectives(&self) -> sim_core::coll::CollConfig {
        self.inner().collectives()
    }

    fn progress_in_calls(&self) -> bool {
        self.inner().progress_in_calls()
    }

    fn flag_latency(&self, src: u32, dst: u32) -> f64 {
        self.inner().flag_latency(src, dst)
    }

    fn datatype_seconds(&self, rank: u32, blocks: u64) -> f64 {
        self.inner().datatype_seconds(rank, blocks)
    }

    fn pack_seconds(&self, rank: u32, blocks: u64) -> f64 {
        self.inner().pack_seconds(rank, blocks)
    }

    fn heap_alloc(&mut self, rank: u32, bytes: u64, touched: std::ops::Range<u64>) -> f64 {
        self.inner_mut().heap_alloc(rank, bytes, touched)
    }

    fn heap_free(&mut self, rank: u32, bytes: u64) {
        self.inner_mut().heap_free(rank, bytes);
    }

    fn node_of(&self, rank: u32) -> u32 {
        self.inner().node_of(rank)
    }

    fn channel_of(&self, src: u32, dst: u32) -> usize {
        self.inner().channel_of(src, dst)
    }

    fn extrapolated_above(&self) -> u64 {
        self.inner().extrapolated_above()
    }

    fn shift_time(&mut self, delta: f64) -> bool {
        self.inner_mut().shift_time(delta)
    }

    fn reset(&mut self, ranks: u32) {
        self.inner_mut().reset(ranks);
    }
}
