//! How much memory a run will need, measured rather than guessed (issue
//! 14: a 30-million-rank run passed a check that counted only the rank
//! records, 376 B per rank, and was killed by the kernel at 2.8 times that
//! without a word).
//!
//! The measure: the same program on the same machine at two smaller rank
//! counts (a quarter and a sixteenth of the run's, at most
//! [`PROBE_RANKS`]), each stopped after a bounded number of events per rank
//! (the first iterations of a loop reach its steady memory), and the heap's
//! high-water mark during each above what it held before. What a run holds
//! grows with its ranks (their records, frames, request slabs, queues, the
//! machine's per-rank state), so the probes' bytes per rank carry over; a
//! program whose memory per rank itself grows with the ranks (an
//! all-to-all's requests, a communicator's member lists) shows it as a
//! growth between the two probes, which is extrapolated as a power of the
//! ranks: per rank `m(n) = m(p2) * (n / p2)^e` with `e = log(m(p2) /
//! m(p1)) / log(p2 / p1)`, clamped to `0..=1` (per-rank memory that falls
//! with the ranks is a fixed cost spread thinner: taken as flat, the safe
//! side; more than linear per rank would be a cube in total, which no
//! structure of the engine grows as). The estimate is the process's
//! resident memory before the probes (the binary, the program, the
//! machine) plus `m(ranks) * ranks`.
//!
//! The heap is counted by [`Counting`], the binary's global allocator: an
//! exact figure, unlike the resident set, which the allocator's reuse of
//! memory the first probe freed would blur for the second. Without it (a
//! library user that installs no counting allocator) the probes read the
//! peak resident set (`VmHWM`), reset before each probe. Linux only for the
//! resident figures: elsewhere there is no estimate.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use models::AnyMachine;
use sim_core::engine::{PrintLine, SimConfig};
use sim_core::ir::Program;

/// Runs of at least this many ranks are probed first.
pub const PROBE_FROM: u32 = 1 << 12;

/// The larger probe's ranks, at most (a quarter of the run's below that).
pub const PROBE_RANKS: u32 = 1 << 16;

/// The larger probe's events, about: each probe runs this many events
/// spread over the larger probe's ranks (at least [`PROBE_MIN_EVENTS_PER_RANK`],
/// at most [`PROBE_MAX_EVENTS_PER_RANK`] per rank), the smaller probe the
/// same number per rank, so that both stop at the same point of the
/// program. A few seconds of simulation at most; a program whose memory
/// peaks later than that (windows of requests that only overlap in a late
/// phase) is underestimated, which the test on the IMB suite bounds.
const PROBE_EVENTS: u64 = 1 << 22;
const PROBE_MIN_EVENTS_PER_RANK: u64 = 32;
const PROBE_MAX_EVENTS_PER_RANK: u64 = 4096;

/// The heap's live bytes (allocated and not freed, as malloc chunks) through [`Counting`].
static LIVE: AtomicUsize = AtomicUsize::new(0);
/// The most [`LIVE`] has been since the last [`reset_heap_peak`].
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// Set by the first allocation through [`Counting`]: the counts are real.
static COUNTING: AtomicBool = AtomicBool::new(false);

/// The system allocator, counting the heap's live bytes and their
/// high-water mark for the probes. Install it in a binary with
/// `#[global_allocator] static A: app::memory::Counting = app::memory::Counting;`.
/// Two relaxed atomic additions per allocation and a compare on the peak;
/// the engine does not allocate in its steady state (BENCHMARKS.md).
pub struct Counting;

/// What an allocation of `size` bytes takes of the heap: glibc's malloc
/// chunk, the size plus an 8-byte header rounded up to 16 bytes, at least
/// 32 (malloc/malloc.c, `request2size` and `MINSIZE` on 64-bit); from the
/// mmap threshold (128 KiB by default) whole pages plus the header. So
/// that the count is what the heap holds, not only what was asked for
/// (heat's ranks: 739 B asked for, 814 B resident). Pages of a large
/// block never touched are counted too: the safe side.
fn chunk(size: usize) -> usize {
    const MMAP_THRESHOLD: usize = 128 << 10;
    if size >= MMAP_THRESHOLD {
        (size + 16).next_multiple_of(4096)
    } else {
        (size + 8).next_multiple_of(16).max(32)
    }
}

fn grew(bytes: usize) {
    let now = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
    if now > PEAK.load(Ordering::Relaxed) {
        PEAK.fetch_max(now, Ordering::Relaxed);
    }
}

fn shrank(bytes: usize) {
    LIVE.fetch_sub(bytes, Ordering::Relaxed);
}

// SAFETY: every call is forwarded to `System` with the caller's arguments,
// so `System`'s guarantees hold; the counters only observe sizes.
#[expect(unsafe_code, reason = "a global allocator is an unsafe trait")]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is `System`'s.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            if !COUNTING.load(Ordering::Relaxed) {
                COUNTING.store(true, Ordering::Relaxed);
            }
            grew(chunk(layout.size()));
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            if !COUNTING.load(Ordering::Relaxed) {
                COUNTING.store(true, Ordering::Relaxed);
            }
            grew(chunk(layout.size()));
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, so from `System`.
        unsafe { System.dealloc(ptr, layout) };
        shrank(chunk(layout.size()));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from this allocator, so from `System`.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            let (old, new) = (chunk(layout.size()), chunk(new_size));
            if new >= old {
                grew(new - old);
            } else {
                shrank(old - new);
            }
        }
        p
    }
}

