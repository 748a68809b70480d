/* One MPI_Bcast (root 0), MPI_Reduce (root 0, MPI_INT sum) or MPI_Allreduce
 * of argv[2] bytes between barriers: argv[1] names it. For
 * netmod_fingerprint.sh. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int p; MPI_Comm_size(MPI_COMM_WORLD, &p);
    long n = atol(argv[2]);
    char *s = calloc(n * p + 8, 1), *r = calloc(n * p + 8, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    if (!strcmp(argv[1], "bcast")) MPI_Bcast(s, (int)n, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (!strcmp(argv[1], "reduce")) MPI_Reduce(s, r, (int)(n / 4), MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (!strcmp(argv[1], "allreduce")) MPI_Allreduce(s, r, (int)(n / 4), MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
