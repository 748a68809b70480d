// nonblocking exchange with a manager answering whichever worker wrote
param bytes = 4096
param workers = 3

if rank == 0 {
    for k in 0 .. size - 1 {
        let s = recv(from: any, bytes: bytes, tag: any)
        print("from", s.source, "tag", s.tag, "bytes", s.bytes)
        send(to: s.source, bytes: 8, tag: s.tag + 1)
    }
} else {
    let r1 = isend(to: 0, bytes: bytes, tag: rank)
    let r2 = irecv(from: 0, bytes: 8, tag: rank + 1)
    let st = wait(r2)
    waitall(r1, r2)
    // a ring of the workers 1 .. size
    let left = (rank - 2 + size - 1) % (size - 1) + 1
    let right = rank % (size - 1) + 1
    let a = irecv(from: left, bytes: bytes)
    let b = isend(to: right, bytes: bytes)
    print("ring message from", left, "tag", wait(a).tag)
    waitall()
    let s2 = sendrecv(to: right, from: left, bytes: 16, tag: 5, recv_bytes: 32, recv_tag: any)
    print("got", s2.bytes, "from", s2.source)
}
