//! Benchmark tables: IMB/PMB text output, OSU `osu_latency` and `osu_bw`
//! output, and CSV, read into (message size, time) points.
//!
//! Formats, as the tools print them:
//! - **IMB / PMB** (Intel MPI Benchmarks `IMB-MPI1`, and its ancestor Pallas
//!   PMB): each benchmark starts with `# Benchmarking NAME`, then one block
//!   per process count (`# #processes = 2`, PMB writes `# ( #processes = 2 )`),
//!   each with a table whose header is `#bytes #repetitions t[usec]
//!   Mbytes/sec` (PingPong, PingPing) or `#bytes #repetitions t_min[usec]
//!   t_max[usec] t_avg[usec]` (collectives). PingPong's `t[usec]` is half the
//!   round trip.
//! - **OSU** (`osu_latency`, `osu_bw` of the OSU Micro-Benchmarks): a title
//!   `# OSU MPI Latency Test v7.1`, an optional `# Datatype: MPI_CHAR.`, a
//!   header `# Size          Latency (us)` (7.0-7.4; 7.5 writes `# Size
//!   Avg Latency(us)`, possibly followed by more columns such as `Validation`),
//!   then rows `size value`. `osu_latency` is half the round trip in µs;
//!   `osu_bw` is a bandwidth in MB/s (10^6 B/s) of a window of back-to-back
//!   messages, so it gives the time per message of a *stream*
//!   (`size / (MB/s · 10^6)`), which measures the gap and G, not the
//!   latency.
//! - **CSV**: a header naming the columns; the size column is found by name
//!   (`bytes`, `size`, ...) and the time column by a µs-looking name
//!   (`..._usec`, `..._us`, `latency`, ...), both overridable. Times in µs.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

/// One measured point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Message size in bytes.
    pub bytes: u64,
    /// Measured time in seconds (a half round trip, or the time per message
    /// of a stream; see [`Measure`]).
    pub seconds: f64,
}

/// What a table's times measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// Half a ping-pong round trip (IMB/PMB PingPong `t[usec]`,
    /// `osu_latency`): the one-way time of a message.
    PingPong,
    /// Time per message of a stream of back-to-back messages (`osu_bw`): the
    /// sender's spacing of messages, `max(o_s, g + n·G)` in the model.
    Stream,
}

/// The input formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// IMB-MPI1 or PMB text output.
    Imb,
    /// OSU `osu_latency` output.
    OsuLatency,
    /// OSU `osu_bw` output.
    OsuBw,
    /// Comma-separated values with a header line.
    Csv,
}

impl Format {
    /// The name used on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Imb => "imb",
            Format::OsuLatency => "osu-latency",
            Format::OsuBw => "osu-bw",
            Format::Csv => "csv",
        }
    }

    /// Guesses the format of `text` from its content: an OSU title or
    /// header (`# Size ...`, osu_barrier's `# Avg Latency(us)`), IMB's
    /// `# Benchmarking`, `#bytes` or (Barrier's) `#repetitions` lines, or a
    /// CSV header.
    pub fn detect(text: &str) -> Option<Format> {
        let mut osu_title = None;
        for line in text.lines() {
            let line = line.trim();
            if let Some(rest) = line.strip_prefix('#') {
                let rest = rest.trim();
                if rest.starts_with("OSU ") {
                    osu_title = Some(rest);
                }
                if rest.starts_with("Benchmarking ")
                    || rest.starts_with("bytes")
                    || rest.starts_with("repetitions")
                {
                    return Some(Format::Imb);
                }
                if rest.starts_with("Avg Latency") {
                    return Some(Format::OsuLatency);
                }
                if let Some(header) = rest.strip_prefix("Size") {
                    let is_bw = header.contains("Bandwidth")
                        || osu_title.is_some_and(|title| title.contains("Bandwidth"));
                    return Some(if is_bw {
                        Format::OsuBw
                    } else {
                        Format::OsuLatency
                    });
                }
            }
        }
        // An OSU title without a header the lines above know: still OSU
        // output (its reader then says what is missing).
        if osu_title.is_some() {
            return Some(Format::OsuLatency);
        }
        let first = text
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty() && !line.starts_with('#'))?;
        first.contains(',').then_some(Format::Csv)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Format {
    type Err = InputError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "imb" | "pmb" => Ok(Format::Imb),
            "osu-latency" => Ok(Format::OsuLatency),
            "osu-bw" => Ok(Format::OsuBw),
            "csv" => Ok(Format::Csv),
            _ => Err(InputError::UnknownFormatName(s.into())),
        }
    }
}

/// How to read a table.
#[derive(Debug, Clone, Default)]
pub struct InputOptions {
    /// The format; `None` detects it from the content.
    pub format: Option<Format>,
    /// IMB: the benchmark to take (case-insensitive); default `PingPong`.
    pub benchmark: Option<String>,
    /// IMB: the process-count block to take; default the first.
    pub processes: Option<u32>,
    /// CSV: the size column; IMB: ignored (`#bytes`).
    pub bytes_col: Option<String>,
    /// CSV and IMB: the time column (in µs), e.g. `t_max[usec]`.
    pub time_col: Option<String>,
    /// CSV: keep only rows whose column has this value (`active_procs`, `2`).
    pub filters: Vec<(String, String)>,
}

