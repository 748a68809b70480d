//! The prediction as data: what `parsim run --format json` prints, with
//! stable field names (documented in README.md). Fields are declared in
//! alphabetical order, the order the output has always had.

use serde::Serialize;
use sim_core::SimReport;
use sim_core::engine::PrintLine;

/// One run's prediction.
#[derive(Debug, Serialize)]
pub struct Prediction<'a> {
    pub bytes: u64,
    pub events: u64,
    pub machine: &'a str,
    pub messages: u64,
    /// With noise draws: every draw's predicted time and their spread.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub noise_draws: Option<NoiseDraws>,
    pub num_ranks: u32,
    /// The `print` output.
    pub output: Vec<OutputLine<'a>>,
    pub predicted_seconds: f64,
    pub program: &'a str,
    pub ranks: Vec<RankRow>,
    pub wall_seconds: f64,
}

/// One rank's figures.
#[derive(Debug, Serialize)]
pub struct RankRow {
    pub bytes_sent: u64,
    pub comm_seconds: f64,
    pub compute_seconds: f64,
    pub finish_seconds: f64,
    pub messages_sent: u64,
    pub rank: usize,
    pub wait_seconds: f64,
}

/// One line of `print` output: the rank, its text, the model time.
#[derive(Debug, Serialize)]
pub struct OutputLine<'a> {
    pub rank: u32,
    pub text: &'a str,
    pub time_seconds: f64,
}

/// The predicted times of noise draws (`run --samples`) and their spread.
#[derive(Debug, Serialize)]
pub struct NoiseDraws {
    pub max: f64,
    pub median: f64,
    pub min: f64,
    pub p5: f64,
    pub p95: f64,
    pub predicted_seconds: Vec<f64>,
    pub seeds: Vec<u64>,
}

impl NoiseDraws {
    /// The draws `(seed, predicted seconds)` and their median, 5th and
    /// 95th percentiles, minimum and maximum.
    pub fn of(draws: &[(u64, f64)]) -> NoiseDraws {
        let [median, p5, p95, min, max] =
            crate::study::spread_of(draws.iter().map(|d| d.1).collect());
        NoiseDraws {
            max,
            median,
            min,
            p5,
            p95,
            predicted_seconds: draws.iter().map(|d| d.1).collect(),
            seeds: draws.iter().map(|d| d.0).collect(),
        }
    }
}

impl<'a> Prediction<'a> {
    /// The prediction of `rep`, a run of `ranks` ranks of the program
    /// `file` on `machine` that took `wall` seconds and printed `printed`.
    pub fn new(
        rep: &SimReport,
        printed: &'a [PrintLine],
        wall: f64,
        file: &'a str,
        machine: &'a str,
        ranks: u32,
    ) -> Prediction<'a> {
        Prediction {
            bytes: rep.bytes,
            events: rep.events,
            machine,
            messages: rep.messages,
            noise_draws: None,
            num_ranks: ranks,
            output: printed
                .iter()
                .map(|l| OutputLine {
                    rank: l.rank,
                    text: &l.text,
                    time_seconds: l.time,
                })
                .collect(),
            predicted_seconds: rep.predicted_seconds,
            program: file,
            ranks: rep
                .ranks
                .iter()
                .enumerate()
                .map(|(rank, s)| RankRow {
                    bytes_sent: s.bytes_sent,
                    comm_seconds: s.comm,
                    compute_seconds: s.compute,
                    finish_seconds: s.finish,
                    messages_sent: s.messages_sent,
                    rank,
                    wait_seconds: s.wait(),
                })
                .collect(),
            wall_seconds: wall,
        }
    }
}
