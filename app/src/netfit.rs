//! Fitting a machine file from ping-pong tables (`parsim calibrate net`):
//! read the inter-node (and intra-node) tables, fit each channel with the
//! `calibrate` crate, and write the machine file with a header that says
//! where every number came from.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use calibrate::{ChannelFit, ChannelOptions, InputOptions, MachineDescription, Table};
use models::Duplex;

use crate::Error;
use crate::patterns::{JointFit, Pattern};

/// The intra-node table and how to fit it.
#[derive(Debug, Clone)]
pub struct ShmInput {
    pub path: PathBuf,
    pub input: InputOptions,
    pub channel: ChannelOptions,
    /// The table is a 2-process Alltoall (IMB/PMB, 2 ranks of one node):
    /// its one-way time is taken as t - n/memcpy.
    pub from_alltoall2: bool,
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

/// The fitted channels and the tables they came from.
#[derive(Debug, Clone)]
pub struct Fitted {
    pub input: PathBuf,
    pub table: Table,
    pub network: ChannelFit,
    /// The intra-node table's path, table and fit.
    pub shm: Option<(PathBuf, Table, ChannelFit)>,
    /// The other patterns' paths and tables, and the joint fit (whose `g`
    /// is also in `network`'s segments).
    pub patterns: Option<(Vec<(PathBuf, Table)>, JointFit)>,
}

impl Fitted {
    /// The CSV rows every table read left out for an empty cell, each as
    /// `PATH: line N: ...` (warnings for the user).
    pub fn skipped_rows(&self) -> Vec<String> {
        let mut tables: Vec<(&Path, &Table)> = vec![(&self.input, &self.table)];
        if let Some((path, table, _)) = &self.shm {
            tables.push((path, table));
        }
        if let Some((pattern_tables, _)) = &self.patterns {
            tables.extend(pattern_tables.iter().map(|(p, t)| (p.as_path(), t)));
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
    pub cpu_rate: f64,
    /// node.memcpy, bytes/s, and where it came from.
    pub memcpy: f64,
    pub memcpy_origin: String,
    /// The network's duplex as given on the command line; `None`: the
    /// crossing fit's, or full.
    pub duplex: Option<Duplex>,
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

/// Reads and fits the network table at `input` and, when given, the
/// shared-memory one.
pub fn fit(
    input: &Path,
    input_options: &InputOptions,
    network_options: &ChannelOptions,
    shm: Option<&ShmInput>,
    patterns: Option<&PatternInput>,
    memcpy: f64,
) -> Result<Fitted, Error> {
    let table = read_table(input, input_options)?;
    let fit_network = |options: &ChannelOptions| {
        calibrate::calibrate_channel(&table, options).map_err(|err| Error::Fit {
            path: input.to_owned(),
            shm: false,
            err,
        })
    };
    let mut network = fit_network(network_options)?;
    let patterns = match patterns {
        None => None,
        Some(p) => {
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
            if p.fit_overheads {
                let steps = ((MAX_OVERHEAD_FRACTION - MIN_OVERHEAD_FRACTION) / STEP).round() as u32;
                for k in 0..=steps {
                    let fraction = MIN_OVERHEAD_FRACTION + f64::from(k) * STEP;
                    if (fraction - calibrate::channel::DEFAULT_OVERHEAD_FRACTION).abs() < STEP / 2.0
                    {
                        default_split = fits.len();
                    }
                    let options = ChannelOptions {
                        overhead: calibrate::Overhead::Fraction(fraction),
                        ..network_options.clone()
                    };
                    fits.push((fraction, fit_network(&options)?));
                }
            } else {
                fits.push((f64::NAN, network.clone()));
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
                    stream.map_or_else(Vec::new, |s| crate::patterns::apply_stream(fit, s))
                })
                .collect();
            let splits = fits
                .iter()
                .map(|(fraction, fit)| {
                    Ok(crate::patterns::Split {
                        fraction: *fraction,
                        machine: pingpong_machine(fit)?,
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
                    pingpong: &table,
                    patterns: &named,
                    fixed_duplex: p.duplex,
                    default_split,
                },
            )?;
            joint.fit.stream_notes = stream_notes.swap_remove(joint.split);
            network = fits.swap_remove(joint.split).1;
            for segment in &mut network.segments {
                segment.gap = joint.fit.gap;
            }
            if let Some(fraction) = joint.fit.overhead_fraction {
                network.overhead_origin = format!(
                    "o_s + o_r = {:.0}% of the 0 B time, fitted to PingPong and the other patterns together",
                    fraction * 100.0
                );
            }
            let paths = p.tables.iter().map(|(_, path, _)| path.clone());
            Some((paths.zip(tables).collect(), joint.fit))
        }
    };
    let shm = match shm {
        None => None,
        Some(s) => {
            let mut t = read_table(&s.path, &s.input)?;
            if s.from_alltoall2 {
                t = calibrate::alltoall2_to_oneway(&t, memcpy).map_err(|err| Error::Alltoall {
                    path: s.path.clone(),
                    err,
                })?;
            }
            let fit = calibrate::calibrate_channel(&t, &s.channel).map_err(|err| Error::Fit {
                path: s.path.clone(),
                shm: true,
                err,
            })?;
            Some((s.path.clone(), t, fit))
        }
    };
    Ok(Fitted {
        input: input.to_owned(),
        table,
        network,
        shm,
        patterns,
    })
}

/// The network fit as a machine of one rank per node, for fitting what the
/// ping-pong cannot show.
fn pingpong_machine(network: &ChannelFit) -> Result<models::LogGpMachine, Error> {
    let text = calibrate::write_machine(&MachineDescription {
        name: "pingpong".into(),
        description: String::new(),
        ranks_per_node: 1,
        cpu_rate: 1.0,
        memcpy: 1e9,
        network,
        shm: None,
        header: Vec::new(),
        network_duplex: None,
        collectives: Vec::new(),
    })
    .map_err(Error::MachineFile)?;
    models::LogGpMachine::from_toml_str(&text, "<ping-pong fit>")
        .map_err(|e| Error::Input(format!("the ping-pong fit does not make a machine: {e}")))
}

impl Fitted {
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
        if let Some((path, t, fit)) = &self.shm {
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
        if let Some((tables, fit)) = &self.patterns {
            for ((path, t), p) in tables.iter().zip(&fit.patterns) {
                let _ = writeln!(
                    report,
                    "\n{}: {} ({}, {}, {} points)",
                    p.pattern.name(),
                    path.display(),
                    t.format,
                    t.origin,
                    t.points.len()
                );
            }
            for line in fit.describe() {
                let _ = writeln!(report, "{line}");
            }
        }
        report
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
        if let Some((path, t, _)) = &self.shm {
            header.push(format!(
                "Shared-memory table: {} ({}; {}; {} points).",
                path.display(),
                t.format,
                t.origin,
                t.points.len()
            ));
        }
        if let Some((tables, fit)) = &self.patterns {
            for ((path, t), p) in tables.iter().zip(&fit.patterns) {
                header.push(format!(
                    "{} table: {} ({}; {}; {} points).",
                    p.pattern.name(),
                    path.display(),
                    t.format,
                    t.origin,
                    t.points.len()
                ));
            }
            header.extend(fit.summary());
        }
        header.push(format!(
            "Node: cpu_rate {} as given on the command line (not fitted); {}.",
            m.cpu_rate, m.memcpy_origin
        ));
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
            header,
            network_duplex: m
                .duplex
                .or_else(|| self.patterns.as_ref().map(|(_, fit)| fit.duplex)),
            collectives: m.collectives.clone(),
        })
        .map_err(Error::MachineFile)
    }
}
