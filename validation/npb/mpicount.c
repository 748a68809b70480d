/* mpicount: a PMPI wrapper that counts every communication call of an MPI
 * program per rank, call site, operation, peer and bytes, so that a
 * skeleton's communication can be compared with the real program's
 * (`parsim run --call-profile` writes the same columns).
 *
 * Build and use (validation/npb/profile.sh does both):
 *   mpicc -O2 -shared -fPIC -o libmpicount.so mpicount.c -ldl
 *   MPICOUNT_OUT=dir LD_PRELOAD=$PWD/libmpicount.so mpiexec -n 4 ./cg.S.4
 * Each rank writes dir/rank.R.csv at MPI_Finalize:
 *   rank,site,operation,peer,bytes,comm_size,calls
 * `site` is the offset of the calling instruction in the main executable
 * (the first frame of the stack that lies in it, so a Fortran call through
 * MPICH's `mpi_send_` binding is charged to the Fortran line);
 * profile.sh turns it into file:line with addr2line.
 *
 * Conventions, the same as the simulator's call profile:
 * - peer: the peer's rank in MPI_COMM_WORLD for point-to-point calls
 *   (-1 for MPI_ANY_SOURCE), the root's world rank for rooted collectives,
 *   -1 for the others;
 * - bytes: count x type size of the call's send buffer (a receive: of its
 *   buffer); alltoall: per destination; alltoallv: the sum over
 *   destinations; sendrecv: the send part;
 * - MPI_Comm_split / MPI_Comm_dup are counted with 0 bytes.
 * Calls on the wrapper's own behalf are not counted.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <execinfo.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uintptr_t site;
    const char *op;
    int peer;
    long long bytes;
    int comm_size;
    long long calls;
} entry;

static entry *table;
static size_t used, cap;
static uintptr_t exe_lo, exe_hi, exe_base;

static int find_exe(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    (void)data;
    /* The first object dl_iterate_phdr reports is the main program. */
    exe_base = info->dlpi_addr;
    exe_lo = UINTPTR_MAX;
    exe_hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type == PT_LOAD && (p->p_flags & PF_X)) {
            uintptr_t lo = info->dlpi_addr + p->p_vaddr;
            if (lo < exe_lo) exe_lo = lo;
            if (lo + p->p_memsz > exe_hi) exe_hi = lo + p->p_memsz;
        }
    }
    return 1;
}

static uintptr_t call_site(void) {
    void *frames[16];
    int n = backtrace(frames, 16);
    if (exe_hi == 0) dl_iterate_phdr(find_exe, NULL);
    for (int i = 1; i < n; i++) {
        uintptr_t pc = (uintptr_t)frames[i];
        if (pc >= exe_lo && pc < exe_hi) return pc - exe_base - 1;
    }
    return 0;
}

static int world_of(MPI_Comm comm, int r) {
    if (r == MPI_ANY_SOURCE || r == MPI_PROC_NULL || r < 0) return -1;
    if (comm == MPI_COMM_WORLD) return r;
    MPI_Group g, w;
    int out;
    PMPI_Comm_group(comm, &g);
    PMPI_Comm_group(MPI_COMM_WORLD, &w);
    PMPI_Group_translate_ranks(g, 1, &r, w, &out);
    PMPI_Group_free(&g);
    PMPI_Group_free(&w);
    return out;
}

static long long nbytes(int count, MPI_Datatype t) {
    int s = 0;
    PMPI_Type_size(t, &s);
    return (long long)count * s;
}

static void count(const char *op, MPI_Comm comm, int peer, long long bytes) {
    uintptr_t site = call_site();
    int size = 0;
    PMPI_Comm_size(comm, &size);
    for (size_t i = 0; i < used; i++) {
        entry *e = &table[i];
        if (e->site == site && e->op == op && e->peer == peer && e->bytes == bytes &&
            e->comm_size == size) {
            e->calls++;
            return;
        }
    }
    if (used == cap) {
        cap = cap ? 2 * cap : 256;
        table = realloc(table, cap * sizeof *table);
        if (!table) abort();
    }
    table[used++] = (entry){site, op, peer, bytes, size, 1};
}

