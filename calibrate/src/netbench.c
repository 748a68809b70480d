/*
 * The network benchmark of `parsim calibrate net --run LAUNCHER`: IMB's
 * PingPong and PingPing between ranks 0 and 1, and streams in both forms
 * of the OSU Micro-Benchmarks (osu_bw: a window of 64 messages one way and
 * a 4-byte acknowledgement; osu_bibw: windows both ways), printed in IMB's
 * own text format (so the same parser reads a real IMB run and this one;
 * the streams as "Stream" and "BiStream" with t[usec] the time per
 * message), and the memory-copy bandwidth of one rank.
 *
 * Method (Intel MPI Benchmarks User Guide, "PingPong", "PingPing"; the
 * MPITEST scheme t = (t2 - t1 - DT) / reps of ../shared/seeds/001):
 *   - sizes 0, 1, 2, 4, ..., 4 MiB (IMB's default ladder); with
 *     `--max-bytes N` the tables of messages go on to N bytes (beyond the
 *     last-level cache, where a copy's rate falls), and the output states
 *     the largest size and the last-level cache (sysconf) in `# parsim
 *     netbench:` lines;
 *   - repetitions max(1, min(1000, 40 MiB / bytes)) per measurement (IMB's
 *     default), after max(2, reps / 10) warm-up repetitions;
 *   - PingPongWritten: the PingPong of data each side writes before it
 *     sends (pingpong_written), the writes' own time taken out: what
 *     `calibrate net --buffers written` fits the channels from, for
 *     programs that send what they computed;
 *   - the eager limit as MPI semantics see it (eager_probe): whether a
 *     send completes before its receive is posted, bisected to the byte,
 *     printed as "# parsim netbench: sends buffered below N bytes";
 *   - SendOverhead (send_call): the sender's time in MPI_Isend + MPI_Wait
 *     of a message below that limit while the receiver computes outside
 *     MPI: the CPU time of a send that needs no answer (o_s + O·n);
 *   - PingPong: t = half the round trip; PingPing: both ranks send at once
 *     (MPI_Isend + MPI_Recv + MPI_Wait), t = one exchange;
 *   - Stream (OMB 5.x mpi/pt2pt/osu_bw.c): per repetition rank 0 posts 64
 *     MPI_Isend and waits for all, rank 1 posts 64 MPI_Irecv, waits and
 *     answers with 4 bytes; t = the time per message, a repetition / 64;
 *     BiStream (osu_bibw.c): both ranks post 64 MPI_Irecv and 64 MPI_Isend
 *     and wait for all; t = a repetition / 128. Repetitions: the
 *     PingPong's / 64, at least 2;
 *   - each size is measured 5 times after a barrier and the median is
 *     printed, which keeps a shared machine's noise out of the fit;
 *   - ranks other than 0 and 1 wait in the barriers;
 *   - Barrier (a collective call's cost beyond its messages): MPI_Barrier
 *     on a communicator of ranks 0 and 1, IMB's loop (t = per call, the
 *     average of the two ranks), printed as a one-row table of 0 bytes;
 *   - RendezvousSend and RendezvousRecv (when a rendezvous send
 *     completes, rendezvous_tables): one message of each size from the
 *     eager limit to 1 MiB after a barrier, each end's time;
 *   - Call_<kind> (each collective's own cost per call, call_tables):
 *     every collective of 4 bytes on ranks 0 and 1, each call timed alone
 *     as the OSU Micro-Benchmarks time it, t = per call;
 *   - FlagLatency (the step of shared-memory collectives): a counter
 *     ping-ponged through a shared window by ranks 0 and 1 when they share
 *     a node, t = half the round trip (flag_table);
 *   - TypeCreate and TypePack (Bruck's alltoall's per-step datatype):
 *     rank 0 alone, an indexed type of k blocks created, committed and
 *     freed, and packed, k in the #bytes column (datatype_tables);
 *   - PageFault (what a collective's temporary buffer costs when the
 *     allocator hands out fresh memory): rank 0 alone, an anonymous
 *     mapping of 256 KiB .. 4 MiB written whole and unmapped, less the
 *     same writes to memory already resident, per 4 KiB page
 *     (page_fault_table);
 *   - Reduce_local (the reduction's fixed cost and rate): rank 0 alone,
 *     MPI_Reduce_local of bytes/4 MPI_FLOATs with MPI_SUM (the datatype
 *     and operation of osu_allreduce and IMB's Allreduce), sizes 4 B to
 *     4 MiB (doubling, and 1.5x points from 256 KiB: next_rate_size),
 *     t = per call;
 *   - Memcpy (a copy's cost by size: the cache level its buffers fit in):
 *     rank 0 alone, memcpy of 1 B to 4 MiB (the same ladder), t = per
 *     call (memcpy_table);
 *   - the timer: what two back-to-back MPI_Wtime reads differ by on rank 0
 *     (a benchmark's timed interval holds about one read beyond its work);
 *   - the library: the first line of MPI_Get_library_version, so that the
 *     machine file can name the library whose collectives it runs.
 *
 * With the argument --mbw-mr it measures only k pairs streaming at once
 * (k = processes / 2), the loop of OMB 5.x mpi/pt2pt/osu_mbw_mr.c
 * (calc_bw): rank i < k sends windows of 64 messages to rank i + k and
 * waits for a 4-byte acknowledgement; 100 timed windows after 10 untimed
 * ones (20 after 2 above 8 KiB: OMB's iterations_large and skip_large);
 * the aggregate rate is sizes * k * windows * 64 / (the senders' mean
 * time). Printed in OMB's format with its `# [ pairs: k ]` line, the
 * median of TRIALS runs per size, sizes 1 B to 4 MiB (or --max-bytes), so that `calibrate
 * net --multi-pair` reads it as it reads OMB's own output.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

/* IMB's default ladder ends at 4 MiB: the eager probe, SendOverhead,
 * Reduce_local, the datatypes and memcpy stay on it. */
