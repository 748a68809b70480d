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

/// The benchmark's `--max-bytes` range: its eager probe and other tables
/// need the 4 MiB ladder, and its sizes are C ints.
const MIN_MAX_BYTES: u64 = 4 << 20;
const MAX_MAX_BYTES: u64 = 1 << 30;

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
    /// `--max-bytes N` for every run (`None`: the benchmark's 4 MiB).
    max_bytes: Option<u64>,
    // Invariant: holds `binary`; removed when the benchmark is dropped.
    _dir: tempfile::TempDir,
}

impl Bench {
    /// Compiles the benchmark with `mpicc`; its tables of messages go up
    /// to `max_bytes` (`None`: 4 MiB, IMB's ladder; refused below that or
    /// above 1 GiB, which the benchmark does not measure).
    pub fn build(mpicc: &str, max_bytes: Option<u64>) -> Result<Bench, Error> {
        if let Some(n) = max_bytes
            && !(MIN_MAX_BYTES..=MAX_MAX_BYTES).contains(&n)
        {
            return Err(Error::Input(format!(
                "--max-bytes must be from 4 MiB to 1 GiB (the benchmark's other tables stop at 4 MiB, its sizes are ints), got {n} bytes"
            )));
        }
        let tmp = tempfile::Builder::new()
            .prefix("parsim-netbench-")
            .tempdir()
            .map_err(|e| Error::Tool(format!("cannot create a temporary directory: {e}")))?;
        let binary = compile(tmp.path(), mpicc)?;
        Ok(Bench {
            binary,
            max_bytes,
            _dir: tmp,
        })
    }

    /// Runs it with `launcher`, saves the output to `save` and reads it;
    /// `progress` hears what is being done.
    pub fn measure(
        &self,
        launcher: &str,
        save: &Path,
        progress: &mut dyn FnMut(&str),
    ) -> Result<Measured, Error> {
        measure(&self.command(launcher, ""), save, progress)
    }

