//! A user's own communication model: a shared library behind a small,
//! versioned C ABI (`examples/plugin/parsim_model.h`), loaded with
//! `libloading`. The ParJava interpreter loads a user class implementing
//! `IHardwareDescriptor` the same way (Padaryan, "Estimating parallel
//! program run time with the ParJava interpreter", section 3).
//!
//! All `unsafe` code is in the `ffi` module, with its safety argument.
//! This module checks what the plugin returns: the trait's times are plain
//! `f64`s, so a result that breaks the [`Machine`] contract (NaN, infinite,
//! negative, before `ready`, a pair's arrival going back) or a failed
//! `parsim_model_transfer` is **clamped** to the nearest valid value, and
//! the first such violation is kept ([`PluginMachine::violation`]) and all
//! are counted ([`PluginRun::violations`]) so that the CLI can report
//! them after the run.
//!
//! Description and runs: [`PluginMachine`] is the description; it owns the
//! loaded library and the one model object `parsim_model_create` made from
//! the file's parameters. The ABI keeps a run's dynamic state (busy links,
//! NIC timelines) inside that model object and lets one thread at a time
//! use it (`parsim_model.h`, "A model object is used by one thread at a
//! time"), so two runs cannot share it. [`MachineDesc::start`] therefore
//! locks the model object for the whole run: a [`PluginRun`] holds the
//! lock, and runs of one description (and of the descriptions
//! [`PluginMachine::with_eager_limit`] derives from it) are serialised; a
//! second `start` waits until the first run is dropped. (Creating a model
//! object per run would let runs overlap, but `parsim_model_create` can
//! fail, and `start` cannot; a model that failed then would also not be the
//! model the file was checked with.)

mod ffi;

use std::cell::{Cell, OnceCell};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use sim_core::model::{Machine, MachineDesc, MessageKind, Transfer};
use thiserror::Error;

use crate::config;
use crate::error::MachineError;
use crate::units::format_time;

pub use ffi::ABI_VERSION as PLUGIN_ABI_VERSION;

/// What a plugin machine file (`model = "plugin"`) says.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginSpec {
    /// Short name (`name`).
    pub name: String,
    /// Free text (`description`), may be empty.
    pub description: String,
    /// The shared library (`plugin.library`), resolved against the machine
    /// file's directory when it was relative.
    pub library: PathBuf,
    /// `[plugin.params]` as text, in key order: strings as written,
    /// integers in decimal, floats as the shortest text that reads back to
    /// the same double, booleans as `true`/`false`.
    pub params: Vec<(String, String)>,
}

/// A result of the plugin that broke the [`Machine`] contract, and what was
/// used instead.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("model plugin `{library}`: {call} {problem}; parsim used {replacement} instead")]
pub struct PluginViolation {
    /// The library.
    pub library: String,
    /// The call with its arguments, e.g.
    /// `parsim_model_transfer(src 0, dst 1, 13 B, eager, ready 1 µs)`.
    pub call: String,
    /// What was wrong, e.g. `gave arrival NaN, not a finite time at or
    /// after ready`.
    pub problem: String,
    /// The value used instead.
    pub replacement: String,
}

/// Pairs whose last arrival is remembered to enforce per-pair
/// non-overtaking; past this many distinct pairs in one run, new pairs are
/// no longer checked (about 32 MiB of state at most).
const MAX_TRACKED_PAIRS: usize = 1 << 20;

/// A machine whose every answer comes from a model plugin: the
/// description (the module documentation says how runs share it).
#[derive(Debug)]
pub struct PluginMachine {
    spec: PluginSpec,
    /// The machine file, for messages.
    file: String,
    /// The model object, locked by the run that uses it; shared with the
    /// descriptions derived by [`PluginMachine::with_eager_limit`].
    plugin: Arc<Mutex<ffi::Plugin>>,
    /// An eager limit for every pair instead of the plugin's.
    eager_limit: Option<u64>,
}

