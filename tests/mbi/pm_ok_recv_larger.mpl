// mbi: correct
// ranks: 2
// expect: ok
// what: the receive buffer is larger than the message, which MPI allows; the status tells the real size (MBI correct P2P count).
if rank == 0 {
    send(to: 1, bytes: 100)
} else {
    let s = recv(from: 0, bytes: 4096)
    if s.bytes != 100 { abort("wrong size", s.bytes) }
}
