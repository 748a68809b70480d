//! One place that turns a command's inputs into a run: the program (read,
//! compiled, its `param`s overridden), the machine (a file or the built-in
//! one, with a ranks-per-node override), calibrated kernel times and the
//! runaway limits, into a [`SimConfig`]. Every command loads through here,
//! so none of them can forget a limit or load a program another way.

use std::path::Path;
use std::sync::Arc;

use calibrate::blocks::file::{BlocksFile, CalibratedKernel, Extrapolation};
use models::AnyMachine;
use sim_core::engine::SimConfig;
use sim_core::ir::Program;
use sim_core::kernels::KernelTime;

use crate::Error;

/// The limits that stop a runaway program. The defaults are the engine's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Events plus communication calls (zero-byte collectives make no
    /// events).
    pub max_events: u64,
    /// Model time, seconds.
    pub max_sim_time: f64,
    /// Basic blocks a rank may run in a row without its clock advancing and
    /// without communicating.
    pub max_zero_time_blocks: u64,
}

impl Default for Limits {
    fn default() -> Self {
        let d = SimConfig::default();
        Limits {
            max_events: d.max_events,
            max_sim_time: d.max_sim_time,
            max_zero_time_blocks: d.max_zero_time_blocks,
        }
    }
}

impl Limits {
    /// `cfg` with these limits.
    pub fn apply(self, cfg: SimConfig) -> SimConfig {
        SimConfig {
            max_events: self.max_events,
            max_sim_time: self.max_sim_time,
            max_zero_time_blocks: self.max_zero_time_blocks,
            ..cfg
        }
    }

    /// The engine's default configuration for `ranks` ranks with these
    /// limits: the start of every run's configuration.
    pub fn config(self, ranks: u32) -> SimConfig {
        self.apply(SimConfig {
            ranks,
            ..SimConfig::default()
        })
    }
}

/// A program's source text and the name diagnostics use for it.
#[derive(Debug, Clone)]
pub struct Source {
    /// The path as the user gave it (`file.display()`).
    pub name: String,
    pub text: String,
}

impl Source {
    /// Reads `file`.
    pub fn read(file: &Path) -> Result<Source, Error> {
        let text = std::fs::read_to_string(file).map_err(|e| Error::read(file, e))?;
        Ok(Source {
            name: file.display().to_string(),
            text,
        })
    }

    /// Parses and lowers; the error holds the rendered diagnostics.
    pub fn compile(&self) -> Result<Program, Error> {
        compile(&self.name, &self.text)
    }
}

/// Parses and lowers the program `text` named `name`; the error holds the
/// rendered diagnostics.
pub fn compile(name: &str, text: &str) -> Result<Program, Error> {
    frontend::compile(name, text).map_err(|d| Error::Compile(d.render(name, text)))
}

/// `NAME=VALUE` words (`--param`) as pairs; the error names the bad word.
pub fn parse_overrides(params: &[String]) -> Result<Vec<(String, String)>, Error> {
    params
        .iter()
        .map(|p| match p.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_owned(), v.trim().to_owned())),
            _ => Err(Error::ParamSyntax(format!("expects NAME=VALUE, got `{p}`"))),
        })
        .collect()
}

/// Overrides `program`'s params with `NAME=VALUE` words; returns the pairs.
pub fn apply_overrides(
    program: &mut Program,
    params: &[String],
) -> Result<Vec<(String, String)>, Error> {
    let overrides = parse_overrides(params)?;
    frontend::apply_param_overrides(program, &overrides)
        .map_err(|e| Error::Input(e.to_string()))?;
    Ok(overrides)
}

