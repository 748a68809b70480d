param S = 0
param W = 1
param A = 2
param B = 3
param C = 4
param class = S      // --param class=A selects class A

// examples/npb/cg.mpl: NAS Parallel Benchmarks 3.3 (MPI) CG as a parsim skeleton.
//
// CG estimates the smallest eigenvalue of a large sparse symmetric positive
// definite random matrix by inverse power iteration: each of the niter outer
// iterations solves A z = x with 25 unpreconditioned conjugate-gradient steps
// (routine conj_grad) and normalises z into the next x. The ranks form a 2-D
// grid of nprows x npcols (both powers of two, npcols = nprows or
// 2 * nprows); rank me = proc_row * npcols + proc_col owns the block
// rows firstrow..lastrow x columns firstcol..lastcol of A. Communication is
// point-to-point only, every exchange an mpi_irecv + mpi_send + mpi_wait:
//   - dot products: a recursive-doubling sum over the log2(npcols) partners
//     of the processor row (reduce_exch_proc), one double (two for the norms
//     of the outer iteration), tag = step number;
//   - after each sparse mat-vec: the same partners, steps log2(npcols)..1,
//     exchanging pieces of the partial product vector (reduce_send_lengths /
//     reduce_recv_lengths doubles), then one exchange with the transpose
//     processor exch_proc (tag 1; on 2 ranks, and on the diagonal of a square
//     grid, exch_proc is the rank itself: a message to itself);
//   - on one rank (l2npcols = 0) none of this, only local copies.
// Around it: mpi_bcast of the timer flag (initialize_mpi), one untimed
// warm-up outer iteration, mpi_barrier, the timed niter iterations, and the
// mpi_reduce (MPI_MAX) of the time to rank 0. The timer.flag file is assumed
// absent (timeron = false), as in the reference runs, so the three extra
// timer reductions at the end are not made.
//
// Follows NPB3.3-MPI/CG/cg.f (program cg, initialize_mpi, setup_proc_info,
// setup_submatrix_info, conj_grad, makea) and sys/setparams.c
// (write_cg_info: class sizes and the process grid; check_info: the process
// count must be a power of two). Every communication call of cg.f is here, in
// the same order, with the same peers, tags and sizes; setup_submatrix_info
// is transcribed exactly (including the uneven split when na is not
// divisible by the grid and the halving of columns on a non-square grid).
//
// Simplified (no effect on communication): the matrix and vectors are not
// computed, only charged. The number of nonzeros of a rank's block is taken
// as nonzer*(nonzer+1) per row of A spread evenly over the columns (the count
// NPB itself uses for its Mop/s figure), i.e.
// nonzer*(nonzer+1) * nrows * ncols / na, not the exact count makea would
// produce. makea (untimed setup) is charged by a rough operation count.
// Class D and E (na = 1.5e6 / 9e6) are not offered, as the brief's class
// list is S..C.
//
// Classes (setparams.c write_cg_info):
//   class      na    nonzer  niter  shift
//   S        1400       7     15     10
//   W        7000       8     15     12
//   A       14000      11     15     20
//   B       75000      13     75     60
//   C      150000      15     75    110
// Process grid (write_cg_info): with l = log2(P), nprows = 2^floor(l/2),
// npcols = 2^(l - floor(l/2)).

param na     = [1400, 7000, 14000, 75000, 150000][class]
param nonzer = [7, 8, 11, 13, 15][class]
param niter  = [15, 15, 15, 75, 75][class]
param cgitmax = 25         // conj_grad's CG steps per outer iteration (data cgitmax / 25 /)
param op_time = 1.0e-9     // seconds per counted operation (calibrated from a one-rank run)
param row_ops = 0.0        // the matrix product's cost per row of the block, in operations (see matvec)

// ---------------------------------------------------------------------------
// Kernels. One "operation" = one floating-point add or multiply, or one
// element store in a loop that only copies or clears. nrows = lastrow -
// firstrow + 1, ncols = lastcol - firstcol + 1 (the rank's block of A),
// nvec = na/nprows + 1 (the length the source uses for its vector loops).
// ---------------------------------------------------------------------------

