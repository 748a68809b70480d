//! Predicted against measured: a benchmark skeleton (an IMB-style program
//! that prints its own table) simulated for every process count of a
//! measured table, compared per message size.
//!
//! The program prints, from one rank, IMB-style rows of numbers:
//! `bytes repetitions t_min t_max t_avg` (µs), or without `bytes` for
//! benchmarks that have no message size (Barrier). Other output is ignored.
//! A program gets the active process count as `param active` when the
//! table has an active-process column (IMB's "k active of N": the program
//! runs the benchmark in a communicator of the first K ranks).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use calibrate::blocks::reference::reference_seconds;
use models::AnyMachine;
use sim_core::engine::PrintLine;
use sim_core::ir::Program;

use crate::Error;
use crate::error::Choice;
use crate::scenario::Limits;

/// Which measured table to read and how.
#[derive(Debug, Clone)]
pub struct Query {
    /// The measured time column (default: by format, see [`read_table`]).
    pub time_col: Option<String>,
    /// IMB output: the benchmark to compare (default: the one named like
    /// `program_stem`, or the only one).
    pub benchmark: Option<String>,
    /// CSV: the columns of active and total process counts.
    pub active_col: String,
    pub total_col: String,
    /// Processes when the table does not say (CSV without process
    /// columns, OSU output).
    pub ranks: u32,
    /// The simulated column compared: `t_min`, `t_max` or `t_avg`.
    pub column: String,
    /// The skeleton's file stem (`alltoall` for alltoall.mpl).
    pub program_stem: String,
    /// Where `ranks` came from, in the caller's terms (on the command
    /// line, the flag), for the description of a table that does not say.
    pub ranks_from: String,
    /// Skip the steady repetitions of the benchmark's loops
    /// (`SimConfig::fast_forward`); what it did is a note per simulation.
    pub fast_forward: bool,
}

/// A measured table: its points, whether they have message sizes, and what
/// they were read as.
#[derive(Debug, Clone, Default)]
pub struct Measured {
    /// The points; a bandwidth table's as time per message.
    pub points: Vec<Point>,
    pub has_bytes: bool,
    pub origin: String,
    /// The kind of table it was read as.
    pub kind: TableKind,
    /// The unit of the values the table prints, in which the comparison
    /// shows them and their error.
    pub unit: Unit,
    /// What in the table sets the process counts, when it does (IMB's
    /// process-count blocks, osu_mbw_mr's pair count, CSV process
    /// columns): [`Query::ranks`] is then not used.
    pub sets_ranks: Option<String>,
    /// Warnings, one per row left out (a CSV row with an empty cell the
    /// comparison needs), each `PATH: line N: ...`.
    pub skipped: Vec<String>,
}

/// The kinds of measured table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TableKind {
    #[default]
    Csv,
    /// IMB-MPI1 or PMB output (one benchmark of it: [`Query::benchmark`]).
    Imb,
    /// OSU output with times.
    Osu,
    /// OSU bandwidth output (osu_bw, osu_bibw, osu_mbw_mr): its MB/s
    /// column is the measured value, whatever [`Query::time_col`] says.
    OsuBandwidth,
}

impl TableKind {
    /// How the kind is named in messages.
    pub fn describe(self) -> &'static str {
        match self {
            TableKind::Csv => "a CSV table",
            TableKind::Imb => "IMB output",
            TableKind::Osu => "OSU output",
            TableKind::OsuBandwidth => "an OSU bandwidth table",
        }
    }
}

/// The unit of a table's values. The comparison runs on times per message
/// (what the skeletons print); a bandwidth table's values and errors are
/// shown in its own unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unit {
    /// Microseconds per call (or per message).
    #[default]
    Usec,
    /// OSU's MB/s: 10^6 bytes per second of `bytes`-byte messages.
    MbPerSec,
    /// IMB's Msg/sec (Uniband, Biband): messages per second.
    MsgPerSec,
}

impl Unit {
    /// As the tables print it.
    pub fn name(self) -> &'static str {
        match self {
            Unit::Usec => "us",
            Unit::MbPerSec => "MB/s",
            Unit::MsgPerSec => "Msg/sec",
        }
    }

    /// The value a table in this unit prints for a time per message of
    /// `usec` µs of `bytes`-byte messages.
    pub fn of_time(self, usec: f64, bytes: Option<u64>) -> f64 {
        match self {
            Unit::Usec => usec,
            Unit::MbPerSec => bytes.unwrap_or(0) as f64 / usec,
            Unit::MsgPerSec => 1e6 / usec,
        }
    }

    /// Whether a value in this unit is a rate (the inverse of a time).
    pub fn is_rate(self) -> bool {
        self != Unit::Usec
    }
}

/// One (active, total) group's error statistics (of its comparable rows).
#[derive(Debug, Clone, Copy)]
pub struct Group {
    pub active: u32,
    pub total: u32,
    /// Comparable rows.
    pub points: usize,
    /// Rows left out of the statistics (see [`Row::comparable`]).
    pub not_comparable: usize,
    pub median_abs_error: f64,
    pub max_abs_error: f64,
}

/// Every compared point, per group and overall, and what was compared.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// The program's file, the machine's name, the simulated column
    /// (`t_avg`, ...) and what the measured table was read as.
    pub program: String,
    pub machine: String,
    pub column: String,
    pub measured: String,
    /// The unit of the measured table's values.
    pub unit: Unit,
    pub rows: Vec<Row>,
    pub groups: Vec<Group>,
    /// Of the comparable rows.
    pub median_abs_error: f64,
    pub max_abs_error: f64,
    /// The t_min/t_max pair's errors, when the table has the pair.
    pub range: Option<RangeStats>,
    /// Why rows are not comparable, one note per reason that occurred.
    pub notes: Vec<String>,
    /// The measured table's rows left out ([`Measured::skipped`]).
    pub skipped: Vec<String>,
}

/// A 0-byte collective that the machine's library returns from at once.
const ZERO_COUNT_NOTE: &str = "0 bytes, no data moved";

/// A measured 0 (below the timer's resolution).
const ZERO_TIME_NOTE: &str = "measured 0";

