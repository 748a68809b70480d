// Issue 15's cliff: a communicator split and a barrier on it. Under MPICH's
// rules the split's allgather of (color, key) pairs (8 B per rank) runs as
// recursive doubling, Bruck or a ring depending on the total size.
let c = comm_split(color: 0, key: rank)
barrier(comm: c)
