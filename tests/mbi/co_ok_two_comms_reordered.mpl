// mbi: correct
// ranks: 2
// expect: ok
// what: rank 0 sends on a duplicate of world and then on world with isend, rank 1 receives them in the opposite order; nonblocking sends make the crossing safe (MBI correct COM, messages in separate communicators).
param bytes = 1000000
let d = comm_dup(world)
if rank == 0 {
    let a = isend(to: 1, bytes: bytes, comm: d)
    let b = isend(to: 1, bytes: bytes)
    waitall(a, b)
} else {
    recv(from: 0, bytes: bytes)
    recv(from: 0, bytes: bytes, comm: d)
}
