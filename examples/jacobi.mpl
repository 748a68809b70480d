// examples/jacobi.mpl: the ParJava "Jacobi" benchmark (V. A. Padaryan, "Estimating parallel
// program run time with the ParJava interpreter", sec. 4.1, paragraph "Программа «Якоби»",
// figs. 12-14).
//
// What the paper says about the program (all of it):
//   - it solves the Laplace equation by Jacobi iteration;
//   - a sequential outer loop contains the parallel loops that compute the elements of the
//     local submatrix for the current iteration; after those loops the processes exchange
//     their shadow (halo) boundaries;
//   - 1000 iterations on a 7300 x 7300 matrix ("80% memory load on the ISP RAS cluster").
// 7300 x 7300 doubles = 426.3 MB per matrix; the old and new matrices of a Jacobi sweep
// together are 852.6 MB = 79.4% of a node's 1 GB (2^30 bytes): so 7300 is the *global*
// size (fixed for every process count, strong scaling), chosen so that the whole problem
// fits one ISP RAS node.
//
// Assumptions (the paper does not state them; change them here if better data appears):
//   - 1-D decomposition into strips of whole rows (as in the heat program of the same
//     paper); the n - 2 interior rows are spread as evenly as integer division allows,
//     the outermost rows and columns are the fixed Dirichlet boundary;
//   - each iteration every rank sends its first owned row up and its last owned row down:
//     one row of n doubles = 8 * n bytes (58,400 bytes for n = 7300) per neighbour and
//     direction; written as two sendrecv shifts (up, then down), the usual MPI idiom,
//     deadlock-free without buffering; boundary ranks do the one-sided half of each shift;
//   - fixed iteration count, no convergence test (the paper ran exactly 1000 iterations).
//     `check_every` > 0 adds a residual allreduce of one double every that many
//     iterations, written as point-to-point messages (there are no collectives yet).
//
// Block costs: the paper publishes NO block timings for Jacobi (its Tables 2 and 3 are for
// Net only). The costs below are borrowed from the Net blocks measured on the same
// machine with the same JVM (Table 2: ISP RAS cluster, AMD Athlon 1533 MHz, SUN JDK
// 1.4.2_03), column means converted from milliseconds to seconds:
//   relax:    one Jacobi update u'[i][j] = (N + S + E + W) / 4 reads 4 cross-stencil points;
//             Net's V6 (one cross-stencil point, 4.56E-05 ms) x 4 = 1.824e-7 s per element;
//   copyback: u = u' element copy, Net's V5 (matrix-to-matrix element copy, 1.28E-05 ms)
//             = 1.28e-8 s per element.
// Replace them by calibrated times for serious predictions.

param n = 7300              // global matrix is n x n doubles (boundary included)
param iters = 1000          // outer sequential loop
param check_every = 0       // 0: no convergence test (as in the paper)

kernel relax(rows, cols) cost 4 * 4.56e-8 * rows * cols
kernel copyback(rows, cols) cost 1.28e-8 * rows * cols

// rows of the interior owned by this rank
let interior = n - 2
let rows = interior / size
if rank < interior % size { rows = rows + 1 }
let cols = n - 2
let rowbytes = 8 * n        // one halo row, boundary columns included

let t0 = wtime()
for it in 0 .. iters {
    // the parallel loops of one iteration
    compute relax(rows, cols)
    compute copyback(rows, cols)

    // shift up: send my first row to rank - 1, receive rank + 1's first row (tag 1)
    if rank > 0 && rank < size - 1 {
        sendrecv(to: rank - 1, from: rank + 1, bytes: rowbytes, tag: 1)
    } else if rank > 0 {
        send(to: rank - 1, bytes: rowbytes, tag: 1)
    } else if rank < size - 1 {
        recv(from: rank + 1, bytes: rowbytes, tag: 1)
    }
    // shift down: send my last row to rank + 1, receive rank - 1's last row (tag 2)
    if rank > 0 && rank < size - 1 {
        sendrecv(to: rank + 1, from: rank - 1, bytes: rowbytes, tag: 2)
    } else if rank < size - 1 {
        send(to: rank + 1, bytes: rowbytes, tag: 2)
    } else if rank > 0 {
        recv(from: rank - 1, bytes: rowbytes, tag: 2)
    }

    // optional residual allreduce (MPI_Allreduce of one double, MPI_MAX), written as a
    // linear reduce to rank 0 followed by a linear broadcast
    if check_every > 0 && (it + 1) % check_every == 0 {
        if rank == 0 {
            for src in 1 .. size { recv(from: src, bytes: 8, tag: 3) }
            for dst in 1 .. size { send(to: dst, bytes: 8, tag: 4) }
        } else {
            send(to: 0, bytes: 8, tag: 3)
            recv(from: 0, bytes: 8, tag: 4)
        }
    }
}
if rank == 0 { print("jacobi seconds", wtime() - t0) }