/// Simulates `base` (the program, `param`s applied; `file` and `source`
/// for messages) on `machine` for every process count of `measured` and
/// compares, telling `progress` `(done, total)` after each simulation (one
/// per process-count group of the table).
#[expect(
    clippy::too_many_arguments,
    reason = "what is compared, where, and the progress hook"
)]
pub fn compare(
    base: &Program,
    file: &str,
    source: &str,
    machine: &AnyMachine,
    measured: &Measured,
    q: &Query,
    limits: Limits,
    progress: &dyn Fn(usize, usize),
) -> Result<Comparison, Error> {
    let has_active_param = base.params.iter().any(|p| p.name == "active");
    let column = match q.column.as_str() {
        "t_min" => 0,
        "t_max" => 1,
        _ => 2,
    };
    // Group the table by (active, total) processes.
    let mut groups: BTreeMap<(u32, u32), Vec<&Point>> = BTreeMap::new();
    for p in &measured.points {
        let total = p.total.or(p.active).unwrap_or(q.ranks);
        let active = p.active.unwrap_or(total);
        groups.entry((active, total)).or_default().push(p);
    }
    let mut rows = Vec::new();
    // What one read of the clock adds to a timed call (µs): a 0-byte row
    // predicted at no more than that is a call that returned at once.
    let timer_usec = match machine {
        AnyMachine::LogGp(m) => m.spec().node.timer * 1e6,
        AnyMachine::Plugin(_) => 0.0,
    };
    // The largest message per channel set over every simulation.
    let mut largest = [0u64; sim_core::model::CHANNEL_SETS];
    // What the fast-forward did in each simulation (with `q.fast_forward`).
    let mut fast_forwards: Vec<(u32, sim_core::engine::FastForward)> = Vec::new();
    for (k, (&(active, total), pts)) in groups.iter().enumerate() {
        let mut program = base.clone();
        if has_active_param {
            frontend::apply_param_overrides(
                &mut program,
                &[("active".to_owned(), active.to_string())],
            )
            .map_err(|e| Error::Input(e.to_string()))?;
        } else if active != total {
            return Err(Error::Input(format!(
                "the table has {active} active of {total} processes but {file} has no `param active`"
            )));
        }
        let (sim, sent, ff) = simulate(
            &program,
            machine,
            total,
            file,
            source,
            limits,
            q.fast_forward,
        )?;
        if let Some(f) = ff {
            fast_forwards.push((total, f));
        }
        for (l, s) in largest.iter_mut().zip(sent) {
            *l = (*l).max(s);
        }
        progress(k + 1, groups.len());
        for p in pts {
            // The simulated row's t_min, t_max, t_avg.
            let stats = if measured.has_bytes {
                sim.iter()
                    .find(|r| r.len() >= 5 && Some(r[0] as u64) == p.bytes)
                    .map(|r| [r[2], r[3], r[4]])
            } else {
                sim.iter()
                    .find(|r| r.len() == 4)
                    .map(|r| [r[1], r[2], r[3]])
            };
            let Some(pred) = stats.map(|s| s[column]) else {
                return Err(Error::Input(format!(
                    "{file} printed no row for {} on {active} of {total} processes",
                    p.bytes
                        .map_or("the benchmark".to_owned(), |b| format!("{b} bytes"))
                )));
            };
            let pred_range = stats.map(|s| (s[0], s[1]));
            rows.push(Row::new(
                active,
                total,
                p,
                pred,
                pred_range,
                measured.unit,
                timer_usec,
            ));
        }
    }
    let mut all: Vec<f64> = rows
        .iter()
        .filter(|r| r.comparable)
        .map(|r| r.error.abs())
        .collect();
    let overall_median = median(&mut all);
    let overall_max = all.iter().copied().fold(0.0, f64::max);
    // Per (active, total) group: points, median and maximum |error|.
    let per_group: Vec<Group> = groups
        .keys()
        .map(|&(active, total)| {
            let in_group = |r: &&Row| r.active == active && r.total == total;
            let mut e: Vec<f64> = rows
                .iter()
                .filter(in_group)
                .filter(|r| r.comparable)
                .map(|r| r.error.abs())
                .collect();
            let max = e.iter().copied().fold(0.0, f64::max);
            Group {
                active,
                total,
                points: e.len(),
                not_comparable: rows
                    .iter()
                    .filter(in_group)
                    .filter(|r| !r.comparable)
                    .count(),
                median_abs_error: median(&mut e),
                max_abs_error: max,
            }
        })
        .collect();
    let mut notes = Vec::new();
    if rows.iter().any(|r| r.note == Some(ZERO_COUNT_NOTE)) {
        let coll = sim_core::model::Machine::collectives(&machine.start(1));
        notes.push(format!(
            "not comparable ({ZERO_COUNT_NOTE}): the simulated collective returns at once ({}, {}: MPICH and Open MPI return from most collectives of count 0 without communicating), so the prediction is 0 (or the clock's read, `[node] timer`) and the measured time is the call's overhead and the timer's; these rows are left out of the statistics",
            coll.library.name(),
            match coll.zero_count {
                Some(z) => format!("collectives.zero_count = \"{}\"", z.name()),
                None => "the library's zero-count rule".to_owned(),
            }
        ));
    }
    if rows.iter().any(|r| r.note == Some(ZERO_TIME_NOTE)) {
        notes.push(format!(
            "not comparable ({ZERO_TIME_NOTE}): a 0-byte row measured as 0 (below the timer's resolution) has no relative error; these rows are left out of the statistics"
        ));
    }
    for (ranks, f) in &fast_forwards {
        notes.push(match f {
            sim_core::engine::FastForward::Applied { loops } => format!(
                "fast-forward at {ranks} ranks: skipped {} iterations in {} jumps; the run's \
                 predicted time can differ from the full run's by at most {:.3e} s, and a \
                 printed time accumulated over a loop by about one iteration's time per jump",
                f.iterations(),
                loops.len(),
                f.bound()
            ),
            sim_core::engine::FastForward::NotApplied { reason } => {
                format!("fast-forward at {ranks} ranks: not applied ({reason}); the full run")
            }
        });
    }
    notes.extend(
        crate::scenario::channel_extrapolations(machine, &largest)
            .into_iter()
            .map(|w| format!("warning: {w}")),
    );
    let range = range_stats(&rows);
    Ok(Comparison {
        program: file.to_owned(),
        machine: machine.name().to_owned(),
        column: q.column.clone(),
        measured: measured.origin.clone(),
        unit: measured.unit,
        rows,
        groups: per_group,
        median_abs_error: overall_median,
        max_abs_error: overall_max,
        range,
        notes,
        skipped: measured.skipped.clone(),
    })
}

/// The t_min and t_max errors of the rows that have the pair, or None.
fn range_stats(rows: &[Row]) -> Option<RangeStats> {
    let pairs: Vec<RangeRow> = rows.iter().filter_map(|r| r.range).collect();
    if pairs.is_empty() {
        return None;
    }
    let mut lo: Vec<f64> = pairs.iter().map(|r| r.min_error.abs()).collect();
    let mut hi: Vec<f64> = pairs.iter().map(|r| r.max_error.abs()).collect();
    Some(RangeStats {
        points: pairs.len(),
        min_median_abs_error: median(&mut lo),
        min_max_abs_error: lo.iter().copied().fold(0.0, f64::max),
        max_median_abs_error: median(&mut hi),
        max_max_abs_error: hi.iter().copied().fold(0.0, f64::max),
    })
}

impl Comparison {
    /// The comparison for people: what was compared, a Markdown table of
    /// the points, the errors per group and overall.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "program: {}\nmachine: {}\ncompared: simulated {} against {}\n",
            self.program, self.machine, self.column, self.measured
        );
        let unit = self.unit.name();
        let _ = writeln!(
            out,
            "| active/total | bytes | measured ({unit}) | predicted ({unit}) | error |"
        );
        let _ = writeln!(out, "| ---: | ---: | ---: | ---: | ---: |");
        // Messages per second are whole numbers in IMB's tables.
        let decimals = if self.unit == Unit::MsgPerSec { 0 } else { 2 };
        for r in &self.rows {
            let error = match r.note {
                Some(note) if !r.comparable => format!("not comparable ({note})"),
                _ => format!("{:+.1}%", r.error * 100.0),
            };
            let _ = writeln!(
                out,
                "| {}/{} | {} | {:.decimals$} | {:.decimals$} | {error} |",
                r.active,
                r.total,
                r.bytes.map_or("-".to_owned(), |b| b.to_string()),
                r.measured,
                r.predicted,
            );
        }
        let _ = writeln!(out);
        if self.unit.is_rate() {
            let _ = writeln!(
                out,
                "error: of the {unit} as the benchmark prints it, (predicted - measured) / measured; the time per message's error e gives -e/(1+e)\n"
            );
        }
        for note in &self.notes {
            let _ = writeln!(out, "{note}\n");
        }
        let excluded = |n: usize| {
            if n == 0 {
                String::new()
            } else {
                format!(" and {n} not comparable")
            }
        };
        for g in &self.groups {
            let _ = writeln!(
                out,
                "{} of {}: {} points{}, median |error| {:.1}%, max |error| {:.1}%",
                g.active,
                g.total,
                g.points,
                excluded(g.not_comparable),
                g.median_abs_error * 100.0,
                g.max_abs_error * 100.0
            );
        }
        let not_comparable = self.rows.iter().filter(|r| !r.comparable).count();
        let _ = writeln!(
            out,
            "all: {} points{}, median |error| {:.1}%, max |error| {:.1}%",
            self.rows.len() - not_comparable,
            excluded(not_comparable),
            self.median_abs_error * 100.0,
            self.max_abs_error * 100.0
        );
        if let Some(s) = self.range {
            out.push_str(&self.range_text(s));
        }
        out
    }

    /// The fastest and slowest ranks' table and errors.
    fn range_text(&self, s: RangeStats) -> String {
        let mut out = String::from(
            "\nthe fastest and the slowest rank (t_min, t_max), measured against simulated:\n\n\
             | active/total | bytes | t_min measured (us) | predicted (us) | error | t_max measured (us) | predicted (us) | error |\n\
             | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
        );
        for r in &self.rows {
            let Some(g) = r.range else { continue };
            let _ = writeln!(
                out,
                "| {}/{} | {} | {:.2} | {:.2} | {:+.1}% | {:.2} | {:.2} | {:+.1}% |",
                r.active,
                r.total,
                r.bytes.map_or("-".to_owned(), |b| b.to_string()),
                g.measured_min_usec,
                g.predicted_min_usec,
                g.min_error * 100.0,
                g.measured_max_usec,
                g.predicted_max_usec,
                g.max_error * 100.0,
            );
        }
        let _ = writeln!(
            out,
            "\nt_min: {} points, median |error| {:.1}%, max |error| {:.1}%\nt_max: {} points, median |error| {:.1}%, max |error| {:.1}%",
            s.points,
            s.min_median_abs_error * 100.0,
            s.min_max_abs_error * 100.0,
            s.points,
            s.max_median_abs_error * 100.0,
            s.max_max_abs_error * 100.0
        );
        out
    }

    /// The comparison as data (keys in alphabetical order).
    pub fn json(&self) -> serde_json::Value {
        let groups: Vec<serde_json::Value> = self
            .groups
            .iter()
            .map(|g| {
                serde_json::json!({
                    "active": g.active,
                    "total": g.total,
                    "not_comparable": g.not_comparable,
                    "median_abs_error": g.median_abs_error,
                    "max_abs_error": g.max_abs_error,
                })
            })
            .collect();
        serde_json::json!({
            "program": self.program,
            "machine": self.machine,
            "column": self.column,
            "measured": self.measured,
            "unit": self.unit.name(),
            "rows": self.rows,
            "groups": groups,
            "median_abs_error": self.median_abs_error,
            "max_abs_error": self.max_abs_error,
            "range": self.range.map(|s| serde_json::json!({
                "points": s.points,
                "t_min_median_abs_error": s.min_median_abs_error,
                "t_min_max_abs_error": s.min_max_abs_error,
                "t_max_median_abs_error": s.max_median_abs_error,
                "t_max_max_abs_error": s.max_max_abs_error,
            })),
            "notes": self.notes,
            "skipped": self.skipped,
        })
    }
}

