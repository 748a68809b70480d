//! One self-contained HTML page about a run (`parsim report`; no network
//! needed to open it: inline CSS, inline SVG, a few lines of inline
//! script): the summary, where the time goes per rank, the ranks that
//! finish last, the critical path, the scaling plot of an optional sweep,
//! the communication heat map and, for up to 64 ranks, the timeline.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use sim_core::SimReport;
use sim_core::engine::PrintLine;

use crate::chart::escape;
use crate::diagnostics::{fmt_time, rank_ranges};
use crate::rank_charts::{self, MAX_TIMELINE_RANKS};
use crate::study::Series;

/// Lines of `print` output shown on the page.
pub const MAX_PRINTED: usize = 200;
/// Rows of the critical path's step list.
const MAX_STEPS: usize = 300;
/// Ranks listed among those that finish last.
const LAST_RANKS: usize = 10;

/// Everything the page shows.
pub struct Page<'a> {
    /// The program's file name and source text.
    pub file: &'a str,
    pub source: &'a str,
    /// The machine's name.
    pub machine: &'a str,
    /// The `param` overrides of the run.
    pub params: &'a [(String, String)],
    /// The run, with its timeline and communication matrix.
    pub rep: &'a SimReport,
    /// Wall-clock seconds the simulation took.
    pub wall: f64,
    /// `print` output (the first [`MAX_PRINTED`] lines are shown).
    pub printed: &'a [PrintLine],
    /// The scaling study, if one was run.
    pub series: Option<&'a [Series]>,
    pub weak: bool,
    /// How the notes tell the reader to get what the page lacks.
    pub advice: Advice<'a>,
}

/// How a front end names its options in the page's notes (on the command
/// line, its flags).
#[derive(Debug, Clone, Copy)]
pub struct Advice<'a> {
    /// The limit on recorded timeline events (`--trace-limit`).
    pub trace_limit: &'a str,
    /// How to add a scaling study, and its machines (shown as code).
    pub sweep: &'a str,
    pub sweep_machines: &'a str,
    /// How to write the whole timeline for another viewer (shown as code).
    pub trace: &'a str,
}

const STYLE: &str = r#"
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
       margin: 0; color: #222; background: #f4f5f7; }
