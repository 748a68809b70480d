//! `parsim sweep`: a scaling study. Runs a skeleton for a list of rank
//! counts on one or more machines (and what-if settings of machine keys),
//! in parallel on the cores, and prints time, speedup and parallel
//! efficiency per curve with the scalability limit; `--plot` draws them.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context, bail};
use models::AnyMachine;
use sim_core::engine::{PrintLine, SimConfig};
use sim_core::ir::Program;

use crate::chart::{escape, tick_labels};

/// The built-in machine as a file, for `--set` on the default machine
/// (the models crate tests that the two agree).
const DEFAULT_MACHINE: &str = include_str!("../examples/machines/default-infiniband.toml");

#[derive(clap::Args)]
pub struct SweepArgs {
    /// The skeleton program (.mpl).
    file: PathBuf,
    /// Rank counts: `1,2,4,...,1024` (a `...` continues the geometric or
    /// arithmetic progression of the two numbers before it).
    #[arg(long)]
    ranks: String,
    /// Machine description(s); one curve each (default: the built-in machine).
    #[arg(long = "machine", short)]
    machines: Vec<PathBuf>,
    /// What-if: `--set network.bandwidth=1GB/s,10GB/s` overrides a
    /// machine-file key, one curve per value (repeatable: all combinations).
    #[arg(long = "set", value_name = "KEY=V1,V2")]
    sets: Vec<String>,
    /// Override a `param` of the program (repeatable).
    #[arg(long = "param", short = 'p', value_name = "NAME=VALUE")]
    params: Vec<String>,
    /// Ranks per node (overrides the machine files').
    #[arg(long)]
    ppn: Option<u32>,
    #[command(flatten)]
    study: StudyOptions,
    /// Write a chart of time, speedup and efficiency: SVG, or PNG when the
    /// name ends in `.png`.
    #[arg(long)]
    plot: Option<PathBuf>,
    /// Output format.
    #[arg(long, default_value = "text", value_parser = ["text", "json"])]
    format: String,
}

/// How a study derives and runs its points (`sweep`, `report --sweep`).
#[derive(clap::Args, Clone)]
pub struct StudyOptions {
    /// Weak scaling: the problem grows with the ranks (as in heat.mpl), so
    /// efficiency is T(first) / T(p) and speedup the scaled speedup.
    #[arg(long)]
    pub weak: bool,
    /// Parallel efficiency below which a curve has stopped scaling.
    #[arg(long, default_value_t = 0.5)]
    pub efficiency: f64,
    /// Simulations run at once (default: the number of cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Kernel times from `parsim calibrate blocks`; each run uses the level
    /// measured with as many copies at once as it places ranks on a node.
    #[arg(long, value_name = "BLOCKS.toml")]
    pub blocks: Option<std::path::PathBuf>,
    /// With --blocks: draw kernel times from their measured distributions
    /// (seeded, deterministic; see `run --noise`).
    #[arg(long, value_name = "SEED", num_args = 0..=1, default_missing_value = "1", requires = "blocks")]
    pub noise: Option<u64>,
    /// With --noise: N draws per point (seeds SEED, SEED+1, ...); the point
    /// is their median and the range of the middle 90% of draws (5th to
    /// 95th percentile) is reported and drawn as an error bar.
    #[arg(long, value_name = "N", requires = "noise", value_parser = clap::value_parser!(u32).range(2..=10_000))]
    pub samples: Option<u32>,
}

