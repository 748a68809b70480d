//! `parsim calibrate net`: fit a machine file from benchmark tables (the
//! `calibrate` crate), print the fit report and write the TOML.

use std::path::PathBuf;

use anyhow::{Context, bail};
use calibrate::{ChannelOptions, EagerLimit, FitOptions, Format, InputOptions, Overhead};
use models::units::{parse_bandwidth, parse_size, parse_time};

// The doc comments below are `--help` text (clap), where `[network]`,
// `[shm]` and the like name machine-file sections, not Rust items.
#[expect(
    rustdoc::broken_intra_doc_links,
    reason = "clap help text names machine-file sections in brackets"
)]
#[derive(clap::Args, Clone)]
pub(crate) struct NetArgs {
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
    /// Measure the channel between two sockets of a node the same way: two
    /// ranks on one node, one per socket (e.g. "mpirun -np 2 --map-by
    /// socket --bind-to core").
    #[arg(long, value_name = "LAUNCHER", conflicts_with = "socket")]
    socket_run: Option<String>,
    /// The MPI compiler wrapper for --run, --shm-run and --socket-run.
    #[arg(long, default_value = "mpicc")]
    mpicc: String,
    /// The largest message the measured tables go to (--run, --shm-run,
    /// --socket-run and the multi-pair runs); default 4 MiB, IMB's ladder.
    /// Larger messages are priced by extending the fit's last segment, and a
    /// copy slows where its buffers leave the caches: measure past the
    /// last-level cache (the benchmark's output states it) to predict
    /// messages that large. At most 1 GiB.
    #[arg(long, value_name = "SIZE")]
    max_bytes: Option<String>,
    /// Input format.
    #[arg(long, default_value = "auto", value_parser = ["auto", "imb", "osu-latency", "osu-bw", "csv"])]
    format: String,
    /// IMB: the benchmark to take.
    #[arg(long, default_value = "PingPong")]
    benchmark: String,
    /// Which ping-pong of parsim's benchmark the channels are fitted from:
    /// `clean`, buffers written once at the start as IMB's and OSU's are
    /// (the benchmarks' own cost), or `written`, each message's data
    /// written by its sender just before it is sent, as a program sends
    /// what it computed (its PingPongWritten table). Needs the benchmark's
    /// output: --run, or a saved *.netbench.txt.
    #[arg(long, default_value = "clean", value_parser = ["clean", "written"])]
    buffers: String,
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
    /// share one bus (32-bit PCI adapters), "full", or the share of time the
    /// two directions overlap (0 to 1). Default: fitted from --pingping,
    /// else full.
    #[arg(long, value_parser = parse_duplex)]
    duplex: Option<models::Duplex>,
    /// The shared-memory channel's duplex per rank (how much a rank's
    /// copies of the messages it sends and receives inside its node
    /// overlap): "full", "half" or the share 0 to 1. Default: fitted with
    /// the crossings and streams of --shm-run (or of a saved --shm table of
    /// parsim's benchmark that has them), else full.
    #[arg(long, value_parser = parse_duplex)]
    shm_duplex: Option<models::Duplex>,
    /// A PingPing table of the same network (two ranks on two nodes sending
    /// to each other at once: IMB PingPing, or CSV bytes and µs): with the
    /// ping-pong, fits the adapter's per-message occupancy g, the duplex
    /// overlap and the overhead split. --run measures it.
    #[arg(long, value_name = "TABLE")]
    pingping: Option<PathBuf>,
    /// The --pingping table's format.
    #[arg(long, default_value = "auto", value_parser = ["auto", "imb", "csv"])]
    pingping_format: String,
    /// An osu_bw table of the same network (a stream of messages in one
    /// direction): fitted with the ping-pong as --pingping is. --run
    /// measures it.
    #[arg(long, value_name = "TABLE")]
    stream: Option<PathBuf>,
    /// An osu_bibw table of the same network (streams both ways at once):
    /// fitted with the ping-pong as --pingping is. --run measures it.
    #[arg(long, value_name = "TABLE")]
    bistream: Option<PathBuf>,
    /// The --stream and --bistream tables' format: OSU output, or IMB text
    /// with "Stream" and "BiStream" blocks (what --run saves).
    #[arg(long, default_value = "auto", value_parser = ["auto", "osu-bw", "imb"])]
    stream_format: String,
    /// An osu_mbw_mr table of k pairs streaming at once between two nodes
    /// (k ranks per node, OMB's pairing: rank i sends to rank i + k), as
    /// OMB prints it with its `# [ pairs: k ]` line (repeatable, one per
    /// pair count): fits the adapter's own message rate, [network]
    /// node_gap, shared by a node's ranks.
    #[arg(long = "multi-pair", value_name = "TABLE")]
    multi_pair: Vec<PathBuf>,
    /// An osu_mbw_mr table of k pairs inside one node (all 2k ranks on one
    /// node; repeatable): fits the node's memory throughput for
    /// shared-memory messages, [shm] node_bandwidth. Needs --shm.
    #[arg(long = "shm-multi-pair", value_name = "TABLE")]
    shm_multi_pair: Vec<PathBuf>,
    /// The ranks per node of the job that printed an IMB-MPI1 Uniband
    /// table given to --shm-multi-pair (default: --ranks-per-node): its
    /// blocks of at most this many processes ran inside one node (IMB
    /// runs a block on ranks 0..np-1; block placement assumed).
    #[arg(long = "imb-ppn", value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    imb_ppn: Option<u32>,
    /// Measure a --multi-pair table: run the benchmark's k-pairs stream
    /// (osu_mbw_mr's loop; k = the processes / 2, rank i sends to rank
    /// i + k) with this launcher, its 2k ranks placed k per node on two
    /// nodes (e.g. "mpirun -np 16 -ppn 8 -hosts a,b"). Repeatable, one per
    /// pair count; the output is kept next to the machine file.
    #[arg(long = "multi-pair-run", value_name = "LAUNCHER")]
    multi_pair_run: Vec<String>,
    /// Measure a --shm-multi-pair table the same way, all 2k ranks on one
    /// node (e.g. "mpirun -np 8"). Repeatable.
    #[arg(long = "shm-multi-pair-run", value_name = "LAUNCHER")]
    shm_multi_pair_run: Vec<String>,
    /// A 2-rank barrier of the same MPI (IMB-MPI1 Barrier with a block of
    /// 2 processes, or osu_barrier run on 2 ranks), placed like the
    /// ping-pong: fits [collectives] call_overhead, what a collective call
    /// costs beyond its messages, by simulating the barrier under the
    /// machine's library rules. --run measures it.
    #[arg(long, value_name = "TABLE", conflicts_with = "shm_barrier")]
    barrier: Option<PathBuf>,
    /// The same with both ranks on one node (needs --shm). --shm-run
    /// measures it, and it is then used instead of --run's.
    #[arg(long, value_name = "TABLE")]
    shm_barrier: Option<PathBuf>,
    /// Measured collective calls of 2 ranks placed like the ping-pong:
    /// parsim's benchmark output (its Call_KIND tables: each collective
    /// of 4 bytes timed alone as OMB times it), the output of an OMB
    /// collective latency test (osu_allreduce, ...) run on 2 ranks, whose
    /// smallest size is used, or an IMB-MPI1 (2017+) output, whose
    /// collective blocks of 2 processes are used. Fits each collective's own [collectives]
    /// call_overhead on top of the barrier's. Repeatable; --run measures
    /// them.
    #[arg(long, value_name = "TABLE", conflicts_with = "shm_calls")]
    calls: Vec<PathBuf>,
    /// The same with both ranks on one node (needs --shm). --shm-run
    /// measures them, and they are then used instead of --run's.
    #[arg(long = "shm-calls", value_name = "TABLE")]
    shm_calls: Vec<PathBuf>,
    /// parsim's benchmark output with its RendezvousSend and
    /// RendezvousRecv tables (one message of each rendezvous size after a
    /// barrier, each end timed), placed like the ping-pong: chooses
    /// [node] rendezvous_send, when a rendezvous send completes. --run
    /// measures them.
    #[arg(long, value_name = "TABLE", conflicts_with = "shm_rendezvous")]
    rendezvous: Option<PathBuf>,
    /// The same with both ranks on one node (needs --shm); --shm-run
    /// measures them, and they are then used instead of --run's.
    #[arg(long = "shm-rendezvous", value_name = "TABLE")]
    shm_rendezvous: Option<PathBuf>,
    /// A Reduce_local table (IMB-MPI1 Reduce_local: MPI_Reduce_local of
    /// floats): fits [node] reduce_overhead and reduce_op, the fixed cost
    /// and the rate of a reduction step. --run measures it.
    #[arg(long, value_name = "TABLE")]
    reduce_local: Option<PathBuf>,
    /// A Memcpy table (what --run saves: memcpy of 1 B to 4 MiB on one
    /// core, t per call, IMB's format): fits [[node.memcpy_segments]], a
    /// copy's cost by its size (the cache level its buffers fit in). --run
    /// measures it.
    #[arg(long = "memcpy-table", value_name = "TABLE")]
    memcpy_table: Option<PathBuf>,
    /// A FlagLatency table (what --run / --shm-run save when ranks 0 and 1
    /// share a node: a counter ping-ponged through an MPI-3 shared window,
    /// t = half the round trip): sets [node] flag_latency, the step of the
    /// shared-memory collectives (Intel MPI's SHM-based algorithms, MPICH
    /// built with ch4:ofi). Without it the machine assumes 0.1 us.
    #[arg(long, value_name = "TABLE")]
    flag_latency: Option<PathBuf>,
    /// parsim's TypeCreate and TypePack tables (what --run saves): sets
    /// [node] type_create, type_create_per_block, type_pack and
    /// type_pack_per_block, what a derived datatype costs (Bruck's
    /// alltoall builds one per step). Without them the machine assumes
    /// MPICH 4.0.2's on the development machine.
    #[arg(long, value_name = "TABLE")]
    datatype: Option<PathBuf>,
    /// parsim's PageFault table (what --run saves: fresh memory mapped,
    /// written whole and unmapped, per 4 KiB page): sets [node]
    /// page_fault, what a collective's temporary buffer costs each call
    /// when glibc's heap gives it back (MPICH's reduce and reduce_scatter).
    /// Without it temporaries cost nothing.
    #[arg(long, value_name = "TABLE")]
    page_fault: Option<PathBuf>,
    /// A `[collectives]` entry to write, KEY=VALUE (repeatable):
    /// `library=mpich-4`, `alltoall=pairwise`, ... Default: --run writes the
    /// library it measured (MPICH 3 and 4, Open MPI 3 to 5, Intel MPI 2019 and 2021), else none
    /// (MPICH 3's rules).
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
    /// A table of two ranks on two sockets of one node (osu_latency
    /// between sockets), fitted the same way as --shm into [socket]: the
    /// parameters of a message between two sockets of a node.
    #[arg(long, value_name = "TABLE")]
    socket: Option<PathBuf>,
    /// The --socket table's format.
    #[arg(long, default_value = "auto", value_parser = ["auto", "imb", "osu-latency", "osu-bw", "csv"])]
    socket_format: String,
    /// The --socket table is a 2-process Alltoall (two ranks on two
    /// sockets of one node): its one-way time is taken as t − n/memcpy.
    #[arg(long)]
    socket_from_alltoall2: bool,
    /// CSV filter for the --socket table (repeatable).
    #[arg(long = "socket-where", value_name = "COL=VALUE")]
    socket_filters: Vec<String>,
    /// node.sockets, sockets per node. Default: 2 with --socket (or
    /// --socket-run), else 1.
    #[arg(long)]
    sockets: Option<u32>,
    /// Network o_s = o_r (e.g. "1 us"); default: --overhead-fraction.
    #[arg(long)]
    overhead: Option<String>,
    /// Shared-memory o_s = o_r; default: --overhead-fraction.
    #[arg(long)]
    shm_overhead: Option<String>,
    /// Between-sockets o_s = o_r; default: --overhead-fraction.
    #[arg(long)]
    socket_overhead: Option<String>,
    /// o_s + o_r as a fraction of the smallest message's time, when not
    /// given (a ping-pong cannot separate overheads from latency). Default:
    /// fitted with --pingping, else 0.4.
    #[arg(long)]
    overhead_fraction: Option<f64>,
    /// Network eager limit: a size ("64 KiB") or "detect".
    #[arg(long, default_value = "detect")]
    eager_limit: String,
    /// Shared-memory eager limit: a size or "detect".
    #[arg(long, default_value = "detect")]
    shm_eager_limit: String,
    /// Between-sockets eager limit: a size or "detect".
    #[arg(long, default_value = "detect")]
    socket_eager_limit: String,
    /// Size of a rendezvous control message (RTS/CTS).
    #[arg(long, default_value = "64 B")]
    control_bytes: String,
    /// At most this many size segments per channel.
    #[arg(long, default_value_t = 8)]
    max_segments: usize,
    /// The relative error the fit report compares each channel's worst
    /// point with ("5%" or 0.05); the segments themselves are chosen by BIC.
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
    #[command(flatten)]
    progress: crate::ProgressArgs,
}

