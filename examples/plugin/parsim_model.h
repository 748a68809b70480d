/*
 * parsim_model.h: the C ABI of a parsim communication-model plugin.
 *
 * ABI version 1.
 *
 * A plugin is a shared library (.so, .dylib, .dll) that exports the eleven
 * functions below with exactly these names and signatures. parsim loads it
 * when a machine file says
 *
 *     model = "plugin"
 *     [plugin]
 *     library = "path/to/libmymodel.so"   # relative to the machine file
 *     [plugin.params]                     # passed to parsim_model_create
 *     dims = "4x4"
 *     latency = 2.5e-6
 *
 * and then asks it every question the simulation engine asks a machine
 * model (the Rust trait `sim_core::model::Machine`; its contract is repeated
 * here). It plays the role of the user class implementing
 * IHardwareDescriptor that the ParJava interpreter loads (Padaryan,
 * "Estimating parallel program run time with the ParJava interpreter").
 *
 * Versioning. parsim first calls parsim_model_abi_version() and refuses the
 * library, naming both versions, unless it returns the version parsim was
 * built for (PARSIM_MODEL_ABI_VERSION). The signature of
 * parsim_model_abi_version never changes; every other change of a name,
 * signature or meaning below gives a new version number. After the version
 * check parsim looks up all other symbols; a missing one is reported by
 * name and the library is not used.
 *
 * Units: times and durations in seconds of model time (double), sizes in
 * bytes (uint64_t), ranks 0 .. ranks-1 (uint32_t).
 *
 * Rules for the implementation:
 * - Every function may be called with any argument values; none may crash,
 *   abort, or let an exception or a panic unwind into the caller.
 * - Functions that take `const void *model` must not change the model's
 *   observable state: parsim may call them in any order and any number of
 *   times. Only parsim_model_reset and parsim_model_transfer change it.
 * - A model object is used by one thread at a time, but not necessarily
 *   always the same thread: keep its state in the object, not in
 *   thread-local or global variables (parsim may create several models of
 *   one library in one process).
 * - Results must be finite; durations >= 0; the times of
 *   parsim_model_transfer >= `ready`; for one (src, dst) pair, `*arrival`
 *   must not decrease from one call to the next (MPI's non-overtaking
 *   rule). parsim checks this: a result that breaks it (NaN, infinite,
 *   negative, earlier than `ready`, earlier than the pair's previous
 *   arrival) or a nonzero return of parsim_model_transfer is replaced by the
 *   nearest valid value and the first such violation is reported.
 */
#ifndef PARSIM_MODEL_H
#define PARSIM_MODEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version this header describes. */
#define PARSIM_MODEL_ABI_VERSION 1u

/* What a transfer carries (the `kind` argument of parsim_model_transfer). */
enum parsim_message_kind {
    /* A whole message sent eagerly (envelope and data together). */
    PARSIM_EAGER = 0,
    /* Rendezvous request-to-send: envelope only, `bytes` is the size of a
     * control message (parsim_model_control_bytes). */
    PARSIM_RENDEZVOUS_RTS = 1,
    /* Rendezvous clear-to-send, from the receiver back to the sender:
     * `src` is the receiving rank, `bytes` the control message size. */
    PARSIM_RENDEZVOUS_CTS = 2,
    /* Rendezvous payload, after the handshake. */
    PARSIM_RENDEZVOUS_DATA = 3
};

/* The ABI version the library implements: return PARSIM_MODEL_ABI_VERSION. */
uint32_t parsim_model_abi_version(void);

/*
 * Creates a model from the machine file's [plugin.params]: `n` pairs
 * keys[i] = values[i], NUL-terminated UTF-8, in key order. Strings are
 * passed as written; numbers in decimal (integers as integers, floats as
 * the shortest text that reads back to the same double, e.g. "2.5e-6" or
 * "1.0"); booleans as "true" / "false". The strings live only during the
 * call.
 *
 * Returns the model, an opaque non-NULL pointer that parsim passes to the
 * other functions, or NULL when the parameters are wrong; then it writes a
 * NUL-terminated message of at most err_len bytes (including the NUL) into
 * `err`, which parsim shows the user ("dims: expected e.g. \"4x4\", got
 * \"4xq\""). The rank count is not known yet: parsim_model_reset gives it
 * before every run.
 */
void *parsim_model_create(const char *const *keys, const char *const *values, size_t n,
                          char *err, size_t err_len);

/* Frees a model from parsim_model_create. Called exactly once per model. */
void parsim_model_destroy(void *model);

/* Clears all dynamic state (busy links, NIC timelines) for a new run of
 * `ranks` ranks. Always called before the first transfer of a run. */
void parsim_model_reset(void *model, uint32_t ranks);

/* Seconds that `nominal` seconds of reference compute take on `rank`'s node. */
double parsim_model_compute_seconds(const void *model, uint32_t rank, double nominal);

/* Seconds for a memory copy of `bytes` on `rank`'s node. */
double parsim_model_copy_seconds(const void *model, uint32_t rank, uint64_t bytes);

/* Messages of at least this many bytes use the rendezvous protocol. */
uint64_t parsim_model_eager_limit(const void *model, uint32_t src, uint32_t dst);

/* Bytes of a rendezvous control message (RTS/CTS) from `src` to `dst`. */
uint64_t parsim_model_control_bytes(const void *model, uint32_t src, uint32_t dst);

/* CPU seconds the sender spends in the call that starts a send of `bytes`
 * (LogGP's o_s); parsim adds it to the sender's clock. */
double parsim_model_send_overhead(const void *model, uint32_t src, uint32_t dst,
                                  uint64_t bytes);

/* CPU seconds the receiver spends to complete a receive of `bytes` once the
 * data is there (LogGP's o_r). */
double parsim_model_recv_overhead(const void *model, uint32_t src, uint32_t dst,
                                  uint64_t bytes);

/*
 * A transfer of `bytes` from `src` to `dst` of the given kind that the
 * sender starts at model time `ready`. Writes
 * - *cpu_free: when the sending CPU has handed over the last byte and the
 *   send buffer may be reused (local completion of the send), >= ready;
 * - *arrival: when the last byte is at the receiver's node, receive
 *   overhead not included, >= ready, and for one (src, dst) pair never
 *   earlier than the previous call's.
 * Calls come in nondecreasing `ready` order across the whole run (parsim
 * executes communication in global time order), so the model may keep
 * "busy until" state per link or NIC. Returns 0, or nonzero on an error
 * (e.g. a rank outside 0 .. ranks-1); parsim then uses `ready` for both
 * times and reports the error.
 */
int parsim_model_transfer(void *model, uint32_t src, uint32_t dst, uint64_t bytes,
                          uint32_t kind, double ready, double *cpu_free, double *arrival);

#ifdef __cplusplus
}
#endif

#endif /* PARSIM_MODEL_H */
