// examples/npb/mg.mpl: NAS Parallel Benchmarks 3.3 (MPI), MG, the multigrid
// kernel: nit V-cycles of a 3-D Poisson solver with periodic boundaries on
// an nx^3 grid (levels k = 1 .. lt, level k has 2^k points per edge). The
// grid is split over a pi(1) x pi(2) x pi(3) process grid of powers of two;
// every smoothing, residual, restriction and interpolation ends with a ghost
// exchange (comm3 / comm3_ex) in the three dimensions, and norm2u3 combines
// the norms with two allreduces.
//
// Follows NPB3.3-MPI/MG/mg.f: the main program (barrier, 7 broadcasts of the
// inputs, setup, zran3, the untimed warm-up V-cycle, the timed loop, the
// MPI_MAX reduce of the time), setup (process grid, per-level local sizes
// mi, the neighbour distance `next`, dead levels, give_ex / take_ex), mg3P,
// psinv, resid, rprj3, interp, norm2u3, comm3, comm3_ex, ready, give3,
// take3, give3_ex, take3_ex, comm1p, comm1p_ex and zran3; globals.h for the
// buffer size nm2 (every irecv posts a buffer of nm2 doubles, so its bytes
// are 8 * nm2, not the message size) and sys/setparams.c (write_mg_info) for
// the class table and lm = lt - log2(nprocs)/3.
//
// The communication is reproduced call for call per rank, with the source's
// tags msg_type(d, j) = 100*(j+2+10*d) and its neighbours nbr(axis, dir, k):
// at a level where a rank has no points in some axis (mi = 2: "dead") comm3
// only zeroes the array; interp's comm3_ex sends the coarse ghost planes
// from the ranks that had points (give_ex) to those that had none (take_ex);
// with one rank comm3 / comm3_ex copy locally (comm1p, comm1p_ex), no MPI.
// At class S with 1, 2, 4 ranks no level is dead and there is no comm3_ex
// traffic; it appears at larger counts (e.g. class A at 1024 ranks).
//
// Simplified (none of it changes the communication): the arithmetic is
// replaced by kernels whose cost is an operation count x op_time; the
// values are not computed (zran3's search for the ten largest / smallest
// numbers gives the same number of allreduces on every rank whatever the
// values, mm = 10 rounds of four); debug output (debug_vec = 0 by default,
// so setup's debug barriers and rep_nrm's norms never run) is left out;
// the per-timer MPI_Reduces at the end run only if the file timer.flag
// exists: the param `timeron` (default 0, as in the reference runs) turns
// them on.
//
// Classes (setparams.c write_mg_info; mg.f for the verification):
//   class   nx = ny = nz   lt   nit
//   S       32             5    4
//   W       128            7    4
//   A       256            8    4
//   B       256            8    20
//   C       512            9    20
// Process count: a power of two (setparams check_info), at most maxprocs =
// 131072 (globals.h).
//
// Compute: one counted operation is one floating-point add / multiply /
// compare or one array element written (zeroing, packing, unpacking);
// op_time is the time of one on the target (calibrated from a one-rank run).

param S = 0
param W = 1
param A = 2
param B = 3
param C = 4
param class = S                     // --param class=A selects class A
param nx = [32, 128, 256, 256, 512][class]   // nx = ny = nz
param lt = [5, 7, 8, 8, 9][class]            // log2(nx): levels 1 .. lt
param nit = [4, 4, 4, 20, 20][class]
param maxprocs = 131072             // globals.h
param timeron = 0                   // 1: timer.flag present, the 3 timer reduces at the end
param op_time = 1.0e-9              // seconds per counted operation

