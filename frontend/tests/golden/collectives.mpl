// every collective, on the world and on communicators made by comm_split and comm_dup
param bytes = 1024
param active = 4      // "k active of N": the first `active` ranks form a group

// on the world (no comm: is the world; root: defaults to 0)
barrier()
bcast(bytes: bytes)
bcast(root: size - 1, bytes: bytes, comm: world)
reduce(root: 0, bytes: 8)
allreduce(bytes: 8)
gather(root: 0, bytes: bytes)
scatter(root: 0, bytes: bytes)
allgather(bytes: bytes)
alltoall(bytes: bytes)
scan(bytes: 8)
exscan(bytes: 8)

// the v-variants: one count per rank in an array, or this rank's own count
let counts = array(size, bytes)
counts[0] = 2 * bytes
gatherv(root: 0, bytes: counts[rank])
scatterv(root: 0, bytes: counts)
allgatherv(bytes: counts)
alltoallv(bytes: counts)
reduce_scatter(bytes: counts)

// a group of the first `active` ranks; the others get null
let color = 0
if rank >= active { color = -1 }
let group = comm_split(color: color)
if group != null {
    let me = rank_in(group)
    let n = size_in(group)
    barrier(comm: group)
    let t0 = wtime()
    allreduce(bytes: bytes, comm: group)
    if me == 0 { print("allreduce on", n, "ranks:", (wtime() - t0) * 1e6, "us") }
    // the same ranks in reverse order: the key sorts the new ranks
    let rev = comm_split(color: 0, key: n - me, comm: group)
    bcast(root: 0, bytes: bytes, comm: rev)
    let twin = comm_dup(rev)
    alltoallv(bytes: array(size_in(twin), 64), comm: twin)
    reduce(root: n - 1, bytes: bytes, comm: twin)
}
// collectives have a value (null) and are hoisted out of expressions, left to right
print("rank", rank, "of", size_in(comm_dup(world)), "in a half:", rank_in(comm_split(color: rank % 2, key: -rank)))
