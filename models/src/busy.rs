//! The byte intervals of one direction of a half-duplex channel.
//!
//! A half-duplex NIC (or memory channel) moves bytes one way at a time: the
//! bytes a node sends and the bytes it receives must not cross its channel
//! at the same moment (PCI Local Bus Specification 2.2, chapter 3: one bus
//! master at a time). [`Intervals`] holds the reservations of one direction
//! so that a transfer in the other direction can find the earliest time its
//! own bytes fit between them.

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
    /// The earliest `t >= from` at which `[t + offset, t + offset + len)`
    /// overlaps no reserved interval. A zero-length request overlaps an
    /// interval only when it falls strictly inside it.
    pub(crate) fn earliest(&self, from: f64, offset: f64, len: f64) -> f64 {
        let mut t = from;
        // The first interval that ends after the request begins; later ones
        // are visited in order as the request moves past each overlap.
        let mut index = self.spans.partition_point(|&(_, end)| end <= t + offset);
        while let Some(&(begin, end)) = self.spans.get(index) {
            let at = t + offset;
            if begin >= at + len || (len == 0.0 && begin >= at) {
                break;
            }
            // Overlap: the request can begin once this interval has ended.
            t = t.max(end - offset);
            index += 1;
        }
        t
    }

    /// Reserves `[begin, end)`; empty intervals are not kept.
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
    fn requests_move_past_overlaps_only() {
        let mut busy = Intervals::default();
        busy.reserve(10.0, 20.0);
        busy.reserve(25.0, 30.0);
        // Fits before the first interval.
        assert_eq!(busy.earliest(0.0, 0.0, 10.0), 0.0);
        // Would overlap the first: after it, then too long for the hole
        // between 20 and 25, so after the second.
        assert_eq!(busy.earliest(5.0, 0.0, 6.0), 30.0);
        // Ends where the first begins: no overlap.
        assert_eq!(busy.earliest(5.0, 0.0, 5.0), 5.0);
        // Fits the hole.
        assert_eq!(busy.earliest(12.0, 0.0, 5.0), 20.0);
        // An offset: the request covers [t + 2, t + 5).
        assert_eq!(busy.earliest(7.0, 2.0, 3.0), 18.0);
        // Zero length: blocked strictly inside, not at the edges.
        assert_eq!(busy.earliest(10.0, 0.0, 0.0), 10.0);
        assert_eq!(busy.earliest(15.0, 0.0, 0.0), 20.0);
        assert_eq!(busy.earliest(20.0, 0.0, 0.0), 20.0);
        // Empty reservations are not kept; old ones are forgotten.
        busy.reserve(40.0, 40.0);
        assert_eq!(busy.len(), 2);
        busy.forget_before(20.0);
        assert_eq!(busy.len(), 1);
        assert_eq!(busy.earliest(0.0, 0.0, 100.0), 30.0);
    }

    #[test]
    fn out_of_order_reservations_keep_the_invariant() {
        let mut busy = Intervals::default();
        busy.reserve(10.0, 50.0);
        busy.reserve(20.0, 30.0);
        busy.reserve(0.0, 5.0);
        assert_eq!(busy.earliest(0.0, 0.0, 1.0), 5.0);
        assert_eq!(busy.earliest(6.0, 0.0, 1.0), 6.0);
        assert_eq!(busy.earliest(8.0, 0.0, 5.0), 50.0);
    }
}
