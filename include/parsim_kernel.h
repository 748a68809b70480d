/*
 * parsim_kernel.h: the ABI of native compute kernels for parsim, version 1.
 *
 * A skeleton's `kernel NAME(p1, ..., pk)` can have a native implementation:
 * a C function with C linkage named `parsim_kernel_NAME` that takes the
 * kernel's arguments as an array of 64-bit integers, in the order of the
 * skeleton's parameter list:
 *
 *     void parsim_kernel_NAME(const int64_t *arg, int32_t nargs);
 *
 * The same function is called by the C MPI program that `parsim emit-c`
 * writes (where the skeleton says `compute NAME(...)`), and through
 * libloading by `parsim calibrate blocks`, which times it. A library of
 * kernels also exports `parsim_kernel_abi_version()`, returning
 * PARSIM_KERNEL_ABI_VERSION; the tools refuse a library built for another
 * version. Write one `PARSIM_KERNEL_LIBRARY` line per library and one
 * `PARSIM_KERNEL(name) { ... }` per kernel:
 *
 *     #include "parsim_kernel.h"
 *     PARSIM_KERNEL_LIBRARY
 *
 *     PARSIM_KERNEL(stencil) {            // kernel stencil(rows, cols)
 *         int64_t rows = arg[0], cols = arg[1];
 *         double *u = parsim_scratch(0, (rows + 2) * (cols + 2) * sizeof(double));
 *         ...
 *     }
 *
 * Rules a kernel keeps (the tools rely on them):
 *   - it owns its data: memory that lives between calls comes from
 *     parsim_scratch (or the kernel's own static storage); one process runs
 *     one rank, so there is no sharing between ranks;
 *   - it does the same work for the same arguments every time, and its time
 *     depends on the arguments only (not on the values in its arrays);
 *   - it writes results somewhere the compiler cannot prove unused
 *     (parsim_scratch memory is enough), so the loops are not optimised away;
 *   - it never calls MPI and never prints.
 */
#ifndef PARSIM_KERNEL_H
#define PARSIM_KERNEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PARSIM_KERNEL_ABI_VERSION 1u

#if defined(_WIN32)
#define PARSIM_EXPORT __declspec(dllexport)
#else
#define PARSIM_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
#define PARSIM_EXTERN_C extern "C"
#else
#define PARSIM_EXTERN_C
#endif

/* The type of every kernel entry point. */
typedef void (*parsim_kernel_fn)(const int64_t *arg, int32_t nargs);

/* Defines the entry point of kernel `name`; the body sees `arg` and `nargs`. */
#define PARSIM_KERNEL(name)                                                    \
    PARSIM_EXTERN_C PARSIM_EXPORT void parsim_kernel_##name(                  \
        const int64_t *arg, int32_t nargs)

/* Marks a library of kernels with the ABI version it was built for. */
#define PARSIM_KERNEL_LIBRARY                                                  \
    PARSIM_EXTERN_C PARSIM_EXPORT uint32_t parsim_kernel_abi_version(void) {   \
        return PARSIM_KERNEL_ABI_VERSION;                                      \
    }

#define PARSIM_SCRATCH_SLOTS 16

/*
 * Memory that persists between calls: slot 0..15 of at least `bytes` bytes,
 * 64-byte aligned, grown on demand (the contents are kept up to the old
 * size, new bytes are zero). Growing is a first-call effect: the calibration
 * reports it and does not average it in. Out of memory aborts with a message.
 *
 * Where a slot starts within its page is fixed: slot s at byte
 * (s * PARSIM_SCRATCH_SKEW) mod 4096 of a page-aligned block, so the
 * sixteen slots start at sixteen different offsets, 1,088 bytes apart for
 * neighbouring slots. Without it, the offset depended on the allocator's
 * state: a grid that malloc takes from mmap (the real MPI program) starts
 * at the same page offset as its partner grid, one from the heap (the
 * calibration's process, whose earlier frees raised glibc's mmap
 * threshold) at an arbitrary one. A loop that loads one grid and stores
 * the other at equal page offsets pays "4K aliasing" (a load whose address
 * matches an earlier store's in bits 11:0 waits for it; Intel 64 and IA-32
 * Architectures Optimization Reference Manual, section "4K aliasing"):
 * heat's stencil at 256 x 256 took 50-57 us per call at equal offsets and
 * 46-48 us at different ones on the development VM, so the calibration
 * timed the kernel 10-15% faster than the real program ran it
 * (VALIDATION.md section 3.0c). Fixed offsets make both meet the same
 * layout, and different offsets per slot the fast one.
 */
#define PARSIM_SCRATCH_SKEW 1088u
static inline void *parsim_scratch(int slot, size_t bytes) {
    static void *mem[PARSIM_SCRATCH_SLOTS];
    static size_t len[PARSIM_SCRATCH_SLOTS];
    if (slot < 0 || slot >= PARSIM_SCRATCH_SLOTS) {
        fprintf(stderr, "parsim_scratch: slot %d is not in 0..%d\n", slot,
                PARSIM_SCRATCH_SLOTS - 1);
        abort();
    }
    if (bytes == 0) bytes = 1;
    /* 1088 = 17 x 64 and 17 is odd, so (s * 1088) mod 4096 differs for
     * every slot below 64. */
    size_t skew = ((size_t)slot * PARSIM_SCRATCH_SKEW) % 4096u;
    if (bytes > len[slot]) {
        size_t size = (bytes + 63) / 64 * 64;
        void *p = NULL;
        if (posix_memalign(&p, 4096, size + skew) != 0 || p == NULL) {
            fprintf(stderr, "parsim_scratch: cannot allocate %zu bytes\n", size);
            abort();
        }
        memset(p, 0, size + skew);
        if (mem[slot] != NULL) {
            memcpy((char *)p + skew, (char *)mem[slot] + skew, len[slot]);
            free(mem[slot]);
        }
        mem[slot] = p;
        len[slot] = size;
    }
    return (char *)mem[slot] + skew;
}

#endif /* PARSIM_KERNEL_H */
