//! `parsim calibrate net`: fit a machine file from benchmark tables (the
//! `calibrate` crate), print the fit report and write the TOML.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use calibrate::{
    ChannelFit, ChannelOptions, EagerLimit, FitOptions, Format, InputOptions, MachineDescription,
    Overhead, Table,
};
use clap::Subcommand;
use models::units::{parse_bandwidth, parse_size, parse_time};

#[derive(clap::Args)]
pub struct CalibrateArgs {
    #[command(subcommand)]
    command: CalibrateCommand,
}

#[derive(Subcommand)]
enum CalibrateCommand {
    /// Fit the network (and shared-memory) parameters of a machine from
    /// ping-pong tables (IMB/PMB or OSU output, or CSV), or measure them
    /// with --run / --shm-run.
    Net(Box<NetArgs>),
    /// Time the native kernels of a skeleton on this machine (the ParJava
    /// block measurement) and write blocks.toml for `run --blocks`.
    Blocks(Box<crate::calibrate_blocks::BlocksArgs>),
}

#[derive(clap::Args, Clone)]
struct NetArgs {
    /// The inter-node table: IMB/PMB text output, osu_latency or osu_bw
    /// output, or CSV with a bytes column and a time column in µs.
    /// Without it, --run measures the network.
    #[arg(required_unless_present = "run")]
    input: Option<PathBuf>,
    /// Measure the network instead of reading a table: build parsim's
    /// ping-pong/ping-ping benchmark with --mpicc and run it with this
    /// launcher, placed on two nodes (e.g. "srun -N 2 -n 2", "mpirun -np 2
    /// -ppn 1 -hosts a,b"). The raw output is kept next to the machine file.
    /// The benchmark is built under $TMPDIR: for ranks on other nodes, point
    /// it at a shared filesystem.
    #[arg(long, value_name = "LAUNCHER", conflicts_with = "input")]
    run: Option<String>,
    /// Measure the shared-memory channel the same way: two ranks on one node
    /// (e.g. "mpirun -np 2").
    #[arg(long, value_name = "LAUNCHER", conflicts_with = "shm")]
    shm_run: Option<String>,
    /// The MPI compiler wrapper for --run and --shm-run.
    #[arg(long, default_value = "mpicc")]
    mpicc: String,
    /// Input format.
    #[arg(long, default_value = "auto", value_parser = ["auto", "imb", "osu-latency", "osu-bw", "csv"])]
    format: String,
    /// IMB: the benchmark to take.
    #[arg(long, default_value = "PingPong")]
    benchmark: String,
    /// IMB: the block of this many processes (default: the first).
    #[arg(long)]
    processes: Option<u32>,
    /// CSV: the message size column (default: found by name).
    #[arg(long)]
    bytes_col: Option<String>,
    /// CSV and IMB: the time column, in µs (default: found by name).
    #[arg(long)]
    time_col: Option<String>,
    /// CSV: keep only rows with COL = VALUE (repeatable).
    #[arg(long = "where", value_name = "COL=VALUE")]
    filters: Vec<String>,
    /// Write the machine file here (default: print it after the report).
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// The machine's name (default: the input file's stem).
    #[arg(long)]
    name: Option<String>,
    /// The machine's description.
    #[arg(long)]
    description: Option<String>,
    /// Ranks per node: 1 writes a "hardware" machine, more an "smp" one
    /// (which needs --shm).
    #[arg(long, default_value_t = 1)]
    ranks_per_node: u32,
    /// The network adapter's duplex: "half" when sending and receiving
    /// share one bus (32-bit PCI adapters), "full" otherwise (the default).
    #[arg(long, value_parser = ["full", "half"])]
    duplex: Option<String>,
    /// A `[collectives]` entry to write, KEY=VALUE (repeatable):
    /// `library=mpich`, `alltoall=pairwise`, ...
    #[arg(long = "collective", value_name = "KEY=VALUE")]
    collectives: Vec<String>,
    /// The intra-node table, fitted the same way into [shm].
    #[arg(long)]
    shm: Option<PathBuf>,
    /// The --shm table's format.
    #[arg(long, default_value = "auto", value_parser = ["auto", "imb", "osu-latency", "osu-bw", "csv"])]
    shm_format: String,
    /// The --shm table is a 2-process Alltoall (IMB/PMB Alltoall, 2 ranks of
    /// one node): its one-way time is taken as t − n/memcpy.
    #[arg(long)]
    shm_from_alltoall2: bool,
    /// CSV filter for the --shm table (repeatable).
    #[arg(long = "shm-where", value_name = "COL=VALUE")]
    shm_filters: Vec<String>,
    /// Network o_s = o_r (e.g. "1 us"); default: --overhead-fraction.
    #[arg(long)]
    overhead: Option<String>,
    /// Shared-memory o_s = o_r; default: --overhead-fraction.
    #[arg(long)]
    shm_overhead: Option<String>,
    /// o_s + o_r as a fraction of the smallest message's time, when not
    /// given (a ping-pong cannot separate overheads from latency).
    #[arg(long, default_value_t = calibrate::channel::DEFAULT_OVERHEAD_FRACTION)]
    overhead_fraction: f64,
    /// Network eager limit: a size ("64 KiB") or "detect".
    #[arg(long, default_value = "detect")]
    eager_limit: String,
    /// Shared-memory eager limit: a size or "detect".
    #[arg(long, default_value = "detect")]
    shm_eager_limit: String,
    /// Size of a rendezvous control message (RTS/CTS).
    #[arg(long, default_value = "64 B")]
    control_bytes: String,
    /// At most this many size segments per channel.
    #[arg(long, default_value_t = 8)]
    max_segments: usize,
    /// Accept the fewest segments whose worst point is within this relative
    /// error ("5%" or 0.05).
    #[arg(long, default_value = "5%")]
    tolerance: String,
    /// The latency for an osu_bw table (which cannot measure it).
    #[arg(long)]
    latency: Option<String>,
    /// node.memcpy, the copy bandwidth of one rank (default: measured by
    /// --run / --shm-run, else 1 GB/s).
    #[arg(long)]
    memcpy: Option<String>,
    /// node.cpu_rate.
    #[arg(long, default_value_t = 1.0)]
    cpu_rate: f64,
    /// A line for the file's header comment, e.g. where --memcpy comes from
    /// (repeatable).
    #[arg(long = "note", value_name = "TEXT")]
    notes: Vec<String>,
}

