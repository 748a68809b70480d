/* mpitime: a PMPI wrapper that measures, per rank, the wall time spent
 * inside MPI calls (waiting included) and in the whole run, to split a
 * prediction's miss into compute and communication (VALIDATION.md 7.2).
 *
 *   mpicc -O2 -shared -fPIC -o libmpitime.so mpitime.c
 *   LD_PRELOAD=$PWD/libmpitime.so mpiexec -n 2 ./lu.S.2
 *
 * prints on stderr at MPI_Finalize, per rank:
 *   MPITIME rank R in_mpi SECONDS total SECONDS calls N
 * (`total` from the end of MPI_Init; the calls the NPB benchmarks make). */
#include <mpi.h>
#include <stdio.h>

static double t_in, t0;
static long calls;

#define TIMED(call)                  \
    double s_ = PMPI_Wtime();        \
    int rc_ = call;                  \
    t_in += PMPI_Wtime() - s_;       \
    calls++;                         \
    return rc_;

int MPI_Init(int *argc, char ***argv) {
    int rc = PMPI_Init(argc, argv);
    t0 = PMPI_Wtime();
    return rc;
}
int MPI_Send(const void *b, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm) {
    TIMED(PMPI_Send(b, c, t, d, tag, comm))
}
int MPI_Recv(void *b, int c, MPI_Datatype t, int s, int tag, MPI_Comm comm, MPI_Status *st) {
    TIMED(PMPI_Recv(b, c, t, s, tag, comm, st))
}
int MPI_Irecv(void *b, int c, MPI_Datatype t, int s, int tag, MPI_Comm comm, MPI_Request *r) {
    TIMED(PMPI_Irecv(b, c, t, s, tag, comm, r))
}
int MPI_Isend(const void *b, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm,
              MPI_Request *r) {
    TIMED(PMPI_Isend(b, c, t, d, tag, comm, r))
}
int MPI_Wait(MPI_Request *r, MPI_Status *st) { TIMED(PMPI_Wait(r, st)) }
int MPI_Waitall(int c, MPI_Request *r, MPI_Status *st) { TIMED(PMPI_Waitall(c, r, st)) }
int MPI_Barrier(MPI_Comm comm) { TIMED(PMPI_Barrier(comm)) }
int MPI_Bcast(void *b, int c, MPI_Datatype t, int root, MPI_Comm comm) {
    TIMED(PMPI_Bcast(b, c, t, root, comm))
}
int MPI_Reduce(const void *s, void *r, int c, MPI_Datatype t, MPI_Op op, int root,
               MPI_Comm comm) {
    TIMED(PMPI_Reduce(s, r, c, t, op, root, comm))
}
int MPI_Allreduce(const void *s, void *r, int c, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
    TIMED(PMPI_Allreduce(s, r, c, t, op, comm))
}
int MPI_Alltoall(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt,
                 MPI_Comm comm) {
    TIMED(PMPI_Alltoall(s, sc, st, r, rc, rt, comm))
}
int MPI_Alltoallv(const void *s, const int *sc, const int *sd, MPI_Datatype st, void *r,
                  const int *rc, const int *rd, MPI_Datatype rt, MPI_Comm comm) {
    TIMED(PMPI_Alltoallv(s, sc, sd, st, r, rc, rd, rt, comm))
}
int MPI_Finalize(void) {
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "MPITIME rank %d in_mpi %.6f total %.6f calls %ld\n", rank, t_in,
            PMPI_Wtime() - t0, calls);
    return PMPI_Finalize();
}
