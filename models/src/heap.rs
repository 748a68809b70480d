//! What a process's memory allocator hands back when an MPI library
//! allocates a collective's temporary buffers and frees them at the end of
//! the call (`sim_core::coll::Op::Alloc` / `Op::Free`): fresh pages, which
//! the kernel faults in and zeroes when the library first writes them, or
//! memory the process already has.
//!
//! [`GlibcHeap`] is glibc's `malloc` (the main arena of
//! `malloc/malloc.c`, 2.26 and later) as far as it decides that, with its
//! default, dynamic thresholds:
//! - a request of `n` bytes is a chunk of `nb = request2size(n) =
//!   max(32, (n + 8 + 15) & !15)` bytes (`SIZE_SZ` 8, `MALLOC_ALIGNMENT`
//!   16, `MINSIZE` 32 on 64-bit);
//! - it is cut from the top of the heap when the top chunk holds `nb +
//!   MINSIZE` (`_int_malloc`, `use_top`); otherwise `sysmalloc` maps it on
//!   its own (`mmap`, the chunk `nb + 8` rounded up to pages) when `nb >=
//!   mmap_threshold`, else extends the heap by `nb + top_pad + MINSIZE` less
//!   the old top, rounded up to pages (`brk`);
//! - freeing a mapped chunk unmaps it and, while the thresholds are dynamic,
//!   raises `mmap_threshold` to its size and `trim_threshold` to twice that
//!   when it is larger than the threshold and at most
//!   `DEFAULT_MMAP_THRESHOLD_MAX` (32 MiB on 64-bit) (`__libc_free`);
//! - freeing a heap chunk merges it into the top (the library frees its
//!   temporaries in reverse order, so each borders the top or a free chunk
//!   that does), and when the top is then at least `trim_threshold`, the
//!   heap gives back all but `top_pad` of it (`_int_free`, `systrim`: the
//!   top is cut by `ALIGN_DOWN(top - top_pad - MINSIZE - 1, page)`).
//!
//! Defaults (the GNU C Library manual, "Malloc Tunable Parameters"):
//! `mmap_threshold` and `trim_threshold` 128 KiB, adjusted as above;
//! `top_pad` 128 KiB (measured on glibc 2.36: the first heap extension for a
//! 656-byte request is 135,168 bytes). Every figure of the unit tests below
//! is what glibc 2.36 did on the development machine (`sbrk(0)` before and
//! after each call, 2026-11-28).
//!
//! Memory the heap has never handed out, or has given back, faults in when
//! written: the pages of a request beyond the resident part at the bottom
//! of the top chunk, and every page of a mapped chunk. The consequence
//! MPICH's users meet: an algorithm that allocates *two* buffers of the
//! vector per call (MPICH's reduce at a non-root rank, its recursive
//! halving reduce_scatter) frees `2 nb` onto a top whose trim threshold the
//! first call set to about `2 nb`, so every call gives the memory back and
//! faults it in again (`2 nb - top_pad` bytes); one buffer per call
//! (allreduce) stays below the threshold and is reused. VALIDATION.md
//! section 4.7 measures it with the real benchmarks.
//!
//! With thresholds set by the user (`MALLOC_MMAP_THRESHOLD_`,
//! `MALLOC_TRIM_THRESHOLD_` or `mallopt`) glibc stops adjusting them;
//! [`Allocator::Retain`] is the usual such setting (both large: the heap
//! keeps what it got, and nothing faults after the first call).

/// 64-bit glibc's `SIZE_SZ`.
const SIZE_SZ: u64 = 8;
/// 64-bit glibc's `MINSIZE`.
const MINSIZE: u64 = 32;
/// `MALLOC_ALIGNMENT - 1` on x86-64.
const ALIGN_MASK: u64 = 15;
/// `DEFAULT_MMAP_THRESHOLD_MIN`, the initial `mmap_threshold` and
/// `trim_threshold`.
const THRESHOLD_MIN: u64 = 128 * 1024;
/// `DEFAULT_MMAP_THRESHOLD_MAX` on 64-bit: `4 * 1024 * 1024 * sizeof(long)`.
const THRESHOLD_MAX: u64 = 32 * 1024 * 1024;
/// `DEFAULT_TOP_PAD` as glibc 2.36 runs it (see the module docs).
const TOP_PAD: u64 = 128 * 1024;

