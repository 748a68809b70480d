param S = 0
param W = 1
param A = 2
param B = 3
param C = 4
param class = S      // --param class=A selects class A

// examples/npb/lu.mpl: NAS Parallel Benchmarks 3.3 (MPI) LU as a parsim skeleton.
//
// LU solves the 3-D compressible Navier-Stokes equations (five coupled
// nonlinear PDEs on an n x n x n grid) by pseudo-time stepping with a
// symmetric successive over-relaxation (SSOR) scheme: each step forms the
// lower and upper block-triangular parts of the Jacobian (jacld/jacu, 5x5
// blocks) and solves them k-plane by k-plane (blts/buts), then updates u and
// recomputes the steady-state residual (rhs).
//
// Decomposition (proc_grid.f, neighbors.f, subdomain.f): the ranks form a
// 2-D xdim x ydim grid over the (i, j) plane, row = mod(id, xdim) + 1,
// col = id / xdim + 1; north = id - 1, south = id + 1, west = id - xdim,
// east = id + xdim (-1 on the border); every rank owns all nz k-planes.
// Communication, call for call (tags from_s=1, from_n=2, from_e=3, from_w=4):
//   - bcast_inputs.f: ten MPI_BCASTs of the inputs from rank 0;
//   - exchange_1.f, the pipelined wavefront of the SSOR sweeps: for every
//     k = 2..nz-1 the lower sweep (blts) blocks in MPI_RECV from north
//     (5*(jend-jst+1) doubles) and west (5*(iend-ist+1) doubles), computes the
//     plane, then MPI_SENDs the same sizes to south and east; the upper sweep
//     (buts, k = nz-1..2) receives from south and east and sends to north and
//     west. So per k-plane and sweep: up to 2 recvs + 2 sends per rank.
//   - exchange_3.f (rhs, and twice in erhs): ghost faces two deep: irecv
//     north / send south / wait, irecv south / send north / wait
//     (10*ny*nz doubles), then the same east-west (10*nx*nz doubles);
//   - l2norm.f, error.f: MPI_ALLREDUCE of 5 doubles; ssor.f: MPI_BARRIER
//     before the timer and the MPI_ALLREDUCE (MAX) of the time;
//   - pintgr.f: exchange_4 (2*nx / 2*(ny+2) doubles), exchange_5/6 (nz
//     doubles), each irecv + wait then send, and three allreduces of 1 double.
// lu.f runs one untimed warm-up ssor(1) before the timed ssor(itmax); both are
// here (each with its own barrier and time allreduce, as in the source).
// The timer.flag file is assumed absent (timeron = false), as in the
// reference runs, so the three MPI_Reduce of the timers at the end of lu.f
// are not made.
//
// Follows NPB3.3-MPI/LU: lu.f, init_comm.f, read_input.f, bcast_inputs.f,
// proc_grid.f, neighbors.f, subdomain.f, setcoeff.f, setbv.f, setiv.f,
// erhs.f, ssor.f, rhs.f, jacld.f, blts.f, jacu.f, buts.f, exchange_1.f,
// exchange_3.f, l2norm.f, error.f, pintgr.f, exchange_4/5/6.f, and
// sys/setparams.c (write_lu_info: class sizes, itmax, inorm = itmax, the
// compiled grid nnodes_xdim = isqrt2(P); check_info: isqrt2(P) must succeed).
// The process-count rules are all checked: isqrt2 (P = xdim*ydim with
// ydim <= xdim <= 2*ydim), proc_grid.f's grid search, and subdomain.f's
// nx, ny >= 3 (e.g. class S runs on at most 16 ranks, A on at most 441).
//
// Simplified (no effect on communication): nothing is computed, only charged.
// The convergence test of ssor.f (all five residual norms below 1e-8, which
// never happens for the NPB classes within itmax steps) is not modelled: the
// loop always runs itmax steps. The inputs are the defaults (no
// inputlu.data), as in the reference runs. pintgr.f's integration bounds
// (ibeg, ifin, ifin1, jbeg, jfin, jfin1) are transcribed exactly since they
// decide which ranks call exchange_4/5/6. Pure copies without arithmetic
// (ssor.f zeroing a, b, c, d; rhs.f rsd = -frct; packing of the exchange
// buffers) are not charged. exchange_1.f is written out inline in the sweeps.
//
// Classes (setparams.c write_lu_info; nx0 = ny0 = nz0 = n, dt):
//   class    n    itmax   dt
//   S       12      50    0.5
//   W       33     300    1.5e-3
//   A       64     250    2.0
//   B      102     250    2.0
//   C      162     250    2.0
//
// Compute: op_time seconds per counted floating-point operation. Counts are
// source operator counts (+ - * / and **2 in the assignments of each loop
// body; subscript arithmetic and loop-invariant subexpressions such as
// dt*2.0*(tx1*dx1+ty1*dy1+tz1*dz1), which the compiler hoists, not counted)
// per grid point, times the points the rank's loops cover:
//   rhs      453 / interior point: 3 directions x [Euler flux 18 + central
//            difference 5x3 + viscous flux 36 + residual update 37 +
//            4th-order dissipation 5x9];
//   jacld    519 / point of a k-plane (the 4 5x5 blocks d, a, b, c), jacu 519;
//   blts     279 / point of a k-plane (5x11 z-coupling + 5x21 x,y-coupling +
//            119 for the 5x5 Gauss elimination), buts 279 (5x10 + 5x21 + 124);
//   ssor     5 (rsd = dt*rsd) and 10 (u += tmp*rsd) / interior point;
//   l2norm   10 / interior point; error 216 (exact.f: 5 x 42 + 6) + 15;
//   erhs     210 / point (the exact polynomial on every point) + 453 /
//            interior point; setiv 6 x 216 (exact) + 5 x 20 / interior
//            point; setbv 216 per boundary point; pintgr 26 per surface point.
// Per interior point and SSOR step that is 453 + 2*519 + 2*279 + 15 = 2064,
// against the 1984.77 n^3 leading term of lu.f's own Mop/s formula.
// One op_time for all (all are double-precision loop nests of similar kind).