/// Whether [`Counting`] is the global allocator (it has allocated).
pub fn counting() -> bool {
    COUNTING.load(Ordering::Relaxed)
}

/// The heap's live bytes now and its high-water mark since the last
/// [`reset_heap_peak`] (both 0 without [`Counting`]).
pub fn heap() -> (usize, usize) {
    (LIVE.load(Ordering::Relaxed), PEAK.load(Ordering::Relaxed))
}

/// Starts a new high-water mark at the heap's live bytes now.
pub fn reset_heap_peak() {
    PEAK.store(LIVE.load(Ordering::Relaxed), Ordering::Relaxed);
}

/// What the probes measured and what they imply.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// The larger probe's ranks (a quarter of the run's, at most
    /// [`PROBE_RANKS`]).
    pub probe_ranks: u32,
    /// The smaller probe's ranks (a quarter of the larger's).
    pub small_probe_ranks: u32,
    /// Bytes per rank the larger probe added.
    pub probe_bytes_per_rank: f64,
    /// `e` of the extrapolation, `0..=1` (module doc).
    pub growth: f64,
    /// Bytes per rank for the run's ranks.
    pub bytes_per_rank: f64,
    /// The process's resident bytes before the probes.
    pub base: f64,
    /// For the run's ranks: `base + bytes_per_rank * ranks`.
    pub bytes: f64,
}

impl Estimate {
    /// Bytes per rank at `ranks` by the probes' extrapolation (module doc).
    pub fn per_rank_at(&self, ranks: u32) -> f64 {
        self.probe_bytes_per_rank
            * (f64::from(ranks) / f64::from(self.probe_ranks)).powf(self.growth)
    }