fn parse_duplex(text: &str) -> Result<models::Duplex, String> {
    models::Duplex::parse(text)
        .ok_or_else(|| format!("expected full, half, or a number from 0 to 1, got `{text}`"))
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
        None => Overhead::Fraction(
            args.overhead_fraction
                .unwrap_or(calibrate::channel::DEFAULT_OVERHEAD_FRACTION),
        ),
    };
    Ok(ChannelOptions {
        overhead,
        eager_limit: eager_flag(eager_flag_name, eager)?,
        control_bytes: size_flag("--control-bytes", &args.control_bytes)?,
        fit: FitOptions {
            max_segments: args.max_segments,
            tolerance: crate::fraction_flag("--tolerance", &args.tolerance)?,
            breaks: Vec::new(),
        },
        latency: args
            .latency
            .as_deref()
            .map(|t| time_flag("--latency", t))
            .transpose()?,
    })
}

/// What `measure` gives: the arguments with the saved tables as inputs,
/// the measured memcpy bandwidth with its launcher, and the library's
/// version line.
struct Measured {
    args: NetArgs,
    memcpy: Option<(f64, String)>,
    library: Option<String>,
    /// Whether the measured MPICH build has shared-memory collectives.
    shared_memory: Option<bool>,
}

/// `--run`, `--shm-run`, `--socket-run` and the `--*multi-pair-run`s: runs
/// the benchmark and returns
/// the arguments with the saved tables as inputs (PingPong, PingPing and the
/// streams for the pattern fit, Barrier and Reduce_local for the collective
/// costs), the measured memcpy bandwidth and the library.
fn measure(args: &NetArgs) -> anyhow::Result<Measured> {
    if !args.shm_multi_pair_run.is_empty() && args.shm.is_none() && args.shm_run.is_none() {
        return Err(crate::common::UsageError(
            "--shm-multi-pair-run needs the shared-memory channel: give --shm TABLE (or --shm-run)"
                .into(),
        )
        .into());
    }
    let mut args = args.clone();
    let mut measured_memcpy: Option<(f64, String)> = None;
    let mut library = None;
    let mut shared_memory = None;
    // A barrier table given by the user wins over the measured ones; of
    // those, the one-node run's (--shm-run) wins over --run's.
    let given_barrier = args.barrier.is_some() || args.shm_barrier.is_some();
    let given_calls = !args.calls.is_empty() || !args.shm_calls.is_empty();
    let given_rendezvous = args.rendezvous.is_some() || args.shm_rendezvous.is_some();
    let rendezvous_tables = [
        app::coll_fit::RENDEZVOUS_SEND,
        app::coll_fit::RENDEZVOUS_RECV,
    ];
    let given_flag = args.flag_latency.is_some();
    let bench = if args.run.is_some()
        || args.shm_run.is_some()
        || args.socket_run.is_some()
        || !args.multi_pair_run.is_empty()
        || !args.shm_multi_pair_run.is_empty()
    {
        let max_bytes = args
            .max_bytes
            .as_deref()
            .map(|s| size_flag("--max-bytes", s))
            .transpose()?;
        Some(app::netbench::Bench::build(&args.mpicc, max_bytes).map_err(crate::flagged)?)
    } else {
        None
    };
    if let (Some(launcher), Some(bench)) = (&args.run, &bench) {
        let m = bench.measure(launcher, &bench_path(&args, "network"), &mut |m| {
            eprintln!("{m}")
        })?;
        measured_memcpy = m.memcpy.map(|b| (b, launcher.clone()));
        library = m.library;
        shared_memory = m.shared_memory;
        if !given_barrier {
            args.barrier = Some(m.table.clone());
        }
        if !given_calls
            && app::coll_fit::has_tables(
                &m.table,
                &[&format!("{}allreduce", app::coll_fit::CALL_PREFIX)],
            )?
        {
            args.calls = vec![m.table.clone()];
        }
        if !given_rendezvous && app::coll_fit::has_tables(&m.table, &rendezvous_tables)? {
            args.rendezvous = Some(m.table.clone());
        }
        if args.reduce_local.is_none() {
            args.reduce_local = Some(m.table.clone());
        }
        if args.memcpy_table.is_none()
            && app::coll_fit::has_tables(&m.table, &[app::coll_fit::MEMCPY])?
        {
            args.memcpy_table = Some(m.table.clone());
        }
        if args.flag_latency.is_none()
            && app::coll_fit::has_tables(&m.table, &[app::coll_fit::FLAG_LATENCY])?
        {
            args.flag_latency = Some(m.table.clone());
        }
        if args.datatype.is_none()
            && app::coll_fit::has_tables(&m.table, &["TypeCreate", "TypePack"])?
        {
            args.datatype = Some(m.table.clone());
        }
        if args.page_fault.is_none()
            && app::coll_fit::has_tables(&m.table, &[app::coll_fit::PAGE_FAULT])?
        {
            args.page_fault = Some(m.table.clone());
        }
        if args.pingping.is_none() {
            args.pingping = Some(m.table.clone());
            args.pingping_format = "imb".into();
        }
        if args.stream.is_none() && args.bistream.is_none() {
            args.stream = Some(m.table.clone());
            args.bistream = Some(m.table.clone());
            args.stream_format = "imb".into();
        }
        args.input = Some(m.table);
        args.format = "imb".into();
        args.benchmark = PING_PONG.into();
    }
    if let (Some(launcher), Some(bench)) = (&args.shm_run, &bench) {
        let m = bench.measure(launcher, &bench_path(&args, "shm"), &mut |m| {
            eprintln!("{m}")
        })?;
        if measured_memcpy.is_none() {
            measured_memcpy = m.memcpy.map(|b| (b, launcher.clone()));
        }
        if !given_barrier {
            args.shm_barrier = Some(m.table.clone());
            args.barrier = None;
        }
        if !given_calls
            && app::coll_fit::has_tables(
                &m.table,
                &[&format!("{}allreduce", app::coll_fit::CALL_PREFIX)],
            )?
        {
            args.shm_calls = vec![m.table.clone()];
            args.calls.clear();
        }
        if !given_rendezvous && app::coll_fit::has_tables(&m.table, &rendezvous_tables)? {
            args.shm_rendezvous = Some(m.table.clone());
            args.rendezvous = None;
        }
        if !given_flag && app::coll_fit::has_tables(&m.table, &[app::coll_fit::FLAG_LATENCY])? {
            args.flag_latency = Some(m.table.clone());
        }
        args.shm = Some(m.table);
        args.shm_format = "imb".into();
    }
    if let (Some(launcher), Some(bench)) = (&args.socket_run, &bench) {
        let m = bench.measure(launcher, &bench_path(&args, "socket"), &mut |m| {
            eprintln!("{m}")
        })?;
        if measured_memcpy.is_none() {
            measured_memcpy = m.memcpy.map(|b| (b, launcher.clone()));
        }
        args.socket = Some(m.table);
        args.socket_format = "imb".into();
    }
    if let Some(bench) = &bench {
        // The k-pairs streams: each run's table joins the given ones.
        let runs = [
            (&args.multi_pair_run, "network", false),
            (&args.shm_multi_pair_run, "shm", true),
        ];
        let mut measured: Vec<(PathBuf, bool)> = Vec::new();
        for (launchers, level, shm) in runs {
            for (i, launcher) in launchers.iter().enumerate() {
                let save = bench_path(&args, &format!("{level}-multi-pair-{}", i + 1));
                let pairs = bench.measure_multi_pair(launcher, &save, &mut |m| eprintln!("{m}"))?;
                eprintln!("measured {pairs} pair(s) streaming at once ({level})");
                measured.push((save, shm));
            }
        }
        for (table, shm) in measured {
            if shm {
                args.shm_multi_pair.push(table);
            } else {
                args.multi_pair.push(table);
            }
        }
    }
    Ok(Measured {
        args,
        memcpy: measured_memcpy,
        library,
        shared_memory,
    })
}

