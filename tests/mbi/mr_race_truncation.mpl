// mbi: message-race
// ranks: 3
// expect: error
// what: rank 0 expects the small message first from any source; if the large one from rank 2 wins the race it is truncated (MBI MessageRace with a size-dependent outcome).
kernel work(s) cost s
if rank == 0 {
    recv(from: any, bytes: 8)
    recv(from: any, bytes: 1024)
} else if rank == 1 {
    send(to: 0, bytes: 8)
} else {
    compute work(0.001)
    send(to: 0, bytes: 1024)
}
