// mbi: correct
// ranks: 2
// expect: ok
// what: a sendrecv whose send and receive sizes differ but match the peer's (100 bytes one way, 200 the other) (MBI correct P2P sendrecv).
if rank == 0 {
    sendrecv(to: 1, from: 1, bytes: 100, recv_bytes: 200)
} else {
    sendrecv(to: 0, from: 0, bytes: 200, recv_bytes: 100)
}
