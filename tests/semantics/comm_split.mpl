// comm_split orders each colour's ranks by key, then rank: evens {0, 2, 4}
// by key -rank are 4, 2, 0 (local ranks 0, 1, 2); odds 5, 3, 1. Statuses
// give the source's rank in the communicator: ranks 2 and 3 (local 1)
// print "from 0 3". A negative colour gives null.
// Each rank prints its local rank and size 3 (0: 2 3, 1: 2 3, 2: 1 3,
// 3: 1 3, 4: 0 3, 5: 0 3), and true.
// snapshot: run --ranks 6
let c = comm_split(color: rank % 2, key: -rank)
print(rank_in(c), size_in(c))
// In each half, the last rank (local 0) sends to local 1.
if rank_in(c) == 0 {
    send(to: 1, bytes: 8, tag: 3, comm: c)
} else if rank_in(c) == 1 {
    let s = recv(from: any, bytes: 8, tag: any, comm: c)
    print("from", s.source, s.tag)
}
let none = comm_split(color: -1, key: 0)
print(none == null)
