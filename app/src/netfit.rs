//! Fitting a machine file from ping-pong tables (`parsim calibrate net`):
//! read the inter-node (and intra-node: one socket, two sockets) tables,
//! fit each channel with the `calibrate` crate, and write the machine file
//! with a header that says where every number came from.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use calibrate::{ChannelFit, ChannelOptions, InputOptions, MachineDescription, Table};
use models::Duplex;

use crate::Error;
use crate::patterns::{JointFit, Pattern};

/// Which channel a table is fitted into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FitChannel {
    /// `[network]`: two ranks on two nodes.
    Network,
    /// `[shm]`: two ranks on one node (one socket).
    Shm,
    /// `[socket]`: two ranks on two sockets of one node.
    Socket,
}

impl FitChannel {
    /// The channel's section name: `network`, `shm` or `socket`.
    pub fn name(self) -> &'static str {
        match self {
            FitChannel::Network => "network",
            FitChannel::Shm => "shm",
            FitChannel::Socket => "socket",
        }
    }
}

/// A table of a channel inside a node (`[shm]` or `[socket]`) and how to
/// fit it.
#[derive(Debug, Clone)]
pub struct LocalInput {
    pub path: PathBuf,
    pub input: InputOptions,
    pub channel: ChannelOptions,
    /// The table is a 2-process Alltoall (IMB/PMB, 2 ranks of one node):
    /// its one-way time is taken as t - n/memcpy.
    pub from_alltoall2: bool,
    /// The overheads were not given: take them from the file's
    /// `SendOverhead` table when it has one ([`overhead_from_send`]).
    pub overhead_from_send: bool,
    /// The other patterns measured inside the node (parsim's benchmark
    /// output of `--shm-run` has PingPing, Stream and BiStream), fitted
    /// jointly with the ping-pong as the network's are (`[shm]` only).
    pub patterns: Option<PatternInput>,
}

/// The other patterns of parsim's benchmark output `text` (saved at
/// `path`): its PingPing, Stream and BiStream tables, read as IMB blocks,
/// when it has all three (`--run` and `--shm-run` measure them); `None`
/// for other outputs.
pub fn netbench_patterns(text: &str, path: &Path) -> Option<Vec<(Pattern, PathBuf, InputOptions)>> {
    if !text.contains("# parsim netbench: ") {
        return None;
    }
    let names = [
        (Pattern::PingPing, "PingPing"),
        (Pattern::Stream, "Stream"),
        (Pattern::BiStream, "BiStream"),
    ];
    names
        .iter()
        .all(|(_, name)| {
            text.lines()
                .any(|l| l.trim() == format!("# Benchmarking {name}"))
        })
        .then(|| {
            names
                .iter()
                .map(|(pattern, name)| {
                    (
                        *pattern,
                        path.to_owned(),
                        InputOptions {
                            format: Some(calibrate::Format::Imb),
                            benchmark: Some((*name).into()),
                            ..InputOptions::default()
                        },
                    )
                })
                .collect()
        })
}

/// The other patterns' tables (PingPing, osu_bw, osu_bibw) and how to fit
/// them with the ping-pong.
#[derive(Debug, Clone)]
pub struct PatternInput {
    /// Each pattern's table path and how to read it.
    pub tables: Vec<(Pattern, PathBuf, InputOptions)>,
    /// A duplex given by the user: then it is not fitted.
    pub duplex: Option<Duplex>,
    /// Fit the overhead split too (the user gave neither overheads nor a
    /// fraction).
    pub fit_overheads: bool,
}

/// The multi-pair tables (osu_mbw_mr, k pairs streaming at once) and where
/// their pairs sit.
#[derive(Debug, Clone)]
pub struct MultiPairInput {
    pub tables: Vec<(crate::node_fit::PairPlacement, PathBuf)>,
    /// The network's duplex as given on the command line (else the joint
    /// fit's, else full), as the machine file will have it.
    pub duplex: Option<Duplex>,
    /// `node.sockets`, as the machine file will have it.
    pub sockets: u32,
    /// The ranks per node of the jobs that printed the IMB Uniband tables
    /// given inside a node: their blocks of at most this many processes
    /// ran on one node (block placement).
    pub imb_ranks_per_node: u32,
}

/// Other patterns' paths and tables, and their joint fit with a ping-pong.
pub type PatternFits = (Vec<(PathBuf, Table)>, JointFit);

/// How a level's pattern fit is labelled in the report and the header: a
/// prefix of each table's name and one of each summary line (none for the
/// network's, whose lines came first).
fn level_prefixes(level: crate::patterns::Level) -> (&'static str, &'static str) {
    match level {
        crate::patterns::Level::Network => ("", ""),
        crate::patterns::Level::Shm => ("shm ", "shm: "),
    }
}

/// The fitted channels and the tables they came from.
#[derive(Debug, Clone)]
pub struct Fitted {
    pub input: PathBuf,
    pub table: Table,
    pub network: ChannelFit,
    /// The intra-node table's path, table and fit.
    pub shm: Option<(PathBuf, Table, ChannelFit)>,
    /// The between-sockets table's path, table and fit.
    pub socket: Option<(PathBuf, Table, ChannelFit)>,
    /// The other patterns' paths and tables, and the joint fit (whose `g`
    /// is also in `network`'s segments).
    pub patterns: Option<PatternFits>,
    /// The shared-memory channel's other patterns and their joint fit
    /// (whose `g` and duplex are in `shm`'s fit and the `[shm]` section).
    pub shm_patterns: Option<PatternFits>,
    /// The multi-pair tables' paths and tables, and the node fit.
    pub node: Option<(Vec<(PathBuf, Table)>, crate::node_fit::NodeFit)>,
    /// What a collective call and a reduction cost (`fit_collectives`).
    pub collectives: crate::coll_fit::CollFitted,
    /// Per channel whose table is parsim's benchmark output with a
    /// `SendOverhead` table: the fit of LogGOPS's `O` from it, or why
    /// there is none.
    pub send: Vec<(FitChannel, Result<calibrate::SendFit, String>)>,
    /// Why a channel's `SendOverhead` table could not set its overheads.
    pub overhead_notes: Vec<String>,
    /// Per channel whose table is parsim's benchmark output with a
    /// `PingPongWritten` table (and fitted from its `PingPong`): the
    /// written ping-pong's fit, the channel's `[section.written]`
    /// ([`fit_written`]).
    pub written: WrittenFits,
}

/// The written ping-pong's fit of each channel ([`Fitted::written`]).
#[derive(Debug, Clone, Default)]
pub struct WrittenFits {
    /// `[network.written]`.
    pub network: Option<ChannelFit>,
    /// `[shm.written]`.
    pub shm: Option<ChannelFit>,
    /// `[socket.written]`.
    pub socket: Option<ChannelFit>,
}

/// parsim's benchmark's ping-pong of data each side writes just before
/// each send.
pub const PING_PONG_WRITTEN: &str = "PingPongWritten";

