// examples/net.mpl: the "Net" program (NIVC MSU parallel IT lab, www.parallel.ru) as modelled
// in V. A. Padaryan, "Estimating parallel program run time with the ParJava interpreter",
// sec. 4.1, paragraph "Программа «Net»", fig. 15, Tables 2 and 3, figs. 16-20; sec. 4.2.
//
// The program, as the paper describes it:
//   - an iterative model numerical method on an M x N matrix of doubles, cut in both
//     directions into a 2-D grid of processes (fig. 15: 6 processes = 2 rows x 3 columns);
//   - each process keeps a main and an auxiliary local matrix plus 1-D shadow-edge buffers;
//   - the shadow-edge ("теневая грань") width w = number of rows (columns) of the local
//     submatrix sent to a neighbour; a larger stencil means a wider edge;
//   - start: service variables are computed (V1), memory allocated, the main matrix filled
//     with random numbers (V2);
//   - each iteration: every shadow edge is packed by CopyMatrixToBuffer (V3), then a
//     nonblocking standard-mode send and a nonblocking receive are started (MPI_Isend,
//     MPI_Irecv; up to 8 buffers with 4 neighbours); MPI_Waitall waits for all of them;
//     CopyBufferToMatrix (V4) copies every received edge into the main matrix; then the
//     boundary elements are copied unchanged into the auxiliary matrix (V5) and all other
//     elements are recomputed with the "cross" stencil (V6); main and auxiliary swap;
//   - at the end rank 0 prints the total time, the time spent copying and transferring
//     shadow edges, and the rest.
//
// Block costs. Table 2 of the paper ("block run-time estimates (ms) obtained on the ISP RAS
// cluster": nodes with two AMD Athlon 1533 MHz, Java = SUN JDK 1.4.2_03) gives, for every
// shadow width 2..20, the mean time of ONE iteration of each homogeneous loop (the whole
// loop was timed and divided by its trip count, so loop overhead is included; V1 is not
// a loop and its entry is its whole run time). The paper put the column MEANS into its
// model for every width, and so do we. Conversion: mean [ms] x 1e-3 = seconds per loop
// iteration, hence per element (V2-V5) and per stencil point (V6):
//       V1 3.25E+02 ms -> 0.325 s once      V4 1.44E-05 ms -> 1.44e-8 s per element
//       V2 2.22E-04 ms -> 2.22e-7 s/element V5 1.28E-05 ms -> 1.28e-8 s per element
//       V3 1.80E-05 ms -> 1.80e-8 s/element V6 4.56E-05 ms -> 4.56e-8 s per stencil point
// Table 3 (Leo cluster, NIVC MSU: two Xeon 2.6 GHz per node) is the v*_leo set below;
// choose it with --param costs=3.
//
// V6 is taken once per recomputed element (the loop body that recomputes one element): in
// Table 2 its estimate is flat in the shadow width w (4.1e-8 .. 5.8e-8 s for w = 2 .. 20),
// so the measured body does not grow with the stencil. --param points=0 instead charges a
// cross of arm w (4 * w + 1 executions per element), --param points=K fixes K.

// Other assumptions: the process grid has pr rows = largest divisor of size that is
// <= sqrt(size) and pc = size / pr columns, ranks row-major; the grid is not periodic; the
// cross stencil needs no corners, so only 4 edges are exchanged; an edge is w whole local
// rows (to the up/down neighbours) or w whole local columns (left/right), 8 bytes per
// element; "boundary elements" (V5) are the owned elements within w of the edge of the
// global matrix, where the stencil does not fit; the rest are recomputed (V6).

param m = 2600         // global rows    (sec. 4.1: 2600 x 2600, 6 processes, 1 per node)
param n = 2600         // global columns
param iters = 1000     // outer sequential loop
param w = 2            // shadow-edge width (Table 2 rows: 2, 3, 6, 8, 10, ..., 20)
param points = 1       // V6 executions per recomputed element; 0 = a cross of arm w: 4*w + 1
param costs = 2        // 2: Table 2 (ISP RAS, Athlon 1533 MHz); 3: Table 3 (Leo, Xeon 2.6 GHz)

// Table 2 means, ISP RAS cluster (seconds on the reference CPU)
kernel v1(times) cost 3.25e-1 * times      // service variables before the loop
kernel v2(elems) cost 2.22e-7 * elems      // main matrix := random numbers
kernel v3(elems) cost 1.80e-8 * elems      // main matrix -> shadow-edge buffer
kernel v4(elems) cost 1.44e-8 * elems      // shadow-edge buffer -> main matrix
kernel v5(elems) cost 1.28e-8 * elems      // boundary element main -> auxiliary
kernel v6(pts) cost 4.56e-8 * pts          // one cross-stencil point of a recomputed element

