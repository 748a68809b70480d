// The time steps sit in a function that main calls twice (a warm-up step,
// then the timed steps, as NPB LU's ssor), and the timed loop's body is
// itself a call: the loop in `steps` is skipped on its second call, while
// ranks are inside `step` when the decision is made.
kernel work(n) cost 1e-8 * n
fn step(n) {
    compute work(n)
    if rank > 0        { sendrecv(to: rank - 1, from: rank - 1, bytes: 8 * n) }
    if rank < size - 1 { sendrecv(to: rank + 1, from: rank + 1, bytes: 8 * n) }
    allreduce(bytes: 8)
}
fn steps(count, n) {
    let t0 = wtime()
    for it in 1 .. count + 1 {
        step(n)
    }
    return allreduce(bytes: 8, value: wtime() - t0, op: max)
}
steps(1, 1000)
let t = steps(300, 1000)
// A table filled element by element: a loop that is never a candidate.
let table = array(size, 0)
for j in 0 .. size {
    table[j] = j * j
}
if rank == 0 { print("time", t) }
