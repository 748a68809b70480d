// mbi: message-race
// ranks: 3
// expect: deadlock
// what: rank 0 posts irecv(any) then irecv(from 1); if rank 1's message arrives first the wildcard takes it and the second receive never matches (MBI MessageRace, ANY_SOURCE irecv).
kernel work(s) cost s
if rank == 0 {
    let a = irecv(from: any, bytes: 8)
    let b = irecv(from: 1, bytes: 8)
    waitall(a, b)
} else if rank == 1 {
    compute work(0.001)
    send(to: 0, bytes: 8)
} else {
    send(to: 0, bytes: 8)
}