/// One measured point.
#[derive(Debug, Clone)]
pub struct Point {
    pub active: Option<u32>,
    pub total: Option<u32>,
    pub bytes: Option<u64>,
    /// The time per call, or per message for a bandwidth table.
    pub usec: f64,
    /// The value as the table prints it, in [`Measured::unit`].
    pub value: f64,
    /// The fastest and the slowest rank's time per call (µs), when the
    /// table has both (IMB's t_min/t_max, OSU's -f Min/Max): compared with
    /// the simulated pair, whatever column is compared.
    pub range: Option<(f64, f64)>,
}

/// One compared point.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    pub active: u32,
    pub total: u32,
    pub bytes: Option<u64>,
    /// Times per call, or per message for a bandwidth table.
    pub measured_usec: f64,
    pub predicted_usec: f64,
    /// The values in the table's unit ([`Comparison::unit`]); the times
    /// for a table of times.
    pub measured: f64,
    pub predicted: f64,
    /// (predicted - measured) / measured of the values in the table's
    /// unit: for a bandwidth or a message rate, -e/(1+e) of the time's
    /// error e.
    pub error: f64,
    /// (predicted - measured) / measured of the times.
    pub time_error: f64,
    /// Whether the row is in the error statistics: not a 0-byte row of a
    /// call the simulation returns from at once (a collective of count 0
    /// under MPICH's or Open MPI's rules: predicted 0) or that measured 0.
    pub comparable: bool,
    /// Why the row is not comparable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<&'static str>,
    /// The measured t_min/t_max pair against the simulated one, when the
    /// table has it and the row is comparable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<RangeRow>,
}

/// A row's fastest and slowest rank, measured and predicted (µs).
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct RangeRow {
    pub measured_min_usec: f64,
    pub measured_max_usec: f64,
    pub predicted_min_usec: f64,
    pub predicted_max_usec: f64,
    pub min_error: f64,
    pub max_error: f64,
}

/// The t_min and t_max errors over the rows that have them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RangeStats {
    pub points: usize,
    pub min_median_abs_error: f64,
    pub min_max_abs_error: f64,
    pub max_median_abs_error: f64,
    pub max_max_abs_error: f64,
}

impl Row {
    /// The measured point `p` of the group (`active`, `total`) against the
    /// predicted time `pred` (µs per call or message), in `unit`, and the
    /// measured t_min/t_max pair, if any, against `pred_range`.
    fn new(
        active: u32,
        total: u32,
        p: &Point,
        pred: f64,
        pred_range: Option<(f64, f64)>,
        unit: Unit,
        timer: f64,
    ) -> Row {
        let note = if p.bytes != Some(0) {
            None
        } else if p.usec == 0.0 {
            Some(ZERO_TIME_NOTE)
        } else if pred <= timer * (1.0 + 1e-9) {
            // Nothing but the clock's read (`[node] timer`, µs): the call
            // returned at once.
            Some(ZERO_COUNT_NOTE)
        } else {
            None
        };
        let (measured, predicted) = (p.value, unit.of_time(pred, p.bytes));
        let range = match (p.range, pred_range) {
            (Some((lo, hi)), Some((plo, phi))) if note.is_none() && lo > 0.0 && hi > 0.0 => {
                Some(RangeRow {
                    measured_min_usec: lo,
                    measured_max_usec: hi,
                    predicted_min_usec: plo,
                    predicted_max_usec: phi,
                    min_error: (plo - lo) / lo,
                    max_error: (phi - hi) / hi,
                })
            }
            _ => None,
        };
        Row {
            active,
            total,
            bytes: p.bytes,
            measured_usec: p.usec,
            predicted_usec: pred,
            measured,
            predicted,
            error: (predicted - measured) / measured,
            time_error: (pred - p.usec) / p.usec,
            comparable: note.is_none(),
            note,
            range,
        }
    }
}

/// The measured points, whether they have message sizes, and what they
/// were read as.
pub fn read_table(q: &Query, table: &Path) -> Result<Measured, Error> {
    let text = std::fs::read_to_string(table).map_err(|e| Error::read(table, e))?;
    let text = strip_rank_prefixes(&text);
    match calibrate::Format::detect(&text) {
        Some(calibrate::Format::Imb) => return read_imb(q, table, &text),
        Some(calibrate::Format::OsuLatency | calibrate::Format::OsuBw) => {
            return read_osu(q, table, &text);
        }
        _ => {}
    }
    read_csv(q, table, &text)
}

