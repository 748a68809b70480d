/* VALIDATION.md section 4.8: mpicc -O2 -o X X.c && mpirun -np 2 ./X [bytes] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int peer = 1 - rank;
    int n = argc > 1 ? atoi(argv[1]) : 131072;
    char *s = malloc(n), *r = malloc(2 * n);
    memset(s, 1, n); memset(r, 0, 2 * n);
    int counts[2] = {n, n}, displs[2] = {0, n};
    MPI_Comm dup; MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    for (int what = 0; what < 6; what++) {
        double sum = 0; int iters = 300;
        for (int i = 0; i < iters + 20; i++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            if (what == 0) MPI_Allgatherv(s, n, MPI_BYTE, r, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
            else if (what == 1 || what == 2) {
                char *tmp = malloc(2 * n);
                memcpy(tmp + rank * n, s, n);
                MPI_Sendrecv(tmp + rank * n, n, MPI_BYTE, peer, 7, tmp + peer * n, n, MPI_BYTE, peer, 7, what == 1 ? MPI_COMM_WORLD : dup, MPI_STATUS_IGNORE);
                memcpy(r, tmp, 2 * n);
                free(tmp);
            } else if (what == 3) {
                MPI_Sendrecv(s, n, MPI_BYTE, peer, 7, r + peer * n, n, MPI_BYTE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (what == 4) {
                MPI_Sendrecv(s, n, MPI_BYTE, peer, 7, r + peer * n, n, MPI_BYTE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                memcpy(r + rank * n, s, n);
            } else {
                MPI_Allgather(s, n, MPI_BYTE, r, n, MPI_BYTE, MPI_COMM_WORLD);
            }
            double t1 = MPI_Wtime();
            if (i >= 20) sum += t1 - t0;
        }
        double mine = sum / iters, tot;
        MPI_Reduce(&mine, &tot, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        const char *nm[] = {"MPI_Allgatherv", "replica (malloc tmp, world)", "replica (malloc tmp, dup comm)", "sendrecv into r", "sendrecv + own copy", "MPI_Allgather"};
        if (rank == 0) printf("%d %-32s %8.2f us\n", n, nm[what], tot / 2 * 1e6);
    }
    MPI_Finalize();
}
