//! What a collective call costs beyond its messages (`parsim calibrate
//! net --barrier T --reduce-local T`, and `--run`, which measures both):
//! the library's entry cost per call (`[collectives] call_overhead`), the
//! reduction's fixed cost per step and its rate (`[node] reduce_overhead`,
//! `reduce_op`), and which library ran (`[collectives] library`, from
//! `MPI_Get_library_version`).
//!
//! Why: a 2-rank MPI_Allreduce of one float under MPICH 4.0.2 takes
//! 0.45-0.60 µs on the development machine where a Sendrecv of the same
//! float takes 0.21 µs (VALIDATION.md section 4.1): the call's own work
//! and the reduction's are of the order of a message. Both are measured
//! from point-to-point-free calls, never from the collective tables that
//! are validated:
//! - the call overhead from a 2-rank MPI_Barrier (IMB's loop: per call,
//!   the mean of the two ranks), by simulation: the barrier is simulated
//!   under the machine's library rules with no overhead, and the overhead
//!   is what the measured call takes beyond that (every rank pays it once
//!   per call before its first message, so a barrier loop's time per call
//!   grows by exactly the overhead; the simulation with it is reported as
//!   the check);
//! - the reduction from MPI_Reduce_local of n floats (IMB-MPI1's
//!   Reduce_local, or netbench's): `t(n) = c + n / R`, R from the sizes of
//!   64 KiB and more (total bytes over total time, where the fixed cost is
//!   negligible), c the median of `t(n) - n / R` over the sizes up to
//!   256 B, where the rate is.

use std::path::{Path, PathBuf};

use calibrate::{InputOptions, Table};
use models::LogGpMachine;
use sim_core::coll::Library;
use sim_core::ir::CollKind;

use crate::Error;

/// The smallest size whose time is taken to be rate-bound.
const RATE_FROM: u64 = 64 << 10;
/// The largest size whose time is taken to be the fixed cost.
const FIXED_UPTO: u64 = 256;

/// The library a `MPI_Get_library_version` text names, at the version
/// whose rules parsim has: `MPICH Version: 4.0.2` is `mpich-4` (3.x
/// `mpich-3`), `Open MPI v4.0.3, ...` `openmpi-4` (3.x too: the same fixed
/// rules), 4.1.x `openmpi-4.1`, 5.x `openmpi-5`, `Intel(R) MPI Library 2019
/// Update 7 ...` `intelmpi-2019`, 2021.x `intelmpi-2021`. Others
/// (MVAPICH, ...) are `None`.
pub fn library_of(version: &str) -> Option<Library> {
    let major = |rest: &str| -> Option<u32> {
        let digits: String = rest
            .trim_start()
            .trim_start_matches('v')
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    };
    let v = version.trim();
    if let Some(rest) = v.strip_prefix("MPICH Version:") {
        return match major(rest)? {
            3 => Some(Library::Mpich3),
            4 => Some(Library::Mpich4),
            _ => None,
        };
    }
    if let Some(rest) = v.strip_prefix("Open MPI") {
        // "v4.1.5": 4.1 has 5.0's tuned tables without han.
        let minor = rest
            .trim_start()
            .trim_start_matches('v')
            .split('.')
            .nth(1)
            .and_then(|m| m.parse::<u32>().ok());
        return match (major(rest)?, minor) {
            (3, _) | (4, Some(0)) => Some(Library::OpenMpi4),
            (4, Some(_)) => Some(Library::OpenMpi41),
            (5, _) => Some(Library::OpenMpi5),
            _ => None,
        };
    }
    if let Some(rest) = v.strip_prefix("Intel(R) MPI Library") {
        return match major(rest)? {
            2019 => Some(Library::IntelMpi2019),
            2021 => Some(Library::IntelMpi2021),
            _ => None,
        };
    }
    None
}

/// The library a measured `MPI_Get_library_version` line names (see
/// [`library_of`]), and the machine file's header line that says where
/// `collectives.library` came from, or why it stays MPICH 3's.
pub fn library_note(version: &str) -> (Option<Library>, String) {
    match library_of(version) {
        Some(library) => (
            Some(library),
            format!(
                "collectives.library = \"{}\": the benchmark ran on `{version}` (MPI_Get_library_version).",
                library.name()
            ),
        ),
        None => (
            None,
            format!(
                "The benchmark ran on `{version}`; parsim has no rules of that library, so the collectives follow MPICH 3's."
            ),
        ),
    }
}

/// Whether the MPICH build a netbench output ran on has its shared-memory
/// collectives (`release_gather`): its device and `--with-ch4-shmmods`
/// (`# parsim netbench: device ...` / `shmmods ...`, from
/// `MPI_Get_library_version`). MPICH 4.0's `src/mpid/ch4/subconfigure.m4`
/// 279-286: with `--with-ch4-shmmods` left at `auto`, `ch4:ucx` builds
/// none (`MPIDI_CH4_DIRECT_NETMOD`) and `ch4:ofi` the POSIX module; `none`
/// builds none anywhere, a named module builds it. `None` where the text
/// names no CH4 device (not MPICH 4).
pub fn shared_memory_of(text: &str) -> Option<bool> {
    let device = crate::netbench::stated(text, "device")?;
    let netmod = device.strip_prefix("ch4:")?;
    Some(match crate::netbench::stated(text, "shmmods") {
        Some("none") => false,
        Some(m) if m != "auto" => true,
        _ => netmod.starts_with("ofi"),
    })
}

/// The library line of a netbench output (`# parsim netbench: library
/// ...`), as printed.
pub fn library_line(text: &str) -> Option<&str> {
    crate::netbench::stated(text, "library")
}

/// Seconds per call of a 2-rank barrier table: an IMB-MPI1 output's
/// Barrier block of 2 processes (`t_avg[usec]`), netbench's Barrier table,
/// or osu_barrier's output (its `Avg Latency(us)`; the user ran it on 2
/// ranks).
pub fn barrier_seconds(text: &str, path: &Path) -> Result<f64, Error> {
    let bad = |message: String| Error::Input(format!("{}: {message}", path.display()));
    let cell = |columns: &[String], row: &[String], names: &[&str]| -> Option<f64> {
        let index = names
            .iter()
            .find_map(|n| columns.iter().position(|c| c == n))?;
        row.get(index)?.parse::<f64>().ok()
    };
    if let Ok(blocks) = calibrate::input::imb_blocks(text) {
        let barriers: Vec<_> = blocks
            .iter()
            .filter(|b| b.benchmark.as_deref() == Some("Barrier"))
            .collect();
        if !barriers.is_empty() {
            let block = barriers
                .iter()
                .find(|b| b.processes == Some(2) && b.waiting == 0)
                .ok_or_else(|| {
                    bad("the Barrier benchmark has no block of 2 processes (run IMB-MPI1 Barrier -npmin 2 on 2 ranks)".into())
                })?;
            let (line, row) = block
                .rows
                .first()
                .ok_or_else(|| bad("the Barrier block of 2 processes has no row".into()))?;
            let usec = cell(&block.columns, row, &["t_avg[usec]", "t[usec]"])
                .ok_or_else(|| bad(format!("line {line}: no t_avg[usec] or t[usec] value")))?;
            return positive_seconds(usec, &bad);
        }
    }
    let osu = calibrate::input::osu_table(text).map_err(|e| {
        bad(format!(
            "neither an IMB Barrier table nor osu_barrier's output: {e}"
        ))
    })?;
    if !osu.title.contains("Barrier") {
        return Err(bad(format!(
            "`{}` is not osu_barrier's output (nor an IMB Barrier table)",
            osu.title
        )));
    }
    let (line, row) = osu
        .rows
        .first()
        .ok_or_else(|| bad("osu_barrier's output has no row".into()))?;
    let usec = cell(&osu.columns, row, &["Avg Latency(us)"])
        .ok_or_else(|| bad(format!("line {line}: no Avg Latency(us) value")))?;
    positive_seconds(usec, &bad)
}

