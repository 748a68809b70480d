// examples/heat.mpl: 2-D heat equation, strips of rows per rank, halo exchange each step
param n = 3000        // each rank owns an n x n block of doubles
param iters = 1000

kernel stencil(rows, cols) cost 4.0e-9 * rows * cols   // seconds; calibration can replace it

for it in 0 .. iters {
    compute stencil(n, n)
    if rank > 0        { sendrecv(to: rank - 1, from: rank - 1, bytes: 8 * n) }
    if rank < size - 1 { sendrecv(to: rank + 1, from: rank + 1, bytes: 8 * n) }
}
