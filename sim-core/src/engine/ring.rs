//! [`Ring`]: the matching queues' deque, 16 bytes instead of `VecDeque`'s 32.

use std::ops::Index;

use thin_vec::ThinVec;

/// A FIFO of `u32` ids that also removes from the middle (the first match
/// in a queue), as `VecDeque<u32>` does, in 16 bytes instead of 32: a
/// [`ThinVec`] kept full (its length is the ring's capacity, stored on the
/// heap beside the items, so the record holds one pointer), the head's
/// index and the length, the last two as `u32`. Every rank has two
/// (posted receives, unexpected envelopes), in the LP record, mostly empty
/// or a handful long (W2: at most 4), so their headers are what they cost;
/// an empty one allocates nothing.
///
/// Ranges: a queue holds distinct request or message ids (each is in at
/// most one queue at a time), which are `u32`, so `len <= u32::MAX`; the
/// capacity starts at 4 and doubles only when full, so it is at most
/// `2^32` and `head < capacity` fits in a `u32` too.
#[derive(Debug, Clone, Default)]
pub(super) struct Ring {
    buf: ThinVec<u32>,
    /// Index in `buf` of the first item (0 while `buf` is empty).
    head: u32,
    len: u32,
}

impl Ring {
    pub(super) fn len(&self) -> usize {
        self.len as usize
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The index in `buf` of item `i < capacity`.
    #[inline]
    fn phys(&self, i: usize) -> usize {
        let j = self.head as usize + i;
        if j >= self.buf.len() {
            j - self.buf.len()
        } else {
            j
        }
    }

    /// The items in order: the part from the head to the end of the buffer,
    /// then the part that wrapped around.
    pub(super) fn as_slices(&self) -> (&[u32], &[u32]) {
        let (head, len) = (self.head as usize, self.len as usize);
        if head + len <= self.buf.len() {
            (&self.buf[head..head + len], &[])
        } else {
            let wrapped = head + len - self.buf.len();
            (&self.buf[head..], &self.buf[..wrapped])
        }
    }

    pub(super) fn iter(
        &self,
    ) -> std::iter::Chain<std::slice::Iter<'_, u32>, std::slice::Iter<'_, u32>> {
        let (a, b) = self.as_slices();
        a.iter().chain(b)
    }

    pub(super) fn push_back(&mut self, x: u32) {
        if self.len() == self.buf.len() {
            self.grow();
        }
        let at = self.phys(self.len());
        self.buf[at] = x;
        self.len += 1;
    }

    /// Removes item `pos` (`None` past the end), moving the shorter side
    /// of the queue by one, as `VecDeque::remove` does.
    pub(super) fn remove(&mut self, pos: usize) -> Option<u32> {
        let len = self.len();
        if pos >= len {
            return None;
        }
        let x = self.buf[self.phys(pos)];
        if pos < len / 2 {
            // Shift the items before `pos` one place towards the back.
            for i in (0..pos).rev() {
                let (from, to) = (self.phys(i), self.phys(i + 1));
                self.buf[to] = self.buf[from];
            }
            self.head = self.phys(1) as u32;
        } else {
            // Shift the items after `pos` one place towards the front.
            for i in pos..len - 1 {
                let (from, to) = (self.phys(i + 1), self.phys(i));
                self.buf[to] = self.buf[from];
            }
        }
        self.len -= 1;
        if self.len == 0 {
            self.head = 0;
        }
        Some(x)
    }

    #[cold]
    fn grow(&mut self) {
        let cap = (self.buf.len() * 2).max(4);
        let mut buf = ThinVec::with_capacity(cap);
        buf.extend(self.iter().copied());
        buf.resize(cap, 0);
        self.buf = buf;
        self.head = 0;
    }
}

impl Index<usize> for Ring {
    type Output = u32;

    /// Item `i` (panics past the end, as `VecDeque` does).
    fn index(&self, i: usize) -> &u32 {
        assert!(i < self.len(), "index {i} of a queue of {}", self.len);
        &self.buf[self.phys(i)]
    }
}

impl<'a> IntoIterator for &'a Ring {
    type Item = &'a u32;
    type IntoIter = std::iter::Chain<std::slice::Iter<'a, u32>, std::slice::Iter<'a, u32>>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    #[test]
    fn is_16_bytes() {
        assert_eq!(std::mem::size_of::<Ring>(), 16);
    }

    /// Random pushes and removals (mostly near the front, as matching
    /// does), checked against `VecDeque` after every step.
    #[test]
    fn behaves_as_vecdeque() {
        let mut ring = Ring::default();
        let mut model: VecDeque<u32> = VecDeque::new();
        let mut x: u64 = 7;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) as u32
        };
        for step in 0..100_000u32 {
            let r = next();
            if r % 5 < 3 || model.is_empty() {
                ring.push_back(step);
                model.push_back(step);
            } else {
                let pos = match r % 3 {
                    0 => 0,
                    1 => (next() as usize) % model.len(),
                    _ => model.len() + (next() as usize % 2),
                };
                assert_eq!(ring.remove(pos), model.remove(pos));
            }
            assert_eq!(ring.len(), model.len());
            assert!(ring.iter().eq(model.iter()));
            if let Some(i) = (!model.is_empty()).then(|| next() as usize % model.len()) {
                assert_eq!(ring[i], model[i]);
            }
        }
    }
}