param n     = [12, 33, 64, 102, 162][class]    // nx0 = ny0 = nz0 (isiz01..03)
param itmax = [50, 300, 250, 250, 250][class]  // itmax_default
param inorm = itmax                             // inorm_default = itmax
param op_time = 1.0e-9                          // seconds per counted operation

// message tags (applu.incl)
param from_s = 1
param from_n = 2
param from_e = 3
param from_w = 4

// --- kernels (cost = operations x op_time) ---------------------------------
// rhs.f: the three flux/dissipation passes over the rank's interior points
kernel rhs(pts) cost op_time * 453 * pts
// jacld.f / jacu.f: the four 5x5 Jacobian blocks of one k-plane
kernel jacld(pts) cost op_time * 519 * pts
kernel jacu(pts) cost op_time * 519 * pts
// blts.f / buts.f: block triangular solve of one k-plane
kernel blts(pts) cost op_time * 279 * pts
kernel buts(pts) cost op_time * 279 * pts
// ssor.f: rsd = dt*rsd before the sweeps, u = u + tmp*rsd after them
kernel ssor_scale(pts) cost op_time * 5 * pts
kernel ssor_update(pts) cost op_time * 10 * pts
// l2norm.f: sum of squares of the 5 components
kernel l2norm(pts) cost op_time * 10 * pts
// error.f: exact solution and squared error at each interior point
kernel error(pts) cost op_time * 231 * pts
// erhs.f: forcing term: exact polynomial everywhere, then rhs-like passes
kernel erhs(allpts, pts) cost op_time * (210 * allpts + 453 * pts)
// setiv.f: transfinite interpolation of 6 exact boundary values per point
kernel setiv(pts) cost op_time * 1396 * pts
// setbv.f: exact values on the boundary faces
kernel setbv(pts) cost op_time * 216 * pts
// pintgr.f: phi on the surface and the trapezoid sums
kernel pintgr(pts) cost op_time * 26 * pts

// --- process grid (setparams.c isqrt2, proc_grid.f) -------------------------
// setparams.c isqrt2: the x dimension of the compiled grid, -1 if none
fn isqrt2(i) {
    if i <= 0 { return -1 }
    let square = 0
    let xdim = 1
    while square <= i {
        square = xdim * xdim
        if square == i { return xdim }
        xdim += 1
    }
    xdim -= 1
    let ydim = i / xdim
    while xdim * ydim != i && 2 * ydim >= xdim {
        xdim += 1
        ydim = i / xdim
    }
    if xdim * ydim == i && 2 * ydim >= xdim { return xdim }
    return -1
}