fn positive_seconds(usec: f64, bad: &dyn Fn(String) -> Error) -> Result<f64, Error> {
    if usec.is_finite() && usec > 0.0 {
        Ok(usec * 1e-6)
    } else {
        Err(bad(format!(
            "the measured time must be positive, got {usec} us"
        )))
    }
}

/// Reads a Reduce_local table (IMB-MPI1's or netbench's).
pub fn read_reduce_local(path: &Path) -> Result<Table, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::read(path, e))?;
    parse_reduce_local(&text).map_err(|err| Error::Table {
        path: path.to_owned(),
        err,
    })
}

/// The name of netbench's memcpy table.
pub const MEMCPY: &str = "Memcpy";

/// Reads a Memcpy table (netbench's: memcpy of n bytes, t per call, in
/// IMB's format) and fits the copy's cost by size.
pub fn read_memcpy(path: &Path) -> Result<RateFit, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::read(path, e))?;
    let table = crate::netfit::imb_block(&text, path, MEMCPY)?;
    fit_rate_segments(&table).ok_or_else(|| {
        Error::Input(format!(
            "{}: the Memcpy table needs at least {} sizes of 1 byte or more, in increasing order",
            path.display(),
            calibrate::fit::MIN_POINTS
        ))
    })
}

/// The Reduce_local block of an IMB-format text.
fn parse_reduce_local(text: &str) -> Result<Table, calibrate::InputError> {
    calibrate::parse_table(
        text,
        &InputOptions {
            format: Some(calibrate::Format::Imb),
            benchmark: Some("Reduce_local".to_owned()),
            ..InputOptions::default()
        },
    )
}

/// The reduction fitted to a Reduce_local table.
#[derive(Debug, Clone, PartialEq)]
pub struct ReduceFit {
    /// Seconds per call beyond the bytes (`node.reduce_overhead`).
    pub overhead: f64,
    /// Bytes per second combined (`node.reduce_op`).
    pub bandwidth: f64,
    /// |error| of the fitted line over the table's points: median, max.
    pub error: (f64, f64),
    pub points: usize,
    /// The reduction by size (`[[node.reduce_segments]]`), which prices
    /// every size the table measured; `None` when the table has too few
    /// points for it.
    pub by_size: Option<RateFit>,
}

/// A node operation's cost by its size (`[[node.memcpy_segments]]`,
/// `[[node.reduce_segments]]`): the table's times fitted as the channels'
/// ping-pongs are (`calibrate::fit::fit_segmented`: lines `t = a + b n`
/// with `a, b >= 0`, at least 3 points per segment, a time that never
/// falls with size, the number of segments by the least BIC). Why by size:
/// where the buffers of a repeated operation fit in a cache level it runs
/// at that level's rate; a copy of 256 KiB in a loop runs from the caches
/// and one of 4 MiB from memory (45 against 13 GB/s for MPI_Reduce_local on
/// the development machine, VALIDATION.md 4.23), so one rate for every
/// size is wrong by 3x on one side or the other.
#[derive(Debug, Clone, PartialEq)]
pub struct RateFit {
    pub segments: Vec<models::RateSegment>,
    /// |error| over the table's points of positive size: median, max.
    pub error: (f64, f64),
    pub points: usize,
}

/// Fits [`RateFit`] to `table` (its points of positive size); `None` with
/// fewer than 3 of them, or sizes not in increasing order (refused by the
/// fit).
pub fn fit_rate_segments(table: &Table) -> Option<RateFit> {
    let points: Vec<calibrate::Point> = table
        .points
        .iter()
        .filter(|p| p.bytes > 0 && p.seconds > 0.0 && p.seconds.is_finite())
        .copied()
        .collect();
    if points.len() < calibrate::fit::MIN_POINTS {
        return None;
    }
    let fit =
        calibrate::fit::fit_segmented(&points, &calibrate::FitOptions::default(), |_| 0.0).ok()?;
    let segments: Vec<models::RateSegment> = fit
        .segments
        .iter()
        .map(|s| models::RateSegment {
            from: s.from,
            overhead: s.line.a.max(0.0),
            per_byte: s.line.b.max(0.0),
        })
        .collect();
    let error = crate::patterns::summary(points.iter().map(|p| {
        let model =
            models::RateSegment::find(&segments, p.bytes).map_or(0.0, |s| s.seconds(p.bytes));
        (model, p.seconds)
    }));
    Some(RateFit {
        segments,
        error,
        points: points.len(),
    })
}

/// The lines of a report for a [`RateFit`] of `key`.
pub fn rate_fit_lines(key: &str, fit: &RateFit) -> Vec<String> {
    let mut lines = vec![format!(
        "  by size ([[node.{key}]]): {} segment(s), median error {:.1}%, max {:.1}% over {} points",
        fit.segments.len(),
        fit.error.0 * 100.0,
        fit.error.1 * 100.0,
        fit.points
    )];
    for s in &fit.segments {
        lines.push(format!(
            "    from {:>9} B: {:.4} us + {}",
            s.from,
            s.overhead * 1e6,
            if s.per_byte > 0.0 {
                format!("{:.0} MB/s", 1.0 / s.per_byte / 1e6)
            } else {
                "no cost per byte".to_owned()
            }
        ));
    }
    lines
}

/// Fits `t(n) = c + n / R` to a Reduce_local table (see the module text).
pub fn fit_reduce(table: &Table) -> Result<ReduceFit, Error> {
    let rate_points: Vec<_> = table
        .points
        .iter()
        .filter(|p| p.bytes >= RATE_FROM)
        .collect();
    let bytes: f64 = rate_points.iter().map(|p| p.bytes as f64).sum();
    let seconds: f64 = rate_points.iter().map(|p| p.seconds).sum();
    if rate_points.is_empty() || seconds.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return Err(Error::Input(format!(
            "the Reduce_local table has no size of {} KiB or more to take the reduction's rate from",
            RATE_FROM >> 10
        )));
    }
    let bandwidth = bytes / seconds;
    let mut fixed: Vec<f64> = table
        .points
        .iter()
        .filter(|p| p.bytes > 0 && p.bytes <= FIXED_UPTO)
        .map(|p| (p.seconds - p.bytes as f64 / bandwidth).max(0.0))
        .collect();
    if fixed.is_empty() {
        return Err(Error::Input(format!(
            "the Reduce_local table has no size of 1 to {FIXED_UPTO} bytes to take the fixed cost from"
        )));
    }
    fixed.sort_by(f64::total_cmp);
    let overhead = fixed[fixed.len() / 2];
    let error = crate::patterns::summary(
        table
            .points
            .iter()
            .filter(|p| p.bytes > 0)
            .map(|p| (overhead + p.bytes as f64 / bandwidth, p.seconds)),
    );
    Ok(ReduceFit {
        overhead,
        bandwidth,
        error,
        points: table.points.len(),
        by_size: fit_rate_segments(table),
    })
}

/// The call overhead fitted to a 2-rank barrier.
#[derive(Debug, Clone, PartialEq)]
pub struct CallFit {
    /// The library whose barrier was simulated.
    pub library: Library,
    /// Measured seconds per call.
    pub measured: f64,
    /// Simulated seconds per call without a call overhead.
    pub before: f64,
    /// Where the two ranks ran.
    pub placement: Placement,
    /// `collectives.call_overhead`, seconds.
    pub overhead: f64,
    /// Simulated seconds per call with it.
    pub after: f64,
}

