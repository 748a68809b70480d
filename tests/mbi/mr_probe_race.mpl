// mbi: message-race
// ranks: 3
// expect: error
// what: rank 0 probes any source but then receives from rank 1 with the probed size; if rank 2's 8-byte message is probed, rank 1's 1024 bytes are truncated (MBI PROB MessageRace).
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
