param n = 100
bcast(root: 0)
let s = reduce(root: 1, comm: world)
