/* What a small collective call costs beyond its messages (VALIDATION.md
 * section 4.14): each operation timed alone after a barrier, as OMB times a
 * collective (osu_util.h), mean over ITERS calls, 2 ranks. The replicas do
 * by hand what MPICH 4.0.2's algorithm for the call does at 2 ranks
 * (recursive doubling allreduce: MPIR_Localcopy of sendbuf, a tmp_buf
 * malloc'd, MPIC_Sendrecv, MPIR_Reduce_local, free). Build: mpicc -O2
 * small.c -o small; run: mpirun -np 2 ./small. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ITERS 20000
#define WARM 2000

static int rank, peer;
static float sbuf[1024], rbuf[1024], tbuf[1024];
static char cs[64], cr[64];

typedef void (*op_t)(void);

static void allreduce(void) { MPI_Allreduce(sbuf, rbuf, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); }
static void sendrecv(void) {
    MPI_Sendrecv(sbuf, 1, MPI_FLOAT, peer, 7, rbuf, 1, MPI_FLOAT, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}
static void rep_nomalloc(void) {
    memcpy(rbuf, sbuf, 4);
    MPI_Sendrecv(rbuf, 1, MPI_FLOAT, peer, 7, tbuf, 1, MPI_FLOAT, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Reduce_local(tbuf, rbuf, 1, MPI_FLOAT, MPI_SUM);
}
static void rep_malloc(void) {
    float *t = malloc(4);
    memcpy(rbuf, sbuf, 4);
    MPI_Sendrecv(rbuf, 1, MPI_FLOAT, peer, 7, t, 1, MPI_FLOAT, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Reduce_local(t, rbuf, 1, MPI_FLOAT, MPI_SUM);
    free(t);
}
static void mallocfree(void) { void *volatile p = malloc(4); free(p); }
static void reduce_local(void) { MPI_Reduce_local(tbuf, rbuf, 1, MPI_FLOAT, MPI_SUM); }
static void allgather(void) { MPI_Allgather(cs, 1, MPI_CHAR, cr, 1, MPI_CHAR, MPI_COMM_WORLD); }
static void allgatherv(void) {
    int counts[2] = {1, 1}, displs[2] = {0, 1};
    MPI_Allgatherv(cs, 1, MPI_CHAR, cr, counts, displs, MPI_CHAR, MPI_COMM_WORLD);
}
static void alltoall(void) { MPI_Alltoall(cs, 1, MPI_CHAR, cr, 1, MPI_CHAR, MPI_COMM_WORLD); }
static void reduce_scatter(void) {
    int counts[2] = {1, 1};
    MPI_Reduce_scatter(sbuf, rbuf, counts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}
static void bcast(void) { MPI_Bcast(cs, 1, MPI_CHAR, 0, MPI_COMM_WORLD); }
static void barrier(void) { MPI_Barrier(MPI_COMM_WORLD); }
static void isend_irecv_self(void) {
    MPI_Request r[2];
    MPI_Irecv(cr, 1, MPI_CHAR, rank, 9, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(cs, 1, MPI_CHAR, rank, 9, MPI_COMM_WORLD, &r[1]);
    MPI_Status st[2];
    MPI_Waitall(2, r, st);
}

static double timed(op_t op, int barrier_between) {
    double total = 0;
    for (int i = 0; i < WARM + ITERS; i++) {
        double t0 = MPI_Wtime();
        op();
        double t1 = MPI_Wtime();
        if (i >= WARM) total += t1 - t0;
        if (barrier_between) MPI_Barrier(MPI_COMM_WORLD);
    }
    double mine = total / ITERS * 1e6, avg;
    MPI_Reduce(&mine, &avg, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    return avg / 2;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    peer = 1 - rank;
    struct { const char *name; op_t op; int barrier; } ops[] = {
        {"MPI_Barrier", barrier, 0},
        {"MPI_Sendrecv 4 B", sendrecv, 1},
        {"MPI_Reduce_local 4 B", reduce_local, 1},
        {"malloc(4)+free", mallocfree, 1},
        {"self isend/irecv/waitall 1 B", isend_irecv_self, 1},
        {"replica: copy+sendrecv+reduce_local", rep_nomalloc, 1},
        {"replica + malloc/free of tmp_buf", rep_malloc, 1},
        {"MPI_Allreduce 4 B", allreduce, 1},
        {"MPI_Bcast 1 B", bcast, 1},
        {"MPI_Allgather 1 B", allgather, 1},
        {"MPI_Allgatherv 1 B", allgatherv, 1},
        {"MPI_Alltoall 1 B", alltoall, 1},
        {"MPI_Reduce_scatter 4 B", reduce_scatter, 1},
    };
    for (int rep = 0; rep < 3; rep++)
        for (unsigned k = 0; k < sizeof ops / sizeof ops[0]; k++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t = timed(ops[k].op, ops[k].barrier);
            if (rank == 0) printf("%d %-40s %8.3f us\n", rep, ops[k].name, t);
        }
    MPI_Finalize();
    return 0;
}