/// The flags of one channel inside a node: `--shm-*` or `--socket-*`.
struct LocalFlags<'a> {
    /// The channel, whose name prefixes the flags.
    channel: app::netfit::FitChannel,
    table: Option<&'a PathBuf>,
    format: &'a str,
    from_alltoall2: bool,
    filters: &'a [String],
    overhead: Option<&'a str>,
    eager_limit: &'a str,
}

impl<'a> LocalFlags<'a> {
    fn shm(args: &'a NetArgs) -> Self {
        LocalFlags {
            channel: app::netfit::FitChannel::Shm,
            table: args.shm.as_ref(),
            format: &args.shm_format,
            from_alltoall2: args.shm_from_alltoall2,
            filters: &args.shm_filters,
            overhead: args.shm_overhead.as_deref(),
            eager_limit: &args.shm_eager_limit,
        }
    }

    fn socket(args: &'a NetArgs) -> Self {
        LocalFlags {
            channel: app::netfit::FitChannel::Socket,
            table: args.socket.as_ref(),
            format: &args.socket_format,
            from_alltoall2: args.socket_from_alltoall2,
            filters: &args.socket_filters,
            overhead: args.socket_overhead.as_deref(),
            eager_limit: &args.socket_eager_limit,
        }
    }

    /// `--shm` or `--socket`.
    fn flag(&self, suffix: &str) -> String {
        format!("--{}{suffix}", self.channel.name())
    }

