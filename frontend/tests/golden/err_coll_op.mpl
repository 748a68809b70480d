// op: is for the reductions that carry a value
let t = 1.0
bcast(bytes: 8, value: t, op: max)
reduce_scatter(bytes: 8, op: sum)
