// mbi: correct
// ranks: 3
// expect: ok
// what: rank 0 receives two equal messages from any source; the match order is nondeterministic but every order completes with the same result (MBI correct ANY_SOURCE code).
if rank == 0 {
    recv(from: any, bytes: 8)
    recv(from: any, bytes: 8)
} else {
    send(to: 0, bytes: 8)
}
