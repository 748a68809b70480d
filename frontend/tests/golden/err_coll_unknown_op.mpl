let t = 1.0
let tmax = allreduce(bytes: 8, value: t, op: maximum)
scan(bytes: 8, value: t, op: MPI_LOR)
exscan(bytes: 8, value: t > 0, op: and)
reduce(bytes: 8, value: t, op: "min")
allreduce(bytes: 8, value: t, op: t + 1)
allreduce(bytes: 8, value: t, op: avg)