/// One run on a [`PluginMachine`]: the locked model object and the checks
/// of its results.
#[derive(Debug)]
pub struct PluginRun<'a> {
    machine: &'a PluginMachine,
    plugin: MutexGuard<'a, ffi::Plugin>,
    /// Number of results replaced since the last `reset`.
    violations: Cell<u64>,
    /// The first of them.
    first_violation: OnceCell<PluginViolation>,
    /// Per `(src << 32 | dst)`: the last arrival returned.
    last_arrival: HashMap<u64, f64>,
}

impl PluginMachine {
    /// Loads the plugin a spec names and creates its model; `file` is the
    /// machine file, for error messages.
    pub fn new(spec: PluginSpec, file: &str) -> Result<Self, MachineError> {
        let library = spec.library.display().to_string();
        if !spec.library.exists() {
            return Err(MachineError::PluginLoad {
                file: file.into(),
                library,
                message: "no such file (a relative `plugin.library` is relative to the \
                          machine file's directory; build the plugin first)"
                    .into(),
            });
        }
        let plugin = ffi::Plugin::open(&spec.library, &spec.params).map_err(|err| match err {
            ffi::OpenError::Load(message) => MachineError::PluginLoad {
                file: file.into(),
                library,
                message,
            },
            ffi::OpenError::Abi(found) => MachineError::PluginAbi {
                file: file.into(),
                library,
                found,
                expected: PLUGIN_ABI_VERSION,
            },
            ffi::OpenError::Symbol(symbol) => MachineError::PluginSymbol {
                file: file.into(),
                library,
                symbol: symbol.into(),
                version: PLUGIN_ABI_VERSION,
            },
            ffi::OpenError::Create(message) => MachineError::PluginCreate {
                file: file.into(),
                library,
                message,
            },
        })?;
        Ok(Self {
            spec,
            file: file.into(),
            plugin: Arc::new(Mutex::new(plugin)),
            eager_limit: None,
        })
    }

    /// The same machine, with `limit` as the eager limit of every pair
    /// instead of the plugin's answer (0: every message uses the rendezvous
    /// protocol, the zero buffering of `parsim check`). It shares this
    /// description's model object, so their runs are serialised too.
    #[must_use]
    pub fn with_eager_limit(&self, limit: u64) -> Self {
        Self {
            spec: self.spec.clone(),
            file: self.file.clone(),
            plugin: Arc::clone(&self.plugin),
            eager_limit: Some(limit),
        }
    }

    /// Reads a plugin machine file and loads its plugin.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, MachineError> {
        let path = path.as_ref();
        let (file, text) = config::read_file(path)?;
        Self::from_toml_str(&text, &file, &base_dir(path))
    }

    /// Parses a plugin machine file's text (`file_name` for messages,
    /// `base_dir` for a relative `plugin.library`) and loads its plugin.
    pub fn from_toml_str(
        text: &str,
        file_name: &str,
        base_dir: &Path,
    ) -> Result<Self, MachineError> {
        let table = config::parse_table(text, file_name)?;
        let spec = config::plugin_from_table(&table, file_name, base_dir)?;
        Self::new(spec, file_name)
    }

    /// The machine's name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// The machine's free-text description (may be empty).
    pub fn description(&self) -> &str {
        &self.spec.description
    }

    /// What the machine file said.
    pub fn spec(&self) -> &PluginSpec {
        &self.spec
    }

    /// The machine file it was loaded from.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// A one-paragraph summary for the CLI.
    pub fn describe(&self) -> String {
        let mut text = format!("{}: ", self.spec.name);
        if !self.spec.description.is_empty() {
            text.push_str(self.spec.description.trim_end_matches('.'));
            text.push_str(". ");
        }
        text.push_str(&format!(
            "Model plugin {} (C ABI version {PLUGIN_ABI_VERSION})",
            self.spec.library.display()
        ));
        if self.spec.params.is_empty() {
            text.push_str(", no parameters");
        } else {
            let params: Vec<String> = self
                .spec
                .params
                .iter()
                .map(|(key, value)| format!("{key} = {value:?}"))
                .collect();
            text.push_str(&format!(", parameters {}", params.join(", ")));
        }
        text.push('.');
        text
    }
}

