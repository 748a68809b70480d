// Messages cross the loop's iterations: each rank's isend of iteration i
// is received by its neighbour in iteration i + 1.
param iters = 200
kernel work() cost 1e-4
let right = (rank + 1) % size
let left = (rank - 1 + size) % size
let s = isend(to: right, bytes: 1024)
for it in 0 .. iters {
    compute work()
    recv(from: left, bytes: 1024)
    wait(s)
    s = isend(to: right, bytes: 1024)
}
recv(from: left, bytes: 1024)
wait(s)
