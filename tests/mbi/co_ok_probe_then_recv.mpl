// mbi: correct
// ranks: 3
// expect: ok
// what: rank 0 probes any source and tag, then receives exactly the probed message (source, tag and size from the status), so any arrival order works (MBI correct PROB).
if rank == 0 {
    for i in 0 .. 2 {
        let s = probe(from: any, tag: any)
        recv(from: s.source, tag: s.tag, bytes: s.bytes)
    }
} else {
    send(to: 0, bytes: 100 * rank, tag: rank)
}
