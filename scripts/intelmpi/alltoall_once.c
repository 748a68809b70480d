/* One MPI_Alltoall of argv[1] bytes per destination (MPI_CHAR), between
 * barriers; for lookup_experiment.sh. */
#include <mpi.h>
#include <stdlib.h>
#include <stdio.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int p; MPI_Comm_size(MPI_COMM_WORLD, &p);
    long n = atol(argv[1]);
    char *s = calloc(n * p + 1, 1), *r = calloc(n * p + 1, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Alltoall(s, (int)n, MPI_CHAR, r, (int)n, MPI_CHAR, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
