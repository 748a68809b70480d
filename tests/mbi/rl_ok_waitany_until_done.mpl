// mbi: correct
// ranks: 3
// expect: ok
// what: rank 0 calls waitany until it returns -1 (MPI_UNDEFINED), completing every request in whatever order the messages arrive (MBI correct ReqLifecycle with MPI_Waitany).
kernel work(s) cost s
if rank == 0 {
    let a = irecv(from: 1, bytes: 8)
    let b = irecv(from: 2, bytes: 8)
    while waitany(a, b) != -1 { compute work(0.00001) }
} else {
    compute work(0.001 * rank)
    send(to: 0, bytes: 8)
}