header { background: #263238; color: white; padding: 14px 28px; }
header h1 { margin: 0; font-size: 22px; }
header p { margin: 4px 0 0; color: #cfd8dc; }
nav { padding: 8px 28px; background: #37474f; }
nav a { color: #eceff1; margin-right: 16px; text-decoration: none; font-size: 14px; }
nav a:hover { text-decoration: underline; }
main { padding: 8px 28px 28px; max-width: 1100px; }
section { background: white; border-radius: 6px; padding: 12px 20px; margin: 14px 0;
          box-shadow: 0 1px 2px rgba(0,0,0,.12); }
h2 { font-size: 18px; margin: 4px 0 10px; }
table { border-collapse: collapse; font-size: 13px; margin: 6px 0; }
th, td { padding: 3px 10px; border-bottom: 1px solid #e0e0e0; text-align: right; }
th { background: #eceff1; }
td.l, th.l { text-align: left; }
table.summary td:first-child { text-align: left; color: #555; }
.big { font-size: 20px; font-weight: bold; }
.note { color: #555; font-size: 13px; }
.chart { overflow-x: auto; }
.chart svg { max-width: 100%; height: auto; }
code, pre { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12px; }
pre { background: #f7f7f7; padding: 8px; overflow-x: auto; max-height: 300px; }
#js-errors { color: #b71c1c; }
"#;

/// Records script errors in the page itself (`data-errors` on `<html>` and
/// a visible list), so that a headless browser's DOM shows them.
const ERROR_HOOK: &str = r#"window.onerror = function (message, source, line) {
  var root = document.documentElement;
  root.setAttribute("data-errors", (root.getAttribute("data-errors") || "") + message + " (line " + line + "); ");
  var list = document.getElementById("js-errors");
  if (list) { list.textContent += message + "\n"; }
  return false;
};"#;

/// Runs last: checks that every section and chart made it into the page
/// and marks the page as complete (`data-ok`).
const CHECK: &str = r#"(function () {
  var ids = ["summary", "breakdown", "last", "critical-path", "scaling", "comm-matrix", "timeline"];
  var missing = ids.filter(function (id) { return !document.getElementById(id); });
  if (missing.length) { throw new Error("sections missing: " + missing.join(", ")); }
  document.body.setAttribute("data-svgs", String(document.querySelectorAll("svg").length));
  document.body.setAttribute("data-ok", "1");
})();"#;

impl Page<'_> {
    /// The page as one HTML document.
    pub fn html(&self) -> String {
        let mut out = String::new();
        let title = format!("parsim report: {} on {}", self.file, self.machine);
        let _ = writeln!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>{STYLE}</style>\n<script>{ERROR_HOOK}</script>\n</head>\n<body>",
            escape(&title)
        );
        let _ = writeln!(
            out,
            "<header><h1>parsim report</h1><p>{} &middot; {} &middot; {} ranks</p></header>",
            escape(self.file),
            escape(self.machine),
            self.rep.ranks.len()
        );
        out.push_str(
            "<nav><a href=\"#summary\">summary</a><a href=\"#breakdown\">where the time goes</a>\
             <a href=\"#last\">last ranks</a><a href=\"#critical-path\">critical path</a>\
             <a href=\"#scaling\">scaling</a><a href=\"#comm-matrix\">communication</a>\
             <a href=\"#timeline\">timeline</a></nav>\n<main>\n<pre id=\"js-errors\" hidden></pre>\n",
        );
        self.summary(&mut out);
        self.breakdown(&mut out);
        self.last_ranks(&mut out);
        self.critical_path(&mut out);
        self.scaling(&mut out);
        self.comm_matrix(&mut out);
        self.timeline(&mut out);
        self.output(&mut out);
        let _ = writeln!(out, "</main>\n<script>{CHECK}</script>\n</body>\n</html>");
        out
    }

    fn summary(&self, out: &mut String) {
        let rep = self.rep;
        let n = rep.ranks.len();
        let sum = |f: fn(&sim_core::engine::RankStats) -> f64| -> f64 {
            rep.ranks.iter().map(f).sum::<f64>()
        };
        let total = sum(|s| s.finish).max(1e-300);
        let share = |v: f64| format!("{:.1}%", v / total * 100.0);
        let params = if self.params.is_empty() {
            "(as declared)".to_owned()
        } else {
            self.params
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(
            out,
            "<section id=\"summary\"><h2>Summary</h2>\n<p class=\"big\">predicted run time: {}</p>\n<table class=\"summary\">",
            escape(&fmt_time(rep.predicted_seconds))
        );
        let rows = [
            ("program", self.file.to_owned()),
            ("params", params),
            ("machine", self.machine.to_owned()),
            ("ranks", n.to_string()),
            ("messages", rep.messages.to_string()),
            ("bytes", rep.bytes.to_string()),
            ("events", rep.events.to_string()),
            (
                "rank time in compute / communication / waiting",
                format!(
                    "{} / {} / {}",
                    share(sum(|s| s.compute)),
                    share(sum(|s| s.comm)),
                    share(sum(|s| s.wait()))
                ),
            ),
            ("simulated in", format!("{:.3} s", self.wall)),
        ];
        for (k, v) in rows {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td class=\"l\">{}</td></tr>",
                escape(k),
                escape(&v)
            );
        }
        out.push_str("</table></section>\n");
    }

    fn breakdown(&self, out: &mut String) {
        let (svg, note) = rank_charts::breakdown_svg(self.rep);
        out.push_str("<section id=\"breakdown\"><h2>Where the time goes, per rank</h2>\n");
        out.push_str(
            "<p class=\"note\">Each rank's finish time split into compute (kernels, copies, reductions), \
             communication (CPU overheads of MPI calls) and waiting (for partners, messages, a busy NIC).</p>\n",
        );
        if let Some(n) = note {
            let _ = writeln!(out, "<p class=\"note\">{}</p>", escape(&n));
        }
        let _ = writeln!(out, "<div class=\"chart\">{svg}</div></section>");
    }

    fn last_ranks(&self, out: &mut String) {
        let rep = self.rep;
        let mut order: Vec<usize> = (0..rep.ranks.len()).collect();
        order.sort_by(|&a, &b| {
            rep.ranks[b]
                .finish
                .total_cmp(&rep.ranks[a].finish)
                .then(a.cmp(&b))
        });
        let end = rep.predicted_seconds;
        let close = rep
            .ranks
            .iter()
            .filter(|s| end - s.finish <= end * 1e-3)
            .count();
        out.push_str("<section id=\"last\"><h2>The ranks that finish last</h2>\n");
        let _ = writeln!(
            out,
            "<p class=\"note\">{close} of {} rank(s) finish within 0.1% of the predicted time.</p>",
            rep.ranks.len()
        );
        out.push_str(
            "<table><tr><th>rank</th><th>finish (s)</th><th>compute (s)</th><th>communication (s)</th>\
             <th>waiting (s)</th><th>messages sent</th><th>bytes sent</th></tr>\n",
        );
        for &r in order.iter().take(LAST_RANKS) {
            let s = &rep.ranks[r];
            let _ = writeln!(
                out,
                "<tr><td>{r}</td><td>{:.9}</td><td>{:.9}</td><td>{:.9}</td><td>{:.9}</td><td>{}</td><td>{}</td></tr>",
                s.finish,
                s.compute,
                s.comm,
                s.wait(),
                s.messages_sent,
                s.bytes_sent
            );
        }
        out.push_str("</table></section>\n");
    }

    /// The source text of a line, trimmed.
    fn line_text(&self, line: u32) -> &str {
        if line == 0 {
            return "";
        }
        self.source
            .lines()
            .nth(line as usize - 1)
            .map_or("", str::trim)
    }

    fn critical_path(&self, out: &mut String) {
        let rep = self.rep;
        out.push_str("<section id=\"critical-path\"><h2>Critical path</h2>\n");
        let steps = crate::analysis::merge_path(&crate::analysis::critical_path(rep));
        if steps.is_empty() {
            out.push_str(
                "<p class=\"note\">No critical path: the run recorded no timeline.</p></section>\n",
            );
            return;
        }
        out.push_str(
            "<p class=\"note\">The chain of compute, messages and waits across ranks that determines the \
             predicted time, walked back from the rank that finishes last.</p>\n",
        );
        if rep.trace_truncated {
            let _ = writeln!(
                out,
                "<p class=\"note\">The timeline was cut ({}): the path may be incomplete.</p>",
                escape(self.advice.trace_limit)
            );
        }
        // Time on the path per operation and source line (waits for
        // different partners count together).
        let mut by_op: BTreeMap<(u32, String), (f64, Vec<u32>)> = BTreeMap::new();
        for s in &steps {
            let op = s.what.split(": waits for").next().unwrap_or(&s.what);
            let e = by_op.entry((s.line, op.to_owned())).or_default();
            e.0 += s.end - s.start;
            e.1.push(s.rank);
        }
        let mut ops: Vec<_> = by_op.into_iter().collect();
        ops.sort_by(|a, b| b.1.0.total_cmp(&a.1.0).then(a.0.cmp(&b.0)));
        let total = rep.predicted_seconds.max(1e-300);
        out.push_str(
            "<table><tr><th class=\"l\">operation</th><th>line</th><th class=\"l\">source</th>\
             <th>time on the path (s)</th><th>share</th><th class=\"l\">ranks</th></tr>\n",
        );
        for ((line, what), (t, mut ranks)) in ops {
            ranks.sort_unstable();
            ranks.dedup();
            let line_cell = if line > 0 {
                line.to_string()
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "<tr><td class=\"l\">{}</td><td>{line_cell}</td><td class=\"l\"><code>{}</code></td><td>{t:.9}</td><td>{:.1}%</td><td class=\"l\">{}</td></tr>",
                escape(&what),
                escape(self.line_text(line)),
                t / total * 100.0,
                escape(&rank_ranges(&ranks))
            );
        }
        out.push_str("</table>\n");
        let _ = writeln!(
            out,
            "<details><summary>the {} step(s), earliest first</summary>\n<table><tr><th>rank</th><th>from (s)</th><th>to (s)</th><th class=\"l\">operation</th><th>line</th></tr>",
            steps.len()
        );
        for s in steps.iter().take(MAX_STEPS) {
            let line = if s.line > 0 {
                s.line.to_string()
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{:.9}</td><td>{:.9}</td><td class=\"l\">{}</td><td>{line}</td></tr>",
                s.rank,
                s.start,
                s.end,
                escape(&s.what)
            );
        }
        out.push_str("</table>");
        if steps.len() > MAX_STEPS {
            let _ = write!(
                out,
                "<p class=\"note\">... and {} more steps.</p>",
                steps.len() - MAX_STEPS
            );
        }
        out.push_str("</details></section>\n");
    }

    fn scaling(&self, out: &mut String) {
        out.push_str("<section id=\"scaling\"><h2>Scaling</h2>\n");
        let Some(series) = self.series else {
            let _ = writeln!(
                out,
                "<p class=\"note\">No scaling study: add <code>{}</code> \
                 (and <code>{}</code>) for the time, speedup and \
                 efficiency curves.</p></section>",
                escape(self.advice.sweep),
                escape(self.advice.sweep_machines)
            );
            return;
        };
        let _ = writeln!(
            out,
            "<p class=\"note\">{} scaling: {}</p>",
            if self.weak { "Weak" } else { "Strong" },
            if self.weak {
                "the problem grows with the ranks; efficiency is T(first) / T(p)."
            } else {
                "a fixed problem; speedup T(first) / T(p), efficiency speedup / (p / first)."
            }
        );
        let _ = writeln!(
            out,
            "<div class=\"chart\">{}</div>",
            crate::study::svg(series, self.file)
        );
        for s in series {
            let _ = writeln!(
                out,
                "<h3>{}</h3>\n<p class=\"note\">{}</p>\n<table><tr><th>ranks</th><th>time (s)</th><th>speedup</th><th>efficiency</th></tr>",
                escape(&s.label),
                escape(
                    s.limit_reason
                        .as_deref()
                        .unwrap_or("scales over the whole range")
                )
            );
            for p in &s.points {
                let _ = writeln!(
                    out,
                    "<tr><td>{}</td><td>{:.6}</td><td>{:.2}</td><td>{:.1}%</td></tr>",
                    p.ranks,
                    p.seconds,
                    p.speedup,
                    p.efficiency * 100.0
                );
            }
            out.push_str("</table>\n");
        }
        out.push_str("</section>\n");
    }

    fn comm_matrix(&self, out: &mut String) {
        let rep = self.rep;
        out.push_str("<section id=\"comm-matrix\"><h2>Communication matrix</h2>\n");
        if rep.comm_matrix.is_empty() {
            out.push_str("<p class=\"note\">No messages were sent.</p></section>\n");
            return;
        }
        let pairs = rep.comm_matrix.len();
        let _ = writeln!(
            out,
            "<p class=\"note\">Bytes from each source rank (down) to each destination (across), collective \
             algorithms' messages included; {pairs} pair(s) exchanged messages. Hover over a cell for its bytes.</p>"
        );
        let _ = writeln!(
            out,
            "<div class=\"chart\">{}</div></section>",
            crate::export::matrix_svg(rep, rep.ranks.len() as u32, self.file)
        );
    }

    fn timeline(&self, out: &mut String) {
        let rep = self.rep;
        let n = rep.ranks.len() as u32;
        out.push_str("<section id=\"timeline\"><h2>Timeline</h2>\n");
        if n > MAX_TIMELINE_RANKS {
            let _ = writeln!(
                out,
                "<p class=\"note\">No timeline for {n} ranks (it is drawn for up to {MAX_TIMELINE_RANKS}); \
                 <code>{}</code> writes one for Perfetto.</p></section>",
                escape(self.advice.trace)
            );
            return;
        }
        out.push_str(
            "<p class=\"note\">One row per rank; each pixel shows what filled most of its time. \
             Within a communication call, the blocked part is drawn between the halves of its overheads. \
             Arrows are messages (drawn when there are at most 400).</p>\n",
        );
        if rep.trace_truncated {
            let _ = writeln!(
                out,
                "<p class=\"note\">The timeline was cut ({}): later parts of the run are missing.</p>",
                escape(self.advice.trace_limit)
            );
        }
        let _ = writeln!(
            out,
            "<div class=\"chart\">{}</div></section>",
            rank_charts::timeline_svg(rep)
        );
    }

    fn output(&self, out: &mut String) {
        if self.printed.is_empty() {
            return;
        }
        out.push_str("<section id=\"output\"><h2>Program output</h2>\n<pre>");
        for l in self.printed.iter().take(MAX_PRINTED) {
            let _ = writeln!(out, "[{}] {}", l.rank, escape(&l.text));
        }
        if self.printed.len() > MAX_PRINTED {
            out.push_str("...\n");
        }
        out.push_str("</pre></section>\n");
    }
}
