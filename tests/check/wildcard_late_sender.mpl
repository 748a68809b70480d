// A race that timing hides (issue 16's example; ISP and DAMPI find it):
// rank 2's message reaches rank 0 long before rank 1 has even sent its
// own, so in the natural run the wildcard takes rank 2's and all is well.
// But rank 1's send is not causally after the wildcard receive: if rank 2
// is delayed (an OS hiccup, a slower node), the wildcard takes rank 1's
// message and `recv(from: 1)` waits forever. The vector clocks make rank
// 1's later send an alternative, and --explore replays the run with it.
// snapshot: check --ranks 3 --format json
// snapshot explore: check --ranks 3 --explore --format json
kernel work(s) cost s
if rank == 0 {
    recv(from: any, bytes: 64)
    recv(from: 1, bytes: 64)
} else if rank == 1 {
    compute work(0.5)
    send(to: 0, bytes: 64)
} else {
    send(to: 0, bytes: 64)
}
