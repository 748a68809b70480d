// examples/npb/bt.mpl: NAS Parallel Benchmarks 3.3 (MPI), BT, the block
// tridiagonal solver: niter ADI time steps of the 3-D compressible
// Navier-Stokes equations on an n^3 grid; each step computes the right-hand
// side (compute_rhs, after copy_faces has exchanged the two-deep ghost faces
// of u) and then solves 5x5 block-tridiagonal systems along x, y and z lines
// (x_solve, y_solve, z_solve), and adds the update (add).
//
// Follows NPB3.3-MPI/BT (the default build: no subtype, iotype = 0):
// bt.f (6 broadcasts of the inputs, the untimed warm-up adi, the timed loop
// between a barrier and timer_stop, verify, the MPI_MAX reduce of the time,
// the final MPI_COMM_WORLD barrier), setup_mpi.f (comm_split into
// comm_setup, two comm_dups: comm_solve, comm_rhs), make_set.f (the
// multipartition: the rank's ncells = sqrt(P) cells, their coordinates, the
// predecessor / successor ranks in each direction, cell sizes and the "Cell
// size too small" abort), define.f (compute_buffer_size: the face sizes of
// copy_faces), copy_faces.f (6 irecv + 6 isend on comm_rhs, waitall; no MPI
// with one rank), adi.f, x_solve.f / y_solve.f / z_solve.f (the stage loops:
// forward elimination cell by cell, receiving C' and rhs' from the
// predecessor and sending them to the successor; back substitution in
// reverse, receiving U from the successor and sending to the predecessor;
// isend / irecv on comm_solve with the source's tags, e.g. WEST+jp+kp*ncells,
// and the buffer of MAX_CELL_DIM^2 * 30 or * 5 doubles whatever the cell
// size), verify.f and error.f (error_norm, copy_faces, rhs_norm: two
// allreduces of 5 doubles), header.h (tags, MAX_CELL_DIM =
// problem_size/maxcells + 1), sys/setparams.c (class table; the process
// count must be a square; class S at most 16 ranks).
//
// Process count: a square P = p^2 (setparams.c isqrt; the build is compiled
// for maxcells = p). make_set.f aborts if a cell has 2 or fewer points in a
// direction: n / p >= 3, so the largest P is (n/3)^2: S 16, W 64, A 441,
// B 1156, C 2916.
//
// Simplified (none of it changes the communication): nothing is computed,
// only charged; pack / unpack of the message buffers are charged as memory
// copies (copy) of the buffer's bytes; zeroing loops without arithmetic
// (lhsinit, lhsabinit, the forcing / u resets) are not charged. The timer
// breakdown at the end (three MPI_Reduce of 13 doubles) runs only if the
// file timer.flag exists: param timeron (default 0, as in the reference
// runs) turns it on. The I/O variants (btio, subtype full/simple/epio/
// fortran) are not modelled.
//
// Classes (setparams.c write_bt_info):
//   class    n     niter   dt
//   S       12       60    0.010
//   W       24      200    0.0008
//   A       64      200    0.0008
//   B      102      200    0.0003
//   C      162      200    0.0001
//
// Compute: op_time seconds per counted floating-point operation. Counts are
// the source's operators (+ - * / and ** in the assignments of each loop
// body, as written, unary minus and integer index arithmetic not counted),
// times the points the rank's loops cover, per cell (cs = cell size in a
// direction, n = cs - start - end its interior points, start / end = 1 on
// the global boundary):
//   compute_rhs  12 / point of the extended cell (cs+2)^3 (rho_i, us, vs, ws,
//                square, qs); per interior point 3 x 96 (the xi, eta, zeta
//                flux differences: 8 + 21 + 15 + 15 + 37) + 5 (rhs*dt); the
//                fourth-order dissipation exactly: per line 5 x (14 at a
//                start boundary + 9 per interior stencil + 14 at an end);
//   x/y/z_solve_cell per line (the cell's interior in the two other
//                directions): 83 / 84 / 85 per point for fjac, njac (n+2
//                points), 242 per point for lhsa, lhsb, lhsc (n points), and
//                the block elimination: binvcrhs 365 at the first cell's
//                first point, matvec_sub 50 + matmul_sub 250 + binvcrhs 365
//                = 665 per point in between, 50 + 250 + binvrhs 140 = 440 at
//                the last cell's last point;
//   backsubstitute 50 per point of the line (cs - 1 points, plus the
//                backsub_info row if not the last cell);
//   add          5 / interior point;
//   error_norm   136 / cell point (exact_solution 120 + 16);
//   rhs_norm     10 / interior point;
//   initialize   838 / cell point (6 exact_solution + the transfinite
//                interpolation) + 121 / point of a boundary face;
//   exact_rhs    138 / point of the extended line in each direction
//                (exact_solution and the 1-D fluxes) + 413 / interior point
//                (3 x (91 flux + 45 dissipation) + 5; the boundary
//                dissipation stencils counted as interior ones).
// Per interior point and time step (large cells) that is about 12 + 293 +
// 135 + (83 + 84 + 85) + 3 x (242 + 665 + 50) + 5 = 3568, against the 3478.8 n^3
// leading term of bt.f's own Mop/s formula.
// One op_time for all (all are double-precision loop nests of similar kind).

