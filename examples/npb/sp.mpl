param S = 0
param W = 1
param A = 2
param B = 3
param C = 4
param class = S      // --param class=A selects class A

// examples/npb/sp.mpl: NAS Parallel Benchmarks 3.3 (MPI) SP as a parsim skeleton.
//
// SP solves the 3-D compressible Navier-Stokes equations on an n x n x n
// grid with the Beam-Warming approximate factorization, diagonalized
// (Pulliam-Chaussee): every time step (adi.f) computes the right-hand side
// (copy_faces.f + rhs.f), transforms it (txinvr.f), then solves three sets
// of independent scalar pentadiagonal systems, along x, y and z lines
// (x_solve.f, y_solve.f, z_solve.f, with the block-diagonal inversions
// ninvr.f, pinvr.f, tzetar.f between them), and adds the update (add.f).
//
// Decomposition: the multipartition scheme (make_set.f). With P = p^2 ranks
// the grid is cut into p x p x p cells and every rank owns p of them, one in
// each plane of every direction: cell 1 of rank `node` has the 1-based
// coordinates (mod(node,p)+1, node/p+1, 1) and cell c+1 is cell c moved by
// (+1, -1, +1) (cyclically in x and y). The cell sizes are n/p, the first
// mod(n,p) coordinates one more. So in each direction a rank talks to exactly
// one predecessor and one successor (make_set.f):
//   predecessor = (mod(i-1+p,p) + p*j,  i + p*mod(j-1+p,p),  mod(i+1,p) + p*mod(j-1+p,p))
//   successor   = (mod(i+1,p) + p*j,    i + p*mod(j+1,p),    mod(i-1+p,p) + p*mod(j+1,p))
// with (i, j) the 0-based x, y coordinates of cell 1.
//
// Communication, call for call (communicators: setup_mpi.f splits
// comm_setup off MPI_COMM_WORLD and duplicates it into comm_solve and
// comm_rhs; all ranks are active since P must be a square):
//   - sp.f: four MPI_BCASTs of the inputs (niter, dt, grid_points(3),
//     timeron) on comm_setup; MPI_BARRIER before the timer; after verify,
//     MPI_REDUCE (MAX) of the time to rank 0; the final MPI_BARRIER on
//     MPI_COMM_WORLD before MPI_Finalize;
//   - copy_faces.f (each adi, and once in verify): six MPI_IRECVs then six
//     MPI_ISENDs on comm_rhs, one per face direction (tags EAST 2000,
//     WEST 3000, NORTH 4000, SOUTH 5000, BOTTOM 6000, TOP 7000), each
//     carrying the two-deep faces of all the rank's cells that have a
//     neighbour that way (compute_buffer_size(5) in define.f:
//     sum of cell_size x cell_size x 5 x 2 doubles), and MPI_WAITALL; with
//     one rank no communication (just compute_rhs);
//   - x/y/z_solve.f on comm_solve, tag 0: forward elimination through the
//     rank's cells in the order of the sweep direction (c = slice(dir,
//     stage), stage = 1..p): for stage > 1 MPI_IRECV of 22*bs doubles from
//     the predecessor, lhs of the cell, MPI_WAITALL of that receive and the
//     previous stage's send; elimination; for stage < p MPI_ISEND of 22*bs
//     doubles to the successor. Back substitution, stage = p..1: for
//     stage < p MPI_IRECV of 10*bs doubles from the successor, the
//     inversion (ninvr/pinvr/tzetar) of the cell done before, MPI_WAITALL;
//     substitution; for stage > 1 MPI_ISEND of 10*bs doubles to the
//     predecessor; at stage 1 the inversion of the cell. bs is the number of
//     interior lines of the cell (the cell's interior cross-section);
//   - error.f: error_norm and rhs_norm each MPI_ALLREDUCE 5 doubles.
// sp.f runs one untimed adi (warm-up) after the setup and before the timed
// niter steps; it is here, as is verify's extra copy_faces.
// The timer.flag file is assumed absent (timeron = false), as in the
// reference runs, so the three MPI_Reduce of the timers at the end of sp.f
// are not made.
//
// Follows NPB3.3-MPI/SP: sp.f, setup_mpi.f, make_set.f, define.f
// (compute_buffer_size), initialize.f (initialize, lhsinit), exact_rhs.f,
// exact_solution.f, adi.f, copy_faces.f, rhs.f, txinvr.f, x_solve.f,
// y_solve.f, z_solve.f, lhsx.f, lhsy.f, lhsz.f, ninvr.f, pinvr.f, tzetar.f,
// add.f, verify.f, error.f, header.h, mpinpb.h, and sys/setparams.c
// (write_sp_info: the class table; check_info: the number of processes must
// be a square, and class S on at most 16 of them).
// Process-count rules, all checked (abort): P must be a square (setparams;
// the real setup_mpi.f would leave the excess ranks idle, but setparams
// refuses to build for a non-square count); class S at most 16 ranks
// (setparams); make_set.f's MPI_Abort when a cell is less than 3 points
// wide, i.e. sqrt(P) <= n/3: class S <= 16 ranks, W <= 144, A <= 441,
// B <= 1156, C <= 2916 ranks. So at 1024 ranks only B and C run, and 65536
// ranks (256^2) is not allowed for any class S..C (class C stops at 54^2).
// Simulation cost: every time step makes 6 + 6 (sqrt(P) - 1) messages per
// rank (the solves' pipelines), so large counts are long to simulate in
// full (1024 ranks, 400 steps: about 80 million messages, a few minutes);
// `--fast-forward` skips the steady time steps when the ranks settle into
// one (it does at e.g. 144 ranks class W, 256 and 400 class B, not at 1024).
//
// Simplified (no effect on communication): nothing is computed, only
// charged. The inputs are the defaults (no inputsp.data), as in the
// reference runs. Pure copies without arithmetic (rhs = forcing, lhsinit's
// zeroing, initialize's preset of u) are not charged; the packing and
// unpacking of the message buffers is charged as memory copies (copy) of the
// message sizes. Boundary rows that have fewer terms (the last two rows of
// the eliminations, the one-sided dissipation rows) are counted like the
// interior ones.
//
// Classes (setparams.c write_sp_info; problem_size = grid_points(1..3)):
//   class    n    niter   dt
//   S       12     100    0.015
//   W       36     400    0.0015
//   A       64     400    0.0015
//   B      102     400    0.001
//   C      162     400    0.00067
//
// Compute: op_time seconds per counted floating-point operation. Counts are
// source operator counts (+ - * / sqrt max, per assignment of the loop
// body; subscript arithmetic and loop-invariant products of constants such
// as xxcon2*con43, which the compiler hoists, not counted), times the points
// the rank's loops cover (interior points of a cell: the cell size minus the
// global boundary planes, start/end in lhsinit):
//   compute_rhs  17 / point of the cell with its one-deep ghost layer
//                (rho_i, us, vs, ws, square, qs, speed, ainv) + 425 /
//                interior point (3 directions x [fluxes 8+20+15+15+37 = 95
//                + fourth-order dissipation 5 x 9] + 5 for rhs*dt);
//   txinvr       27 / interior point;
//   lhsx/y/z     30 / interior point of the cell (9 for rhon/rhos, 8 for
//                the three diagonals, 5 dissipation, 8 for the u+c, u-c
//                factors);
//   x/y/z_solve  forward elimination 58 / point of the cell's lines
//                (cell_size(dir) x bs: 26 for the three u factors + 2 x 16
//                for u+c, u-c) + 66 / line to fold in the received rows;
//                back substitution 20 / point + 40 / line for the received
//                rows (10 / line in the last cell);
//   ninvr 7, pinvr 7, tzetar 27 / interior point of the cell;
//   add          5 / interior point;
//   setup: initialize 833 / cell point (6 exact_solution calls of 120 each
//   + 5 x 22 for the transfinite interpolation + 3) + 120 / point of the
//   cell faces on the grid boundary; exact_rhs 818 / interior point
//   (3 x [136 for the exact solution and primitives along the line + 90
//   fluxes + 45 dissipation] + 5); verify: error_norm 135 / cell point,
//   rhs_norm 10 / interior point.
// Per interior point and time step that is about 425 + 17 + 27 + 3 x (30 +
// 58 + 20) + 7 + 7 + 27 + 5 = 839, against the 881.174 n^3 leading term of
// sp.f's own Mop/s formula.
// One op_time for all (all are double-precision loop nests of similar kind).

