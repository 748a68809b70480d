//! A finished run written for other tools: the timeline in Chrome's
//! trace-event format ([`chrome_trace`]) and as a Paraver trace
//! ([`crate::paraver`]), the communication matrix as CSV and as an SVG heat
//! map.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use serde_json::json;
use sim_core::SimReport;

use crate::Error;

/// Writes the timeline of `rep` (a run of `ranks` ranks of the program
/// `file`) to `path`: a Paraver trace for `.prv` (with `.pcf` and `.row`
/// beside it), else Chrome's trace-event JSON. Returns the files written.
pub fn write_trace(
    path: &Path,
    rep: &SimReport,
    ranks: u32,
    file: &str,
) -> Result<Vec<PathBuf>, Error> {
    let prv = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("prv"));
    let files: Vec<(PathBuf, String)> = if prv {
        let (prv, pcf, row) =
            crate::paraver::trace(rep, ranks, file, &crate::clock::paraver_date());
        vec![
            (path.to_owned(), prv),
            (path.with_extension("pcf"), pcf),
            (path.with_extension("row"), row),
        ]
    } else {
        vec![(path.to_owned(), chrome_trace(rep, ranks, file))]
    };
    let mut written = Vec::new();
    for (p, text) in files {
        std::fs::write(&p, text).map_err(|e| Error::write(&p, e))?;
        written.push(p);
    }
    Ok(written)
}

/// Writes the communication matrix: CSV at `path` and the heat map next to
/// it (`.svg`); given a `.svg` or `.png` path, the heat map there (PNG for
/// `.png`) and the CSV next to it. Returns the files written.
pub fn write_comm_matrix(
    path: &Path,
    rep: &SimReport,
    ranks: u32,
    file: &str,
) -> Result<Vec<PathBuf>, Error> {
    let picture = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("svg") || e.eq_ignore_ascii_case("png"));
    let (csv, image) = if picture {
        (path.with_extension("csv"), path.to_owned())
    } else {
        (path.to_owned(), path.with_extension("svg"))
    };
    std::fs::write(&csv, matrix_csv(rep)).map_err(|e| Error::write(&csv, e))?;
    crate::chart::write_picture(&image, &matrix_svg(rep, ranks, file))?;
    Ok(vec![csv, image])
}

/// The timeline in Chrome's trace-event format (JSON): one thread per rank
/// ("X" complete events for compute and communication, named by operation
/// and source line) and flow arrows ("s"/"f") from sender to receiver.
/// Times are in microseconds, as the format wants.
pub fn chrome_trace(rep: &SimReport, ranks: u32, file: &str) -> String {
    use sim_core::engine::TraceEvent;
    let mut events = Vec::new();
    events.push(json!({"name": "process_name", "ph": "M", "pid": 0, "args": {"name": file}}));
    let named = ranks.min(100_000);
    for r in 0..named {
        events.push(json!({"name": "thread_name", "ph": "M", "pid": 0, "tid": r, "args": {"name": format!("rank {r}")}}));
    }
    let mut flow = 0u64;
    for ev in &rep.trace {
        match ev {
            TraceEvent::Interval {
                rank,
                start,
                end,
                what,
                comm,
                line,
                ..
            } => {
                events.push(json!({
                    "name": what,
                    "cat": if *comm { "comm" } else { "compute" },
                    "ph": "X",
                    "pid": 0,
                    "tid": rank,
                    "ts": start * 1e6,
                    "dur": (end - start).max(0.0) * 1e6,
                    "args": {"line": line},
                }));
            }
            TraceEvent::Message {
                collective: true, ..
            } => {}
            TraceEvent::Message {
                src,
                dst,
                sent,
                received,
                bytes,
                collective: false,
            } => {
                flow += 1;
                events.push(json!({"name": "message", "cat": "message", "ph": "s", "id": flow, "pid": 0, "tid": src, "ts": sent * 1e6, "args": {"bytes": bytes, "to": dst}}));
                events.push(json!({"name": "message", "cat": "message", "ph": "f", "bp": "e", "id": flow, "pid": 0, "tid": dst, "ts": received * 1e6}));
            }
        }
    }
    json!({"traceEvents": events, "displayTimeUnit": "ns", "otherData": {"truncated": rep.trace_truncated}}).to_string()
}

/// The communication matrix as CSV: one row per (source, destination) pair
/// that exchanged messages. `seconds` sums, over the messages, the time from
/// the start of the send until the message (eager) or its request-to-send
/// (rendezvous) reached the destination.
pub fn matrix_csv(rep: &SimReport) -> String {
    let mut out = String::from("source,destination,messages,bytes,seconds\n");
    for (s, d, t) in &rep.comm_matrix {
        let _ = writeln!(out, "{s},{d},{},{},{:e}", t.messages, t.bytes, t.seconds);
    }
    out
}

