// mbi: parameter-matching
// ranks: 2
// expect: collective_mismatch
// what: rank 0 reduces with max while rank 1 reduces with sum in the same allreduce (MBI COLL ParamMatching, MPI_Op mismatch).
let m = 0
if rank == 0 {
    m = allreduce(bytes: 8, value: rank, op: max)
} else {
    m = allreduce(bytes: 8, value: rank, op: sum)
}
