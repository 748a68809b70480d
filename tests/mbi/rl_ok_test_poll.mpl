// mbi: correct
// ranks: 2
// expect: ok
// what: rank 0 polls its irecv with test in a loop, computing meanwhile, until the request completes (MBI correct ReqLifecycle with MPI_Test).
kernel work(s) cost s
if rank == 0 {
    let r = irecv(from: 1, bytes: 8)
    while !test(r) { compute work(0.0001) }
} else {
    compute work(0.001)
    send(to: 0, bytes: 8)
}