param S = 0
param W = 1
param A = 2
param B = 3
param C = 4
param class = S                                 // --param class=A selects class A
param n = [12, 24, 64, 102, 162][class]         // problem_size (grid_points)
param niter = [60, 200, 200, 200, 200][class]   // niter_default
param timeron = 0                               // 1: timer.flag present, the 3 timer reduces at the end
param op_time = 1.0e-9                          // seconds per counted operation

// message tags (header.h)
param EAST = 2000
param WEST = 3000
param NORTH = 4000
param SOUTH = 5000
param BOTTOM = 6000
param TOP = 7000

// --- kernels (cost = operations x op_time) ---------------------------------
// rhs.f compute_rhs, all cells of the rank: ext points of the extended cells,
// pts interior points, diss the dissipation operations (counted exactly)
kernel compute_rhs(ext, pts, diss) cost op_time * (12 * ext + 293 * pts + diss)
// x_solve.f / y_solve.f / z_solve.f x_solve_cell etc.: one cell, lines
// lines of n interior (cs total) points; first / last: the cell is the
// first / last of its line (0 or 1)
kernel x_solve_cell(lines, n, cs, first, last) cost op_time * lines * (83 * (n + 2) + 242 * n + 365 * first + 665 * (cs - first - last) + 440 * last)
kernel y_solve_cell(lines, n, cs, first, last) cost op_time * lines * (84 * (n + 2) + 242 * n + 365 * first + 665 * (cs - first - last) + 440 * last)
kernel z_solve_cell(lines, n, cs, first, last) cost op_time * lines * (85 * (n + 2) + 242 * n + 365 * first + 665 * (cs - first - last) + 440 * last)
// x_backsubstitute etc.: 5x5 mat-vec update of cs - 1 points (cs if not last)
kernel backsubstitute(lines, cs, last) cost op_time * lines * 50 * (cs - last)
// add.f: u = u + rhs
kernel add(pts) cost op_time * 5 * pts
// error.f error_norm (cell points), rhs_norm (interior points)
kernel error_norm(pts) cost op_time * 136 * pts
kernel rhs_norm(pts) cost op_time * 10 * pts
// initialize.f: interpolation on every cell point, exact values on faces
kernel initialize(pts, facepts) cost op_time * (838 * pts + 121 * facepts)
// exact_rhs.f: the forcing term
kernel exact_rhs(linepts, pts) cost op_time * (138 * linepts + 413 * pts)

// --- helpers ----------------------------------------------------------------
// setparams.c isqrt: the square root of a square, -1 otherwise
fn isqrt(i) {
    if i <= 0 { return -1 }
    let root = 1
    let square = 0
    while square <= i {
        square = root * root
        if square == i { return root }
        root += 1
    }
    return -1
}

// make_set.f: the size of the cell at 0-based coordinate q of p
fn cell_size(q, p) {
    if q < n % p { return n / p + 1 }
    return n / p
}