impl MachineDesc for PluginMachine {
    type Run<'a> = PluginRun<'a>;

    /// Locks the model object (waiting for a run of this description on
    /// another thread to end) and resets it for `ranks` ranks.
    fn start(&self, ranks: u32) -> PluginRun<'_> {
        // A run that panicked left the model object in some state of its
        // run; the reset below clears it, so the poison does not matter.
        let plugin = self.plugin.lock().unwrap_or_else(PoisonError::into_inner);
        let mut run = PluginRun {
            machine: self,
            plugin,
            violations: Cell::new(0),
            first_violation: OnceCell::new(),
            last_arrival: HashMap::new(),
        };
        run.reset(ranks);
        run
    }
}

impl<'a> PluginRun<'a> {
    /// The machine this run is on.
    pub fn machine(&self) -> &'a PluginMachine {
        self.machine
    }

    /// The first result since the last `reset` that broke the
    /// [`Machine`] contract and was replaced, if any.
    pub fn violation(&self) -> Option<&PluginViolation> {
        self.first_violation.get()
    }

    /// How many results since the last `reset` were replaced.
    pub fn violations(&self) -> u64 {
        self.violations.get()
    }

    fn record(&self, call: impl FnOnce() -> String, problem: String, replacement: f64) {
        self.violations.set(self.violations.get().saturating_add(1));
        // Only the first is kept; `set` refuses the others.
        let _ = self.first_violation.set(PluginViolation {
            library: self.machine.spec.library.display().to_string(),
            call: call(),
            problem,
            replacement: format_time(replacement),
        });
    }

    /// A duration the plugin returned: finite and `>= 0`, else 0.
    fn duration(&self, value: f64, what: &str, call: impl FnOnce() -> String) -> f64 {
        match check_duration(value) {
            Ok(value) => value,
            Err(replacement) => {
                self.record(
                    call,
                    format!("gave {what} {value}, not a finite, non-negative duration"),
                    replacement,
                );
                replacement
            }
        }
    }

    /// A point in time the plugin returned: finite and `>= ready`, else
    /// `ready`.
    fn time(&self, value: f64, ready: f64, what: &str, call: &dyn Fn() -> String) -> f64 {
        match check_time(value, ready) {
            Ok(value) => value,
            Err(replacement) => {
                self.record(
                    call,
                    format!("gave {what} {value}, not a finite time at or after ready"),
                    replacement,
                );
                replacement
            }
        }
    }
}

/// The directory a machine file's relative paths are relative to.
pub(crate) fn base_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// `Ok(value)` for a finite, non-negative duration, else `Err(0)`.
fn check_duration(value: f64) -> Result<f64, f64> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(0.0)
    }
}

/// `Ok(value)` for a finite time at or after `ready`, else `Err(ready)`.
fn check_time(value: f64, ready: f64) -> Result<f64, f64> {
    if value.is_finite() && value >= ready {
        Ok(value)
    } else {
        Err(ready)
    }
}

/// The `kind` argument of `parsim_model_transfer` (`enum
/// parsim_message_kind`).
fn kind_code(kind: MessageKind) -> u32 {
    match kind {
        MessageKind::Eager => 0,
        MessageKind::RendezvousRts => 1,
        MessageKind::RendezvousCts => 2,
        MessageKind::RendezvousData => 3,
    }
}

fn kind_name(kind: MessageKind) -> &'static str {
    match kind {
        MessageKind::Eager => "eager",
        MessageKind::RendezvousRts => "rendezvous RTS",
        MessageKind::RendezvousCts => "rendezvous CTS",
        MessageKind::RendezvousData => "rendezvous data",
    }
}