int MPI_Send(const void *b, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm) {
    count("send", comm, world_of(comm, d), nbytes(c, t));
    return PMPI_Send(b, c, t, d, tag, comm);
}
int MPI_Ssend(const void *b, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm) {
    count("ssend", comm, world_of(comm, d), nbytes(c, t));
    return PMPI_Ssend(b, c, t, d, tag, comm);
}
int MPI_Isend(const void *b, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm,
              MPI_Request *r) {
    count("isend", comm, world_of(comm, d), nbytes(c, t));
    return PMPI_Isend(b, c, t, d, tag, comm, r);
}
int MPI_Recv(void *b, int c, MPI_Datatype t, int s, int tag, MPI_Comm comm, MPI_Status *st) {
    count("recv", comm, world_of(comm, s), nbytes(c, t));
    return PMPI_Recv(b, c, t, s, tag, comm, st);
}
int MPI_Irecv(void *b, int c, MPI_Datatype t, int s, int tag, MPI_Comm comm, MPI_Request *r) {
    count("irecv", comm, world_of(comm, s), nbytes(c, t));
    return PMPI_Irecv(b, c, t, s, tag, comm, r);
}
int MPI_Sendrecv(const void *sb, int sc, MPI_Datatype st, int d, int stag, void *rb, int rc,
                 MPI_Datatype rt, int s, int rtag, MPI_Comm comm, MPI_Status *status) {
    count("sendrecv", comm, world_of(comm, d), nbytes(sc, st));
    return PMPI_Sendrecv(sb, sc, st, d, stag, rb, rc, rt, s, rtag, comm, status);
}
int MPI_Barrier(MPI_Comm comm) {
    count("barrier", comm, -1, 0);
    return PMPI_Barrier(comm);
}
int MPI_Bcast(void *b, int c, MPI_Datatype t, int root, MPI_Comm comm) {
    count("bcast", comm, world_of(comm, root), nbytes(c, t));
    return PMPI_Bcast(b, c, t, root, comm);
}
int MPI_Reduce(const void *s, void *r, int c, MPI_Datatype t, MPI_Op op, int root,
               MPI_Comm comm) {
    count("reduce", comm, world_of(comm, root), nbytes(c, t));
    return PMPI_Reduce(s, r, c, t, op, root, comm);
}
int MPI_Allreduce(const void *s, void *r, int c, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
    count("allreduce", comm, -1, nbytes(c, t));
    return PMPI_Allreduce(s, r, c, t, op, comm);
}
int MPI_Alltoall(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt,
                 MPI_Comm comm) {
    count("alltoall", comm, -1, nbytes(sc, st));
    return PMPI_Alltoall(s, sc, st, r, rc, rt, comm);
}
int MPI_Alltoallv(const void *s, const int *sc, const int *sd, MPI_Datatype st, void *r,
                  const int *rc, const int *rd, MPI_Datatype rt, MPI_Comm comm) {
    int n = 0;
    PMPI_Comm_size(comm, &n);
    long long total = 0;
    for (int i = 0; i < n; i++) total += nbytes(sc[i], st);
    count("alltoallv", comm, -1, total);
    return PMPI_Alltoallv(s, sc, sd, st, r, rc, rd, rt, comm);
}
int MPI_Allgather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt,
                  MPI_Comm comm) {
    count("allgather", comm, -1, nbytes(sc, st));
    return PMPI_Allgather(s, sc, st, r, rc, rt, comm);
}
int MPI_Gather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt,
               int root, MPI_Comm comm) {
    count("gather", comm, world_of(comm, root), nbytes(sc, st));
    return PMPI_Gather(s, sc, st, r, rc, rt, root, comm);
}
int MPI_Scatter(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt,
                int root, MPI_Comm comm) {
    count("scatter", comm, world_of(comm, root), nbytes(rc, rt));
    return PMPI_Scatter(s, sc, st, r, rc, rt, root, comm);
}
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out) {
    count("comm_split", comm, -1, 0);
    return PMPI_Comm_split(comm, color, key, out);
}
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *out) {
    count("comm_dup", comm, -1, 0);
    return PMPI_Comm_dup(comm, out);
}

int MPI_Finalize(void) {
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *dir = getenv("MPICOUNT_OUT");
    char path[4096];
    snprintf(path, sizeof path, "%s/rank.%d.csv", dir ? dir : ".", rank);
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "rank,site,operation,peer,bytes,comm_size,calls\n");
        for (size_t i = 0; i < used; i++) {
            entry *e = &table[i];
            fprintf(f, "%d,0x%lx,%s,%d,%lld,%d,%lld\n", rank, (unsigned long)e->site, e->op,
                    e->peer, e->bytes, e->comm_size, e->calls);
        }
        fclose(f);
    } else {
        fprintf(stderr, "mpicount: cannot write %s\n", path);
    }
    return PMPI_Finalize();
}
