//! The application layer's errors.

use std::path::PathBuf;

/// What can go wrong loading inputs or writing outputs. Messages are
/// complete sentences fragments in lowercase; the binary prefixes `error: `.
///
/// Invariant: no variant has a `#[source]`: each message already contains
/// its cause, so a renderer that walks the source chain (anyhow's `{:#}`)
/// does not repeat it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read.
    #[error("cannot read {}: {err}", path.display())]
    Read { path: PathBuf, err: std::io::Error },
    /// A file could not be written.
    #[error("cannot write {}: {err}", path.display())]
    Write { path: PathBuf, err: std::io::Error },
    /// The program does not compile: the rendered diagnostics
    /// (file:line:col, the source line, a caret).
    #[error("{0}")]
    Compile(String),
    /// Bad input: a `param` override, a machine file, a blocks file, a
    /// rank count. The message names what is wrong in the input's terms.
    #[error("{0}")]
    Input(String),
    /// A `param` override that is not `NAME=VALUE` (the binary names its
    /// flag).
    #[error("{0}")]
    ParamSyntax(String),
    /// The ranks-per-node override is not possible on this machine (the
    /// binary names its flag).
    #[error("{ranks_per_node}: {reason}")]
    RanksPerNode { ranks_per_node: u32, reason: String },
    /// A run of no ranks (the binary names its flag).
    #[error("a run needs at least 1 rank")]
    NoRanks,
    /// A what-if setting of a machine key that cannot be applied (the
    /// binary names its flag).
    #[error("{0}")]
    Setting(String),
    /// An external tool (a compiler, an MPI launcher) is missing or failed;
    /// the message holds its command line and output.
    #[error("{0}")]
    Tool(String),
    /// A benchmark table that cannot be read: its path and why, in the
    /// table reader's terms (a front end names the options that settle
    /// it).
    #[error("{}: {err}", path.display())]
    Table {
        path: PathBuf,
        err: calibrate::InputError,
    },
    /// A channel of a benchmark table cannot be fitted (`channel`: which
    /// one, for the options that settle it).
    #[error("{}: fit: {err}", path.display())]
    Fit {
        path: PathBuf,
        channel: crate::netfit::FitChannel,
        err: calibrate::ChannelError,
    },
    /// An Alltoall table cannot be turned into one-way times.
    #[error("{}: {err}", path.display())]
    Alltoall {
        path: PathBuf,
        err: calibrate::channel::AlltoallError,
    },
    /// The fitted machine cannot be written.
    #[error("{0}")]
    MachineFile(calibrate::WriteError),
    /// A measured table's time column or benchmark cannot be chosen
    /// without being named (the binary names the option).
    #[error("{}", choice.library_text(message, columns.as_deref()))]
    Choose {
        /// What is missing or ambiguous.
        message: String,
        /// The table's columns, when the message lists them.
        columns: Option<String>,
        choice: Choice,
    },
    /// The MPI compiler wrapper cannot be run (the binary names the option
    /// that chooses another).
    #[error("cannot run `{compiler}` (install MPI): {err}")]
    NoMpiCompiler {
        compiler: String,
        err: std::io::Error,
    },
    /// A picture could not be rendered (PNG output needs a system font).
    #[error("{0}")]
    Picture(String),
}

impl Error {
    /// A read error of `path`.
    pub fn read(path: impl Into<PathBuf>, err: std::io::Error) -> Error {
        Error::Read {
            path: path.into(),
            err,
        }
    }

    /// A write error of `path`.
    pub fn write(path: impl Into<PathBuf>, err: std::io::Error) -> Error {
        Error::Write {
            path: path.into(),
            err,
        }
    }
}

/// What a user has to name to settle an [`Error::Choose`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// The measured time column.
    TimeColumn,
    /// The measured time column, or which simulated column to compare.
    TimeOrSimulatedColumn,
    /// One of several benchmarks in the file.
    Benchmark,
}

impl Choice {
    /// `message` with what to name, in the library's words.
    pub fn library_text(self, message: &str, columns: Option<&str>) -> String {
        let what = match self {
            Choice::TimeColumn => "name the time column",
            Choice::TimeOrSimulatedColumn => "name the time column, or the simulated column",
            Choice::Benchmark => "name the benchmark",
        };
        match columns {
            Some(c) => format!("{message} (columns: {c}; {what})"),
            None => format!("{message} ({what})"),
        }
    }
}