/// Which allocator policy decides what a library's temporaries cost
/// (`[node] allocator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Allocator {
    /// glibc's `malloc` with its default, dynamic thresholds ([`GlibcHeap`]).
    Glibc,
    /// An allocator that keeps what it got (glibc with
    /// `MALLOC_TRIM_THRESHOLD_` and `MALLOC_MMAP_THRESHOLD_` set large, or
    /// any allocator that never returns memory): a temporary faults in once,
    /// the first time a rank needs that much, and never again.
    Retain,
}

impl Allocator {
    /// The machine file's name of the policy.
    pub fn name(self) -> &'static str {
        match self {
            Allocator::Glibc => "glibc",
            Allocator::Retain => "retain",
        }
    }

    /// The policy a machine file names, if any.
    pub fn from_name(name: &str) -> Option<Allocator> {
        match name.trim().to_ascii_lowercase().as_str() {
            "glibc" => Some(Allocator::Glibc),
            "retain" => Some(Allocator::Retain),
            _ => None,
        }
    }
}

/// One process's heap, as far as its temporaries' page faults go.
/// Addresses are offsets from the start of the heap (page-aligned, as the
/// heap's first extension is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlibcHeap {
    policy: Allocator,
    page: u64,
    mmap_threshold: u64,
    trim_threshold: u64,
    /// Where the top chunk starts. Invariant: `top_start <= brk`.
    top_start: u64,
    /// The end of the heap (`sbrk(0)`).
    brk: u64,
    /// The heap's resident memory: sorted, disjoint, page-aligned `[start,
    /// end)` ranges below `brk`.
    resident: Vec<(u64, u64)>,
    /// The live temporaries, in order of allocation.
    live: Vec<Chunk>,
}

/// A live temporary: where its chunk starts, its bytes, and whether it is
/// mapped on its own (`addr` unused then).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Chunk {
    addr: u64,
    size: u64,
    mapped: bool,
}

/// `request2size`.
fn chunk_size(bytes: u64) -> u64 {
    bytes
        .saturating_add(SIZE_SZ + ALIGN_MASK)
        .max(MINSIZE + ALIGN_MASK)
        & !ALIGN_MASK
}

/// Where a chunk's user data starts (after `prev_size` and `size`).
const HEADER: u64 = 2 * SIZE_SZ;

impl GlibcHeap {
    /// A process that has not allocated yet, with pages of `page` bytes.
    pub fn new(policy: Allocator, page: u64) -> GlibcHeap {
        let (mmap_threshold, trim_threshold) = match policy {
            Allocator::Glibc => (THRESHOLD_MIN, THRESHOLD_MIN),
            Allocator::Retain => (u64::MAX, u64::MAX),
        };
        GlibcHeap {
            policy,
            page: page.max(1),
            mmap_threshold,
            trim_threshold,
            top_start: 0,
            brk: 0,
            resident: Vec::new(),
            live: Vec::new(),
        }
    }

    fn align_up(&self, x: u64) -> u64 {
        x.div_ceil(self.page) * self.page
    }

    fn align_down(&self, x: u64) -> u64 {
        x / self.page * self.page
    }

    /// The pages `[start, end)` spans.
    fn span(&self, start: u64, end: u64) -> (u64, u64) {
        if end <= start {
            (start, start)
        } else {
            (self.align_down(start), self.align_up(end))
        }
    }

    /// Pages of `[start, end)` (page-aligned) not resident; marks them
    /// resident (in place: the ranges that touch or overlap it become one).
    fn touch(&mut self, start: u64, end: u64) -> u64 {
        if end <= start {
            return 0;
        }
        // The first range that ends at or after `start`, and past the last
        // that starts at or before `end`.
        let i = self.resident.partition_point(|&(_, b)| b < start);
        let mut j = i;
        let (mut s, mut e, mut covered) = (start, end, 0);
        while let Some(&(a, b)) = self.resident.get(j) {
            if a > end {
                break;
            }
            covered += b.min(end).saturating_sub(a.max(start));
            s = s.min(a);
            e = e.max(b);
            j += 1;
        }
        self.resident.splice(i..j, std::iter::once((s, e)));
        (end - start - covered) / self.page
    }