/// A table read from a benchmark output.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// The points, sorted by size, sizes distinct.
    pub points: Vec<Point>,
    /// What the times measure.
    pub measure: Measure,
    /// The format it was read as.
    pub format: Format,
    /// Where in the input the points came from (benchmark, block, columns).
    pub origin: String,
    /// CSV rows left out because a cell the reader needs is empty.
    pub skipped: Vec<SkippedRow>,
    /// The eager limit as MPI semantics see it, when the output states it:
    /// the smallest size whose send waits for its receive. parsim's network
    /// benchmark probes it to the byte and prints `# parsim netbench: sends
    /// buffered below N bytes` (see [`buffered_below`]).
    pub buffered_below: Option<u64>,
}

/// The line of parsim's network benchmark that states its probed eager
/// limit, up to the number of bytes.
const BUFFERED_BELOW: &str = "# parsim netbench: sends buffered below ";

/// The probed eager limit stated in a benchmark output (`# parsim
/// netbench: sends buffered below N bytes`), if any: a send of N bytes
/// waited for its receive, one of N - 1 bytes did not. A line that does not
/// parse (or states 0) is ignored, as text the reader does not know is.
pub fn buffered_below(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|line| line.trim_start().strip_prefix(BUFFERED_BELOW))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse::<u64>().ok())
        .filter(|&n| n > 0)
}

/// A CSV row left out because a cell the reader needs is empty: the
/// reader says so (a warning) and goes on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedRow {
    /// The row's 1-based line.
    pub line: usize,
    /// The column whose cell is empty.
    pub column: String,
}

impl fmt::Display for SkippedRow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}: the `{}` cell is empty; the row is skipped",
            self.line, self.column
        )
    }
}

/// A column a table reader has to find: the message size or the time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    Bytes,
    Time,
}

impl std::fmt::Display for Column {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Column::Bytes => "message size",
            Column::Time => "time",
        })
    }
}

/// Why a table could not be read. Line numbers are 1-based.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum InputError {
    /// A format with an unknown name.
    #[error("unknown format `{0}` (expected imb, osu-latency, osu-bw or csv)")]
    UnknownFormatName(String),
    /// The content matches no format (a front end says how to name one).
    #[error(
        "cannot tell the format: no IMB `# Benchmarking` section, OSU header or CSV header found (name the format)"
    )]
    UnknownFormat,
    /// The IMB output has no section for the benchmark.
    #[error("no `# Benchmarking {name}` section; the file has: {}", list_or_none(.available))]
    NoBenchmark {
        /// The benchmark asked for.
        name: String,
        /// The benchmarks the file has.
        available: Vec<String>,
    },
    /// The IMB benchmark has no block for the process count.
    #[error("benchmark {benchmark} has no block for {processes} processes; it has: {}", list_or_none(.available))]
    NoProcessBlock {
        /// The benchmark.
        benchmark: String,
        /// The process count asked for.
        processes: u32,
        /// The process counts present.
        available: Vec<String>,
    },
    /// No table header where one was expected.
    #[error("{0}")]
    NoTable(String),
    /// A column named on the command line or needed is absent.
    #[error("no column `{name}`; the columns are: {}", .available.join(", "))]
    MissingColumn {
        /// The column asked for.
        name: String,
        /// The columns present.
        available: Vec<String>,
    },
    /// No column, or several, could be the size or the time column.
    #[error("{message}; the columns are: {} (name the {column} column)", .available.join(", "))]
    ChooseColumn {
        /// What is wrong.
        message: String,
        /// The column to name.
        column: Column,
        /// The columns present.
        available: Vec<String>,
    },
    /// A row that cannot be read.
    #[error("line {line}: {message}")]
    BadRow {
        /// The line.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// Two rows for one message size.
    #[error("lines {first_line} and {line}: two rows for {bytes} bytes (filter the table)")]
    DuplicateSize {
        /// The size.
        bytes: u64,
        /// The first row.
        first_line: usize,
        /// The second row.
        line: usize,
    },
    /// Too few points to fit anything.
    #[error("{found} data row(s) found; at least 2 message sizes are needed")]
    TooFewPoints {
        /// How many were found.
        found: usize,
    },
}

fn list_or_none(items: &[String]) -> String {
    if items.is_empty() {
        "none".into()
    } else {
        items.join(", ")
    }
}

/// A row before sorting: line number, size, time in seconds.
type RawRow = (usize, u64, f64);

/// Reads a benchmark table from `text`.
pub fn parse_table(text: &str, options: &InputOptions) -> Result<Table, InputError> {
    let format = match options.format {
        Some(format) => format,
        None => Format::detect(text).ok_or(InputError::UnknownFormat)?,
    };
    let (rows, measure, origin) = match format {
        Format::Imb => parse_imb(text, options)?,
        Format::OsuLatency => {
            let (rows, origin) = parse_osu(text, false)?;
            (rows, Measure::PingPong, origin)
        }
        Format::OsuBw => {
            let (rows, origin) = parse_osu(text, true)?;
            (rows, Measure::Stream, origin)
        }
        Format::Csv => {
            let (rows, origin, skipped) = parse_csv(text, options)?;
            let points = finish(rows)?;
            return Ok(Table {
                points,
                measure: Measure::PingPong,
                format,
                origin,
                skipped,
                buffered_below: None,
            });
        }
    };
    let points = finish(rows)?;
    Ok(Table {
        points,
        measure,
        format,
        origin,
        skipped: Vec::new(),
        buffered_below: match format {
            Format::Imb => buffered_below(text),
            _ => None,
        },
    })
}

/// Sorts by size, refuses duplicate sizes and tables of fewer than 2 points.
fn finish(mut rows: Vec<RawRow>) -> Result<Vec<Point>, InputError> {
    rows.sort_by_key(|&(line, bytes, _)| (bytes, line));
    for pair in rows.windows(2) {
        if let [(first_line, bytes, _), (line, next, _)] = *pair
            && bytes == next
        {
            return Err(InputError::DuplicateSize {
                bytes,
                first_line,
                line,
            });
        }
    }
    if rows.len() < 2 {
        return Err(InputError::TooFewPoints { found: rows.len() });
    }
    Ok(rows
        .into_iter()
        .map(|(_, bytes, seconds)| Point { bytes, seconds })
        .collect())
}

