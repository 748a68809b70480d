//! The event queue: a radix heap keyed by time, ties in push order.
//!
//! Model times are finite and non-negative, so the IEEE-754 bit pattern of a
//! time, read as `u64`, orders exactly as the time does; a discrete-event
//! simulation never schedules an event before the last one it took, which
//! is what a radix heap needs. Measured against the 8-ary heap on
//! (time, sequence) it replaced: heat.mpl 8-15% faster at 1,024 ranks and
//! 25% at 65,536 (BENCHMARKS.md), with identical output.

use std::collections::VecDeque;

/// One queued item: its key, tag and a 32-bit payload. 16 bytes (it was
/// 24 with a 64-bit push sequence number): the queue's buffers were a
/// quarter of W2's peak memory (~530 B per rank at 65,536 ranks, the sum
/// of the buckets' capacities), and no sequence number is needed for the
/// order of ties, because every list keeps its items in push order (see
/// [`EventQueue`]).
#[derive(Debug, Clone, Copy)]
struct Entry {
    time_bits: u64,
    payload: u32,
    /// `< 4`.
    tag: u8,
}

/// A monotone min-queue of `(time, tag, payload)` popping in (time, push
/// order): a radix heap (Ahuja, Mehlhorn, Orlin, Tarjan, "Faster
/// algorithms for the shortest path problem", JACM 1990) on the time's bit
/// pattern. Requires every pushed time to be at least the last popped one,
/// which a discrete-event simulation guarantees (nothing is scheduled in
/// the past).
///
/// `buckets[k]` holds the items whose time's bit pattern differs from the
/// last popped time's highest in bit k; `now` the items at exactly the last
/// popped time, in push order. A push is O(1); a pop that finds `now` empty
/// empties the lowest non-empty bucket into lower ones and `now`, so an
/// item moves at most 64 times over its life.
///
/// Ties pop in push order without a sequence number, by this invariant:
/// `now` and every bucket hold their items in push order. A push appends
/// to one list. `refill` runs only with `now` empty and takes the lowest
/// non-empty bucket `i`, so the buckets below `i` are empty too; its items
/// differ from the new `last` (their minimum) only in bits below `i`, so
/// each goes to `now` or to a bucket below `i`, and each of those lists
/// receives a subsequence of bucket `i` in its order.
#[derive(Debug)]
pub struct EventQueue {
    /// Items at `last`, in push order.
    now: VecDeque<Entry>,
    /// Invariant: 64 buckets (`new`).
    buckets: Vec<Vec<Entry>>,
    /// Bit `i` set iff `buckets[i]` is non-empty: `refill` finds the
    /// lowest in one instruction instead of testing the buckets in turn
    /// (a third of its time in heat.mpl's profile).
    nonempty: u64,
    /// Buffers of buckets emptied by `refill`, for the next empty bucket
    /// that receives an item. With each bucket keeping its own buffer, the
    /// buffers summed the largest load every bucket ever had: 22 entries
    /// per rank for W2 at 65,536 ranks, with about 5 per rank queued at
    /// once. Handed on, a buffer serves whichever buckets are in use.
    spare: Vec<Vec<Entry>>,
    last: u64,
    len: usize,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl EventQueue {
    pub fn new() -> EventQueue {
        EventQueue {
            now: VecDeque::new(),
            buckets: (0..64).map(|_| Vec::new()).collect(),
            nonempty: 0,
            spare: Vec::new(),
            last: 0,
            len: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// 1..=64: one more than the highest bit in which `bits` differs from
    /// `last` (the caller handles equality, which would give 0).
    #[inline]
    fn bucket(&self, bits: u64) -> usize {
        64 - (bits ^ self.last).leading_zeros() as usize
    }

    /// Queues an item. `time` must be finite, `>= 0.0` and at least the
    /// last popped time; `tag < 4`.
    #[inline]
    pub fn push(&mut self, time: f64, tag: u8, payload: u32) {
        debug_assert!(time.is_finite() && time >= 0.0, "event time {time}");
        debug_assert!(tag < 4);
        let e = Entry {
            time_bits: (time + 0.0).to_bits(),
            payload,
            tag,
        };
        debug_assert!(e.time_bits >= self.last, "event in the past: {time}");
        // An item in the past (a caller's bug) is queued at the last time
        // rather than breaking the structure.
        let bits = e.time_bits.max(self.last);
        self.len += 1;
        if bits == self.last {
            self.now.push_back(e);
        } else {
            let b = self.bucket(bits);
            self.push_to_bucket(b - 1, e);
        }
    }

    #[inline]
    fn push_to_bucket(&mut self, i: usize, e: Entry) {
        let bucket = &mut self.buckets[i];
        if bucket.capacity() == 0
            && let Some(buf) = self.spare.pop()
        {
            *bucket = buf;
        }
        bucket.push(e);
        self.nonempty |= 1 << i;
    }

    /// Removes the smallest item: `(time, tag, payload)`.
    #[inline]
    pub fn pop(&mut self) -> Option<(f64, u8, u32)> {
        if self.now.is_empty() {
            self.refill()?;
        }
        let top = self.now.pop_front()?;
        self.len -= 1;
        Some((
            f64::from_bits(top.time_bits.max(self.last)),
            top.tag,
            top.payload,
        ))
    }

    /// Every item `delta` later (`delta >= 0`), the current time too, in
    /// the same order (equal times keep their push order): the queue is
    /// emptied in order and filled again.
    pub fn shift(&mut self, delta: f64) {
        let last = f64::from_bits(self.last) + delta;
        let mut items = Vec::with_capacity(self.len);
        while let Some(x) = self.pop() {
            items.push(x);
        }
        self.last = (last + 0.0).to_bits();
        for (t, tag, payload) in items {
            self.push(t + delta, tag, payload);
        }
    }

    /// Moves the items at the next time into `now`, in push order (the
    /// invariant of [`EventQueue`]). Called only with `now` empty.
    #[cold]
    fn refill(&mut self) -> Option<()> {
        debug_assert!(self.now.is_empty(), "refill with items at `last`");
        if self.nonempty == 0 {
            return None;
        }
        let i = self.nonempty.trailing_zeros() as usize;
        self.nonempty &= !(1 << i);
        let items = std::mem::take(&mut self.buckets[i]);
        // Invariant: `position` found it non-empty.
        let min = items.iter().map(|e| e.time_bits).min()?;
        self.last = min;
        for e in &items {
            if e.time_bits == min {
                self.now.push_back(*e);
            } else {
                let b = self.bucket(e.time_bits);
                self.push_to_bucket(b - 1, *e);
            }
        }
        // The emptied bucket's buffer waits for the next bucket in use
        // (`spare`); the lower buckets just filled hold theirs.
        let mut items = items;
        items.clear();
        self.spare.push(items);
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_is_16_bytes() {
        assert_eq!(std::mem::size_of::<Entry>(), 16);
    }

    #[test]
    fn pops_in_time_then_push_order() {
        let mut q = EventQueue::new();
        // A deterministic pseudo-random sequence of times with many ties.
        let mut x: u64 = 12345;
        let mut expected = Vec::new();
        for i in 0..10_000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let t = ((x >> 33) % 100) as f64 * 0.25;
            q.push(t, (i % 4) as u8, i);
            expected.push((t, i));
        }
        expected.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        for (t, i) in expected {
            let (pt, tag, p) = q.pop().expect("an item per push");
            assert_eq!((pt, p, tag), (t, i, (i % 4) as u8));
        }
        assert!(q.pop().is_none());
    }

    #[test]
    fn a_shift_keeps_the_order_and_moves_every_time() {
        let mut q = EventQueue::new();
        for (t, p) in [(0.5, 1), (0.5, 2), (2.0, 3), (1.0, 4), (0.5, 5), (1.0, 6)] {
            q.push(t, 0, p);
        }
        assert_eq!(q.pop(), Some((0.5, 0, 1)));
        q.shift(10.0);
        // The current time moved too: an item pushed now at 10.5 is at the
        // current time, behind those already there.
        q.push(10.5, 1, 7);
        let order: Vec<(f64, u32)> =
            std::iter::from_fn(|| q.pop().map(|(t, _, p)| (t, p))).collect();
        assert_eq!(
            order,
            vec![
                (10.5, 2),
                (10.5, 5),
                (10.5, 7),
                (11.0, 4),
                (11.0, 6),
                (12.0, 3)
            ]
        );
    }

    #[test]
    fn interleaved_pushes_stay_ordered() {
        let mut q = EventQueue::new();
        q.push(1.0, 0, 1);
        q.push(0.0, 0, 0);
        assert_eq!(q.pop(), Some((0.0, 0, 0)));
        q.push(1.0, 1, 2);
        q.push(0.5, 2, 3);
        assert_eq!(q.pop(), Some((0.5, 2, 3)));
        assert_eq!(q.pop(), Some((1.0, 0, 1)));
        assert_eq!(q.pop(), Some((1.0, 1, 2)));
        assert_eq!(q.len(), 0);
    }

    #[test]
    fn matches_a_sorted_reference_under_simulation_order() {
        // Pushes never before the last pop, many ties, pops interleaved.
        let mut q = EventQueue::new();
        // (time bits, sequence) -> payload: the order the queue must follow.
        let mut reference = std::collections::BTreeMap::new();
        let mut x: u64 = 99;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 33
        };
        let (mut now, mut seq) = (0.0f64, 0u64);
        for i in 0..200_000u32 {
            if next() % 3 > 0 || reference.is_empty() {
                let dt = match next() % 4 {
                    0 => 0.0,
                    1 => (next() % 8) as f64 * 1e-6,
                    2 => (next() % 1000) as f64 * 1e-3,
                    _ => 1e-9 * (next() % 7) as f64,
                };
                seq += 1;
                q.push(now + dt, (i % 4) as u8, i);
                reference.insert(((now + dt).to_bits(), seq), i);
            } else {
                let ((bits, _), p) = reference.pop_first().expect("non-empty");
                let t = f64::from_bits(bits);
                let got = q.pop().expect("as many items as the reference");
                assert_eq!((got.0, got.2, got.1), (t, p, (p % 4) as u8));
                now = t;
            }
            assert_eq!(q.len(), reference.len());
        }
    }
}
