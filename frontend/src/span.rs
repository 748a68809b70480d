//! Byte offsets to 1-based line and column numbers.

use sim_core::ir::Span;

/// The start offset of every line of a source file.
#[derive(Debug, Clone)]
pub struct LineIndex {
    starts: Vec<usize>,
    /// Per line: is it pure ASCII (so that a column is a byte offset)?
    ascii: Vec<bool>,
    source_len: usize,
    /// The source, kept to count columns in characters rather than bytes.
    source: String,
}

impl LineIndex {
    pub fn new(source: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(
            source
                .bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        let ascii = starts
            .iter()
            .enumerate()
            .map(|(i, &start)| {
                let end = starts.get(i + 1).copied().unwrap_or(source.len());
                source
                    .as_bytes()
                    .get(start..end)
                    .is_some_and(<[u8]>::is_ascii)
            })
            .collect();
        LineIndex {
            starts,
            ascii,
            source_len: source.len(),
            source: source.to_string(),
        }
    }

    /// 1-based line and column (in characters) of byte offset `offset`.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.source_len);
        // `starts[0] == 0 <= offset`, so the partition point is at least 1.
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let line_start = self.starts[line - 1];
        let col = if self.ascii.get(line - 1).copied().unwrap_or(false) {
            offset - line_start
        } else {
            self.source
                .get(line_start..offset)
                .map_or(offset - line_start, |s| s.chars().count())
        };
        (line, col + 1)
    }
}

fn to_u32(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// A [`Span`] for the byte range `start..end`.
pub fn mk_span(index: &LineIndex, start: usize, end: usize) -> Span {
    let (line, col) = index.line_col(start);
    Span {
        start: to_u32(start),
        end: to_u32(end.max(start)),
        line: to_u32(line),
        col: to_u32(col),
    }
}

/// The smallest span covering `a` and `b` (line and column of the earlier).
pub fn join(a: Span, b: Span) -> Span {
    let (first, _) = if a.start <= b.start { (a, b) } else { (b, a) };
    Span {
        start: first.start,
        end: a.end.max(b.end),
        line: first.line,
        col: first.col,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column() {
        let index = LineIndex::new("ab\ncé d\n");
        assert_eq!(index.line_col(0), (1, 1));
        assert_eq!(index.line_col(2), (1, 3));
        assert_eq!(index.line_col(3), (2, 1));
        // `é` is two bytes but one column.
        assert_eq!(index.line_col(6), (2, 3));
        assert_eq!(index.line_col(100), (3, 1));
    }
}
