// The C translation's semantics (tests/emit_c.rs): every line this prints
// must be the same from `parsim run -n N` and from the MPI program that
// `parsim emit-c` writes, run with `mpirun -np N` (N = 2 or 3).
param n = 5
param half = n / 2
param scale = 0.5 * n
param sizes = [8, 64, 512]

kernel poll() cost 1.0e-6          // time passes while a rank polls

fn fib(k) {
    if k < 2 { return k }
    return fib(k - 1) + fib(k - 2)
}

fn fill(a, v) {                    // arrays are values: the caller's copy stays
    for i in 0 .. len(a) { a[i] = v + i }
    return a
}

fn nothing() { }

// ---- values and expressions --------------------------------------------------
print("ints", 7 / 2, -7 / 2, -7 % 2, 7 % -2, 2 * 3 - 4, n, half, -9223372036854775807 - 1)
print("floats", 7 / 2.0, 1 / 3.0, 2.0 / 3, 1e-9, 1.5e20, 123456.789, -0.0, 0.1 + 0.2, 1e-7, 3.0, scale)
print("more floats", 1.0 / 7, 100.0 / 7, 1e15 / 7, 1e-5 / 7, 2.0 * 1e300, -1.0 / 3, 7.5 % 2, 2.0 / 0, -1.0 / 0, 0.0 / 0)
print("compare", 1 < 2, 2 <= 1.5, 3 == 3.0, 1 != 1, true == true, null == null, [1, 2] == [1, 2], [1] == [1.0], 1 == true)
print("logic", true && false, 1 || 0, !0, !2.5, 0 && (1 / 0 > 0), 1 || [1][5])
print("builtins", min(3, 1, 2), max(1, 2.5), min(4, 4.0), abs(-3), abs(-2.5), floor(-2.5), ceil(2.1), sqrt(16), log2(8), floor(7))
print("arrays", [1, [2, 3]], len(sizes), sum(sizes), sum([1, 2.5]), sum([]), array(3, 0), sizes[1], [])
let a = array(4, 0)
let b = a
b[1] = 5
let g = array(2, [0, 0])
g[1][0] = 7
let h = g
h[0][1] += 2.5
print("values", a, b, g, h, fill(a, 10), a)
print("fib", fib(15), nothing(), rank < size)
let s = 0
for i in 0 .. 10 step 3 { s += i }
let f = 0.0
for x in 0.0 .. 1.0 step 0.25 { f += x }
let w = 0
while w * w < 50 {
    w += 1
    if w == 5 { continue }
    if w > 100 { break }
}
for i in 10 .. 0 step -4 { s = s * 2 + i }
print("loops", s, f, w)

// ---- point-to-point ------------------------------------------------------------
let right = (rank + 1) % size
let left = (rank + size - 1) % size
let st = sendrecv(to: right, from: left, bytes: 100 + rank, recv_bytes: 200, tag: 30)
print("sendrecv", st.source, st.tag, st.bytes, st)

if rank == 0 {
    send(to: 1, bytes: 10, tag: 1)
    ssend(to: 1, bytes: 20, tag: 2)
    bsend(to: 1, bytes: 100000, tag: 3)
    let r = isend(to: 1, bytes: 30, tag: 4)
    let q = issend(to: 1, bytes: 40, tag: 5)
    let z = ibsend(to: 1, bytes: 50, tag: 6)
    print("isend waits", wait(r), wait(q), wait(z), r)
    waitall()
} else if rank == 1 {
    let s1 = recv(from: 0, bytes: 10, tag: 1)
    let s2 = recv(from: any, bytes: 64, tag: 2)
    let p = probe(from: 0, tag: any)
    let s3 = recv(from: p.source, tag: p.tag, bytes: p.bytes)
    print("recvs", s1, s2, p, s3)
    let r1 = irecv(from: 0, bytes: 30, tag: 4)
    let r2 = irecv(from: 0, bytes: 40, tag: any)
    let r3 = irecv(from: any, bytes: 50, tag: 6)
    waitall(r1, r2)
    print("after waitall", r1, r2, wait(r3))
}

// waitany: only tag 12 is on its way until rank 0 says go
if rank == 0 {
    let x = irecv(from: 1, bytes: 8, tag: 11)
    let y = irecv(from: 1, bytes: 8, tag: 12)
    let i = waitany(x, y)
    send(to: 1, bytes: 1, tag: 13)
    let j = waitany(x, y)
    print("waitany", i, j, waitany(x, y), x, y)
} else if rank == 1 {
    send(to: 0, bytes: 8, tag: 12)
    recv(from: 0, bytes: 1, tag: 13)
    send(to: 0, bytes: 8, tag: 11)
}

