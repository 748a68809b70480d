//! The live view's picture of the ranks (`parsim run --monitor`) without
//! the terminal: one cell per rank, or per group of consecutive ranks
//! showing the state most of them are in when there are more ranks than
//! cells, laid out in rows. The binary draws it and handles the keys.

use sim_core::engine::RankState;

/// The states in the order of the legend and the counts; a cell whose
/// ranks are evenly split shows the first.
pub const STATES: [RankState; 4] = [
    RankState::Computing,
    RankState::Communicating,
    RankState::Waiting,
    RankState::Finished,
];

/// Ranks placed in cells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grid {
    /// Ranks per cell.
    pub group: usize,
    /// The rows of cells, top down, each cell the most common state of its
    /// ranks.
    pub rows: Vec<Vec<RankState>>,
    /// Ranks in each of [`STATES`].
    pub counts: [usize; 4],
}

impl Grid {
    /// `states` (one per rank, in rank order) in at most `cols` x `rows`
    /// cells: rows of at least `cols.min(64)` cells, so that a few ranks
    /// are not stretched into a column.
    pub fn new(states: &[RankState], cols: usize, rows: usize) -> Grid {
        let cols = cols.max(1);
        let max_rows = rows.max(1);
        let n = states.len().max(1);
        let group = n.div_ceil(cols * max_rows).max(1);
        let per_row = n
            .div_ceil(group)
            .div_ceil(max_rows)
            .max(cols.min(64))
            .min(cols);
        let cells: Vec<RankState> = states.chunks(group).map(most_common).collect();
        let mut counts = [0usize; 4];
        for s in states {
            if let Some(i) = STATES.iter().position(|state| state == s) {
                counts[i] += 1;
            }
        }
        Grid {
            group,
            rows: cells
                .chunks(per_row)
                .take(max_rows)
                .map(<[RankState]>::to_vec)
                .collect(),
            counts,
        }
    }

    /// The ranks in state `s`.
    pub fn count(&self, s: RankState) -> usize {
        STATES
            .iter()
            .position(|state| *state == s)
            .map_or(0, |i| self.counts[i])
    }
}

/// The state most ranks of a cell are in (the first in [`STATES`] on a
/// tie).
fn most_common(cell: &[RankState]) -> RankState {
    STATES
        .iter()
        .map(|s| (*s, cell.iter().filter(|c| *c == s).count()))
        .fold((RankState::Finished, 0), |best, (s, k)| {
            if k > best.1 { (s, k) } else { best }
        })
        .0
}

#[cfg(test)]
mod tests {
    use sim_core::engine::RankState::{Communicating, Computing, Finished, Waiting};

    use super::{Grid, most_common};

    #[test]
    fn a_cell_shows_the_most_common_state() {
        assert_eq!(most_common(&[Waiting, Computing, Waiting]), Waiting);
        assert_eq!(most_common(&[Finished]), Finished);
        assert_eq!(most_common(&[Communicating, Computing]), Computing);
    }

    #[test]
    fn ranks_fit_the_cells() {
        // 10 ranks in 4 x 2 cells: two ranks a cell, five cells in rows of 4.
        let states = [
            Computing, Computing, Waiting, Waiting, Finished, Finished, Computing, Waiting,
            Finished, Finished,
        ];
        let g = Grid::new(&states, 4, 2);
        assert_eq!(g.group, 2);
        assert_eq!(
            g.rows,
            [
                vec![Computing, Waiting, Finished, Computing],
                vec![Finished]
            ]
        );
        assert_eq!(g.counts, [3, 0, 3, 4]);
        assert_eq!(g.count(Finished), 4);
        // Few ranks on a wide screen: one row, a cell each.
        let g = Grid::new(&states[..3], 80, 20);
        assert_eq!((g.group, g.rows.len()), (1, 1));
    }
}