/// A CSV table (read with the `csv` crate, as `calibrate net` reads one):
/// a time column in µs, optionally `bytes` and the process columns. A row
/// whose needed cell is empty is skipped with a warning
/// ([`Measured::skipped`]); a cell that is not a number is an error.
fn read_csv(q: &Query, table: &Path, text: &str) -> Result<Measured, Error> {
    let path = table.display();
    let csv = calibrate::csv_table(text).map_err(|err| Error::Table {
        path: table.to_owned(),
        err,
    })?;
    let cols = &csv.columns;
    let find = |name: &str| cols.iter().position(|c| c == name);
    let time = match &q.time_col {
        Some(c) => find(c).ok_or_else(|| {
            Error::Input({
                format!(
                    "{}: no column `{c}` (columns: {})",
                    table.display(),
                    cols.join(", ")
                )
            })
        })?,
        // The measured column of the simulated statistic where the table
        // has one (`t_avg` against `t_avg`, IMB's "t_avg[usec]" too), else
        // its first time column.
        None => csv_time_column(cols, &q.column).ok_or_else(|| Error::Choose {
            message: format!("{}: no time column", table.display()),
            columns: None,
            choice: Choice::TimeColumn,
        })?,
    };
    let bytes = find("bytes");
    let active = find(&q.active_col);
    let total = find(&q.total_col);
    let needed: Vec<usize> = [Some(time), bytes, active, total]
        .into_iter()
        .flatten()
        .collect();
    let mut points = Vec::new();
    let mut skipped = Vec::new();
    for (line, cells) in &csv.rows {
        let line = *line;
        if let Some(skip) = csv.empty_cell(line, cells, &needed) {
            skipped.push(format!(
                "{path}:{line}: the `{}` cell is empty; the row is skipped",
                skip.column
            ));
            continue;
        }
        // `csv_table` gives every row as many cells as the header.
        let cell = |ix: usize| cells.get(ix).map_or("", String::as_str);
        let num = |ix: usize| -> Result<f64, Error> {
            let c = cell(ix);
            c.parse::<f64>()
                .map_err(|e| Error::Input(format!("{path}:{line}: `{c}` is not a number: {e}")))
        };
        let count = |ix: usize| -> Result<u32, Error> {
            let c = cell(ix);
            c.parse::<u32>().ok().filter(|&n| n >= 1).ok_or_else(|| {
                Error::Input(format!(
                    "{path}:{line}: `{c}` is not a process count (a whole number from 1)"
                ))
            })
        };
        let size = bytes.map(&num).transpose()?;
        if size.is_some_and(|b| !(b.is_finite() && b >= 0.0 && b.fract() == 0.0)) {
            return Err(Error::Input(format!(
                "{path}:{line}: the message size must be a whole number of bytes"
            )));
        }
        let usec = num(time)?;
        if !(usec.is_finite() && (usec > 0.0 || (usec == 0.0 && size == Some(0.0)))) {
            return Err(Error::Input(format!(
                "{path}:{line}: the time must be a positive number, got {usec}"
            )));
        }
        points.push(Point {
            active: active.map(count).transpose()?,
            total: total.map(count).transpose()?,
            bytes: size.map(|x| x as u64),
            usec,
            value: usec,
            range: None,
        });
    }
    let origin = format!("{path}, column {}", cols[time]);
    let sets_ranks = match (active, total) {
        (None, None) => None,
        _ => Some(format!(
            "its process columns ({})",
            [active, total]
                .into_iter()
                .flatten()
                .map(|i| cols[i].as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    };
    Ok(Measured {
        points,
        has_bytes: bytes.is_some(),
        origin,
        kind: TableKind::Csv,
        unit: Unit::Usec,
        sets_ranks,
        skipped,
    })
}

/// A CSV table's measured time column for the simulated statistic
/// `column` (`t_min`, `t_max`, `t_avg`): the first column named after that
/// statistic (`t_avg`, `t_avg[usec]`, `avg_usec`, ...), else the first time
/// column (`usec` in the name, or `t_...`).
fn csv_time_column(cols: &[String], column: &str) -> Option<usize> {
    let stat = column
        .strip_prefix("t_")
        .unwrap_or(column)
        .to_ascii_lowercase();
    let is_time = |c: &str| c.contains("usec") || c.starts_with("t_");
    cols.iter()
        .position(|c| {
            let l = c.to_ascii_lowercase();
            is_time(&l) && (l.starts_with(&format!("t_{stat}")) || l.contains(&stat))
        })
        .or_else(|| cols.iter().position(|c| is_time(c)))
}

/// The output of `parsim run` or of a `build-mpi` program prefixes every
/// line with its rank, `[0] `: dropped, so that a skeleton's own table run
/// for real can be compared line for line. Other text is unchanged.
fn strip_rank_prefixes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let rest = line
            .strip_prefix('[')
            .and_then(|r| r.split_once("] "))
            .filter(|(rank, _)| !rank.is_empty() && rank.bytes().all(|b| b.is_ascii_digit()))
            .map_or(line, |(_, rest)| rest);
        out.push_str(rest);
        out.push('\n');
    }
    out
}

/// OSU Micro-Benchmarks output (`osu_latency`, `osu_allreduce`,
/// `osu_barrier`, ...; with or without `-f`): a title `# OSU MPI ... Test`,
/// a header `# Size  Avg Latency(us)  Min Latency(us) ...` (`# Avg
/// Latency(us)` for Barrier, `# Size  Latency (us)` for osu_latency), rows.
/// The output does not say how many processes ran: [`Query::ranks`].
fn read_osu(q: &Query, table: &Path, text: &str) -> Result<Measured, Error> {
    let path = table.display();
    let calibrate::OsuTable {
        title,
        columns,
        rows,
    } = calibrate::osu_table(text).map_err(|err| Error::Table {
        path: table.to_owned(),
        err,
    })?;
    if let Some(bandwidth) = columns
        .iter()
        .position(|c| c.contains("Bandwidth") || c.contains("MB/s"))
    {
        return read_osu_bandwidth(q, table, text, &title, &columns, &rows, bandwidth);
    }
    let has_bytes = columns.first().is_some_and(|c| c == "Size");
    let time = match &q.time_col {
        Some(c) => columns.iter().position(|x| x.eq_ignore_ascii_case(c)),
        None => {
            let want = match q.column.as_str() {
                "t_min" => "Min",
                "t_max" => "Max",
                _ => "Avg",
            };
            columns
                .iter()
                .position(|c| c.starts_with(want))
                .or_else(|| {
                    // osu_latency's one column: the average of rank 0's
                    // round trips.
                    (q.column == "t_avg")
                        .then(|| columns.iter().position(|c| c.starts_with("Latency")))
                        .flatten()
                })
        }
    }
    .ok_or_else(|| Error::Choose {
        message: format!(
            "{path}: no column for {}",
            q.time_col.as_deref().unwrap_or(&q.column)
        ),
        columns: Some(columns.join(", ")),
        choice: Choice::TimeOrSimulatedColumn,
    })?;
    let ranks = q.ranks;
    // OSU's -f output: the fastest and the slowest rank's latency.
    let min_max = columns
        .iter()
        .position(|c| c.starts_with("Min"))
        .zip(columns.iter().position(|c| c.starts_with("Max")));
    let mut points = Vec::new();
    for (line, cells) in &rows {
        let (usec, bytes) = row_values(&path, *line, cells, &columns, time, has_bytes)?;
        let range = match min_max {
            Some((lo, hi)) => Some((
                row_values(&path, *line, cells, &columns, lo, has_bytes)?.0,
                row_values(&path, *line, cells, &columns, hi, has_bytes)?.0,
            )),
            None => None,
        };
        points.push(Point {
            active: Some(ranks),
            total: Some(ranks),
            bytes,
            usec,
            value: usec,
            range,
        });
    }
    if points.is_empty() {
        return Err(Error::Input(format!("{path}: the OSU table has no rows")));
    }
    let origin = format!(
        "{path}, {title}, column {} ({ranks} processes, from {})",
        columns[time], q.ranks_from
    );
    Ok(Measured {
        points,
        has_bytes,
        origin,
        kind: TableKind::Osu,
        ..Measured::default()
    })
}

/// An OSU bandwidth table (`osu_bw`, `osu_bibw`, `osu_mbw_mr`): each row's
/// MB/s (10^6 bytes per second, as OMB prints it) read as the time per
/// message, `bytes / (MB/s)` µs, which the bandwidth skeletons
/// (`examples/osu/bw.mpl`, `bibw.mpl`, `mbw_mr.mpl`) print as their t_avg;
/// an error in time is an error in bandwidth's inverse. osu_mbw_mr says
/// its pair count (`# [ pairs: 4 ]`): the table is for twice as many
/// processes, whatever the query says.
fn read_osu_bandwidth(
    q: &Query,
    table: &Path,
    text: &str,
    title: &str,
    columns: &[String],
    rows: &[(usize, Vec<String>)],
    bandwidth: usize,
) -> Result<Measured, Error> {
    let path = table.display();
    if columns.first().is_none_or(|c| c != "Size") {
        return Err(Error::Input(format!(
            "{path}: a bandwidth table without a Size column ({})",
            columns.join(", ")
        )));
    }
    let pairs = crate::node_fit::pairs_in(text);
    let (ranks, from) = match pairs {
        Some(p) => (2 * p, format!("{p} pairs in the table")),
        None => (q.ranks, q.ranks_from.clone()),
    };
    let mut points = Vec::new();
    for (line, cells) in rows {
        let (mb_per_s, bytes) = row_values(&path, *line, cells, columns, bandwidth, true)?;
        let Some(bytes) = bytes.filter(|&b| b > 0) else {
            continue;
        };
        points.push(Point {
            active: Some(ranks),
            total: Some(ranks),
            bytes: Some(bytes),
            usec: bytes as f64 / mb_per_s,
            value: mb_per_s,
            range: None,
        });
    }
    if points.is_empty() {
        return Err(Error::Input(format!("{path}: the OSU table has no rows")));
    }
    Ok(Measured {
        points,
        has_bytes: true,
        origin: format!(
            "{path}, {title}, column {} ({ranks} processes, from {from})",
            columns[bandwidth]
        ),
        kind: TableKind::OsuBandwidth,
        unit: Unit::MbPerSec,
        sets_ranks: pairs.map(|p| format!("its pair count ({p} pairs)")),
        skipped: Vec::new(),
    })
}

/// One row of an IMB or OSU table: the time in the column `time` (a
/// positive number of µs) and, when the first column is the message size,
/// the size (a whole number of bytes).
fn row_values(
    path: &impl std::fmt::Display,
    line: usize,
    cells: &[String],
    columns: &[String],
    time: usize,
    has_bytes: bool,
) -> Result<(f64, Option<u64>), Error> {
    let num = |ix: usize| -> Result<f64, Error> {
        let c = cells.get(ix).ok_or_else(|| {
            Error::Input({
                format!(
                    "{path}:{line}: expected {} columns ({})",
                    columns.len(),
                    columns.join(", ")
                )
            })
        })?;
        c.parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .ok_or_else(|| Error::Input(format!("{path}:{line}: `{c}` is not a number")))
    };
    let usec = num(time)?;
    let bytes = if has_bytes {
        let b = num(0)?;
        if b.fract() != 0.0 {
            return Err(Error::Input(format!(
                "{path}:{line}: the size must be a whole number of bytes"
            )));
        }
        Some(b as u64)
    } else {
        None
    };
    // A 0-byte row may measure 0 (IMB's "0.00" for a call that returns at
    // once): kept, and not comparable.
    if usec <= 0.0 && bytes != Some(0) {
        return Err(Error::Input(format!(
            "{path}:{line}: the time must be positive"
        )));
    }
    Ok((usec, bytes))
}

/// IMB-MPI1 / PMB text output: the blocks of one benchmark.
fn read_imb(q: &Query, table: &Path, text: &str) -> Result<Measured, Error> {
    let path = table.display();
    let blocks = calibrate::imb_blocks(text).map_err(|err| Error::Table {
        path: table.to_owned(),
        err,
    })?;
    let mut names: Vec<&str> = Vec::new();
    for name in blocks.iter().filter_map(|b| b.benchmark.as_deref()) {
        if !names.iter().any(|n| n.eq_ignore_ascii_case(name)) {
            names.push(name);
        }
    }
    let stem = q.program_stem.clone();
    let wanted: Option<String> = match &q.benchmark {
        Some(b) => Some(b.clone()),
        None => match names.as_slice() {
            [] => None,
            [only] => Some((*only).to_owned()),
            _ => Some(
                names
                    .iter()
                    .find(|n| n.eq_ignore_ascii_case(&stem))
                    .map(|n| (*n).to_owned())
                    .ok_or_else(|| Error::Choose {
                        message: format!("{path}: several benchmarks ({})", names.join(", ")),
                        columns: None,
                        choice: Choice::Benchmark,
                    })?,
            ),
        },
    };
    let chosen: Vec<&calibrate::ImbBlock> = blocks
        .iter()
        .filter(|b| match (&wanted, &b.benchmark) {
            (Some(w), Some(name)) => name.eq_ignore_ascii_case(w),
            _ => true,
        })
        .filter(|b| !b.columns.is_empty())
        .collect();
    let name = wanted.unwrap_or_else(|| stem.clone());
    if chosen.is_empty() {
        return Err(Error::Input(format!(
            "{path}: no table for benchmark {name} (the file has: {})",
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        )));
    }
    let want_col = match &q.time_col {
        Some(c) => vec![c.clone()],
        None => vec![format!("{}[usec]", q.column), "t[usec]".to_owned()],
    };
    let mut points = Vec::new();
    let mut has_bytes = true;
    let mut used_col = String::new();
    let mut unit = Unit::Usec;
    for block in &chosen {
        // Uniband and Biband print a message rate, no time: read as the
        // time per message of the aggregate, 10^6 / (Msg/sec) µs, which
        // the skeletons print (examples/imb/uniband.mpl, biband.mpl).
        let rate = q.time_col.is_none()
            && !want_col
                .iter()
                .any(|w| block.columns.iter().any(|c| c.eq_ignore_ascii_case(w)));
        let time = if rate {
            block.columns.iter().position(|c| c == "Msg/sec")
        } else {
            want_col
                .iter()
                .find_map(|w| block.columns.iter().position(|c| c.eq_ignore_ascii_case(w)))
        }
        .ok_or_else(|| Error::Choose {
            message: format!(
                "{path}: benchmark {name} has no column {}",
                want_col.join(" or ")
            ),
            columns: Some(block.columns.join(" ")),
            choice: Choice::TimeColumn,
        })?;
        used_col = block.columns[time].clone();
        if rate {
            unit = Unit::MsgPerSec;
        }
        let bytes = block.columns.first().is_some_and(|c| c == "#bytes");
        has_bytes &= bytes;
        let active = block.processes.unwrap_or(q.ranks);
        if active == 0 {
            return Err(Error::Input(format!(
                "{path}: benchmark {name} has a block for 0 processes"
            )));
        }
        let total = active.checked_add(block.waiting).ok_or_else(|| {
            Error::Input({
                format!(
                    "{path}: benchmark {name}: {active} processes and {} waiting is too many",
                    block.waiting
                )
            })
        })?;
        // IMB's t_min[usec] and t_max[usec] (collectives, Sendrecv, ...).
        let column = |name: &str| {
            block
                .columns
                .iter()
                .position(|c| c.eq_ignore_ascii_case(name))
        };
        let min_max = column("t_min[usec]")
            .zip(column("t_max[usec]"))
            .filter(|_| !rate);
        for (line, cells) in &block.rows {
            let (value, size) = row_values(&path, *line, cells, &block.columns, time, bytes)?;
            if rate && value <= 0.0 {
                return Err(Error::Input(format!(
                    "{path}:{line}: the message rate must be positive"
                )));
            }
            let usec = if rate { 1e6 / value } else { value };
            let range = match min_max {
                Some((lo, hi)) => Some((
                    row_values(&path, *line, cells, &block.columns, lo, bytes)?.0,
                    row_values(&path, *line, cells, &block.columns, hi, bytes)?.0,
                )),
                None => None,
            };
            points.push(Point {
                active: Some(active),
                total: Some(total),
                bytes: size,
                usec,
                value,
                range,
            });
        }
    }
    let origin = format!("{path}, IMB benchmark {name}, column {used_col}");
    // Every block says its process count (`# #processes = N`): --ranks is
    // not used.
    let sets_ranks = chosen
        .iter()
        .all(|b| b.processes.is_some())
        .then(|| "its process-count blocks (`# #processes = N`)".to_owned());
    Ok(Measured {
        points,
        has_bytes,
        origin,
        kind: TableKind::Imb,
        unit,
        sets_ranks,
        skipped: Vec::new(),
    })
}

/// What [`simulate`] gives: rank-0's rows of numbers, the run's largest
/// message per channel set, and what the fast-forward did.
type Simulated = (
    Vec<Vec<f64>>,
    [u64; sim_core::model::CHANNEL_SETS],
    Option<sim_core::engine::FastForward>,
);

/// Runs the program and returns rank-0's (or the first printing rank's)
/// rows of numbers, the run's largest message per channel set, and what
/// the fast-forward did (with `fast_forward`).
fn simulate(
    program: &sim_core::ir::Program,
    machine: &AnyMachine,
    ranks: u32,
    file: &str,
    source: &str,
    limits: Limits,
    fast_forward: bool,
) -> Result<Simulated, Error> {
    let mut lines: Vec<PrintLine> = Vec::new();
    let mut sink = |l: PrintLine| lines.push(l);
    let cfg = sim_core::engine::SimConfig {
        fast_forward,
        ..limits.config(ranks)
    };
    let (largest, ff) = match sim_core::simulate(program, &mut machine.start(ranks), cfg, &mut sink)
    {
        Ok(rep) => (rep.largest_message, rep.fast_forward),
        Err(e) => {
            return Err(Error::Input(format!(
                "the simulation failed:\n{}",
                crate::diagnostics::sim_error(&e, file, source)
            )));
        }
    };
    let Some(first) = lines.iter().map(|l| l.rank).min() else {
        return Ok((Vec::new(), largest, ff));
    };
    let rows = lines
        .iter()
        .filter(|l| l.rank == first)
        .filter_map(|l| {
            let nums: Option<Vec<f64>> = l
                .text
                .split_whitespace()
                .map(|w| w.parse::<f64>().ok())
                .collect();
            nums.filter(|n| n.len() >= 4)
        })
        .collect();
    Ok((rows, largest, ff))
}

/// The median (sorts `v`); NaN when empty.
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Real runs against predictions (`validate --run`): what to run.
#[derive(Debug, Clone)]
pub struct RealRuns<'a> {
    /// The skeleton and the `param` overrides of every run.
    pub program: &'a Path,
    pub params: &'a [String],
    /// Parameter sets, each run in addition to `params`.
    pub sets: &'a [Vec<String>],
    /// Rank counts.
    pub np: &'a [u32],
    /// Real runs per point (their median is compared).
    pub repeat: u32,
    pub machine: Option<&'a Path>,
    pub ranks_per_node: Option<u32>,
    /// Calibrated kernel times for the predictions.
    pub blocks: Option<&'a Path>,
    pub noise: Option<u64>,
    pub limits: Limits,
    /// The launcher with `{ranks}` where the rank count goes.
    pub launcher: &'a str,
    /// The real program (built from `program`); parameters go on its
    /// command line.
    pub binary: &'a Path,
    /// Time the speed reference around every run and scale the kernel
    /// times to it (needs `blocks` written with references).
    pub speed_reference: bool,
    /// Time the kernels of `blocks` again just before every run, each
    /// tuple for `slice` seconds, and predict each point with the median
    /// of its runs' measurements.
    pub retime: Option<Retime<'a>>,
}