// one direction's solve (x_solve.f, y_solve.f, z_solve.f): stages[s] =
// [lines, n, cs, first, last, forward tag, backward tag] of the rank's cell
// in stage s; d = 0, 1, 2 for x, y, z
fn solve(d, stages, nc, pred, succ, fbytes, bbytes, comm) {
    let sid = null
    let rid = null
    // forward elimination, stage 1 .. ncells
    for s in 0 .. nc {
        let st = stages[s]
        if s > 0 {
            // x_receive_solve_info, wait for the previous send and the receive
            rid = irecv(from: pred, bytes: fbytes, tag: st[5], comm: comm)
            wait(sid)
            wait(rid)
            copy(bytes: fbytes)                  // x_unpack_solve_info
        }
        if d == 0 {
            compute x_solve_cell(st[0], st[1], st[2], st[3], st[4])
        } else if d == 1 {
            compute y_solve_cell(st[0], st[1], st[2], st[3], st[4])
        } else {
            compute z_solve_cell(st[0], st[1], st[2], st[3], st[4])
        }
        if s < nc - 1 {
            // x_send_solve_info: pack C' and rhs', isend to the successor
            copy(bytes: fbytes)
            sid = isend(to: succ, bytes: fbytes, tag: st[5], comm: comm)
        }
    }
    // back substitution, stage ncells .. 1
    for s in nc - 1 .. -1 step -1 {
        let st = stages[s]
        if s < nc - 1 {
            rid = irecv(from: succ, bytes: bbytes, tag: st[6], comm: comm)
            wait(sid)
            wait(rid)
            copy(bytes: bbytes)                  // x_unpack_backsub_info
        }
        compute backsubstitute(st[0], st[2], st[4])
        if s > 0 {
            // x_send_backsub_info: pack U(0), isend to the predecessor
            copy(bytes: bbytes)
            sid = isend(to: pred, bytes: bbytes, tag: st[6], comm: comm)
        }
    }
}

// copy_faces.f: fb = [east, west, north, south, top, bottom] buffer bytes,
// nb = [pred x, pred y, pred z, succ x, succ y, succ z]; r = compute_rhs's
// [ext, pts, diss]
fn copy_faces(single, fb, nb, r, comm) {
    if !single {
        copy(bytes: sum(fb))                     // pack the six buffers
        let r0 = irecv(from: nb[3], bytes: fb[0], tag: WEST, comm: comm)
        let r1 = irecv(from: nb[0], bytes: fb[1], tag: EAST, comm: comm)
        let r2 = irecv(from: nb[4], bytes: fb[2], tag: SOUTH, comm: comm)
        let r3 = irecv(from: nb[1], bytes: fb[3], tag: NORTH, comm: comm)
        let r4 = irecv(from: nb[5], bytes: fb[4], tag: BOTTOM, comm: comm)
        let r5 = irecv(from: nb[2], bytes: fb[5], tag: TOP, comm: comm)
        let s0 = isend(to: nb[3], bytes: fb[0], tag: EAST, comm: comm)
        let s1 = isend(to: nb[0], bytes: fb[1], tag: WEST, comm: comm)
        let s2 = isend(to: nb[4], bytes: fb[2], tag: NORTH, comm: comm)
        let s3 = isend(to: nb[1], bytes: fb[3], tag: SOUTH, comm: comm)
        let s4 = isend(to: nb[5], bytes: fb[4], tag: TOP, comm: comm)
        let s5 = isend(to: nb[2], bytes: fb[5], tag: BOTTOM, comm: comm)
        waitall(r0, r1, r2, r3, r4, r5, s0, s1, s2, s3, s4, s5)
        copy(bytes: sum(fb))                     // unpack
    }
    compute compute_rhs(r[0], r[1], r[2])
}

