// A probe of any sender chooses a message as a wildcard receive would: in
// the natural run rank 1's 1024 bytes arrive first and the program is
// correct, but rank 2's send is not causally after the probe, so under
// other timing the probe returns its 8 bytes, and the receive from rank 1
// sized by it truncates (MBI's PROB MessageRace pattern).
// snapshot: check --ranks 3 --format json
// snapshot explore: check --ranks 3 --explore --format json
kernel work(s) cost s
if rank == 0 {
    let s = probe(from: any)
    recv(from: 1, bytes: s.bytes)
    recv(from: 2, bytes: 8)
} else if rank == 1 {
    send(to: 0, bytes: 1024)
} else {
    compute work(0.001)
    send(to: 0, bytes: 8)
}