/// What `--retime` times again, and how long.
#[derive(Debug, Clone, Copy)]
pub struct Retime<'a> {
    /// The native kernels (a C source or a shared library).
    pub kernels: &'a Path,
    /// Compiler flags when the blocks file records none.
    pub cflags: &'a str,
    /// Seconds per tuple.
    pub slice: f64,
}

/// One point of real runs against the prediction.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RealRow {
    pub ranks: u32,
    /// The parameters of the point, as `NAME=VALUE` words.
    pub params: String,
    /// Seconds of each real run.
    pub runs: Vec<f64>,
    /// Their median.
    pub measured: f64,
    pub predicted: f64,
    /// (predicted - measured) / measured.
    pub error: f64,
    /// With `--speed-reference`: the machine's speed during the runs, and
    /// the prediction before the kernel times were scaled to it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speed: Option<SpeedCorrection>,
}

/// The kernel times scaled to the machine's speed during a point's real
/// runs ([`calibrate::blocks::reference`]).
#[derive(Debug, Clone, serde::Serialize)]
pub struct SpeedCorrection {
    /// With the speed reference: the median over the point's runs of the
    /// reference workload's time (each the mean of one measurement before
    /// and one after the run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<f64>,
    /// Above 1, the machine was slower than when the kernels were timed:
    /// `reference` over the median reference of the calibration's points,
    /// or with `--retime` the median over the point's kernel tuples of
    /// their time measured again over their calibrated time.
    pub slowdown: f64,
    /// The prediction with the kernel times as calibrated.
    pub uncorrected: f64,
}