    /// The table and how to read and fit it; `None` without a table.
    fn input(&self, args: &NetArgs) -> anyhow::Result<Option<app::netfit::LocalInput>> {
        let Some(path) = self.table else {
            if self.from_alltoall2 {
                bail!(
                    "{} needs {} TABLE",
                    self.flag("-from-alltoall2"),
                    self.flag("")
                );
            }
            return Ok(None);
        };
        Ok(Some(app::netfit::LocalInput {
            path: path.clone(),
            input: InputOptions {
                format: format_of(self.format)?,
                benchmark: Some(if self.from_alltoall2 {
                    "Alltoall".into()
                } else {
                    args.benchmark.clone()
                }),
                processes: self.from_alltoall2.then_some(2),
                bytes_col: args.bytes_col.clone(),
                time_col: args.time_col.clone(),
                filters: filters(self.filters, &self.flag("-where"))?,
            },
            channel: channel_options(
                args,
                self.overhead,
                &self.flag("-overhead"),
                self.eager_limit,
                &self.flag("-eager-limit"),
            )?,
            from_alltoall2: self.from_alltoall2,
            overhead_from_send: self.overhead.is_none() && args.overhead_fraction.is_none(),
            patterns: (self.channel == app::netfit::FitChannel::Shm && !self.from_alltoall2)
                .then(|| std::fs::read_to_string(path).ok())
                .flatten()
                .and_then(|text| app::netfit::netbench_patterns(&text, path))
                // The duplex is fitted per rank (`duplex_scope = "rank"`):
                // each rank's core copies its own messages in and out, and
                // a crossing of two ranks cannot identify one memory
                // channel per node (VALIDATION.md 6.3, 6.4).
                .map(|tables| app::netfit::PatternInput {
                    tables,
                    duplex: args.shm_duplex,
                    fit_overheads: self.overhead.is_none() && args.overhead_fraction.is_none(),
                }),
        }))
    }
}

