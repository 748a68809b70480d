// mbi: correct
// ranks: 2
// expect: ok
// what: a ping-pong whose send and receive orders mirror each other, safe even without buffering and with large messages (MBI correct P2P counterpart of recv-recv).
param bytes = 1000000
for i in 0 .. 3 {
    if rank == 0 {
        send(to: 1, bytes: bytes)
        recv(from: 1, bytes: bytes)
    } else {
        recv(from: 0, bytes: bytes)
        send(to: 0, bytes: bytes)
    }
}
