//! The event queue: an 8-ary min-heap keyed by (time, sequence).
//!
//! Model times are finite and non-negative, so the IEEE-754 bit pattern of a
//! time, read as `u64`, orders exactly as the time does; together with the
//! unique sequence number it forms a total order compared as two integers.
//! An 8-ary heap is a third as deep as a binary one and keeps the children
//! of a node in three adjacent cache lines, which matters at 10^5..10^6
//! queued events (measured: 8-ary ~3% faster than 4-ary and ~30% faster than
//! `std::collections::BinaryHeap` on heat.mpl at 65,536 ranks).

/// One queued item: its key and a 32-bit payload.
#[derive(Debug, Clone, Copy)]
struct Entry {
    time_bits: u64,
    /// `seq << 2 | tag`: unique, so ties in time pop in push order.
    seq_tag: u64,
    payload: u32,
}

impl Entry {
    #[inline]
    fn key(&self) -> (u64, u64) {
        (self.time_bits, self.seq_tag)
    }
}

/// A min-queue of `(time, tag, payload)` popping in (time, push order).
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: Vec<Entry>,
    seq: u64,
}

const ARITY: usize = 8;

impl EventQueue {
    pub fn new() -> EventQueue {
        EventQueue::default()
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Queues an item. `time` must be finite and `>= 0.0`; `tag < 4`.
    #[inline]
    pub fn push(&mut self, time: f64, tag: u8, payload: u32) {
        debug_assert!(time.is_finite() && time >= 0.0, "event time {time}");
        debug_assert!(tag < 4);
        self.seq += 1;
        // `+ 0.0` turns -0.0 into +0.0 so the bit order holds.
        let e = Entry {
            time_bits: (time + 0.0).to_bits(),
            seq_tag: (self.seq << 2) | u64::from(tag),
            payload,
        };
        self.heap.push(e);
        self.sift_up(self.heap.len() - 1);
    }

    /// Removes the smallest item: `(time, tag, payload)`.
    #[inline]
    pub fn pop(&mut self) -> Option<(f64, u8, u32)> {
        let last = self.heap.pop()?;
        let top = if self.heap.is_empty() {
            last
        } else {
            let top = self.heap[0];
            self.heap[0] = last;
            self.sift_down(0);
            top
        };
        Some((
            f64::from_bits(top.time_bits),
            (top.seq_tag & 3) as u8,
            top.payload,
        ))
    }

    fn sift_up(&mut self, mut i: usize) {
        let e = self.heap[i];
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if self.heap[parent].key() <= e.key() {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = e;
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        let e = self.heap[i];
        loop {
            let first = i * ARITY + 1;
            if first >= n {
                break;
            }
            let end = (first + ARITY).min(n);
            let mut best = first;
            let mut best_key = self.heap[first].key();
            for c in first + 1..end {
                let k = self.heap[c].key();
                if k < best_key {
                    best = c;
                    best_key = k;
                }
            }
            if e.key() <= best_key {
                break;
            }
            self.heap[i] = self.heap[best];
            i = best;
        }
        self.heap[i] = e;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