// makea + sparse (untimed setup): every rank generates all na sparse random
// vectors (sprnvc: about nonzer accepted pairs of randlc draws, ~32 ops per
// nonzero incl. bookkeeping), keeps the outer-product entries that fall into
// its block (about (nonzer+1)^2 * nrows * ncols / na of them, ~4 ops each to
// store) and sparse() sorts/merges them into CSR (~10 ops each); then the
// colidx shift loop of the main program (1 per nonzero).
kernel makea(nrows, ncols) cost op_time * (32.0 * na * nonzer +
    15.0 * (nonzer + 1) * (nonzer + 1) * nrows * ncols / na)

// main program: x(i) = 1 for i = 1..na/nprows+1 (before the warm-up and
// before the timed loop): nvec stores.
kernel x_reset(nvec) cost op_time * nvec

// conj_grad, "Initialize the CG algorithm" loop (q, z, r, p, w over
// j = 1..na/nprows+1: 5 stores each) and the local rho = r.r (2 per column).
kernel cg_init(nvec, ncols) cost op_time * (5.0 * nvec + 2.0 * ncols)

// conj_grad, q = A.p (and at the end A.z): the partition submatrix-vector
// multiply, 2 flops (multiply + add) per nonzero of the block, and row_ops
// per row: the row loop's own work (its bounds from rowstr, the sum's
// start and store, and the exit of an inner loop whose length changes from
// row to row, which a branch predictor mostly misses). A CSR product costs
// per nonzero and per row (Williams et al., "Optimization of sparse
// matrix-vector multiplication on emerging multicore platforms", SC 2007);
// the per-row part matters when the ranks of a process row each hold every
// row and a fraction of the columns, as at 2 ranks (1,400 rows of 28
// nonzeros instead of 56 in class S). row_ops is measured on the target by
// timing this loop on the class's real matrix and on its column halves
// (validation/npb/cgmv.f: 2 x c_row / c_nonzero); 0 charges the nonzeros
// alone.
kernel matvec(nrows, ncols) cost op_time * (2.0 * nonzer * (nonzer + 1) * nrows * ncols / na +
    row_ops * nrows)

// conj_grad, after each step of the row sum: w(j) = w(j) + q(j) over the
// received piece, 1 add per received element.
kernel row_sum(n) cost op_time * n

// conj_grad on one rank (l2npcols = 0): q(j) = w(j) (or r(j) = w(j)) instead
// of the transpose exchange, exch_recv_length stores.
kernel local_copy(n) cost op_time * n

// conj_grad, "Clear w for reuse" (max(nrows, ncols) stores) and the local
// p.q (2 per column).
kernel clear_pq(nclear, ncols) cost op_time * (nclear + 2.0 * ncols)

// conj_grad, z = z + alpha*p and r = r - alpha*q (4 per column) and the
// local rho = r.r (2 per column).
kernel zr_update(ncols) cost op_time * 6.0 * ncols

// conj_grad, p = r + beta*p: 2 per column.
kernel p_update(ncols) cost op_time * 2.0 * ncols

// conj_grad, residual: d = x(j) - r(j); sum = sum + d*d: 3 per column.
kernel resid_norm(ncols) cost op_time * 3.0 * ncols

// main program, the local x.z and z.z after conj_grad: 4 per column.
kernel norm_xz(ncols) cost op_time * 4.0 * ncols

// main program, x = norm_temp1(2) * z: 1 per column.
kernel x_normalize(ncols) cost op_time * ncols

// ---------------------------------------------------------------------------
// Decomposition (setup_submatrix_info, transcribed).
// ---------------------------------------------------------------------------

