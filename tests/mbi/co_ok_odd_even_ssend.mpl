// mbi: correct
// ranks: 4
// expect: ok
// what: a ring shift with synchronous sends ordered by parity (even ranks send first, odd ranks receive first), deadlock-free for an even number of ranks (MBI correct CallOrdering).
let right = (rank + 1) % size
let left = (rank + size - 1) % size
if rank % 2 == 0 {
    ssend(to: right, bytes: 64)
    recv(from: left, bytes: 64)
} else {
    recv(from: left, bytes: 64)
    ssend(to: right, bytes: 64)
}
