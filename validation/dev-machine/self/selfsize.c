/* What a message from a rank to itself costs by size, on both ranks at
 * once, as MPICH's scattered alltoall sends its own block (section 4.15):
 * a self pair alone (MPI_Irecv + MPI_Isend to `rank` + MPI_Waitall), a
 * memcpy of the same bytes between the same two buffers, the exchange with
 * the peer alone, the exchange plus the self pair, and MPI_Alltoall.
 * Each: barrier, then the operation timed; mean over ITERS after warm-up;
 * the two ranks' means averaged.
 * mpicc -O2 -o selfsize selfsize.c && mpirun -np 2 ./selfsize */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static char *s, *r;
static double t(int what, int rank, int n, int iters) {
    int peer = 1 - rank; double sum = 0;
    for (int i = 0; i < iters + iters / 10; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_Request q[4];
        switch (what) {
        case 0: MPI_Irecv(r + rank * n, n, MPI_BYTE, rank, 0, MPI_COMM_WORLD, &q[0]);
                MPI_Isend(s + rank * n, n, MPI_BYTE, rank, 0, MPI_COMM_WORLD, &q[1]);
                MPI_Waitall(2, q, MPI_STATUSES_IGNORE); break;
        case 1: memcpy(r + rank * n, s + rank * n, n); break;
        case 2: MPI_Irecv(r + peer * n, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &q[0]);
                MPI_Isend(s + peer * n, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &q[1]);
                MPI_Waitall(2, q, MPI_STATUSES_IGNORE); break;
        case 3: MPI_Irecv(r + rank * n, n, MPI_BYTE, rank, 0, MPI_COMM_WORLD, &q[0]);
                MPI_Irecv(r + peer * n, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &q[1]);
                MPI_Isend(s + rank * n, n, MPI_BYTE, rank, 0, MPI_COMM_WORLD, &q[2]);
                MPI_Isend(s + peer * n, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &q[3]);
                MPI_Waitall(4, q, MPI_STATUSES_IGNORE); break;
        default: MPI_Alltoall(s, n, MPI_BYTE, r, n, MPI_BYTE, MPI_COMM_WORLD);
        }
        double t1 = MPI_Wtime();
        if (i >= iters / 10) sum += t1 - t0;
    }
    double mine = sum / iters, tot;
    MPI_Reduce(&mine, &tot, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    return tot / 2 * 1e6;
}
int main(int c, char **v) {
    MPI_Init(&c, &v); int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int max = 1 << 20;
    s = malloc(2 * max); r = malloc(2 * max);
    memset(s, 1, 2 * max); memset(r, 2, 2 * max);
    if (!rank) printf("%8s %10s %10s %10s %10s %10s\n", "bytes", "self", "memcpy", "peer", "peer+self", "alltoall");
    for (int n = 1; n <= max; n *= 2) {
        int iters = n <= 8192 ? 20000 : n <= 131072 ? 2000 : 400;
        double x[5];
        for (int w = 0; w < 5; w++) x[w] = t(w, rank, n, iters);
        if (!rank) printf("%8d %10.3f %10.3f %10.3f %10.3f %10.3f\n", n, x[0], x[1], x[2], x[3], x[4]);
    }
    MPI_Finalize();
}