/// Real runs against predictions: every point, and the median and the
/// maximum of the absolute errors (NaN without points).
#[derive(Debug, Clone)]
pub struct RealComparison {
    pub rows: Vec<RealRow>,
    pub median_abs_error: f64,
    pub max_abs_error: f64,
}

impl RealComparison {
    fn of(rows: Vec<RealRow>) -> RealComparison {
        let mut errors: Vec<f64> = rows.iter().map(|r| r.error.abs()).collect();
        let median_abs_error = median(&mut errors);
        let max_abs_error = errors.last().copied().unwrap_or(f64::NAN);
        RealComparison {
            rows,
            median_abs_error,
            max_abs_error,
        }
    }

    /// Whether the median absolute error is above `threshold`, or unknown
    /// (no points).
    pub fn exceeds(&self, threshold: f64) -> bool {
        self.median_abs_error.is_nan() || self.median_abs_error > threshold
    }

    /// The comparison for people: what ran (`r`), a row per point with the
    /// range of its runs, the median and maximum absolute error.
    pub fn text(&self, r: &RealRuns<'_>) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "program: {}   machine: {}   blocks: {}",
            r.program.display(),
            r.machine
                .map_or("built-in".into(), |p| p.display().to_string()),
            r.blocks
                .map_or("cost formulas".into(), |p| p.display().to_string())
        );
        let _ = writeln!(
            s,
            "real runs: `{}`, {} run(s) per point, median compared\n",
            r.launcher, r.repeat
        );
        let corrected = self.rows.iter().any(|row| row.speed.is_some());
        if corrected && let Some(Retime { slice, .. }) = r.retime {
            let _ = writeln!(
                s,
                "kernel times measured again just before each run (--retime, {slice} s per \
                 tuple), the median of a point's runs predicted: `slowdown` is the median of \
                 the tuples' times then over their calibrated times\n"
            );
        } else if corrected {
            let _ = writeln!(
                s,
                "kernel times scaled to the machine's speed during each point's runs \
                 (--speed-reference): `slowdown` is the reference workload's time then \
                 over its time when the kernels were timed\n"
            );
        }
        let _ = write!(
            s,
            "{:>5}  {:<28} {:>12} {:>25} {:>12} {:>8}",
            "ranks", "params", "measured s", "runs min .. max", "predicted s", "error"
        );
        if corrected {
            let _ = write!(
                s,
                " {:>9} {:>14} {:>8}",
                "slowdown", "uncorrected s", "error"
            );
        }
        s.push('\n');
        for row in &self.rows {
            let lo = row.runs.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = row.runs.iter().copied().fold(0.0, f64::max);
            let _ = write!(
                s,
                "{:>5}  {:<28} {:>12.6} {:>12.6} .. {:<10.6} {:>12.6} {:>+7.1}%",
                row.ranks,
                if row.params.is_empty() {
                    "(defaults)"
                } else {
                    &row.params
                },
                row.measured,
                lo,
                hi,
                row.predicted,
                row.error * 100.0
            );
            if let Some(c) = &row.speed {
                let _ = write!(
                    s,
                    " {:>9.3} {:>14.6} {:>+7.1}%",
                    c.slowdown,
                    c.uncorrected,
                    (c.uncorrected - row.measured) / row.measured * 100.0
                );
            }
            s.push('\n');
        }
        let _ = writeln!(
            s,
            "\n{} points: median |error| {:.1}%, max |error| {:.1}%",
            self.rows.len(),
            self.median_abs_error * 100.0,
            self.max_abs_error * 100.0
        );
        if corrected {
            let mut errors: Vec<f64> = self
                .rows
                .iter()
                .filter_map(|row| {
                    let c = row.speed.as_ref()?;
                    Some(((c.uncorrected - row.measured) / row.measured).abs())
                })
                .collect();
            let med = median(&mut errors);
            let _ = writeln!(
                s,
                "uncorrected (kernel times as calibrated): median |error| {:.1}%, max |error| {:.1}%",
                med * 100.0,
                errors.last().copied().unwrap_or(f64::NAN) * 100.0
            );
        }
        s
    }

    /// The comparison as data (keys in alphabetical order).
    pub fn json(&self, r: &RealRuns<'_>) -> serde_json::Value {
        serde_json::json!({
            "program": r.program.display().to_string(),
            "launcher": r.launcher,
            "repeat": r.repeat,
            "rows": self.rows,
            "median_abs_error": self.median_abs_error,
            "max_abs_error": self.max_abs_error,
        })
    }
}

/// Predicts and runs every (parameter set, rank count) point; `progress`
/// hears each finished point and each kernel time extrapolated beyond what
/// was measured.
pub fn real_runs(
    r: &RealRuns<'_>,
    progress: &mut dyn FnMut(&str),
) -> Result<RealComparison, Error> {
    // The blocks file, read once for every point.
    let file = match r.blocks {
        Some(b) => Some(
            calibrate::blocks::file::BlocksFile::read(b)
                .map_err(|e| Error::Input(e.to_string()))?,
        ),
        None => None,
    };
    // With the speed reference: the median of the references the kernels
    // were measured at (for the slowdown shown).
    let calibrated_reference = match (r.speed_reference, &file, r.blocks) {
        (false, _, _) => None,
        (true, Some(_), _) if r.retime.is_some() => {
            return Err(Error::Input(
                "--speed-reference and --retime are two ways of the same correction: give one"
                    .into(),
            ));
        }
        (true, Some(f), Some(b)) => {
            // Refused now, not after the first real runs.
            f.at_speed(1.0)
                .map_err(|e| Error::Input(format!("{}: {e}", b.display())))?;
            let mut refs: Vec<f64> = f
                .kernels
                .iter()
                .flat_map(|k| k.points.iter().filter_map(|p| p.reference))
                .collect();
            Some(median(&mut refs))
        }
        (true, _, _) => {
            return Err(Error::Input(
                "--speed-reference corrects calibrated kernel times: it needs --blocks".into(),
            ));
        }
    };
    // With --retime: the kernels, loaded once.
    let retimer = match (r.retime, &file) {
        (None, _) => None,
        (Some(_), None) => {
            return Err(Error::Input(
                "--retime times the kernels of a blocks file again: it needs --blocks".into(),
            ));
        }
        (Some(rt), Some(f)) => {
            let copies = f.kernels.iter().map(|k| k.concurrent).max().unwrap_or(1);
            Some(crate::blocks::Retimer::new(
                rt.kernels, rt.cflags, f, copies, rt.slice, progress,
            )?)
        }
    };
    let mut rows = Vec::new();
    for set in r.sets {
        let mut params: Vec<String> = r.params.to_vec();
        params.extend(set.iter().cloned());
        let (program, _) = crate::scenario::load_program(r.program, &params)?;
        for &np in r.np {
            let machine = crate::scenario::load_machine(r.machine, r.ranks_per_node)?;
            let on_node = np.min(machine.ranks_per_node());
            let predict = |blocks: &crate::scenario::Blocks| -> Result<f64, Error> {
                let cfg = sim_core::engine::SimConfig {
                    kernel_times: blocks.times.clone(),
                    noise_seed: r.noise,
                    ..r.limits.config(np)
                };
                let mut sink = |_: PrintLine| {};
                sim_core::simulate(&program, &mut machine.start(np), cfg, &mut sink)
                    .map(|rep| rep.predicted_seconds)
                    .map_err(|e| Error::Input(format!("the prediction at {np} ranks failed: {e}")))
            };
            let blocks = match &file {
                Some(f) => crate::scenario::Blocks::of_file(f, on_node),
                None => crate::scenario::Blocks::default(),
            };
            let uncorrected = predict(&blocks)?;
            // The measured tuples this point's run asked for (`--retime`
            // times those again).
            let used: Vec<(String, Vec<Vec<i64>>)> = blocks
                .kernels
                .iter()
                .map(|k| (k.name.clone(), k.used_tuples()))
                .collect();
            if let Some(b) = r.blocks {
                for e in blocks.extrapolations(2.0) {
                    progress(&crate::scenario::extrapolation_warning(&e, b));
                }
            }
            let mut runs = Vec::new();
            let mut refs = Vec::new();
            let mut fresh = Vec::new();
            for _ in 0..r.repeat {
                if let (Some(t), Some(f)) = (&retimer, &file) {
                    fresh.push(t.retime(f, on_node, &used)?);
                }
                let before = calibrated_reference.is_some().then(reference_seconds);
                runs.push(run_once(r.launcher, np, r.binary, &params)?);
                if let Some(before) = before {
                    refs.push(0.5 * (before + reference_seconds()));
                }
            }
            let measured = median(&mut runs.clone());
            let (predicted, speed) = match (&file, calibrated_reference, &retimer) {
                (Some(f), Some(calibrated), _) => {
                    let reference = median(&mut refs);
                    let at = f
                        .at_speed(reference)
                        .map_err(|e| Error::Input(e.to_string()))?;
                    let p = predict(&crate::scenario::Blocks::of_file(&at, on_node))?;
                    (
                        p,
                        Some(SpeedCorrection {
                            reference: Some(reference),
                            slowdown: reference / calibrated,
                            uncorrected,
                        }),
                    )
                }
                (Some(f), None, Some(_)) => {
                    // `repeat >= 1` (checked by the caller): one measurement
                    // at least.
                    let now = crate::blocks::median_of(&fresh)
                        .ok_or_else(|| Error::Input("--retime: no run, no measurement".into()))?;
                    let mut ratios: Vec<f64> = f
                        .chosen(on_node)
                        .into_iter()
                        .flat_map(|i| {
                            let tuples = crate::blocks::tuples_of(&used, &f.kernels[i].name);
                            f.kernels[i]
                                .points
                                .iter()
                                .zip(&now.kernels[i].points)
                                .filter(|(a, _)| tuples.contains(&a.args))
                                .map(|(a, b)| b.seconds / a.seconds)
                        })
                        .filter(|x| x.is_finite())
                        .collect();
                    let p = predict(&crate::scenario::Blocks::of_file(&now, on_node))?;
                    (
                        p,
                        Some(SpeedCorrection {
                            reference: None,
                            slowdown: median(&mut ratios),
                            uncorrected,
                        }),
                    )
                }
                _ => (uncorrected, None),
            };
            let row = RealRow {
                ranks: np,
                params: params.join(" "),
                runs,
                measured,
                predicted,
                error: (predicted - measured) / measured,
                speed,
            };
            progress(&format!(
                "  {np} ranks, {}: measured {:.6} s, predicted {:.6} s, error {:+.1}%{}",
                if row.params.is_empty() {
                    "defaults"
                } else {
                    &row.params
                },
                measured,
                predicted,
                row.error * 100.0,
                row.speed.as_ref().map_or(String::new(), |s| format!(
                    " (slowdown {:.3} against the calibration; uncorrected {:.6} s, {:+.1}%)",
                    s.slowdown,
                    s.uncorrected,
                    (s.uncorrected - measured) / measured * 100.0
                ))
            ));
            rows.push(row);
        }
    }
    Ok(RealComparison::of(rows))
}