// adi.f: one time step
fn adi(single, fb, nb, r, xs, ys, zs, nc, fbytes, bbytes, pts, comm_rhs, comm_solve) {
    copy_faces(single, fb, nb, r, comm_rhs)
    solve(0, xs, nc, nb[0], nb[3], fbytes, bbytes, comm_solve)
    solve(1, ys, nc, nb[1], nb[4], fbytes, bbytes, comm_solve)
    solve(2, zs, nc, nb[2], nb[5], fbytes, bbytes, comm_solve)
    compute add(pts)
}

// --- main (bt.f) ------------------------------------------------------------
// setparams.c: the process count must be a square; class S at most 16
let p = isqrt(size)
if p < 0 {
    abort("bt: setparams: Number of processors", size,
          "must be a square (1,4,9,...) for this benchmark")
}
if class == S && size > 16 {
    abort("bt: setparams: BT and SP sample sizes cannot be run on more than 16 processors",
          "because the cell size would be too small")
}

// setup_mpi.f: every rank is active (nc = maxcells = p)
let comm_setup = comm_split(color: 0, key: rank)
let comm_solve = comm_dup(comm_setup)
let comm_rhs = comm_dup(comm_setup)

// bt.f: broadcast of the inputs (compiled defaults, no inputbt.data)
bcast(bytes: 4, root: 0, comm: comm_setup)      // niter
bcast(bytes: 8, root: 0, comm: comm_setup)      // dt
bcast(bytes: 12, root: 0, comm: comm_setup)     // grid_points(1:3)
bcast(bytes: 4, root: 0, comm: comm_setup)      // wr_interval
bcast(bytes: 4, root: 0, comm: comm_setup)      // rd_interval
bcast(bytes: 4, root: 0, comm: comm_setup)      // timeron (LOGICAL)

// make_set.f: cell coordinates (0-based), neighbours, sizes
if n / p <= 2 {
    abort("bt: make_set: Error: Cell size too small. Min size is 3 (class", class,
          "on", size, "ranks: n =", n, ", p =", p, ")")
}
let c1 = array(p, 0)
let c2 = array(p, 0)
let c3 = array(p, 0)
c1[0] = rank % p
c2[0] = rank / p
for c in 1 .. p {
    c1[c] = (c1[c - 1] + 1) % p
    c2[c] = (c2[c - 1] - 1 + p) % p
    c3[c] = c
}
let i0 = c1[0]
let j0 = c2[0]
// nb = [predecessor(1..3), successor(1..3)]
let nb = [(i0 - 1 + p) % p + p * j0,
          i0 + p * ((j0 - 1 + p) % p),
          (i0 + 1) % p + p * ((j0 - 1 + p) % p),
          (i0 + 1) % p + p * j0,
          i0 + p * ((j0 + 1) % p),
          (i0 - 1 + p) % p + p * ((j0 + 1) % p)]