// resid (r = v - A u) on an n1 x n2 x n3 local array with ghosts: per
// interior (i2, i3) line, u1 and u2 cost 3 adds each over n1 points, and
// each of the n1-2 results costs 3 multiplies and 6 adds (a(1) = 0 dropped).
kernel resid(n1, n2, n3) cost op_time * max(0, n2 - 2) * max(0, n3 - 2) * (6 * n1 + 9 * max(0, n1 - 2))
// psinv (u = u + C r), same loop shape: r1, r2 6 adds per point of the line,
// each of the n1-2 results 3 multiplies and 7 adds (c(3) = 0 dropped).
kernel psinv(n1, n2, n3) cost op_time * max(0, n2 - 2) * max(0, n3 - 2) * (6 * n1 + 10 * max(0, n1 - 2))
// rprj3 (restriction to the coarse m1j x m2j x m3j array): per coarse
// (j2, j3) line, x1 and y1 6 adds at m1j-1 points, then 18 flops (6 adds
// for x2, y2; 4 multiplies and 8 adds) per coarse result.
kernel rprj3(m1j, m2j, m3j) cost op_time * max(0, m2j - 2) * max(0, m3j - 2) * (6 * max(0, m1j - 1) + 18 * max(0, m1j - 2))
// interp (trilinear prolongation from the coarse mm1 x mm2 x mm3 array): per
// coarse (i2, i3) pair, z1, z2, z3 cost 4 adds at mm1 points and the 8 fine
// points per coarse cell 19 flops (the main branch; the branch for a fine
// edge of 3 points does about as much per fine point and is counted alike).
kernel interp(mm1, mm2, mm3) cost op_time * max(0, mm2 - 1) * max(0, mm3 - 1) * (4 * mm1 + 19 * max(0, mm1 - 1))
// norm2u3: per interior point, s = s + r^2 (2 flops), abs and a compare.
kernel norm2u3(n1, n2, n3) cost op_time * 4 * max(0, n1 - 2) * max(0, n2 - 2) * max(0, n3 - 2)
// zero3 (and comm3 on a dead level): every element of the array written.
kernel zero3(n1, n2, n3) cost op_time * n1 * n2 * n3
// zran3 (setup, untimed): zero3 of the array, about 10 operations per random
// number for vranlc on the interior, 2 compares per point in the search for
// the extremes, and zeroing the array again.
kernel zran3(n1, n2, n3) cost op_time * (2 * n1 * n2 * n3 + 12 * max(0, n1 - 2) * max(0, n2 - 2) * max(0, n3 - 2))
// the communication buffers: ready zeroes a buffer of nm2 doubles per
// receive; give3 / take3 (and _ex) pack and unpack one element per value
// sent or received; comm1p copies both whole buffers besides.
kernel commbuf(n) cost op_time * n

// ---------------------------------------------------------------- helpers

fn pow2(e) {
    let p = 1
    for i in 0 .. e { p *= 2 }
    return p
}

// msg_type(axis, dir), axis 0..2 here (1..3 in mg.f)
fn tag(ax, dir) {
    return 100 * (dir + 2 + 10 * (ax + 1))
}

// mg.f setup: returns G = [m, dead, nbr, take_ex, give_ex, ntop, nm2], indexed
// by level k (1 .. lt): m[k] = [mi(1,k), mi(2,k), mi(3,k)], dead[k],
// nbr[k] = [nbr(1,-1), nbr(1,+1), nbr(2,-1), nbr(2,+1), nbr(3,-1), nbr(3,+1)],
// take_ex[k] / give_ex[k] = one bool per axis; ntop = [n1, n2, n3].
fn setup() {
    let log_p = 0
    let p = 1
    while p < size {
        p *= 2
        log_p += 1
    }
    let dx = log_p / 3
    let pi = [pow2(dx), pow2((log_p - dx) / 2), 0]
    pi[2] = size / (pi[0] * pi[1])
    let idi = [rank % pi[0], (rank / pi[0]) % pi[1], rank / (pi[0] * pi[1])]

    let next = [1, 1, 1]
    let m = array(lt + 1, [0, 0, 0])
    let dead = array(lt + 1, false)
    let take = array(lt + 1, [false, false, false])
    let give = array(lt + 1, [false, false, false])
    let nbr = array(lt + 1, [0, 0, 0, 0, 0, 0])
    for k in lt .. 0 step -1 {
        let ng = nx / pow2(lt - k)
        let mk = [0, 0, 0]
        for ax in 0 .. 3 {
            let mi = 2 + ((idi[ax] + 1) * ng) / pi[ax] - (idi[ax] * ng) / pi[ax]
            let mip = 2 + ((next[ax] + idi[ax] + 1) * ng) / pi[ax] - ((next[ax] + idi[ax]) * ng) / pi[ax]
            if mip == 2 || mi == 2 {
                next[ax] = 2 * next[ax]
            }
            if k + 1 <= lt {
                if mip == 2 && mi == 3 { give[k + 1][ax] = true }
                if mip == 3 && mi == 2 { take[k + 1][ax] = true }
            }
            mk[ax] = mi
        }
        m[k] = mk
        dead[k] = mk[0] == 2 || mk[1] == 2 || mk[2] == 2
        // idin(ax, +1), idin(ax, -1); Fortran mod = C remainder, as here
        let ip = [0, 0, 0]
        let im = [0, 0, 0]
        for ax in 0 .. 3 {
            ip[ax] = (idi[ax] + next[ax] + pi[ax]) % pi[ax]
            im[ax] = (idi[ax] - next[ax] + pi[ax]) % pi[ax]
        }
        nbr[k] = [im[0] + pi[0] * (idi[1] + pi[1] * idi[2]),
                  ip[0] + pi[0] * (idi[1] + pi[1] * idi[2]),
                  idi[0] + pi[0] * (im[1] + pi[1] * idi[2]),
                  idi[0] + pi[0] * (ip[1] + pi[1] * idi[2]),
                  idi[0] + pi[0] * (idi[1] + pi[1] * im[2]),
                  idi[0] + pi[0] * (idi[1] + pi[1] * ip[2])]
    }
    // n1 = 3 + ie1 - is1 at k = lt
    let ntop = [0, 0, 0]
    for ax in 0 .. 3 {
        ntop[ax] = 2 + ((pi[ax] - idi[ax]) * nx) / pi[ax] - ((pi[ax] - 1 - idi[ax]) * nx) / pi[ax]
    }
    // globals.h: nm = 2 + 2^lm, lm = lt - log2(nprocs)/3 (setparams), nm2 = 2 nm^2
    let nm = 2 + pow2(lt - log_p / 3)
    return [m, dead, nbr, take, give, ntop, 2 * nm * nm]
}

