//! How much memory a run will need, measured rather than guessed (issue
//! 14: a 30-million-rank run passed a check that counted only the rank
//! records, 376 B per rank, and was killed by the kernel at 2.8 times that
//! without a word).
//!
//! The measure: the same program on the same machine for [`PROBE_RANKS`]
//! ranks, stopped after a bounded number of events (the first iterations
//! of a loop reach its steady memory), and the process's peak resident
//! memory (`VmHWM` of `/proc/self/status`) above what it held before. Per
//! rank, times the run's ranks, is the estimate. What a run holds grows
//! with its ranks (their records, frames, request slabs, queues, the
//! machine's per-rank state), so the probe's bytes per rank carry over; a
//! program whose messages in flight grow faster than its ranks (an
//! all-to-all's) is underestimated, and the probe says what it measured so
//! that the user can judge. Linux only: elsewhere there is no estimate.

use models::AnyMachine;
use sim_core::engine::{PrintLine, SimConfig};
use sim_core::ir::Program;

/// Runs of at least this many ranks are probed first.
pub const PROBE_FROM: u32 = 1 << 18;

/// The probe's ranks.
pub const PROBE_RANKS: u32 = 1 << 16;

/// The probe's events per rank, at most.
const PROBE_EVENTS_PER_RANK: u64 = 32;

/// What the probe measured and what it implies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub probe_ranks: u32,
    /// Peak resident bytes per rank during the probe.
    pub bytes_per_rank: f64,
    /// For the run's ranks.
    pub bytes: f64,
}

/// A `/proc/self/status` or `/proc/meminfo` field in bytes (`kB` values).
fn proc_field(file: &str, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(file).ok()?;
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kb: u64 = line[key.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    kb.checked_mul(1024)
}

/// The process's peak resident memory so far, bytes.
pub fn peak_resident() -> Option<u64> {
    proc_field("/proc/self/status", "VmHWM:")
}

/// The process's resident memory now, bytes.
fn resident() -> Option<u64> {
    proc_field("/proc/self/status", "VmRSS:")
}

/// Resets the process's peak resident memory (`VmHWM`) to what it holds
/// now (Linux 4.0 and later: `5` written to `/proc/self/clear_refs`), so
/// that a probe after another one measures its own peak. False where that
/// is not possible: a later probe then sees the earlier peak too and
/// overestimates, the safe side.
fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Memory the system can give without swapping (`MemAvailable`), bytes.
pub fn available() -> Option<u64> {
    proc_field("/proc/meminfo", "MemAvailable:")
}

/// Probes `program` on `machine` with `cfg`'s settings for
/// [`PROBE_RANKS`] ranks and estimates the memory of a run of `ranks`.
/// None when `ranks` is below [`PROBE_FROM`], when the platform does not
/// say (not Linux), or when the program fails at the probe's rank count in
/// a way other than running out of its event budget (it may need a rank
/// count the probe's is not).
pub fn estimate(
    program: &Program,
    machine: &AnyMachine,
    cfg: &SimConfig,
    ranks: u32,
) -> Option<Estimate> {
    if ranks < PROBE_FROM {
        return None;
    }
    let _reset = reset_peak();
    let before = resident()?;
    let probe = SimConfig {
        ranks: PROBE_RANKS,
        max_events: u64::from(PROBE_RANKS) * PROBE_EVENTS_PER_RANK,
        trace_limit: 0,
        ..cfg.clone()
    };
    let mut sink = |_: PrintLine| {};
    let outcome = sim_core::simulate(program, &mut machine.start(PROBE_RANKS), probe, &mut sink);
    match outcome {
        Ok(_) | Err(sim_core::engine::SimError::Runaway { .. }) => {}
        Err(_) => return None,
    }
    let peak = peak_resident()?;
    let bytes_per_rank = peak.saturating_sub(before) as f64 / f64::from(PROBE_RANKS);
    Some(Estimate {
        probe_ranks: PROBE_RANKS,
        bytes_per_rank,
        bytes: bytes_per_rank * f64::from(ranks),
    })
}

/// Why a run of `ranks` cannot start with `available` bytes free, when
/// the estimate is more than 90% of them; `None` when it fits.
pub fn refusal(ranks: u32, e: &Estimate, available: f64) -> Option<String> {
    (e.bytes > 0.9 * available).then(|| {
        format!(
            "{ranks} ranks need about {} ({:.0} B per rank, measured on a probe of {} ranks of \
             this program), more than the {} this machine has available: run fewer ranks or on \
             a machine with more memory (--no-memory-check runs anyway)",
            human(e.bytes),
            e.bytes_per_rank,
            e.probe_ranks,
            human(available)
        )
    })
}

/// "1.2 GiB" / "340.5 MiB".
pub fn human(bytes: f64) -> String {
    const MIB: f64 = (1u64 << 20) as f64;
    if bytes >= 1024.0 * MIB {
        format!("{:.1} GiB", bytes / (1024.0 * MIB))
    } else {
        format!("{:.1} MiB", bytes / MIB)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes_read_as_people_read_them() {
        assert_eq!(super::human(1.5 * (1u64 << 30) as f64), "1.5 GiB");
        assert_eq!(super::human(340.5 * (1u64 << 20) as f64), "340.5 MiB");
    }

    #[test]
    fn this_process_has_a_peak_and_the_system_has_memory() {
        // Linux: both come from /proc.
        assert!(super::peak_resident().is_some_and(|b| b > 0));
        assert!(super::available().is_some_and(|b| b > 0));
    }
}