// per cell: sizes, interior points, and the operation counts
let xs = array(p, 0)       // the stage tables of the three solves
let ys = array(p, 0)
let zs = array(p, 0)
let ext = 0                // compute_rhs: extended cell points
let pts = 0                // interior points
let diss = 0               // dissipation operations
let allpts = 0             // cell points
let facepts = 0            // initialize: boundary face points
let linepts = 0            // exact_rhs: extended line points
let fb = [0, 0, 0, 0, 0, 0]   // compute_buffer_size (dim = 5), doubles
for c in 0 .. p {
    let q1 = c1[c]
    let q2 = c2[c]
    let q3 = c3[c]
    let s1 = cell_size(q1, p)
    let s2 = cell_size(q2, p)
    let s3 = cell_size(q3, p)
    let b1 = 0
    let b2 = 0
    let b3 = 0
    let e1 = 0
    let e2 = 0
    let e3 = 0
    if q1 == 0 { b1 = 1 }
    if q2 == 0 { b2 = 1 }
    if q3 == 0 { b3 = 1 }
    if q1 == p - 1 { e1 = 1 }
    if q2 == p - 1 { e2 = 1 }
    if q3 == p - 1 { e3 = 1 }
    let n1 = s1 - b1 - e1
    let n2 = s2 - b2 - e2
    let n3 = s3 - b3 - e3
    ext += (s1 + 2) * (s2 + 2) * (s3 + 2)
    pts += n1 * n2 * n3
    diss += n2 * n3 * 5 * (14 * b1 + 9 * (s1 - 3 * b1 - 3 * e1) + 14 * e1)
    diss += n1 * n3 * 5 * (14 * b2 + 9 * (s2 - 3 * b2 - 3 * e2) + 14 * e2)
    diss += n1 * n2 * 5 * (14 * b3 + 9 * (s3 - 3 * b3 - 3 * e3) + 14 * e3)
    allpts += s1 * s2 * s3
    facepts += (b1 + e1) * s2 * s3 + (b2 + e2) * s1 * s3 + (b3 + e3) * s1 * s2
    linepts += n2 * n3 * (s1 + 4 - 2 * b1 - 2 * e1)
    linepts += n1 * n3 * (s2 + 4 - 2 * b2 - 2 * e2)
    linepts += n1 * n2 * (s3 + 4 - 2 * b3 - 2 * e3)
    // define.f compute_buffer_size
    if q1 != p - 1 { fb[0] += s2 * s3 * 10 }     // east
    if q1 != 0 { fb[1] += s2 * s3 * 10 }         // west
    if q2 != p - 1 { fb[2] += s1 * s3 * 10 }     // north
    if q2 != 0 { fb[3] += s1 * s3 * 10 }         // south
    if q3 != p - 1 { fb[4] += s1 * s2 * 10 }     // top
    if q3 != 0 { fb[5] += s1 * s2 * 10 }         // bottom
    // the cell is in stage q1 + 1 of x_solve (slice(1, q1+1) = c), q2 + 1
    // of y_solve, q3 + 1 of z_solve
    xs[q1] = [n2 * n3, n1, s1, b1, e1, WEST + q2 + q3 * p, EAST + q2 + q3 * p]
    ys[q2] = [n1 * n3, n2, s2, b2, e2, SOUTH + q1 + q3 * p, NORTH + q1 + q3 * p]
    zs[q3] = [n1 * n2, n3, s3, b3, e3, BOTTOM + q1 + q2 * p, TOP + q1 + q2 * p]
}
for d in 0 .. 6 { fb[d] = 8 * fb[d] }
let r = [ext, pts, diss]
let maxd = n / p + 1                             // MAX_CELL_DIM
let fbytes = 8 * maxd * maxd * 30                // C'(5x5) and rhs'(5) per line
let bbytes = 8 * maxd * maxd * 5                 // U(5) per line
let single = size == 1                           // no_nodes = 1: no face copies

// set_constants, initialize, lhsinit, exact_rhs
compute initialize(allpts, facepts)
compute exact_rhs(linepts, pts)

// one untimed time step to touch all code, and reinitialize
adi(single, fb, nb, r, xs, ys, zs, p, fbytes, bbytes, pts, comm_rhs, comm_solve)
compute initialize(allpts, facepts)

barrier(comm: comm_setup)
let t0 = wtime()
for step in 1 .. niter + 1 {
    adi(single, fb, nb, r, xs, ys, zs, p, fbytes, bbytes, pts, comm_rhs, comm_solve)
}
let t = wtime() - t0

// verify.f: error_norm, copy_faces (+ compute_rhs), rhs_norm
compute error_norm(allpts)
allreduce(bytes: 8 * 5, elem: 8, comm: comm_setup)
copy_faces(single, fb, nb, r, comm_rhs)
compute rhs_norm(pts)
allreduce(bytes: 8 * 5, elem: 8, comm: comm_setup)

let tmax = reduce(bytes: 8, elem: 8, value: t, op: max, root: 0, comm: comm_setup)
if rank == 0 {
    print("Time in seconds =", tmax)
}
if timeron {
    // t1, tsum / tming / tmaxg (t_last + 2 = 13 timers)
    reduce(bytes: 8 * 13, elem: 8, root: 0, comm: comm_setup)
    reduce(bytes: 8 * 13, elem: 8, root: 0, comm: comm_setup)
    reduce(bytes: 8 * 13, elem: 8, root: 0, comm: comm_setup)
}
barrier()                                        // MPI_COMM_WORLD
