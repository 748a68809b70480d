// The loop hands its counter to a function, whose branches fast-forward
// does not follow: the loop is never skipped.
kernel work() cost 1e-5
kernel extra() cost 1e-4
fn step(i) {
    if i >= 150 { compute extra() }
    compute work()
    allreduce(bytes: 8)
}
for it in 0 .. 300 {
    step(it)
}
