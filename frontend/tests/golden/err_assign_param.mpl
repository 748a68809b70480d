param iters = 1000
param n = 100
for it in 0 .. iters {
    n = n * 2
}
