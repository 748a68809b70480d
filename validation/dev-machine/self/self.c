/* MPICH scattered alltoall exchanges the own block with itself through MPI
 * (alltoall_intra_scattered.c, v4.0.2): what a self pair costs beside the
 * peer exchange. mpicc -O2 -o self self.c && mpirun -np 2 ./self
 * (2026-11-28: MPI_Alltoall 1 B 0.49-0.62 us; peer isend+irecv 0.28;
 * with a pair to self 0.345; a self pair alone 0.12). Not modelled yet. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
static double t(int what, int rank) {
    char s[16] = {0}, r[16];
    int peer = 1 - rank; double sum = 0; int iters = 20000;
    for (int i = 0; i < iters + 100; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_Request q[4];
        if (what == 0) { MPI_Alltoall(s, 1, MPI_BYTE, r, 1, MPI_BYTE, MPI_COMM_WORLD); }
        else if (what == 1) { MPI_Irecv(r + 1, 1, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &q[0]); MPI_Isend(s, 1, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &q[1]); MPI_Waitall(2, q, MPI_STATUSES_IGNORE); }
        else if (what == 2) { MPI_Irecv(r, 1, MPI_BYTE, rank, 0, MPI_COMM_WORLD, &q[0]); MPI_Irecv(r + 1, 1, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &q[1]); MPI_Isend(s, 1, MPI_BYTE, rank, 0, MPI_COMM_WORLD, &q[2]); MPI_Isend(s + 1, 1, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &q[3]); MPI_Waitall(4, q, MPI_STATUSES_IGNORE); }
        else { MPI_Irecv(r, 1, MPI_BYTE, rank, 0, MPI_COMM_WORLD, &q[0]); MPI_Isend(s, 1, MPI_BYTE, rank, 0, MPI_COMM_WORLD, &q[1]); MPI_Waitall(2, q, MPI_STATUSES_IGNORE); }
        double t1 = MPI_Wtime();
        if (i >= 100) sum += t1 - t0;
    }
    double mine = sum / iters, tot;
    MPI_Reduce(&mine, &tot, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    return tot / 2 * 1e6;
}
int main(int c, char **v) {
    MPI_Init(&c, &v); int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *nm[] = {"MPI_Alltoall 1 B", "isend+irecv with the peer", "the same plus a pair to self", "a pair to self alone"};
    for (int k = 0; k < 2; k++) for (int w = 0; w < 4; w++) { double x = t(w, rank); if (!rank) printf("%-32s %.3f us\n", nm[w], x); }
    MPI_Finalize();
}
