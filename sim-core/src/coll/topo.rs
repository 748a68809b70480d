//! Tree topologies of the two libraries, as parent and children of one rank
//! (actual ranks, children in the order the library serves them).

use super::util::Ctx;

/// One rank's place in a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Tree {
    /// `None` at the root.
    pub parent: Option<u64>,
    pub children: Vec<u64>,
}

/// MPICH's binomial tree (`MPIR_Bcast_intra_binomial`,
/// `MPIR_Scatter_intra_binomial`): the parent of relative rank `r` is `r`
/// with its lowest set bit cleared; children `r + mask` for the masks below
/// that bit, largest subtree first.
pub(super) fn mpich_binomial(c: &Ctx) -> Tree {
    let (p, rel) = (c.size, c.rel());
    let mut parent = None;
    let mut mask = 1u64;
    while mask < p {
        if rel & mask != 0 {
            parent = Some(c.abs(rel - mask));
            break;
        }
        mask <<= 1;
    }
    let mut children = Vec::new();
    mask >>= 1;
    while mask > 0 {
        if rel + mask < p {
            children.push(c.abs(rel + mask));
        }
        mask >>= 1;
    }
    Tree { parent, children }
}

/// Open MPI's in-order binomial tree (`ompi_coll_base_topo_build_in_order_bmtree`),
/// also the order in which MPICH's binomial reduce and gather receive: the
/// same tree as [`mpich_binomial`], children smallest subtree first.
pub(super) fn in_order_bmtree(c: &Ctx) -> Tree {
    let (p, rel) = (c.size, c.rel());
    let mut parent = None;
    let mut children = Vec::new();
    let mut mask = 1u64;
    while mask < p {
        let remote = rel ^ mask;
        if remote < rel {
            parent = Some(c.abs(remote));
            break;
        } else if remote < p {
            children.push(c.abs(remote));
        }
        mask <<= 1;
    }
    Tree { parent, children }
}

/// Open MPI's binomial tree (`ompi_coll_base_topo_build_bmtree`): the parent
/// of `r` is `r` with its highest set bit cleared; children `r | mask` for
/// the masks above that bit, in increasing order.
pub(super) fn ompi_bmtree(c: &Ctx) -> Tree {
    let (p, rel) = (c.size, c.rel());
    // opal_next_poweroftwo(rel): the smallest power of two > rel.
    let mut mask = 1u64;
    while mask <= rel {
        mask <<= 1;
    }
    let parent = if rel == 0 {
        None
    } else {
        Some(c.abs(rel ^ (mask >> 1)))
    };
    let mut children = Vec::new();
    while mask < p {
        let remote = rel ^ mask;
        if remote >= p {
            break;
        }
        children.push(c.abs(remote));
        mask <<= 1;
    }
    Tree { parent, children }
}

fn pown(fanout: u64, num: u64) -> u64 {
    fanout.saturating_pow(u32::try_from(num).unwrap_or(u32::MAX))
}

/// Open MPI's `ompi_coll_base_topo_build_tree(fanout)` (binary tree for
/// fanout 2): levels filled left to right, children of shifted rank `r` at
/// `r + delta * (i + 1)`.
pub(super) fn kary(c: &Ctx, fanout: u64) -> Tree {
    let (p, sr) = (c.size, c.rel());
    // calculate_level
    let mut level = 0u64;
    let mut num = 0u64;
    while num <= sr {
        num = num.saturating_add(pown(fanout, level));
        level += 1;
    }
    let level = level - 1;
    let delta = pown(fanout, level);
    let mut children = Vec::new();
    for i in 0..fanout {
        let child = sr + delta * (i + 1);
        if child < p {
            children.push(c.abs(child));
        } else {
            break;
        }
    }
    let parent = if sr == 0 {
        None
    } else if sr < fanout {
        Some(c.abs(0))
    } else {
        // calculate_num_nodes_up_to_level
        let slimit = if fanout == 1 {
            level
        } else {
            (pown(fanout, level) - 1) / (fanout - 1)
        };
        let mut sparent = sr;
        while sparent >= slimit {
            sparent -= delta / fanout;
        }
        Some(c.abs(sparent))
    };
    Tree { parent, children }
}