/// Parses `1,2,4,...,64`.
pub fn parse_ranks(spec: &str) -> anyhow::Result<Vec<u32>> {
    let mut out: Vec<u32> = Vec::new();
    let tokens: Vec<&str> = spec
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    let mut i = 0;
    while i < tokens.len() {
        let t = tokens[i];
        if t == "..." {
            let (Some(&b), Some(end)) = (out.last(), tokens.get(i + 1)) else {
                bail!("`...` in --ranks needs two numbers before it and one after");
            };
            let Some(&a) = out.len().checked_sub(2).and_then(|k| out.get(k)) else {
                bail!("`...` in --ranks needs two numbers before it");
            };
            let end: u32 = end
                .parse()
                .with_context(|| format!("--ranks: `{end}` is not a rank count"))?;
            let geometric = a > 0 && b % a == 0 && b / a >= 2;
            let mut x = b;
            loop {
                let next = if geometric {
                    x.checked_mul(b / a)
                } else {
                    x.checked_add(b.saturating_sub(a).max(1))
                };
                match next {
                    Some(n) if n < end => {
                        out.push(n);
                        x = n;
                    }
                    _ => break,
                }
            }
            i += 1;
            continue;
        }
        let n: u32 = t
            .parse()
            .with_context(|| format!("--ranks: `{t}` is not a rank count"))?;
        if n == 0 {
            bail!("--ranks: 0 is not a rank count");
        }
        out.push(n);
        i += 1;
    }
    if out.is_empty() {
        bail!("--ranks: no rank counts");
    }
    out.dedup();
    Ok(out)
}

/// One curve: a machine (with what-if settings applied).
pub struct Curve {
    label: String,
    toml: String,
    base_dir: PathBuf,
}

/// The curves of a study: one per machine file (the built-in machine
/// without any) and combination of `--set` values.
pub fn curves(machines: &[PathBuf], sets: &[String]) -> anyhow::Result<Vec<Curve>> {
    let mut bases: Vec<(String, String, PathBuf)> = Vec::new();
    if machines.is_empty() {
        bases.push((
            "default".to_owned(),
            DEFAULT_MACHINE.to_owned(),
            PathBuf::from("."),
        ));
    }
    for m in machines {
        let text =
            std::fs::read_to_string(m).with_context(|| format!("cannot read {}", m.display()))?;
        let label = m
            .file_stem()
            .map_or("machine".into(), |s| s.to_string_lossy().into_owned());
        let dir = m
            .parent()
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("."));
        bases.push((label, text, dir));
    }
    // All combinations of the --set values.
    let mut settings: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for s in sets {
        let (key, values) = s
            .split_once('=')
            .with_context(|| format!("--set expects KEY=V1,V2, got `{s}`"))?;
        let mut next = Vec::new();
        for combo in &settings {
            for v in values.split(',').map(str::trim).filter(|v| !v.is_empty()) {
                let mut c = combo.clone();
                c.push((key.trim().to_owned(), v.to_owned()));
                next.push(c);
            }
        }
        settings = next;
    }
    let mut out = Vec::new();
    for (label, text, dir) in &bases {
        for combo in &settings {
            let mut toml_text = text.clone();
            let mut name = label.clone();
            if !combo.is_empty() {
                let mut table: toml::Table = toml_text
                    .parse()
                    .with_context(|| format!("{label}: not a TOML machine file"))?;
                for (k, v) in combo {
                    models::config::set_key(&mut table, k, v)
                        .map_err(|e| anyhow::anyhow!("--set {k}: {e}"))?;
                    let _ = write!(name, " {k}={v}");
                }
                toml_text = toml::to_string(&table).context("cannot write the modified machine")?;
            }
            out.push(Curve {
                label: name,
                toml: toml_text,
                base_dir: dir.clone(),
            });
        }
    }
    Ok(out)
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Point {
    pub ranks: u32,
    /// The predicted time; with --samples the median of the draws.
    pub seconds: f64,
    pub speedup: f64,
    pub efficiency: f64,
    /// With --samples: the 5th and 95th percentiles of the draws' times.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spread: Option<[f64; 2]>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Series {
    pub label: String,
    pub points: Vec<Point>,
    /// The rank count after which time stops falling or efficiency drops
    /// below the threshold (`None`: it scales over the whole range).
    pub limit: Option<u32>,
    pub limit_reason: Option<String>,
}