/// The fit of the `PingPongWritten` table of the file at `path`, when the
/// channel `clean` was fitted from its `PingPong` (`input`) and the file
/// has one: the channel as it moves data its sender just wrote
/// ([`models::ChannelParams::written`]). The same eager limit, control
/// messages and overheads as `clean` (the same calls; only the data's
/// place in the caches differs) and its `g`; the segments are the written
/// table's own from the eager limit on, the clean table's points below it
/// (where the sender's core copies the data itself). `None` for any other
/// table (a real IMB or OSU output, a channel already fitted from the
/// written ping-pong); `Some(Err(why))` when the written table cannot be
/// fitted so: the channel then has no written table, and `why` says so.
pub fn fit_written(
    path: &Path,
    input: &InputOptions,
    options: &ChannelOptions,
    clean: &ChannelFit,
    channel: FitChannel,
) -> Result<Option<Result<ChannelFit, String>>, Error> {
    if input.benchmark.as_deref() != Some("PingPong") {
        return Ok(None);
    }
    let text = std::fs::read_to_string(path).map_err(|e| Error::read(path, e))?;
    if !text.contains(&format!("# Benchmarking {PING_PONG_WRITTEN}")) {
        return Ok(None);
    }
    let Some(base) = clean.segments.first() else {
        return Ok(None);
    };
    let mut table = imb_block(&text, path, PING_PONG_WRITTEN)?;
    // Below the eager limit the sender's own core copies the data, from its
    // own cache: the written data costs what the clean does (VALIDATION.md
    // 4.8: within noise here), and the engine never prices eager messages
    // as written. The clean points stand there, so that the sizes the
    // written table adds nothing to cannot refuse the channel's overheads
    // by noise (a 0 B written time below `o_s + o_r`).
    let eager = clean.eager_limit;
    let mut points: Vec<calibrate::Point> = (clean.points.iter())
        .filter(|p| p.bytes < eager)
        .copied()
        .collect();
    points.extend(table.points.iter().filter(|p| p.bytes >= eager).copied());
    table.points = points;
    let options = ChannelOptions {
        overhead: calibrate::Overhead::Fixed(base.send_overhead),
        eager_limit: calibrate::EagerLimit::Fixed(clean.eager_limit),
        control_bytes: clean.control_bytes,
        ..options.clone()
    };
    let mut fit = match calibrate::calibrate_channel(&table, &options) {
        Ok(fit) => fit,
        Err(err) => {
            return Ok(Some(Err(format!(
                "{}: its {PING_PONG_WRITTEN} table does not fit with the channel's eager limit and overheads ({err}), so it has no [{}.written] table: every message is priced with its PingPong",
                channel.name(),
                channel.name()
            ))));
        }
    };
    for segment in &mut fit.segments {
        segment.gap = base.gap;
    }
    fit.overhead_origin = format!(
        "the channel's (o_s = o_r = {:.4} us), the same calls",
        base.send_overhead * 1e6
    );
    Ok(Some(Ok(fit)))
}

/// [`fit_written`] of a channel inside a node fitted by `fit_local` from
/// `input` (none from a 2-process Alltoall, which has no written table).
fn local_written(
    fitted: &Option<(PathBuf, Table, ChannelFit)>,
    input: Option<&LocalInput>,
    channel: FitChannel,
) -> Result<Option<Result<ChannelFit, String>>, Error> {
    match (fitted, input) {
        (Some((path, _, fit)), Some(local)) if !local.from_alltoall2 => {
            fit_written(path, &local.input, &local.channel, fit, channel)
        }
        _ => Ok(None),
    }
}

/// The `SendOverhead` table's name in parsim's benchmark output.
const SEND_OVERHEAD: &str = "SendOverhead";

/// The text of the file at `path` when it is parsim's benchmark output with
/// a `SendOverhead` table; `None` for any other table (a real IMB or OSU
/// output).
fn with_send_overhead(path: &Path) -> Result<Option<String>, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::read(path, e))?;
    Ok(text
        .contains(&format!("# Benchmarking {SEND_OVERHEAD}"))
        .then_some(text))
}

/// The IMB-format table `name` of `text`, the file at `path`.
pub(crate) fn imb_block(text: &str, path: &Path, name: &str) -> Result<Table, Error> {
    calibrate::parse_table(
        text,
        &InputOptions {
            format: Some(calibrate::Format::Imb),
            benchmark: Some(name.to_owned()),
            ..InputOptions::default()
        },
    )
    .map_err(|err| Error::Table {
        path: path.to_owned(),
        err,
    })
}

/// Fits LogGOPS's `O` of `fit` from the `SendOverhead` table of the file at
/// `path` (parsim's benchmark output), bounded by the same run's `Stream`
/// table, and sets it on `fit`; `None` when the file has no such table (a
/// real IMB or OSU output).
fn fit_send(
    path: &Path,
    fit: &mut ChannelFit,
) -> Result<Option<Result<calibrate::SendFit, String>>, Error> {
    let Some(text) = with_send_overhead(path)? else {
        return Ok(None);
    };
    let table = imb_block(&text, path, SEND_OVERHEAD)?;
    let stream = text
        .contains("# Benchmarking Stream")
        .then(|| imb_block(&text, path, "Stream"))
        .transpose()?;
    Ok(Some(
        match calibrate::fit_send_overhead(&table, fit, stream.as_ref()) {
            Ok(send) => {
                fit.send_overhead_per_byte = send.per_byte;
                Ok(send)
            }
            Err(e) => Err(format!("{}: {e}", path.display())),
        },
    ))
}

impl Fitted {
    /// Each level's other patterns with their joint fit, where it has
    /// them: the network's, then `[shm]`'s.
    fn pattern_fits(&self) -> impl Iterator<Item = (crate::patterns::Level, &PatternFits)> {
        use crate::patterns::Level;
        [
            (Level::Network, self.patterns.as_ref()),
            (Level::Shm, self.shm_patterns.as_ref()),
        ]
        .into_iter()
        .filter_map(|(level, fits)| Some((level, fits?)))
    }

    /// A lower bound on one core's copy bandwidth from the tables inside a
    /// node, with what it came from: a message through shared memory is at
    /// least one copy of its bytes by one core (two for an eager protocol
    /// through shared cells, one for CMA, KNEM or XPMEM single copy), so a
    /// copy runs at least as fast as the intra-node ping-pong's largest
    /// messages (`1 / (G + latency per byte)` of its last segment), and,
    /// in k pairs streaming inside a node, as fast as one pair's share of
    /// the aggregate at any size (each pair's bytes pass through its own
    /// two cores). The largest of these; `None` without an intra-node
    /// table, or for a 2-process Alltoall table (`from_alltoall2`: its fit
    /// already took a copy out).
    pub fn memcpy_lower_bound(&self, from_alltoall2: bool) -> Option<(f64, String)> {
        let mut best: Option<(f64, String)> = None;
        let mut consider = |rate: f64, what: String| {
            if rate.is_finite() && rate > 0.0 && best.as_ref().is_none_or(|(b, _)| rate > *b) {
                best = Some((rate, what));
            }
        };
        if let Some((path, _, shm)) = &self.shm
            && !from_alltoall2
            && let Some(last) = shm.segments.last()
        {
            let per_byte = last.gap_per_byte + last.latency_per_byte;
            consider(
                1.0 / per_byte,
                format!(
                    "the intra-node table's largest messages ({})",
                    path.display()
                ),
            );
        }
        if let Some((tables, fit)) = &self.node {
            for ((path, table), t) in tables.iter().zip(&fit.tables) {
                if t.placement != crate::node_fit::PairPlacement::Shm {
                    continue;
                }
                for p in table.points.iter().filter(|p| p.bytes > 0) {
                    consider(
                        p.bytes as f64 / p.seconds / f64::from(t.pairs),
                        format!(
                            "one pair's share of {} at {} pairs inside one node, {} B ({})",
                            t.bench.name(),
                            t.pairs,
                            p.bytes,
                            path.display()
                        ),
                    );
                }
            }
        }
        best
    }

