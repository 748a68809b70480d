// an IMB-style Allreduce table over a ladder of sizes, on `active` of the ranks
param active = 4
param sizes = [0, 1024, 65536, 1048576]

let color = 0
if rank >= active { color = -1 }
let comm = comm_split(color: color)
if comm != null {
    for i in 0 .. len(sizes) {
        let reps = max(1, min(1000, 41943040 / max(1, sizes[i])))
        barrier(comm: comm)
        let t0 = wtime()
        for r in 0 .. reps { allreduce(bytes: sizes[i], comm: comm) }
        let t = (wtime() - t0) / reps * 1e6
        if rank_in(comm) == 0 { print(sizes[i], reps, t) }
    }
}
