// mbi: message-race
// ranks: 3
// expect: collective_mismatch
// what: rank 0 chooses its next collective from the source of a wildcard receive; if the late sender wins the race it calls bcast while the others call barrier (MBI MessageRace leading to a collective mismatch).
kernel work(s) cost s
if rank == 0 {
    let s = recv(from: any, bytes: 8)
    recv(from: any, bytes: 8)
    if s.source == 2 {
        bcast(root: 0, bytes: 8)
    } else {
        barrier()
    }
} else if rank == 1 {
    send(to: 0, bytes: 8)
    barrier()
} else {
    compute work(0.001)
    send(to: 0, bytes: 8)
    barrier()
}