/// IMB's Barrier loop on 2 ranks, fewer repetitions: seconds per call on
/// each rank (the table is their mean). `bytes` is the size parameter that
/// `patterns::simulate_ranks` sets in every pattern loop; a barrier moves
/// none.
const BARRIER_LOOP: &str = "\
param bytes = 0
param reps = 20
for i in 0 .. 2 { barrier() }
let t0 = wtime()
for i in 0 .. reps { barrier() }
print((wtime() - t0) / reps)
";

/// Where the two ranks of a measured barrier ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// On two nodes, as the ping-pong (`--barrier`).
    TwoNodes,
    /// On one node (`--shm-barrier`): node-aware libraries run their
    /// intra-node compositions there (MPICH 4's barrier on a node is an
    /// exchange and a 1-byte release, `docs/collectives.md`).
    OneNode,
}

/// `machine` with its two ranks placed by `placement` (one or two per
/// node) and `edit` applied: the machine each fit here simulates its
/// measured loop on.
fn placed(
    machine: &LogGpMachine,
    placement: Placement,
    edit: impl FnOnce(&mut models::MachineSpec),
) -> Result<LogGpMachine, Error> {
    let mut spec = machine.spec().clone();
    edit(&mut spec);
    spec.node.ranks_per_node = match placement {
        Placement::TwoNodes => 1,
        Placement::OneNode => 2,
    };
    LogGpMachine::new(spec).map_err(|e| Error::Input(e.to_string()))
}

/// Fits `call_overhead` so that a simulated 2-rank barrier on `machine`
/// (the ranks placed as measured; the machine's library and reduction as
/// they will be written) takes the `measured` seconds per call.
pub fn fit_call_overhead(
    machine: &LogGpMachine,
    measured: f64,
    placement: Placement,
) -> Result<CallFit, Error> {
    let program = crate::scenario::compile("<barrier loop>", BARRIER_LOOP)?;
    let before = simulated_barrier(&program, machine, 0.0, placement)?;
    let overhead = (measured - before).max(0.0);
    let after = simulated_barrier(&program, machine, overhead, placement)?;
    Ok(CallFit {
        library: machine.spec().collectives.library,
        measured,
        before,
        placement,
        overhead,
        after,
    })
}

/// Seconds per call of the barrier loop `program` on `machine` with
/// `call_overhead = overhead`, the ranks placed by `placement`: the mean of
/// the two ranks' times.
fn simulated_barrier(
    program: &sim_core::ir::Program,
    machine: &LogGpMachine,
    overhead: f64,
    placement: Placement,
) -> Result<f64, Error> {
    let m = placed(machine, placement, |spec| {
        spec.collectives.call_overhead = overhead;
    })?;
    let times = crate::patterns::simulate_ranks(program, &m, &[0], &[0, 1], 2)?;
    // Invariant: one size asked, one time given.
    Ok(times[0])
}

/// The tables of one rendezvous message's two ends in parsim's benchmark
/// output (`netbench.c`'s `rendezvous_tables`).
pub const RENDEZVOUS_SEND: &str = "RendezvousSend";
pub const RENDEZVOUS_RECV: &str = "RendezvousRecv";

/// When a rendezvous send completes, chosen by the measured sender.
#[derive(Debug, Clone, PartialEq)]
pub struct RendezvousFit {
    /// `node.rendezvous_send = "received"`.
    pub received: bool,
    /// Sizes measured.
    pub points: usize,
    /// The sender's median |error| with `"sent"` and with `"received"`.
    pub error_sent: f64,
    pub error_received: f64,
    /// The measured sender's and receiver's median time per message over
    /// the sizes, seconds (for the report).
    pub sender: f64,
    pub receiver: f64,
}

/// `netbench.c`'s loop of one message from rank 0 to rank 1 after a
/// barrier, each end timed: seconds per message on each rank.
const ONE_MESSAGE_LOOP: &str = "\
param bytes = 0
param reps = 10
let t = 0.0
for i in 0 .. reps + 2 {
    barrier()
    let t0 = wtime()
    if rank == 0 { send(to: 1, bytes: bytes) } else { recv(from: 0, bytes: bytes) }
    let t1 = wtime()
    if i >= 2 { t += t1 - t0 }
}
print(t / reps)
";

/// Chooses `node.rendezvous_send` on `machine` from the RendezvousSend
/// and RendezvousRecv tables of the file at `path` (one message of each
/// rendezvous size after a barrier, each end's time): the setting whose
/// simulated sender (the same loop, the ranks placed as measured) is
/// nearer the measured one, by the median |ln(simulated / measured)| over
/// the sizes. The receiver's time is the same under both (it is the
/// channel's), so only the sender tells them apart.
pub fn fit_rendezvous(
    machine: &LogGpMachine,
    path: &Path,
    placement: Placement,
) -> Result<RendezvousFit, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::read(path, e))?;
    let sends = crate::netfit::imb_block(&text, path, RENDEZVOUS_SEND)?;
    let recvs = crate::netfit::imb_block(&text, path, RENDEZVOUS_RECV)?;
    let sizes: Vec<u64> = sends.points.iter().map(|p| p.bytes).collect();
    let measured: Vec<f64> = sends.points.iter().map(|p| p.seconds).collect();
    let program = crate::scenario::compile("<one message loop>", ONE_MESSAGE_LOOP)?;
    let simulate = |received: bool| -> Result<f64, Error> {
        let m = placed(machine, placement, |spec| {
            spec.node.rendezvous_send_received = received;
        })?;
        let sender = crate::patterns::simulate_ranks(&program, &m, &sizes, &[0], 2)?;
        let mut errors: Vec<f64> = sender
            .iter()
            .zip(&measured)
            .map(|(p, t)| (p / t).ln().abs())
            .collect();
        Ok(crate::validate::median(&mut errors))
    };
    let (error_sent, error_received) = (simulate(false)?, simulate(true)?);
    let mut sender = measured.clone();
    let mut receiver: Vec<f64> = recvs.points.iter().map(|p| p.seconds).collect();
    Ok(RendezvousFit {
        received: error_received < error_sent,
        points: sizes.len(),
        error_sent,
        error_received,
        sender: crate::validate::median(&mut sender),
        receiver: crate::validate::median(&mut receiver),
    })
}

/// The prefix of the per-collective call tables in parsim's benchmark
/// output (`Call_allreduce`, ...: `netbench.c`'s `call_tables`).
pub const CALL_PREFIX: &str = "Call_";

/// One collective's measured call: what `netbench.c` prints as its
/// `Call_<kind>` table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeasuredCall {
    pub kind: CollKind,
    /// Bytes per block (per rank for reduce_scatter), as the table's row.
    pub bytes: u64,
    /// Seconds per call, the mean of the two ranks.
    pub seconds: f64,
}