#define MAX_BYTES (4L << 20)
#define TRIALS 5
/* The tables of messages (PingPong, PingPongWritten, PingPing, Stream,
 * BiStream, and --mbw-mr's) go up to this size: MAX_BYTES unless
 * `--max-bytes N` says otherwise. A ladder that ends inside the caches
 * cannot show what a message costs whose buffers do not fit in them (on
 * the development machine osu_bw runs at half the rate from 8 MiB on). */
static long max_bytes = MAX_BYTES;
/* A `limit` of `table` that keeps every size up to max_bytes. */
#define ALL_SIZES (max_bytes + 1L)

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof(double), cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int reps_for(long bytes) {
    long r = bytes > 0 ? (40L << 20) / bytes : 1000;
    if (r > 1000) r = 1000;
    if (r < 1) r = 1;
    return (int)r;
}

/* One measurement of `reps` repetitions; seconds per repetition on rank 0. */
static double pingpong(char *sbuf, char *rbuf, long bytes, int reps, int rank) {
    double t0 = MPI_Wtime();
    for (int i = 0; i < reps; i++) {
        if (rank == 0) {
            MPI_Send(sbuf, (int)bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(rbuf, (int)bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(rbuf, (int)bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, (int)bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) / reps;
}

/* memset through a volatile pointer: the compiler may not drop a write
 * that a later one overwrites (the loops below write one buffer again and
 * again with nothing reading it in between). */
static void *(*volatile write_buffer)(void *, int, size_t) = memset;

/* PingPong of data the sender has just written, as a program sends what
 * it computed (IMB's and OSU's buffers are written once, at the start,
 * and stay clean in the caches): each side writes its whole send buffer
 * before each send. The writes' own time, measured alone on each rank the
 * same number of times, is taken out (two per round trip, one on each
 * side, both on the critical path). What is left is what the message
 * costs more when the receiver, or the adapter, must fetch lines the
 * sender's core holds modified. */
static double pingpong_written(char *sbuf, char *rbuf, long bytes, int reps, int rank) {
    double t0 = MPI_Wtime();
    for (int i = 0; i < reps; i++) {
        if (rank == 0) {
            write_buffer(sbuf, i & 0x7f, (size_t)bytes);
            MPI_Send(sbuf, (int)bytes, MPI_BYTE, 1, 3, MPI_COMM_WORLD);
            MPI_Recv(rbuf, (int)bytes, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(rbuf, (int)bytes, MPI_BYTE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            write_buffer(sbuf, i & 0x7f, (size_t)bytes);
            MPI_Send(sbuf, (int)bytes, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
        }
    }
    double t = (MPI_Wtime() - t0) / reps;
    double w = 0.0, mine = 0.0;
    if (rank <= 1) {
        double w0 = MPI_Wtime();
        for (int i = 0; i < reps; i++) write_buffer(sbuf, i & 0x7f, (size_t)bytes);
        mine = (MPI_Wtime() - w0) / reps;
    }
    /* Rank 0 reports: the two sides' writes, each measured by its rank. */
    double other = 0.0;
    if (rank == 1) MPI_Send(&mine, 1, MPI_DOUBLE, 0, 4, MPI_COMM_WORLD);
    if (rank == 0) MPI_Recv(&other, 1, MPI_DOUBLE, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    w = mine + other;
    return t > w ? t - w : 0.0;
}

static double pingping(char *sbuf, char *rbuf, long bytes, int reps, int rank) {
    double t0 = MPI_Wtime();
    if (rank <= 1) {
        int peer = 1 - rank;
        for (int i = 0; i < reps; i++) {
            MPI_Request req;
            MPI_Isend(sbuf, (int)bytes, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &req);
            MPI_Recv(rbuf, (int)bytes, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
    }
    return (MPI_Wtime() - t0) / reps;
}

#define WINDOW 64

static double stream(char *sbuf, char *rbuf, long bytes, int reps, int rank) {
    MPI_Request req[WINDOW];
    double t0 = MPI_Wtime();
    for (int i = 0; i < reps; i++) {
        if (rank == 0) {
            for (int j = 0; j < WINDOW; j++)
                MPI_Isend(sbuf, (int)bytes, MPI_BYTE, 1, 100, MPI_COMM_WORLD, &req[j]);
            MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
            MPI_Recv(rbuf, 4, MPI_BYTE, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            for (int j = 0; j < WINDOW; j++)
                MPI_Irecv(rbuf, (int)bytes, MPI_BYTE, 0, 100, MPI_COMM_WORLD, &req[j]);
            MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
            MPI_Send(sbuf, 4, MPI_BYTE, 0, 101, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) / reps;
}

static double bistream(char *sbuf, char *rbuf, long bytes, int reps, int rank) {
    MPI_Request req[2 * WINDOW];
    double t0 = MPI_Wtime();
    if (rank <= 1) {
        int peer = 1 - rank;
        for (int i = 0; i < reps; i++) {
            for (int j = 0; j < WINDOW; j++)
                MPI_Irecv(rbuf, (int)bytes, MPI_BYTE, peer, 10, MPI_COMM_WORLD, &req[j]);
            for (int j = 0; j < WINDOW; j++)
                MPI_Isend(sbuf, (int)bytes, MPI_BYTE, peer, 10, MPI_COMM_WORLD, &req[WINDOW + j]);
            MPI_Waitall(2 * WINDOW, req, MPI_STATUSES_IGNORE);
        }
    }
    return (MPI_Wtime() - t0) / reps;
}

/* One table of sizes 0, 1, 2, 4, ... below `limit` (at most max_bytes),
 * t[usec] printed with `decimals` digits. */
static void table(const char *name, int nprocs, char *sbuf, char *rbuf, int rank,
                  double (*bench)(char *, char *, long, int, int), double scale,
                  int reps_divisor, long limit, int decimals) {
    if (rank == 0) {
        printf("#---------------------------------------------------\n");
        printf("# Benchmarking %s\n", name);
        printf("# #processes = 2\n");
        if (nprocs > 2) printf("# ( %d additional processes waiting in MPI_Barrier)\n", nprocs - 2);
        printf("#---------------------------------------------------\n");
        printf("       #bytes #repetitions      t[usec]   Mbytes/sec\n");
    }
    for (long bytes = 0; bytes < limit && bytes <= max_bytes; bytes = bytes ? 2 * bytes : 1) {
        int reps = reps_for(bytes) / reps_divisor;
        if (reps < 2 && reps_divisor > 1) reps = 2;
        double t[TRIALS];
        bench(sbuf, rbuf, bytes, reps / 10 > 2 ? reps / 10 : 2, rank); /* warm-up */
        for (int k = 0; k < TRIALS; k++) {
            MPI_Barrier(MPI_COMM_WORLD);
            t[k] = bench(sbuf, rbuf, bytes, reps, rank) * scale;
        }
        if (rank == 0) {
            double usec = median(t, TRIALS) * 1e6;
            printf("%13ld %12d %12.*f %12.2f\n", bytes, reps, decimals, usec,
                   usec > 0 ? (double)bytes / usec : 0.0);
        }
    }
    if (rank == 0) fflush(stdout);
}

/* How long a probed send may take to complete on its own, seconds: far
 * above any buffered (eager) send of at most MAX_BYTES, which completes
 * once its bytes are copied out or on the wire. */
#define PROBE_SECONDS 0.02

/* Does a send of `bytes` complete before its receive is posted? Rank 0
 * starts it and tests it for up to PROBE_SECONDS while rank 1 is inside
 * MPI (a receive of another tag, so the library progresses) without the
 * matching receive; then rank 1 is released and receives it. A send that
 * needs the receive (rendezvous) cannot complete in the window. The
 * answer, the same on every rank. */
static int buffered(char *sbuf, char *rbuf, long bytes, int rank) {
    int done = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Request req;
        MPI_Isend(sbuf, (int)bytes, MPI_BYTE, 1, 20, MPI_COMM_WORLD, &req);
        double t0 = MPI_Wtime();
        while (!done && MPI_Wtime() - t0 < PROBE_SECONDS) MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        MPI_Send(NULL, 0, MPI_BYTE, 1, 21, MPI_COMM_WORLD);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        MPI_Recv(NULL, 0, MPI_BYTE, 0, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(rbuf, (int)bytes, MPI_BYTE, 0, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Bcast(&done, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return done;
}

/* The library's eager limit as MPI semantics see it: the smallest size
 * whose send waits for its receive (a program whose ranks all send such a
 * message before receiving deadlocks; below it they do not). A ping-pong
 * only brackets it within a factor of two, at a step in time that need
 * not be the same switch (MPICH 4.0 over UCX here: buffered up to 8255 B,
 * slower from 8193 B). Probed on sizes 1, 2, 4, ..., MAX_BYTES, then
 * bisected between the largest buffered power of two and the first that
 * is not, to the byte. */
static long eager_probe(char *sbuf, char *rbuf, int rank) {
    long first = 0; /* the first power of two not buffered */
    int later = 0;  /* a larger power of two buffered again */
    for (long bytes = 1; bytes <= MAX_BYTES; bytes *= 2) {
        int b = buffered(sbuf, rbuf, bytes, rank);
        if (!b && !first) first = bytes;
        if (b && first) later = 1;
    }
    if (!first) {
        if (rank == 0)
            printf("# parsim netbench: sends buffered up to at least %ld bytes\n", (long)MAX_BYTES);
        return MAX_BYTES + 1L;
    }
    long lo = first / 2, hi = first; /* lo buffered (or 0), hi not */
    while (hi - lo > 1) {
        long m = lo + (hi - lo) / 2;
        if (buffered(sbuf, rbuf, m, rank)) lo = m; else hi = m;
    }
    if (rank == 0) {
        printf("# parsim netbench: sends buffered below %ld bytes\n", hi);
        if (later)
            printf("# parsim netbench: a larger power of two was buffered again "
                   "(the library switches more than once)\n");
    }
    return hi;
}

/* Spin for `seconds` without calling into MPI (MPI_Wtime is a clock read,
 * not a progress call in MPICH, Open MPI or Intel MPI). */
static void spin(double seconds) {
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < seconds) {
    }
}

/* SendOverhead: the CPU time of a send that needs no answer (LogGOPS's
 * o_s + O·n: Hoefler, Schneider, Lumsdaine, "LogGOPSim", HPDC 2010; the
 * send overhead as LogP measurements take it, the time of the send call
 * itself: Culler et al., "Assessing Fast Network Interfaces", IEEE Micro
 * 1996). Per repetition, after a barrier, rank 0 times MPI_Isend +
 * MPI_Wait of `bytes` while rank 1 computes outside MPI, long enough for
 * any copy (20 us + 2 ns per byte), and then receives the message; its
 * table keeps the sizes below the probed eager limit (sends that complete
 * without their receive). t = the mean time of the two calls. */
static double send_call(char *sbuf, char *rbuf, long bytes, int reps, int rank) {
    double sum = 0.0;
    for (int i = 0; i < reps; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            MPI_Request req;
            double t0 = MPI_Wtime();
            MPI_Isend(sbuf, (int)bytes, MPI_BYTE, 1, 30, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            sum += MPI_Wtime() - t0;
        } else if (rank == 1) {
            spin(20e-6 + 2e-9 * (double)bytes);
            MPI_Recv(rbuf, (int)bytes, MPI_BYTE, 0, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    return sum / reps;
}

/* A table of IMB's PingPong form (#bytes #repetitions t[usec]) of the
 * given rows, printed by rank 0. */
static void header(const char *name, int processes) {
    printf("#---------------------------------------------------\n");
    printf("# Benchmarking %s\n", name);
    printf("# #processes = %d\n", processes);
    printf("#---------------------------------------------------\n");
    printf("       #bytes #repetitions      t[usec]   Mbytes/sec\n");
}

/* MPI_Barrier on ranks 0 and 1 (`pair`), IMB's loop: t per call, the mean
 * of the two ranks' times, the median of TRIALS. */
static void barrier_table(MPI_Comm pair, int rank) {
    const int reps = 1000;
    double t[TRIALS];
    if (rank == 0) header("Barrier", 2);
    for (int k = 0; k < TRIALS; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double mine = 0.0, sum = 0.0;
        if (pair != MPI_COMM_NULL) {
            for (int i = 0; i < reps / 10; i++) MPI_Barrier(pair); /* warm-up */
            double t0 = MPI_Wtime();
            for (int i = 0; i < reps; i++) MPI_Barrier(pair);
            mine = (MPI_Wtime() - t0) / reps;
            MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, pair);
        }
        t[k] = sum / 2.0;
    }
    if (rank == 0) {
        printf("%13d %12d %12.3f %12.2f\n", 0, reps, median(t, TRIALS) * 1e6, 0.0);
        fflush(stdout);
    }
}

/* RendezvousSend and RendezvousRecv (when a rendezvous send completes,
 * node.rendezvous_send): one message from rank 0 to rank 1 after a
 * barrier, MPI_Send on rank 0 and MPI_Recv on rank 1 each timed, sizes the
 * powers of two from the probed eager limit to 1 MiB; t = each end's mean
 * over reps_for(bytes) / 5 messages (at least 10), the median of TRIALS.
 * A library whose receiver reads the sender's buffer and answers (a get)
 * completes the send with the receive; one whose sender writes the data
 * out completes it when the last byte has left. */
static void rendezvous_tables(char *sbuf, char *rbuf, int rank, long eager) {
    long first = 1;
    while (first < eager) first *= 2;
    long last = MAX_BYTES / 4; /* 1 MiB */
    double send_t[32], recv_t[32];
    int reps_of[32];
    int rows = 0;
    for (long n = first; n <= last && rows < 32; n *= 2, rows++) {
        int reps = reps_for(n) / 5;
        if (reps < 10) reps = 10;
        reps_of[rows] = reps;
        double ts[TRIALS], tr[TRIALS];
        for (int k = 0; k < TRIALS; k++) {
            double mine = 0.0;
            for (int i = 0; i < reps + 2; i++) {
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                if (rank == 0) MPI_Send(sbuf, (int)n, MPI_BYTE, 1, 40, MPI_COMM_WORLD);
                else if (rank == 1) MPI_Recv(rbuf, (int)n, MPI_BYTE, 0, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                double t1 = MPI_Wtime();
                if (i >= 2) mine += t1 - t0;
            }
            mine /= reps;
            double other = 0.0;
            if (rank == 1) MPI_Send(&mine, 1, MPI_DOUBLE, 0, 41, MPI_COMM_WORLD);
            if (rank == 0) MPI_Recv(&other, 1, MPI_DOUBLE, 1, 41, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            ts[k] = mine;
            tr[k] = other;
        }
        send_t[rows] = median(ts, TRIALS);
        recv_t[rows] = median(tr, TRIALS);
    }
    if (rank == 0 && rows > 0) {
        const char *names[2] = {"RendezvousSend", "RendezvousRecv"};
        for (int which = 0; which < 2; which++) {
            header(names[which], 2);
            long n = first;
            for (int i = 0; i < rows; i++, n *= 2) {
                double t = which == 0 ? send_t[i] : recv_t[i];
                printf("%13ld %12d %12.3f %12.2f\n", n, reps_of[i], t * 1e6, (double)n / t / 1e6);
            }
        }
        fflush(stdout);
    }
}

/* Call_<kind> (what each collective call costs beyond its messages, issue
 * 13): on ranks 0 and 1 (`pair`), each collective of 4 bytes (one
 * MPI_FLOAT with MPI_SUM for the reductions, MPI_Reduce_scatter one float
 * to each rank; 4 MPI_CHAR per block otherwise; root 0) timed alone as the
 * OSU Micro-Benchmarks time a collective (OMB 5.x
 * mpi/collective/osu_allreduce.c: t0 = MPI_Wtime(), the call, t +=
 * MPI_Wtime() - t0, then MPI_Barrier), 1000 calls after 100 untimed; t =
 * per call, the mean of the two ranks, the median of TRIALS. Printed as a
 * one-row table of 4 bytes per collective, named by parsim's name of it;
 * `calibrate net` simulates the same loop to find each call's own cost. */
#define CALLS 14
static const char *call_names[CALLS] = {
    "bcast", "reduce", "allreduce", "gather", "gatherv", "scatter", "scatterv",
    "allgather", "allgatherv", "alltoall", "alltoallv", "reduce_scatter", "scan", "exscan"};

static void call_one(int which, MPI_Comm pair, char *s, char *r) {
    int counts[2] = {4, 4}, displs[2] = {0, 4}, floats[2] = {1, 1};
    switch (which) {
    case 0: MPI_Bcast(s, 4, MPI_CHAR, 0, pair); break;
    case 1: MPI_Reduce(s, r, 1, MPI_FLOAT, MPI_SUM, 0, pair); break;
    case 2: MPI_Allreduce(s, r, 1, MPI_FLOAT, MPI_SUM, pair); break;
    case 3: MPI_Gather(s, 4, MPI_CHAR, r, 4, MPI_CHAR, 0, pair); break;
    case 4: MPI_Gatherv(s, 4, MPI_CHAR, r, counts, displs, MPI_CHAR, 0, pair); break;
    case 5: MPI_Scatter(s, 4, MPI_CHAR, r, 4, MPI_CHAR, 0, pair); break;
    case 6: MPI_Scatterv(s, counts, displs, MPI_CHAR, r, 4, MPI_CHAR, 0, pair); break;
    case 7: MPI_Allgather(s, 4, MPI_CHAR, r, 4, MPI_CHAR, pair); break;
    case 8: MPI_Allgatherv(s, 4, MPI_CHAR, r, counts, displs, MPI_CHAR, pair); break;
    case 9: MPI_Alltoall(s, 4, MPI_CHAR, r, 4, MPI_CHAR, pair); break;
    case 10: MPI_Alltoallv(s, counts, displs, MPI_CHAR, r, counts, displs, MPI_CHAR, pair); break;
    case 11: MPI_Reduce_scatter(s, r, floats, MPI_FLOAT, MPI_SUM, pair); break;
    case 12: MPI_Scan(s, r, 1, MPI_FLOAT, MPI_SUM, pair); break;
    default: MPI_Exscan(s, r, 1, MPI_FLOAT, MPI_SUM, pair); break;
    }
}

static void call_tables(MPI_Comm pair, int rank, char *sbuf, char *rbuf) {
    const int reps = 1000, skip = 100;
    for (int c = 0; c < CALLS; c++) {
        double t[TRIALS];
        if (rank == 0) {
            char name[64];
            snprintf(name, sizeof name, "Call_%s", call_names[c]);
            header(name, 2);
        }
        for (int k = 0; k < TRIALS; k++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double sum = 0.0;
            if (pair != MPI_COMM_NULL) {
                double mine = 0.0;
                for (int i = 0; i < reps + skip; i++) {
                    double t0 = MPI_Wtime();
                    call_one(c, pair, sbuf, rbuf);
                    double t1 = MPI_Wtime();
                    if (i >= skip) mine += t1 - t0;
                    MPI_Barrier(pair);
                }
                mine /= reps;
                MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, pair);
            }
            t[k] = sum / 2.0;
        }
        if (rank == 0) {
            printf("%13d %12d %12.3f %12.2f\n", 4, reps, median(t, TRIALS) * 1e6, 0.0);
            fflush(stdout);
        }
    }
}

/* FlagLatency (the step of shared-memory collectives: MPICH's
 * release_gather, Intel MPI's SHM-based algorithms): ranks 0 and 1, when
 * they share a node, ping-pong a counter through two cache lines of an
 * MPI-3 shared window (MPI_Win_allocate_shared), each spinning on an
 * acquire load until the other's release store shows the value it waits
 * for; t = half the round trip, the median of TRIALS runs of 10000 after
 * 1000 untimed. Printed as a one-row table of 0 bytes; nothing when ranks
 * 0 and 1 run on two nodes. */
static void flag_table(MPI_Comm pair, int rank) {
    MPI_Comm node = MPI_COMM_NULL;
    int on_one_node = 0;
    if (pair != MPI_COMM_NULL) {
        MPI_Comm_split_type(pair, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
        int n = 0;
        MPI_Comm_size(node, &n);
        on_one_node = n == 2;
    }
    MPI_Bcast(&on_one_node, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!on_one_node) {
        if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
        return;
    }
    const int reps = 10000, warm = 1000;
    double t[TRIALS];
    if (rank == 0) header("FlagLatency", 2);
    if (node != MPI_COMM_NULL) {
        /* Two 64-byte lines, one written by each rank, in rank 0's part. */
        long *base = NULL;
        MPI_Win win;
        MPI_Aint size = rank == 0 ? 256 : 0;
        MPI_Win_allocate_shared(size, 1, MPI_INFO_NULL, node, &base, &win);
        MPI_Aint got = 0;
        int unit = 0;
        MPI_Win_shared_query(win, 0, &got, &unit, &base);
        volatile long *mine = base + (rank == 0 ? 0 : 8), *theirs = base + (rank == 0 ? 8 : 0);
        __atomic_store_n(mine, 0L, __ATOMIC_RELEASE);
        MPI_Barrier(node);
        long v = 0;
        for (int k = 0; k < TRIALS; k++) {
            double t0 = 0.0;
            for (int i = 0; i < warm + reps; i++) {
                if (i == warm) t0 = MPI_Wtime();
                v++;
                if (rank == 0) {
                    __atomic_store_n(mine, v, __ATOMIC_RELEASE);
                    while (__atomic_load_n(theirs, __ATOMIC_ACQUIRE) != v) {}
                } else {
                    while (__atomic_load_n(theirs, __ATOMIC_ACQUIRE) != v) {}
                    __atomic_store_n(mine, v, __ATOMIC_RELEASE);
                }
            }
            t[k] = (MPI_Wtime() - t0) / reps / 2.0;
        }
        MPI_Win_free(&win);
        MPI_Comm_free(&node);
    }
    if (rank == 0) {
        printf("%13d %12d %12.4f %12.2f\n", 0, reps, median(t, TRIALS) * 1e6, 0.0);
        fflush(stdout);
    }
}

/* TypeCreate and TypePack (what Bruck's alltoall does in every step):
 * rank 0 alone, an MPI_Type_create_indexed_block of k one-byte blocks
 * (every other byte) + MPI_Type_commit + MPI_Type_free, and MPI_Pack of
 * one element of it; k = 1, 4, ..., 1024 in the #bytes column, t per
 * call, the median of TRIALS. */
static void datatype_tables(char *sbuf, char *rbuf, int rank) {
    if (rank != 0) return;
    static int displs[1024];
    for (int i = 0; i < 1024; i++) displs[i] = 2 * i;
    for (int pack = 0; pack <= 1; pack++) {
        header(pack ? "TypePack" : "TypeCreate", 1);
        for (int k = 1; k <= 1024; k *= 4) {
            int reps = k < 64 ? 10000 : 10000 / (k / 32);
            double t[TRIALS];
            MPI_Datatype type;
            MPI_Type_create_indexed_block(k, 1, displs, MPI_CHAR, &type);
            MPI_Type_commit(&type);
            for (int j = 0; j < TRIALS; j++) {
                double t0 = MPI_Wtime();
                for (int i = 0; i < reps; i++) {
                    if (pack) {
                        int pos = 0;
                        MPI_Pack(sbuf, 1, type, rbuf, 2048, &pos, MPI_COMM_SELF);
                    } else {
                        MPI_Datatype t2;
                        MPI_Type_create_indexed_block(k, 1, displs, MPI_CHAR, &t2);
                        MPI_Type_commit(&t2);
                        MPI_Type_free(&t2);
                    }
                }
                t[j] = (MPI_Wtime() - t0) / reps;
            }
            MPI_Type_free(&type);
            printf("%13d %12d %12.4f %12.2f\n", k, reps, median(t, TRIALS) * 1e6, 0.0);
        }
    }
    fflush(stdout);
}

/* PageFault: rank 0 alone, what one page of fresh memory costs a process
 * that writes it whole and later gives it back (the kernel's fault and
 * zeroing, the release, and the write of a line not in the caches): an
 * anonymous private mapping of `bytes` (mmap), memset whole, munmap, less
 * a memset of `bytes` already resident, divided by the 4 KiB pages; the
 * median of TRIALS runs of reps mappings. This is what glibc's heap
 * costs an MPI library that frees its temporaries past the trim threshold
 * and allocates them again (models/src/heap.rs). #bytes is the mapping's
 * size, t[usec] the time per page. */
static void page_fault_table(char *rbuf, int rank) {
    if (rank != 0) return;
    header("PageFault", 1);
    const long page = 4096;
    for (long bytes = 256L << 10; bytes <= MAX_BYTES; bytes *= 2) {
        int reps = (int)((16L << 20) / bytes);
        if (reps < 4) reps = 4;
        double t[TRIALS];
        for (int k = 0; k < TRIALS; k++) {
            double fresh = 0.0, resident = 0.0;
            for (int i = 0; i < reps; i++) {
                double t0 = MPI_Wtime();
                char *p = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                if (p == MAP_FAILED) {
                    fprintf(stderr, "netbench: mmap of %ld bytes failed\n", bytes);
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
                memset(p, i + 1, (size_t)bytes);
                munmap(p, (size_t)bytes);
                double t1 = MPI_Wtime();
                memset(rbuf, i + 1, (size_t)bytes);
                resident += MPI_Wtime() - t1;
                fresh += t1 - t0;
            }
            double per = (fresh - resident) / reps / (double)(bytes / page);
            t[k] = per > 0.0 ? per : 0.0;
        }
        printf("%13ld %12d %12.4f %12.2f\n", bytes, reps, median(t, TRIALS) * 1e6, 0.0);
    }
    fflush(stdout);
}

/* The next size of the copy and reduction ladders: doubling, with a point
 * halfway (x 1.5) in each octave from 256 KiB on, where the buffers leave
 * the caches: 256, 384, 512, 768 KiB, 1, 1.5, 2, 3, 4 MiB, so that each
 * cache level's segment (and memory's, from 2 MiB) has the 3 points a
 * fitted segment needs. */
static long next_rate_size(long bytes) {
    if (bytes < (256L << 10)) return bytes * 2;
    long octave = 1;
    while (octave * 2 <= bytes) octave *= 2;
    return bytes == octave ? octave + octave / 2 : octave * 2;
}

/* MPI_Reduce_local of floats with MPI_SUM on rank 0: t per call. */
static void reduce_local_table(char *sbuf, char *rbuf, int rank) {
    if (rank != 0) return;
    header("Reduce_local", 1);
    for (long bytes = 4; bytes <= MAX_BYTES; bytes = next_rate_size(bytes)) {
        int count = (int)(bytes / 4), reps = reps_for(bytes);
        double t[TRIALS];
        for (int i = 0; i < (reps / 10 > 2 ? reps / 10 : 2); i++)
            MPI_Reduce_local(sbuf, rbuf, count, MPI_FLOAT, MPI_SUM);
        for (int k = 0; k < TRIALS; k++) {
            double t0 = MPI_Wtime();
            for (int i = 0; i < reps; i++) MPI_Reduce_local(sbuf, rbuf, count, MPI_FLOAT, MPI_SUM);
            t[k] = (MPI_Wtime() - t0) / reps;
        }
        double usec = median(t, TRIALS) * 1e6;
        printf("%13ld %12d %12.3f %12.2f\n", bytes, reps, usec, (double)bytes / usec);
    }
    fflush(stdout);
}

/* memcpy of `bytes` from sbuf to rbuf on rank 0: t per call, by size. A
 * copy that a loop repeats runs from the cache level its two buffers fit
 * in, so the rate depends on the size (fitted as [[node.memcpy_segments]]).
 * One byte of the source changes before each copy so that no copy can be
 * dropped as a repeat of the one before. */
static void memcpy_table(char *sbuf, char *rbuf, int rank) {
    if (rank != 0) return;
    header("Memcpy", 1);
    for (long bytes = 1; bytes <= MAX_BYTES; bytes = next_rate_size(bytes)) {
        int reps = reps_for(bytes);
        double t[TRIALS];
        for (int i = 0; i < (reps / 10 > 2 ? reps / 10 : 2); i++) memcpy(rbuf, sbuf, bytes);
        for (int k = 0; k < TRIALS; k++) {
            double t0 = MPI_Wtime();
            for (int i = 0; i < reps; i++) {
                sbuf[i % bytes] = (char)i;
                memcpy(rbuf, sbuf, bytes);
            }
            t[k] = (MPI_Wtime() - t0) / reps;
        }
        volatile char sink = rbuf[bytes - 1];
        (void)sink;
        double usec = median(t, TRIALS) * 1e6;
        printf("%13ld %12d %12.4f %12.2f\n", bytes, reps, usec, (double)bytes / usec);
    }
    fflush(stdout);
}

/* OMB's calc_bw (osu_mbw_mr.c): the aggregate bandwidth of `pairs` pairs,
 * bytes per second, on rank 0. */
static double mbw_mr(char *sbuf, char *rbuf, long bytes, int pairs, int rank) {
    MPI_Request req[WINDOW];
    int large = bytes > 8192;
    int iters = large ? 20 : 100, skip = large ? 2 : 10;
    double t0 = 0.0, t = 0.0, sum = 0.0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank < pairs) {
        int target = rank + pairs;
        for (int i = 0; i < iters + skip; i++) {
            if (i == skip) {
                MPI_Barrier(MPI_COMM_WORLD);
                t0 = MPI_Wtime();
            }
            for (int j = 0; j < WINDOW; j++)
                MPI_Isend(sbuf, (int)bytes, MPI_CHAR, target, 100, MPI_COMM_WORLD, &req[j]);
            MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
            MPI_Recv(rbuf, 4, MPI_CHAR, target, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        t = MPI_Wtime() - t0;
    } else if (rank < 2 * pairs) {
        int target = rank - pairs;
        for (int i = 0; i < iters + skip; i++) {
            if (i == skip) MPI_Barrier(MPI_COMM_WORLD);
            for (int j = 0; j < WINDOW; j++)
                MPI_Irecv(rbuf, (int)bytes, MPI_CHAR, target, 100, MPI_COMM_WORLD, &req[j]);
            MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
            MPI_Send(sbuf, 4, MPI_CHAR, target, 101, MPI_COMM_WORLD);
        }
    } else {
        for (int i = 0; i < iters + skip; i++)
            if (i == skip) MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Reduce(&t, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    sum /= pairs;
    return sum > 0.0 ? (double)bytes * pairs * iters * WINDOW / sum : 0.0;
}

static void mbw_mr_table(char *sbuf, char *rbuf, int nprocs, int rank) {
    int pairs = nprocs / 2;
    if (rank == 0) {
        printf("# OSU MPI Multiple Bandwidth / Message Rate Test (parsim netbench: the loop of "
               "OMB 5.x osu_mbw_mr.c, the median of %d runs)\n", TRIALS);
        printf("# [ pairs: %d ] [ window size: %d ]\n", pairs, WINDOW);
        printf("%-10s%20s%20s\n", "# Size", "MB/s", "Messages/s");
    }
    for (long bytes = 1; bytes <= max_bytes; bytes *= 2) {
        double bw[TRIALS];
        for (int k = 0; k < TRIALS; k++) bw[k] = mbw_mr(sbuf, rbuf, bytes, pairs, rank);
        if (rank == 0) {
            double b = median(bw, TRIALS);
            printf("%-10ld%20.2f%20.2f\n", bytes, b / 1e6, b / (double)bytes);
        }
    }
    if (rank == 0) fflush(stdout);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (nprocs < 2) {
        if (rank == 0) fprintf(stderr, "parsim netbench: needs at least 2 processes\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int mbw_mr_only = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mbw-mr") == 0) {
            mbw_mr_only = 1;
        } else if (strcmp(argv[i], "--max-bytes") == 0 && i + 1 < argc) {
            char *end = NULL;
            long n = strtol(argv[++i], &end, 10);
            /* At least the ladder the other tables need; sizes are ints. */
            if (!end || *end != '\0' || n < MAX_BYTES || n > (1L << 30)) {
                if (rank == 0)
                    fprintf(stderr, "parsim netbench: --max-bytes takes %ld to %ld bytes, got %s\n",
                            (long)MAX_BYTES, 1L << 30, argv[i]);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            max_bytes = n;
        }
    }
    char *sbuf = malloc((size_t)max_bytes), *rbuf = malloc((size_t)max_bytes);
    if (!sbuf || !rbuf) MPI_Abort(MPI_COMM_WORLD, 3);
    memset(sbuf, 1, (size_t)max_bytes);
    memset(rbuf, 0, (size_t)max_bytes);
    if (rank == 0) {
        printf("# parsim netbench: messages up to %ld bytes\n", max_bytes);
#ifdef _SC_LEVEL3_CACHE_SIZE
        long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
        if (llc > 0) printf("# parsim netbench: last-level cache %ld bytes\n", llc);
#endif
    }
    if (mbw_mr_only) {
        mbw_mr_table(sbuf, rbuf, nprocs, rank);
        free(sbuf);
        free(rbuf);
        MPI_Finalize();
        return 0;
    }
    if (rank == 0) {
        char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
        int vlen = 0;
        MPI_Get_library_version(version, &vlen);
        /* MPICH's text also names its device and configure line, which
         * decide whether it has shared-memory collectives (a ch4:ofi build,
         * or --with-ch4-shmmods other than none). */
        const char *device = strstr(version, "MPICH Device:");
        if (device) {
            device += strlen("MPICH Device:");
            device += strspn(device, " \t");
            printf("# parsim netbench: device %.*s\n", (int)strcspn(device, " \t\r\n"), device);
        }
        const char *shmmods = strstr(version, "--with-ch4-shmmods=");
        if (shmmods) {
            shmmods += strlen("--with-ch4-shmmods=");
            printf("# parsim netbench: shmmods %.*s\n", (int)strcspn(shmmods, " \t\r\n"), shmmods);
        }
        version[strcspn(version, "\r\n")] = '\0';
        printf("# parsim netbench: library %s\n", version);
    }
    char host[MPI_MAX_PROCESSOR_NAME] = "", peer[MPI_MAX_PROCESSOR_NAME] = "";
    int len = 0;
    MPI_Get_processor_name(host, &len);
    if (rank == 1) MPI_Send(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, 9, MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Recv(peer, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("# parsim netbench: rank 0 on %s, rank 1 on %s\n", host, peer);
    }
    table("PingPong", nprocs, sbuf, rbuf, rank, pingpong, 0.5, 1, ALL_SIZES, 2);
    table("PingPongWritten", nprocs, sbuf, rbuf, rank, pingpong_written, 0.5, 1, ALL_SIZES, 2);
    long eager = eager_probe(sbuf, rbuf, rank);
    MPI_Bcast(&eager, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    /* Sends below the probed limit only: a larger one waits for its receive. */
    table("SendOverhead", nprocs, sbuf, rbuf, rank, send_call, 1.0, 1, eager, 3);
    rendezvous_tables(sbuf, rbuf, rank, eager);
    table("PingPing", nprocs, sbuf, rbuf, rank, pingping, 1.0, 1, ALL_SIZES, 2);
    table("Stream", nprocs, sbuf, rbuf, rank, stream, 1.0 / WINDOW, WINDOW, ALL_SIZES, 2);
    table("BiStream", nprocs, sbuf, rbuf, rank, bistream, 1.0 / (2 * WINDOW), WINDOW, ALL_SIZES, 2);
    MPI_Comm pair;
    MPI_Comm_split(MPI_COMM_WORLD, rank <= 1 ? 0 : MPI_UNDEFINED, rank, &pair);
    barrier_table(pair, rank);
    flag_table(pair, rank);
    /* Floats that add without overflow or denormals: 1.0 + 1.0 + ... */
    for (long i = 0; i < MAX_BYTES / 4; i++) ((float *)sbuf)[i] = 1.0f;
    memset(rbuf, 0, MAX_BYTES);
    call_tables(pair, rank, sbuf, rbuf);
    if (pair != MPI_COMM_NULL) MPI_Comm_free(&pair);
    reduce_local_table(sbuf, rbuf, rank);
    memcpy_table(sbuf, rbuf, rank);
    for (long i = 0; i < MAX_BYTES / 4; i++) ((float *)sbuf)[i] = 1.0f;
    datatype_tables(sbuf, rbuf, rank);
    page_fault_table(rbuf, rank);

    /* memcpy bandwidth of rank 0 on 4 MiB buffers (beyond most L2 caches),
     * the median of TRIALS runs of 20 copies. */
    if (rank == 0) {
        double t[TRIALS];
        memcpy(rbuf, sbuf, MAX_BYTES);
        for (int k = 0; k < TRIALS; k++) {
            double t0 = MPI_Wtime();
            for (int i = 0; i < 20; i++) {
                sbuf[i] = (char)i;
                memcpy(rbuf, sbuf, MAX_BYTES);
            }
            t[k] = (MPI_Wtime() - t0) / 20;
        }
        volatile char sink = rbuf[MAX_BYTES - 1];
        (void)sink;
        printf("# parsim netbench: memcpy %.6e bytes/s\n", (double)MAX_BYTES / median(t, TRIALS));
        /* What a read of the clock adds to an interval a benchmark times:
         * two back-to-back MPI_Wtime reads, the mean difference of 100,000
         * pairs, the median of TRIALS. */
        for (int k = 0; k < TRIALS; k++) {
            double sum = 0.0;
            for (int i = 0; i < 100000; i++) {
                double a = MPI_Wtime();
                double b = MPI_Wtime();
                sum += b - a;
            }
            t[k] = sum / 100000;
        }
        printf("# parsim netbench: timer %.6e s\n", median(t, TRIALS));
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
