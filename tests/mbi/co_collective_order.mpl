// mbi: call-ordering
// ranks: 3
// expect: collective_mismatch
// what: rank 0 calls allreduce then bcast while the others call bcast then allreduce on the same communicator (MBI COLL CallOrdering, collectives in different order).
if rank == 0 {
    allreduce(bytes: 8)
    bcast(root: 0, bytes: 8)
} else {
    bcast(root: 0, bytes: 8)
    allreduce(bytes: 8)
}
