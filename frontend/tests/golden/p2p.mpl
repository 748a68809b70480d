// send modes, waitany, test, probe and iprobe, comm: on point-to-point operations
param bytes = 65536

let half = comm_split(color: rank / 2)     // pairs of ranks
let peer = 1 - rank_in(half)
if size_in(half) == 2 {
    // synchronous and buffered sends, blocking and not
    if peer == 1 {
        ssend(to: peer, bytes: bytes, comm: half)
        bsend(to: peer, bytes: bytes, tag: 1, comm: half)
        let a = issend(to: peer, bytes: 8, tag: 2, comm: half)
        let b = ibsend(to: peer, bytes: 8, tag: 3, comm: half)
        // waitany returns the index of the completed request and sets it to null
        let first = waitany(a, b)
        let second = waitany(a, b)
        print("completed", first, "then", second, "then", waitany(a, b))
    } else {
        // probe: the status of the next message without receiving it
        let s = probe(from: any, tag: any, comm: half)
        recv(from: s.source, bytes: s.bytes, tag: s.tag, comm: half)
        recv(from: peer, bytes: bytes, tag: 1, comm: half)
        let r2 = irecv(from: peer, bytes: 8, tag: 2, comm: half)
        let r3 = irecv(from: peer, bytes: 8, tag: 3, comm: half)
        // test: true (and the variable becomes null) once complete
        let polls = 0
        while !test(r2) { polls += 1; compute poll() }
        waitall(r3)
        print("polled", polls, "times")
    }
    sendrecv(to: peer, from: peer, bytes: 8, comm: half)
}

kernel poll() cost 1e-7

// iprobe: a status or null, right away
send(to: (rank + 1) % size, bytes: 16, tag: 9)
let seen = iprobe(from: (rank + size - 1) % size, tag: 9)
while seen == null { compute poll(); seen = iprobe(from: any, tag: 9) }
print("message of", seen.bytes, "bytes from", recv(from: seen.source, bytes: 16, tag: 9).source)
