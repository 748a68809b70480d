// mbi: correct
// ranks: 4
// expect: ok
// what: after a split by parity the even group broadcasts while the odd group allreduces; collectives on disjoint communicators need not match each other (MBI correct COM+COLL).
let c = comm_split(color: rank % 2)
if rank % 2 == 0 {
    bcast(root: 0, bytes: 256, comm: c)
    barrier(comm: c)
} else {
    allreduce(bytes: 8, comm: c)
}
barrier()
