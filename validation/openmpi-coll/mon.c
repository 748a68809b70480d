/* One call of each collective of a list at each size of a list, its
 * point-to-point traffic counted per peer through Open MPI's pml monitoring
 * MPI_T performance variables (pml_monitoring_messages_count / _size; run
 * with --mca pml_monitoring_enable 1). For every call and every peer this
 * rank sent to during it, prints "kind bytes rank peer messages bytes".
 * Each kind is called once at the first size before anything is counted:
 * coll/han builds its sub-communicators in a communicator's first calls.
 * Reductions are of MPI_FLOAT with MPI_SUM (BYTES / 4 elements) and the
 * rest of MPI_CHAR, as the OSU Micro-Benchmarks call them.
 * The rooted ones (bcast, reduce, gather, scatter) take $MON_ROOT (else 0).
 * Usage: mon KIND[,KIND...] BYTES [BYTES...]  (validation/openmpi-coll/) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* The root of bcast, reduce, gather and scatter: $MON_ROOT, else 0. */
static int root;
static void coll(const char *k, long n, char *a, char *b, int *cnt, int *dsp) {
    int cnt4[4096]; int p; MPI_Comm_size(MPI_COMM_WORLD, &p);
    for (int i = 0; i < p && i < 4096; i++) cnt4[i] = (int)(n / 4);
    if (!strcmp(k, "allreduce")) MPI_Allreduce(a, b, (int)(n / 4), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    else if (!strcmp(k, "reduce")) MPI_Reduce(a, b, (int)(n / 4), MPI_FLOAT, MPI_SUM, root, MPI_COMM_WORLD);
    else if (!strcmp(k, "bcast")) MPI_Bcast(a, (int)n, MPI_CHAR, root, MPI_COMM_WORLD);
    else if (!strcmp(k, "barrier")) MPI_Barrier(MPI_COMM_WORLD);
    else if (!strcmp(k, "allgather")) MPI_Allgather(a, (int)n, MPI_CHAR, b, (int)n, MPI_CHAR, MPI_COMM_WORLD);
    else if (!strcmp(k, "alltoall")) MPI_Alltoall(a, (int)n, MPI_CHAR, b, (int)n, MPI_CHAR, MPI_COMM_WORLD);
    else if (!strcmp(k, "gather")) MPI_Gather(a, (int)n, MPI_CHAR, b, (int)n, MPI_CHAR, root, MPI_COMM_WORLD);
    else if (!strcmp(k, "scatter")) MPI_Scatter(a, (int)n, MPI_CHAR, b, (int)n, MPI_CHAR, root, MPI_COMM_WORLD);
    else if (!strcmp(k, "reduce_scatter")) MPI_Reduce_scatter(a, b, cnt4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    else if (!strcmp(k, "allgatherv")) MPI_Allgatherv(a, (int)n, MPI_CHAR, b, cnt, dsp, MPI_CHAR, MPI_COMM_WORLD);
    else if (!strcmp(k, "alltoallv")) MPI_Alltoallv(a, cnt, dsp, MPI_CHAR, b, cnt, dsp, MPI_CHAR, MPI_COMM_WORLD);
    else if (!strcmp(k, "scan")) MPI_Scan(a, b, (int)(n / 4), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    else if (!strcmp(k, "exscan")) MPI_Exscan(a, b, (int)(n / 4), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    else { fprintf(stderr, "unknown collective %s\n", k); MPI_Abort(MPI_COMM_WORLD, 2); }
}
static int find(const char *name) {
    int num; MPI_T_pvar_get_num(&num);
    for (int i = 0; i < num; i++) {
        char nm[256], desc[1024]; int nl = sizeof nm, dl = sizeof desc, verb, cls, bind, ro, cont, atomic;
        MPI_Datatype dt; MPI_T_enum en;
        MPI_T_pvar_get_info(i, nm, &nl, &verb, &cls, &dt, &en, desc, &dl, &bind, &ro, &cont, &atomic);
        if (!strcmp(nm, name)) return i;
    }
    return -1;
}
int main(int argc, char **argv) {
    int prov; MPI_Init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &prov);
    int r, p; MPI_Comm_rank(MPI_COMM_WORLD, &r); MPI_Comm_size(MPI_COMM_WORLD, &p);
    const char *env_root = getenv("MON_ROOT");
    root = env_root ? atoi(env_root) : 0;
    if (root < 0 || root >= p) { fprintf(stderr, "MON_ROOT %d is not a rank of %d\n", root, p); MPI_Abort(MPI_COMM_WORLD, 2); }
    long maxn = 0;
    for (int i = 2; i < argc; i++) { long n = atol(argv[i]); if (n > maxn) maxn = n; }
    char *a = calloc((size_t)maxn * p + 16, 1), *b = calloc((size_t)maxn * p + 16, 1);
    int *cnt = malloc(sizeof(int) * p), *dsp = malloc(sizeof(int) * p);
    int ic = find("pml_monitoring_messages_count"), is = find("pml_monitoring_messages_size");
    if (ic < 0 || is < 0) { fprintf(stderr, "no pml monitoring pvars (run with --mca pml_monitoring_enable 1)\n"); MPI_Abort(MPI_COMM_WORLD, 3); }
    MPI_T_pvar_session s; MPI_T_pvar_session_create(&s);
    MPI_T_pvar_handle hc, hs; int c1, c2; MPI_Comm w = MPI_COMM_WORLD;
    MPI_T_pvar_handle_alloc(s, ic, &w, &hc, &c1);
    MPI_T_pvar_handle_alloc(s, is, &w, &hs, &c2);
    MPI_T_pvar_start(s, hc); MPI_T_pvar_start(s, hs);
    unsigned long long *v0 = calloc(p, 8), *v1 = calloc(p, 8), *z0 = calloc(p, 8), *z1 = calloc(p, 8);
    /* argv[1]: comma-separated kinds; argv[2..]: sizes in bytes */
    char kinds[4096] = {0}; strncpy(kinds, argv[1], sizeof kinds - 1);
    char warm[4096] = {0}; strncpy(warm, argv[1], sizeof warm - 1);
    long n0 = atol(argv[2]);
    for (int q = 0; q < p; q++) { cnt[q] = (int)n0; dsp[q] = (int)(q * n0); }
    for (char *k = strtok(warm, ","); k; k = strtok(NULL, ",")) coll(k, n0, a, b, cnt, dsp);
    for (char *k = strtok(kinds, ","); k; k = strtok(NULL, ",")) {
        for (int i = 2; i < argc; i++) {
            long n = atol(argv[i]);
            for (int q = 0; q < p; q++) { cnt[q] = (int)n; dsp[q] = (int)(q * n); }
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_T_pvar_read(s, hc, v0); MPI_T_pvar_read(s, hs, z0);
            coll(k, n, a, b, cnt, dsp);
            MPI_T_pvar_read(s, hc, v1); MPI_T_pvar_read(s, hs, z1);
            for (int q = 0; q < p; q++)
                if (v1[q] != v0[q]) printf("%s %ld %d %d %llu %llu\n", k, n, r, q, v1[q] - v0[q], z1[q] - z0[q]);
        }
    }
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    if (r == 0) { printf("# done\n"); fflush(stdout); }
    MPI_T_pvar_stop(s, hc); MPI_T_pvar_stop(s, hs);
    MPI_T_pvar_handle_free(s, &hc); MPI_T_pvar_handle_free(s, &hs);
    MPI_T_pvar_session_free(&s); MPI_T_finalize();
    MPI_Finalize();
    return 0;
}
