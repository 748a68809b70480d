// mbi: correct
// ranks: 2
// expect: ok
// what: a tag-wildcard receive from a single sender is deterministic, because messages from one rank do not overtake: it always takes tag 1, then tag 2 remains (MBI correct MessageRace, ANY_TAG from one source).
if rank == 0 {
    send(to: 1, bytes: 8, tag: 1)
    send(to: 1, bytes: 8, tag: 2)
} else {
    let s = recv(from: 0, bytes: 8, tag: any)
    if s.tag != 1 { abort("overtaken") }
    recv(from: 0, bytes: 8, tag: 2)
}