    /// "probes of 16384 and 65536 ranks", and the growth between them when
    /// there is one: how the estimate was made, for messages.
    pub fn probes(&self) -> String {
        let mut text = format!(
            "probes of {} and {} ranks",
            self.small_probe_ranks, self.probe_ranks
        );
        if self.growth > 0.0 {
            text.push_str(&format!(
                " (per rank growing as ranks^{:.2} between them)",
                self.growth
            ));
        }
        text
    }
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

/// The bytes one probe of `ranks` ranks adds at its peak: the heap's
/// high-water mark above its live bytes before (with [`Counting`]), else
/// the resident set's. None when the program fails at that rank count in
/// a way other than running out of its event budget (it may need a rank
/// count the probe's is not), or the platform does not say.
fn probe(
    program: &Program,
    machine: &AnyMachine,
    cfg: &SimConfig,
    ranks: u32,
    events_per_rank: u64,
) -> Option<f64> {
    let counted = counting();
    let before = if counted {
        reset_heap_peak();
        heap().0 as u64
    } else {
        let _reset = reset_peak();
        resident()?
    };
    let probe = SimConfig {
        ranks,
        max_events: u64::from(ranks) * events_per_rank,
        trace_limit: 0,
        ..cfg.clone()
    };
    let mut sink = |_: PrintLine| {};
    let outcome = sim_core::simulate(program, &mut machine.start(ranks), probe, &mut sink);
    match outcome {
        Ok(_) | Err(sim_core::engine::SimError::Runaway { .. }) => {}
        Err(_) => return None,
    }
    let peak = if counted {
        heap().1 as u64
    } else {
        peak_resident()?
    };
    Some(peak.saturating_sub(before) as f64)
}

/// Probes `program` on `machine` with `cfg`'s settings at a quarter and a
/// sixteenth of `ranks` (the larger at most [`PROBE_RANKS`]) and estimates
/// the memory of a run of `ranks` (module doc). None when `ranks` is below
/// [`PROBE_FROM`], when the platform does not say (not Linux), or when a
/// probe fails (see `probe`).
pub fn estimate(
    program: &Program,
    machine: &AnyMachine,
    cfg: &SimConfig,
    ranks: u32,
) -> Option<Estimate> {
    if ranks < PROBE_FROM {
        return None;
    }
    pin_mmap_threshold();
    let base = resident()? as f64;
    let large = (ranks / 4).min(PROBE_RANKS);
    let small = large / 4;
    let per_rank = (PROBE_EVENTS / u64::from(large))
        .clamp(PROBE_MIN_EVENTS_PER_RANK, PROBE_MAX_EVENTS_PER_RANK);
    let m_small = probe(program, machine, cfg, small, per_rank)? / f64::from(small);
    let m_large = probe(program, machine, cfg, large, per_rank)? / f64::from(large);
    let growth = extrapolation_exponent(m_small, m_large, f64::from(large) / f64::from(small));
    let mut e = Estimate {
        probe_ranks: large,
        small_probe_ranks: small,
        probe_bytes_per_rank: m_large,
        growth,
        bytes_per_rank: 0.0,
        base,
        bytes: 0.0,
    };
    e.bytes_per_rank = e.per_rank_at(ranks);
    e.bytes = base + e.bytes_per_rank * f64::from(ranks);
    Some(e)
}

/// Keeps glibc's mmap threshold at its initial 128 KiB for the rest of the
/// process (`mallopt(M_MMAP_THRESHOLD)`, which also turns off its dynamic
/// adjustment). By default glibc raises the threshold to the size of each
/// mmapped block that is freed (up to 32 MiB): after the probes freed their
/// rank arrays, the run's own growing arrays came from the main heap
/// instead, copied on each growth and leaving holes, and W2 at 1,048,576
/// ranks peaked 28 MiB higher than without the probes (BENCHMARKS.md).
/// Pinned, large blocks stay mmapped (grown in place by `mremap`, returned
/// when freed), which is also what the heap count (`chunk`) assumes.
fn pin_mmap_threshold() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[expect(unsafe_code, reason = "a call into the C library")]
    // SAFETY: `mallopt` takes no pointer; it locks the allocator while it
    // changes the parameter.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

/// `e` with `m_large = m_small * ratio^e`, clamped to `0..=1` (module
/// doc); 0 when either is not positive.
fn extrapolation_exponent(m_small: f64, m_large: f64, ratio: f64) -> f64 {
    if m_small <= 0.0 || m_large <= 0.0 || ratio <= 1.0 {
        return 0.0;
    }
    ((m_large / m_small).ln() / ratio.ln()).clamp(0.0, 1.0)
}

/// Why a run of `ranks` cannot start with `available` bytes free, when
/// the estimate is more than 90% of them; `None` when it fits.
pub fn refusal(ranks: u32, e: &Estimate, available: f64) -> Option<String> {
    (e.bytes > 0.9 * available).then(|| {
        format!(
            "{ranks} ranks need about {} ({:.0} B per rank, measured on {} of this program), \
             more than the {} this machine has available: run fewer ranks or on a machine with \
             more memory (--no-memory-check runs anyway)",
            human(e.bytes),
            e.bytes_per_rank,
            e.probes(),
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

    /// The extrapolation of module doc: per rank `m(p2) * (n / p2)^e`.
    #[test]
    fn growth_between_the_probes_is_carried_on_as_a_power() {
        use approx::assert_relative_eq;
        // Per-rank bytes that double from 16,384 to 65,536 ranks grow as
        // ranks^0.5; an all-to-all's (per rank proportional to the ranks)
        // as ranks^1; a fixed cost spread thinner is taken as flat.
        assert_relative_eq!(super::extrapolation_exponent(100.0, 200.0, 4.0), 0.5);
        assert_relative_eq!(super::extrapolation_exponent(100.0, 400.0, 4.0), 1.0);
        assert_relative_eq!(super::extrapolation_exponent(100.0, 1600.0, 4.0), 1.0);
        assert_relative_eq!(super::extrapolation_exponent(200.0, 100.0, 4.0), 0.0);
        assert_relative_eq!(super::extrapolation_exponent(0.0, 100.0, 4.0), 0.0);
        let e = super::Estimate {
            probe_ranks: 65536,
            small_probe_ranks: 16384,
            probe_bytes_per_rank: 1000.0,
            growth: 0.5,
            bytes_per_rank: 0.0,
            base: 0.0,
            bytes: 0.0,
        };
        assert_relative_eq!(e.per_rank_at(65536), 1000.0);
        assert_relative_eq!(e.per_rank_at(1 << 20), 4000.0);
        assert_eq!(
            e.probes(),
            "probes of 16384 and 65536 ranks (per rank growing as ranks^0.50 between them)"
        );
    }

    /// glibc's chunk sizes (malloc/malloc.c on 64-bit).
    #[test]
    fn allocations_count_as_malloc_chunks() {
        assert_eq!(super::chunk(1), 32);
        assert_eq!(super::chunk(24), 32);
        assert_eq!(super::chunk(25), 48);
        assert_eq!(super::chunk(72), 80);
        assert_eq!(super::chunk(1000), 1008);
        assert_eq!(super::chunk(128 << 10), 135_168);
    }

    /// The counters behind [`super::Counting`] (this test binary does not
    /// install it, so nothing else moves them; `tests/e2e.rs` checks the
    /// installed allocator through `run --stats`).
    #[test]
    fn the_heap_counts_follow_allocations() {
        super::reset_heap_peak();
        let (live, _) = super::heap();
        super::grew(1 << 20);
        super::grew(10);
        super::shrank(10);
        assert_eq!(super::heap(), (live + (1 << 20), live + (1 << 20) + 10));
        super::shrank(1 << 20);
        assert_eq!(super::heap().0, live);
        super::reset_heap_peak();
        assert_eq!(super::heap(), (live, live));
    }

    #[test]
    fn this_process_has_a_peak_and_the_system_has_memory() {
        // Linux: both come from /proc.
        assert!(super::peak_resident().is_some_and(|b| b > 0));
        assert!(super::available().is_some_and(|b| b > 0));
    }
}