    /// The CSV rows every table read left out for an empty cell, each as
    /// `PATH: line N: ...` (warnings for the user).
    pub fn skipped_rows(&self) -> Vec<String> {
        let mut tables: Vec<(&Path, &Table)> = vec![(&self.input, &self.table)];
        for (path, table, _) in self.shm.iter().chain(&self.socket) {
            tables.push((path, table));
        }
        for (_, (pattern_tables, _)) in self.pattern_fits() {
            tables.extend(pattern_tables.iter().map(|(p, t)| (p.as_path(), t)));
        }
        if let Some((node_tables, _)) = &self.node {
            tables.extend(node_tables.iter().map(|(p, t)| (p.as_path(), t)));
        }
        tables
            .iter()
            .flat_map(|(path, table)| {
                table
                    .skipped
                    .iter()
                    .map(move |s| format!("{}: {s}", path.display()))
            })
            .collect()
    }
}

/// What the machine file says beyond the fits.
#[derive(Debug, Clone)]
pub struct MachineInfo {
    pub name: String,
    /// Default: "fitted by parsim calibrate net from FILE".
    pub description: Option<String>,
    /// The command line that made the file, its words already quoted.
    pub command: Vec<String>,
    pub ranks_per_node: u32,
    /// `node.sockets` (1 leaves the key out).
    pub sockets: u32,
    pub cpu_rate: f64,
    /// node.memcpy, bytes/s, and where it came from.
    pub memcpy: f64,
    pub memcpy_origin: String,
    /// `node.timer`, seconds per read of the clock, and where it came from
    /// (`None`: not measured, left out).
    pub timer: Option<(f64, String)>,
    /// The network's duplex as given on the command line; `None`: the
    /// crossing fit's, or full.
    pub duplex: Option<Duplex>,
    /// The shared-memory channel's duplex per rank as given on the command
    /// line; `None`: its pattern fit's, or full.
    pub shm_duplex: Option<Duplex>,
    /// `[collectives]` entries.
    pub collectives: Vec<(String, String)>,
    /// Extra lines for the header.
    pub notes: Vec<String>,
}

/// Reads a benchmark table (IMB/PMB, OSU or CSV) from `path`.
pub fn read_table(path: &Path, options: &InputOptions) -> Result<Table, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::read(path, e))?;
    calibrate::parse_table(&text, options).map_err(|err| Error::Table {
        path: path.to_owned(),
        err,
    })
}

/// Reads and fits a table of a channel inside a node (`[shm]` or
/// `[socket]`, by `channel`): a ping-pong, or a 2-process Alltoall less the
/// local copy at `memcpy`.
/// A channel inside a node as fitted: its table's path, the table, the
/// fit, and its other patterns' tables with their joint fit.
type LocalFit = ((PathBuf, Table, ChannelFit), Option<PatternFits>);

fn fit_local(
    local: &LocalInput,
    channel: FitChannel,
    memcpy: f64,
    notes: &mut Vec<String>,
) -> Result<LocalFit, Error> {
    let mut t = read_table(&local.path, &local.input)?;
    if local.from_alltoall2 {
        t = calibrate::alltoall2_to_oneway(&t, memcpy).map_err(|err| Error::Alltoall {
            path: local.path.clone(),
            err,
        })?;
    }
    let t_min = t.points.first().map_or(0.0, |p| p.seconds);
    let measured_o = if local.overhead_from_send && !local.from_alltoall2 {
        match overhead_from_send(&local.path, t_min)? {
            Some(Ok(o)) => Some(o),
            Some(Err(why)) => {
                notes.push(format!("{}: {why}", channel.name()));
                None
            }
            None => None,
        }
    } else {
        None
    };
    let options = match &measured_o {
        Some((o, _)) => ChannelOptions {
            overhead: calibrate::Overhead::Fixed(*o),
            ..local.channel.clone()
        },
        None => local.channel.clone(),
    };
    let fit_channel = |options: &ChannelOptions| {
        calibrate::calibrate_channel(&t, options).map_err(|err| Error::Fit {
            path: local.path.clone(),
            channel,
            err,
        })
    };
    let mut fit = fit_channel(&options)?;
    let patterns = match (&local.patterns, channel) {
        (Some(p), FitChannel::Shm) => {
            let out = fit_patterns(
                &t,
                &fit,
                &PatternFitInput {
                    options: &options,
                    fit_channel: &fit_channel,
                    overheads_fixed: measured_o.is_some(),
                    patterns: p,
                    level: crate::patterns::Level::Shm,
                    bound_by_pairs: &|_| Vec::new(),
                },
            )?;
            fit = out.fit;
            Some((out.tables, out.joint))
        }
        _ => None,
    };
    if let Some((_, origin)) = measured_o {
        fit.overhead_origin = origin;
    }
    Ok(((local.path.clone(), t, fit), patterns))
}

/// The tables besides the network's ping-pong, each optional.
#[derive(Debug, Clone, Copy, Default)]
pub struct Others<'a> {
    /// The intra-node table (`[shm]`).
    pub shm: Option<&'a LocalInput>,
    /// The between-sockets table (`[socket]`).
    pub socket: Option<&'a LocalInput>,
    /// PingPing, osu_bw, osu_bibw.
    pub patterns: Option<&'a PatternInput>,
    /// osu_mbw_mr at k pairs.
    pub multi_pair: Option<&'a MultiPairInput>,
    /// The network's overheads were not given: take them from the input's
    /// `SendOverhead` table when it has one ([`overhead_from_send`]).
    pub overhead_from_send: bool,
}

/// The overheads a `SendOverhead` table gives: `o_s` in seconds and where
/// it came from, or why the table cannot be used.
pub type MeasuredOverhead = Result<(f64, String), String>;

/// The largest message whose send call is taken as `o_s` alone: its copy
/// (at most a few ns at 0.1-1 ns/B) is noise beside it.
pub const SMALL_SEND: u64 = 64;