/// The measured calls of the file at `path`: parsim's benchmark output
/// (its `Call_<kind>` tables, each table's one row), the output of one of
/// OMB's blocking collective latency tests run on 2 ranks (`osu_allreduce`,
/// ...: OMB's loop is the one `netbench.c` copies), whose smallest size is
/// taken (for `osu_reduce_scatter` its 8-byte row, one float to each
/// rank), or an IMB-MPI1 output's collective blocks of 2 processes
/// (`read_imb_calls`); none when the file has none of them.
pub fn read_calls(path: &Path) -> Result<Vec<MeasuredCall>, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::read(path, e))?;
    let bad = |message: String| Error::Input(format!("{}: {message}", path.display()));
    if let Ok(osu) = calibrate::input::osu_table(&text)
        && osu.title.starts_with("OSU MPI")
    {
        return read_osu_call(&osu, &bad).map(|c| vec![c]);
    }
    let blocks = calibrate::input::imb_blocks(&text).map_err(|e| bad(e.to_string()))?;
    let mut calls = Vec::new();
    for block in &blocks {
        let Some(name) = block
            .benchmark
            .as_deref()
            .and_then(|b| b.strip_prefix(CALL_PREFIX))
        else {
            continue;
        };
        let kind = CollKind::from_name(name).ok_or_else(|| {
            bad(format!(
                "{CALL_PREFIX}{name}: no collective is named {name}"
            ))
        })?;
        let (line, row) = block
            .rows
            .first()
            .ok_or_else(|| bad(format!("the {CALL_PREFIX}{name} table has no row")))?;
        let column = |c: &str| {
            block
                .columns
                .iter()
                .position(|x| x == c)
                .and_then(|i| row.get(i))
                .and_then(|v| v.parse::<f64>().ok())
        };
        let (Some(bytes), Some(usec)) = (column("#bytes"), column("t[usec]")) else {
            return Err(bad(format!("line {line}: no #bytes and t[usec] values")));
        };
        if !(bytes >= 0.0 && bytes.fract() == 0.0) {
            return Err(bad(format!("line {line}: #bytes {bytes} is not a size")));
        }
        calls.push(MeasuredCall {
            kind,
            bytes: bytes as u64,
            seconds: positive_seconds(usec, &bad)?,
        });
    }
    if calls.is_empty() {
        calls = read_imb_calls(&blocks, &bad)?;
    }
    Ok(calls)
}

/// The collectives of an IMB-MPI1 output (2017 and later) with a block of
/// 2 processes and none waiting: each its smallest size of at least one
/// element (4 bytes for the reductions, whose elements are floats; for
/// Reduce_scatter its 8-byte row, one float to each rank), `t_avg`. IMB
/// 2017+ times each call alone between two clock reads and synchronises
/// after it (`-sync 1`, the default; src_c/IMB_allreduce.c and the
/// others), the loop `netbench.c` copies from OMB.
fn read_imb_calls(
    blocks: &[calibrate::input::ImbBlock],
    bad: &dyn Fn(String) -> Error,
) -> Result<Vec<MeasuredCall>, Error> {
    let mut calls = Vec::new();
    for block in blocks {
        let Some(kind) = block
            .benchmark
            .as_deref()
            .map(str::to_lowercase)
            .and_then(|n| CollKind::from_name(&n))
            .filter(|k| *k != CollKind::Barrier)
        else {
            continue;
        };
        if block.processes != Some(2) || block.waiting != 0 {
            continue;
        }
        let column = |name: &str| block.columns.iter().position(|c| c == name);
        let (Some(size), Some(avg)) = (column("#bytes"), column("t_avg[usec]")) else {
            return Err(bad(format!(
                "the {} block of 2 processes has no #bytes and t_avg[usec] columns (IMB 2017 or later)",
                kind.name()
            )));
        };
        let reduction = matches!(
            kind,
            CollKind::Reduce
                | CollKind::Allreduce
                | CollKind::ReduceScatter
                | CollKind::Scan
                | CollKind::Exscan
        );
        let rows = block.rows.iter().filter_map(|(_, row)| {
            let bytes = row.get(size)?.parse::<u64>().ok()?;
            let usec = row.get(avg)?.parse::<f64>().ok()?;
            Some((bytes, usec))
        });
        let found = if kind == CollKind::ReduceScatter {
            rows.clone().find(|r| r.0 == 8).map(|r| (4, r.1))
        } else {
            let least = if reduction { 4 } else { 1 };
            rows.clone().find(|r| r.0 >= least)
        };
        let (bytes, usec) = found.ok_or_else(|| {
            bad(format!(
                "the {} block of 2 processes has no row of one element",
                kind.name()
            ))
        })?;
        if calls.iter().any(|c: &MeasuredCall| c.kind == kind) {
            return Err(bad(format!(
                "{} has two blocks of 2 processes: give one run",
                kind.name()
            )));
        }
        calls.push(MeasuredCall {
            kind,
            bytes,
            seconds: positive_seconds(usec, bad)?,
        });
    }
    Ok(calls)
}

/// One OMB collective latency test's call: the collective its title names
/// (`# OSU MPI Allreduce Latency Test v6.1`), its smallest size's average.
fn read_osu_call(
    osu: &calibrate::input::OsuTable,
    bad: &dyn Fn(String) -> Error,
) -> Result<MeasuredCall, Error> {
    // OMB's titles (mpi/collective/osu_*.c, 5.x-7.x): the collective's
    // name, but "Broadcast" and "All-to-All(v) Personalized Exchange".
    let name = osu
        .title
        .strip_prefix("OSU MPI ")
        .and_then(|t| t.split(" Latency Test").next())
        .map(|n| match n {
            "Broadcast" => "bcast".to_owned(),
            "All-to-All Personalized Exchange" => "alltoall".to_owned(),
            "All-to-Allv Personalized Exchange" => "alltoallv".to_owned(),
            other => other.to_lowercase(),
        });
    let kind = name
        .as_deref()
        .and_then(CollKind::from_name)
        .filter(|k| *k != CollKind::Barrier)
        .ok_or_else(|| {
            bad(format!(
                "`{}` is not the output of one of OMB's blocking collective latency tests (osu_allreduce, osu_bcast, ...; osu_barrier is read by --barrier)",
                osu.title
            ))
        })?;
    let size = osu.columns.iter().position(|c| c == "Size");
    let avg = osu.columns.iter().position(|c| c == "Avg Latency(us)");
    let (Some(size), Some(avg)) = (size, avg) else {
        return Err(bad(format!(
            "{}: no Size and Avg Latency(us) columns",
            osu.title
        )));
    };
    let rows = osu.rows.iter().filter_map(|(line, row)| {
        let bytes = row.get(size)?.parse::<u64>().ok()?;
        let usec = row.get(avg)?.parse::<f64>().ok()?;
        Some((*line, bytes, usec))
    });
    // osu_reduce_scatter splits a vector of `size` bytes of floats over the
    // ranks (one float each at 8 bytes on 2): the call loop's
    // `reduce_scatter(bytes: 4)`.
    let (bytes, usec) = if kind == CollKind::ReduceScatter {
        rows.clone()
            .find(|r| r.1 == 8)
            .map(|r| (4, r.2))
            .ok_or_else(|| bad("osu_reduce_scatter's output has no row of 8 bytes".into()))?
    } else {
        rows.clone()
            .find(|r| r.1 > 0)
            .map(|r| (r.1, r.2))
            .ok_or_else(|| bad(format!("{}: no row of a positive size", osu.title)))?
    };
    Ok(MeasuredCall {
        kind,
        bytes,
        seconds: positive_seconds(usec, bad)?,
    })
}

/// One collective's own call overhead.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KindFit {
    pub call: MeasuredCall,
    /// Simulated seconds per call with the default overhead (the barrier's).
    pub default: f64,
    /// `collectives.call_overhead.<kind>`, seconds.
    pub overhead: f64,
    /// Simulated seconds per call with it.
    pub after: f64,
}

/// The call of `kind` in the language, `bytes` per block (`counts` an
/// array at the root of a v-variant, as `netbench.c` passes them).
fn call_text(kind: CollKind) -> &'static str {
    match kind {
        CollKind::Barrier => "barrier()",
        CollKind::Bcast => "bcast(root: 0, bytes: bytes)",
        CollKind::Reduce => "reduce(root: 0, bytes: bytes, elem: 4)",
        CollKind::Allreduce => "allreduce(bytes: bytes, elem: 4)",
        CollKind::Gather => "gather(root: 0, bytes: bytes)",
        CollKind::Gatherv => "gatherv(root: 0, bytes: counts)",
        CollKind::Scatter => "scatter(root: 0, bytes: bytes)",
        CollKind::Scatterv => "scatterv(root: 0, bytes: counts)",
        CollKind::Allgather => "allgather(bytes: bytes)",
        CollKind::Allgatherv => "allgatherv(bytes: array(size, bytes))",
        CollKind::Alltoall => "alltoall(bytes: bytes)",
        CollKind::Alltoallv => "alltoallv(bytes: array(size, bytes))",
        CollKind::ReduceScatter => "reduce_scatter(bytes: bytes, elem: 4)",
        CollKind::Scan => "scan(bytes: bytes, elem: 4)",
        CollKind::Exscan => "exscan(bytes: bytes, elem: 4)",
    }
}