// comm3: ghost exchange of an n1 x n2 x n3 array at level k
fn comm3(G, n1, n2, n3, k) {
    if G[1][k] {
        compute zero3(n1, n2, n3)              // dead level: zero3, no messages
        return
    }
    let nbr = G[2][k]
    let nm2 = G[6]
    for ax in 0 .. 3 {
        // give3 / take3 face: axis 1 (n2-2)(n3-2), axis 2 n1(n3-2), axis 3 n1 n2
        let face = n1 * n2
        if ax == 0 { face = (n2 - 2) * (n3 - 2) }
        if ax == 1 { face = n1 * (n3 - 2) }
        if size != 1 {
            compute commbuf(2 * nm2)           // ready(-1), ready(+1) zero their buffers
            let rm = irecv(from: nbr[2 * ax + 1], bytes: 8 * nm2, tag: tag(ax, -1))   // ready(axis, -1)
            let rp = irecv(from: nbr[2 * ax], bytes: 8 * nm2, tag: tag(ax, 1))        // ready(axis, +1)
            compute commbuf(2 * face)          // give3 packs both faces
            send(to: nbr[2 * ax + 1], bytes: 8 * face, tag: tag(ax, 1))               // give3(axis, +1)
            send(to: nbr[2 * ax], bytes: 8 * face, tag: tag(ax, -1))                  // give3(axis, -1)
            wait(rm)                                                                  // take3(axis, -1)
            wait(rp)                                                                  // take3(axis, +1)
            compute commbuf(2 * face)          // take3 unpacks both
        } else {
            compute commbuf(4 * nm2 + 4 * face)   // comm1p: zero, pack, copy, unpack
        }
    }
}

// comm3_ex: after interp to level k, ranks with no points at level k-1
// (take_ex) get the ghost planes from those that had (give_ex)
fn comm3_ex(G, n1, n2, n3, k) {
    let nbr = G[2][k]
    let take = G[3][k]
    let give = G[4][k]
    let nm2 = G[6]
    for ax in 0 .. 3 {
        // give3_ex / take3_ex plane: axis 1 n2 n3, axis 2 n1 n3, axis 3 n1 n2
        // (one plane in direction -1, two in direction +1)
        let plane = n1 * n2
        if ax == 0 { plane = n2 * n3 }
        if ax == 1 { plane = n1 * n3 }
        if size != 1 {
            if take[ax] {
                compute commbuf(2 * nm2)
                let rm = irecv(from: nbr[2 * ax + 1], bytes: 8 * nm2, tag: tag(ax, -1))   // ready(axis, -1)
                let rp = irecv(from: nbr[2 * ax], bytes: 8 * nm2, tag: tag(ax, 1))        // ready(axis, +1)
                wait(rm)                                                                  // take3_ex(axis, -1)
                compute commbuf(plane)
                wait(rp)                                                                  // take3_ex(axis, +1)
                compute commbuf(2 * plane)
            }
            if give[ax] {
                compute commbuf(2 * plane)
                send(to: nbr[2 * ax + 1], bytes: 16 * plane, tag: tag(ax, 1))             // give3_ex(axis, +1)
                compute commbuf(plane)
                send(to: nbr[2 * ax], bytes: 8 * plane, tag: tag(ax, -1))                 // give3_ex(axis, -1)
            }
        } else {
            // comm1p_ex
            let ops = 2 * nm2
            if take[ax] { ops += 2 * nm2 + 3 * plane }
            if give[ax] { ops += 3 * plane }
            compute commbuf(ops)
        }
    }
}