/// Writes the communication calls counted in `rep` (a run of the program
/// `file`) to `path` as CSV ([`call_profile_csv`]).
pub fn write_call_profile(path: &Path, rep: &SimReport, file: &str) -> Result<(), Error> {
    std::fs::write(path, call_profile_csv(rep, file)).map_err(|e| Error::write(path, e))
}

/// The communication calls counted (`SimConfig::call_profile`) as CSV, in
/// the columns of `validation/npb/mpicount.c`, the wrapper that counts a
/// real run's calls: rank, site (`FILE:LINE`, with the program file's name
/// only), operation, peer (-1: none, or any), bytes, comm_size, calls; the
/// conventions are those of `sim_core::engine::CallCount`.
pub fn call_profile_csv(rep: &SimReport, file: &str) -> String {
    let name = Path::new(file)
        .file_name()
        .map_or_else(|| file.to_owned(), |n| n.to_string_lossy().into_owned());
    let mut out = String::from("rank,site,operation,peer,bytes,comm_size,calls\n");
    for c in &rep.call_profile {
        let peer = c.peer.map_or(-1, i64::from);
        let _ = writeln!(
            out,
            "{},{name}:{},{},{peer},{},{},{}",
            c.rank, c.line, c.operation, c.bytes, c.comm_size, c.calls
        );
    }
    out
}

/// The matrix as an SVG heat map of bytes (log scale), sources down,
/// destinations across, in the spirit of PARUS network_test's viewer.
/// Above 256 ranks, blocks of ranks are summed into one cell.
pub fn matrix_svg(rep: &SimReport, ranks: u32, file: &str) -> String {
    let n = ranks.max(1);
    let cells = n.min(256);
    let block = n.div_ceil(cells);
    let mut grid = vec![0u64; (cells * cells) as usize];
    for (s, d, t) in &rep.comm_matrix {
        let (i, j) = (s / block, d / block);
        grid[(i * cells + j) as usize] += t.bytes;
    }
    let max = grid.iter().copied().max().unwrap_or(0).max(1) as f64;
    let size = 512.0;
    let c = size / f64::from(cells);
    let (ox, oy) = (70.0, 50.0);
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#,
        w = size + 200.0,
        h = size + 110.0
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let title = format!("bytes sent, source (down) to destination (across): {file}, {n} ranks");
    let _ = writeln!(
        out,
        r#"<text x="10" y="20" font-size="14">{}</text>"#,
        crate::chart::escape(&title)
    );
    let _ = writeln!(
        out,
        r##"<rect x="{ox}" y="{oy}" width="{size}" height="{size}" fill="#f8f8f8" stroke="black"/>"##
    );
    for i in 0..cells {
        for j in 0..cells {
            let b = grid[(i * cells + j) as usize];
            if b == 0 {
                continue;
            }
            // Log scale: 1 byte light, the maximum dark red.
            let f = ((b as f64).ln_1p() / max.ln_1p()).clamp(0.0, 1.0);
            let (r, g, bl) = (255.0 - 80.0 * f, 230.0 * (1.0 - f), 200.0 * (1.0 - f));
            let _ = writeln!(
                out,
                r#"<rect x="{:.2}" y="{:.2}" width="{c:.2}" height="{c:.2}" fill="rgb({:.0},{:.0},{:.0})"><title>{}-{} to {}-{}: {b} B</title></rect>"#,
                ox + f64::from(j) * c,
                oy + f64::from(i) * c,
                r,
                g,
                bl,
                i * block,
                ((i + 1) * block).min(n) - 1,
                j * block,
                ((j + 1) * block).min(n) - 1
            );
        }
    }
    // Rank labels every `step` ranks (1, 2 or 5 times a power of ten, at
    // most about 16 labels), at the middle of the rank's cell, or of the
    // block of ranks that holds it.
    let step = [1u64, 2, 5]
        .iter()
        .flat_map(|&m| (0..10).map(move |e| m * 10u64.pow(e)))
        .filter(|&s| u64::from(n).div_ceil(s) <= 16)
        .min()
        .map_or(n, |s| u32::try_from(s).unwrap_or(n));
    for r in (0..n).step_by(step.max(1) as usize) {
        let p = (f64::from(r / block) + 0.5) * c;
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" text-anchor="middle" font-size="10">{r}</text>"#,
            ox + p,
            oy - 6.0
        );
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" text-anchor="end" font-size="10">{r}</text>"#,
            ox - 6.0,
            oy + p + 3.0
        );
    }
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">destination rank</text>"#,
        ox + size / 2.0,
        oy + size + 25.0
    );
    let _ = writeln!(
        out,
        r#"<text x="20" y="{}" transform="rotate(-90 20 {})" text-anchor="middle">source rank</text>"#,
        oy + size / 2.0,
        oy + size / 2.0
    );
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}">darkest: {} B{}</text>"#,
        ox,
        oy + size + 50.0,
        max as u64,
        if block > 1 {
            format!("; cells are blocks of {block} ranks")
        } else {
            String::new()
        }
    );
    out.push_str("</svg>\n");
    out
}