/// LogP's `o_s` where parsim's benchmark measured it: the median send call
/// of the `SendOverhead` sizes up to [`SMALL_SEND`] in the file at `path`
/// (`MPI_Isend` + `MPI_Wait` while the receiver computes: the send
/// overhead as Culler et al., IEEE Micro 1996, measure it), for a channel
/// whose ping-pong's smallest time is `t_min`; `o_r` is taken equal (LogP's
/// one `o`). `None` without such a table; `Some(Err(why))` when it cannot
/// be used (no small size, or overheads above
/// [`crate::patterns::MAX_OVERHEAD_FRACTION`] of `t_min`).
pub fn overhead_from_send(path: &Path, t_min: f64) -> Result<Option<MeasuredOverhead>, Error> {
    let Some(text) = with_send_overhead(path)? else {
        return Ok(None);
    };
    let table = imb_block(&text, path, SEND_OVERHEAD)?;
    let mut small: Vec<f64> = table
        .points
        .iter()
        .filter(|p| p.bytes <= SMALL_SEND)
        .map(|p| p.seconds)
        .collect();
    if small.is_empty() {
        return Ok(Some(Err(format!(
            "{}: its SendOverhead table has no size up to {SMALL_SEND} B",
            path.display()
        ))));
    }
    let count = small.len();
    let o = crate::validate::median(&mut small);
    let share = 2.0 * o / t_min;
    // Also refuses a NaN share (a ping-pong of 0 s).
    if share.is_nan() || share > crate::patterns::MAX_OVERHEAD_FRACTION {
        return Ok(Some(Err(format!(
            "the send call of up to {SMALL_SEND} B, {:.4} us, would make o_s + o_r {:.0}% of the ping-pong's {:.4} us (above {:.0}%): kept the split below",
            o * 1e6,
            share * 100.0,
            t_min * 1e6,
            crate::patterns::MAX_OVERHEAD_FRACTION * 100.0
        ))));
    }
    Ok(Some(Ok((
        o,
        format!(
            "o_s = o_r = {:.4} us: the send call of 0-{SMALL_SEND} B measured (SendOverhead, the median of {count} sizes), o_r taken equal (LogP's o); o_s + o_r = {:.0}% of the 0 B time",
            o * 1e6,
            share * 100.0
        ),
    ))))
}

/// How to fit one channel jointly with its other patterns.
struct PatternFitInput<'a> {
    /// The channel's ping-pong options (overheads as given or measured).
    options: &'a ChannelOptions,
    /// Fits the channel's ping-pong with other options.
    fit_channel: &'a dyn Fn(&ChannelOptions) -> Result<ChannelFit, Error>,
    /// The overheads were measured (`SendOverhead`): no split is searched.
    overheads_fixed: bool,
    patterns: &'a PatternInput,
    /// The level whose channel the patterns ran over.
    level: crate::patterns::Level,
    /// What the multi-pair tables bound in a fit's segments (network only).
    bound_by_pairs: &'a dyn Fn(&mut ChannelFit) -> Vec<String>,
}

/// A channel fitted jointly with its other patterns: the chosen ping-pong
/// fit with the joint fit's `g`, the stream's `G` and the segments' own
/// duplex in it, the tables read, the joint fit, and the multi-pair
/// bound's notes of the chosen split.
struct PatternOutcome {
    fit: ChannelFit,
    tables: Vec<(PathBuf, Table)>,
    joint: JointFit,
    pair_notes: Vec<String>,
}

