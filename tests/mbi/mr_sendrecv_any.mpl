// mbi: message-race
// ranks: 3
// expect: deadlock
// what: rank 0's sendrecv receives from any source and then rank 0 receives from rank 1; if rank 2 is slow the wildcard takes rank 1's reply and the last receive hangs (MBI MessageRace, ANY_SOURCE in sendrecv).
kernel work(s) cost s
if rank == 0 {
    sendrecv(to: 1, from: any, bytes: 8)
    recv(from: 1, bytes: 8)
} else if rank == 1 {
    recv(from: 0, bytes: 8)
    send(to: 0, bytes: 8)
} else {
    send(to: 0, bytes: 8)
}
