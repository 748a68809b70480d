/* One MPI_Allreduce (MPI_SUM) of argv[1] MPI_INTs between barriers; for
 * lookup_experiment.sh. */
#include <mpi.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    long n = atol(argv[1]);
    int *s = calloc(n + 1, sizeof(int)), *r = calloc(n + 1, sizeof(int));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Allreduce(s, r, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
