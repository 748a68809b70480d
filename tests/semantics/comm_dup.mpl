// Communicators isolate messages: a message on a duplicate of the world is
// not received by a world receive. Rank 1 prints: 16 8
// snapshot: run --ranks 2
let d = comm_dup(world)
if rank == 0 {
    send(to: 1, bytes: 8, tag: 1, comm: d)
    send(to: 1, bytes: 16, tag: 1)
} else if rank == 1 {
    let a = recv(from: 0, bytes: 100, tag: 1)
    let b = recv(from: 0, bytes: 100, tag: 1, comm: d)
    print(a.bytes, b.bytes)
}
