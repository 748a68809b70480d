//! Communicators: groups of world ranks with their own matching contexts.
//!
//! Communicator 0 is the world and is never materialised (rank i is world
//! rank i), so a million-rank world costs nothing. Others are created by
//! `comm_split`/`comm_dup` in deterministic order. Matching contexts: user
//! point-to-point messages of communicator `c` use context `2c`, the
//! messages of its collectives `2c + 1`, so the two never match each other.

use crate::coll::NodeLayout;
use crate::value::CommView;

#[derive(Debug, Clone)]
pub(crate) struct Comm {
    /// World ranks in communicator order; empty for the world.
    members: Vec<u32>,
    /// (world rank, comm rank), sorted by world rank; empty for the world.
    index: Vec<(u32, u32)>,
    size: u32,
    /// Per comm rank: how many collectives it has entered on this comm
    /// (empty until the first collective: a program without any pays
    /// nothing per rank; [`Comm::next_collective`]).
    coll_seq: Vec<u64>,
    /// Which members share a node, computed the first time a node-aware
    /// collective library needs it (placement does not change in a run).
    pub(crate) layout: Option<NodeLayout>,
}

#[derive(Debug, Clone)]
pub(crate) struct Comms {
    comms: Vec<Comm>,
}

impl Comms {
    pub(crate) fn new(world_size: u32) -> Comms {
        Comms {
            comms: vec![Comm {
                members: Vec::new(),
                index: Vec::new(),
                size: world_size,
                coll_seq: Vec::new(),
                layout: None,
            }],
        }
    }

    /// A new communicator of `members` (world ranks, in comm order).
    pub(crate) fn create(&mut self, members: Vec<u32>) -> u32 {
        let mut index: Vec<(u32, u32)> = members
            .iter()
            .enumerate()
            .map(|(i, &w)| (w, i as u32))
            .collect();
        index.sort_unstable();
        let size = members.len() as u32;
        self.comms.push(Comm {
            members,
            index,
            size,
            coll_seq: Vec::new(),
            layout: None,
        });
        (self.comms.len() - 1) as u32
    }

    pub(crate) fn get(&self, comm: u32) -> Option<&Comm> {
        self.comms.get(comm as usize)
    }

    pub(crate) fn get_mut(&mut self, comm: u32) -> Option<&mut Comm> {
        self.comms.get_mut(comm as usize)
    }
}

impl Comm {
    pub(crate) fn size(&self) -> u32 {
        self.size
    }

    /// The sequence number of comm rank `me`'s next collective on this
    /// communicator (0, 1, 2, ...), counted.
    pub(crate) fn next_collective(&mut self, me: u32) -> u64 {
        if self.coll_seq.is_empty() {
            self.coll_seq = vec![0; self.size as usize];
        }
        match self.coll_seq.get_mut(me as usize) {
            Some(n) => {
                *n += 1;
                *n - 1
            }
            // A rank outside the communicator: callers pass `me < size`.
            None => 0,
        }
    }

    /// The world rank of comm rank `r` (`r < size`).
    pub(crate) fn world(&self, r: u32) -> u32 {
        if self.members.is_empty() {
            r
        } else {
            self.members[r as usize]
        }
    }

    /// The comm rank of world rank `w`, if it is a member.
    pub(crate) fn rank_of(&self, w: u32) -> Option<u32> {
        if self.members.is_empty() {
            return (w < self.size).then_some(w);
        }
        self.index
            .binary_search_by_key(&w, |&(world, _)| world)
            .ok()
            .map(|i| self.index[i].1)
    }
}

impl CommView for Comms {
    fn rank_in(&self, comm: u32, world_rank: u32) -> Option<u32> {
        self.get(comm)?.rank_of(world_rank)
    }

    fn size_of(&self, comm: u32) -> Option<u32> {
        self.get(comm).map(Comm::size)
    }
}

/// The matching context of user messages on `comm`.
pub(crate) fn p2p_context(comm: u32) -> u32 {
    comm * 2
}

/// The matching context of collective messages on `comm`.
pub(crate) fn coll_context(comm: u32) -> u32 {
    comm * 2 + 1
}
