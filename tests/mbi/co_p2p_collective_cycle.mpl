// mbi: call-ordering
// ranks: 2
// expect: deadlock
// what: rank 0 receives before the barrier while rank 1 sends only after it, a cycle through a collective (MBI CallOrdering, mixed P2P and collective).
if rank == 0 {
    recv(from: 1, bytes: 8)
    barrier()
} else {
    barrier()
    send(to: 0, bytes: 8)
}