pub fn run(args: &CalibrateArgs) -> anyhow::Result<()> {
    match &args.command {
        CalibrateCommand::Net(net) => run_net(net),
        CalibrateCommand::Blocks(b) => crate::calibrate_blocks::run(b),
    }
}

fn format_of(name: &str) -> anyhow::Result<Option<Format>> {
    if name == "auto" {
        return Ok(None);
    }
    Ok(Some(name.parse()?))
}

fn filters(raw: &[String], flag: &str) -> anyhow::Result<Vec<(String, String)>> {
    raw.iter()
        .map(|f| match f.split_once('=') {
            Some((col, value)) if !col.trim().is_empty() => {
                Ok((col.trim().to_owned(), value.trim().to_owned()))
            }
            _ => bail!("{flag} expects COL=VALUE, got `{f}`"),
        })
        .collect()
}

fn time_flag(flag: &str, text: &str) -> anyhow::Result<f64> {
    let seconds = parse_time(text).map_err(|e| anyhow::anyhow!("{flag} `{text}`: {e}"))?;
    if seconds < 0.0 {
        bail!("{flag} `{text}`: must not be negative");
    }
    Ok(seconds)
}

fn size_flag(flag: &str, text: &str) -> anyhow::Result<u64> {
    let bytes = parse_size(text).map_err(|e| anyhow::anyhow!("{flag} `{text}`: {e}"))?;
    if !(bytes >= 0.0 && bytes.fract() == 0.0 && bytes < 9.2e18) {
        bail!("{flag} `{text}`: must be a whole number of bytes");
    }
    Ok(bytes as u64)
}

fn eager_flag(flag: &str, text: &str) -> anyhow::Result<EagerLimit> {
    if text.trim() == "detect" {
        Ok(EagerLimit::Detect)
    } else {
        Ok(EagerLimit::Fixed(size_flag(flag, text)?))
    }
}

/// A non-negative fraction written as a percentage ("5%") or a number
/// (0.05); `flag` names the option in errors.
pub(crate) fn fraction_flag(flag: &str, text: &str) -> anyhow::Result<f64> {
    let text = text.trim();
    let value = match text.strip_suffix('%') {
        Some(percent) => percent.trim().parse::<f64>().map(|p| p / 100.0),
        None => text.parse::<f64>(),
    }
    .map_err(|_| anyhow::anyhow!("{flag} `{text}`: expected a percentage such as 5%"))?;
    if !(value.is_finite() && value >= 0.0) {
        bail!("{flag} `{text}`: must be at least 0");
    }
    Ok(value)
}

fn read_table(path: &Path, options: &InputOptions) -> anyhow::Result<Table> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    calibrate::parse_table(&text, options).with_context(|| format!("{}", path.display()))
}

