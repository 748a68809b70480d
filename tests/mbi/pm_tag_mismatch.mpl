// mbi: parameter-matching
// ranks: 2
// expect: deadlock
// what: in a loop the receiver expects tag i+1 where the sender used tag i, so the first receive never matches (MBI P2P ParamMatching, tag mismatch).
for i in 0 .. 3 {
    if rank == 0 {
        send(to: 1, bytes: 8, tag: i)
    } else {
        recv(from: 0, bytes: 8, tag: i + 1)
    }
}