// [firstrow, lastrow, firstcol, lastcol] of rank me (1-based, as in cg.f).
fn submatrix(me, nprows, npcols) {
    let proc_row = me / npcols
    let proc_col = me - proc_row * npcols
    let firstrow = 0
    let lastrow = 0
    let firstcol = 0
    let lastcol = 0
    if na / npcols * npcols == na {
        let col_size = na / npcols
        firstcol = proc_col * col_size + 1
        lastcol = firstcol - 1 + col_size
        let row_size = na / nprows
        firstrow = proc_row * row_size + 1
        lastrow = firstrow - 1 + row_size
    } else {
        let rrem = na - na / nprows * nprows
        if proc_row < rrem {
            let row_size = na / nprows + 1
            firstrow = proc_row * row_size + 1
            lastrow = firstrow - 1 + row_size
        } else {
            let row_size = na / nprows
            firstrow = rrem * (row_size + 1) + (proc_row - rrem) * row_size + 1
            lastrow = firstrow - 1 + row_size
        }
        if npcols == nprows {
            let crem = na - na / npcols * npcols
            if proc_col < crem {
                let col_size = na / npcols + 1
                firstcol = proc_col * col_size + 1
                lastcol = firstcol - 1 + col_size
            } else {
                let col_size = na / npcols
                firstcol = crem * (col_size + 1) + (proc_col - crem) * col_size + 1
                lastcol = firstcol - 1 + col_size
            }
        } else {
            let h = npcols / 2
            let crem = na - na / h * h
            let col_size = 0
            if proc_col / 2 < crem {
                col_size = na / h + 1
                firstcol = (proc_col / 2) * col_size + 1
                lastcol = firstcol - 1 + col_size
            } else {
                col_size = na / h
                firstcol = crem * (col_size + 1) + (proc_col / 2 - crem) * col_size + 1
                lastcol = firstcol - 1 + col_size
            }
            if me % 2 == 0 {
                lastcol = firstcol - 1 + (col_size - 1) / 2 + 1
            } else {
                firstcol = firstcol + (col_size - 1) / 2 + 1
                lastcol = firstcol - 1 + col_size / 2
            }
        }
    }
    return [firstrow, lastrow, firstcol, lastcol]
}

// ---------------------------------------------------------------------------
// The row reductions and the transpose exchange of conj_grad.
// geo = [l2npcols, exch_proc, exch_recv_length, send_len, nrows, ncols, nvec]
// rx, rs, rr: reduce_exch_proc, reduce_send_lengths, reduce_recv_lengths
// (element i-1 for the source's index i).
// ---------------------------------------------------------------------------

// "Exchange and sum with procs identified in reduce_exch_proc": a sum of
// `count` doubles over the processor row (cg.f 1149/1273/1330/1458, and the
// two-double norm of the main program, 413/516).
fn row_allreduce(l2npcols, rx, count) {
    for i in 1 .. l2npcols + 1 {
        let req = irecv(from: rx[i - 1], bytes: 8 * count, tag: i)
        send(to: rx[i - 1], bytes: 8 * count, tag: i)
        wait(req)
    }
}

// "Sum the partition submatrix-vec A.p's across rows" (steps l2npcols..1)
// and "Exchange piece of q with transpose processor" (cg.f 1199-1235,
// 1390-1427).
fn rowsum_transpose(geo, rx, rs, rr) {
    let l2npcols = geo[0]
    for i in l2npcols .. 0 step -1 {
        let req = irecv(from: rx[i - 1], bytes: 8 * rr[i - 1], tag: i)
        send(to: rx[i - 1], bytes: 8 * rs[i - 1], tag: i)
        wait(req)
        compute row_sum(rr[i - 1])
    }
    if l2npcols != 0 {
        let req = irecv(from: geo[1], bytes: 8 * geo[2], tag: 1)
        send(to: geo[1], bytes: 8 * geo[3], tag: 1)
        wait(req)
    } else {
        compute local_copy(geo[2])
    }
}

// conj_grad: 25 CG steps and the explicit residual ||x - A.z||.
fn conj_grad(geo, rx, rs, rr) {
    let l2npcols = geo[0]
    let nrows = geo[4]
    let ncols = geo[5]
    compute cg_init(geo[6], ncols)
    row_allreduce(l2npcols, rx, 1)                 // rho = r.r
    for cgit in 1 .. cgitmax + 1 {
        compute matvec(nrows, ncols)               // w = A.p
        rowsum_transpose(geo, rx, rs, rr)          // q = sum over the row, transposed
        compute clear_pq(max(nrows, ncols), ncols) // clear w; p.q
        row_allreduce(l2npcols, rx, 1)             // d = p.q
        compute zr_update(ncols)                   // z, r updates; r.r
        row_allreduce(l2npcols, rx, 1)             // rho = r.r
        compute p_update(ncols)                    // p = r + beta*p
    }
    compute matvec(nrows, ncols)                   // w = A.z
    rowsum_transpose(geo, rx, rs, rr)              // r = A.z
    compute resid_norm(ncols)                      // (x - r).(x - r)
    row_allreduce(l2npcols, rx, 1)                 // d
}

