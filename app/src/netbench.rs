//! Measuring the network (`parsim calibrate net --run LAUNCHER`): build
//! parsim's network benchmark (`calibrate/src/netbench.c`: IMB PingPong and
//! PingPing, osu_bw's and osu_bibw's streams, a 2-rank Barrier,
//! Reduce_local, the library's version and memcpy; with `--mbw-mr`, k
//! pairs streaming at once as osu_mbw_mr does) with mpicc, run
//! it with the user's launcher, keep its raw output, and read what the fit
//! needs from it.

use std::path::{Path, PathBuf};
use std::process::Command;

use calibrate::{InputOptions, parse_table};

use crate::Error;

/// What one benchmark run gave.
pub struct Measured {
    /// The saved raw output (an IMB-format text file).
    pub table: PathBuf,
    /// Rank 0's memcpy bandwidth, bytes/s.
    pub memcpy: Option<f64>,
    /// The first line of `MPI_Get_library_version`.
    pub library: Option<String>,
    /// Whether that MPICH build has shared-memory collectives
    /// ([`crate::coll_fit::shared_memory_of`]); `None` for other libraries.
    pub shared_memory: Option<bool>,
}

/// The benchmark, built once for every launcher it runs with.
pub struct Bench {
    binary: PathBuf,
    // Invariant: holds `binary`; removed when the benchmark is dropped.
    _dir: tempfile::TempDir,
}

impl Bench {
    /// Compiles the benchmark with `mpicc`.
    pub fn build(mpicc: &str) -> Result<Bench, Error> {
        let tmp = tempfile::Builder::new()
            .prefix("parsim-netbench-")
            .tempdir()
            .map_err(|e| Error::Tool(format!("cannot create a temporary directory: {e}")))?;
        let binary = compile(tmp.path(), mpicc)?;
        Ok(Bench { binary, _dir: tmp })
    }

    /// Runs it with `launcher`, saves the output to `save` and reads it;
    /// `progress` hears what is being done.
    pub fn measure(
        &self,
        launcher: &str,
        save: &Path,
        progress: &mut dyn FnMut(&str),
    ) -> Result<Measured, Error> {
        measure(&self.binary, launcher, save, progress)
    }

    /// Runs its k-pairs stream (`--mbw-mr`: OMB's osu_mbw_mr loop, k = the
    /// launcher's processes / 2) with `launcher`, saves the output to `save`
    /// and returns the number of pairs it printed.
    pub fn measure_multi_pair(
        &self,
        launcher: &str,
        save: &Path,
        progress: &mut dyn FnMut(&str),
    ) -> Result<u32, Error> {
        let line = format!("{launcher} {} --mbw-mr", self.binary.display());
        let stdout = run_and_save(&line, save, progress)?;
        let pairs = crate::node_fit::pairs_in(&stdout).ok_or_else(|| {
            Error::Input(format!(
                "{}: no `# [ pairs: k ]` line in the output of `{line}`",
                save.display()
            ))
        })?;
        parse_table(
            &stdout,
            &InputOptions {
                format: Some(calibrate::Format::OsuBw),
                ..InputOptions::default()
            },
        )
        .map_err(|e| Error::Input(format!("{}: {e}", save.display())))?;
        Ok(pairs)
    }
}

fn compile(dir: &Path, mpicc: &str) -> Result<PathBuf, Error> {
    let source = dir.join("netbench.c");
    std::fs::write(&source, calibrate::NET_BENCHMARK_C).map_err(|e| Error::write(&source, e))?;
    let binary = dir.join("netbench");
    let out = Command::new(mpicc)
        .arg("-O2")
        .arg(&source)
        .arg("-o")
        .arg(&binary)
        .output()
        .map_err(|err| Error::NoMpiCompiler {
            compiler: mpicc.to_owned(),
            err,
        })?;
    if !out.status.success() {
        return Err(Error::Tool(format!(
            "`{mpicc} -O2 {} -o {}` failed:\n{}",
            source.display(),
            binary.display(),
            String::from_utf8_lossy(&out.stderr).trim_end()
        )));
    }
    Ok(binary)
}

/// Runs the command `line`, saves its output to `save` and returns it.
fn run_and_save(line: &str, save: &Path, progress: &mut dyn FnMut(&str)) -> Result<String, Error> {
    progress(&format!("running: {line}"));
    let stdout = crate::shell::run(line)?;
    crate::scenario::write_atomically(save, &stdout)?;
    progress(&format!(
        "saved the benchmark's output to {}",
        save.display()
    ));
    Ok(stdout)
}

fn measure(
    binary: &Path,
    launcher: &str,
    save: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<Measured, Error> {
    let line = format!("{launcher} {}", binary.display());
    let stdout = run_and_save(&line, save, progress)?;

    let table = |name: &str| {
        parse_table(
            &stdout,
            &InputOptions {
                format: Some(calibrate::Format::Imb),
                benchmark: Some(name.to_owned()),
                ..InputOptions::default()
            },
        )
        .map_err(|e| Error::Input(format!("{}: {name}: {e}", save.display())))
    };
    // Every table must be there: the fit reads them from the saved file.
    for name in ["PingPong", "PingPing", "Stream", "BiStream", "Reduce_local"] {
        table(name)?;
    }
    crate::coll_fit::barrier_seconds(&stdout, save)?;
    let memcpy = stdout
        .lines()
        .find_map(|l| l.strip_prefix("# parsim netbench: memcpy "))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|b| b.is_finite() && *b > 0.0);
    Ok(Measured {
        table: save.to_owned(),
        memcpy,
        library: crate::coll_fit::library_line(&stdout).map(str::to_owned),
        shared_memory: crate::coll_fit::shared_memory_of(&stdout),
    })
}