/// A message size: a whole, non-negative number.
fn parse_bytes(token: &str, line: usize) -> Result<u64, InputError> {
    let token = token.trim();
    if let Ok(bytes) = token.parse::<u64>() {
        return Ok(bytes);
    }
    // Some tools write sizes as floats ("1024.0"); accept whole values.
    match token.parse::<f64>() {
        Ok(x) if x >= 0.0 && x.fract() == 0.0 && x < 1.8e19 => Ok(x as u64),
        _ => Err(InputError::BadRow {
            line,
            message: format!("message size `{token}` is not a whole number of bytes"),
        }),
    }
}

/// A positive, finite number (a time or a bandwidth).
fn parse_positive(token: &str, what: &str, line: usize) -> Result<f64, InputError> {
    let token = token.trim();
    match token.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        Ok(_) => Err(InputError::BadRow {
            line,
            message: format!("{what} must be a positive number, got `{token}`"),
        }),
        Err(_) => Err(InputError::BadRow {
            line,
            message: format!("{what} `{token}` is not a number"),
        }),
    }
}

// ---------------------------------------------------------------- IMB / PMB

/// One process-count block of an IMB/PMB benchmark section, its table as
/// printed: IMB repeats `# Benchmarking NAME` for every process count, and
/// text before the first `#processes` line of a section belongs to its
/// first block.
#[derive(Debug, Clone, PartialEq)]
pub struct ImbBlock {
    /// The benchmark's name as written (`PingPong`, `Alltoall`); `None` for
    /// a table cut out by hand without its `# Benchmarking` line.
    pub benchmark: Option<String>,
    /// `# #processes = N` (PMB: `# ( #processes = N )`).
    pub processes: Option<u32>,
    /// `# ( K additional processes waiting in MPI_Barrier)`: the ranks of
    /// the run that are not in the benchmark's group ("k active of N").
    pub waiting: u32,
    /// The table header's columns, e.g. `#bytes #repetitions t[usec]
    /// Mbytes/sec`, or `#repetitions t_min[usec] ...` for Barrier; empty
    /// when the block has no table.
    pub columns: Vec<String>,
    /// The rows: 1-based line number and the whitespace-separated cells.
    pub rows: Vec<(usize, Vec<String>)>,
}

/// The process count of a `# #processes = 2` / `# ( #processes = 2 )` line.
fn imb_processes(comment: &str) -> Option<u32> {
    let rest = comment.split("#processes").nth(1)?;
    let rest = rest.trim_start().strip_prefix('=')?;
    let count: String = rest
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    count.parse().ok()
}

/// `K` of a `# ( K additional processes waiting in MPI_Barrier)` line.
fn imb_waiting(comment: &str) -> Option<u32> {
    let before = comment.split("additional process").next()?;
    if before.len() == comment.len() {
        return None;
    }
    before
        .trim()
        .trim_start_matches('(')
        .trim()
        .rsplit(char::is_whitespace)
        .next()?
        .parse()
        .ok()
}

/// Every block of every benchmark section of an IMB-MPI1 or PMB output, in
/// file order. A file without `# Benchmarking` lines but with a `#bytes`
/// table header is one block of an unnamed benchmark.
pub fn imb_blocks(text: &str) -> Result<Vec<ImbBlock>, InputError> {
    let lines: Vec<&str> = text.lines().collect();
    // Benchmark sections: (name, first line index, end index).
    let mut sections: Vec<(Option<String>, usize, usize)> = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let Some(rest) = line.trim().strip_prefix('#') else {
            continue;
        };
        if let Some(name) = rest.trim().strip_prefix("Benchmarking ") {
            if let Some(last) = sections.last_mut() {
                last.2 = index;
            }
            let name = name.split_whitespace().next().unwrap_or_default();
            sections.push((Some(name.to_owned()), index, lines.len()));
        }
    }
    if sections.is_empty() {
        if lines.iter().any(|line| {
            let line = line.trim();
            line.starts_with("#bytes") || line.starts_with("#repetitions")
        }) {
            sections.push((None, 0, lines.len()));
        } else {
            return Err(InputError::NoTable(
                "no `# Benchmarking` section and no `#bytes` table header".into(),
            ));
        }
    }
    let mut blocks = Vec::new();
    for (name, start, end) in sections {
        // Block starts: the `#processes` lines, or the section's start.
        let mut starts: Vec<(usize, Option<u32>)> = (start..end)
            .filter_map(|index| {
                let comment = lines[index].trim().strip_prefix('#')?;
                imb_processes(comment).map(|count| (index, Some(count)))
            })
            .collect();
        if starts.is_empty() {
            starts.push((start, None));
        }
        for (k, &(block_start, processes)) in starts.iter().enumerate() {
            let block_end = starts.get(k + 1).map_or(end, |next| next.0);
            let mut block = ImbBlock {
                benchmark: name.clone(),
                processes,
                waiting: 0,
                columns: Vec::new(),
                rows: Vec::new(),
            };
            let mut header = None;
            for (index, line) in lines.iter().enumerate().take(block_end).skip(block_start) {
                let trimmed = line.trim();
                if header.is_none() {
                    if let Some(comment) = trimmed.strip_prefix('#')
                        && let Some(waiting) = imb_waiting(comment)
                    {
                        block.waiting = waiting;
                    }
                    if trimmed.starts_with("#bytes") || trimmed.starts_with("#repetitions") {
                        block.columns = trimmed.split_whitespace().map(str::to_owned).collect();
                        header = Some(index);
                    }
                    continue;
                }
                if trimmed.is_empty() {
                    if block.rows.is_empty() {
                        continue;
                    }
                    break;
                }
                // A comment, or text that is not a row of numbers (a
                // launcher's or the program's own line after the table),
                // ends the table.
                if trimmed.starts_with('#')
                    || !trimmed.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '.')
                {
                    break;
                }
                let cells = trimmed.split_whitespace().map(str::to_owned).collect();
                block.rows.push((index + 1, cells));
            }
            blocks.push(block);
        }
    }
    Ok(blocks)
}

