// mbi: request-lifecycle
// ranks: 2
// expect: leaked_request
// what: rank 0 tests its irecv only once, before the late message has arrived, and finishes with the request still active (MBI ReqLifecycle, MPI_Test not in a loop).
kernel work(s) cost s
if rank == 0 {
    let r = irecv(from: 1, bytes: 8)
    let done = test(r)
} else {
    compute work(0.001)
    send(to: 0, bytes: 8)
}