/// One run of the real program; its `PARSIM_RESULT` seconds.
fn run_once(launcher: &str, np: u32, binary: &Path, params: &[String]) -> Result<f64, Error> {
    let mut line = launcher.replace("{ranks}", &np.to_string());
    line.push(' ');
    line.push_str(&crate::shell::word(&binary.display().to_string()));
    for p in params {
        line.push(' ');
        line.push_str(&crate::shell::word(p));
    }
    let stdout = crate::shell::run(&line)?;
    parse_result(&stdout)
        .ok_or_else(|| Error::Tool(format!("`{line}` printed no PARSIM_RESULT line:\n{stdout}")))
}

/// The seconds of a `PARSIM_RESULT {...}` line (what a program built by
/// `build-mpi` prints).
pub fn parse_result(stdout: &str) -> Option<f64> {
    let json = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("PARSIM_RESULT "))?;
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    v.get("seconds")?
        .as_f64()
        .filter(|s| s.is_finite() && *s >= 0.0)
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::{Query, median, read_table};

    fn query() -> Query {
        Query {
            time_col: None,
            benchmark: None,
            active_col: "active_procs".into(),
            total_col: "total_procs".into(),
            ranks: 2,
            column: "t_avg".into(),
            program_stem: "alltoall".into(),
            ranks_from: "the query".into(),
            fast_forward: false,
        }
    }

    fn table(text: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().expect("temp file");
        f.write_all(text.as_bytes()).expect("written");
        f
    }

    #[test]
    fn csv_takes_the_measured_column_of_the_simulated_statistic() {
        let f = table("bytes,t_min[usec],t_max[usec],t_avg[usec]\n8,1.0,3.0,2.0\n");
        let m = read_table(&query(), f.path()).expect("reads");
        assert_eq!(m.points[0].usec, 2.0);
        assert!(m.origin.ends_with("column t_avg[usec]"), "{}", m.origin);
        let q = Query {
            column: "t_min".into(),
            ..query()
        };
        let m = read_table(&q, f.path()).expect("reads");
        assert_eq!(m.points[0].usec, 1.0);
        // A table with one time column gives that one, whatever is simulated.
        let f = table("bytes,usec\n8,4.5\n");
        let m = read_table(&q, f.path()).expect("reads");
        assert_eq!(m.points[0].usec, 4.5);
    }

    #[test]
    fn csv_with_process_columns() {
        let f =
            table("# measured\nbytes,active_procs,total_procs,t_usec\n0,2,4,5.5\n1024,4,4,12\n");
        let m = read_table(&query(), f.path()).expect("reads");
        assert!(m.has_bytes);
        assert_eq!(m.points.len(), 2);
        let p = &m.points[0];
        assert_eq!(
            (p.active, p.total, p.bytes, p.usec),
            (Some(2), Some(4), Some(0), 5.5)
        );
        assert!(m.origin.ends_with("column t_usec"), "{}", m.origin);
    }

    #[test]
    fn csv_quotes_and_empty_cells() {
        // Quoted header and cells, a comment; line 4's empty time cell is
        // skipped with a warning naming the line and the column, line 5's
        // empty `note` is not needed.
        let f = table(
            "# measured\n\"bytes\",\"t_avg[usec]\",note\n\"0\",\"1.5\",\"a, b\"\n8,,x\n16,2.5,\n",
        );
        let m = read_table(&query(), f.path()).expect("reads");
        let points: Vec<(Option<u64>, f64)> = m.points.iter().map(|p| (p.bytes, p.usec)).collect();
        assert_eq!(points, [(Some(0), 1.5), (Some(16), 2.5)]);
        assert_eq!(m.skipped.len(), 1);
        assert!(
            m.skipped[0].ends_with(":4: the `t_avg[usec]` cell is empty; the row is skipped"),
            "{}",
            m.skipped[0]
        );
        assert_eq!(m.sets_ranks, None);
        // Process columns set the process counts.
        let f = table("active_procs,total_procs,bytes,t_usec\n2,4,8,1\n");
        let m = read_table(&query(), f.path()).expect("reads");
        assert_eq!(
            m.sets_ranks.as_deref(),
            Some("its process columns (active_procs, total_procs)")
        );
        // A ragged row is still an error, by line.
        let f = table("bytes,t_usec\n8,1\n16\n");
        let e = read_table(&query(), f.path()).expect_err("ragged");
        assert!(
            e.to_string().ends_with("line 3: 1 cells, the header has 2"),
            "{e}"
        );
    }

    #[test]
    fn zero_byte_rows_and_bandwidth_units() {
        use super::{Point, Row, Unit};
        let p = |bytes, usec| Point {
            active: Some(2),
            total: Some(2),
            bytes: Some(bytes),
            usec,
            value: usec,
            range: None,
        };
        // A 0-byte call predicted at 0 (returns at once), or measured 0:
        // not comparable. A 0-byte call with a prediction is compared.
        let r = Row::new(2, 2, &p(0, 0.3), 0.0, None, Unit::Usec, 0.0);
        assert!(!r.comparable && r.note == Some(super::ZERO_COUNT_NOTE));
        let r = Row::new(2, 2, &p(0, 0.0), 1.0, None, Unit::Usec, 0.0);
        assert!(!r.comparable && r.note == Some(super::ZERO_TIME_NOTE));
        let r = Row::new(2, 2, &p(0, 8.0), 10.0, None, Unit::Usec, 0.0);
        assert!(r.comparable && (r.error - 0.25).abs() < 1e-12);
        // Predicted at one read of the clock (`[node] timer`, 0.03 us):
        // the call returned at once, not comparable; more is compared.
        let r = Row::new(2, 2, &p(0, 0.11), 0.03, None, Unit::Usec, 0.03);
        assert!(!r.comparable && r.note == Some(super::ZERO_COUNT_NOTE));
        let r = Row::new(2, 2, &p(0, 0.11), 0.2, None, Unit::Usec, 0.03);
        assert!(r.comparable);
        // 1000 bytes in 2 us measured (500 MB/s), 2.5 us predicted (400
        // MB/s): the time is 25% too long, the bandwidth 20% too low.
        let mb = |bytes, mb_per_s: f64| Point {
            usec: bytes as f64 / mb_per_s,
            value: mb_per_s,
            ..p(bytes, 0.0)
        };
        let r = Row::new(2, 2, &mb(1000, 500.0), 2.5, None, Unit::MbPerSec, 0.0);
        assert_eq!((r.measured, r.predicted), (500.0, 400.0));
        assert!((r.time_error - 0.25).abs() < 1e-12);
        assert!((r.error + 0.2).abs() < 1e-12);
        assert!((r.error + r.time_error / (1.0 + r.time_error)).abs() < 1e-12);
        // Messages per second: 10^6 / us.
        let r = Row::new(
            2,
            2,
            &Point {
                value: 8e6,
                ..p(0, 0.125)
            },
            0.1,
            None,
            Unit::MsgPerSec,
            0.0,
        );
        assert_eq!((r.measured, r.predicted), (8e6, 1e7));
        assert!(r.comparable && (r.error - 0.25).abs() < 1e-12);
    }

    #[test]
    fn the_t_min_t_max_pair_is_compared_with_the_simulated_pair() {
        use super::{Point, Row, Unit, range_stats};
        let p = |bytes, range| Point {
            active: Some(2),
            total: Some(2),
            bytes: Some(bytes),
            usec: 2.0,
            value: 2.0,
            range,
        };
        // Measured 1..3 us, simulated 1.5..2.4 us: t_min +50%, t_max -20%.
        let a = Row::new(
            2,
            2,
            &p(8, Some((1.0, 3.0))),
            2.0,
            Some((1.5, 2.4)),
            Unit::Usec,
            0.0,
        );
        let g = a.range.expect("a pair");
        assert!((g.min_error - 0.5).abs() < 1e-12 && (g.max_error + 0.2).abs() < 1e-12);
        // Measured 2..4 us, simulated 2.2..4.4 us: +10% both.
        let b = Row::new(
            2,
            2,
            &p(16, Some((2.0, 4.0))),
            3.0,
            Some((2.2, 4.4)),
            Unit::Usec,
            0.0,
        );
        // No pair in the table, or a row that is not comparable: none.
        let c = Row::new(2, 2, &p(32, None), 2.0, Some((1.0, 2.0)), Unit::Usec, 0.0);
        let d = Row::new(
            2,
            2,
            &p(0, Some((0.1, 0.2))),
            0.0,
            Some((0.0, 0.0)),
            Unit::Usec,
            0.0,
        );
        assert!(c.range.is_none() && d.range.is_none());
        let s = range_stats(&[a, b, c, d]).expect("stats");
        assert_eq!(s.points, 2);
        assert!((s.min_median_abs_error - 0.3).abs() < 1e-12);
        assert!((s.min_max_abs_error - 0.5).abs() < 1e-12);
        assert!((s.max_median_abs_error - 0.15).abs() < 1e-12);
        assert!((s.max_max_abs_error - 0.2).abs() < 1e-12);
        assert!(range_stats(&[]).is_none());
    }

    #[test]
    fn bad_rows_are_named() {
        let f = table("bytes,t_usec\n0,-1\n");
        let e = read_table(&query(), f.path()).expect_err("negative time");
        assert!(
            e.to_string()
                .ends_with(":2: the time must be a positive number, got -1"),
            "{e}"
        );
    }

    #[test]
    fn the_result_line_is_found_among_other_output() {
        let out =
            "[0] hello\nPARSIM_RESULT {\"program\":\"heat.mpl\",\"ranks\":2,\"seconds\":1.5e-02}\n";
        assert_eq!(super::parse_result(out), Some(0.015));
        assert_eq!(super::parse_result("nothing"), None);
        assert_eq!(super::parse_result("PARSIM_RESULT {\"seconds\":-1}"), None);
    }

    #[test]
    fn a_comparison_as_text_and_data() {
        let c = super::Comparison {
            program: "a.mpl".into(),
            machine: "m".into(),
            column: "t_avg".into(),
            measured: "t.csv, column t_usec".into(),
            unit: super::Unit::Usec,
            rows: vec![super::Row {
                active: 2,
                total: 4,
                bytes: None,
                measured_usec: 10.0,
                predicted_usec: 11.0,
                measured: 10.0,
                predicted: 11.0,
                error: 0.1,
                time_error: 0.1,
                comparable: true,
                note: None,
                range: None,
            }],
            groups: vec![super::Group {
                active: 2,
                total: 4,
                points: 1,
                not_comparable: 0,
                median_abs_error: 0.1,
                max_abs_error: 0.1,
            }],
            median_abs_error: 0.1,
            max_abs_error: 0.1,
            range: None,
            notes: Vec::new(),
            skipped: Vec::new(),
        };
        let t = c.text();
        assert!(t.starts_with("program: a.mpl\nmachine: m\ncompared: simulated t_avg against t.csv, column t_usec\n\n"), "{t}");
        assert!(t.contains("| 2/4 | - | 10.00 | 11.00 | +10.0% |\n"), "{t}");
        assert!(t.ends_with("2 of 4: 1 points, median |error| 10.0%, max |error| 10.0%\nall: 1 points, median |error| 10.0%, max |error| 10.0%\n"), "{t}");
        let v = c.json();
        assert_eq!(v["measured"], "t.csv, column t_usec");
        assert!(v["groups"][0].get("points").is_none(), "{v}");
        assert_eq!(v["unit"], "us");
        assert_eq!(v["rows"][0]["comparable"], true);
        assert!(v["rows"][0].get("note").is_none(), "{v}");
        // A bandwidth table: values in MB/s, a row not comparable.
        let mut c = c;
        c.unit = super::Unit::MbPerSec;
        c.rows[0].measured = 500.0;
        c.rows[0].predicted = 400.0;
        c.rows[0].error = -0.2;
        let mut zero = c.rows[0].clone();
        zero.comparable = false;
        zero.note = Some(super::ZERO_COUNT_NOTE);
        c.rows.push(zero);
        c.groups[0].not_comparable = 1;
        let t = c.text();
        assert!(
            t.contains("| measured (MB/s) | predicted (MB/s) | error |\n"),
            "{t}"
        );
        assert!(
            t.contains("| 2/4 | - | 500.00 | 400.00 | -20.0% |\n"),
            "{t}"
        );
        assert!(
            t.contains("| 500.00 | 400.00 | not comparable (0 bytes, no data moved) |\n"),
            "{t}"
        );
        assert!(
            t.contains("error: of the MB/s as the benchmark prints it"),
            "{t}"
        );
        assert!(
            t.contains("2 of 4: 1 points and 1 not comparable, median"),
            "{t}"
        );
        assert!(
            t.contains("all: 1 points and 1 not comparable, median"),
            "{t}"
        );
        let v = c.json();
        assert_eq!(v["unit"], "MB/s");
        assert_eq!(v["rows"][1]["note"], "0 bytes, no data moved");
        assert_eq!(v["groups"][0]["not_comparable"], 1);
    }

    #[test]
    fn real_runs_as_text() {
        let row = |ranks, error: f64| super::RealRow {
            ranks,
            params: String::new(),
            runs: vec![1.0, 2.0],
            measured: 1.5,
            predicted: 1.5 * (1.0 + error),
            error,
            speed: None,
        };
        let c = super::RealComparison::of(vec![row(1, -0.2), row(2, 0.1)]);
        assert!((c.median_abs_error - 0.15).abs() < 1e-12);
        assert!(c.exceeds(0.1) && !c.exceeds(0.2));
        assert!(super::RealComparison::of(Vec::new()).exceeds(1.0));
        let r = super::RealRuns {
            program: std::path::Path::new("a.mpl"),
            params: &[],
            sets: &[],
            np: &[1, 2],
            repeat: 2,
            machine: None,
            ranks_per_node: None,
            blocks: None,
            noise: None,
            limits: super::Limits::default(),
            launcher: "run {ranks}",
            binary: std::path::Path::new("a"),
            speed_reference: false,
            retime: None,
        };
        let t = c.text(&r);
        assert!(t.starts_with("program: a.mpl   machine: built-in   blocks: cost formulas\nreal runs: `run {ranks}`, 2 run(s) per point"), "{t}");
        assert!(t.contains("    1  (defaults)  "), "{t}");
        assert!(
            t.ends_with("\n2 points: median |error| 15.0%, max |error| 20.0%\n"),
            "{t}"
        );
        assert_eq!(c.json(&r)["repeat"], 2);
        assert!(!t.contains("slowdown") && !t.contains("uncorrected"), "{t}");
        // Scaled to the machine's speed: the uncorrected prediction and its
        // error next to the corrected one.
        let mut fast = row(1, 0.02);
        fast.speed = Some(super::SpeedCorrection {
            reference: Some(0.011),
            slowdown: 1.1,
            uncorrected: 1.5 * 0.9,
        });
        let t = super::RealComparison::of(vec![fast]).text(&r);
        assert!(
            t.contains("`slowdown` is the reference workload's time then"),
            "{t}"
        );
        assert!(
            t.contains("   +2.0%     1.100       1.350000   -10.0%\n"),
            "{t}"
        );
        assert!(
            t.ends_with("uncorrected (kernel times as calibrated): median |error| 10.0%, max |error| 10.0%\n"),
            "{t}"
        );
        let j = super::RealComparison::of(vec![row(2, 0.0)]).json(&r);
        assert!(j["rows"][0].get("speed").is_none(), "{j}");
    }

    #[test]
    fn median_of_even_and_odd() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&mut []).is_nan());
    }
}
