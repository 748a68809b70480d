//! The byte intervals of one direction of a half-duplex channel.
//!
//! A half-duplex NIC (or memory channel) moves bytes one way at a time: the
//! bytes a node sends and the bytes it receives must not cross its channel
//! at the same moment (PCI Local Bus Specification 2.2, chapter 3: one bus
//! master at a time). [`Intervals`] holds the reservations of one direction
//! so that a transfer in the other direction can find how long it overlaps
//! them (and is slowed by the share of that time the channel cannot serve
//! both directions).

use std::collections::VecDeque;

/// Reserved intervals `[begin, end)` of one direction of a channel.
///
/// Invariant: sorted by `begin`, with `end` nondecreasing as well, and no
/// interval of zero or negative length. The machine reserves a direction's
/// intervals in the order its "free at" timeline serialises them (the next
/// one begins no sooner than the previous one ends), which gives both orders;
/// [`Intervals::reserve`] keeps them for any caller by inserting in place and
/// widening an earlier `end` it would otherwise undercut.
#[derive(Debug, Clone, Default)]
pub(crate) struct Intervals {
    spans: VecDeque<(f64, f64)>,
}

impl Intervals {
    /// Every interval `delta` later.
    pub(crate) fn shift(&mut self, delta: f64) {
        for (b, e) in &mut self.spans {
            *b += delta;
            *e += delta;
        }
    }

    /// How long `[begin, end)` overlaps the union of the reserved
    /// intervals.
    pub(crate) fn overlap(&self, begin: f64, end: f64) -> f64 {
        if end <= begin {
            return 0.0;
        }
        // The first interval that ends after `begin`; the ones after it are
        // visited in order until one begins at or after `end`. Intervals may
        // overlap each other (a stretched reservation), so coverage is
        // counted from `covered` on only.
        let mut index = self.spans.partition_point(|&(_, stop)| stop <= begin);
        let mut covered = begin;
        let mut total = 0.0;
        while let Some(&(b, e)) = self.spans.get(index) {
            if b >= end {
                break;
            }
            let from = b.max(covered);
            let to = e.min(end);
            if to > from {
                total += to - from;
                covered = to;
            }
            index += 1;
        }
        total
    }

    /// Reserves `[begin, end)`; empty intervals are not kept.
    /// Takes `length` of idle time from `from` on, in as many idle gaps as
    /// it needs (a resource that serves whoever is waiting whenever it is
    /// idle: work-conserving, earlier reservations first): returns when
    /// the service begins (the first idle instant at or after `from`) and
    /// when it is complete. The whole span from the first to the end is
    /// then busy, its gaps filled, and kept as one interval.
    pub(crate) fn fill(&mut self, from: f64, length: f64) -> (f64, f64) {
        if length <= 0.0 || !from.is_finite() || !length.is_finite() {
            return (from, from + length.max(0.0));
        }
        let first = self.spans.partition_point(|&(_, stop)| stop <= from);
        let mut at = from;
        let mut left = length;
        let mut begin = None;
        let mut index = first;
        while let Some(&(b, e)) = self.spans.get(index) {
            if b > at {
                let gap = b - at;
                begin.get_or_insert(at);
                // A gap short of `left` by rounding only (a billionth) is
                // enough: times summed in another order differ in their
                // last bits, and a sliver left over would wait for the
                // next gap.
                if gap >= left * (1.0 - 1e-9) {
                    break;
                }
                left -= gap;
            }
            at = at.max(e);
            index += 1;
        }
        let begin = begin.unwrap_or(at);
        let end = at + left;
        // Spans `first..index` lie inside `[from, end]` or begin before
        // `from` and end inside it: one interval covers them and the
        // filled gaps.
        let merged_begin = self.spans.get(first).map_or(begin, |&(b, _)| b.min(begin));
        let merged_end = self
            .spans
            .range(first..index)
            .fold(end, |reach, &(_, e)| reach.max(e));
        self.spans.drain(first..index);
        self.spans.insert(first, (merged_begin, merged_end));
        (begin, end)
    }