/// IMB's time column, or for its message-rate benchmarks (Uniband,
/// Biband: `#bytes #repetitions Mbytes/sec Msg/sec`) the time per message
/// of the aggregate stream, `1 / Msg/sec` (IMB 2019 `IMB_output.c`: Msg/sec
/// is the pairs' messages over the slowest rank's time, so its inverse is
/// what `osu_mbw_mr`'s MB/s gives as `bytes / (MB/s)`, and it is defined
/// at 0 bytes too).
fn parse_imb(
    text: &str,
    options: &InputOptions,
) -> Result<(Vec<RawRow>, Measure, String), InputError> {
    let wanted = options.benchmark.as_deref().unwrap_or("PingPong");
    let all = imb_blocks(text)?;
    // A table without its section line is taken as the benchmark asked for.
    let blocks: Vec<&ImbBlock> = all
        .iter()
        .filter(|block| {
            block
                .benchmark
                .as_deref()
                .is_none_or(|name| name.eq_ignore_ascii_case(wanted))
        })
        .collect();
    let Some(first) = blocks.first() else {
        let mut available: Vec<String> = Vec::new();
        for name in all.iter().filter_map(|block| block.benchmark.clone()) {
            if !available.contains(&name) {
                available.push(name);
            }
        }
        return Err(InputError::NoBenchmark {
            name: wanted.into(),
            available,
        });
    };
    let name = first.benchmark.clone().unwrap_or_else(|| wanted.to_owned());
    let block = match options.processes {
        None => *first,
        Some(wanted_count) => blocks
            .iter()
            .copied()
            .find(|block| block.processes == Some(wanted_count))
            .ok_or_else(|| InputError::NoProcessBlock {
                benchmark: name.clone(),
                processes: wanted_count,
                available: blocks
                    .iter()
                    .filter_map(|block| block.processes.map(|p| p.to_string()))
                    .collect(),
            })?,
    };
    if block.columns.first().map(String::as_str) != Some("#bytes") {
        return Err(InputError::NoTable(format!(
            "benchmark {name}: no `#bytes #repetitions ...` table header"
        )));
    }
    let columns = &block.columns;
    let rate_index = columns.iter().position(|c| c == "Msg/sec");
    let has_time = columns.iter().any(|c| c == "t[usec]" || c == "t_avg[usec]");
    // The column read, what its cells are, how one becomes seconds, and
    // what the seconds measure.
    let (index, what, seconds_of, measure, column): (usize, &str, fn(f64) -> f64, _, String) =
        match rate_index {
            Some(rate_index) if options.time_col.is_none() && !has_time => (
                rate_index,
                "the message rate",
                |rate| 1.0 / rate,
                Measure::Stream,
                "Msg/sec as time per message".to_owned(),
            ),
            _ => {
                let time_index = match &options.time_col {
                    Some(col) => columns
                        .iter()
                        .position(|c| c.eq_ignore_ascii_case(col))
                        .ok_or_else(|| InputError::MissingColumn {
                            name: col.clone(),
                            available: columns.clone(),
                        })?,
                    None => ["t[usec]", "t_avg[usec]"]
                        .iter()
                        .find_map(|want| columns.iter().position(|c| c == want))
                        .ok_or_else(|| InputError::ChooseColumn {
                            message: "no `t[usec]` or `t_avg[usec]` column".into(),
                            column: Column::Time,
                            available: columns.clone(),
                        })?,
                };
                (
                    time_index,
                    "the time",
                    |usec| usec * 1e-6,
                    Measure::PingPong,
                    columns[time_index].clone(),
                )
            }
        };
    let mut rows = Vec::new();
    for (line_no, tokens) in &block.rows {
        let (Some(bytes), Some(cell)) = (tokens.first(), tokens.get(index)) else {
            return Err(InputError::BadRow {
                line: *line_no,
                message: format!(
                    "expected {} columns ({}), got {}",
                    columns.len(),
                    columns.join(" "),
                    tokens.len()
                ),
            });
        };
        let bytes = parse_bytes(bytes, *line_no)?;
        let value = parse_positive(cell, what, *line_no)?;
        rows.push((*line_no, bytes, seconds_of(value)));
    }
    let block_name = match block.processes {
        Some(count) => format!(", {count} processes"),
        None => String::new(),
    };
    let origin = format!("IMB benchmark {name}{block_name}, column {column}");
    Ok((rows, measure, origin))
}

// ---------------------------------------------------------------- OSU

/// An OSU Micro-Benchmarks table as printed: the title, the header's
/// columns and the rows.
#[derive(Debug, Clone, PartialEq)]
pub struct OsuTable {
    /// `OSU MPI Latency Test v7.3` (without the `#`), or `OSU benchmark`.
    pub title: String,
    /// The header's columns: `Size`, `Latency (us)`; `Size`, `Avg
    /// Latency(us)`, `Min Latency(us)`, ... (`-f`); `Avg Latency(us)` for
    /// osu_barrier, which has no sizes.
    pub columns: Vec<String>,
    /// The rows: 1-based line number and the whitespace-separated cells.
    pub rows: Vec<(usize, Vec<String>)>,
}