/// Where a measured table is kept: next to the machine file (or in the
/// current directory), `<stem>.<level>.netbench.txt`.
fn bench_path(args: &NetArgs, level: &str) -> PathBuf {
    let out = args
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from("machine.toml"));
    let stem = args.name.clone().unwrap_or_else(|| {
        out.file_stem()
            .map_or("machine".into(), |s| s.to_string_lossy().into_owned())
    });
    out.with_file_name(format!("{stem}.{level}.netbench.txt"))
}

fn channel_options(
    args: &NetArgs,
    overhead: Option<&str>,
    overhead_flag: &str,
    eager: &str,
    eager_flag_name: &str,
) -> anyhow::Result<ChannelOptions> {
    let overhead = match overhead {
        Some(text) => Overhead::Fixed(time_flag(overhead_flag, text)?),
        None => Overhead::Fraction(args.overhead_fraction),
    };
    Ok(ChannelOptions {
        overhead,
        eager_limit: eager_flag(eager_flag_name, eager)?,
        control_bytes: size_flag("--control-bytes", &args.control_bytes)?,
        fit: FitOptions {
            max_segments: args.max_segments,
            tolerance: fraction_flag("--tolerance", &args.tolerance)?,
            breaks: Vec::new(),
        },
        latency: args
            .latency
            .as_deref()
            .map(|t| time_flag("--latency", t))
            .transpose()?,
    })
}

