/* VALIDATION.md section 4.8: mpicc -O2 -o X X.c && mpirun -np 2 ./X [bytes] */
/* Isolated exchanges between 2 ranks, timed as OMB times a collective:
 * barrier, t0, op, t1, per iteration; mean over iterations. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static double timed(int what, char *s, char *r, int n, int iters, int rank) {
    int peer = 1 - rank;
    double sum = 0;
    int counts[2] = {n, n}, displs[2] = {0, n};
    for (int i = 0; i < iters + 20; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        switch (what) {
        case 0: MPI_Sendrecv(s, n, MPI_BYTE, peer, 0, r, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); break;
        case 1: if (rank == 0) MPI_Send(s, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD); else MPI_Recv(r, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); break;
        case 2: MPI_Allreduce(s, r, n / 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
        case 3: MPI_Allgatherv(s, n, MPI_BYTE, r, counts, displs, MPI_BYTE, MPI_COMM_WORLD); break;
        case 4: { MPI_Request q[2]; MPI_Irecv(r, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &q[0]); MPI_Isend(s, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &q[1]); MPI_Waitall(2, q, MPI_STATUSES_IGNORE); } break;
        case 5: memcpy(r, s, n); break;
        }
        double t1 = MPI_Wtime();
        if (i >= 20) sum += t1 - t0;
    }
    double mine = sum / iters, avg;
    MPI_Reduce(&mine, &avg, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    return avg / 2;
}
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char *s = malloc(4 << 20), *r = malloc(8 << 20);
    memset(s, 1, 4 << 20); memset(r, 0, 8 << 20);
    const char *names[] = {"sendrecv", "send1way", "allreduce", "allgatherv", "isend+irecv", "memcpy"};
    if (rank == 0) printf("%8s %10s %10s %10s %10s %12s %10s\n", "bytes", names[0], names[1], names[2], names[3], names[4], names[5]);
    for (int n = 4096; n <= (1 << 20); n *= 2) {
        double t[6];
        for (int w = 0; w < 6; w++) t[w] = timed(w, s, r, n, 200, rank);
        if (rank == 0) printf("%8d %10.2f %10.2f %10.2f %10.2f %12.2f %10.2f\n", n, t[0]*1e6, t[1]*1e6, t[2]*1e6, t[3]*1e6, t[4]*1e6, t[5]*1e6);
    }
    MPI_Finalize();
}
