// mbi: correct
// ranks: 2
// expect: ok
// what: a request is waited for twice; after the first wait it is MPI_REQUEST_NULL and the second wait returns at once, which MPI allows (MBI correct ReqLifecycle).
if rank == 0 {
    let r = isend(to: 1, bytes: 8)
    wait(r)
    wait(r)
} else {
    let r = irecv(from: 0, bytes: 8)
    wait(r)
    let s = wait(r)
}
