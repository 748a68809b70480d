// examples/npb/ft.mpl: NAS Parallel Benchmarks 3.3 (MPI), FT: the time
// integration of a 3-D diffusion equation with the FFT. A complex
// nx x ny x nz grid of random initial values is transformed forward once;
// then, for niter steps, it is multiplied by exp(-4 alpha pi^2 |k|^2 t)
// ("evolve"), transformed back, and a 1024-point checksum is reduced to
// rank 0. The 3-D FFT is three passes of 1-D FFTs, with the data
// redistributed by MPI_Alltoall between passes.
//
// Follows NPB3.3-MPI/FT/ft.f and FT/global.h (program ft, setup, fft,
// transpose_xy_z / transpose_x_yz / transpose2_*, transpose_x_z*,
// transpose_x_y*, evolve, checksum, compute_indexmap,
// compute_initial_conditions); class table from sys/setparams.c
// (write_ft_info):
//
//   class   nx    ny    nz   niter   legal rank counts (powers of two)
//     S     64    64    64     6       1 .. 4096
//     W    128   128    32     6       1 .. 1024
//     A    256   256   128     6       1 .. 16384
//     B    512   256   256    20       1 .. 65536
//     C    512   512   512    20       1 .. 262144
//
// Process grid (setup, no inputft.data, as in the reference runs):
//   np == 1        -> layout 0D, np1 = 1,  np2 = 1   (no transposes at all)
//   np <= nz       -> layout 1D, np1 = 1,  np2 = np  (slabs; one alltoall
//                     over commslice1 = all ranks per 3-D FFT, ft.f:1366)
//   otherwise      -> layout 2D, np1 = nz, np2 = np / nz (pencils; per 3-D
//                     FFT an alltoall over commslice2 (size np1, x<->y,
//                     ft.f:1666) and one over commslice1 (size np2, x<->z,
//                     ft.f:1526))
// me2 = me mod np2, me1 = me / np2; commslice1 = split(color me1, key me2),
// commslice2 = split(color me2, key me1) (ft.f:563-564), made at every count.
//
// Communication per rank, call for call: 5 broadcasts of 4-byte INTEGER /
// LOGICAL (np1, np2, layout_type, niter, timers_enabled), the two
// comm_splits, the alltoalls of the untimed warm-up fft(1), the barrier
// before the timer, the alltoalls of the timed fft(1) and of the niter
// fft(-1), and one MPI_Reduce of a double complex (16 B) to rank 0 per
// iteration (checksum). verify does no MPI; timers are off (no timer.flag),
// so print_timers' reductions do not happen and the time is rank 0's own
// (no time reduction), as in ft.f.
//
// Legality: setparams allows powers of two only. A power of two beyond
// nz * nz (np2 > nz in the 2D layout; ny >= nz and nx >= nz in every
// class) would give ranks empty pencils (nz/np2 = 0): ft.f runs on, moving
// zero-length alltoalls, and fails verification; the skeleton stops there
// instead (a choice of this skeleton, not a check of ft.f).
//
// Simplified: the data themselves (no FFT values, no checksum values);
// compute is charged per phase from operation counts (kernels below). The
// compiled-for count np_min is taken to be the run's size (so ntdivnp =
// ((nx*ny)/np)*nz), as a build of the reference runs has it. None of this
// changes which calls are made or their sizes.
//
// Compute: one counted "operation" is a floating-point operation or one
// complex element moved (FT's transposes are pure data movement); all
// phases use the one `op_time` (seconds per operation, calibrated later
// from a one-rank run). Every phase works on the rank's whole local array
// of ntdivnp = nx*ny*nz/np complex points (in every layout the local array
// of each stage has that many points).

param S = 0
param W = 1
param A = 2
param B = 3
param C = 4
param class = S                     // --param class=A selects class A
param nx = [64, 128, 256, 512, 512][class]
param ny = [64, 128, 256, 256, 512][class]
param nz = [64, 32, 128, 256, 512][class]
param niter = [6, 6, 6, 20, 20][class]    // niter_default
param dc = 16                       // bytes of a double complex (dc_type)
param op_time = 1.0e-9              // seconds per counted operation

// compute_indexmap: twiddle(k,i,j) = exp(ap * (kk^2 + jj^2 + ii^2)) for
// every local point: an add, a multiply and the exp, counted 3 ops/point.
kernel indexmap(points) cost op_time * 3 * points