    /// `malloc(bytes)` whose bytes `touched` (offsets into the buffer) are
    /// then written: returns how many pages fault in.
    pub fn alloc(&mut self, bytes: u64, touched: std::ops::Range<u64>) -> u64 {
        let nb = chunk_size(bytes);
        let (from, to) = (touched.start.min(bytes), touched.end.min(bytes));
        if self.brk - self.top_start < nb.saturating_add(MINSIZE) {
            if nb >= self.mmap_threshold {
                // A fresh mapping: every written page faults.
                let size = self.align_up(nb + SIZE_SZ);
                self.live.push(Chunk {
                    addr: 0,
                    size,
                    mapped: true,
                });
                let (a, b) = self.span(HEADER + from, HEADER + to);
                return (b - a) / self.page;
            }
            // sysmalloc: the heap grows by fresh memory.
            let top = self.brk - self.top_start;
            self.brk += self.align_up((nb + TOP_PAD + MINSIZE).saturating_sub(top));
        }
        let addr = self.top_start;
        self.top_start += nb;
        self.live.push(Chunk {
            addr,
            size: nb,
            mapped: false,
        });
        let (a, b) = self.span(addr + HEADER + from, addr + HEADER + to);
        self.touch(a, b)
    }

    /// `free` of the temporary of `bytes` allocated last and still live (of
    /// the latest one of that size when the order differs; of nothing when
    /// none was allocated).
    pub fn free(&mut self, bytes: u64) {
        let nb = chunk_size(bytes);
        let mapped_size = self.align_up(nb + SIZE_SZ);
        let at = self
            .live
            .iter()
            .rposition(|c| c.size == if c.mapped { mapped_size } else { nb })
            .or_else(|| self.live.len().checked_sub(1));
        let Some(at) = at else {
            return;
        };
        let chunk = self.live.remove(at);
        if chunk.mapped {
            if self.policy == Allocator::Glibc
                && chunk.size > self.mmap_threshold
                && chunk.size <= THRESHOLD_MAX
            {
                self.mmap_threshold = chunk.size;
                self.trim_threshold = 2 * chunk.size;
            }
            return;
        }
        // Free chunks next to the top merge into it: the top now starts
        // where the highest live heap chunk ends.
        let top_start = self
            .live
            .iter()
            .filter(|c| !c.mapped)
            .map(|c| c.addr + c.size)
            .max()
            .unwrap_or(0);
        if top_start >= self.top_start {
            return;
        }
        self.top_start = top_start;
        let top = self.brk - self.top_start;
        if top >= self.trim_threshold {
            let extra = self.align_down(top.saturating_sub(TOP_PAD + MINSIZE + 1));
            self.brk -= extra;
            let brk = self.brk;
            self.resident.retain_mut(|r| {
                r.1 = r.1.min(brk);
                r.0 < r.1
            });
        }
    }