// test and iprobe: polling, with time passing
if rank == 0 {
    let t = irecv(from: 1, bytes: 8, tag: 21)
    let early = test(t)
    send(to: 1, bytes: 1, tag: 22)
    while !test(t) { compute poll() }
    let none = iprobe(from: 1, tag: 99)
    let m = iprobe(from: 1, tag: 31)
    while m == null {
        compute poll()
        m = iprobe(from: 1, tag: 31)
    }
    let got = recv(from: 1, bytes: 24, tag: 31)
    print("test", early, t, test(t), none, m, got.bytes)
} else if rank == 1 {
    recv(from: 0, bytes: 1, tag: 22)
    send(to: 0, bytes: 8, tag: 21)
    send(to: 0, bytes: 24, tag: 31)
}

// ---- communicators ---------------------------------------------------------------
let sub = comm_split(color: rank % 2, key: -rank)
print("split", rank_in(sub), size_in(sub), rank_in(world), size_in(world), sub == null)
let dup = comm_dup(sub)
let peer = size_in(sub) - 1 - rank_in(sub)
let across = sendrecv(to: peer, from: peer, bytes: 8 + rank, recv_bytes: 64, tag: 40, comm: dup)
print("dup", allreduce(bytes: 8, value: rank, comm: dup), dup == sub, sub == sub, across.source, across.bytes)
let nobody = comm_split(color: -1)
print("nobody", nobody == null, nobody)
let pairs = comm_split(color: rank / 2)
if rank_in(pairs) == 0 { bcast(bytes: 64, root: 0, comm: pairs) } else { bcast(bytes: 64, root: 0, comm: pairs) }
print("pairs", rank_in(pairs), size_in(pairs), allgather(bytes: 8, value: rank, comm: pairs))

// ---- collectives that carry values --------------------------------------------------
let v = rank + 1
let mixed = rank
if rank > 0 { mixed = rank * 1.5 }
let sv = array(size, 0)
for i in 0 .. size { sv[i] = i * 10 + rank }
print("bcast", bcast(bytes: 8, value: v * 10, root: size - 1), bcast(bytes: 100, value: [1, 2][rank % 2] + 0.5))
print("reduce", reduce(bytes: 8, value: v, op: prod), reduce(bytes: 8, value: v, op: sum, root: 1))
print("allreduce", allreduce(bytes: 8, value: v), allreduce(bytes: 8, value: v * 0.5, op: max), allreduce(bytes: 8, value: -v, op: min), allreduce(bytes: 100, value: mixed), allreduce(bytes: 8, value: mixed, op: max))
print("logical", allreduce(bytes: 8, value: rank == 0, op: land), allreduce(bytes: 8, value: rank == 0, op: lor), allreduce(bytes: 8, value: rank + 1, op: land))
print("scans", scan(bytes: 8, value: v), exscan(bytes: 8, value: v), scan(bytes: 8, value: v, op: max), exscan(bytes: 8, value: mixed))
print("gathers", gather(bytes: 8, value: v * 1.5, root: 1), allgather(bytes: 8, value: rank > 0), allgather(bytes: 40, value: null))
print("scatters", scatter(bytes: 8, value: sv, root: 0), alltoall(bytes: 8, value: sv), alltoall(bytes: 20, value: sv))
let long = array(5 + rank, [rank, 1.5])           // longer than a block: sent in two steps
print("long values", bcast(bytes: 8, value: long, root: size - 1), allgather(bytes: 16, value: long), gather(bytes: 32, value: [rank, long], root: 0))
let lv = array(size, 0)
for i in 0 .. size { lv[i] = array(i + rank, rank) }
print("long scatter", scatter(bytes: 8, value: lv, root: 1), alltoall(bytes: 8, value: lv), alltoall(bytes: 400, value: lv))
print("status values", allgather(bytes: 8, value: st), bcast(bytes: 64, value: [st, null, true], root: 0))

// ---- every collective, data only ---------------------------------------------------------
barrier()
bcast(bytes: 1000, root: 1)
reduce(bytes: 24, root: size - 1)
reduce(bytes: 13)
allreduce(bytes: 4096)
allreduce(bytes: 0)
scan(bytes: 16)
exscan(bytes: 9)
gather(bytes: 100, root: 1)
allgather(bytes: 10)
scatter(bytes: 50, root: 0)
alltoall(bytes: 33)
let counts = array(size, 0)
for i in 0 .. size { counts[i] = 8 * (i + 1) }
gatherv(bytes: counts[rank] + rank, root: 0)
gatherv(bytes: counts, root: 1)
scatterv(bytes: counts, root: 0)
allgatherv(bytes: counts)
allgatherv(bytes: 16)
let sc = array(size, 0)
for i in 0 .. size { sc[i] = rank + i }
alltoallv(bytes: sc)
alltoallv(bytes: 12)
reduce_scatter(bytes: counts)
reduce_scatter(bytes: 3)
copy(bytes: 100000)
print("collectives done", wtime() > 0)
