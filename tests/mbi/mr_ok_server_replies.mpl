// mbi: correct
// ranks: 4
// expect: ok
// what: a server receives requests from any worker and replies to the status's source, so whichever order the requests arrive in, each worker gets its reply (MBI correct ANY_SOURCE server).
if rank == 0 {
    for i in 0 .. 2 * (size - 1) {
        let s = recv(from: any, bytes: 16, tag: 1)
        send(to: s.source, bytes: 64, tag: 2)
    }
} else {
    for i in 0 .. 2 {
        send(to: 0, bytes: 16, tag: 1)
        recv(from: 0, bytes: 64, tag: 2)
    }
}