// --- communication routines -------------------------------------------------
// exchange_3.f: two-deep ghost faces of u (rhs) or rsd (erhs)
fn exchange_3(iex, north, south, west, east, nx, ny, nz) {
    if iex == 0 {
        let b = 8 * 10 * ny * nz
        let mid = null
        if north != -1 { mid = irecv(from: north, bytes: b, tag: from_n) }
        if south != -1 { send(to: south, bytes: b, tag: from_n) }
        if north != -1 { wait(mid) }
        if south != -1 { mid = irecv(from: south, bytes: b, tag: from_s) }
        if north != -1 { send(to: north, bytes: b, tag: from_s) }
        if south != -1 { wait(mid) }
    } else {
        let b = 8 * 10 * nx * nz
        let mid = null
        if west != -1 { mid = irecv(from: west, bytes: b, tag: from_w) }
        if east != -1 { send(to: east, bytes: b, tag: from_w) }
        if west != -1 { wait(mid) }
        if east != -1 { mid = irecv(from: east, bytes: b, tag: from_e) }
        if west != -1 { send(to: west, bytes: b, tag: from_e) }
        if east != -1 { wait(mid) }
    }
}

// l2norm.f: local sum of squares, MPI_ALLREDUCE of 5 doubles
fn l2norm(pts) {
    compute l2norm(pts)
    allreduce(bytes: 8 * 5, elem: 8)
}

// rhs.f: exchange_3 north-south, x-direction pass, exchange_3 east-west,
// y- and z-direction passes
fn rhs(north, south, west, east, nx, ny, nz, pts) {
    exchange_3(0, north, south, west, east, nx, ny, nz)
    compute rhs(pts / 3)
    exchange_3(1, north, south, west, east, nx, ny, nz)
    compute rhs(pts - pts / 3)
}

// ssor.f: niter SSOR steps; returns the MPI_MAX allreduce of the time.
// g = [nx, ny, nz, ist, iend, jst, jend, north, south, west, east]
fn ssor(niter, g) {
    let nx = g[0]
    let ny = g[1]
    let nz = g[2]
    let north = g[7]
    let south = g[8]
    let west = g[9]
    let east = g[10]
    let ni = g[4] - g[3] + 1                 // iend - ist + 1
    let nj = g[6] - g[5] + 1                 // jend - jst + 1
    let plane = ni * nj                      // points of one k-plane
    let pts = plane * (nz - 2)               // interior points
    let nsb = 8 * 5 * nj                     // exchange_1 north/south message
    let ewb = 8 * 5 * ni                     // exchange_1 west/east message

    rhs(north, south, west, east, nx, ny, nz, pts)
    l2norm(pts)
    barrier()
    let t0 = wtime()
    for istep in 1 .. niter + 1 {
        compute ssor_scale(pts)
        // exchange_1.f is written out inline in both sweeps (the same calls;
        // a function call per k-plane costs the simulator a third more time).
        // lower triangular sweep, k = 2 .. nz-1: jacld; blts = exchange_1(iex=0):
        // recv north, recv west; the plane's solve; exchange_1(iex=2): send
        // south, send east
        for k in 2 .. nz {
            compute jacld(plane)
            if north != -1 { recv(from: north, bytes: nsb, tag: from_n) }
            if west != -1 { recv(from: west, bytes: ewb, tag: from_w) }
            compute blts(plane)
            if south != -1 { send(to: south, bytes: nsb, tag: from_n) }
            if east != -1 { send(to: east, bytes: ewb, tag: from_w) }
        }
        // upper triangular sweep, k = nz-1 .. 2: jacu; buts = exchange_1(iex=1):
        // recv south, recv east; the solve; exchange_1(iex=3): send north, west
        for k in nz - 1 .. 1 step -1 {
            compute jacu(plane)
            if south != -1 { recv(from: south, bytes: nsb, tag: from_s) }
            if east != -1 { recv(from: east, bytes: ewb, tag: from_e) }
            compute buts(plane)
            if north != -1 { send(to: north, bytes: nsb, tag: from_s) }
            if west != -1 { send(to: west, bytes: ewb, tag: from_e) }
        }
        compute ssor_update(pts)
        if istep % inorm == 0 {
            l2norm(pts)                          // delunm
        }
        rhs(north, south, west, east, nx, ny, nz, pts)
        if istep % inorm == 0 || istep == itmax {
            l2norm(pts)                          // rsdnm
        }
    }
    let t = wtime() - t0
    return allreduce(bytes: 8, elem: 8, value: t, op: max)
}

