// collectives that carry values: value: on every collective that takes one, op: on the reductions
param reps = 100
param bytes = 1024
param tol = 1e-6

kernel relax(n) cost 1e-9 * n

// the result goes straight into the variable (let, assignment) or a temporary
let x = rank + 1
let b = bcast(root: 0, bytes: 8, value: x)                 // the root's value
let s = reduce(root: size - 1, bytes: 8, value: x)         // op: sum is the default
let p = allreduce(bytes: 8, value: x, op: prod)
let all = allgather(bytes: 8, value: [rank, x])            // one element per rank
let mine = scatter(root: 0, bytes: 8, value: all)          // element `rank` of the root's array
let g = gather(bytes: 8, value: mine, comm: world)
let t = alltoall(bytes: 8, value: array(size, rank))       // element `rank` of every rank's array
let before = exscan(bytes: 8, value: x, op: max)           // null at rank 0
let upto = scan(bytes: 8, value: x, op: min)
let ok = allreduce(bytes: 1, value: x > 0, op: land)
let any_odd = allreduce(bytes: 1, value: x % 2 == 1, op: lor)
b = bcast(bytes: 8, value: b, root: 1)
print(b, s, p, all, mine, g, t, before, upto, ok, any_odd)

// in expressions: hoisted left to right, like every communication
let mean = allreduce(bytes: 8, value: x, op: sum) / size
print("spread", allreduce(bytes: 8, value: x, op: max) - allreduce(bytes: 8, value: x, op: min), mean)
// a value that communicates is evaluated first
let chained = allreduce(bytes: 8, value: bcast(bytes: 8, value: rank), op: max)
// without value: a collective returns null, as before
let nothing = allreduce(bytes: bytes)
// op: is a name, not an expression: `max` and `min` here are not the builtins
let m = max(allreduce(bytes: 8, value: 1.5, op: max), 0)

// IMB-style timing: every rank measures, rank 0 prints t_min, t_max, t_avg
barrier()
let t0 = wtime()
for r in 0 .. reps { allreduce(bytes: bytes) }
let tr = (wtime() - t0) / reps * 1e6
let tmin = allreduce(bytes: 8, value: tr, op: min)
let tmax = allreduce(bytes: 8, value: tr, op: max)
let tavg = allreduce(bytes: 8, value: tr, op: sum) / size
if rank == 0 { print(bytes, reps, tmin, tmax, tavg) }

// a convergence test: iterate until the global residual is small
let res = 1.0
let it = 0
while allreduce(bytes: 8, value: res, op: max) > tol {
    compute relax(bytes)
    res = res / (2 + rank)
    it += 1
}
print("converged after", it, "iterations", m, chained, nothing)
