// mbi: buffering-hazard
// ranks: 2
// expect: buffering_hazard
// what: rank 0 sends tag 1 then tag 2 with blocking sends while rank 1 receives tag 2 first; the first send must be buffered (MBI BufferingHazard, out-of-order tags with blocking sends).
if rank == 0 {
    send(to: 1, bytes: 64, tag: 1)
    send(to: 1, bytes: 64, tag: 2)
} else {
    recv(from: 0, bytes: 64, tag: 2)
    recv(from: 0, bytes: 64, tag: 1)
}
