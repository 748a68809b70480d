// mbi: correct
// ranks: 3
// expect: ok
// what: rank 1 sends to rank 0 only after rank 0 has received rank 2's message and told rank 1, so each wildcard receive can match only one sender (MBI correct MessageRace, causal chain).
if rank == 0 {
    let s = recv(from: any, bytes: 8)
    send(to: 1, bytes: 8)
    let t = recv(from: any, bytes: 8)
    if s.source != 2 || t.source != 1 { abort("unexpected order") }
} else if rank == 1 {
    recv(from: 0, bytes: 8)
    send(to: 0, bytes: 8)
} else {
    send(to: 0, bytes: 8)
}
