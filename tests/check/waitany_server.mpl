// A correct server: rank 0 answers whichever worker wrote first.
param jobs = 3
if rank == 0 {
    for j in 0 .. jobs * (size - 1) {
        let s = recv(from: any, bytes: 64, tag: any)
        send(to: s.source, bytes: 64, tag: s.tag)
    }
} else {
    for j in 0 .. jobs {
        let r = irecv(from: 0, bytes: 64, tag: j)
        let w = isend(to: 0, bytes: 64, tag: j)
        let i = waitany(r, w)
        let k = waitany(r, w)
    }
}

// snapshot: check --ranks 4 --format json
// snapshot explore-one-job: check --ranks 3 --param jobs=1 --explore=64 --format json
// snapshot explore-over-budget: check --ranks 4 --explore=8 --format json
