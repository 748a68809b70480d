#include <mpi.h>
#include <stdio.h>
#define N 20000
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv); int r; MPI_Comm_rank(MPI_COMM_WORLD, &r);
  float a[8] = {0}, b[16] = {0}; int cnt[2], dsp[2] = {0, 1};
  for (int c = 0; c <= 1; c++) {
    double t[9]; cnt[0] = cnt[1] = c; double t0;
#define T(k, call) MPI_Barrier(MPI_COMM_WORLD); t0 = MPI_Wtime(); for (int i = 0; i < N; i++) call; t[k] = (MPI_Wtime() - t0) / N * 1e6;
    T(0, MPI_Allreduce(a, b, c, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD))
    T(1, MPI_Reduce(a, b, c, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD))
    T(2, MPI_Bcast(a, c, MPI_FLOAT, 0, MPI_COMM_WORLD))
    T(3, MPI_Allgather(a, c, MPI_FLOAT, b, c, MPI_FLOAT, MPI_COMM_WORLD))
    T(4, MPI_Alltoall(a, c, MPI_FLOAT, b, c, MPI_FLOAT, MPI_COMM_WORLD))
    T(5, MPI_Gather(a, c, MPI_FLOAT, b, c, MPI_FLOAT, 0, MPI_COMM_WORLD))
    T(6, MPI_Scatter(a, c, MPI_FLOAT, b, c, MPI_FLOAT, 0, MPI_COMM_WORLD))
    T(7, MPI_Reduce_scatter(a, b, cnt, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD))
    T(8, MPI_Allgatherv(a, c, MPI_FLOAT, b, cnt, dsp, MPI_FLOAT, MPI_COMM_WORLD))
    if (r == 0) printf("count %d: allreduce %.3f reduce %.3f bcast %.3f allgather %.3f alltoall %.3f gather %.3f scatter %.3f reduce_scatter %.3f allgatherv %.3f\n", c, t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8]);
  }
  MPI_Finalize(); }