/// The joint fit of a channel's ping-pong `pingpong` (fitted as `base`
/// with the given overheads) and its other patterns: the overhead split
/// (searched unless the overheads were given or measured), `g`, the
/// duplex and the stream's `G` (`crate::patterns::fit_joint`), each
/// pattern simulated on a machine that runs its two ranks over the level's
/// channel.
fn fit_patterns(
    pingpong: &Table,
    base: &ChannelFit,
    input: &PatternFitInput<'_>,
) -> Result<PatternOutcome, Error> {
    let p = input.patterns;
    let tables = p
        .tables
        .iter()
        .map(|(_, path, options)| read_table(path, options))
        .collect::<Result<Vec<_>, Error>>()?;
    use crate::patterns::OVERHEAD_FRACTION_STEP as STEP;
    use crate::patterns::{MAX_OVERHEAD_FRACTION, MIN_OVERHEAD_FRACTION};
    // The overhead splits to try: the given one, or 10%..90% of the
    // smallest time in 5% steps (the default 40% among them).
    let mut fits = Vec::new();
    let mut default_split = 0;
    if p.fit_overheads && !input.overheads_fixed {
        let steps = ((MAX_OVERHEAD_FRACTION - MIN_OVERHEAD_FRACTION) / STEP).round() as u32;
        for k in 0..=steps {
            let fraction = MIN_OVERHEAD_FRACTION + f64::from(k) * STEP;
            if (fraction - calibrate::channel::DEFAULT_OVERHEAD_FRACTION).abs() < STEP / 2.0 {
                default_split = fits.len();
            }
            let options = ChannelOptions {
                overhead: calibrate::Overhead::Fraction(fraction),
                ..input.options.clone()
            };
            fits.push((fraction, (input.fit_channel)(&options)?));
        }
    } else {
        fits.push((f64::NAN, base.clone()));
    }
    // A stream's rate per byte, where it is above the ping-pong's.
    let stream = p
        .tables
        .iter()
        .zip(&tables)
        .find(|((pattern, _, _), _)| *pattern == Pattern::Stream)
        .map(|(_, t)| t);
    // Per split: what the stream changed in its segments.
    let mut stream_notes: Vec<Vec<String>> = fits
        .iter_mut()
        .map(|(_, fit)| {
            stream.map_or_else(Vec::new, |s| {
                crate::patterns::apply_stream(fit, s, "osu_bw")
            })
        })
        .collect();
    let mut split_pair_notes: Vec<Vec<String>> = fits
        .iter_mut()
        .map(|(_, fit)| (input.bound_by_pairs)(fit))
        .collect();
    let splits = fits
        .iter()
        .map(|(fraction, fit)| {
            Ok(crate::patterns::Split {
                fraction: *fraction,
                machine: match input.level {
                    crate::patterns::Level::Network => pingpong_machine(fit)?,
                    crate::patterns::Level::Shm => shm_pingpong_machine(fit)?,
                },
            })
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let named: Vec<(Pattern, &Table)> = p
        .tables
        .iter()
        .zip(&tables)
        .map(|((pattern, _, _), t)| (*pattern, t))
        .collect();
    let mut joint = crate::patterns::fit_joint(
        &splits,
        &crate::patterns::Tables {
            pingpong,
            patterns: &named,
            fixed_duplex: p.duplex,
            default_split,
            level: input.level,
        },
    )?;
    joint.fit.stream_notes = stream_notes.swap_remove(joint.split);
    let pair_notes = split_pair_notes.swap_remove(joint.split);
    let mut fit = fits.swap_remove(joint.split).1;
    for segment in &mut fit.segments {
        segment.gap = joint.fit.gap;
    }
    for own in &joint.fit.segment_duplex {
        if let Some(segment) = fit.segments.get_mut(own.index) {
            segment.duplex = Some(own.duplex);
        }
    }
    if let Some(fraction) = joint.fit.overhead_fraction {
        fit.overhead_origin = format!(
            "o_s + o_r = {:.0}% of the 0 B time, fitted to PingPong and the other patterns together",
            fraction * 100.0
        );
    }
    let paths = p.tables.iter().map(|(_, path, _)| path.clone());
    Ok(PatternOutcome {
        fit,
        tables: paths.zip(tables).collect(),
        joint: joint.fit,
        pair_notes,
    })
}

/// Reads and fits the network table at `input` and, when given, the
/// shared-memory one and the between-sockets one (the same way), the other
/// patterns with the ping-pong, and the node's shared resources.
pub fn fit(
    input: &Path,
    input_options: &InputOptions,
    network_options: &ChannelOptions,
    others: Others<'_>,
    memcpy: f64,
) -> Result<Fitted, Error> {
    let Others {
        shm,
        socket,
        patterns,
        multi_pair,
        overhead_from_send: from_send,
    } = others;
    let table = read_table(input, input_options)?;
    let fit_network = |options: &ChannelOptions| {
        calibrate::calibrate_channel(&table, options).map_err(|err| Error::Fit {
            path: input.to_owned(),
            channel: FitChannel::Network,
            err,
        })
    };
    let mut overhead_notes = Vec::new();
    let t_min = table.points.first().map_or(0.0, |p| p.seconds);
    let measured_o = match from_send.then(|| overhead_from_send(input, t_min)) {
        Some(found) => match found? {
            Some(Ok(o)) => Some(o),
            Some(Err(why)) => {
                overhead_notes.push(format!("network: {why}"));
                None
            }
            None => None,
        },
        None => None,
    };
    let network_options = &match &measured_o {
        Some((o, _)) => ChannelOptions {
            overhead: calibrate::Overhead::Fixed(*o),
            ..network_options.clone()
        },
        None => network_options.clone(),
    };
    let mut network = fit_network(network_options)?;
    let multi = match multi_pair {
        Some(m) => read_multi_pair(m)?,
        None => Vec::new(),
    };
    // k pairs streaming through one adapter are spaced at least n·G per
    // message of the aggregate, as one stream is (`apply_stream`): a
    // ping-pong slope above that bound is not the adapter's.
    let bound_by_pairs = |fit: &mut ChannelFit| -> Vec<String> {
        multi
            .iter()
            .filter(|m| m.placement == crate::node_fit::PairPlacement::Network)
            .flat_map(|m| {
                crate::patterns::apply_stream(
                    fit,
                    &m.table,
                    &format!("osu_mbw_mr at {} pairs", m.pairs),
                )
            })
            .collect()
    };
    let mut pair_notes = Vec::new();
    let patterns = match patterns {
        None => None,
        Some(p) => {
            let out = fit_patterns(
                &table,
                &network,
                &PatternFitInput {
                    options: network_options,
                    fit_channel: &fit_network,
                    overheads_fixed: measured_o.is_some(),
                    patterns: p,
                    level: crate::patterns::Level::Network,
                    bound_by_pairs: &bound_by_pairs,
                },
            )?;
            pair_notes = out.pair_notes;
            network = out.fit;
            Some((out.tables, out.joint))
        }
    };
    if let Some((_, origin)) = measured_o {
        network.overhead_origin = origin;
    }
    // O after the joint fit: it keeps the chosen split's `o_s`. The node's
    // fit below simulates its senders with it.
    let mut send = Vec::new();
    if let Some(s) = fit_send(input, &mut network)? {
        send.push((FitChannel::Network, s));
    }
    let (mut shm, shm_patterns) = match shm
        .map(|s| fit_local(s, FitChannel::Shm, memcpy, &mut overhead_notes))
        .transpose()?
    {
        Some((fit, patterns)) => (Some(fit), patterns),
        None => (None, None),
    };
    let mut socket = socket
        .map(|s| fit_local(s, FitChannel::Socket, memcpy, &mut overhead_notes))
        .transpose()?
        .map(|(fit, _)| fit);
    for (channel, local) in [
        (FitChannel::Shm, &mut shm),
        (FitChannel::Socket, &mut socket),
    ] {
        if let Some((path, _, fit)) = local
            && let Some(s) = fit_send(path, fit)?
        {
            send.push((channel, s));
        }
    }
    if patterns.is_none() {
        pair_notes = bound_by_pairs(&mut network);
    }
    let node = match multi_pair {
        None => None,
        Some(m) => {
            let duplex = m
                .duplex
                .or_else(|| patterns.as_ref().map(|(_, fit)| fit.duplex));
            let (tables, mut fit) = fit_multi_pair(
                multi,
                &network,
                shm.as_ref().map(|s| &s.2),
                socket.as_ref().map(|s| (&s.2, m.sockets)),
                (duplex, shm_patterns.as_ref().map(|(_, fit)| fit.duplex)),
            )?;
            fit.notes = pair_notes;
            Some((tables, fit))
        }
    };
    // A written table that does not fit is said, not fatal.
    let mut kept = |found: Option<Result<ChannelFit, String>>| match found {
        Some(Ok(fit)) => Some(fit),
        Some(Err(why)) => {
            overhead_notes.push(why);
            None
        }
        None => None,
    };
    let written = WrittenFits {
        network: kept(fit_written(
            input,
            input_options,
            network_options,
            &network,
            FitChannel::Network,
        )?),
        shm: kept(local_written(&shm, others.shm, FitChannel::Shm)?),
        socket: kept(local_written(&socket, others.socket, FitChannel::Socket)?),
    };
    Ok(Fitted {
        written,
        input: input.to_owned(),
        table,
        network,
        shm,
        socket,
        patterns,
        shm_patterns,
        node,
        collectives: crate::coll_fit::CollFitted::default(),
        send,
        overhead_notes,
    })
}

/// A multi-pair table as read: where its pairs sit, how many, the
/// benchmark, its path.
struct MultiPairTable {
    placement: crate::node_fit::PairPlacement,
    pairs: u32,
    bench: crate::node_fit::MultiPairBench,
    path: PathBuf,
    table: Table,
}

/// The IMB Uniband blocks of a multi-pair input, one table each: inside a
/// node, every block of at most `imb_ranks_per_node` processes (IMB runs a
/// block on ranks 0..np-1 and pairs rank i with i + np/2, so with block
/// placement such a block never leaves the first node); between nodes, the
/// block of the most processes (the whole job, which IMB's pairing puts
/// across two nodes when they hold half of it each).
fn read_imb_uniband(
    placement: crate::node_fit::PairPlacement,
    path: &Path,
    text: &str,
    imb_ranks_per_node: u32,
) -> Result<Vec<MultiPairTable>, Error> {
    use crate::node_fit::PairPlacement;
    let blocks = calibrate::imb_blocks(text).map_err(|err| Error::Table {
        path: path.to_owned(),
        err,
    })?;
    let mut counts: Vec<u32> = (blocks.iter())
        .filter(|b| (b.benchmark.as_deref()).is_some_and(|n| n.eq_ignore_ascii_case("Uniband")))
        .filter_map(|b| b.processes)
        .filter(|&np| np >= 2 && np % 2 == 0)
        .collect();
    counts.sort_unstable();
    counts.dedup();
    let chosen: Vec<u32> = match placement {
        PairPlacement::Shm => (counts.iter().copied())
            .filter(|&np| np <= imb_ranks_per_node)
            .collect(),
        PairPlacement::Network => counts.last().copied().into_iter().collect(),
    };
    if chosen.is_empty() {
        let have: Vec<String> = counts.iter().map(u32::to_string).collect();
        return Err(Error::Input(format!(
            "{}: no IMB Uniband block fits pairs {} (its blocks: {} processes{})",
            path.display(),
            placement.describe(),
            if have.is_empty() {
                "none".to_owned()
            } else {
                have.join(", ")
            },
            match placement {
                PairPlacement::Shm => format!(
                    "; inside a node a block must have at most {imb_ranks_per_node}, \
                     the job's ranks per node (--imb-ppn)"
                ),
                PairPlacement::Network => String::new(),
            }
        )));
    }
    chosen
        .into_iter()
        .map(|np| {
            let options = InputOptions {
                format: Some(calibrate::Format::Imb),
                benchmark: Some("Uniband".into()),
                processes: Some(np),
                ..InputOptions::default()
            };
            let table = calibrate::parse_table(text, &options).map_err(|err| Error::Table {
                path: path.to_owned(),
                err,
            })?;
            Ok(MultiPairTable {
                placement,
                pairs: np / 2,
                bench: crate::node_fit::MultiPairBench::ImbUniband,
                path: path.to_owned(),
                table,
            })
        })
        .collect()
}

/// Reads the multi-pair tables: osu_mbw_mr as OMB prints it, with its pair
/// count, or IMB-MPI1's Uniband output ([`read_imb_uniband`]).
fn read_multi_pair(input: &MultiPairInput) -> Result<Vec<MultiPairTable>, Error> {
    let mut tables = Vec::new();
    for (placement, path) in &input.tables {
        let text = std::fs::read_to_string(path).map_err(|e| Error::read(path, e))?;
        if calibrate::Format::detect(&text) == Some(calibrate::Format::Imb) {
            tables.extend(read_imb_uniband(
                *placement,
                path,
                &text,
                input.imb_ranks_per_node,
            )?);
            continue;
        }
        let count = crate::node_fit::pairs_in(&text).ok_or_else(|| {
            Error::Input(format!(
                "{}: no pair count (osu_mbw_mr prints `# [ pairs: N ] [ window size: 64 ]`)",
                path.display()
            ))
        })?;
        let options = InputOptions {
            format: Some(calibrate::Format::OsuBw),
            ..InputOptions::default()
        };
        let table = calibrate::parse_table(&text, &options).map_err(|err| Error::Table {
            path: path.clone(),
            err,
        })?;
        tables.push(MultiPairTable {
            placement: *placement,
            pairs: count,
            bench: crate::node_fit::MultiPairBench::OsuMbwMr,
            path: path.clone(),
            table,
        });
    }
    Ok(tables)
}

/// Fits the node's shared resources to the multi-pair tables on the
/// machine the point-to-point fits make.
fn fit_multi_pair(
    tables: Vec<MultiPairTable>,
    network: &ChannelFit,
    shm: Option<&ChannelFit>,
    socket: Option<(&ChannelFit, u32)>,
    duplex: (Option<Duplex>, Option<Duplex>),
) -> Result<(Vec<(PathBuf, Table)>, crate::node_fit::NodeFit), Error> {
    let machine = fit_machine(network, shm, socket, duplex, "point-to-point")?;
    let multi: Vec<crate::node_fit::MultiPair<'_>> = tables
        .iter()
        .map(|t| crate::node_fit::MultiPair {
            placement: t.placement,
            pairs: t.pairs,
            bench: t.bench,
            table: &t.table,
        })
        .collect();
    let fit = crate::node_fit::fit_node(&machine, &multi)?;
    Ok((tables.into_iter().map(|t| (t.path, t.table)).collect(), fit))
}

/// The network fit as a machine of one rank per node, for fitting what the
/// ping-pong cannot show.
fn pingpong_machine(network: &ChannelFit) -> Result<models::LogGpMachine, Error> {
    fit_machine(network, None, None, (None, None), "ping-pong")
}

/// A shared-memory fit as a machine of two ranks on one node, which run
/// its patterns over `[shm]` (the network level is the same fit, unused).
fn shm_pingpong_machine(shm: &ChannelFit) -> Result<models::LogGpMachine, Error> {
    fit_machine(
        shm,
        Some(shm),
        None,
        (None, None),
        "shared-memory ping-pong",
    )
}

/// The fitted channels as a machine (one rank per node, or two with a
/// shared-memory channel; `socket` with its socket count), through the
/// machine file it would be written as, for simulating patterns on it.
fn fit_machine(
    network: &ChannelFit,
    shm: Option<&ChannelFit>,
    socket: Option<(&ChannelFit, u32)>,
    (duplex, shm_duplex): (Option<Duplex>, Option<Duplex>),
    what: &str,
) -> Result<models::LogGpMachine, Error> {
    let text = calibrate::write_machine(&MachineDescription {
        name: what.to_owned(),
        description: String::new(),
        ranks_per_node: if shm.is_some() { 2 } else { 1 },
        cpu_rate: 1.0,
        memcpy: 1e9,
        network,
        shm,
        socket: socket.map(|(fit, _)| fit),
        sockets: socket.map_or(1, |(_, sockets)| sockets),
        header: Vec::new(),
        network_duplex: duplex,
        shm_duplex,
        collectives: Vec::new(),
        node_gap: 0.0,
        shm_node_bandwidth: None,
        reduce_bandwidth: None,
        reduce_overhead: 0.0,
        memcpy_segments: Vec::new(),
        reduce_segments: Vec::new(),
        timer: 0.0,
        rendezvous_send_received: false,
        flag_latency: None,
        datatype: models::DatatypeCosts::default(),
        page_fault: None,
        written: calibrate::Written::default(),
    })
    .map_err(Error::MachineFile)?;
    models::LogGpMachine::from_toml_str(&text, &format!("<{what} fit>"))
        .map_err(|e| Error::Input(format!("the {what} fit does not make a machine: {e}")))
}

impl Fitted {
    /// What each channel's `SendOverhead` table gave (LogGOPS's `O`), one
    /// line each; channels without one say nothing.
    pub fn describe_send(&self) -> Vec<String> {
        let us = |t: f64| format!("{:.3} us", t * 1e6);
        let notes = self.overhead_notes.iter().cloned();
        self.send
            .iter()
            .map(|(channel, fit)| match fit {
                Ok(s) => {
                    let (after, before) = (s.summary(), s.summary_before());
                    format!(
                        "{}: O = {:.4} ns per byte of an eager send's CPU time beyond o_s (LogGOPS), fitted to SendOverhead ({} sizes below the eager limit){}: the send call's model vs measured median |error| {:.1}%, max {:.1}% (without O: {:.1}%, {:.1}%); the measured line's intercept {} against o_s {}.",
                        channel.name(),
                        s.per_byte * 1e9,
                        after.points,
                        match s.stream_bound {
                            Some(_) => format!(
                                ", bounded by the slope of the same run's Stream over the eager sizes (its sender spends o_s + O·n per message; the send calls' slope {:.4} ns/B)",
                                s.slope * 1e9
                            ),
                            None if s.held_at_zero => {
                                ", held at 0 (the time fell with the size)".to_owned()
                            }
                            None => String::new(),
                        },
                        after.median * 100.0,
                        after.max * 100.0,
                        before.median * 100.0,
                        before.max * 100.0,
                        us(s.intercept),
                        us(s.send_overhead),
                    )
                }
                Err(why) => format!("{}: O not fitted: {why}", channel.name()),
            })
            .chain(notes)
            .collect()
    }

    /// The fit report: per channel the table, the segments and their error.
    pub fn report(&self) -> String {
        let mut report = String::new();
        let _ = writeln!(
            report,
            "network: {} ({}, {}, {} points)",
            self.input.display(),
            self.table.format,
            self.table.origin,
            self.table.points.len()
        );
        report.push_str(&calibrate::report::text("network", &self.network));
        for (label, local) in [("shm", &self.shm), ("socket", &self.socket)] {
            if let Some((path, t, fit)) = local {
                let _ = writeln!(
                    report,
                    "\n{label}: {} ({}, {}, {} points)",
                    path.display(),
                    t.format,
                    t.origin,
                    t.points.len()
                );
                report.push_str(&calibrate::report::text(label, fit));
            }
        }
        for (level, (tables, fit)) in self.pattern_fits() {
            let (name, line) = level_prefixes(level);
            for ((path, t), p) in tables.iter().zip(&fit.patterns) {
                let _ = writeln!(
                    report,
                    "\n{name}{}: {} ({}, {}, {} points)",
                    p.pattern.name(),
                    path.display(),
                    t.format,
                    t.origin,
                    t.points.len()
                );
            }
            for l in fit.describe() {
                let _ = writeln!(report, "{line}{l}");
            }
        }
        if let Some((tables, fit)) = &self.node {
            for ((path, t), p) in tables.iter().zip(&fit.tables) {
                let _ = writeln!(
                    report,
                    "\n{}, {} pairs {}: {} ({}, {} points)",
                    p.bench.name(),
                    p.pairs,
                    p.placement.describe(),
                    path.display(),
                    t.origin,
                    t.points.len()
                );
            }
            report.push_str(&fit.describe());
        }
        let send = self.describe_send();
        if !send.is_empty() {
            report.push('\n');
            for line in send {
                let _ = writeln!(report, "{line}");
            }
        }
        let collectives = self.collectives.describe();
        if !collectives.is_empty() {
            report.push('\n');
            for line in collectives {
                let _ = writeln!(report, "{line}");
            }
        }
        report
    }

    /// The machine this fit writes (so far), on which a table of `path`
    /// measured with its ranks placed by `placement` is simulated; `what`
    /// names the table's content in the error when it was measured on one
    /// node and there is no shared-memory channel to simulate it on.
    fn fitting_machine(
        &self,
        m: &MachineInfo,
        path: &Path,
        placement: crate::coll_fit::Placement,
        what: &str,
    ) -> Result<models::LogGpMachine, Error> {
        if placement == crate::coll_fit::Placement::OneNode && self.shm.is_none() {
            return Err(Error::Input(format!(
                "{}: {what} simulated on the shared-memory channel, and there is no shared-memory table",
                path.display()
            )));
        }
        let file = self.machine_file(m, "(fitting)")?;
        models::LogGpMachine::from_toml_str(&file, "<fitted machine>")
            .map_err(|e| Error::Input(format!("the fit does not make a machine: {e}")))
    }

    /// Fits the reduction to the Reduce_local table, then the collective
    /// call overhead to the 2-rank barrier table on the machine this fit
    /// writes with `m` (its library, its reduction).
    pub fn fit_collectives(
        &mut self,
        tables: &crate::coll_fit::CollTables,
        m: &MachineInfo,
    ) -> Result<(), Error> {
        use crate::coll_fit;
        // First: the barrier below is simulated with it where the library
        // runs its collectives through shared memory.
        if let Some(path) = &tables.flag {
            self.collectives.flag = Some((path.clone(), coll_fit::read_flag_latency(path)?));
        }
        if let Some(path) = &tables.datatype {
            self.collectives.datatype = Some((path.clone(), coll_fit::read_datatype(path)?));
        }
        if let Some(path) = &tables.page_fault {
            self.collectives.page_fault = Some((path.clone(), coll_fit::read_page_fault(path)?));
        }
        if let Some(path) = &tables.reduce_local {
            let table = coll_fit::read_reduce_local(path)?;
            self.collectives.reduce = Some((path.clone(), coll_fit::fit_reduce(&table)?));
        }
        if let Some(path) = &tables.memcpy {
            self.collectives.memcpy = Some((path.clone(), coll_fit::read_memcpy(path)?));
        }
        // Before the barrier and the calls: their simulations then run
        // with it.
        if let Some((path, placement)) = &tables.rendezvous {
            let machine = self.fitting_machine(m, path, *placement, "messages on one node are")?;
            self.collectives.rendezvous = Some((
                path.clone(),
                coll_fit::fit_rendezvous(&machine, path, *placement)?,
            ));
        }
        if let Some((path, placement)) = &tables.barrier {
            let machine = self.fitting_machine(m, path, *placement, "a barrier on one node is")?;
            let text = std::fs::read_to_string(path).map_err(|e| Error::read(path, e))?;
            let measured = coll_fit::barrier_seconds(&text, path)?;
            self.collectives.call = Some((
                path.clone(),
                coll_fit::fit_call_overhead(&machine, measured, *placement)?,
            ));
        }
        if !tables.calls.is_empty() {
            let mut calls: Vec<coll_fit::MeasuredCall> = Vec::new();
            let mut from: Vec<(sim_core::ir::CollKind, &Path)> = Vec::new();
            let placement = tables.calls[0].1;
            for (path, p) in &tables.calls {
                if *p != placement {
                    return Err(Error::Input(format!(
                        "{}: the call tables were measured on one node and on two: give them placed alike",
                        path.display()
                    )));
                }
                let found = coll_fit::read_calls(path)?;
                if found.is_empty() {
                    return Err(Error::Input(format!(
                        "{}: no collective call of 2 ranks (parsim's Call_<kind> tables, an OMB collective latency output, or IMB collective blocks of 2 processes)",
                        path.display()
                    )));
                }
                for call in found {
                    if let Some((_, first)) = from.iter().find(|(k, _)| *k == call.kind) {
                        return Err(Error::Input(format!(
                            "{} is measured twice, in {} and in {}: give one",
                            call.kind.name(),
                            first.display(),
                            path.display()
                        )));
                    }
                    from.push((call.kind, path));
                    calls.push(call);
                }
            }
            if !calls.is_empty() {
                // On the machine as it will be written, the barrier's
                // overhead the default.
                let machine = self.fitting_machine(
                    m,
                    &tables.calls[0].0,
                    placement,
                    "calls on one node are",
                )?;
                self.collectives.kinds = Some((
                    tables.calls.iter().map(|(p, _)| p.clone()).collect(),
                    coll_fit::fit_kind_overheads(&machine, &calls, placement)?,
                ));
            }
        }
        Ok(())
    }

    /// The machine file (TOML), its header recording the command, the
    /// tables and where the node's numbers came from; `today` is the date
    /// it names.
    pub fn machine_file(&self, m: &MachineInfo, today: &str) -> Result<String, Error> {
        let name = &m.name;
        let mut header = vec![
            format!("{name}: a machine fitted by `parsim calibrate net` on {today}."),
            "Reproduce (from the workspace root):".to_owned(),
            format!("  {}", m.command.join(" ")),
            format!(
                "Network table: {} ({}; {}; {} points).",
                self.input.display(),
                self.table.format,
                self.table.origin,
                self.table.points.len()
            ),
        ];
        for (what, local) in [
            ("Shared-memory", &self.shm),
            ("Between-sockets", &self.socket),
        ] {
            if let Some((path, t, _)) = local {
                header.push(format!(
                    "{what} table: {} ({}; {}; {} points).",
                    path.display(),
                    t.format,
                    t.origin,
                    t.points.len()
                ));
            }
        }
        for (level, (tables, fit)) in self.pattern_fits() {
            let (name, line) = level_prefixes(level);
            for ((path, t), p) in tables.iter().zip(&fit.patterns) {
                header.push(format!(
                    "{name}{} table: {} ({}; {}; {} points).",
                    p.pattern.name(),
                    path.display(),
                    t.format,
                    t.origin,
                    t.points.len()
                ));
            }
            header.extend(fit.summary().into_iter().map(|l| format!("{line}{l}")));
        }
        if let Some((tables, fit)) = &self.node {
            for ((path, t), p) in tables.iter().zip(&fit.tables) {
                header.push(format!(
                    "{} table, {} pairs {}: {} ({}; {} points).",
                    p.bench.name(),
                    p.pairs,
                    p.placement.describe(),
                    path.display(),
                    t.origin,
                    t.points.len()
                ));
            }
            header.extend(fit.summary());
        }
        header.extend(self.describe_send());
        header.push(format!(
            "Node: cpu_rate {} as given on the command line (not fitted); {}.",
            m.cpu_rate, m.memcpy_origin
        ));
        if let Some((t, origin)) = &m.timer {
            header.push(format!(
                "timer: {} per read of the clock (node.timer), {origin}: each interval a benchmark times with MPI_Wtime holds about one read beyond its work",
                models::config::write::time_us(*t)
            ));
        }
        header.extend(self.collectives.describe());
        // MPICH's rules (named, or the default when none is) with no page
        // fault cost: say what that leaves out.
        let mpich = m
            .collectives
            .iter()
            .find(|(k, _)| k == "library")
            .is_none_or(|(_, v)| {
                sim_core::coll::Library::from_name(v).is_some_and(|l| {
                    matches!(
                        l,
                        sim_core::coll::Library::Mpich3 | sim_core::coll::Library::Mpich4
                    )
                })
            });
        if mpich && self.collectives.page_fault.is_none() {
            header.push(
                "page fault: not measured, so the per-call temporary buffers of MPICH's reduce, allreduce and reduce_scatter cost nothing here (glibc gives two of them back every call from 128 KiB: VALIDATION.md 4.7); --run measures node.page_fault, --page-fault TABLE reads a saved PageFault table"
                    .to_owned(),
            );
        }
        // When a rendezvous send completes: measured (RendezvousSend and
        // RendezvousRecv), else assumed from a library whose rendezvous is
        // a get (the receiver reads the sender's buffer and answers),
        // else the model's default.
        let rendezvous_received = match &self.collectives.rendezvous {
            Some((_, r)) => r.received,
            None => {
                let library = m
                    .collectives
                    .iter()
                    .find(|(k, _)| k == "library")
                    .and_then(|(_, v)| sim_core::coll::Library::from_name(v));
                let get = library.is_some_and(rendezvous_is_a_get);
                if let (true, Some(library)) = (get, library) {
                    header.push(format!(
                        "rendezvous send: done when its data is received (node.rendezvous_send = \"received\"), assumed from the library ({}): its rendezvous is a get, whose sender completes with its receiver (measured for MPICH 4.0.2 and Open MPI 4.1.4 on parsim's development machine, VALIDATION.md 4.22); --run measures it",
                        library.name()
                    ));
                }
                get
            }
        };
        let mut collectives = m.collectives.clone();
        let default = self.collectives.call.as_ref().map(|(_, c)| c.overhead);
        match (&self.collectives.kinds, default) {
            (Some((_, kinds)), _) => {
                // `default` (the barrier's, or none measured) and each
                // measured collective's own, as one inline table.
                let mut entries: Vec<String> = default
                    .map(|t| format!("default = \"{}\"", models::config::write::time_us(t)))
                    .into_iter()
                    .collect();
                entries.extend(kinds.iter().map(|k| {
                    format!(
                        "{} = \"{}\"",
                        k.call.kind.name(),
                        models::config::write::time_us(k.overhead)
                    )
                }));
                collectives.push((
                    "call_overhead".to_owned(),
                    format!("{{ {} }}", entries.join(", ")),
                ));
            }
            (None, Some(t)) => collectives.push((
                "call_overhead".to_owned(),
                models::config::write::time_us(t),
            )),
            (None, None) => {}
        }
        header.extend(m.notes.iter().cloned());
        let description = m.description.clone().unwrap_or_else(|| {
            format!(
                "fitted by parsim calibrate net from {}",
                self.input
                    .file_name()
                    .map_or(String::new(), |s| s.to_string_lossy().into_owned())
            )
        });
        calibrate::write_machine(&MachineDescription {
            name: name.clone(),
            description,
            ranks_per_node: m.ranks_per_node,
            cpu_rate: m.cpu_rate,
            memcpy: m.memcpy,
            network: &self.network,
            shm: self.shm.as_ref().map(|s| &s.2),
            socket: self.socket.as_ref().map(|s| &s.2),
            sockets: m.sockets,
            written: calibrate::Written {
                network: self.written.network.as_ref(),
                shm: self.written.shm.as_ref(),
                socket: self.written.socket.as_ref(),
            },
            header,
            network_duplex: m
                .duplex
                .or_else(|| self.patterns.as_ref().map(|(_, fit)| fit.duplex)),
            shm_duplex: m
                .shm_duplex
                .or_else(|| self.shm_patterns.as_ref().map(|(_, fit)| fit.duplex))
                .filter(|d| !d.is_full() && self.shm.is_some()),
            collectives,
            node_gap: self.node.as_ref().map_or(0.0, |(_, fit)| fit.node_gap),
            shm_node_bandwidth: self.node.as_ref().and_then(|(_, fit)| fit.node_bandwidth),
            reduce_bandwidth: self.collectives.reduce.as_ref().map(|(_, r)| r.bandwidth),
            memcpy_segments: self
                .collectives
                .memcpy
                .as_ref()
                .map(|(_, fit)| fit.segments.clone())
                .unwrap_or_default(),
            reduce_segments: self
                .collectives
                .reduce
                .as_ref()
                .and_then(|(_, r)| r.by_size.as_ref())
                .map(|fit| fit.segments.clone())
                .unwrap_or_default(),
            reduce_overhead: self
                .collectives
                .reduce
                .as_ref()
                .map_or(0.0, |(_, r)| r.overhead),
            timer: m.timer.as_ref().map_or(0.0, |(t, _)| *t),
            rendezvous_send_received: rendezvous_received,
            flag_latency: self.collectives.flag.as_ref().map(|(_, t)| *t),
            datatype: self
                .collectives
                .datatype
                .as_ref()
                .map(|(_, d)| *d)
                .unwrap_or_default(),
            page_fault: self.collectives.page_fault.as_ref().map(|(_, t)| *t),
        })
        .map_err(Error::MachineFile)
    }
}

/// Whether `library`'s rendezvous is a get, so that a send completes when
/// its receiver has the data: MPICH 4 and Intel MPI (CH4: UCX's rendezvous
/// reads the sender's buffer and answers, the shared-memory IPC copies and
/// answers) and Open MPI 4 and 5 (ob1's single copy and RGET, UCX's
/// rendezvous), measured for MPICH 4.0.2 and Open MPI 4.1.4 on the
/// development machine (VALIDATION.md 4.22). MPICH 3 is not assumed.
fn rendezvous_is_a_get(library: sim_core::coll::Library) -> bool {
    use sim_core::coll::Library as L;
    matches!(
        library,
        L::Mpich4 | L::OpenMpi4 | L::OpenMpi41 | L::OpenMpi5 | L::IntelMpi2019 | L::IntelMpi2021
    )
}
