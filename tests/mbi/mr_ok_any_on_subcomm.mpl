// mbi: correct
// ranks: 4
// expect: ok
// what: ranks are split into pairs and the wildcard receive is on the pair's communicator, where only one other rank exists, although all pairs send concurrently (MBI correct COM + ANY_SOURCE).
let pair = comm_split(color: rank / 2)
if rank_in(pair) == 0 {
    send(to: 1, bytes: 8, comm: pair)
} else {
    let s = recv(from: any, bytes: 8, comm: pair)
    if s.source != 0 { abort("wrong source") }
}