/// `netbench.c`'s loop of one collective on 2 ranks (OMB's: each call timed
/// alone between two clock reads, then a barrier), fewer repetitions:
/// seconds per call on each rank.
fn call_loop(kind: CollKind) -> String {
    format!(
        "\
param bytes = 4
param reps = 20
param skip = 2
let counts = bytes
if rank == 0 {{ counts = array(size, bytes) }}
let t = 0.0
for i in 0 .. reps + skip {{
    let t0 = wtime()
    {}
    let t1 = wtime()
    if i >= skip {{ t += t1 - t0 }}
    barrier()
}}
print(t / reps)
",
        call_text(kind)
    )
}

/// Seconds per call of `kind`'s loop on `machine` with its own overhead
/// `overhead`, the ranks placed by `placement`.
fn simulated_call(
    program: &sim_core::ir::Program,
    machine: &LogGpMachine,
    call: MeasuredCall,
    overhead: f64,
    placement: Placement,
) -> Result<f64, Error> {
    let m = placed(machine, placement, |spec| {
        spec.collectives.set_call_overhead(call.kind, overhead);
    })?;
    let times = crate::patterns::simulate_ranks(program, &m, &[call.bytes], &[0, 1], 2)?;
    // Invariant: one size asked, one time given.
    Ok(times[0])
}

/// Fits each measured collective's own call overhead on `machine` (whose
/// `call_overhead` is the default, the barrier's): the overhead at which
/// the simulated loop takes the measured seconds per call. The time per
/// call does not fall as the overhead grows, but it need not grow by the
/// overhead (a rooted call's leaf waits for the root's message anyway), so
/// the overhead is bisected; 0 when the call is already as slow without
/// one.
pub fn fit_kind_overheads(
    machine: &LogGpMachine,
    calls: &[MeasuredCall],
    placement: Placement,
) -> Result<Vec<KindFit>, Error> {
    let default = machine.spec().collectives.call_overhead;
    calls
        .iter()
        .map(|&call| {
            let program =
                crate::scenario::compile("<collective call loop>", &call_loop(call.kind))?;
            let at = |x: f64| simulated_call(&program, machine, call, x, placement);
            let with_default = at(default)?;
            let (mut lo, mut hi) = (0.0, call.seconds);
            let overhead = if at(lo)? >= call.seconds {
                0.0
            } else {
                // The time at `call.seconds` of overhead is at least that.
                for _ in 0..40 {
                    let mid = 0.5 * (lo + hi);
                    if at(mid)? < call.seconds {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                0.5 * (lo + hi)
            };
            Ok(KindFit {
                call,
                default: with_default,
                overhead,
                after: at(overhead)?,
            })
        })
        .collect()
}

/// The tables of `calibrate net --barrier T` (or `--shm-barrier T`) and
/// `--reduce-local T`.
#[derive(Debug, Clone, Default)]
pub struct CollTables {
    pub barrier: Option<(PathBuf, Placement)>,
    /// A file with RendezvousSend and RendezvousRecv tables, its ranks
    /// placed as said: `node.rendezvous_send`.
    pub rendezvous: Option<(PathBuf, Placement)>,
    /// Files of measured calls ([`read_calls`]: `netbench.c`'s
    /// `Call_<kind>` tables, OMB collective outputs of 2 ranks), their
    /// ranks placed as said: each collective's own call overhead, on top
    /// of the barrier's.
    pub calls: Vec<(PathBuf, Placement)>,
    pub reduce_local: Option<PathBuf>,
    /// A Memcpy table (`--memcpy-table`): `[[node.memcpy_segments]]`.
    pub memcpy: Option<PathBuf>,
    /// A FlagLatency table (`--flag-latency`).
    pub flag: Option<PathBuf>,
    /// TypeCreate and TypePack tables (`--datatype`).
    pub datatype: Option<PathBuf>,
    /// A PageFault table (`--page-fault`).
    pub page_fault: Option<PathBuf>,
}

/// What the collective tables gave, for the machine file and the report.
#[derive(Debug, Clone, Default)]
pub struct CollFitted {
    pub call: Option<(PathBuf, CallFit)>,
    /// When a rendezvous send completes.
    pub rendezvous: Option<(PathBuf, RendezvousFit)>,
    /// Each measured collective's own call overhead, and the files.
    pub kinds: Option<(Vec<PathBuf>, Vec<KindFit>)>,
    pub reduce: Option<(PathBuf, ReduceFit)>,
    /// `[[node.memcpy_segments]]`, from a Memcpy table.
    pub memcpy: Option<(PathBuf, RateFit)>,
    /// `node.flag_latency`, seconds, from a FlagLatency table.
    pub flag: Option<(PathBuf, f64)>,
    /// `node.type_*`, from TypeCreate and TypePack tables.
    pub datatype: Option<(PathBuf, models::DatatypeCosts)>,
    /// `node.page_fault`, seconds per page, from a PageFault table.
    pub page_fault: Option<(PathBuf, f64)>,
}

/// The derived datatype's costs from the TypeCreate and TypePack tables of
/// the file at `path` (`#bytes` is the number of blocks): each a
/// least-squares line `a + b · k` over its rows, both terms at least 0.
pub fn read_datatype(path: &Path) -> Result<models::DatatypeCosts, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::read(path, e))?;
    let line = |name: &str| -> Result<(f64, f64), Error> {
        let table = crate::netfit::imb_block(&text, path, name)?;
        let pts: Vec<(f64, f64)> = table
            .points
            .iter()
            .map(|p| (p.bytes as f64, p.seconds))
            .collect();
        // A table's sizes are distinct and at least two (`parse_table`).
        let (slope, intercept) = calibrate::send::least_squares(&pts);
        if slope >= 0.0 {
            Ok((intercept.max(0.0), slope))
        } else {
            // No cost falls with the blocks: the mean, flat.
            let mean = pts.iter().map(|p| p.1).sum::<f64>() / pts.len() as f64;
            Ok((mean.max(0.0), 0.0))
        }
    };
    let (create, create_per_block) = line("TypeCreate")?;
    let (pack, pack_per_block) = line("TypePack")?;
    Ok(models::DatatypeCosts {
        create: Some(create),
        create_per_block: Some(create_per_block),
        pack: Some(pack),
        pack_per_block: Some(pack_per_block),
    })
}

/// The PageFault table's name in parsim's benchmark output.
pub const PAGE_FAULT: &str = "PageFault";

/// Seconds per page of fresh memory written whole and given back: the
/// median of the `t[usec]` column of the PageFault table of the file at
/// `path` (one row per mapping size, `netbench.c`).
pub fn read_page_fault(path: &Path) -> Result<f64, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::read(path, e))?;
    let table = crate::netfit::imb_block(&text, path, PAGE_FAULT)?;
    let mut per_page: Vec<f64> = table.points.iter().map(|p| p.seconds).collect();
    let median = crate::validate::median(&mut per_page);
    if !(median.is_finite() && median >= 0.0) {
        return Err(Error::Input(format!(
            "{}: the {PAGE_FAULT} table's median is not a time ({median})",
            path.display()
        )));
    }
    Ok(median)
}