// --- main (lu.f) ------------------------------------------------------------
// init_comm.f / read_input.f / bcast_inputs.f
bcast(bytes: 4, root: 0)        // ipr
bcast(bytes: 4, root: 0)        // inorm
bcast(bytes: 4, root: 0)        // itmax
bcast(bytes: 8, root: 0)        // dt
bcast(bytes: 8, root: 0)        // omega
bcast(bytes: 40, root: 0)       // tolrsd(5)
bcast(bytes: 4, root: 0)        // nx0
bcast(bytes: 4, root: 0)        // ny0
bcast(bytes: 4, root: 0)        // nz0
bcast(bytes: 4, root: 0)        // timeron (LOGICAL)

// proc_grid.f, with the compiled grid of setparams.c (nnodes_compiled = size)
let xdim0 = isqrt2(size)
if xdim0 < 0 {
    abort("lu: setparams: Failed to determine proc_grid for nprocs =", size)
}
let ydim0 = size / xdim0
let ydim = floor(sqrt(size) + 0.001)
let xdim = size / ydim
while ydim >= ydim0 && xdim * ydim != size {
    ydim -= 1
    xdim = size / ydim
}
if xdim < xdim0 || ydim < ydim0 || xdim * ydim != size {
    abort("lu: couldn't determine proper proc_grid for nprocs =", size)
}
let row = rank % xdim + 1
let col = rank / xdim + 1

// neighbors.f
let north = -1
let south = -1
let west = -1
let east = -1
if row > 1 { north = rank - 1 }
if row < xdim { south = rank + 1 }
if col > 1 { west = rank - xdim }
if col < ydim { east = rank + xdim }

// subdomain.f
let nx0 = n
let ny0 = n
let nz0 = n
let nx = nx0 / xdim
let ipt = (row - 1) * nx + nx0 % xdim
if row <= nx0 % xdim {
    nx = nx0 / xdim + 1
    ipt = (row - 1) * nx
}
let ny = ny0 / ydim
let jpt = (col - 1) * ny + ny0 % ydim
if col <= ny0 % ydim {
    ny = ny0 / ydim + 1
    jpt = (col - 1) * ny
}
let nz = nz0
if nx < 3 || ny < 3 || nz < 3 {
    abort("lu: SUBDOMAIN SIZE IS TOO SMALL - nx, ny, nz =", nx, ny, nz,
          "(class", class, "on", size, "ranks)")
}
let ist = 1
let iend = nx
if north == -1 { ist = 2 }
if south == -1 { iend = nx - 1 }
let jst = 1
let jend = ny
if west == -1 { jst = 2 }
if east == -1 { jend = ny - 1 }
let g = [nx, ny, nz, ist, iend, jst, jend, north, south, west, east]
let ni = iend - ist + 1
let nj = jend - jst + 1
let pts = ni * nj * (nz - 2)                 // interior points of the rank

// setcoeff.f (no communication): integration bounds for pintgr
let ii1 = 2
let ii2 = nx0 - 1
let ji1 = 2
let ji2 = ny0 - 2
let ki1 = 3
let ki2 = nz0 - 1

// setbv.f, setiv.f, erhs.f
let bvpts = 2 * nx * ny
if west == -1 { bvpts += nx * nz }
if east == -1 { bvpts += nx * nz }
if north == -1 { bvpts += ny * nz }
if south == -1 { bvpts += ny * nz }
compute setbv(bvpts)
compute setiv(pts)
// erhs.f: exact polynomial, exchange_3 north-south, x pass, exchange_3
// east-west, y and z passes
compute erhs(nx * ny * nz, 0)
exchange_3(0, north, south, west, east, nx, ny, nz)
compute erhs(0, pts / 3)
exchange_3(1, north, south, west, east, nx, ny, nz)
compute erhs(0, pts - pts / 3)

// one untimed SSOR iteration to touch all data and program pages
ssor(1, g)

