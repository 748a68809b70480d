//! Fitting a machine file from ping-pong tables (`parsim calibrate net`):
//! read the inter-node (and intra-node) tables, fit each channel with the
//! `calibrate` crate, and write the machine file with a header that says
//! where every number came from.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use calibrate::{ChannelFit, ChannelOptions, InputOptions, MachineDescription, Table};

use crate::Error;

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

/// The fitted channels and the tables they came from.
#[derive(Debug, Clone)]
pub struct Fitted {
    pub input: PathBuf,
    pub table: Table,
    pub network: ChannelFit,
    /// The intra-node table's path, table and fit.
    pub shm: Option<(PathBuf, Table, ChannelFit)>,
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
    pub duplex: Option<String>,
    /// How the duplex was decided, when it was measured.
    pub duplex_note: Option<String>,
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
    network: &ChannelOptions,
    shm: Option<&ShmInput>,
    memcpy: f64,
) -> Result<Fitted, Error> {
    let table = read_table(input, input_options)?;
    let network = calibrate::calibrate_channel(&table, network).map_err(|err| Error::Fit {
        path: input.to_owned(),
        shm: false,
        err,
    })?;
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
    })
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
        if let Some(note) = &m.duplex_note {
            header.push(note.clone());
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
            network_duplex: m.duplex.clone(),
            collectives: m.collectives.clone(),
        })
        .map_err(Error::MachineFile)
    }
}