/// The FlagLatency table's name in parsim's benchmark output.
pub const FLAG_LATENCY: &str = "FlagLatency";

/// Whether the file at `path` has every one of parsim's tables `names`
/// (its benchmark prints FlagLatency only when ranks 0 and 1 share a node).
pub fn has_tables(path: &Path, names: &[&str]) -> Result<bool, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::read(path, e))?;
    Ok(names
        .iter()
        .all(|n| text.contains(&format!("# Benchmarking {n}"))))
}

/// Seconds from a store to a shared flag until the other core sees it:
/// the one row of the FlagLatency table of the file at `path` (half a
/// round trip of a counter through two cache lines, `netbench.c`).
pub fn read_flag_latency(path: &Path) -> Result<f64, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::read(path, e))?;
    let bad = |message: String| Error::Input(format!("{}: {message}", path.display()));
    let blocks = calibrate::input::imb_blocks(&text).map_err(|e| bad(e.to_string()))?;
    let block = blocks
        .iter()
        .find(|b| b.benchmark.as_deref() == Some(FLAG_LATENCY))
        .ok_or_else(|| bad(format!("no {FLAG_LATENCY} table")))?;
    let (line, row) = block
        .rows
        .first()
        .ok_or_else(|| bad(format!("the {FLAG_LATENCY} table has no row")))?;
    let usec = block
        .columns
        .iter()
        .position(|c| c == "t[usec]")
        .and_then(|i| row.get(i))
        .and_then(|v| v.parse::<f64>().ok())
        .ok_or_else(|| bad(format!("line {line}: no t[usec] value")))?;
    positive_seconds(usec, &bad)
}