// Table 3 means, Leo cluster NIVC MSU
kernel v1_leo(times) cost 1.39 * times
kernel v2_leo(elems) cost 3.29e-7 * elems
kernel v3_leo(elems) cost 1.17e-8 * elems
kernel v4_leo(elems) cost 9.45e-9 * elems
kernel v5_leo(elems) cost 8.93e-9 * elems
kernel v6_leo(pts) cost 2.70e-8 * pts

fn setup(elems) {
    if costs == 3 { compute v1_leo(1); compute v2_leo(elems) } else { compute v1(1); compute v2(elems) }
    return 0
}
fn pack(elems) {
    if costs == 3 { compute v3_leo(elems) } else { compute v3(elems) }
    return 0
}
fn unpack(elems) {
    if costs == 3 { compute v4_leo(elems) } else { compute v4(elems) }
    return 0
}
fn sweep(copied, recomputed, pts) {
    if costs == 3 {
        compute v5_leo(copied)
        compute v6_leo(recomputed * pts)
    } else {
        compute v5(copied)
        compute v6(recomputed * pts)
    }
    return 0
}

// rows of the process grid: the largest divisor of p not above sqrt(p), integers only
fn grid_rows(p) {
    let d = 1
    while (d + 1) * (d + 1) <= p { d = d + 1 }
    while p % d != 0 { d = d - 1 }
    return d
}

let pr = grid_rows(size)
let pc = size / pr
let r = rank / pc
let c = rank % pc

// local block: rows x cols, remainders to the first rows / columns of the grid
let rows = m / pr
if r < m % pr { rows = rows + 1 }
let cols = n / pc
if c < n % pc { cols = cols + 1 }

// neighbours, -1 where there is none (the grid is not periodic)
let up = -1
let down = -1
let left = -1
let right = -1
if r > 0 { up = rank - pc }
if r < pr - 1 { down = rank + pc }
if c > 0 { left = rank - 1 }
if c < pc - 1 { right = rank + 1 }

// elements recomputed by the stencil (V6) and copied unchanged (V5)
let rin = rows
let cin = cols
if r == 0 { rin = rin - w }
if r == pr - 1 { rin = rin - w }
if c == 0 { cin = cin - w }
if c == pc - 1 { cin = cin - w }
rin = max(rin, 0)
cin = max(cin, 0)
let recomputed = rin * cin
let copied = rows * cols - recomputed
let pts = points
if pts <= 0 { pts = 4 * w + 1 }

let rowedge = w * cols      // elements of an edge sent up or down
let coledge = w * rows      // elements of an edge sent left or right

let z = 0
let t_start = wtime()
z = setup(rows * cols)
let t_loop = wtime()
let t_exchange = 0.0
for it in 0 .. iters {
    let t0 = wtime()
    // tags name the direction of travel: 1 up, 2 down, 3 left, 4 right
    if up >= 0 {
        z = pack(rowedge)
        let su = isend(to: up, bytes: 8 * rowedge, tag: 1)
        let ru = irecv(from: up, bytes: 8 * rowedge, tag: 2)
    }
    if down >= 0 {
        z = pack(rowedge)
        let sd = isend(to: down, bytes: 8 * rowedge, tag: 2)
        let rd = irecv(from: down, bytes: 8 * rowedge, tag: 1)
    }
    if left >= 0 {
        z = pack(coledge)
        let sl = isend(to: left, bytes: 8 * coledge, tag: 3)
        let rl = irecv(from: left, bytes: 8 * coledge, tag: 4)
    }
    if right >= 0 {
        z = pack(coledge)
        let sr = isend(to: right, bytes: 8 * coledge, tag: 4)
        let rr = irecv(from: right, bytes: 8 * coledge, tag: 3)
    }
    waitall()               // MPI_Waitall over this iteration's requests
    if up >= 0 { z = unpack(rowedge) }
    if down >= 0 { z = unpack(rowedge) }
    if left >= 0 { z = unpack(coledge) }
    if right >= 0 { z = unpack(coledge) }
    t_exchange = t_exchange + (wtime() - t0)

    z = sweep(copied, recomputed, pts)
}
let t_end = wtime()
if rank == 0 {
    print("net total", t_end - t_start)
    print("net exchange (pack + comm + unpack)", t_exchange)
    print("net other", (t_end - t_start) - t_exchange)
    print("net grid", pr, pc, "block", rows, cols, "width", w, "points", pts)
}