    /// Bytes the heap's top holds now (for tests and reports).
    pub fn top(&self) -> u64 {
        self.brk - self.top_start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: u64 = 4096;

    /// `malloc(n)` written whole.
    fn whole(h: &mut GlibcHeap, n: u64) -> u64 {
        h.alloc(n, 0..n)
    }

    /// The sequence of `validation/dev-machine/heap/pad.c` on glibc 2.36:
    /// the heap grew by exactly 135,168 (tcache's block), 348,160 and
    /// 299,008 bytes and shrank by 598,016.
    #[test]
    fn follows_glibc_2_36_step_by_step() {
        let mut h = GlibcHeap::new(Allocator::Glibc, PAGE);
        // tcache's own block (`sizeof (tcache_perthread_struct)` = 640 B
        // asked, a 656-byte chunk), then malloc(50000): both in the first
        // extension.
        whole(&mut h, 640);
        assert_eq!(h.brk, 135_168);
        whole(&mut h, 50_000);
        assert_eq!(h.brk, 135_168);
        // 300,000 B: at the 128 KiB threshold, mapped (74 pages written);
        // its free raises the thresholds to 303,104 and 606,208.
        assert_eq!(whole(&mut h, 300_000), 303_104 / PAGE);
        assert_eq!(h.brk, 135_168);
        h.free(300_000);
        assert_eq!((h.mmap_threshold, h.trim_threshold), (303_104, 606_208));
        // Now below the threshold: from the heap, which grows by 348,160
        // and then 299,008 bytes.
        whole(&mut h, 300_000);
        assert_eq!(h.brk, 135_168 + 348_160);
        whole(&mut h, 300_000);
        assert_eq!(h.brk, 135_168 + 348_160 + 299_008);
        // The first free stays below the trim threshold; the second passes
        // it and gives back 598,016 bytes.
        h.free(300_000);
        assert_eq!(h.brk, 135_168 + 348_160 + 299_008);
        h.free(300_000);
        assert_eq!(h.brk, 135_168 + 348_160 + 299_008 - 598_016);
    }

    /// Fresh heap pages fault once; written again, they do not.
    #[test]
    fn written_pages_fault_once_while_the_heap_keeps_them() {
        let mut h = GlibcHeap::new(Allocator::Glibc, PAGE);
        // 64 KiB from a fresh heap: data at 16..65,552, 17 pages.
        assert_eq!(h.alloc(65_536, 0..65_536), 17);
        h.free(65_536);
        assert_eq!(h.alloc(65_536, 0..65_536), 0);
        h.free(65_536);
        // The second half of a 100 KiB buffer (bytes 51,216..102,416 of
        // the heap: pages 12..26) written: pages 12..17 were written by the
        // 64 KiB buffer (the heap kept them: its free left 135,168 bytes,
        // the pad), 17..26 fault.
        assert_eq!(h.alloc(102_400, 51_200..102_400), 9);
    }

    /// Two buffers of `n` per call fault `2 nb - top_pad` bytes in every
    /// call after the first; one buffer faults nothing.
    #[test]
    fn two_temporaries_fault_every_call_one_does_not() {
        for n in [200_000u64, 1 << 20, 4 << 20] {
            let nb = n + 16;
            let mut two = GlibcHeap::new(Allocator::Glibc, PAGE);
            let mut one = GlibcHeap::new(Allocator::Glibc, PAGE);
            let mut per_call = Vec::new();
            for _ in 0..6 {
                let f = whole(&mut two, n) + whole(&mut two, n);
                two.free(n);
                two.free(n);
                let g = whole(&mut one, n);
                one.free(n);
                per_call.push((f, g));
            }
            // Steady from the third call: the trim keeps `top_pad +
            // MINSIZE` and under a page more, resident; the rest faults
            // again.
            let kept = two.top();
            assert!(
                (TOP_PAD..TOP_PAD + MINSIZE + PAGE).contains(&kept),
                "{kept}"
            );
            for &(f, g) in &per_call[2..] {
                let expected = (2 * nb - kept) / PAGE;
                assert!(f.abs_diff(expected) <= 2, "n {n}: {f} vs {expected}");
                assert_eq!(g, 0, "n {n}: one buffer is reused");
            }
        }
    }

    /// Only written pages fault: a buffer of which the algorithm writes half
    /// (recursive halving's kept half) faults half as many pages.
    #[test]
    fn only_the_written_part_faults() {
        let n = 1u64 << 20;
        let mut h = GlibcHeap::new(Allocator::Glibc, PAGE);
        // Mapped on the first call: the second half spans 128 pages and one
        // more (the data starts 16 bytes into the mapping).
        assert_eq!(h.alloc(n, n / 2..n), 129);
        assert_eq!(h.alloc(n, 0..n), 257);
        h.free(n);
        h.free(n);
        // From the heap, fresh: the half, then the whole other buffer but
        // the page it shares with the first one's end.
        assert_eq!(h.alloc(n, n / 2..n), 129);
        assert_eq!(h.alloc(n, 0..n), 256);
        h.free(n);
        h.free(n);
        // Trimmed to the pad, which is the first buffer's first 128 KiB:
        // written nowhere by the half, so the half and the whole fault again.
        assert_eq!(h.alloc(n, n / 2..n), 129);
        assert_eq!(h.alloc(n, 0..n), 256);
    }

    /// `Retain`: the first call's pages, never again.
    #[test]
    fn retain_faults_once() {
        let n = 1u64 << 20;
        let mut h = GlibcHeap::new(Allocator::Retain, PAGE);
        let first = whole(&mut h, n) + whole(&mut h, n);
        h.free(n);
        h.free(n);
        // The two buffers' data, 16..2 nb + 16, back to back.
        assert_eq!(first, (2 * (n + 16) + 16).div_ceil(PAGE));
        for _ in 0..3 {
            assert_eq!(whole(&mut h, n) + whole(&mut h, n), 0);
            h.free(n);
            h.free(n);
        }
    }
}
