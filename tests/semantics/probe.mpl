// probe sees a rendezvous message (source, tag, size) before it is
// received; iprobe returns null when nothing arrived.
// Rank 0 prints: true 1 4 1000000 1000000
// snapshot: run --ranks 2
if rank == 0 {
    let none = iprobe(from: any, tag: any)
    let st = probe(from: any, tag: any)
    let got = recv(from: st.source, bytes: st.bytes, tag: st.tag)
    print(none == null, st.source, st.tag, st.bytes, got.bytes)
} else if rank == 1 {
    send(to: 0, bytes: 1000000, tag: 4)
}
