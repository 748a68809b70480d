//! parsim's calibration: fit the piecewise LogGP parameters of a machine
//! from benchmark tables, and write them as a machine file.
//!
//! 1. [`input::parse_table`] reads IMB/PMB text output, OSU `osu_latency` /
//!    `osu_bw` output or CSV into (size, time) points.
//! 2. [`channel::calibrate_channel`] fits a piecewise-linear `t(n) = a_k +
//!    b_k·n` with breakpoints found from the data ([`fit`]: least squares on
//!    relative error, Bellman's dynamic programming over the breakpoints,
//!    physically constrained segments, their number by BIC) and maps each
//!    segment to LogGP parameters (`G = b`, `a = o_s + L + o_r`, minus the
//!    rendezvous handshake above the eager limit), then re-predicts every
//!    point with the model's closed forms ([`channel::ChannelFit::checks`]).
//! 3. [`machine::write_machine`] writes the TOML machine file, with a
//!    header saying where every number came from; [`report::text`] is the
//!    human-readable fit report.
//!
//! The whole crate never panics on bad input: every failure is an error
//! value with a lowercase message.

pub mod blocks;
pub mod channel;
pub mod fit;
pub mod input;
pub mod machine;
pub mod report;
pub mod send;

/// The C source of the ping-pong/ping-ping benchmark that `parsim calibrate
/// net --run` builds with mpicc and runs; it prints IMB's text format.
pub const NET_BENCHMARK_C: &str = include_str!("netbench.c");

pub use channel::{
    AlltoallError, ChannelError, ChannelFit, ChannelOptions, ChannelSegment, EagerLimit,
    EagerOrigin, ErrorSummary, Overhead, PointCheck, alltoall2_to_oneway, calibrate_channel,
};
pub use fit::{FitError, FitOptions, Line, PiecewiseFit};
pub use input::{
    Column, CsvTable, Format, ImbBlock, InputError, InputOptions, Measure, OsuTable, Point,
    SkippedRow, Table, csv_table, imb_blocks, osu_table, parse_table,
};
pub use machine::{MachineDescription, WriteError, Written, write_machine};
pub use send::{SendFit, SendFitError, fit_send_overhead};