/// Reads an OSU output: the header is the first comment starting with
/// `Size` or `Avg Latency`; column names contain single spaces, columns are
/// separated by two or more. Rows follow; a line that does not start with a
/// number (a launcher's message) ends the table, and is an error before the
/// first row.
pub fn osu_table(text: &str) -> Result<OsuTable, InputError> {
    let lines: Vec<&str> = text.lines().collect();
    let is_header = |line: &&str| {
        line.trim().strip_prefix('#').is_some_and(|rest| {
            let rest = rest.trim_start();
            rest.starts_with("Size") || rest.starts_with("Avg Latency")
        })
    };
    // The header is the last one before the first row of numbers: OMB 5.6's
    // osu_mbw_mr prints a stray `# Size  Latency (us)` above its real
    // `# Size  MB/s  Messages/s`.
    let first_row = lines
        .iter()
        .position(|line| {
            line.split_whitespace()
                .next()
                .is_some_and(|cell| !cell.starts_with('#') && cell.parse::<f64>().is_ok())
        })
        .unwrap_or(lines.len());
    let header_index = lines[..first_row]
        .iter()
        .rposition(is_header)
        .or_else(|| lines.iter().position(is_header))
        .ok_or_else(|| {
            InputError::NoTable(
                "no OSU header line (`# Size  Latency (us)`, `# Avg Latency(us)`)".into(),
            )
        })?;
    let title = lines[..header_index]
        .iter()
        .rev()
        .filter_map(|line| line.trim().strip_prefix('#'))
        .map(str::trim)
        .find(|rest| rest.starts_with("OSU "))
        .unwrap_or("OSU benchmark")
        .to_owned();
    let header = lines[header_index].trim();
    let columns: Vec<String> = header
        .trim_start_matches('#')
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_owned)
        .collect();
    let mut rows = Vec::new();
    for (index, line) in lines.iter().enumerate().skip(header_index + 1) {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let cells: Vec<String> = trimmed.split_whitespace().map(str::to_owned).collect();
        let line_no = index + 1;
        if cells.first().is_none_or(|c| c.parse::<f64>().is_err()) {
            if rows.is_empty() {
                return Err(InputError::BadRow {
                    line: line_no,
                    message: format!("expected a row of numbers after the header `{header}`"),
                });
            }
            break;
        }
        rows.push((line_no, cells));
    }
    Ok(OsuTable {
        title,
        columns,
        rows,
    })
}

fn parse_osu(text: &str, bandwidth: bool) -> Result<(Vec<RawRow>, String), InputError> {
    let table = osu_table(text)?;
    if table.columns.first().map(String::as_str) != Some("Size") {
        return Err(InputError::NoTable(
            "no OSU `# Size ...` header line".into(),
        ));
    }
    let mut rows = Vec::new();
    for (line_no, tokens) in &table.rows {
        let line_no = *line_no;
        let bytes = parse_bytes(&tokens[0], line_no)?;
        let Some(value) = tokens.get(1) else {
            return Err(InputError::BadRow {
                line: line_no,
                message: "a size without a value".into(),
            });
        };
        let seconds = if bandwidth {
            let mb_per_s = parse_positive(value, "the bandwidth", line_no)?;
            if bytes == 0 {
                return Err(InputError::BadRow {
                    line: line_no,
                    message: "a bandwidth for 0 bytes has no time per message".into(),
                });
            }
            bytes as f64 / (mb_per_s * 1e6)
        } else {
            parse_positive(value, "the latency", line_no)? * 1e-6
        };
        rows.push((line_no, bytes, seconds));
    }
    let origin = if bandwidth {
        format!("{}, MB/s as time per streamed message", table.title)
    } else {
        table.title
    };
    Ok((rows, origin))
}

// ---------------------------------------------------------------- CSV

/// A CSV table as read by the `csv` crate: the header's columns and the
/// records, cells trimmed and unquoted (`"t_avg[usec]"`, `"1,024"` as one
/// cell). Blank lines and lines starting with `#` (after blanks) are not
/// records; the first record is the header.
#[derive(Debug, Clone, PartialEq)]
pub struct CsvTable {
    /// The header's cells.
    pub columns: Vec<String>,
    /// The records: the 1-based line each starts on, and its cells (as
    /// many as the header's).
    pub rows: Vec<(usize, Vec<String>)>,
}

impl CsvTable {
    /// The first of the `needed` columns whose cell in `cells` is empty,
    /// as the row to skip.
    pub fn empty_cell(
        &self,
        line: usize,
        cells: &[String],
        needed: &[usize],
    ) -> Option<SkippedRow> {
        needed
            .iter()
            .find(|&&i| cells.get(i).is_none_or(|c| c.is_empty()))
            .map(|&i| SkippedRow {
                line,
                column: self.columns.get(i).cloned().unwrap_or_default(),
            })
    }
}