fn run_net(args: &NetArgs) -> anyhow::Result<()> {
    // Measured tables are saved and then read like given ones.
    let mut args = args.clone();
    let mut measured_memcpy: Option<(f64, String)> = None;
    let mut duplex_note: Option<String> = None;
    let bench = if args.run.is_some() || args.shm_run.is_some() {
        Some(app::netbench::Bench::build(&args.mpicc)?)
    } else {
        None
    };
    if let (Some(launcher), Some(bench)) = (&args.run, &bench) {
        let m = bench.measure(launcher, &bench_path(&args, "network"), &mut |m| {
            eprintln!("{m}")
        })?;
        if args.duplex.is_none() {
            args.duplex = Some(m.duplex.to_owned());
        }
        duplex_note = Some(m.duplex_note.clone());
        measured_memcpy = m.memcpy.map(|b| (b, launcher.clone()));
        args.input = Some(m.table);
        args.format = "imb".into();
        args.benchmark = "PingPong".into();
    }
    if let (Some(launcher), Some(bench)) = (&args.shm_run, &bench) {
        let m = bench.measure(launcher, &bench_path(&args, "shm"), &mut |m| {
            eprintln!("{m}")
        })?;
        if measured_memcpy.is_none() {
            measured_memcpy = m.memcpy.map(|b| (b, launcher.clone()));
        }
        args.shm = Some(m.table);
        args.shm_format = "imb".into();
    }
    let args = &args;
    let input = args
        .input
        .clone()
        .context("give a table to fit, or --run LAUNCHER to measure one")?;
    let (memcpy, memcpy_origin) = match (&args.memcpy, &measured_memcpy) {
        (Some(text), _) => (
            parse_bandwidth(text).map_err(|e| anyhow::anyhow!("--memcpy `{text}`: {e}"))?,
            format!("memcpy {text} as given on the command line"),
        ),
        (None, Some((b, launcher))) => (
            *b,
            format!(
                "memcpy {:.4e} B/s measured by the benchmark (`{launcher}`)",
                b
            ),
        ),
        (None, None) => (1e9, "memcpy 1 GB/s by default (not measured)".to_owned()),
    };
    let input_options = InputOptions {
        format: format_of(&args.format)?,
        benchmark: Some(args.benchmark.clone()),
        processes: args.processes,
        bytes_col: args.bytes_col.clone(),
        time_col: args.time_col.clone(),
        filters: filters(&args.filters, "--where")?,
    };
    let table = read_table(&input, &input_options)?;
    let network_options = channel_options(
        args,
        args.overhead.as_deref(),
        "--overhead",
        &args.eager_limit,
        "--eager-limit",
    )?;
    let network = calibrate::calibrate_channel(&table, &network_options)
        .with_context(|| format!("{}: fit", input.display()))?;

    let mut shm_table = None;
    let shm: Option<ChannelFit> = match &args.shm {
        None => None,
        Some(path) => {
            let options = InputOptions {
                format: format_of(&args.shm_format)?,
                benchmark: Some(if args.shm_from_alltoall2 {
                    "Alltoall".into()
                } else {
                    args.benchmark.clone()
                }),
                processes: args.shm_from_alltoall2.then_some(2),
                bytes_col: args.bytes_col.clone(),
                time_col: args.time_col.clone(),
                filters: filters(&args.shm_filters, "--shm-where")?,
            };
            let mut t = read_table(path, &options)?;
            if args.shm_from_alltoall2 {
                t = calibrate::alltoall2_to_oneway(&t, memcpy)
                    .with_context(|| format!("{}", path.display()))?;
            }
            let options = channel_options(
                args,
                args.shm_overhead.as_deref(),
                "--shm-overhead",
                &args.shm_eager_limit,
                "--shm-eager-limit",
            )?;
            let fit = calibrate::calibrate_channel(&t, &options)
                .with_context(|| format!("{}: fit", path.display()))?;
            shm_table = Some(t);
            Some(fit)
        }
    };
    if args.shm.is_none() && args.shm_from_alltoall2 {
        bail!("--shm-from-alltoall2 needs --shm TABLE");
    }

    let mut report = String::new();
    let _ = writeln!(
        report,
        "network: {} ({}, {}, {} points)",
        input.display(),
        table.format,
        table.origin,
        table.points.len()
    );
    report.push_str(&calibrate::report::text("network", &network));
    if let (Some(fit), Some(t), Some(path)) = (&shm, &shm_table, &args.shm) {
        let _ = writeln!(
            report,
            "\nshm: {} ({}, {}, {} points)",
            path.display(),
            t.format,
            t.origin,
            t.points.len()
        );
        report.push_str(&calibrate::report::text("shm", fit));
    }
    print!("{report}");

    let command: Vec<String> = std::iter::once("parsim".to_owned())
        .chain(std::env::args().skip(1))
        .map(|w| app::shell::word(&w))
        .collect();
    let name = args.name.clone().unwrap_or_else(|| {
        input
            .file_stem()
            .map_or("calibrated".into(), |s| s.to_string_lossy().into_owned())
    });
    let mut header = vec![
        format!(
            "{name}: a machine fitted by `parsim calibrate net` on {}.",
            app::clock::today()
        ),
        "Reproduce (from the workspace root):".to_owned(),
        format!("  {}", command.join(" ")),
        format!(
            "Network table: {} ({}; {}; {} points).",
            input.display(),
            table.format,
            table.origin,
            table.points.len()
        ),
    ];
    if let (Some(t), Some(path)) = (&shm_table, &args.shm) {
        header.push(format!(
            "Shared-memory table: {} ({}; {}; {} points).",
            path.display(),
            t.format,
            t.origin,
            t.points.len()
        ));
    }
    if let Some(note) = &duplex_note {
        header.push(note.clone());
    }
    header.push(format!(
        "Node: cpu_rate {} as given on the command line (not fitted); {memcpy_origin}.",
        args.cpu_rate
    ));
    header.extend(args.notes.iter().cloned());
    let description = args.description.clone().unwrap_or_else(|| {
        format!(
            "fitted by parsim calibrate net from {}",
            input
                .file_name()
                .map_or(String::new(), |s| s.to_string_lossy().into_owned())
        )
    });
    let toml = calibrate::write_machine(&MachineDescription {
        name,
        description,
        ranks_per_node: args.ranks_per_node,
        cpu_rate: args.cpu_rate,
        memcpy,
        network: &network,
        shm: shm.as_ref(),
        header,
        network_duplex: args.duplex.clone(),
        collectives: args
            .collectives
            .iter()
            .map(|kv| match kv.split_once('=') {
                Some((k, v)) => Ok((k.trim().to_owned(), v.trim().to_owned())),
                None => Err(anyhow::anyhow!(
                    "--collective expects KEY=VALUE, got `{kv}`"
                )),
            })
            .collect::<anyhow::Result<Vec<_>>>()?,
    })?;
    // The models crate is the judge of the format; a file it refuses is
    // still written (it may predate a format feature), with a warning.
    if let Err(e) = models::LogGpMachine::from_toml_str(&toml, "<calibrated machine>") {
        eprintln!("warning: this parsim cannot load the machine file it wrote: {e}");
    }
    match &args.output {
        Some(path) => {
            std::fs::write(path, &toml)
                .with_context(|| format!("cannot write {}", path.display()))?;
            println!("\nwrote {}", path.display());
        }
        None => print!("\n{toml}"),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerances() {
        assert!((fraction_flag("--tolerance", "5%").expect("ok") - 0.05).abs() < 1e-15);
        assert!((fraction_flag("--tolerance", "0.1").expect("ok") - 0.1).abs() < 1e-15);
        assert!(fraction_flag("--tolerance", "-1%").is_err());
        assert!(fraction_flag("--tolerance", "x").is_err());
    }
}