// norm2u3: local sums, then MPI_MAX of rnmu and MPI_SUM of s (one double each)
fn norm2u3(n) {
    compute norm2u3(n[0], n[1], n[2])
    allreduce(bytes: 8, elem: 8, op: max)
    allreduce(bytes: 8, elem: 8, op: sum)
}

// resid at the top level, with its comm3
fn resid_top(G) {
    let n = G[5]
    compute resid(n[0], n[1], n[2])
    comm3(G, n[0], n[1], n[2], lt)
}

// zran3 (with the zero3 of u before it in the main program)
fn zran3(G) {
    let n = G[5]
    compute zero3(n[0], n[1], n[2])            // zero3(u)
    compute zran3(n[0], n[1], n[2])
    barrier()
    for i in 0 .. 10 {                         // mm = 10
        allreduce(bytes: 8, elem: 8, op: max)           // best, MPI_MAX
        allreduce(bytes: 16, elem: 4, op: max)          // jg(0:3, i, 1), 4 INTEGERs
        allreduce(bytes: 8, elem: 8, op: min)           // best, MPI_MIN
        allreduce(bytes: 16, elem: 4, op: max)          // jg(0:3, i, 0)
    }
    barrier()
    comm3(G, n[0], n[1], n[2], lt)
}

// mg3P: one V-cycle
fn mg3P(G) {
    let m = G[0]
    // down cycle: restrict the residual from level k to k-1
    for k in lt .. 1 step -1 {
        let j = k - 1
        compute rprj3(m[j][0], m[j][1], m[j][2])
        comm3(G, m[j][0], m[j][1], m[j][2], j)
    }
    // coarsest grid (lb = 1)
    compute zero3(m[1][0], m[1][1], m[1][2])
    compute psinv(m[1][0], m[1][1], m[1][2])
    comm3(G, m[1][0], m[1][1], m[1][2], 1)
    // up cycle
    for k in 2 .. lt {
        let j = k - 1
        compute zero3(m[k][0], m[k][1], m[k][2])
        compute interp(m[j][0], m[j][1], m[j][2])
        comm3_ex(G, m[k][0], m[k][1], m[k][2], k)
        compute resid(m[k][0], m[k][1], m[k][2])
        comm3(G, m[k][0], m[k][1], m[k][2], k)
        compute psinv(m[k][0], m[k][1], m[k][2])
        comm3(G, m[k][0], m[k][1], m[k][2], k)
    }
    // finest level
    let n = G[5]
    let j = lt - 1
    compute interp(m[j][0], m[j][1], m[j][2])
    comm3_ex(G, n[0], n[1], n[2], lt)
    resid_top(G)
    compute psinv(n[0], n[1], n[2])
    comm3(G, n[0], n[1], n[2], lt)
}

// ---------------------------------------------------------------- main

let p2 = 1
while p2 < size { p2 *= 2 }
if p2 != size {
    abort("mg: the number of ranks must be a power of two, got", size)
}
if size > maxprocs {
    abort("mg: at most", maxprocs, "ranks (globals.h maxprocs), got", size)
}

barrier()                                      // mg.f:116
bcast(bytes: 4, root: 0)                       // lt
bcast(bytes: 4, root: 0)                       // nit
bcast(bytes: 4, root: 0)                       // nx(lt)
bcast(bytes: 4, root: 0)                       // ny(lt)
bcast(bytes: 4, root: 0)                       // nz(lt)
bcast(bytes: 32, root: 0)                      // debug_vec(0:7)
bcast(bytes: 4, root: 0)                       // timeron (LOGICAL)

let G = setup()
let n = G[5]
zran3(G)                                       // zero3(u); zran3(v)
norm2u3(n)                                     // norm of v
resid_top(G)
norm2u3(n)

// one iteration for startup (untimed)
mg3P(G)
resid_top(G)
zran3(G)                                       // setup again; zero3(u); zran3(v)

barrier()                                      // mg.f:272
let t0 = wtime()
resid_top(G)
norm2u3(n)
for it in 1 .. nit + 1 {
    mg3P(G)
    resid_top(G)
}
norm2u3(n)
let t = wtime() - t0

let tmax = reduce(bytes: 8, elem: 8, value: t, op: max, root: 0)   // mg.f:297
if rank == 0 {
    print("Time in seconds =", tmax)
}
if timeron != 0 {
    // t_last + 2 = 11 timers: MPI_SUM, MPI_MIN, MPI_MAX reduces to rank 0
    reduce(bytes: 88, elem: 8, op: sum, root: 0)
    reduce(bytes: 88, elem: 8, op: min, root: 0)
    reduce(bytes: 88, elem: 8, op: max, root: 0)
}