/// Reads CSV text (RFC 4180: quoted fields with commas, doubled quotes and
/// line breaks). Errors: no header, a record with another number of cells
/// than the header (named by its line), or text the `csv` crate refuses.
pub fn csv_table(text: &str) -> Result<CsvTable, InputError> {
    // Comment lines become blank lines, so that line numbers stay those
    // of the file.
    let mut cleaned = String::with_capacity(text.len());
    for line in text.lines() {
        if !line.trim_start().starts_with('#') {
            cleaned.push_str(line);
        }
        cleaned.push('\n');
    }
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(cleaned.as_bytes());
    let mut columns: Option<Vec<String>> = None;
    let mut rows = Vec::new();
    let bytes = cleaned.as_bytes();
    // Where the last record started, and its 1-based line.
    let (mut seen, mut line) = (0, 1);
    for record in reader.records() {
        let record = record.map_err(|e| InputError::BadRow {
            line: e.position().map_or(0, |p| p.line() as usize),
            message: format!("not CSV: {e}"),
        })?;
        // The record's line from its byte offset (the `csv` crate's own
        // line count skips blank lines), counted on from the last record's;
        // an offset at blank lines before the record moves past them.
        let start = record
            .position()
            .and_then(|p| usize::try_from(p.byte()).ok())
            .unwrap_or(seen)
            .clamp(seen, bytes.len());
        line += bytes[seen..start].iter().filter(|&&b| b == b'\n').count();
        seen = start;
        while let Some(&b) = bytes.get(seen).filter(|&&b| b == b'\n' || b == b'\r') {
            line += usize::from(b == b'\n');
            seen += 1;
        }
        let cells: Vec<String> = record.iter().map(|c| c.trim().to_owned()).collect();
        if cells.iter().all(String::is_empty) {
            continue;
        }
        match &columns {
            None => columns = Some(cells),
            Some(header) => {
                if cells.len() != header.len() {
                    return Err(InputError::BadRow {
                        line,
                        message: format!("{} cells, the header has {}", cells.len(), header.len()),
                    });
                }
                rows.push((line, cells));
            }
        }
    }
    let columns = columns.ok_or_else(|| InputError::NoTable("empty CSV: no header line".into()))?;
    Ok(CsvTable { columns, rows })
}

const BYTES_NAMES: &[&str] = &[
    "bytes",
    "#bytes",
    "size",
    "msg_size",
    "message_size",
    "msgsize",
    "size_bytes",
    "bytes_per_message",
];

fn looks_like_usec(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.contains("usec")
        || lower.ends_with("_us")
        || lower.ends_with("(us)")
        || lower.ends_with("[us]")
        || lower.contains("latency")
}

