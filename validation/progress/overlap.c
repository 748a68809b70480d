/* Does a rendezvous transfer overlap the receiver's computation?
 *
 * Rank 0: MPI_Isend of N bytes, MPI_Wait; rank 1: MPI_Irecv, a busy loop of
 * C seconds (no MPI call), MPI_Wait, or with POLL=1 the same loop with one
 * MPI_Test halfway. Repeated REPS times after a barrier each; prints the
 * median over repetitions of rank 0's time from the Isend to the end of its
 * Wait and rank 1's time from the Irecv to the end of its Wait, in us.
 *
 * Build: mpicc -O2 -o overlap overlap.c
 * Run:   mpirun -np 2 ./overlap BYTES COMPUTE_US POLL REPS
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void busy(double seconds) {
    double end = MPI_Wtime() + seconds;
    while (MPI_Wtime() < end) {
    }
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 5) {
        if (rank == 0) fprintf(stderr, "usage: overlap BYTES COMPUTE_US POLL REPS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long bytes = atol(argv[1]);
    double compute = atof(argv[2]) * 1e-6;
    int poll = atoi(argv[3]);
    int reps = atoi(argv[4]);
    char *buf = malloc(bytes > 0 ? bytes : 1);
    memset(buf, rank, bytes > 0 ? bytes : 1);
    double *t = malloc(sizeof(double) * reps);
    for (int i = -3; i < reps; i++) { /* 3 warm-up repetitions */
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Request r;
        double t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Isend(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            MPI_Irecv(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &r);
            if (poll) {
                int done;
                busy(compute / 2);
                MPI_Test(&r, &done, MPI_STATUS_IGNORE);
                busy(compute / 2);
            } else {
                busy(compute);
            }
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        if (i >= 0) t[i] = (MPI_Wtime() - t0) * 1e6;
    }
    qsort(t, reps, sizeof(double), cmp);
    double mine = t[reps / 2], other = 0;
    if (rank == 1) MPI_Send(&mine, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
    else MPI_Recv(&other, 1, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rank == 0)
        printf("bytes %ld compute_us %.1f poll %d: sender %.2f us, receiver %.2f us\n",
               bytes, compute * 1e6, poll, mine, other);
    free(buf);
    free(t);
    MPI_Finalize();
    return 0;
}
