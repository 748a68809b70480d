// mbi: request-lifecycle
// ranks: 2
// expect: leaked_request
// what: rank 0 starts an isend and finishes without waiting for or testing it (MBI ReqLifecycle, missing wait on MPI_Isend).
kernel work(s) cost s
if rank == 0 {
    let r = isend(to: 1, bytes: 8)
    compute work(0.001)
} else {
    recv(from: 0, bytes: 8)
}
