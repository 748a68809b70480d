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
    char *s = malloc(n), *r = malloc(2 * n), *keep = malloc(2 * n);
    memset(s, 1, n); memset(r, 0, 2 * n); memset(keep, 0, 2 * n);
    for (int what = 0; what < 5; what++) {
        double sum = 0; int iters = 300;
        for (int i = 0; i < iters + 20; i++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            char *tmp = what == 0 || what == 3 ? keep : malloc(2 * n);
            if (what != 4) memcpy(tmp + rank * n, s, n);
            MPI_Sendrecv(tmp + rank * n, n, MPI_BYTE, peer, 7, tmp + peer * n, n, MPI_BYTE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (what < 2) memcpy(r, tmp, 2 * n);
            if (tmp != keep) free(tmp);
            double t1 = MPI_Wtime();
            if (i >= 20) sum += t1 - t0;
        }
        double mine = sum / iters, tot;
        MPI_Reduce(&mine, &tot, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        const char *nm[] = {"kept tmp, copies", "malloc tmp, copies", "malloc tmp, copy in only", "kept tmp, copy in only", "malloc tmp, no copies"};
        if (rank == 0) printf("%d %-28s %8.2f us\n", n, nm[what], tot / 2 * 1e6);
    }
    MPI_Finalize();
}
