// test is false until the message is there, then true (and the request
// null; testing null is true). Rank 0 prints: false true true true
// snapshot: run --ranks 2
kernel work(s) cost s
if rank == 0 {
    let r = irecv(from: 1, bytes: 8)
    let early = test(r)
    compute work(0.01)
    let late = test(r)
    print(early, late, r == null, test(r))
} else {
    compute work(0.005)
    send(to: 0, bytes: 8)
}
