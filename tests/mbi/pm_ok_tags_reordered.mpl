// mbi: correct
// ranks: 2
// expect: ok
// what: rank 0 isends tag 1 then tag 2 and rank 1 receives tag 2 first; tags select the messages and the nonblocking sends make it safe without buffering (MBI correct P2P tags).
param bytes = 1000000
if rank == 0 {
    let a = isend(to: 1, bytes: bytes, tag: 1)
    let b = isend(to: 1, bytes: bytes, tag: 2)
    waitall(a, b)
} else {
    recv(from: 0, bytes: bytes, tag: 2)
    recv(from: 0, bytes: bytes, tag: 1)
}
