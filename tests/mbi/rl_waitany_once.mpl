// mbi: request-lifecycle
// ranks: 3
// expect: leaked_request
// what: rank 0 posts two irecvs but calls waitany only once, so the other request is never completed (MBI ReqLifecycle, missing completion after MPI_Waitany).
if rank == 0 {
    let a = irecv(from: 1, bytes: 8)
    let b = irecv(from: 2, bytes: 8)
    let i = waitany(a, b)
} else {
    send(to: 0, bytes: 8)
}