// compute_initial_conditions: vranlc (common/randi8.f, the build's RNG)
// draws 2 numbers per complex point, each an integer multiply, a mask and
// a scaled conversion: 6 ops/point (the ipow46/randlc jumps per z-plane
// are negligible). fft_init (O(nx) sines and cosines) is left out.
kernel init_cond(points) cost op_time * 6 * points

// cffts1 / cffts2 / cffts3 (each through cfftz/fftz2, Swarztrauber's
// Stockham radix-2 FFT): points/n lines of length n, log2(n) stages of n/2
// butterflies of 10 flops (complex add, subtract, multiply) =
// 5 * log2(n) flops per point, plus the copy of each block into and out
// of the scratch array y: 2 moves per point.
kernel fft_pass(points, logn) cost op_time * points * (5 * logn + 2)

// transpose2_local, transpose_x_z_local, transpose_x_y_local: every local
// point moved once (1 op/point).
kernel transpose_local(points) cost op_time * points

// transpose2_finish, transpose_x_z_finish, transpose_x_y_finish: every
// point moved once more, out of the alltoall's receive buffer.
kernel transpose_finish(points) cost op_time * points

// evolve: u0 = u0 * twiddle (complex times real: 2 flops) and u1 = u0
// (1 move): 3 ops/point.
kernel evolve(points) cost op_time * 3 * points

// checksum: 1024 probes j, each three mod / range tests and, on the owner,
// a complex add: about 8 ops per probe on every rank, whatever the size.
kernel checksum() cost op_time * 8 * 1024

fn log2i(n) {
    // ilog2 of ft.f for a power of two
    let lg = 0
    let nn = 1
    while nn < n {
        nn = nn * 2
        lg += 1
    }
    return lg
}

// One 1-D FFT pass (cffts1/2/3) of length n over the local points.
fn pass(points, n) {
    compute fft_pass(points, log2i(n))
}

// fft(dir, x1, x2) of ft.f: layout 0 = 0D, 1 = 1D, 2 = 2D. `cnt1` is the
// element count of the 1D alltoall (ntdivnp/np); `xy_f`/`xz_f` (forward)
// and `xz_b`/`xy_b` (backward) those of the 2D ones.
fn fft(dir, layout, points, c1, c2, cnt1, xy_f, xz_f, xz_b, xy_b) {
    if dir == 1 {
        if layout == 0 {
            pass(points, nx)                        // cffts1
            pass(points, ny)                        // cffts2
            pass(points, nz)                        // cffts3
        } else if layout == 1 {
            pass(points, nx)                        // cffts1 (layout 1)
            pass(points, ny)                        // cffts2 (layout 2)
            // transpose_xy_z(2, 3)
            compute transpose_local(points)         // transpose2_local
            alltoall(bytes: dc * cnt1, comm: c1)    // transpose2_global, ft.f:1366
            compute transpose_finish(points)        // transpose2_finish
            pass(points, nz)                        // cffts1 (layout 3)
        } else {
            pass(points, nx)                        // cffts1 (layout 1)
            // transpose_x_y(1, 2)
            compute transpose_local(points)         // transpose_x_y_local
            alltoall(bytes: dc * xy_f, comm: c2)    // transpose_x_y_global, ft.f:1666
            compute transpose_finish(points)        // transpose_x_y_finish
            pass(points, ny)                        // cffts1 (layout 2)
            // transpose_x_z(2, 3)
            compute transpose_local(points)         // transpose_x_z_local
            alltoall(bytes: dc * xz_f, comm: c1)    // transpose_x_z_global, ft.f:1526
            compute transpose_finish(points)        // transpose_x_z_finish
            pass(points, nz)                        // cffts1 (layout 3)
        }
    } else {
        if layout == 0 {
            pass(points, nz)                        // cffts3
            pass(points, ny)                        // cffts2
            pass(points, nx)                        // cffts1
        } else if layout == 1 {
            pass(points, nz)                        // cffts1 (layout 3)
            // transpose_x_yz(3, 2)
            compute transpose_local(points)         // transpose2_local
            alltoall(bytes: dc * cnt1, comm: c1)    // transpose2_global, ft.f:1366
            compute transpose_finish(points)        // transpose2_finish
            pass(points, ny)                        // cffts2 (layout 2)
            pass(points, nx)                        // cffts1 (layout 1)
        } else {
            pass(points, nz)                        // cffts1 (layout 3)
            // transpose_x_z(3, 2)
            compute transpose_local(points)
            alltoall(bytes: dc * xz_b, comm: c1)    // transpose_x_z_global, ft.f:1526
            compute transpose_finish(points)
            pass(points, ny)                        // cffts1 (layout 2)
            // transpose_x_y(2, 1)
            compute transpose_local(points)
            alltoall(bytes: dc * xy_b, comm: c2)    // transpose_x_y_global, ft.f:1666
            compute transpose_finish(points)
            pass(points, nx)                        // cffts1 (layout 1)
        }
    }
}