impl CollFitted {
    /// Lines for the report and the machine file's header.
    pub fn describe(&self) -> Vec<String> {
        let us = |s: f64| format!("{:.3} us", s * 1e6);
        let mut lines = Vec::new();
        if let Some((path, d)) = &self.datatype {
            let ns = |s: Option<f64>| format!("{:.2} ns", s.unwrap_or(0.0) * 1e9);
            lines.push(format!(
                "derived datatype: create + commit + free {} + {} per block, pack {} + {} per block (node.type_*), lines through TypeCreate and TypePack in {}",
                us(d.create.unwrap_or(0.0)),
                ns(d.create_per_block),
                us(d.pack.unwrap_or(0.0)),
                ns(d.pack_per_block),
                path.display()
            ));
        }
        if let Some((path, t)) = &self.page_fault {
            lines.push(format!(
                "page fault: {} per 4 KiB page of fresh memory written and given back (node.page_fault), the median of the PageFault table in {}",
                us(*t),
                path.display()
            ));
        }
        if let Some((path, t)) = &self.flag {
            lines.push(format!(
                "flag latency: {} (node.flag_latency), half the round trip of a counter through shared memory in {}",
                us(*t),
                path.display()
            ));
        }
        if let Some((path, r)) = &self.reduce {
            lines.push(format!(
                "reduction: {} per step + {:.0} MB/s (node.reduce_overhead, node.reduce_op), fitted to MPI_Reduce_local in {} ({} points; median error {:.1}%, max {:.1}%)",
                us(r.overhead),
                r.bandwidth / 1e6,
                path.display(),
                r.points,
                r.error.0 * 100.0,
                r.error.1 * 100.0
            ));
            if let Some(by_size) = &r.by_size {
                lines.extend(rate_fit_lines("reduce_segments", by_size));
            }
        }
        if let Some((path, fit)) = &self.memcpy {
            lines.push(format!(
                "memcpy by size: fitted to the Memcpy table in {}",
                path.display()
            ));
            lines.extend(rate_fit_lines("memcpy_segments", fit));
        }
        if let Some((path, r)) = &self.rendezvous {
            lines.push(format!(
                "rendezvous send: done when {} (node.rendezvous_send = \"{}\"): one message after a barrier in {}, {} sizes, the sender {} and the receiver {} (medians); the simulated sender's median |error| {:.1}% with \"sent\", {:.1}% with \"received\"",
                if r.received { "its data is received" } else { "its last byte has left" },
                if r.received { "received" } else { "sent" },
                path.display(),
                r.points,
                us(r.sender),
                us(r.receiver),
                r.error_sent * 100.0,
                r.error_received * 100.0
            ));
        }
        if let Some((path, c)) = &self.call {
            lines.push(format!(
                "collective call overhead: {} (collectives.call_overhead): a 2-rank barrier {} in {} takes {} per call, simulated under the {} rules {} without it, {} with it",
                us(c.overhead),
                match c.placement {
                    Placement::TwoNodes => "on two nodes",
                    Placement::OneNode => "on one node",
                },
                path.display(),
                us(c.measured),
                c.library.name(),
                us(c.before),
                us(c.after)
            ));
            if c.overhead == 0.0 {
                lines.push(
                    "  the simulated barrier is already as slow as the measured one: no call overhead"
                        .to_owned(),
                );
            }
        }
        if let Some((paths, kinds)) = &self.kinds {
            lines.push(format!(
                "each collective's own call overhead (collectives.call_overhead.<kind>), from its 2-rank call timed alone in {} (each call between two clock reads, then a barrier: the loop of OMB and of IMB 2017+, simulated the same way):",
                paths
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            for k in kinds {
                lines.push(format!(
                    "  {}: {} per call of {} B measured, {} simulated with the default overhead; {} its own, {} with it",
                    k.call.kind.name(),
                    us(k.call.seconds),
                    k.call.bytes,
                    us(k.default),
                    us(k.overhead),
                    us(k.after)
                ));
            }
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libraries_are_named_by_their_version_text() {
        assert_eq!(library_of("MPICH Version:\t4.0.2"), Some(Library::Mpich4));
        assert_eq!(
            library_of("MPICH Version:      3.3.2"),
            Some(Library::Mpich3)
        );
        assert_eq!(
            library_of("Open MPI v4.0.3, package: Open MPI build, ident: 4.0.3, repo rev: v4.0.3"),
            Some(Library::OpenMpi4)
        );
        assert_eq!(
            library_of("Open MPI v5.0.3, package: ..."),
            Some(Library::OpenMpi5)
        );
        assert_eq!(library_of("Open MPI v3.1.6"), Some(Library::OpenMpi4));
        assert_eq!(
            library_of("Open MPI v4.1.5, package: Debian OpenMPI"),
            Some(Library::OpenMpi41)
        );
        assert_eq!(
            library_of("Intel(R) MPI Library 2021.13 for Linux* OS"),
            Some(Library::IntelMpi2021)
        );
        assert_eq!(
            library_of("Intel(R) MPI Library 2019 Update 7 for Linux* OS"),
            Some(Library::IntelMpi2019)
        );
        assert_eq!(library_of("MVAPICH2 Version      :\t2.3.7"), None);
        let text =
            |lines: &str| format!("# parsim netbench: library MPICH Version: 4.0.2\n{lines}");
        assert_eq!(
            shared_memory_of(&text("# parsim netbench: device ch4:ucx\n")),
            Some(false)
        );
        assert_eq!(
            shared_memory_of(&text("# parsim netbench: device ch4:ofi\n")),
            Some(true)
        );
        assert_eq!(
            shared_memory_of(&text(
                "# parsim netbench: device ch4:ofi\n# parsim netbench: shmmods none\n"
            )),
            Some(false)
        );
        assert_eq!(
            shared_memory_of(&text(
                "# parsim netbench: device ch4:ucx\n# parsim netbench: shmmods posix\n"
            )),
            Some(true)
        );
        assert_eq!(
            shared_memory_of(&text("# parsim netbench: device ch3:nemesis\n")),
            None
        );
        assert_eq!(shared_memory_of(&text("")), None);
        assert_eq!(library_of("MPICH Version: x"), None);
        assert_eq!(
            library_line("# parsim netbench: library MPICH Version:\t4.0.2\n# x\n"),
            Some("MPICH Version:\t4.0.2")
        );
    }

    #[test]
    fn barrier_tables_of_imb_osu_and_netbench() {
        let p = Path::new("t");
        let imb = "# Benchmarking Barrier\n# #processes = 2\n#----\n #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n         1000         0.48         0.52         0.50\n\n# Benchmarking Barrier\n# #processes = 4\n #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n         1000         0.9         1.1         1.0\n";
        assert_eq!(barrier_seconds(imb, p).expect("reads"), 0.5e-6);
        let osu = "# OSU MPI Barrier Latency Test v5.6.1\n# Avg Latency(us)\n             0.51\n";
        assert!((barrier_seconds(osu, p).expect("reads") - 0.51e-6).abs() < 1e-15);
        let nb = "# Benchmarking Barrier\n# #processes = 2\n#---\n       #bytes #repetitions      t[usec]   Mbytes/sec\n            0         1000        0.500         0.00\n";
        assert_eq!(barrier_seconds(nb, p).expect("reads"), 0.5e-6);
        let four = "# Benchmarking Barrier\n# #processes = 4\n #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n 1000 0.9 1.1 1.0\n";
        let e = barrier_seconds(four, p).expect_err("refused").to_string();
        assert!(e.contains("no block of 2 processes"), "{e}");
        let lat = "# OSU MPI Latency Test v5.6.1\n# Size          Latency (us)\n0  0.2\n";
        let e = barrier_seconds(lat, p).expect_err("refused").to_string();
        assert!(e.contains("not osu_barrier"), "{e}");
    }

    /// The fit inverts the simulation: a machine with overhead c makes a
    /// barrier time from which the machine without it recovers c, on one
    /// node (MPICH 4's composition) and on two.
    #[test]
    fn the_call_overhead_is_recovered() {
        let text = r#"
name = "t"
model = "smp"
[node]
memcpy = "1 GB/s"
ranks_per_node = 2
[network]
latency = "2 us"
bandwidth = "1 GB/s"
send_overhead = "0.5 us"
recv_overhead = "0.5 us"
eager_limit = "64 KiB"
[shm]
latency = "0.2 us"
bandwidth = "5 GB/s"
send_overhead = "0.1 us"
recv_overhead = "0.1 us"
eager_limit = "64 KiB"
[collectives]
library = "mpich-4"
"#;
        let machine = LogGpMachine::from_toml_str(text, "t.toml").expect("loads");
        for placement in [Placement::OneNode, Placement::TwoNodes] {
            let program =
                crate::scenario::compile("<barrier loop>", BARRIER_LOOP).expect("compiles");
            let measured =
                simulated_barrier(&program, &machine, 0.3e-6, placement).expect("simulates");
            let fit = fit_call_overhead(&machine, measured, placement).expect("fits");
            approx::assert_relative_eq!(fit.overhead, 0.3e-6, max_relative = 1e-9);
            approx::assert_relative_eq!(fit.after, measured, max_relative = 1e-9);
            assert!(fit.before < measured);
        }
        // A measured barrier faster than the simulated one: no overhead.
        let fit = fit_call_overhead(&machine, 1e-9, Placement::TwoNodes).expect("fits");
        assert_eq!(fit.overhead, 0.0);
    }

    /// Each kind's own overhead comes back from its simulated loop, for
    /// every kind the language has, on either placement; a call measured
    /// faster than the simulation without overhead gets none.
    #[test]
    fn each_kind_overhead_is_recovered() {
        let text = r#"
name = "t"
model = "smp"
[node]
memcpy = "1 GB/s"
ranks_per_node = 2
timer = "0.03 us"
[network]
latency = "2 us"
bandwidth = "1 GB/s"
send_overhead = "0.5 us"
recv_overhead = "0.5 us"
eager_limit = "64 KiB"
[shm]
latency = "0.2 us"
bandwidth = "5 GB/s"
send_overhead = "0.1 us"
recv_overhead = "0.1 us"
eager_limit = "64 KiB"
[collectives]
library = "mpich-4"
call_overhead = "0.1 us"
"#;
        let machine = LogGpMachine::from_toml_str(text, "t.toml").expect("loads");
        for placement in [Placement::OneNode, Placement::TwoNodes] {
            for (i, kind) in CollKind::ALL.into_iter().enumerate() {
                let truth = 0.05e-6 * (i + 1) as f64;
                let program = crate::scenario::compile("<loop>", &call_loop(kind))
                    .unwrap_or_else(|e| panic!("{}: {e}", kind.name()));
                let probe = MeasuredCall {
                    kind,
                    bytes: 4,
                    seconds: 0.0,
                };
                let seconds =
                    simulated_call(&program, &machine, probe, truth, placement).expect("simulates");
                let call = MeasuredCall { seconds, ..probe };
                let fit = fit_kind_overheads(&machine, &[call], placement).expect("fits");
                approx::assert_relative_eq!(fit[0].overhead, truth, max_relative = 1e-6);
                approx::assert_relative_eq!(fit[0].after, seconds, max_relative = 1e-6);
                // The default (0.1 us) is below the truth from the second
                // kind on: the simulation with it is faster.
                if truth > 0.1e-6 + 1e-12 {
                    assert!(fit[0].default < seconds, "{}", kind.name());
                }
            }
        }
        let fast = MeasuredCall {
            kind: CollKind::Allreduce,
            bytes: 4,
            seconds: 1e-9,
        };
        let fit = fit_kind_overheads(&machine, &[fast], Placement::TwoNodes).expect("fits");
        assert_eq!(fit[0].overhead, 0.0);
    }

    /// The sender's tables simulated under one setting give that setting
    /// back, on either placement.
    #[test]
    fn the_rendezvous_completion_is_recovered() {
        let text = r#"
name = "t"
model = "smp"
[node]
memcpy = "1 GB/s"
ranks_per_node = 2
[network]
latency = "2 us"
bandwidth = "1 GB/s"
send_overhead = "0.5 us"
recv_overhead = "0.5 us"
eager_limit = "4 KiB"
[shm]
latency = "1 us"
bandwidth = "5 GB/s"
send_overhead = "0.1 us"
recv_overhead = "0.1 us"
eager_limit = "4 KiB"
"#;
        let machine = LogGpMachine::from_toml_str(text, "t.toml").expect("loads");
        let program = crate::scenario::compile("<loop>", ONE_MESSAGE_LOOP).expect("compiles");
        let sizes = [8192u64, 16384, 65536, 262144];
        let dir = tempfile::tempdir().expect("temp dir");
        for placement in [Placement::OneNode, Placement::TwoNodes] {
            for received in [false, true] {
                let m = placed(&machine, placement, |spec| {
                    spec.node.rendezvous_send_received = received;
                })
                .expect("valid");
                let mut out = String::new();
                for (rank, name) in [(0u32, RENDEZVOUS_SEND), (1, RENDEZVOUS_RECV)] {
                    let times = crate::patterns::simulate_ranks(&program, &m, &sizes, &[rank], 2)
                        .expect("simulates");
                    out.push_str(&format!("#----\n# Benchmarking {name}\n# #processes = 2\n#----\n       #bytes #repetitions      t[usec]   Mbytes/sec\n"));
                    for (n, t) in sizes.iter().zip(&times) {
                        out.push_str(&format!("{n} 10 {:.6} 0.00\n", t * 1e6));
                    }
                }
                let path = dir.path().join("rdv.txt");
                std::fs::write(&path, &out).expect("written");
                let fit = fit_rendezvous(&machine, &path, placement).expect("fits");
                assert_eq!(fit.received, received, "{placement:?}: {fit:?}");
                assert_eq!(fit.points, 4);
                let best = if received {
                    fit.error_received
                } else {
                    fit.error_sent
                };
                assert!(best < 1e-4, "{fit:?}");
            }
        }
    }

    #[test]
    fn call_tables_are_read_by_kind() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("nb.txt");
        let block = |name: &str, t: &str| {
            format!(
                "#----\n# Benchmarking {name}\n# #processes = 2\n#----\n       #bytes #repetitions      t[usec]   Mbytes/sec\n            4         1000        {t}         0.00\n"
            )
        };
        let text = [
            block("PingPong", "0.200"),
            block("Call_allreduce", "0.493"),
            block("Call_reduce_scatter", "0.572"),
        ]
        .concat();
        std::fs::write(&path, &text).expect("written");
        let calls = read_calls(&path).expect("reads");
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].kind, CollKind::Allreduce);
        assert_eq!(calls[1].kind, CollKind::ReduceScatter);
        assert_eq!(calls[1].bytes, 4);
        approx::assert_relative_eq!(calls[0].seconds, 0.493e-6, max_relative = 1e-12);
        // OMB's outputs, one collective each.
        for (text, kind, bytes, usec) in [
            (
                "\n# OSU MPI Broadcast Latency Test v6.1\n# Size         Avg Latency(us)\n1                         0.32\n2                         0.29\n",
                CollKind::Bcast,
                1,
                0.32,
            ),
            (
                "# OSU MPI Reduce_scatter Latency Test v6.1\n# Size         Avg Latency(us)\n4                         0.98\n8                         1.11\n",
                CollKind::ReduceScatter,
                4,
                1.11,
            ),
            (
                "# OSU MPI All-to-Allv Personalized Exchange Latency Test v6.1\n# Size         Avg Latency(us)\n1 0.50\n",
                CollKind::Alltoallv,
                1,
                0.50,
            ),
        ] {
            std::fs::write(&path, text).expect("written");
            let calls = read_calls(&path).expect("reads");
            assert_eq!(calls.len(), 1);
            assert_eq!((calls[0].kind, calls[0].bytes), (kind, bytes));
            approx::assert_relative_eq!(calls[0].seconds, usec * 1e-6, max_relative = 1e-12);
        }
        // IMB-MPI1 2017+: the collective blocks of 2 processes, the
        // smallest size of one element; PingPong and the 4-process block
        // are not calls.
        let imb = |name: &str, procs: u32, rows: &str| {
            format!(
                "#----\n# Benchmarking {name}\n# #processes = {procs}\n#----\n       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n{rows}"
            )
        };
        let text = [
            "#----\n# Benchmarking PingPong\n# #processes = 2\n#----\n       #bytes #repetitions      t[usec]   Mbytes/sec\n            0         1000         0.20         0.00\n".to_owned(),
            imb("Allreduce", 2, "0 1000 0.01 0.01 0.01\n4 1000 0.40 0.50 0.45\n8 1000 0.5 0.5 0.5\n"),
            imb("Allreduce", 4, "0 1000 0.01 0.01 0.01\n4 1000 0.9 1.0 0.95\n"),
            imb("Bcast", 2, "0 1000 0.01 0.01 0.01\n1 1000 0.20 0.30 0.25\n"),
            imb("Reduce_scatter", 2, "0 1000 0.01 0.01 0.01\n4 1000 0.5 0.5 0.5\n8 1000 0.6 0.7 0.65\n"),
        ]
        .concat();
        std::fs::write(&path, &text).expect("written");
        let calls = read_calls(&path).expect("reads");
        let got: Vec<(CollKind, u64, f64)> = calls
            .iter()
            .map(|c| (c.kind, c.bytes, (c.seconds * 1e8).round() / 1e2))
            .collect();
        assert_eq!(
            got,
            vec![
                (CollKind::Allreduce, 4, 0.45),
                (CollKind::Bcast, 1, 0.25),
                (CollKind::ReduceScatter, 4, 0.65)
            ]
        );
        std::fs::write(
            &path,
            "# OSU MPI Barrier Latency Test v6.1\n# Avg Latency(us)\n 0.5\n",
        )
        .expect("written");
        let e = read_calls(&path).expect_err("refused").to_string();
        assert!(e.contains("read by --barrier"), "{e}");
        std::fs::write(&path, block("Call_allreduse", "0.5")).expect("written");
        let e = read_calls(&path).expect_err("refused").to_string();
        assert!(e.contains("no collective is named allreduse"), "{e}");
    }

    fn table(points: &[(u64, f64)]) -> Table {
        let text: String = std::iter::once(
            "# Benchmarking Reduce_local\n#bytes #repetitions t[usec] Mbytes/sec\n".to_owned(),
        )
        .chain(points.iter().map(|(n, us)| format!("{n} 1000 {us} 0\n")))
        .collect();
        parse_reduce_local(&text).expect("parses")
    }

    #[test]
    fn the_reduction_line_is_recovered() {
        // t = 0.1 us + n / (10 GB/s): the fit gives both back.
        let points: Vec<(u64, f64)> = (2..=22)
            .map(|k| {
                let n = 1u64 << k;
                (n, 0.1 + n as f64 / 1e4)
            })
            .collect();
        let fit = fit_reduce(&table(&points)).expect("fits");
        approx::assert_relative_eq!(fit.bandwidth, 1e10, max_relative = 2e-3);
        approx::assert_relative_eq!(fit.overhead, 0.1e-6, max_relative = 1e-2);
        assert!(fit.error.1 < 0.01, "{:?}", fit.error);
        let e = fit_reduce(&table(&[(4, 0.1), (8, 0.1)])).expect_err("no rate");
        assert!(e.to_string().contains("64 KiB"), "{e}");
    }

    #[test]
    fn cache_levels_are_recovered_as_segments() {
        // A copy at three rates, as the development machine's memcpy
        // (VALIDATION.md 4.23): 200 GB/s up to 16 KiB, 45 GB/s from 32 KiB
        // to 512 KiB, 12.5 GB/s from 2 MiB (t in us = n / (rate in MB/s)).
        let rate = |n: u64| match n {
            0..=16384 => 200e3,
            16385..=524288 => 45e3,
            _ => 12.5e3,
        };
        let points: Vec<(u64, f64)> = (6..=24)
            .filter(|k| *k != 20)
            .map(|k| {
                let n = 1u64 << k;
                (n, 0.004 + n as f64 / rate(n))
            })
            .collect();
        let fit = fit_rate_segments(&table(&points)).expect("fits");
        assert_eq!(fit.segments.len(), 3, "{:?}", fit.segments);
        let at = |n: u64| {
            models::RateSegment::find(&fit.segments, n)
                .expect("a segment")
                .seconds(n)
        };
        for (n, us) in &points {
            approx::assert_relative_eq!(at(*n), us * 1e-6, max_relative = 0.02);
        }
        // Each level's rate, from its segment's slope.
        for (segment, expected) in fit.segments.iter().zip([200e9, 45e9, 12.5e9]) {
            approx::assert_relative_eq!(1.0 / segment.per_byte, expected, max_relative = 0.02);
        }
        // The boundaries fall between the levels' measured sizes.
        assert!(
            (16385..=32768).contains(&fit.segments[1].from),
            "{:?}",
            fit.segments
        );
        assert!(
            (524289..=2097152).contains(&fit.segments[2].from),
            "{:?}",
            fit.segments
        );
        assert!(fit_rate_segments(&table(&[(4, 0.1), (8, 0.1)])).is_none());
    }
}
