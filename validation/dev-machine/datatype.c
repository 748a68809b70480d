/* What a derived datatype costs the MPI library (VALIDATION.md section
 * 5.4, the small alltoall): MPI_Type_create_indexed_block of k one-byte
 * blocks + MPI_Type_commit + MPI_Type_free, and MPI_Pack through it, per
 * call, on one rank. Bruck's alltoall builds such a type of p/2 blocks in
 * each of its log2(p) steps (MPICH MPIR_Alltoall_intra_brucks, Open MPI
 * ompi_coll_base_alltoall_intra_bruck) and sends and receives through it.
 *   mpicc -O2 validation/dev-machine/datatype.c -o datatype && mpirun -n 1 ./datatype
 */
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    static char buf[1 << 20], out[1 << 20];
    int displs[4096];
    for (int k = 1; k <= 2048; k *= 4) {
        for (int i = 0; i < k; i++) displs[i] = 2 * i;
        int reps = 20000 / (k < 64 ? 1 : k / 64);
        double t0 = MPI_Wtime();
        for (int r = 0; r < reps; r++) {
            MPI_Datatype t;
            MPI_Type_create_indexed_block(k, 1, displs, MPI_CHAR, &t);
            MPI_Type_commit(&t);
            MPI_Type_free(&t);
        }
        double create = (MPI_Wtime() - t0) / reps;
        MPI_Datatype t;
        MPI_Type_create_indexed_block(k, 1, displs, MPI_CHAR, &t);
        MPI_Type_commit(&t);
        t0 = MPI_Wtime();
        for (int r = 0; r < reps; r++) {
            int pos = 0;
            MPI_Pack(buf, 1, t, out, sizeof out, &pos, MPI_COMM_SELF);
        }
        double pack = (MPI_Wtime() - t0) / reps;
        MPI_Type_free(&t);
        printf("%5d blocks: create+commit+free %.3f us, pack %.3f us\n", k, create * 1e6, pack * 1e6);
    }
    MPI_Finalize();
}