    /// The command line that runs the benchmark with `launcher` and
    /// `extra` arguments.
    fn command(&self, launcher: &str, extra: &str) -> String {
        let mut line = format!("{launcher} {}", self.binary.display());
        if !extra.is_empty() {
            line.push(' ');
            line.push_str(extra);
        }
        if let Some(n) = self.max_bytes {
            line.push_str(&format!(" --max-bytes {n}"));
        }
        line
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
        let line = self.command(launcher, "--mbw-mr");
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

/// What a benchmark output `text` states in its `# parsim netbench: KEY
/// VALUE` line (the first such line), trimmed; `None` without one.
pub fn stated<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let prefix = format!("# parsim netbench: {key} ");
    text.lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .map(str::trim)
}

/// The seconds a read of the clock costs, as parsim's benchmark output
/// `text` states it (`# parsim netbench: timer 3.0e-08 s`); `None` for
/// other outputs.
pub fn stated_timer(text: &str) -> Option<f64> {
    stated_number::<f64>(text, "timer").filter(|t| t.is_finite() && *t >= 0.0)
}

/// The number that starts the value of [`stated`]'s line for `key`
/// (`# parsim netbench: memcpy 9123.4 MB/s` gives 9123.4).
fn stated_number<T: std::str::FromStr>(text: &str, key: &str) -> Option<T> {
    stated(text, key)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// A note when parsim's benchmark output `text` says that its largest
/// message stayed inside the caches: a rank's two buffers of the largest
/// size (`# parsim netbench: messages up to N bytes`) fit in rank 0's
/// last-level cache (`# parsim netbench: last-level cache M bytes`). Then
/// no table shows what a message costs whose buffers come from memory, and
/// larger messages are priced by extending the fit's last segment.
/// `None` for other outputs, or when the benchmark went past the cache.
pub fn cache_note(text: &str) -> Option<String> {
    let largest: u64 = stated_number(text, "messages up to")?;
    let cache: u64 = stated_number(text, "last-level cache")?;
    (largest.saturating_mul(2) <= cache).then(|| {
        let past = cache.saturating_mul(2).next_power_of_two().min(MAX_MAX_BYTES);
        format!(
            "the benchmark's messages went up to {}, and a rank's two buffers of that size fit in the {} last-level cache of rank 0's node: no measured message left the caches, and larger ones are priced by extending the last segment (measured_to); --max-bytes {} measures past it",
            models::units::format_size(largest),
            models::units::format_size(cache),
            models::units::format_size(past)
        )
    })
}

/// The host both ranks of parsim's benchmark ran on, when its output
/// `text` says they shared one (`# parsim netbench: rank 0 on H, rank 1 on
/// H`, from `MPI_Get_processor_name`); `None` for two hosts and for other
/// outputs.
pub fn one_host(text: &str) -> Option<&str> {
    let (first, second) = stated(text, "rank 0 on")?.split_once(", rank 1 on ")?;
    (first == second.trim()).then_some(first)
}

/// A note when the table a machine's network is fitted from was measured
/// with both ranks on one host (`--run` given a launcher that placed them
/// together, as `mpirun -np 2` on a workstation does) and the machine has
/// one rank per node: the channel measured is that node's shared memory,
/// and a one-level machine prices it as a network adapter, whose transfers
/// run beside the rank's own copies (its messages to itself). MPICH does
/// both on the rank's core, one after the other (VALIDATION.md 7.4: a
/// 1 MiB exchange and a 1 MiB message to self at once take 198 µs, the
/// one-level machine predicts 125 and the shared-memory one 198).
pub fn one_host_note(text: &str, ranks_per_node: u32) -> Option<String> {
    let host = one_host(text)?;
    (ranks_per_node == 1).then(|| {
        format!(
            "both ranks of the benchmark ran on {host}: the channel it measured is that node's shared memory, which a machine of one rank per node prices as a network adapter (a rank's copies, such as its messages to itself, then run beside its transfers instead of after them); --shm-run LAUNCHER --ranks-per-node 2 prices it as the ranks' cores, with a duplex per rank (VALIDATION.md 6.4, 7.4)"
        )
    })
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

fn measure(line: &str, save: &Path, progress: &mut dyn FnMut(&str)) -> Result<Measured, Error> {
    let stdout = run_and_save(line, save, progress)?;

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
    let memcpy = stated_number::<f64>(&stdout, "memcpy").filter(|b| b.is_finite() && *b > 0.0);
    Ok(Measured {
        table: save.to_owned(),
        memcpy,
        library: crate::coll_fit::library_line(&stdout).map(str::to_owned),
        shared_memory: crate::coll_fit::shared_memory_of(&stdout),
    })
}

#[cfg(test)]
mod tests {
    use super::{cache_note, one_host, one_host_note, stated_timer};

    #[test]
    fn two_ranks_on_one_host_are_noted_for_a_one_level_machine() {
        let same = "# parsim netbench: rank 0 on node7, rank 1 on node7\n";
        let two = "# parsim netbench: rank 0 on node7, rank 1 on node8\n";
        assert_eq!(one_host(same), Some("node7"));
        assert_eq!(one_host(two), None);
        assert_eq!(one_host("# parsim netbench: timer 3e-08 s\n"), None);
        let note = one_host_note(same, 1).expect("a note");
        assert!(
            note.starts_with("both ranks of the benchmark ran on node7:"),
            "{note}"
        );
        assert!(
            note.contains("--shm-run LAUNCHER --ranks-per-node 2 prices it"),
            "{note}"
        );
        assert_eq!(one_host_note(same, 2), None);
        assert_eq!(one_host_note(two, 1), None);
    }

    #[test]
    fn the_timer_is_read_from_its_line() {
        assert_eq!(
            stated_timer("# parsim netbench: timer 3.012000e-08 s\n"),
            Some(3.012e-8)
        );
        assert_eq!(stated_timer("# parsim netbench: timer -1 s\n"), None);
        assert_eq!(
            stated_timer("# parsim netbench: memcpy 1e10 bytes/s\n"),
            None
        );
    }

    #[test]
    fn a_ladder_that_ends_inside_the_cache_is_noted() {
        let out = |largest: u64| {
            format!(
                "# parsim netbench: messages up to {largest} bytes\n\
                 # parsim netbench: last-level cache 37486592 bytes\n"
            )
        };
        // 4 MiB: two buffers of 8 MiB in a 35.75 MiB cache.
        let note = cache_note(&out(4 << 20)).expect("a note");
        assert!(
            note.starts_with("the benchmark's messages went up to 4 MiB, and a rank's two buffers"),
            "{note}"
        );
        assert!(
            note.ends_with("--max-bytes 128 MiB measures past it"),
            "{note}"
        );
        // 32 MiB: two buffers of 64 MiB do not fit.
        assert_eq!(cache_note(&out(32 << 20)), None);
        // An output that does not say (a real IMB run, an older benchmark).
        assert_eq!(
            cache_note("# parsim netbench: messages up to 4194304 bytes\n"),
            None
        );
        assert_eq!(cache_note(""), None);
    }
}