/// A scaling study: a program (params applied) over rank counts and curves.
pub struct Study<'a> {
    pub program: &'a Program,
    /// The program's file name and text, for error messages.
    pub file: &'a str,
    pub source: &'a str,
    pub ranks: &'a [u32],
    pub curves: &'a [Curve],
    /// Ranks per node (overrides the machine files').
    pub ppn: Option<u32>,
    pub options: StudyOptions,
}

pub fn run(args: &SweepArgs) -> anyhow::Result<()> {
    let ranks = parse_ranks(&args.ranks)?;
    let file = args.file.display().to_string();
    let (program, source) = crate::load_program_and_source(&args.file, &args.params)?;
    let curves = curves(&args.machines, &args.sets)?;
    let series = run_study(&Study {
        program: &program,
        file: &file,
        source: &source,
        ranks: &ranks,
        curves: &curves,
        ppn: args.ppn,
        options: args.study.clone(),
    })?;
    if let Some(p) = &args.plot {
        crate::chart::write_picture(p, &svg(&series, &file))?;
    }
    if args.format == "json" {
        crate::out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&serde_json::json!({"program": file, "series": series}))?
        ));
        return Ok(());
    }
    let mut out = String::new();
    for s in &series {
        let _ = writeln!(out, "{}: {file}", s.label);
        let spread = s.points.iter().any(|p| p.spread.is_some());
        let _ = write!(
            out,
            "{:>8} {:>16} {:>10} {:>11}",
            "ranks", "time (s)", "speedup", "efficiency"
        );
        let _ = writeln!(out, "{}", if spread { "   draws 5%..95% (s)" } else { "" });
        for p in &s.points {
            let _ = write!(
                out,
                "{:>8} {:>16.6} {:>10.2} {:>10.1}%",
                p.ranks,
                p.seconds,
                p.speedup,
                p.efficiency * 100.0
            );
            match p.spread {
                Some([lo, hi]) => {
                    let _ = writeln!(out, "   {lo:.6} .. {hi:.6}");
                }
                None => {
                    let _ = writeln!(out);
                }
            }
        }
        match &s.limit_reason {
            Some(r) => {
                let _ = writeln!(out, "scalability limit: {r}\n");
            }
            None => {
                let _ = writeln!(
                    out,
                    "scales over the whole range (efficiency stays above {:.0}%)\n",
                    args.study.efficiency * 100.0
                );
            }
        }
    }
    if let Some(p) = &args.plot {
        let _ = writeln!(out, "plot: {}", p.display());
    }
    crate::out(&out);
    Ok(())
}

