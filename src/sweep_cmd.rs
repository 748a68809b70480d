//! `parsim sweep`: a scaling study. Runs a skeleton for a list of rank
//! counts on one or more machines (and what-if settings of machine keys),
//! in parallel on the cores, and prints time, speedup and parallel
//! efficiency per curve with the scalability limit; `--plot` draws them.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context, bail};
use app::study::{self, Study, StudyError};

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

impl StudyOptions {
    /// The study's options in the application layer's terms.
    pub fn options(&self) -> study::Options {
        study::Options {
            weak: self.weak,
            efficiency: self.efficiency,
            jobs: self.jobs,
            blocks: self.blocks.clone(),
            noise: self.noise,
            samples: self.samples,
        }
    }
}

/// The curves of `--machine` files and `--set` what-ifs, errors naming the
/// flag.
pub fn curves(machines: &[PathBuf], sets: &[String]) -> anyhow::Result<Vec<study::Curve>> {
    study::curves(machines, sets).map_err(|e| match e {
        app::Error::Setting(m) => anyhow::anyhow!("--set {m}"),
        e => e.into(),
    })
}

/// Runs a study; a failed simulation is rendered with its source line.
pub fn run_study(s: &Study, source: &str) -> anyhow::Result<Vec<study::Series>> {
    match study::run_study(s) {
        Ok(out) => {
            if let Some(path) = &s.options.blocks {
                for e in &out.extrapolated {
                    eprintln!("{}", app::scenario::extrapolation_warning(e, path));
                }
            }
            Ok(out.series)
        }
        Err(StudyError::Simulation {
            label,
            ranks,
            error,
        }) => bail!(
            "{label} on {ranks} ranks:\n{}",
            crate::report::sim_error(&error, s.file, source)
        ),
        Err(StudyError::Input(e)) => Err(e.into()),
    }
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

pub fn run(args: &SweepArgs) -> anyhow::Result<()> {
    let ranks = parse_ranks(&args.ranks)?;
    let file = args.file.display().to_string();
    let (program, source) = crate::load_program_and_source(&args.file, &args.params)?;
    let curves = curves(&args.machines, &args.sets)?;
    let series = run_study(
        &Study {
            program: &program,
            file: &file,
            ranks: &ranks,
            curves: &curves,
            ppn: args.ppn,
            options: args.study.options(),
            limits: app::scenario::Limits::default(),
        },
        &source,
    )?;
    if let Some(p) = &args.plot {
        app::chart::write_picture(p, &study::svg(&series, &file))?;
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