/// The ping-pong table of IMB (and of parsim's benchmark).
const PING_PONG: &str = "PingPong";

// parsim's benchmark's ping-pong of data written just before each send
// (`--buffers written`).
use app::netfit::PING_PONG_WRITTEN;

pub(crate) fn run_net(args: &NetArgs) -> anyhow::Result<()> {
    // Measured tables are saved and then read like given ones.
    let Measured {
        mut args,
        memcpy: measured_memcpy,
        library: measured_library,
        shared_memory: measured_shared_memory,
    } = measure(args)?;
    // `--buffers written`: every channel's ping-pong is the benchmark's
    // PingPongWritten (the patterns and streams stay as measured).
    if args.buffers == "written" {
        if args.benchmark != PING_PONG {
            return Err(crate::common::UsageError(format!(
                "--buffers written takes the benchmark's {PING_PONG_WRITTEN} table; --benchmark {} chooses another: give one of them",
                args.benchmark
            ))
            .into());
        }
        args.benchmark = PING_PONG_WRITTEN.into();
        args.notes.push(format!(
            "Buffers: every channel's ping-pong is {PING_PONG_WRITTEN} (--buffers written): the data of each message written by its sender just before it is sent, as a program sends what it computed; IMB's and OSU's clean buffers cost less (from the eager limit on, on shared memory)."
        ));
    }
    // A benchmark output whose largest message stayed in the caches.
    for path in [&args.input, &args.shm, &args.socket].into_iter().flatten() {
        if let Some(note) = std::fs::read_to_string(path)
            .ok()
            .as_deref()
            .and_then(app::netbench::cache_note)
        {
            eprintln!("note: {}: {note}", path.display());
            let note = format!("{}: {note}", path.display());
            args.notes.push(note);
        }
    }
    // A network measured with both ranks on one host, for a machine of one
    // rank per node.
    if let Some(path) = &args.input
        && let Some(note) = std::fs::read_to_string(path)
            .ok()
            .and_then(|text| app::netbench::one_host_note(&text, args.ranks_per_node))
    {
        eprintln!("note: {}: {note}", path.display());
        args.notes.push(format!("{}: {note}", path.display()));
    }
    let args = &args;
    let input = args
        .input
        .clone()
        .context("give a table to fit, or --run LAUNCHER to measure one")?;
    // What a read of the clock costs, where parsim's benchmark measured it
    // (`--run`, or its saved output given as the table).
    let timer = std::fs::read_to_string(&input)
        .ok()
        .as_deref()
        .and_then(app::netbench::stated_timer)
        .map(|t| {
            (
                t,
                format!("measured by the benchmark ({})", input.display()),
            )
        });
    if args.buffers == "written" {
        // Only parsim's benchmark writes its buffers before each send.
        let text = std::fs::read_to_string(&input)
            .with_context(|| format!("cannot read {}", input.display()))?;
        let imb = match format_of(&args.format)? {
            Some(f) => f == Format::Imb,
            None => Format::detect(&text) == Some(Format::Imb),
        };
        if !imb || !text.contains(&format!("# Benchmarking {PING_PONG_WRITTEN}")) {
            bail!(
                "{}: no {PING_PONG_WRITTEN} table, which --buffers written fits the channels from: measure with --run (or give the *.netbench.txt it saved)",
                input.display()
            );
        }
    }
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
    let memcpy_defaulted = args.memcpy.is_none() && measured_memcpy.is_none();
    let input_options = InputOptions {
        format: format_of(&args.format)?,
        benchmark: Some(args.benchmark.clone()),
        processes: args.processes,
        bytes_col: args.bytes_col.clone(),
        time_col: args.time_col.clone(),
        filters: filters(&args.filters, "--where")?,
    };
    let network_options = channel_options(
        args,
        args.overhead.as_deref(),
        "--overhead",
        &args.eager_limit,
        "--eager-limit",
    )?;
    let shm_input = LocalFlags::shm(args).input(args)?;
    let socket_input = LocalFlags::socket(args).input(args)?;
    let mut pattern_tables = Vec::new();
    if let Some(path) = &args.pingping {
        pattern_tables.push((
            app::patterns::Pattern::PingPing,
            path.clone(),
            InputOptions {
                format: format_of(&args.pingping_format)?,
                benchmark: Some("PingPing".into()),
                bytes_col: args.bytes_col.clone(),
                time_col: args.time_col.clone(),
                ..InputOptions::default()
            },
        ));
    }
    for (pattern, path, benchmark) in [
        (app::patterns::Pattern::Stream, &args.stream, "Stream"),
        (app::patterns::Pattern::BiStream, &args.bistream, "BiStream"),
    ] {
        if let Some(path) = path {
            pattern_tables.push((
                pattern,
                path.clone(),
                InputOptions {
                    format: format_of(&args.stream_format)?,
                    benchmark: Some(benchmark.into()),
                    ..InputOptions::default()
                },
            ));
        }
    }
    let pattern_input = (!pattern_tables.is_empty()).then(|| app::netfit::PatternInput {
        tables: pattern_tables,
        duplex: args.duplex,
        fit_overheads: args.overhead.is_none() && args.overhead_fraction.is_none(),
    });
    // node.sockets: as given, else 2 with a between-sockets table.
    let sockets = args
        .sockets
        .unwrap_or(if args.socket.is_some() { 2 } else { 1 });
    if !args.shm_multi_pair.is_empty() && args.shm.is_none() {
        return Err(crate::common::UsageError(
            "--shm-multi-pair needs the shared-memory channel: give --shm TABLE (or --shm-run)"
                .into(),
        )
        .into());
    }
    let multi_pair = {
        use app::node_fit::PairPlacement;
        let tables: Vec<(PairPlacement, PathBuf)> = (args.multi_pair.iter())
            .map(|p| (PairPlacement::Network, p.clone()))
            .chain(
                args.shm_multi_pair
                    .iter()
                    .map(|p| (PairPlacement::Shm, p.clone())),
            )
            .collect();
        (!tables.is_empty()).then_some(app::netfit::MultiPairInput {
            tables,
            duplex: args.duplex,
            sockets,
            imb_ranks_per_node: args.imb_ppn.unwrap_or(args.ranks_per_node),
        })
    };
    let ticker = crate::progress::Ticker::start(
        "calibrate net",
        "fitting the tables",
        args.progress.quiet,
        args.progress.progress_every,
    );
    let fitted = app::netfit::fit(
        &input,
        &input_options,
        &network_options,
        app::netfit::Others {
            shm: shm_input.as_ref(),
            socket: socket_input.as_ref(),
            patterns: pattern_input.as_ref(),
            multi_pair: multi_pair.as_ref(),
            overhead_from_send: args.overhead.is_none() && args.overhead_fraction.is_none(),
        },
        memcpy,
    );
    let mut fitted = match fitted {
        Ok(f) => f,
        Err(e) => {
            ticker.finish();
            return Err(crate::flagged(e));
        }
    };
    for skipped in fitted.skipped_rows() {
        eprintln!("warning: {skipped}");
    }

    let command: Vec<String> = std::iter::once("parsim".to_owned())
        .chain(std::env::args().skip(1))
        .map(|w| app::shell::word(&w))
        .collect();
    // The machine's name: --name, else the written file's stem when the
    // tables were measured here (`--run ... -o cluster.toml` is "cluster",
    // not its saved table's "cluster.network.netbench"), else the table's.
    let name = args.name.clone().unwrap_or_else(|| {
        let from = if args.run.is_some() {
            args.output.as_deref()
        } else {
            Some(input.as_path())
        };
        from.and_then(|p| p.file_stem())
            .map_or("calibrated".into(), |s| s.to_string_lossy().into_owned())
    });
    let mut collectives = args
        .collectives
        .iter()
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) => Ok((k.trim().to_owned(), v.trim().to_owned())),
            None => Err(anyhow::anyhow!(
                "--collective expects KEY=VALUE, got `{kv}`"
            )),
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut notes = args.notes.clone();
    if (args.barrier.is_some() || args.shm_barrier.is_some())
        && collectives.iter().any(|(k, _)| k == "call_overhead")
    {
        return Err(crate::common::UsageError(
            "--collective call_overhead=... and --barrier (or --shm-barrier) both set the call overhead: give one".into(),
        )
        .into());
    }
    if (!args.calls.is_empty() || !args.shm_calls.is_empty())
        && collectives.iter().any(|(k, _)| k == "call_overhead")
    {
        return Err(crate::common::UsageError(
            "--collective call_overhead=... and --calls (or --shm-calls) both set the call overhead: give one".into(),
        )
        .into());
    }
    // The library the benchmark ran on, unless the user names one.
    if let Some(version) = &measured_library
        && !collectives.iter().any(|(k, _)| k == "library")
    {
        let (library, note) = app::coll_fit::library_note(version);
        let mut shm_note = None;
        match library {
            Some(library) => {
                collectives.insert(0, ("library".to_owned(), library.name().to_owned()));
                // MPICH 4: whether this build runs its collectives inside a
                // node through shared memory (its device, `shared_memory_of`).
                if library == sim_core::coll::Library::Mpich4
                    && let Some(on) = measured_shared_memory
                    && !collectives.iter().any(|(k, _)| k == "shared_memory")
                {
                    collectives.push(("shared_memory".to_owned(), on.to_string()));
                    shm_note = Some(format!(
                        "collectives.shared_memory = {on}: the MPICH build {} (its device and --with-ch4-shmmods, MPI_Get_library_version).",
                        if on {
                            "has the POSIX module, which runs bcast, reduce, allreduce and barrier inside a node through shared memory"
                        } else {
                            "has no POSIX module (ch4:ucx), so its collectives inside a node are messages"
                        }
                    ));
                }
            }
            None => eprintln!(
                "warning: the benchmark ran on `{version}`, whose collective rules parsim does not have; the machine file gets MPICH 3's (give --collective library=NAME to choose)"
            ),
        }
        notes.push(note);
        notes.extend(shm_note);
    }
    // Without a measured or given memcpy, the tables inside a node bound
    // it from below (`Fitted::memcpy_lower_bound`): far closer than a fixed
    // 1 GB/s on any node of this century (VALIDATION.md section 5.3).
    let memcpy_bound = memcpy_defaulted
        .then(|| fitted.memcpy_lower_bound(args.shm_from_alltoall2))
        .flatten();
    let (memcpy, memcpy_origin) = match &memcpy_bound {
        Some((rate, what)) => (
            *rate,
            format!(
                "memcpy {:.4} GB/s: {what} run at this rate, and each message is at least one \
                 copy, so a copy is at least this fast (a lower bound, not measured)",
                rate / 1e9,
            ),
        ),
        None => (memcpy, memcpy_origin),
    };
    let info = app::netfit::MachineInfo {
        name,
        description: args.description.clone(),
        command,
        ranks_per_node: args.ranks_per_node,
        sockets,
        cpu_rate: args.cpu_rate,
        memcpy,
        memcpy_origin,
        timer,
        duplex: args.duplex,
        shm_duplex: args.shm_duplex,
        collectives,
        notes,
    };
    ticker.stage("fitting the collectives' call costs");
    let coll = fitted.fit_collectives(
        &app::coll_fit::CollTables {
            barrier: placed(args.barrier.as_ref(), args.shm_barrier.as_ref()),
            calls: if args.shm_calls.is_empty() {
                args.calls
                    .iter()
                    .map(|p| (p.clone(), app::coll_fit::Placement::TwoNodes))
                    .collect()
            } else {
                args.shm_calls
                    .iter()
                    .map(|p| (p.clone(), app::coll_fit::Placement::OneNode))
                    .collect()
            },
            rendezvous: placed(args.rendezvous.as_ref(), args.shm_rendezvous.as_ref()),
            reduce_local: args.reduce_local.clone(),
            memcpy: args.memcpy_table.clone(),
            flag: args.flag_latency.clone(),
            datatype: args.datatype.clone(),
            page_fault: args.page_fault.clone(),
        },
        &info,
    );
    ticker.finish();
    coll.map_err(crate::flagged)?;
    crate::out(&fitted.report());
    if let Some((rate, _)) = &memcpy_bound {
        eprintln!(
            "note: node.memcpy is {:.4} GB/s, a lower bound from {} (not measured); it prices every local copy (a collective's own block, reductions without --reduce-local): give --memcpy RATE (a STREAM copy of the target), or measure the tables with --run, which measures it",
            rate / 1e9,
            memcpy_bound.as_ref().map_or("", |(_, what)| what.as_str())
        );
    } else if memcpy_defaulted {
        // A default that matters (issue 14: an OSU allreduce validated with
        // it was 183% off): said where it is used, not only in the written
        // file's comment.
        eprintln!(
            "note: node.memcpy is 1 GB/s by default (not measured); it prices every local copy (a collective's own block, shared-memory messages): give --memcpy RATE (a STREAM copy of the target), or measure the tables with --run, which measures it"
        );
    }
    if args.ranks_per_node > 1 && args.multi_pair.is_empty() {
        // What many ranks of a node sending small messages at once meet
        // (VALIDATION.md 5.5: 32 pairs of Alaska's InfiniBand nodes send
        // 77 M messages/s below 64 B, where one pair's tables leave the
        // adapter unlimited and predict 245 M).
        eprintln!(
            "note: network.node_gap is not measured (0): with {} ranks per node, small messages of ranks sending at once are limited only by each rank's own g, not by the adapter's message rate; give --multi-pair TABLE (osu_mbw_mr of k pairs between two nodes) or --multi-pair-run LAUNCHER",
            args.ranks_per_node
        );
    }
    let toml = fitted
        .machine_file(&info, &app::clock::today())
        .map_err(crate::flagged)?;
    // The models crate is the judge of the format; a file it refuses is
    // still written (it may predate a format feature), with a warning.
    if let Err(e) = models::LogGpMachine::from_toml_str(&toml, "<calibrated machine>") {
        eprintln!("warning: this parsim cannot load the machine file it wrote: {e}");
    }
    match &args.output {
        Some(path) => {
            std::fs::write(path, &toml)
                .with_context(|| format!("cannot write {}", path.display()))?;
            crate::out(&format!("\nwrote {}\n", path.display()));
        }
        None => crate::out(&format!("\n{toml}")),
    }
    Ok(())
}

/// A table given for ranks on two nodes (`--barrier`, `--rendezvous`) or on
/// one (`--shm-barrier`, `--shm-rendezvous`, which wins), with its placement.
fn placed(
    two_nodes: Option<&PathBuf>,
    one_node: Option<&PathBuf>,
) -> Option<(PathBuf, app::coll_fit::Placement)> {
    match (two_nodes, one_node) {
        (_, Some(p)) => Some((p.clone(), app::coll_fit::Placement::OneNode)),
        (Some(p), None) => Some((p.clone(), app::coll_fit::Placement::TwoNodes)),
        (None, None) => None,
    }
}