/// Sets of `NAME=VALUE` words, each given as one comma-separated string
/// ("n=256,iters=100"); one empty set when none is given.
pub fn param_sets(sets: &[String]) -> Vec<Vec<String>> {
    if sets.is_empty() {
        return vec![Vec::new()];
    }
    sets.iter()
        .map(|s| {
            s.split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

/// The machine of `file` (the built-in one without), with `ranks_per_node`
/// ranks on each node when given. A bad file is [`Error::Input`] (the
/// message names the key); an impossible override
/// [`Error::RanksPerNode`].
pub fn load_machine(file: Option<&Path>, ranks_per_node: Option<u32>) -> Result<AnyMachine, Error> {
    let machine = match file {
        None => AnyMachine::builtin_default(),
        Some(path) => AnyMachine::load(path).map_err(|e| Error::Input(e.to_string()))?,
    };
    let origin = file.map_or_else(
        || "the built-in machine".to_owned(),
        |p| p.display().to_string(),
    );
    match ranks_per_node {
        None => Ok(machine),
        Some(p) => machine
            .with_ranks_per_node_in(p, &origin)
            .map_err(|reason| Error::RanksPerNode {
                ranks_per_node: p,
                reason,
            }),
    }
}

/// Reads, compiles and applies `param` overrides.
pub fn load_program(file: &Path, params: &[String]) -> Result<(Program, Source), Error> {
    let source = Source::read(file)?;
    let mut program = source.compile()?;
    apply_overrides(&mut program, params)?;
    Ok((program, source))
}

/// Calibrated kernel times (`calibrate blocks` output) for one run
/// configuration, and the same objects to ask afterwards how far they
/// extrapolated.
#[derive(Clone, Default)]
pub struct Blocks {
    /// For [`SimConfig::kernel_times`].
    pub times: Vec<(String, Arc<dyn KernelTime>)>,
    /// The kernels behind `times`.
    pub kernels: Vec<Arc<CalibratedKernel>>,
}

impl Blocks {
    /// The calibrated kernels of a blocks file for runs with
    /// `ranks_on_node` ranks sharing a node (it picks the times measured
    /// with that many copies at once).
    pub fn of_file(file: &BlocksFile, ranks_on_node: u32) -> Blocks {
        let kernels: Vec<_> = file
            .kernel_times(ranks_on_node)
            .into_iter()
            .map(Arc::new)
            .collect();
        let times = kernels
            .iter()
            .map(|k| {
                let t: Arc<dyn KernelTime> = k.clone();
                (k.name.clone(), t)
            })
            .collect();
        Blocks { times, kernels }
    }

    /// [`Blocks::of_file`] of the file at `path`.
    pub fn load(path: &Path, ranks_on_node: u32) -> Result<Blocks, calibrate::blocks::BlocksError> {
        Ok(Blocks::of_file(&BlocksFile::read(path)?, ranks_on_node))
    }

    /// Kernels whose calibrated time was extrapolated more than `factor`
    /// times beyond the measured range of work.
    pub fn extrapolations(&self, factor: f64) -> Vec<Extrapolation> {
        self.kernels
            .iter()
            .filter_map(|k| k.extrapolation(factor))
            .collect()
    }
}

/// The warning for a kernel time extrapolated beyond what `blocks` measured.
pub fn extrapolation_warning(e: &Extrapolation, blocks: &Path) -> String {
    let side = if e.work > e.measured.1 {
        "above the largest"
    } else {
        "below the smallest"
    };
    format!(
        "warning: kernel `{}` was called with work {:.4e} (product of its arguments), {:.1}x {side} measured in {} ({:.4e} .. {:.4e}); its time is extrapolated by the fit {}: calibrate with this run's parameters for a trustworthy prediction",
        e.kernel,
        e.work,
        e.factor,
        blocks.display(),
        e.measured.0,
        e.measured.1,
        e.formula
    )
}

/// The warnings (without `warning: `) for messages larger than the table their channel was
/// calibrated with (`measured_to`), one per channel set: a run's
/// `largest_message` against the machine's channels. Such a message's time
/// extends the channel's last segment, which nothing measured supports:
/// where the buffers leave the caches a copy slows (this machine's own
/// ping-pong of 8-128 MiB is 33-43% slower than a fit to 4 MiB extends to,
/// VALIDATION.md section 10), and a protocol may change. Machines without
/// `measured_to` (written by hand, or before `calibrate net` recorded it)
/// and plugins give none.
pub fn channel_extrapolations(
    machine: &AnyMachine,
    largest: &[u64; sim_core::model::CHANNEL_SETS],
) -> Vec<String> {
    let Some(m) = machine.as_loggp() else {
        return Vec::new();
    };
    m.channel_sets()
        .iter()
        .zip(largest)
        .filter_map(|(&(section, channel), &sent)| {
            let measured = channel?.measured_to?;
            (sent > measured).then(|| {
                format!(
                    "messages of up to {} went over [{section}], whose table was measured up to {} ({section}.measured_to): their time extends the last segment of the fit, which no measurement supports (a copy slows where its buffers leave the caches); calibrate with larger messages (`calibrate net --run ... --max-bytes SIZE`) for a trustworthy prediction",
                    models::units::format_size(sent),
                    models::units::format_size(measured),
                )
            })
        })
        .collect()
}

/// Writes a file whole or not at all: into a unique temporary name next to
/// it, then renamed over it.
pub fn write_atomically(path: &Path, text: &str) -> Result<(), Error> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map_or("out".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, text).map_err(|e| Error::write(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::write(path, e))
}

/// What a command asks to simulate, as given: the builder's input.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The skeleton program.
    pub file: &'a Path,
    /// `NAME=VALUE` overrides of its `param`s.
    pub params: &'a [String],
    /// The machine file (the built-in machine without one).
    pub machine: Option<&'a Path>,
    /// Ranks per node, overriding the machine's.
    pub ranks_per_node: Option<u32>,
    pub ranks: u32,
    /// A blocks file of calibrated kernel times.
    pub blocks: Option<&'a Path>,
    pub limits: Limits,
    /// Refuse 0 ranks ([`Error::NoRanks`]) once the machine is loaded;
    /// without it a run of 0 ranks is left to the engine to refuse.
    pub require_ranks: bool,
}

/// Everything one simulation of a program needs, loaded in one place for
/// every command (`run`, `report`, `check`; the others load the same way
/// through [`load_program`] and [`load_machine`]).
pub struct Scenario {
    pub source: Source,
    /// The program with its `param` overrides applied.
    pub program: Program,
    /// The overrides as `(name, value)` pairs.
    pub overrides: Vec<(String, String)>,
    /// The machine's description; each simulation starts a run of it.
    pub machine: AnyMachine,
    pub ranks: u32,
    /// Calibrated kernel times (none: the kernels' cost formulas), the
    /// level measured with as many copies at once as the run places ranks
    /// on a node.
    pub blocks: Blocks,
    pub limits: Limits,
}

impl Scenario {
    /// Loads a request: the source (an unreadable file is
    /// [`Error::Read`]), the program ([`Error::Compile`] holds the
    /// rendered diagnostics), the overrides, the machine, the rank count
    /// and the blocks file, in that order; the first problem is the error.
    pub fn load(r: &Request<'_>) -> Result<Scenario, Error> {
        let source = Source::read(r.file)?;
        let mut program = source.compile()?;
        let overrides = apply_overrides(&mut program, r.params)?;
        let machine = load_machine(r.machine, r.ranks_per_node)?;
        if r.require_ranks && r.ranks == 0 {
            return Err(Error::NoRanks);
        }
        let blocks = match r.blocks {
            None => Blocks::default(),
            Some(path) => Blocks::load(path, r.ranks.min(machine.ranks_per_node()))
                .map_err(|e| Error::Input(e.to_string()))?,
        };
        Ok(Scenario {
            source,
            program,
            overrides,
            machine,
            ranks: r.ranks,
            blocks,
            limits: r.limits,
        })
    }

    /// The run configuration: ranks, limits, kernel times; the caller adds
    /// what it observes (timeline, matrix, wildcards, noise seed).
    pub fn config(&self) -> SimConfig {
        SimConfig {
            kernel_times: self.blocks.times.clone(),
            ..self.limits.config(self.ranks)
        }
    }
}
