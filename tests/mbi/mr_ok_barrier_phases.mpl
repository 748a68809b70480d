// mbi: correct
// ranks: 3
// expect: ok
// what: each wildcard receive has one possible sender because barriers separate the phases: rank 2 sends before the first barrier, rank 1 only after the second (MBI correct MessageRace, barrier-ordered wildcards).
if rank == 0 {
    recv(from: any, bytes: 8)
    barrier()
    barrier()
    recv(from: any, bytes: 8)
} else if rank == 1 {
    barrier()
    barrier()
    send(to: 0, bytes: 8)
} else {
    send(to: 0, bytes: 8)
    barrier()
    barrier()
}