// reset the boundary and initial values, then the timed iterations
compute setbv(bvpts)
compute setiv(pts)
let maxtime = ssor(itmax, g)

// error.f
compute error(pts)
allreduce(bytes: 8 * 5, elem: 8)

// pintgr.f: integration bounds, exactly as in the source
let ibeg = nx + 1
let ifin = 0
let iglob1 = ipt + 1
let iglob2 = ipt + nx
if iglob1 >= ii1 && iglob2 < ii2 + nx { ibeg = 1 }
if iglob1 > ii1 - nx && iglob2 <= ii2 { ifin = nx }
if ii1 >= iglob1 && ii1 <= iglob2 { ibeg = ii1 - ipt }
if ii2 >= iglob1 && ii2 <= iglob2 { ifin = ii2 - ipt }
let jbeg = ny + 1
let jfin = 0
let jglob1 = jpt + 1
let jglob2 = jpt + ny
if jglob1 >= ji1 && jglob2 < ji2 + ny { jbeg = 1 }
if jglob1 > ji1 - ny && jglob2 <= ji2 { jfin = ny }
if ji1 >= jglob1 && ji1 <= jglob2 { jbeg = ji1 - jpt }
if ji2 >= jglob1 && ji2 <= jglob2 { jfin = ji2 - jpt }
let ifin1 = ifin
let jfin1 = jfin
if ipt + ifin1 == ii2 { ifin1 = ifin - 1 }
if jpt + jfin1 == ji2 { jfin1 = jfin - 1 }
let di = max(0, ifin - ibeg + 1)
let dj = max(0, jfin - jbeg + 1)
let dk = ki2 - ki1 + 1

// first integral: phi1/phi2 on k = ki1, ki2; exchange_4; sum; allreduce
compute pintgr(di * dj)
if jfin1 == ny {                                  // receive from east
    let r = irecv(from: east, bytes: 8 * 2 * nx, tag: from_e)
    wait(r)
}
if jbeg == 1 {                                    // send west
    send(to: west, bytes: 8 * 2 * nx, tag: from_e)
}
if ifin1 == nx {                                  // receive from south
    let r = irecv(from: south, bytes: 8 * 2 * (ny + 2), tag: from_s)
    wait(r)
}
if ibeg == 1 {                                    // send north
    send(to: north, bytes: 8 * 2 * (ny + 2), tag: from_s)
}
allreduce(bytes: 8, elem: 8)

// second integral: faces j = ji1 (phi1) and j = ji2 (phi2); exchange_5 each
let ind1 = jpt + jbeg == ji1
let ind2 = jpt + jfin == ji2
let faces = 0
if ind1 { faces += 1 }
if ind2 { faces += 1 }
compute pintgr(faces * di * dk)
if ind1 { exchange_5(ibeg, ifin1, nx, nz, north, south) }
if ind2 { exchange_5(ibeg, ifin1, nx, nz, north, south) }
allreduce(bytes: 8, elem: 8)

// third integral: faces i = ii1 (phi1) and i = ii2 (phi2); exchange_6 each
ind1 = ipt + ibeg == ii1
ind2 = ipt + ifin == ii2
faces = 0
if ind1 { faces += 1 }
if ind2 { faces += 1 }
compute pintgr(faces * dj * dk)
if ind1 { exchange_6(jbeg, jfin1, ny, nz, west, east) }
if ind2 { exchange_6(jbeg, jfin1, ny, nz, west, east) }
allreduce(bytes: 8, elem: 8)

// verify.f runs on rank 0 without communication
if rank == 0 {
    print("Time in seconds =", maxtime)
}

// exchange_5.f: nz doubles from south, to north
fn exchange_5(ibeg, ifin1, nx, nz, north, south) {
    if ifin1 == nx {
        let r = irecv(from: south, bytes: 8 * nz, tag: from_s)
        wait(r)
    }
    if ibeg == 1 {
        send(to: north, bytes: 8 * nz, tag: from_s)
    }
}

// exchange_6.f: nz doubles from east, to west
fn exchange_6(jbeg, jfin1, ny, nz, west, east) {
    if jfin1 == ny {
        let r = irecv(from: east, bytes: 8 * nz, tag: from_e)
        wait(r)
    }
    if jbeg == 1 {
        send(to: west, bytes: 8 * nz, tag: from_e)
    }
}