param n       = [12, 36, 64, 102, 162][class]        // problem_size
param niter   = [100, 400, 400, 400, 400][class]     // niter_default
param op_time = 1.0e-9                                // seconds per counted operation

// message tags (header.h); the solves use DEFAULT_TAG = 0 (mpinpb.h)
param EAST   = 2000
param WEST   = 3000
param NORTH  = 4000
param SOUTH  = 5000
param BOTTOM = 6000
param TOP    = 7000

// --- kernels (cost = operations x op_time) ---------------------------------
// rhs.f compute_rhs: primitives on the cells with ghosts (ext points), fluxes,
// dissipation and the dt scaling on the interior points (pts)
kernel compute_rhs(ext, pts) cost op_time * (17 * ext + 425 * pts)
// txinvr.f: block-diagonal matrix-vector product on all interior points
kernel txinvr(pts) cost op_time * 27 * pts
// lhsx.f / lhsy.f / lhsz.f: the three pentadiagonal factors of one cell
kernel lhs(pts) cost op_time * 30 * pts
// x/y/z_solve.f forward elimination of one cell: pts points on the cell's
// lines, rlines lines whose two received rows are folded in first
kernel solve_fwd(pts, rlines) cost op_time * (58 * pts + 66 * rlines)
// x/y/z_solve.f back substitution of one cell: lines = bs, recvd = 1 if the
// two rows came from the successor (40 / line) else 0 (10 / line)
kernel solve_bwd(pts, lines, recvd) cost op_time * (20 * pts + lines * (10 + 30 * recvd))
// ninvr.f (after x_solve), pinvr.f (y_solve), tzetar.f (z_solve), per cell
kernel ninvr(pts) cost op_time * 7 * pts
kernel pinvr(pts) cost op_time * 7 * pts
kernel tzetar(pts) cost op_time * 27 * pts
// add.f: u = u + rhs
kernel add(pts) cost op_time * 5 * pts
// initialize.f: transfinite interpolation on the cells, exact boundary values
kernel initialize(pts, facepts) cost op_time * (833 * pts + 120 * facepts)
// exact_rhs.f: the forcing term on the interior points
kernel exact_rhs(pts) cost op_time * 818 * pts
// error.f: error_norm (exact solution on every cell point), rhs_norm
kernel error_norm(pts) cost op_time * 135 * pts
kernel rhs_norm(pts) cost op_time * 10 * pts