    pub(crate) fn reserve(&mut self, begin: f64, end: f64) {
        if end <= begin || !begin.is_finite() || !end.is_finite() {
            return;
        }
        let index = self.spans.partition_point(|&(b, _)| b <= begin);
        self.spans.insert(index, (begin, end));
        // Keep `end` nondecreasing along the list, which `earliest`'s binary
        // search needs; a later interval that ends sooner is widened (never
        // happens for the machine's own reservations, see the invariant).
        let mut reach = f64::NEG_INFINITY;
        for span in self.spans.range_mut(index.saturating_sub(1)..) {
            if span.1 < reach {
                span.1 = reach;
            }
            reach = span.1;
        }
    }

    /// Drops the intervals that end at or before `t`: no request begins
    /// before `t` any more (transfers come in nondecreasing ready order).
    pub(crate) fn forget_before(&mut self, t: f64) {
        while self.spans.front().is_some_and(|&(_, end)| end <= t) {
            self.spans.pop_front();
        }
    }

    pub(crate) fn clear(&mut self) {
        self.spans.clear();
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.spans.len()
    }
}

#[cfg(test)]
mod tests {
    use super::Intervals;

    #[test]
    fn overlap_counts_the_covered_time() {
        let mut busy = Intervals::default();
        busy.reserve(10.0, 20.0);
        busy.reserve(25.0, 30.0);
        assert_eq!(busy.overlap(0.0, 10.0), 0.0);
        assert_eq!(busy.overlap(5.0, 15.0), 5.0);
        assert_eq!(busy.overlap(12.0, 27.0), 10.0);
        assert_eq!(busy.overlap(0.0, 100.0), 15.0);
        assert_eq!(busy.overlap(30.0, 40.0), 0.0);
        assert_eq!(busy.overlap(15.0, 15.0), 0.0);
        // Overlapping reservations count once.
        busy.reserve(12.0, 26.0);
        assert_eq!(busy.overlap(0.0, 100.0), 20.0);
        // Empty reservations are not kept; old ones are forgotten.
        busy.reserve(40.0, 40.0);
        assert_eq!(busy.len(), 3);
        busy.forget_before(21.0);
        assert_eq!(busy.len(), 2);
        assert_eq!(busy.overlap(0.0, 100.0), 18.0);
    }

    #[test]
    fn fill_takes_idle_time_in_every_gap_it_needs() {
        let mut busy = Intervals::default();
        assert_eq!(busy.fill(3.0, 2.0), (3.0, 5.0));
        let mut busy = Intervals::default();
        busy.reserve(10.0, 20.0);
        busy.reserve(25.0, 30.0);
        // 2 before 10 and 3 in 20..25: from 8, 5 of service ends at 23.
        assert_eq!(busy.fill(8.0, 5.0), (8.0, 23.0));
        // Now busy 8..23 and 25..30: 1 from 12 is 23..24.
        assert_eq!(busy.fill(12.0, 1.0), (23.0, 24.0));
        // From 0: 8 before 8, 1 in 24..25, the last 1 after 30.
        assert_eq!(busy.fill(0.0, 10.0), (0.0, 31.0));
        assert_eq!(busy.overlap(0.0, 100.0), 31.0);
        assert_eq!(busy.len(), 1);
    }

    #[test]
    fn out_of_order_reservations_keep_the_invariant() {
        let mut busy = Intervals::default();
        busy.reserve(10.0, 50.0);
        busy.reserve(20.0, 30.0);
        busy.reserve(0.0, 5.0);
        assert_eq!(busy.overlap(0.0, 1.0), 1.0);
        assert_eq!(busy.overlap(4.0, 11.0), 2.0);
        assert_eq!(busy.overlap(0.0, 60.0), 45.0);
    }
}