impl Machine for PluginRun<'_> {
    fn compute_seconds(&self, rank: u32, nominal: f64) -> f64 {
        let value = self.plugin.compute_seconds(rank, nominal);
        self.duration(value, "a time", || {
            format!("parsim_model_compute_seconds(rank {rank}, nominal {nominal} s)")
        })
    }

    fn copy_seconds(&self, rank: u32, bytes: u64) -> f64 {
        let value = self.plugin.copy_seconds(rank, bytes);
        self.duration(value, "a time", || {
            format!("parsim_model_copy_seconds(rank {rank}, {bytes} B)")
        })
    }

    fn eager_limit(&self, src: u32, dst: u32) -> u64 {
        match self.machine.eager_limit {
            Some(limit) => limit,
            None => self.plugin.eager_limit(src, dst),
        }
    }

    fn control_bytes(&self, src: u32, dst: u32) -> u64 {
        self.plugin.control_bytes(src, dst)
    }

    fn send_overhead(&self, src: u32, dst: u32, bytes: u64) -> f64 {
        let value = self.plugin.send_overhead(src, dst, bytes);
        self.duration(value, "an overhead", || {
            format!("parsim_model_send_overhead(src {src}, dst {dst}, {bytes} B)")
        })
    }

    fn recv_overhead(&self, src: u32, dst: u32, bytes: u64) -> f64 {
        let value = self.plugin.recv_overhead(src, dst, bytes);
        self.duration(value, "an overhead", || {
            format!("parsim_model_recv_overhead(src {src}, dst {dst}, {bytes} B)")
        })
    }

    /// The plugin's answer, checked: both times finite and `>= ready`
    /// (else `ready`), and the arrival not before the pair's previous one
    /// (else that one), so that the engine's invariants hold whatever the
    /// plugin does. A nonzero return counts as a violation too, with
    /// `ready` for both times.
    fn transfer(
        &mut self,
        src: u32,
        dst: u32,
        bytes: u64,
        kind: MessageKind,
        ready: f64,
    ) -> Transfer {
        let (code, cpu_free, arrival) =
            self.plugin
                .transfer(src, dst, bytes, kind_code(kind), ready);
        let call = || {
            format!(
                "parsim_model_transfer(src {src}, dst {dst}, {bytes} B, {}, ready {})",
                kind_name(kind),
                format_time(ready)
            )
        };
        let (cpu_free, mut arrival) = if code != 0 {
            self.record(call, format!("returned error code {code}"), ready);
            (ready, ready)
        } else {
            (
                self.time(cpu_free, ready, "cpu_free", &call),
                self.time(arrival, ready, "arrival", &call),
            )
        };
        let pair = (u64::from(src) << 32) | u64::from(dst);
        let previous = self.last_arrival.get(&pair).copied();
        if let Some(previous) = previous.filter(|&previous| arrival < previous) {
            self.record(
                call,
                format!(
                    "gave arrival {}, before the same pair's previous arrival (messages of a \
                     pair must not overtake)",
                    format_time(arrival)
                ),
                previous,
            );
            arrival = previous;
        }
        if previous.is_some() || self.last_arrival.len() < MAX_TRACKED_PAIRS {
            self.last_arrival.insert(pair, arrival);
        }
        Transfer { cpu_free, arrival }
    }

    /// Resets the plugin's model and the checks (violations, pairs).
    fn reset(&mut self, ranks: u32) {
        self.plugin.reset(ranks);
        self.violations.set(0);
        self.first_violation = OnceCell::new();
        self.last_arrival.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::{check_duration, check_time};

    #[test]
    fn durations() {
        assert_eq!(check_duration(0.0), Ok(0.0));
        assert_eq!(check_duration(2.5), Ok(2.5));
        assert_eq!(check_duration(-1e-9), Err(0.0));
        assert_eq!(check_duration(f64::NAN), Err(0.0));
        assert_eq!(check_duration(f64::INFINITY), Err(0.0));
    }

    #[test]
    fn times() {
        assert_eq!(check_time(1.0, 1.0), Ok(1.0));
        assert_eq!(check_time(2.0, 1.0), Ok(2.0));
        assert_eq!(check_time(0.5, 1.0), Err(1.0));
        assert_eq!(check_time(f64::NAN, 1.0), Err(1.0));
        assert_eq!(check_time(f64::INFINITY, 1.0), Err(1.0));
        assert_eq!(check_time(-1.0, 0.0), Err(0.0));
    }
}