// --- the rank's cells --------------------------------------------------------
// The geometry array g (built once in main by make_set below):
//   g[0] = p (ncells)
//   g[1] = cell_size, 3 x p (g[1][dir][c], dir 0..2 = x, y, z, cell c 0..p-1)
//   g[2] = slice, 3 x p (g[2][dir][stage] = the cell in plane stage)
//   g[3] = predecessor(3), g[4] = successor(3) (ranks)
//   g[5] = bs, 3 x p: interior lines of cell c across direction dir
//   g[6] = interior points of each cell
//   g[7] = [west, east, south, north, bottom, top] buffer sizes in doubles
//   g[8] = points of the cells with their one-deep ghost layer (rhs.f)
//   g[9] = interior points of all cells

// setparams.c isqrt: the square root of a perfect square, else -1
fn isqrt(i) {
    let r = 1
    while r * r < i { r += 1 }
    if r * r == i { return r }
    return -1
}

// make_set.f + lhsinit's start/end + define.f compute_buffer_size(5)
fn make_set(node, p) {
    let coord = [array(p, 0), array(p, 0), array(p, 0)]   // 1-based
    coord[0][0] = node % p + 1
    coord[1][0] = node / p + 1
    coord[2][0] = 1
    for c in 1 .. p {
        coord[0][c] = coord[0][c - 1] % p + 1                   // mod(x+1, p)
        coord[1][c] = (coord[1][c - 1] - 2 + p) % p + 1         // mod(y-1+p, p)
        coord[2][c] = c + 1
    }
    let slc = [array(p, 0), array(p, 0), array(p, 0)]
    for d in 0 .. 3 {
        for c in 0 .. p { slc[d][coord[d][c] - 1] = c }
    }
    let i = coord[0][0] - 1
    let j = coord[1][0] - 1
    let pred = [(i - 1 + p) % p + p * j, i + p * ((j - 1 + p) % p), (i + 1) % p + p * ((j - 1 + p) % p)]
    let succ = [(i + 1) % p + p * j, i + p * ((j + 1) % p), (i - 1 + p) % p + p * ((j + 1) % p)]
    // cell sizes
    let cs = [array(p, 0), array(p, 0), array(p, 0)]
    let inner = [array(p, 0), array(p, 0), array(p, 0)]   // cell size minus start/end
    let sz = n / p
    let excess = n % p
    for d in 0 .. 3 {
        for c in 0 .. p {
            if coord[d][c] <= excess { cs[d][c] = sz + 1 } else { cs[d][c] = sz }
            if cs[d][c] <= 2 {
                abort("sp: make_set: Error: Cell size too small. Min size is 3 (class", class,
                      "n =", n, "on", size, "ranks: cells of", cs[d][c], "points)")
            }
            let st = 0
            let en = 0
            if coord[d][c] == 1 { st = 1 }
            if coord[d][c] == p { en = 1 }
            inner[d][c] = cs[d][c] - st - en
        }
    }
    let bs = [array(p, 0), array(p, 0), array(p, 0)]
    let ipts = array(p, 0)
    let ext = 0
    let tot = 0
    let sizes = [0, 0, 0, 0, 0, 0]
    for c in 0 .. p {
        bs[0][c] = inner[1][c] * inner[2][c]
        bs[1][c] = inner[0][c] * inner[2][c]
        bs[2][c] = inner[0][c] * inner[1][c]
        ipts[c] = inner[0][c] * inner[1][c] * inner[2][c]
        tot += ipts[c]
        ext += (cs[0][c] + 2) * (cs[1][c] + 2) * (cs[2][c] + 2)
        let fx = cs[1][c] * cs[2][c] * 10
        let fy = cs[0][c] * cs[2][c] * 10
        let fz = cs[0][c] * cs[1][c] * 10
        if coord[0][c] != 1 { sizes[0] += fx }     // west_size
        if coord[0][c] != p { sizes[1] += fx }     // east_size
        if coord[1][c] != 1 { sizes[2] += fy }     // south_size
        if coord[1][c] != p { sizes[3] += fy }     // north_size
        if coord[2][c] != 1 { sizes[4] += fz }     // bottom_size
        if coord[2][c] != p { sizes[5] += fz }     // top_size
    }
    return [p, cs, slc, pred, succ, bs, ipts, sizes, ext, tot, coord]
}

