if rank == 0 {
    send(to: 1, tag: 3)
} else {
    recv(from: 0)
}