fn choose_column(
    columns: &[String],
    explicit: Option<&str>,
    role: &str,
    column: Column,
    matches: impl Fn(&str) -> bool,
) -> Result<usize, InputError> {
    if let Some(name) = explicit {
        return columns
            .iter()
            .position(|c| c.eq_ignore_ascii_case(name))
            .ok_or_else(|| InputError::MissingColumn {
                name: name.into(),
                available: columns.to_vec(),
            });
    }
    let candidates: Vec<usize> = (0..columns.len())
        .filter(|&i| matches(&columns[i]))
        .collect();
    match candidates.as_slice() {
        [only] => Ok(*only),
        [] => Err(InputError::ChooseColumn {
            message: format!("no column looks like the {role}"),
            column,
            available: columns.to_vec(),
        }),
        several => Err(InputError::ChooseColumn {
            message: format!(
                "several columns could be the {role} ({})",
                several
                    .iter()
                    .map(|&i| columns[i].as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            column,
            available: columns.to_vec(),
        }),
    }
}

/// The rows, the origin, and the rows skipped for an empty cell.
type CsvRows = (Vec<RawRow>, String, Vec<SkippedRow>);

fn parse_csv(text: &str, options: &InputOptions) -> Result<CsvRows, InputError> {
    let table = csv_table(text)?;
    let columns = &table.columns;
    let bytes_index = choose_column(
        columns,
        options.bytes_col.as_deref(),
        "message size in bytes",
        Column::Bytes,
        |name| BYTES_NAMES.iter().any(|b| name.eq_ignore_ascii_case(b)),
    )?;
    let time_index = choose_column(
        columns,
        options.time_col.as_deref(),
        "time in microseconds",
        Column::Time,
        looks_like_usec,
    )?;
    let mut filters = Vec::new();
    for (name, value) in &options.filters {
        let index = columns
            .iter()
            .position(|c| c.eq_ignore_ascii_case(name))
            .ok_or_else(|| InputError::MissingColumn {
                name: name.clone(),
                available: columns.clone(),
            })?;
        filters.push((index, value.as_str()));
    }
    let mut needed = vec![bytes_index, time_index];
    needed.extend(filters.iter().map(|&(i, _)| i));
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    for (line_no, cells) in &table.rows {
        let line_no = *line_no;
        if let Some(skip) = table.empty_cell(line_no, cells, &needed) {
            skipped.push(skip);
            continue;
        }
        if filters.iter().any(|&(i, value)| cells[i] != value) {
            continue;
        }
        let bytes = parse_bytes(&cells[bytes_index], line_no)?;
        let usec = parse_positive(&cells[time_index], "the time", line_no)?;
        rows.push((line_no, bytes, usec * 1e-6));
    }
    let mut origin = format!(
        "CSV columns {} (bytes) and {} (us)",
        columns[bytes_index], columns[time_index]
    );
    for (name, value) in &options.filters {
        origin.push_str(&format!(", rows with {name} = {value}"));
    }
    Ok((rows, origin, skipped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_formats() {
        assert_eq!(
            Format::detect("# OSU MPI Latency Test v7.1\n# Size          Latency (us)\n1 2.0\n"),
            Some(Format::OsuLatency)
        );
        assert_eq!(
            Format::detect("# OSU MPI Bandwidth Test v7.1\n# Size      Bandwidth (MB/s)\n1 3.0\n"),
            Some(Format::OsuBw)
        );
        assert_eq!(
            Format::detect("#----\n# Benchmarking PingPong\n"),
            Some(Format::Imb)
        );
        assert_eq!(
            Format::detect("#repetitions t_min[usec] t_max[usec] t_avg[usec]\n1000 1 1 1\n"),
            Some(Format::Imb)
        );
        assert_eq!(
            Format::detect("# OSU MPI Barrier Latency Test v5.6.2\n# Avg Latency(us)\n 2.41\n"),
            Some(Format::OsuLatency)
        );
        assert_eq!(
            Format::detect("# OSU MPI Foo Test\n1 2\n"),
            Some(Format::OsuLatency)
        );
        assert_eq!(Format::detect("bytes,t_usec\n0,1\n"), Some(Format::Csv));
        assert_eq!(Format::detect("hello\n"), None);
    }

    #[test]
    fn csv_picks_columns_by_name() {
        let text = "bytes,repetitions,ekss1_t_usec\n0,1000,5.21\n1,1000,6.12\n";
        let table = parse_table(text, &InputOptions::default()).expect("parses");
        assert_eq!(table.points.len(), 2);
        assert_eq!(table.points[1].bytes, 1);
        approx::assert_relative_eq!(table.points[1].seconds, 6.12e-6);
    }

    #[test]
    fn csv_filters_rows() {
        let text = "active_procs,bytes,t_usec\n2,0,1\n4,0,2\n2,8,3\n";
        let options = InputOptions {
            filters: vec![("active_procs".into(), "2".into())],
            ..InputOptions::default()
        };
        let table = parse_table(text, &options).expect("parses");
        assert_eq!(table.points.len(), 2);
        let unfiltered = parse_table(text, &InputOptions::default());
        assert!(matches!(
            unfiltered,
            Err(InputError::DuplicateSize { bytes: 0, .. })
        ));
    }

    #[test]
    fn csv_errors_name_the_problem() {
        let ambiguous = "bytes,a_usec,b_usec\n0,1,2\n1,1,2\n";
        let err = parse_table(ambiguous, &InputOptions::default()).expect_err("ambiguous");
        assert!(err.to_string().contains("a_usec, b_usec"), "{err}");
        assert!(err.to_string().contains("(name the time column)"), "{err}");
        assert!(matches!(
            err,
            InputError::ChooseColumn {
                column: Column::Time,
                ..
            }
        ));
        let negative = "bytes,t_usec\n0,1\n1,-2\n";
        let err = parse_table(negative, &InputOptions::default()).expect_err("negative");
        assert_eq!(
            err.to_string(),
            "line 3: the time must be a positive number, got `-2`"
        );
        let short = "bytes,t_usec\n0,1\n";
        assert!(matches!(
            parse_table(short, &InputOptions::default()),
            Err(InputError::TooFewPoints { found: 1 })
        ));
        let ragged = "bytes,t_usec\n0,1\n1\n";
        assert_eq!(
            parse_table(ragged, &InputOptions::default())
                .expect_err("ragged")
                .to_string(),
            "line 3: 1 cells, the header has 2"
        );
    }

    #[test]
    fn csv_quotes_and_empty_cells() {
        // Quoted names and cells, a comma inside quotes, a comment and a
        // blank line: line numbers stay the file's.
        let text = "# measured\n\"bytes\",\"t_avg[usec]\",\"note\"\n0,\"1.5\",\"a, b\"\n\n8,,x\n16,2.5,\n32,3.5,\"\"\n";
        let table = csv_table(text).expect("reads");
        assert_eq!(table.columns, ["bytes", "t_avg[usec]", "note"]);
        assert_eq!(
            table.rows[0],
            (3, vec!["0".into(), "1.5".into(), "a, b".into()])
        );
        assert_eq!(table.rows[1].0, 5);
        let parsed = parse_table(text, &InputOptions::default()).expect("parses");
        let sizes: Vec<u64> = parsed.points.iter().map(|p| p.bytes).collect();
        assert_eq!(sizes, [0, 16, 32]);
        approx::assert_relative_eq!(parsed.points[1].seconds, 2.5e-6);
        // The empty time cell of line 5 is skipped and said; the empty
        // `note` cells are not needed.
        assert_eq!(
            parsed.skipped,
            [SkippedRow {
                line: 5,
                column: "t_avg[usec]".into()
            }]
        );
        assert_eq!(
            parsed.skipped[0].to_string(),
            "line 5: the `t_avg[usec]` cell is empty; the row is skipped"
        );
        assert!(matches!(
            csv_table("# only a comment\n\n"),
            Err(InputError::NoTable(_))
        ));
    }

    #[test]
    fn imb_blocks_and_benchmarks() {
        let text = "\
#---------------------------------------------------
# Benchmarking Sendrecv
# #processes = 2
#---------------------------------------------------
       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]   Mbytes/sec
            0         1000         1.00         1.10         1.05         0.00
            1         1000         1.20         1.30         1.25         1.54

#---------------------------------------------------
# Benchmarking Sendrecv
# #processes = 4
#---------------------------------------------------
       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]   Mbytes/sec
            0         1000         2.00         2.10         2.05         0.00
            1         1000         2.20         2.30         2.25         0.87
";
        let options = InputOptions {
            benchmark: Some("sendrecv".into()),
            processes: Some(4),
            time_col: Some("t_max[usec]".into()),
            ..InputOptions::default()
        };
        let table = parse_table(text, &options).expect("parses");
        approx::assert_relative_eq!(table.points[0].seconds, 2.10e-6);
        let first = parse_table(
            text,
            &InputOptions {
                benchmark: Some("Sendrecv".into()),
                ..InputOptions::default()
            },
        )
        .expect("parses");
        approx::assert_relative_eq!(first.points[1].seconds, 1.25e-6);
        let missing = parse_table(text, &InputOptions::default()).expect_err("no PingPong");
        assert_eq!(
            missing.to_string(),
            "no `# Benchmarking PingPong` section; the file has: Sendrecv"
        );
        let no_block = parse_table(
            text,
            &InputOptions {
                benchmark: Some("Sendrecv".into()),
                processes: Some(8),
                ..InputOptions::default()
            },
        )
        .expect_err("no block");
        assert!(no_block.to_string().contains("it has: 2"), "{no_block}");
    }

    #[test]
    fn pmb_process_line() {
        assert_eq!(imb_processes(" ( #processes = 2 ) "), Some(2));
        assert_eq!(imb_processes(" #processes = 16 "), Some(16));
        assert_eq!(
            imb_processes(" ( 6 additional processes waiting in MPI_Barrier)"),
            None
        );
        assert_eq!(
            imb_waiting(" ( 6 additional processes waiting in MPI_Barrier)"),
            Some(6)
        );
        assert_eq!(imb_waiting(" #processes = 16 "), None);
    }

    #[test]
    fn osu_bw_is_a_stream() {
        let text =
            "# OSU MPI Bandwidth Test v7.1\n# Size      Bandwidth (MB/s)\n1 2.0\n1000000 1000.0\n";
        let table = parse_table(text, &InputOptions::default()).expect("parses");
        assert_eq!(table.measure, Measure::Stream);
        approx::assert_relative_eq!(table.points[0].seconds, 0.5e-6);
        approx::assert_relative_eq!(table.points[1].seconds, 1e-3);
    }

    #[test]
    fn imb_uniband_is_a_stream_of_its_message_rate() {
        // IMB 2019 Uniband as printed (Alaska, 32 ranks per node), two of
        // its blocks.
        let text = "\
#---------------------------------------------------
# Benchmarking Uniband
# #processes = 2
# ( 62 additional processes waiting in MPI_Barrier)
#---------------------------------------------------
       #bytes #repetitions   Mbytes/sec      Msg/sec
            0         1000         0.00      8144567
            1         1000         7.27      7270386
      4194304           10      9440.70         2251

#---------------------------------------------------
# Benchmarking Uniband
# #processes = 4
# ( 60 additional processes waiting in MPI_Barrier)
#---------------------------------------------------
       #bytes #repetitions   Mbytes/sec      Msg/sec
            0         1000         0.00     16436650
      4194304           10     19420.33         4630
";
        let options = |processes| InputOptions {
            benchmark: Some("Uniband".into()),
            processes,
            ..InputOptions::default()
        };
        let two = parse_table(text, &options(None)).expect("parses");
        assert_eq!(two.format, Format::Imb);
        assert_eq!(two.measure, Measure::Stream);
        assert_eq!(two.points.len(), 3);
        approx::assert_relative_eq!(two.points[0].seconds, 1.0 / 8_144_567.0);
        approx::assert_relative_eq!(two.points[2].seconds, 1.0 / 2251.0);
        assert!(two.origin.contains("2 processes"), "{}", two.origin);
        let four = parse_table(text, &options(Some(4))).expect("parses");
        approx::assert_relative_eq!(four.points[1].seconds, 1.0 / 4630.0);
        // A time column named on the command line still wins.
        let named = InputOptions {
            time_col: Some("Mbytes/sec".into()),
            ..options(None)
        };
        let t = parse_table(text, &named).expect_err("0 MB/s is not a time");
        assert!(t.to_string().contains("positive"), "{t}");
    }

    #[test]
    fn never_panics_on_garbage() {
        let inputs = [
            "",
            "#",
            "# Benchmarking",
            "# Benchmarking PingPong\n#bytes\n1",
            "# Benchmarking PingPong\n#bytes t[usec]\nx y\n",
            "# OSU MPI Latency Test\n# Size\n",
            "# OSU MPI Latency Test\n# Size Latency\n12\n",
            "# Size Latency\n99999999999999999999999 1\n",
            ",,,\n,,,\n",
            "bytes,t_usec\n1e300,1\n",
            "bytes,t_usec\nnan,inf\n",
        ];
        for input in inputs {
            for format in [
                None,
                Some(Format::Imb),
                Some(Format::OsuLatency),
                Some(Format::OsuBw),
                Some(Format::Csv),
            ] {
                let options = InputOptions {
                    format,
                    ..InputOptions::default()
                };
                let _ = parse_table(input, &options);
            }
        }
    }

    #[test]
    fn reads_the_probed_eager_limit_of_parsims_benchmark() {
        let text = "# parsim netbench: library MPICH Version: 4.0.2\n\
                    #---------------------------------------------------\n\
                    # Benchmarking PingPong\n\
                    # #processes = 2\n\
                    #---------------------------------------------------\n\
                    #bytes #repetitions t[usec] Mbytes/sec\n\
                    0 1000 0.19 0.00\n\
                    8192 1000 1.49 5485.68\n\
                    16384 1000 4.04 4057.79\n\
                    # parsim netbench: sends buffered below 8256 bytes\n";
        let table = parse_table(text, &InputOptions::default()).expect("parses");
        assert_eq!(table.points.len(), 3);
        assert_eq!(table.buffered_below, Some(8256));
        // Without the line, or with one that does not parse, nothing.
        let plain = text.replace("sends buffered below 8256 bytes", "memcpy 4.6e10 bytes/s");
        assert_eq!(
            parse_table(&plain, &InputOptions::default())
                .expect("parses")
                .buffered_below,
            None
        );
        assert_eq!(
            buffered_below("# parsim netbench: sends buffered below many bytes"),
            None
        );
        assert_eq!(
            buffered_below("# parsim netbench: sends buffered below 0 bytes"),
            None
        );
    }
}