// --- communication routines -------------------------------------------------
// copy_faces.f: exchange the two-deep faces, then compute_rhs
fn copy_faces(g, comm) {
    let p = g[0]
    if p == 1 {
        compute compute_rhs(g[8], g[9])
        return
    }
    let pred = g[3]
    let succ = g[4]
    let s = g[7]
    let west = 8 * s[0]
    let east = 8 * s[1]
    let south = 8 * s[2]
    let north = 8 * s[3]
    let bottom = 8 * s[4]
    let top = 8 * s[5]
    let all = west + east + south + north + bottom + top
    copy(bytes: all)                                              // pack
    let q0 = irecv(from: succ[0], bytes: east, tag: WEST, comm: comm)
    let q1 = irecv(from: pred[0], bytes: west, tag: EAST, comm: comm)
    let q2 = irecv(from: succ[1], bytes: north, tag: SOUTH, comm: comm)
    let q3 = irecv(from: pred[1], bytes: south, tag: NORTH, comm: comm)
    let q4 = irecv(from: succ[2], bytes: top, tag: BOTTOM, comm: comm)
    let q5 = irecv(from: pred[2], bytes: bottom, tag: TOP, comm: comm)
    let q6 = isend(to: succ[0], bytes: east, tag: EAST, comm: comm)
    let q7 = isend(to: pred[0], bytes: west, tag: WEST, comm: comm)
    let q8 = isend(to: succ[1], bytes: north, tag: NORTH, comm: comm)
    let q9 = isend(to: pred[1], bytes: south, tag: SOUTH, comm: comm)
    let q10 = isend(to: succ[2], bytes: top, tag: TOP, comm: comm)
    let q11 = isend(to: pred[2], bytes: bottom, tag: BOTTOM, comm: comm)
    waitall(q0, q1, q2, q3, q4, q5, q6, q7, q8, q9, q10, q11)
    copy(bytes: all)                                              // unpack
    compute compute_rhs(g[8], g[9])
}

// the block-diagonal inversion after the solve in direction dir, one cell
fn inversion(dir, pts) {
    if dir == 0 {
        compute ninvr(pts)
    } else if dir == 1 {
        compute pinvr(pts)
    } else {
        compute tzetar(pts)
    }
}