/// Runs a study's simulations on a pool of threads and derives speedup,
/// efficiency and the scalability limit of each curve.
pub fn run_study(study: &Study) -> anyhow::Result<Vec<Series>> {
    let Study {
        program,
        file,
        source,
        ranks,
        curves,
        ppn,
        options:
            StudyOptions {
                weak,
                efficiency,
                jobs: max_workers,
                ref blocks,
                noise,
                samples,
            },
    } = *study;
    let draws = samples.map_or(1, |n| n as usize);
    let blocks = blocks
        .as_deref()
        .map(|p| calibrate::blocks::file::BlocksFile::read(p).map(|f| (p, f)))
        .transpose()?;
    // The farthest extrapolation of each kernel over all runs.
    let extrapolated: Mutex<Vec<calibrate::blocks::file::Extrapolation>> = Mutex::new(Vec::new());
    if ranks.is_empty() {
        bail!("a scaling study needs at least one rank count");
    }
    // Check every machine before starting.
    let mut machines = Vec::new();
    for c in curves {
        let mut m = AnyMachine::from_toml_str(&c.toml, &c.label, &c.base_dir)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        if let Some(p) = ppn {
            m = m.with_ranks_per_node(p).map_err(anyhow::Error::msg)?;
        }
        machines.push(m);
    }
    // The jobs, run by a pool of threads; results land in their slot.
    // (curve, ranks, draw): draw k uses seed `noise + k`.
    let jobs: Vec<(usize, u32, usize)> = (0..curves.len())
        .flat_map(|c| ranks.iter().map(move |&r| (c, r)))
        .flat_map(|(c, r)| (0..draws).map(move |k| (c, r, k)))
        .collect();
    let results: Mutex<Vec<Option<Result<f64, String>>>> = Mutex::new(vec![None; jobs.len()]);
    let next = AtomicUsize::new(0);
    let workers = max_workers
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    std::thread::scope(|s| {
        for _ in 0..workers.min(jobs.len()) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(c, r, k)) = jobs.get(i) else { break };
                    // One description per curve, shared by its jobs.
                    let m = &machines[c];
                    let mut sink = |_: PrintLine| {};
                    let (kernel_times, calibrated) = blocks
                        .as_ref()
                        .map(|(_, f)| crate::blocks_for(f, r.min(m.ranks_per_node())))
                        .unwrap_or_default();
                    let cfg = SimConfig {
                        ranks: r,
                        kernel_times,
                        noise_seed: noise.map(|seed| seed.wrapping_add(k as u64)),
                        ..SimConfig::default()
                    };
                    let out = sim_core::simulate(program, &mut m.start(r), cfg, &mut sink)
                        .map(|rep| rep.predicted_seconds)
                        .map_err(|e| crate::report::sim_error(&e, file, source));
                    if let Ok(mut x) = extrapolated.lock() {
                        for e in calibrated.iter().filter_map(|k| k.extrapolation(2.0)) {
                            match x.iter_mut().find(|o| o.kernel == e.kernel) {
                                Some(o) if o.factor < e.factor => *o = e,
                                Some(_) => {}
                                None => x.push(e),
                            }
                        }
                    }
                    results.lock().map(|mut v| v[i] = Some(out)).ok();
                }
            });
        }
    });
    drop(machines);
    if let (Some((path, _)), Ok(x)) = (&blocks, extrapolated.into_inner()) {
        for e in x {
            crate::warn_extrapolated(&e, path);
        }
    }
    let results = results
        .into_inner()
        .map_err(|_| anyhow::anyhow!("a simulation thread panicked"))?;
    let mut series = Vec::new();
    for (c, curve) in curves.iter().enumerate() {
        let mut points = Vec::new();
        for (k, &r) in ranks.iter().enumerate() {
            let mut times = Vec::with_capacity(draws);
            for d in 0..draws {
                let i = (c * ranks.len() + k) * draws + d;
                match &results[i] {
                    Some(Ok(t)) => times.push(*t),
                    Some(Err(e)) => bail!("{} on {r} ranks:\n{e}", curve.label),
                    None => bail!("{} on {r} ranks: not run", curve.label),
                }
            }
            let [median, p5, p95, _, _] = crate::spread_of(times);
            points.push((r, median, samples.map(|_| [p5, p95])));
        }
        let (r0, t0, _) = points[0];
        let pts: Vec<Point> = points
            .iter()
            .map(|&(r, t, spread)| {
                let ratio = if t > 0.0 { t0 / t } else { f64::NAN };
                let scale = f64::from(r) / f64::from(r0);
                if weak {
                    // Gustafson: the work grows with p, so the scaled
                    // speedup is p/p0 * T(p0)/T(p) and efficiency T(p0)/T(p).
                    Point {
                        ranks: r,
                        seconds: t,
                        speedup: scale * ratio,
                        efficiency: ratio,
                        spread,
                    }
                } else {
                    Point {
                        ranks: r,
                        seconds: t,
                        speedup: ratio,
                        efficiency: ratio / scale,
                        spread,
                    }
                }
            })
            .collect();
        let mut limit = None;
        let mut reason = None;
        for w in pts.windows(2) {
            if !weak && w[1].seconds >= w[0].seconds {
                limit = Some(w[0].ranks);
                reason = Some(format!("time stops falling after {} ranks", w[0].ranks));
                break;
            }
            if w[1].efficiency < efficiency {
                limit = Some(w[0].ranks);
                reason = Some(format!(
                    "parallel efficiency falls below {:.0}% after {} ranks",
                    efficiency * 100.0,
                    w[0].ranks
                ));
                break;
            }
        }
        series.push(Series {
            label: curve.label.clone(),
            points: pts,
            limit,
            limit_reason: reason,
        });
    }
    Ok(series)
}