/// Open MPI's `ompi_coll_base_topo_build_chain(fanout)`: the root feeds
/// `fanout` chains of (nearly) equal length; fanout 1 is the pipeline.
pub(super) fn chain(c: &Ctx, fanout: u64) -> Tree {
    let (p, sr) = (c.size, c.rel());
    let mut fanout = fanout.max(1);
    if p - 1 < fanout {
        fanout = p - 1;
    }
    if fanout <= 1 {
        let parent = (sr > 0).then(|| c.abs(sr - 1));
        let children = if sr + 1 < p {
            vec![c.abs(sr + 1)]
        } else {
            vec![]
        };
        return Tree { parent, children };
    }
    let mut maxchainlen = (p - 1) / fanout;
    let mark = if (p - 1) % fanout != 0 {
        maxchainlen += 1;
        (p - 1) % fanout
    } else {
        fanout + 1
    };
    if sr == 0 {
        let mut children = Vec::new();
        let mut next = 1u64;
        children.push(c.abs(next));
        for i in 1..fanout {
            next += maxchainlen;
            if i > mark {
                next -= 1;
            }
            children.push(c.abs(next % p));
        }
        return Tree {
            parent: None,
            children,
        };
    }
    let (head, len) = if sr - 1 < mark * maxchainlen {
        let column = (sr - 1) / maxchainlen;
        (1 + column * maxchainlen, maxchainlen)
    } else {
        let column = mark + (sr - 1 - mark * maxchainlen) / (maxchainlen - 1);
        (
            mark * maxchainlen + 1 + (column - mark) * (maxchainlen - 1),
            maxchainlen - 1,
        )
    };
    let parent = Some(if sr == head { c.abs(0) } else { c.abs(sr - 1) });
    let children = if sr == head + len - 1 || sr + 1 >= p {
        vec![]
    } else {
        vec![c.abs(sr + 1)]
    };
    Tree { parent, children }
}

/// Open MPI's `ompi_coll_base_topo_build_in_order_bintree`: rooted at rank
/// `size - 1` whatever the root of the call (the caller forwards the result).
pub(super) fn in_order_bintree(rank: u64, size: u64) -> Tree {
    let mut children = Vec::new();
    let mut parent_of_me = None;
    let mut myrank = rank as i64;
    let mut size = size as i64;
    let mut parent = size - 1;
    let mut delta = 0i64;
    loop {
        let rightsize = size >> 1;
        let mut lchild = -1;
        let mut rchild = -1;
        if size - 1 > 0 {
            lchild = parent - 1;
            if lchild > 0 {
                rchild = rightsize - 1;
            }
        }
        if myrank == parent {
            if lchild >= 0 {
                children.push((lchild + delta) as u64);
            }
            if rchild >= 0 {
                children.push((rchild + delta) as u64);
            }
            break;
        }
        if myrank > rchild {
            if myrank == lchild {
                parent_of_me = Some((parent + delta) as u64);
            }
            size = size - rightsize - 1;
            delta += rightsize;
            myrank -= rightsize;
            parent = size - 1;
        } else {
            if myrank == rchild {
                parent_of_me = Some((parent + delta) as u64);
            }
            size = rightsize;
            parent = rchild;
        }
    }
    Tree {
        parent: parent_of_me,
        children,
    }
}

/// Open MPI's `ompi_coll_base_topo_build_kmtree(radix)`.
pub(super) fn kmtree(c: &Ctx, radix: u64) -> Tree {
    let (p, v) = (c.size, c.rel());
    let mut parent = None;
    let mut mask = 1u64;
    while mask < p {
        if v % (radix * mask) != 0 {
            parent = Some(c.abs(v / (radix * mask) * (radix * mask)));
            break;
        }
        mask *= radix;
    }
    let mut children = Vec::new();
    mask /= radix;
    while mask > 0 {
        for r in 1..radix {
            let child = v + mask * r;
            if child < p {
                children.push(c.abs(child));
            }
        }
        mask /= radix;
    }
    Tree { parent, children }
}

/// The number of ranks in the subtree of relative rank `rel` of the
/// binomial trees of [`mpich_binomial`] / [`in_order_bmtree`]:
/// `min(lowbit(rel), size - rel)` (the root's is `size`).
pub(super) fn binomial_subtree(rel: u64, size: u64) -> u64 {
    if rel == 0 {
        return size;
    }
    let low = rel & rel.wrapping_neg();
    low.min(size - rel)
}