// x_solve.f (dir 0), y_solve.f (dir 1), z_solve.f (dir 2)
fn solve(dir, g, comm) {
    let p = g[0]
    let cs = g[1][dir]
    let slc = g[2][dir]
    let pred = g[3][dir]
    let succ = g[4][dir]
    let bsz = g[5][dir]
    let ipts = g[6]
    let r1 = null            // requests(1): the receive
    let r2 = null            // requests(2): the previous stage's send
    // FORWARD ELIMINATION, stage = 1 .. ncells
    for stage in 0 .. p {
        let c = slc[stage]
        let bs = bsz[c]
        if stage != 0 {
            r1 = irecv(from: pred, bytes: 8 * 22 * bs, comm: comm)
            compute lhs(ipts[c])
            waitall(r1, r2)
            compute solve_fwd(cs[c] * bs, bs)
        } else {
            compute lhs(ipts[c])
            compute solve_fwd(cs[c] * bs, 0)
        }
        if stage != p - 1 {
            copy(bytes: 8 * 22 * bs)
            r2 = isend(to: succ, bytes: 8 * 22 * bs, comm: comm)
        }
    }
    // BACKSUBSTITUTION, stage = ncells .. 1
    for stage in p - 1 .. -1 step -1 {
        let c = slc[stage]
        let bs = bsz[c]
        if stage != p - 1 {
            r1 = irecv(from: succ, bytes: 8 * 10 * bs, comm: comm)
            inversion(dir, ipts[slc[stage + 1]])
            waitall(r1, r2)
            compute solve_bwd(cs[c] * bs, bs, 1)
        } else {
            compute solve_bwd(cs[c] * bs, bs, 0)
        }
        if stage != 0 {
            copy(bytes: 8 * 10 * bs)
            r2 = isend(to: pred, bytes: 8 * 10 * bs, comm: comm)
        } else {
            inversion(dir, ipts[c])
        }
    }
}

// adi.f: one time step
fn adi(g, comm_rhs, comm_solve) {
    copy_faces(g, comm_rhs)
    compute txinvr(g[9])
    solve(0, g, comm_solve)
    solve(1, g, comm_solve)
    solve(2, g, comm_solve)
    compute add(g[9])
}

// initialize.f: points of the rank's cells, and of its faces on the boundary
fn init_cost(g) {
    let p = g[0]
    let cs = g[1]
    let coord = g[10]
    let pts = 0
    let face = 0
    for c in 0 .. p {
        pts += cs[0][c] * cs[1][c] * cs[2][c]
        for d in 0 .. 3 {
            let f = cs[0][c] * cs[1][c] * cs[2][c] / cs[d][c]
            if coord[d][c] == 1 { face += f }
            if coord[d][c] == p { face += f }
        }
    }
    return [pts, face]
}

// --- main (sp.f) ------------------------------------------------------------
// setparams.c check_info: a square number of processes, class S on <= 16
let root = isqrt(size)
if root < 0 {
    abort("sp: the number of processes must be a square (1, 4, 9, ...), got", size)
}
if class == S && size > 16 {
    abort("sp: class S cannot be run on more than 16 processes (cell size too small), got", size)
}

// setup_mpi.f: nc = sqrt(P) (maxcells = isqrt(P) compiled); node >= nc*nc
// would be inactive, which cannot happen for a square P
let nc = floor(sqrt(size + 0.00001))
let color = 0
if rank >= nc * nc { color = 1 }
let comm_setup = comm_split(color: color)
let comm_solve = comm_dup(comm_setup)
let comm_rhs = comm_dup(comm_setup)

// sp.f: the inputs from rank 0
bcast(bytes: 4, root: 0, comm: comm_setup)         // niter
bcast(bytes: 8, root: 0, comm: comm_setup)         // dt
bcast(bytes: 12, root: 0, comm: comm_setup)        // grid_points(3)
bcast(bytes: 4, root: 0, comm: comm_setup)         // timeron (LOGICAL)

// make_set.f (with its cell-size MPI_Abort), lhsinit's start/end,
// compute_buffer_size(5)
let g = make_set(rank_in(comm_setup), nc)

// set_constants, initialize, lhsinit, exact_rhs
let ic = init_cost(g)
compute initialize(ic[0], ic[1])
compute exact_rhs(g[9])

// one time step to touch all code, and reinitialize
adi(g, comm_rhs, comm_solve)
compute initialize(ic[0], ic[1])

barrier(comm: comm_setup)
let t0 = wtime()
for step in 1 .. niter + 1 {
    adi(g, comm_rhs, comm_solve)
}
let t = wtime() - t0

// verify.f: error_norm, copy_faces (with compute_rhs), rhs_norm
compute error_norm(ic[0])
allreduce(bytes: 8 * 5, elem: 8, comm: comm_setup)
copy_faces(g, comm_rhs)
compute rhs_norm(g[9])
allreduce(bytes: 8 * 5, elem: 8, comm: comm_setup)

let tmax = reduce(bytes: 8, elem: 8, value: t, op: max, root: 0, comm: comm_setup)
if rank == 0 {
    print("Time in seconds =", tmax)
}
barrier()                                           // sp.f 999: MPI_COMM_WORLD
