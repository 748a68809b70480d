// mbi: call-ordering
// ranks: 4
// expect: deadlock
// what: only the even ranks call comm_split on world, which is collective over all of world, so the callers wait forever (MBI COM CallOrdering, communicator constructor not called by all).
if rank % 2 == 0 {
    let c = comm_split(color: 0)
    barrier(comm: c)
}
