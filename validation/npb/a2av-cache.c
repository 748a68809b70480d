/* a2av-cache: what MPI_Alltoallv of 2 ranks costs when its buffers are in
 * the caches (a benchmark's loop), when they were just written by the
 * sender (an application that computes its data, then sends it: NPB IS's
 * key exchange), and when they are cold (24 buffer sets in turn, beyond
 * the caches). VALIDATION.md section 7.2.
 *
 *   mpicc -O2 -o a2av-cache validation/npb/a2av-cache.c
 *   mpirun -np 2 ./a2av-cache
 *
 * prints per size (bytes per peer) and mode the mean time of 40 calls
 * (after 5 untimed), each after a barrier. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const long sizes[] = {65536, 262144, 1 << 20, 2 << 20};
    const char *names[] = {"hot", "cold", "just written"};
    enum { SETS = 24, ITERS = 40, SKIP = 5 };
    for (int si = 0; si < 4; si++) {
        long n = sizes[si];
        char *sb[SETS], *rb[SETS];
        for (int k = 0; k < SETS; k++) {
            sb[k] = malloc(2 * n);
            rb[k] = malloc(2 * n);
            if (!sb[k] || !rb[k]) MPI_Abort(MPI_COMM_WORLD, 1);
            memset(sb[k], k, 2 * n);
            memset(rb[k], 0, 2 * n);
        }
        int counts[2] = {(int)n, (int)n}, displs[2] = {0, (int)n};
        for (int mode = 0; mode < 3; mode++) {
            double total = 0.0;
            for (int i = 0; i < ITERS + SKIP; i++) {
                int k = mode == 0 ? 0 : i % SETS;
                if (mode == 2) memset(sb[k], i, 2 * n);
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                MPI_Alltoallv(sb[k], counts, displs, MPI_BYTE, rb[k], counts, displs, MPI_BYTE,
                              MPI_COMM_WORLD);
                if (i >= SKIP) total += MPI_Wtime() - t0;
            }
            if (me == 0)
                printf("%8ld B per peer, %-12s %8.1f us (%.2f GB/s per rank)\n", n, names[mode],
                       total / ITERS * 1e6, 2.0 * n / (total / ITERS) / 1e9);
        }
        for (int k = 0; k < SETS; k++) {
            free(sb[k]);
            free(rb[k]);
        }
    }
    MPI_Finalize();
    return 0;
}
