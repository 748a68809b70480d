//! Where the ranks of a communicator run: which of them share a node.
//!
//! Node-aware algorithms (MPICH 4's CH4 compositions; Open MPI 5's `han`,
//! which also uses [`NodeLayout::balanced`] and [`NodeLayout::peers_at`])
//! split a communicator the way MPICH's `MPIR_Comm_create_subcomms`
//! (`src/mpi/comm/commutil.c`) does: `node_comm`, the ranks of one node in communicator order (local
//! rank 0 is the node's lowest communicator rank), and `node_roots_comm`,
//! the local rank 0 of every node, ordered by communicator rank.
//!
//! Invariants (established by [`NodeLayout::new`], relied on by the
//! accessors): `node.len() == local.len() == members.len()` is the
//! communicator size; node indices are dense, numbered in order of first
//! appearance (so node `k`'s leader is `leaders[k]` and leaders ascend);
//! `members[offsets[k]..offsets[k + 1]]` are node `k`'s ranks, ascending;
//! `offsets.len() == leaders.len() + 1`.

use std::collections::HashMap;

/// The node structure of one communicator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeLayout {
    /// Per communicator rank: its node's index.
    node: Vec<u32>,
    /// Per communicator rank: its rank on its node (`node_comm` rank).
    local: Vec<u32>,
    /// Node `k`'s ranks are `members[offsets[k]..offsets[k + 1]]`.
    offsets: Vec<u32>,
    members: Vec<u32>,
    /// Per node: its lowest communicator rank (`node_roots_comm` order).
    leaders: Vec<u32>,
}

impl NodeLayout {
    /// The layout of a communicator whose rank `r` runs on node
    /// `nodes[r]` (any numbering: equal numbers share a node).
    pub fn new(nodes: &[u32]) -> NodeLayout {
        let mut index: HashMap<u32, u32> = HashMap::new();
        let mut node = Vec::with_capacity(nodes.len());
        let mut counts: Vec<u32> = Vec::new();
        let mut local = Vec::with_capacity(nodes.len());
        let mut leaders = Vec::new();
        for (r, &n) in nodes.iter().enumerate() {
            let next = counts.len() as u32;
            let k = *index.entry(n).or_insert(next);
            if k == next {
                counts.push(0);
                leaders.push(r as u32);
            }
            node.push(k);
            local.push(counts[k as usize]);
            counts[k as usize] += 1;
        }
        let mut offsets = Vec::with_capacity(counts.len() + 1);
        let mut at = 0u32;
        offsets.push(0);
        for c in &counts {
            at += c;
            offsets.push(at);
        }
        let mut members = vec![0u32; nodes.len()];
        for (r, (&k, &l)) in node.iter().zip(&local).enumerate() {
            members[(offsets[k as usize] + l) as usize] = r as u32;
        }
        NodeLayout {
            node,
            local,
            offsets,
            members,
            leaders,
        }
    }

    /// Every rank on a node of its own.
    pub fn flat(size: u32) -> NodeLayout {
        let nodes: Vec<u32> = (0..size).collect();
        NodeLayout::new(&nodes)
    }

    /// The communicator's size.
    pub fn size(&self) -> u32 {
        self.node.len() as u32
    }

    /// How many nodes the communicator spans.
    pub fn nodes(&self) -> u32 {
        self.leaders.len() as u32
    }

    /// The node index of communicator rank `r` (`r < size`).
    pub fn node_of(&self, r: u32) -> u32 {
        self.node[r as usize]
    }

    /// Rank `r`'s rank among the ranks of its node.
    pub fn local_rank(&self, r: u32) -> u32 {
        self.local[r as usize]
    }

    /// The ranks of node `k`, ascending (`node_comm` order).
    pub fn members(&self, k: u32) -> &[u32] {
        let (a, b) = (self.offsets[k as usize], self.offsets[k as usize + 1]);
        &self.members[a as usize..b as usize]
    }

    /// The lowest rank of each node, in node order (`node_roots_comm`).
    pub fn leaders(&self) -> &[u32] {
        &self.leaders
    }

    /// Whether all ranks share one node.
    pub fn one_node(&self) -> bool {
        self.leaders.len() <= 1
    }

    /// Whether every node holds one rank.
    pub fn one_per_node(&self) -> bool {
        self.leaders.len() == self.node.len()
    }

    /// The largest number of ranks on one node (MPICH's `node_comm_size`
    /// where the nodes hold equal numbers).
    pub fn max_per_node(&self) -> u32 {
        self.offsets
            .windows(2)
            .map(|w| w[1] - w[0])
            .max()
            .unwrap_or(0)
    }

    /// Whether every node holds the same number of ranks (Open MPI's `han`
    /// checks this, `coll_han_topo.c` lines 119-126 at v5.0.9).
    pub fn balanced(&self) -> bool {
        let mut sizes = self.offsets.windows(2).map(|w| w[1] - w[0]);
        let first = sizes.next();
        sizes.all(|k| Some(k) == first)
    }

    /// The ranks whose rank on their node is `local`, ascending: Open MPI
    /// `han`'s inter-node communicator of those ranks (`comm_split` with the
    /// node rank as colour and the rank as key, `coll_han_subcomms.c` line
    /// 306 at v5.0.9). Nodes with fewer ranks have no member in it.
    pub fn peers_at(&self, local: u32) -> Vec<u32> {
        (0..self.size())
            .filter(|&r| self.local[r as usize] == local)
            .collect()
    }

    /// Whether each node's ranks are consecutive in the communicator
    /// (MPICH's `is_node_consecutive`).
    pub fn consecutive(&self) -> bool {
        (0..self.nodes()).all(|k| {
            let m = self.members(k);
            m.windows(2).all(|w| w[1] == w[0] + 1)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_and_cyclic_placements_split_as_mpich_does() {
        // Block: 6 ranks, 3 per node.
        let l = NodeLayout::new(&[7, 7, 7, 9, 9, 9]);
        assert_eq!(l.nodes(), 2);
        assert_eq!(l.leaders(), &[0, 3]);
        assert_eq!(l.members(1), &[3, 4, 5]);
        assert_eq!(l.local_rank(4), 1);
        assert!(l.consecutive());
        assert_eq!(l.max_per_node(), 3);
        // Cyclic over 2 nodes.
        let c = NodeLayout::new(&[0, 1, 0, 1, 0]);
        assert_eq!(c.leaders(), &[0, 1]);
        assert_eq!(c.members(0), &[0, 2, 4]);
        assert_eq!(c.members(1), &[1, 3]);
        assert_eq!(c.local_rank(3), 1);
        assert!(!c.consecutive());
        assert!(!c.one_node() && !c.one_per_node());
        assert!(NodeLayout::flat(4).one_per_node());
        assert!(NodeLayout::new(&[3, 3]).one_node());
        // Open MPI han's view: balanced nodes, the k-th ranks of each node.
        assert!(c.peers_at(1) == vec![2, 3] && !c.balanced());
        assert!(l.balanced() && l.peers_at(2) == vec![2, 5]);
        assert_eq!(NodeLayout::new(&[0, 1, 1, 0]).peers_at(0), vec![0, 1]);
    }
}
