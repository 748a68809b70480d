// The same program with a barrier between rank 0's wildcard receive and
// rank 1's send: now rank 1 sends only after rank 0 has received (the
// barrier orders them), its message is causally after the wildcard
// receive and can never be matched by it: no race, nothing to explore.
// snapshot: check --ranks 3 --format json
// snapshot explore: check --ranks 3 --explore --format json
kernel work(s) cost s
if rank == 0 {
    recv(from: any, bytes: 64)
    barrier()
    recv(from: 1, bytes: 64)
} else if rank == 1 {
    compute work(0.5)
    barrier()
    send(to: 0, bytes: 64)
} else {
    send(to: 0, bytes: 64)
    barrier()
}