// ---- the process-count rule (sys/setparams.c: a power of two) ----
let np = size
let p2 = 1
while p2 < np {
    p2 = p2 * 2
}
if p2 != np {
    abort("ft: the number of ranks must be a power of two (1, 2, 4, ...), got", np)
}

// ---- setup: the processor grid, as ft.f's setup without inputft.data ----
let np1 = 1
let np2 = 1
let layout = 0
if np == 1 {
    np1 = 1
    np2 = 1
    layout = 0
} else if np <= nz {
    np1 = 1
    np2 = np
    layout = 1
} else {
    np1 = nz
    np2 = np / nz
    layout = 2
}
if nz / np2 == 0 || ny / np2 == 0 || ny / np1 == 0 || nx / np1 == 0 {
    abort("ft: class", class, "grid", nx, "x", ny, "x", nz, "cannot be split over", np,
          "ranks (at most", nz * nz, "): ranks would get empty pencils")
}

bcast(bytes: 4, root: 0)            // np1            ft.f:495
bcast(bytes: 4, root: 0)            // np2            ft.f:496
bcast(bytes: 4, root: 0)            // layout_type    ft.f:497
bcast(bytes: 4, root: 0)            // niter          ft.f:499
bcast(bytes: 4, root: 0)            // timers_enabled ft.f:500

let me2 = rank % np2
let me1 = rank / np2
let commslice1 = comm_split(color: me1, key: me2)   // ft.f:563
let commslice2 = comm_split(color: me2, key: me1)   // ft.f:564

// dims(1..3, stage) of setup, each divided by np1 (2nd) and np2 (3rd).
let d = [[nx, ny, nz], [nx, ny, nz], [nx, ny, nz]]
if layout == 1 {
    d = [[nx, ny, nz], [nx, ny, nz], [nz, nx, ny]]
} else if layout == 2 {
    d = [[nx, ny, nz], [ny, nx, nz], [nz, nx, ny]]
}
for s in 0 .. 3 {
    d[s][1] = d[s][1] / np1
    d[s][2] = d[s][2] / np2
}
let ntdivnp = ((nx * ny) / np) * nz           // np_min = np
let points = d[0][0] * d[0][1] * d[0][2]      // = ntdivnp in every layout
// alltoall element counts
let cnt1 = ntdivnp / np                                 // transpose2_global
let xy_f = d[0][0] * d[0][1] * d[0][2] / np1            // transpose_x_y(1,2): dims(.,1)
let xz_f = d[1][0] * d[1][1] * d[1][2] / np2            // transpose_x_z(2,3): dims(.,2)
let xz_b = d[2][0] * d[2][1] * d[2][2] / np2            // transpose_x_z(3,2): dims(.,3)
let xy_b = d[1][0] * d[1][1] * d[1][2] / np1            // transpose_x_y(2,1): dims(.,2)

// ---- untimed warm-up: "run the entire problem once" (T_init) ----
compute indexmap(points)
compute init_cond(points)
fft(1, layout, points, commslice1, commslice2, cnt1, xy_f, xz_f, xz_b, xy_b)

// ---- timed run ----
barrier()                                     // ft.f:149
let t0 = wtime()                              // timer_start(T_total)
compute indexmap(points)
compute init_cond(points)
fft(1, layout, points, commslice1, commslice2, cnt1, xy_f, xz_f, xz_b, xy_b)
for iter in 1 .. niter + 1 {
    compute evolve(points)
    fft(-1, layout, points, commslice1, commslice2, cnt1, xy_f, xz_f, xz_b, xy_b)
    compute checksum()
    reduce(bytes: dc, elem: dc, root: 0)                // checksum's MPI_Reduce, ft.f:1753
}
// verify: no communication
let t = wtime() - t0                          // timer_stop(T_total), timer_read
if rank == 0 {
    print("Time in seconds =", t)
}
