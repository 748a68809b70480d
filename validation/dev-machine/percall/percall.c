/* What each collective costs per call at 4 bytes on 2 ranks (VALIDATION.md
 * 4.18), timed two ways in one process, alternately: back to back (IMB's
 * PMB-style loop: 20,000 calls, the mean per call) and alone (OSU's way:
 * a barrier, then the call between two MPI_Wtime reads, the mean of 20,000).
 * Each figure is the mean of the two ranks; three rounds.
 * mpicc -O2 -o percall percall.c && mpirun -np 2 ./percall */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#define N 11
static const char *names[N] = {"barrier", "bcast", "reduce", "allreduce", "allgather",
    "allgatherv", "alltoall", "alltoallv", "gather", "scatter", "reduce_scatter"};
static float s[64], r[64];
static int cnt[2] = {1, 1}, dis[2] = {0, 1}, bcnt[2] = {4, 4}, bdis[2] = {0, 4};
static void call(int k) {
    switch (k) {
    case 0: MPI_Barrier(MPI_COMM_WORLD); break;
    case 1: MPI_Bcast(s, 4, MPI_BYTE, 0, MPI_COMM_WORLD); break;
    case 2: MPI_Reduce(s, r, 1, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD); break;
    case 3: MPI_Allreduce(s, r, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
    case 4: MPI_Allgather(s, 4, MPI_BYTE, r, 4, MPI_BYTE, MPI_COMM_WORLD); break;
    case 5: MPI_Allgatherv(s, 4, MPI_BYTE, r, bcnt, bdis, MPI_BYTE, MPI_COMM_WORLD); break;
    case 6: MPI_Alltoall(s, 4, MPI_BYTE, r, 4, MPI_BYTE, MPI_COMM_WORLD); break;
    case 7: MPI_Alltoallv(s, bcnt, bdis, MPI_BYTE, r, bcnt, bdis, MPI_BYTE, MPI_COMM_WORLD); break;
    case 8: MPI_Gather(s, 4, MPI_BYTE, r, 4, MPI_BYTE, 0, MPI_COMM_WORLD); break;
    case 9: MPI_Scatter(s, 4, MPI_BYTE, r, 4, MPI_BYTE, 0, MPI_COMM_WORLD); break;
    default: MPI_Reduce_scatter(s, r, cnt, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
}
int main(int c, char **v) {
    MPI_Init(&c, &v);
    int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    (void)dis;
    const int iters = 20000;
    if (!rank) printf("%-16s %10s %10s\n", "call (4 B)", "loop_us", "alone_us");
    for (int round = 0; round < 3; round++) {
        for (int k = 0; k < N; k++) {
            double mine[2], sum[2];
            for (int i = 0; i < 1000; i++) call(k);
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < iters; i++) call(k);
            mine[0] = (MPI_Wtime() - t0) / iters;
            double t = 0;
            for (int i = 0; i < iters; i++) {
                MPI_Barrier(MPI_COMM_WORLD);
                double a = MPI_Wtime();
                call(k);
                t += MPI_Wtime() - a;
            }
            mine[1] = t / iters;
            MPI_Reduce(mine, sum, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            if (!rank) printf("%-16s %10.3f %10.3f\n", names[k], sum[0] / 2 * 1e6, sum[1] / 2 * 1e6);
        }
    }
    MPI_Finalize();
}
