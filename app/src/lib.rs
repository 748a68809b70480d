//! parsim's application layer, between the `parsim` binary and the
//! simulation crates (`frontend`, `sim-core`, `models`, `calibrate`).
//!
//! Everything a command *does* lives here, so that it can be tested without
//! spawning a process: loading a [`scenario`] (program, `param` overrides,
//! machine, calibrated kernel times, runaway limits) into one run
//! configuration, the [`check`]er's runs and findings, [`study`] runners
//! (sweeps and noise draws on one rayon pool), [`analysis`] of a finished
//! run (critical path, wait-for cycles) and [`export`]s (Chrome and Paraver
//! traces, the communication matrix) and [`chart`]s, and the text of the
//! results the binary prints (the run [`report`], [`validate`]'s
//! comparisons, [`study`] tables, the monitor's [`rank_grid`]).
//!
//! Invariant: this crate never prints, never exits and never names a
//! command-line flag in its errors; the binary parses arguments, renders
//! results and chooses exit codes.

#![deny(unsafe_code)] // except `memory::Counting`, the counting allocator

pub mod analysis;
pub mod blocks;
pub mod chart;
pub mod check;
pub mod clock;
pub mod coll_fit;
pub mod diagnostics;
pub mod error;
pub mod export;
pub mod job_array;
pub mod memory;
pub mod netbench;
pub mod netfit;
pub mod node_fit;
pub mod page;
pub mod paraver;
pub mod patterns;
pub mod rank_charts;
pub mod rank_grid;
pub mod report;
pub mod scenario;
pub mod shell;
pub mod study;
pub mod validate;

pub use error::Error;
