// functions, recursion, while, break/continue, short-circuit calls
param depth = 10
param limit = 100

kernel work(n) cost 1e-6 * n

fn fib(n) {
    if n < 2 { return n }
    return fib(n - 1) + fib(n - 2)
}

fn busy(k) {
    compute work(k)
    copy(bytes: 8 * k)
    // no `return e`: returns null
}

fn positive(x) {
    return x > 0
}

let total = 0
let i = 0
while true {
    i += 1
    if i % 2 == 0 { continue }
    if i > limit || total > 1000 { break }
    total = total + fib(min(i, depth))
    busy(i)
}
let t = wtime()
if rank > 0 && positive(rank - 1) {
    print("rank", rank, "waited", wtime() - t)
}
for j in limit .. 0 step -10 {
    let j = j / 2
    print(j)
}
return
