let r = isend(to: 1, bytes: 8)
waitany()
let c = comm_dup(world, 2)
let x = rank_in()
let a = array(4)
let w = comm_split(color: 0, key: any)
issend(from: 1, bytes: 8)
recv(to: 0, bytes: 8)
let n = barrier
let rank_in = 3
fn gatherv(x) { return x }
let t = test(r, r)
let q = comm_dup(root: world)
alltoall(bytes: [8, 8], comm: world)
