/*
 * examples/kernels.c: native implementations of the compute kernels of
 * examples/heat.mpl, examples/jacobi.mpl and examples/net.mpl, in the ABI of
 * include/parsim_kernel.h. `parsim calibrate blocks` times them on this
 * machine; `parsim emit-c` calls them from the real MPI program.
 *
 * Scratch slots: 0 and 1 hold a rank's grid (current and next), 2 and 3 the
 * Net program's shadow-edge buffer and auxiliary matrix.
 */
#include "parsim_kernel.h"

PARSIM_KERNEL_LIBRARY

/* A grid of (rows + 2) x (cols + 2) doubles: the owned block and its halo. */
static double *grid(int slot, int64_t rows, int64_t cols) {
    return (double *)parsim_scratch(slot, (size_t)(rows + 2) * (size_t)(cols + 2) * sizeof(double));
}

/* heat.mpl `kernel stencil(rows, cols)`: one explicit step of the 2-D heat
 * equation, u' = u + k (N + S + E + W - 4u), over the owned block, then the
 * new grid becomes the current one. */
PARSIM_KERNEL(stencil) {
    (void)nargs;
    static int current = 0;
    int64_t rows = arg[0], cols = arg[1];
    if (rows <= 0 || cols <= 0) return;
    int64_t w = cols + 2;
    double *u = grid(current, rows, cols);
    double *v = grid(1 - current, rows, cols);
    const double k = 0.1;
    for (int64_t i = 1; i <= rows; i++) {
        const double *up = u + (i - 1) * w, *mid = u + i * w, *dn = u + (i + 1) * w;
        double *out = v + i * w;
        for (int64_t j = 1; j <= cols; j++)
            out[j] = mid[j] + k * (up[j] + dn[j] + mid[j - 1] + mid[j + 1] - 4.0 * mid[j]);
    }
    current = 1 - current;
}

/* jacobi.mpl `kernel relax(rows, cols)`: u'[i][j] = (N + S + E + W) / 4. */
PARSIM_KERNEL(relax) {
    (void)nargs;
    int64_t rows = arg[0], cols = arg[1];
    if (rows <= 0 || cols <= 0) return;
    int64_t w = cols + 2;
    const double *u = grid(0, rows, cols);
    double *v = grid(1, rows, cols);
    for (int64_t i = 1; i <= rows; i++) {
        const double *up = u + (i - 1) * w, *mid = u + i * w, *dn = u + (i + 1) * w;
        double *out = v + i * w;
        for (int64_t j = 1; j <= cols; j++)
            out[j] = 0.25 * (up[j] + dn[j] + mid[j - 1] + mid[j + 1]);
    }
}

/* jacobi.mpl `kernel copyback(rows, cols)`: u = u' over the owned block. */
PARSIM_KERNEL(copyback) {
    (void)nargs;
    int64_t rows = arg[0], cols = arg[1];
    if (rows <= 0 || cols <= 0) return;
    int64_t w = cols + 2;
    double *u = grid(0, rows, cols);
    const double *v = grid(1, rows, cols);
    for (int64_t i = 1; i <= rows; i++)
        memcpy(u + i * w + 1, v + i * w + 1, (size_t)cols * sizeof(double));
}

/*
 * net.mpl's blocks V1..V6 (ParJava paper, Table 2). The Net skeleton passes
 * element counts, not shapes, so the native blocks work on a row-major
 * matrix of `elems` doubles with rows of NET_ROW elements.
 */
#define NET_ROW 1024

static double *net_matrix(int64_t elems) {
    return (double *)parsim_scratch(0, (size_t)(elems + 2 * NET_ROW + 2) * sizeof(double));
}

/* V1: service variables before the loop. The Java original spent 0.3 s in
 * it (JVM and class set-up); in C it is a handful of assignments. */
PARSIM_KERNEL(v1) {
    (void)nargs;
    volatile int64_t sink = 0;
    for (int64_t t = 0; t < arg[0]; t++) sink += t;
}

/* V2: main matrix := random numbers (xorshift64). */
PARSIM_KERNEL(v2) {
    (void)nargs;
    int64_t elems = arg[0];
    if (elems <= 0) return;
    double *m = net_matrix(elems) + NET_ROW + 1;
    static uint64_t s = 88172645463325252ull;
    for (int64_t i = 0; i < elems; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        m[i] = (double)(s >> 11) * (1.0 / 9007199254740992.0);
    }
}

/* V3: main matrix -> shadow-edge buffer (a strided gather, column-wise). */
PARSIM_KERNEL(v3) {
    (void)nargs;
    int64_t elems = arg[0];
    if (elems <= 0) return;
    const double *m = net_matrix(elems * 2) + NET_ROW + 1;
    double *b = (double *)parsim_scratch(2, (size_t)elems * sizeof(double));
    for (int64_t i = 0; i < elems; i++) b[i] = m[2 * i];
}

/* V4: shadow-edge buffer -> main matrix (the scatter back). */
PARSIM_KERNEL(v4) {
    (void)nargs;
    int64_t elems = arg[0];
    if (elems <= 0) return;
    double *m = net_matrix(elems * 2) + NET_ROW + 1;
    const double *b = (const double *)parsim_scratch(2, (size_t)elems * sizeof(double));
    for (int64_t i = 0; i < elems; i++) m[2 * i] = b[i];
}

/* V5: boundary element main -> auxiliary matrix. */
PARSIM_KERNEL(v5) {
    (void)nargs;
    int64_t elems = arg[0];
    if (elems <= 0) return;
    const double *m = net_matrix(elems) + NET_ROW + 1;
    double *a = (double *)parsim_scratch(3, (size_t)elems * sizeof(double));
    for (int64_t i = 0; i < elems; i++) a[i] = m[i];
}

/* V6: `pts` cross-stencil points, each (N + S + E + W) / 4 into the
 * auxiliary matrix. */
PARSIM_KERNEL(v6) {
    (void)nargs;
    int64_t pts = arg[0];
    if (pts <= 0) return;
    const double *m = net_matrix(pts) + NET_ROW + 1;
    double *a = (double *)parsim_scratch(3, (size_t)pts * sizeof(double));
    for (int64_t i = 0; i < pts; i++)
        a[i] = 0.25 * (m[i - NET_ROW] + m[i + NET_ROW] + m[i - 1] + m[i + 1]);
}
