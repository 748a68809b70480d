// A race: rank 0 takes the first message from any rank, then one from
// rank 2. If rank 1's message comes first all is well; if rank 2's does,
// rank 0 waits for a second message from rank 2 that never comes.
if rank == 0 {
    let s = recv(from: any, bytes: 8)
    recv(from: 2, bytes: 8)
} else if rank <= 2 {
    send(to: 0, bytes: 8)
}

// snapshot: check --ranks 3 --format json
// snapshot explore: check --ranks 3 --explore --format json