// One outer (inverse power) iteration of the main program.
fn outer_iteration(geo, rx, rs, rr) {
    conj_grad(geo, rx, rs, rr)
    compute norm_xz(geo[5])                        // x.z, z.z
    row_allreduce(geo[0], rx, 2)                   // norm_temp1(1:2)
    compute x_normalize(geo[5])                    // x = z / ||z||
}

// ---------------------------------------------------------------------------
// main (program cg)
// ---------------------------------------------------------------------------

// initialize_mpi: root reads timer.flag and broadcasts timeron (a logical).
bcast(bytes: 4, root: 0)

// setparams check_info / setup_proc_info: the number of processes must be a
// power of two (the program is compiled for one count; a run on another
// count, or a non-power of two, stops).
let l2p = 0
let pp = 1
while pp < size {
    pp *= 2
    l2p += 1
}
if pp != size {
    abort("cg: the number of ranks must be a power of two (1, 2, 4, ...), got", size)
}
let nprows = 1
for i in 0 .. l2p / 2 { nprows *= 2 }
let npcols = size / nprows                      // = nprows or 2 * nprows

// setup_submatrix_info
let me = rank
let proc_row = me / npcols
let proc_col = me - proc_row * npcols
let sm = submatrix(me, nprows, npcols)
let firstrow = sm[0]
let lastrow = sm[1]
let firstcol = sm[2]
let lastcol = sm[3]
let nrows = lastrow - firstrow + 1
let ncols = lastcol - firstcol + 1

let send_start = 1
let send_len = nrows
if npcols != nprows {
    if me % 2 == 0 {
        send_start = 1
        send_len = (1 + nrows) / 2
    } else {
        send_start = (1 + nrows) / 2 + 1
        send_len = nrows / 2
    }
}

let exch_proc = 0
if npcols == nprows {
    exch_proc = me % nprows * nprows + me / nprows
} else {
    exch_proc = 2 * ((me / 2) % nprows * nprows + me / 2 / nprows) + me % 2
}

let l2npcols = 0
let t2 = npcols / 2
while t2 > 0 {
    l2npcols += 1
    t2 = t2 / 2
}

let rx = array(l2npcols, 0)        // reduce_exch_proc
let rs = array(l2npcols, 0)        // reduce_send_lengths
let rr = array(l2npcols, 0)        // reduce_recv_lengths
let div_factor = npcols
for i in 1 .. l2npcols + 1 {
    let j = (proc_col + div_factor / 2) % div_factor + proc_col / div_factor * div_factor
    rx[i - 1] = proc_row * npcols + j
    div_factor = div_factor / 2
}
for i in l2npcols .. 0 step -1 {
    if nprows == npcols {
        rs[i - 1] = send_len
        rr[i - 1] = nrows
    } else {
        rr[i - 1] = send_len
        if i == l2npcols {
            rs[i - 1] = nrows - send_len
        } else {
            rs[i - 1] = send_len
        }
    }
}
let exch_recv_length = ncols
let nvec = na / nprows + 1
let geo = [l2npcols, exch_proc, exch_recv_length, send_len, nrows, ncols, nvec]

// makea (and the colidx shift), untimed
compute makea(nrows, ncols)
compute x_reset(nvec)

// one untimed iteration to initialise code and page tables
outer_iteration(geo, rx, rs, rr)
compute x_reset(nvec)

// synchronise and start timing
barrier()
let t0 = wtime()
for it in 1 .. niter + 1 {
    outer_iteration(geo, rx, rs, rr)
}
let t = wtime() - t0

// the time reported is the largest over the ranks
let tmax = reduce(bytes: 8, elem: 8, value: t, op: max, root: 0)
if rank == 0 {
    print("Time in seconds =", tmax)
}
