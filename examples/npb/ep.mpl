// examples/npb/ep.mpl: NAS Parallel Benchmarks 3.3 (MPI), EP, the
// "embarrassingly parallel" kernel: each rank generates its share of
// 2^(m+1) uniform pseudo-random numbers in batches of 2^16 pairs, turns
// the pairs inside the unit circle into Gaussian deviates (Marsaglia's
// polar method) and tallies them in 10 square annuli; three allreduces
// combine the sums and the tallies at the end.
//
// Follows NPB3.3-MPI/EP/ep.f (main program; the class table is
// sys/setparams.c's write_ep_info: m = 24, 25, 28, 30, 32 for S, W, A, B,
// C). Communication per rank, call for call: the broadcast of the timer
// flag (a 4-byte LOGICAL), the barrier before the timer, the allreduces of
// sx, sy (8 B each) and q (nq = 10 doubles), and the MPI_MAX allreduce of
// the time; checked against a real run's counts in tests/npb.rs.
// Any number of ranks up to nn = 2^(m-16) batches works (one batch at
// least per rank, or ep.f stops with "Too many nodes").
//
// Compute: one counted operation is one pair of random numbers generated
// and tested (ep.f loops 120-140: vranlc of 2*nk numbers, then nk
// accept-reject tests, log and sqrt for the ~79% accepted); a rank with np
// batches does np * nk of them. `op_time` is the time of one, measured on
// the target (validation/npb/README.md).

param S = 0
param W = 1
param A = 2
param B = 3
param C = 4
param class = S                     // --param class=A selects class A
param m = [24, 25, 28, 30, 32][class]
param mk = 16                       // ep.f: batches of nk = 2^mk pairs
param nk = 65536                    // 2^mk
param nn = [256, 512, 4096, 16384, 65536][class]   // 2^(m - mk) batches in all
param nq = 10                       // annuli
param op_time = 1.0e-9              // seconds per pair (calibrated per machine)

// ep.f loop 150: np batches of nk pairs (vranlc, then the Gaussian pairs).
kernel pairs(count) cost op_time * count

let np = nn / size
if rank < nn % size {
    np += 1
}
if np == 0 {
    abort("ep: too many ranks:", size, "for", nn, "batches (class", class, ")")
}

bcast(bytes: 4, root: 0)            // timers_enabled (a LOGICAL)
barrier()                           // "Synchronize before placing time stamp"
let t0 = wtime()
compute pairs(np * nk)
allreduce(bytes: 8, elem: 8)                 // sx
allreduce(bytes: 8, elem: 8)                 // sy
allreduce(bytes: 8 * nq, elem: 8)            // q(0:nq-1)
let tm = wtime() - t0
let tmax = allreduce(bytes: 8, elem: 8, value: tm, op: max)
if rank == 0 {
    print("Time in seconds =", tmax)
}