/// A chart panel: its title, the value it plots, and whether the axis is logarithmic.
type Panel = (&'static str, fn(&Point) -> f64, bool);

/// Three panels (time on log axes, speedup, efficiency) against ranks on a
/// log2 axis, one coloured curve per series.
pub fn svg(series: &[Series], title: &str) -> String {
    const W: f64 = 360.0;
    const H: f64 = 260.0;
    const M: f64 = 55.0;
    let colours = [
        "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    ];
    let all: Vec<&Point> = series.iter().flat_map(|s| s.points.iter()).collect();
    let rmin = all.iter().map(|p| p.ranks).min().unwrap_or(1).max(1) as f64;
    let rmax = all.iter().map(|p| p.ranks).max().unwrap_or(2).max(2) as f64;
    let lx = |r: f64| {
        M + (r.log2() - rmin.log2()) / (rmax.log2() - rmin.log2()).max(1e-9) * (W - M - 15.0)
    };
    let mut out = String::new();
    let total_w = 3.0 * W + 20.0;
    let legend_h = 22.0 * series.len() as f64;
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{total_w}" height="{h}" viewBox="0 0 {total_w} {h}" font-family="sans-serif" font-size="12">"#,
        h = H + 60.0 + legend_h
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="10" y="18" font-size="14" font-weight="bold">{}</text>"#,
        escape(title)
    );
    let panels: [Panel; 3] = [
        ("predicted time (s)", |p| p.seconds, true),
        ("speedup", |p| p.speedup, true),
        ("parallel efficiency (%)", |p| p.efficiency * 100.0, false),
    ];
    for (k, (name, get, log)) in panels.iter().enumerate() {
        let ox = 10.0 + k as f64 * W;
        let oy = 30.0;
        // The time panel also spans the draws' 5-95% bars.
        let bars = |p: &Point| if k == 0 { p.spread } else { None };
        let vals: Vec<f64> = all
            .iter()
            .flat_map(|p| std::iter::once(get(p)).chain(bars(p).into_iter().flatten()))
            .filter(|v| v.is_finite() && (!log || *v > 0.0))
            .collect();
        let (mut lo, mut hi) = vals
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                (a.min(v), b.max(v))
            });
        if !lo.is_finite() {
            lo = 0.0;
            hi = 1.0;
        }
        if !log {
            lo = lo.min(0.0);
        }
        if hi <= lo {
            hi = lo + 1.0;
        }
        let fy = |v: f64| -> f64 {
            let t = if *log {
                (v.log10() - lo.log10()) / (hi.log10() - lo.log10()).max(1e-9)
            } else {
                (v - lo) / (hi - lo)
            };
            oy + H - 25.0 - t * (H - 45.0)
        };
        // Axes and labels.
        let _ = writeln!(
            out,
            r#"<g transform="translate({ox},0)"><line x1="{M}" y1="{}" x2="{}" y2="{}" stroke="black"/><line x1="{M}" y1="{}" x2="{M}" y2="{}" stroke="black"/>"#,
            oy + H - 25.0,
            W - 15.0,
            oy + H - 25.0,
            oy + 20.0,
            oy + H - 25.0
        );
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            (M + W - 15.0) / 2.0,
            oy + 12.0,
            escape(name)
        );
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" text-anchor="middle">ranks (log2)</text>"#,
            (M + W - 15.0) / 2.0,
            oy + H + 5.0
        );
        let mut r = rmin;
        while r <= rmax * 1.0001 {
            let x = lx(r);
            let _ = writeln!(
                out,
                r#"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="black"/><text x="{x}" y="{}" text-anchor="middle" font-size="10">{}</text>"#,
                oy + H - 25.0,
                oy + H - 21.0,
                oy + H - 10.0,
                r as u64
            );
            r *= 2.0;
        }
        let ticks: Vec<f64> = (0..=4)
            .map(|j| {
                if *log {
                    10f64.powf(lo.log10() + (hi.log10() - lo.log10()) * f64::from(j) / 4.0)
                } else {
                    lo + (hi - lo) * f64::from(j) / 4.0
                }
            })
            .collect();
        for (v, label) in ticks.iter().zip(tick_labels(&ticks)) {
            let y = fy(*v);
            let _ = writeln!(
                out,
                r#"<line x1="{}" y1="{y}" x2="{M}" y2="{y}" stroke="black"/><text x="{}" y="{}" text-anchor="end" font-size="10">{label}</text>"#,
                M - 4.0,
                M - 6.0,
                y + 3.0,
            );
        }
        for (si, s) in series.iter().enumerate() {
            let c = colours[si % colours.len()];
            let pts: Vec<String> = s
                .points
                .iter()
                .filter(|p| get(p).is_finite() && (!log || get(p) > 0.0))
                .map(|p| format!("{:.1},{:.1}", lx(f64::from(p.ranks)), fy(get(p))))
                .collect();
            let _ = writeln!(
                out,
                r#"<polyline fill="none" stroke="{c}" stroke-width="2" points="{}"/>"#,
                pts.join(" ")
            );
            for p in &pts {
                if let Some((x, y)) = p.split_once(',') {
                    let _ = writeln!(out, r#"<circle cx="{x}" cy="{y}" r="3" fill="{c}"/>"#);
                }
            }
            for p in &s.points {
                if let Some([lo_t, hi_t]) = bars(p).filter(|b| b[0] > 0.0 && b[1] > 0.0) {
                    let x = lx(f64::from(p.ranks));
                    let _ = writeln!(
                        out,
                        r#"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="{c}" stroke-width="1.5"/>"#,
                        fy(lo_t),
                        fy(hi_t)
                    );
                }
            }
        }
        let _ = writeln!(out, "</g>");
    }
    for (si, s) in series.iter().enumerate() {
        let y = H + 50.0 + 22.0 * si as f64;
        let c = colours[si % colours.len()];
        let limit = s
            .limit_reason
            .clone()
            .unwrap_or_else(|| "scales over the range".to_owned());
        let _ = writeln!(
            out,
            r#"<rect x="20" y="{}" width="14" height="14" fill="{c}"/><text x="40" y="{}">{} ({})</text>"#,
            y - 11.0,
            y,
            escape(&s.label),
            escape(&limit)
        );
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::parse_ranks;

    #[test]
    fn rank_lists() {
        assert_eq!(
            parse_ranks("1,2,4,...,64").expect("ok"),
            vec![1, 2, 4, 8, 16, 32, 64]
        );
        assert_eq!(
            parse_ranks("2, 4, ..., 20").expect("ok"),
            vec![2, 4, 8, 16, 20]
        );
        assert_eq!(
            parse_ranks("10,20,...,50").expect("ok"),
            vec![10, 20, 40, 50]
        );
        assert_eq!(parse_ranks("3,5,...,11").expect("ok"), vec![3, 5, 7, 9, 11]);
        assert_eq!(parse_ranks("16").expect("ok"), vec![16]);
        assert!(parse_ranks("...,4").is_err());
        assert!(parse_ranks("0,1").is_err());
        assert!(parse_ranks("a").is_err());
    }
}
