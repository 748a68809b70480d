/* ==== the parsim C runtime ================================================
 *
 * Values, the expression semantics of sim-core/src/value.rs (int/float
 * promotion, C division, overflow and division-by-zero errors, conditions,
 * builtins, arrays as reference-counted copy-on-write values), `print`
 * formatting (value.rs format_float), and the MPI side of every operation.
 *
 * Ownership: every function here that takes a PsVal by value consumes it
 * (releases it, or stores it), and every PsVal returned is owned by the
 * caller. Reading a variable takes a new reference (ps_ref).
 *
 * A run-time error prints `rank R: error: MESSAGE at line L` on stderr and
 * calls MPI_Abort(MPI_COMM_WORLD, 4).
 */
#include <mpi.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PS_FN static __attribute__((unused))
#define PS_NORETURN __attribute__((noreturn))

/* ---- values -------------------------------------------------------------- */

enum {
    PS_T_NULL,
    PS_T_INT,
    PS_T_FLOAT,
    PS_T_BOOL,
    PS_T_ANY,
    PS_T_REQ,
    PS_T_STATUS,
    PS_T_COMM,
    PS_T_ARRAY
};

typedef struct PsArr PsArr;

typedef struct {
    int32_t t;
    int32_t x; /* status: source; request: generation */
    int32_t y; /* status: tag */
    union {
        int64_t i; /* int, bool; status: bytes; request: id; communicator: index */
        double f;
        PsArr *a;
    } u;
} PsVal;

struct PsArr {
    int64_t rc;
    int64_t len;
    PsVal v[];
};

/* The longest array `array(n, v)` makes (value.rs MAX_ARRAY_LEN). */
#define PS_MAX_ARRAY_LEN (INT64_C(1) << 24)
/* The deepest call chain (the simulator's max_call_depth). */
#define PS_MAX_DEPTH 10000

static int ps_rank, ps_size;
static int ps_line;
static const char *ps_ctx;   /* prefix of error messages ("allreduce", ...) */
static int ps_in_params;     /* evaluating param defaults: every rank fails alike */
static double ps_t0;
static int ps_depth;

PS_FN PsVal ps_null(void) {
    PsVal v;
    memset(&v, 0, sizeof v);
    return v;
}
PS_FN PsVal ps_int(int64_t i) {
    PsVal v = ps_null();
    v.t = PS_T_INT;
    v.u.i = i;
    return v;
}
PS_FN PsVal ps_float(double f) {
    PsVal v = ps_null();
    v.t = PS_T_FLOAT;
    v.u.f = f;
    return v;
}
PS_FN PsVal ps_bool(int b) {
    PsVal v = ps_null();
    v.t = PS_T_BOOL;
    v.u.i = b != 0;
    return v;
}
PS_FN PsVal ps_any(void) {
    PsVal v = ps_null();
    v.t = PS_T_ANY;
    return v;
}
PS_FN PsVal ps_comm_val(int index) {
    PsVal v = ps_null();
    v.t = PS_T_COMM;
    v.u.i = index;
    return v;
}

PS_FN PsVal ps_ref(PsVal v) {
    if (v.t == PS_T_ARRAY) v.u.a->rc++;
    return v;
}

PS_FN void ps_drop(PsVal v) {
    if (v.t == PS_T_ARRAY && --v.u.a->rc == 0) {
        for (int64_t i = 0; i < v.u.a->len; i++) ps_drop(v.u.a->v[i]);
        free(v.u.a);
    }
}

PS_FN void ps_set(PsVal *dst, PsVal v) {
    PsVal old = *dst;
    *dst = v;
    ps_drop(old);
}

PS_FN void ps_drop_all(PsVal *v, int n) {
    for (int i = 0; i < n; i++) ps_drop(v[i]);
}

PS_FN const char *ps_type_name(PsVal v) {
    switch (v.t) {
    case PS_T_NULL: return "null";
    case PS_T_INT: return "int";
    case PS_T_FLOAT: return "float";
    case PS_T_BOOL: return "bool";
    case PS_T_ANY: return "any";
    case PS_T_REQ: return "request";
    case PS_T_STATUS: return "status";
    case PS_T_COMM: return "communicator";
    default: return "array";
    }
}

/* ---- errors -------------------------------------------------------------- */

PS_FN void ps_free_mpi_objects(void);

PS_FN PS_NORETURN __attribute__((format(printf, 1, 2))) void ps_fail(const char *fmt, ...) {
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fflush(stdout);
    if (ps_in_params) {
        /* Param defaults are the same on every rank: each fails alike, rank 0 says so. */
        if (ps_rank == 0) {
            fprintf(stderr, "rank 0: error: %s%s%s at line %d\n", ps_ctx ? ps_ctx : "",
                    ps_ctx ? ": " : "", msg, ps_line);
            fflush(stderr);
        }
        ps_free_mpi_objects();
        MPI_Finalize();
        exit(4);
    }
    fprintf(stderr, "rank %d: error: %s%s%s at line %d\n", ps_rank, ps_ctx ? ps_ctx : "",
            ps_ctx ? ": " : "", msg, ps_line);
    fflush(stderr);
    /* MPI_Abort tears the job down at once, and MPICH's launcher (Hydra)
     * drops the output it has not forwarded yet: 1 run in 30 lost the
     * message above on a quiet machine. A moment lets it through. */
    struct timespec pause = {0, 200 * 1000 * 1000};
    nanosleep(&pause, NULL);
    MPI_Abort(MPI_COMM_WORLD, 4);
    exit(4);
}

PS_FN void *ps_xalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL) ps_fail("out of memory (%zu bytes)", bytes);
    return p;
}

/* ---- text ---------------------------------------------------------------- */

typedef struct {
    char *p;
    size_t n, cap;
} PsStr;

PS_FN void ps_str_init(PsStr *s) {
    s->cap = 128;
    s->n = 0;
    s->p = (char *)ps_xalloc(s->cap);
    s->p[0] = 0;
}

PS_FN void ps_str_add(PsStr *s, const char *text, size_t len) {
    if (s->n + len + 1 > s->cap) {
        while (s->n + len + 1 > s->cap) s->cap *= 2;
        char *p = (char *)realloc(s->p, s->cap);
        if (p == NULL) ps_fail("out of memory (%zu bytes)", s->cap);
        s->p = p;
    }
    memcpy(s->p + s->n, text, len);
    s->n += len;
    s->p[s->n] = 0;
}

PS_FN void ps_str_cstr(PsStr *s, const char *text) { ps_str_add(s, text, strlen(text)); }

/* Rust's `{}` of an f64: the shortest digits that read back as the same
 * number, written out without an exponent. `out` holds at least 400 bytes. */
PS_FN void ps_fmt_display(double x, char *out) {
    if (isnan(x)) {
        strcpy(out, "NaN");
        return;
    }
    if (isinf(x)) {
        strcpy(out, x < 0 ? "-inf" : "inf");
        return;
    }
    char *o = out;
    if (signbit(x)) {
        *o++ = '-';
        x = -x;
    }
    if (x == 0) {
        strcpy(o, "0");
        return;
    }
    char buf[64];
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*e", p - 1, x);
        if (strtod(buf, NULL) == x) break;
    }
    char digits[32];
    int nd = 0;
    const char *c = buf;
    for (; *c && *c != 'e'; c++)
        if (*c >= '0' && *c <= '9' && nd < 31) digits[nd++] = *c;
    int e = (*c == 'e') ? atoi(c + 1) : 0;
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    /* The value is d1.d2d3...dn x 10^e. */
    if (e >= nd - 1) {
        memcpy(o, digits, (size_t)nd);
        o += nd;
        for (int i = 0; i < e - (nd - 1); i++) *o++ = '0';
    } else if (e >= 0) {
        memcpy(o, digits, (size_t)(e + 1));
        o += e + 1;
        *o++ = '.';
        memcpy(o, digits + e + 1, (size_t)(nd - e - 1));
        o += nd - e - 1;
    } else {
        *o++ = '0';
        *o++ = '.';
        for (int i = 0; i < -e - 1; i++) *o++ = '0';
        memcpy(o, digits, (size_t)nd);
        o += nd;
    }
    *o = 0;
}

/* Trailing zeros (and then a trailing '.') of a number with a '.'. */
PS_FN void ps_trim_zeros(char *s) {
    if (strchr(s, '.') == NULL) return;
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == '0') s[--n] = 0;
    if (n > 0 && s[n - 1] == '.') s[--n] = 0;
}

/* value.rs format_float: a float as `print` shows it, at most 12
 * significant digits. `out` holds at least 400 bytes. */
PS_FN void ps_fmt_float(double x, char *out) {
    char plain[400];
    ps_fmt_display(x, plain);
    if (!isfinite(x) || x == 0.0 || strlen(plain) <= 13) {
        strcpy(out, plain);
        return;
    }
    int mag = (int)floor(log10(fabs(x)));
    if (mag >= -5 && mag < 15) {
        int decimals = 11 - mag;
        if (decimals < 0) decimals = 0;
        snprintf(out, 400, "%.*f", decimals, x);
        ps_trim_zeros(out);
    } else {
        char m[64];
        snprintf(m, sizeof m, "%.11e", x);
        char *e = strchr(m, 'e');
        int exp10 = 0;
        if (e != NULL) {
            exp10 = atoi(e + 1);
            *e = 0;
        }
        ps_trim_zeros(m);
        snprintf(out, 400, "%se%d", m, exp10);
    }
}

PS_FN void ps_str_val(PsStr *s, PsVal v) {
    char buf[400];
    switch (v.t) {
    case PS_T_NULL: ps_str_cstr(s, "null"); return;
    case PS_T_INT: snprintf(buf, sizeof buf, "%" PRId64, v.u.i); break;
    case PS_T_FLOAT: ps_fmt_float(v.u.f, buf); break;
    case PS_T_BOOL: ps_str_cstr(s, v.u.i ? "true" : "false"); return;
    case PS_T_ANY: ps_str_cstr(s, "any"); return;
    case PS_T_REQ: snprintf(buf, sizeof buf, "request#%" PRId64, v.u.i); break;
    case PS_T_COMM:
        if (v.u.i == 0) {
            ps_str_cstr(s, "world");
            return;
        }
        snprintf(buf, sizeof buf, "comm#%" PRId64, v.u.i);
        break;
    case PS_T_STATUS:
        snprintf(buf, sizeof buf, "status(source: %d, tag: %d, bytes: %" PRId64 ")", v.x, v.y,
                 v.u.i);
        break;
    default:
        ps_str_cstr(s, "[");
        for (int64_t i = 0; i < v.u.a->len; i++) {
            if (i > 0) ps_str_cstr(s, ", ");
            ps_str_val(s, v.u.a->v[i]);
        }
        ps_str_cstr(s, "]");
        return;
    }
    ps_str_cstr(s, buf);
}

/* A value as text for an error message (at most ~500 characters). */
typedef struct {
    char s[512];
} PsShow;

PS_FN PsShow ps_show(PsVal v) {
    PsShow r;
    PsStr s;
    ps_str_init(&s);
    ps_str_val(&s, v);
    snprintf(r.s, sizeof r.s, "%s", s.p);
    free(s.p);
    return r;
}

PS_FN PsShow ps_show_float(double x) {
    PsShow r;
    ps_fmt_display(x, r.s);
    return r;
}

/* ---- print --------------------------------------------------------------- */

PS_FN void ps_print_val(PsStr *s, PsVal v) {
    ps_str_val(s, v);
    ps_drop(v);
}

/* `abort(...)`: the text is the run-time error's message, as in the simulator. */
PS_FN PS_NORETURN void ps_abort_end(PsStr *s) {
    if (s->n == 0) ps_fail("abort");
    ps_fail("abort: %.*s", (int)s->n, s->p);
}

PS_FN void ps_print_end(PsStr *s) {
    char prefix[32];
    snprintf(prefix, sizeof prefix, "[%d] ", ps_rank);
    PsStr line;
    ps_str_init(&line);
    ps_str_cstr(&line, prefix);
    ps_str_add(&line, s->p, s->n);
    ps_str_add(&line, "\n", 1);
    fwrite(line.p, 1, line.n, stdout);
    fflush(stdout);
    free(line.p);
    free(s->p);
}

/* ---- operators ----------------------------------------------------------- */

enum { PS_ADD, PS_SUB, PS_MUL, PS_DIV, PS_REM, PS_EQ, PS_NE, PS_LT, PS_LE, PS_GT, PS_GE };

static const char *const ps_op_symbol[] = {"+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">="};

PS_FN int ps_is_num(PsVal v) { return v.t == PS_T_INT || v.t == PS_T_FLOAT; }

PS_FN double ps_as_f64(PsVal v) { return v.t == PS_T_INT ? (double)v.u.i : v.u.f; }

/* value.rs truthy: bools and numbers (nonzero is true). Consumes v. */
PS_FN int ps_truth(PsVal v) {
    switch (v.t) {
    case PS_T_BOOL: return v.u.i != 0;
    case PS_T_INT: return v.u.i != 0;
    case PS_T_FLOAT: return v.u.f != 0.0;
    default: {
        const char *t = ps_type_name(v);
        ps_drop(v);
        ps_fail("a condition must be a bool or a number, got %s", t);
    }
    }
}

PS_FN PsVal ps_not(PsVal v) { return ps_bool(!ps_truth(v)); }

PS_FN PsVal ps_neg(PsVal v) {
    if (v.t == PS_T_INT) {
        if (v.u.i == INT64_MIN) ps_fail("integer overflow in negation");
        return ps_int(-v.u.i);
    }
    if (v.t == PS_T_FLOAT) return ps_float(-v.u.f);
    const char *t = ps_type_name(v);
    ps_drop(v);
    ps_fail("cannot negate %s", t);
}

/* Value's derived PartialEq (elements of arrays compare by variant). */
PS_FN int ps_same(PsVal a, PsVal b) {
    if (a.t != b.t) return 0;
    switch (a.t) {
    case PS_T_NULL:
    case PS_T_ANY: return 1;
    case PS_T_INT:
    case PS_T_BOOL:
    case PS_T_COMM: return a.u.i == b.u.i;
    case PS_T_FLOAT: return a.u.f == b.u.f;
    case PS_T_REQ: return a.u.i == b.u.i && a.x == b.x;
    case PS_T_STATUS: return a.x == b.x && a.y == b.y && a.u.i == b.u.i;
    default:
        if (a.u.a->len != b.u.a->len) return 0;
        for (int64_t i = 0; i < a.u.a->len; i++)
            if (!ps_same(a.u.a->v[i], b.u.a->v[i])) return 0;
        return 1;
    }
}

/* value.rs binary(). Consumes a and b. */
PS_FN PsVal ps_bin(int op, PsVal a, PsVal b) {
    if (a.t == PS_T_INT && b.t == PS_T_INT) {
        int64_t x = a.u.i, y = b.u.i, r;
        switch (op) {
        case PS_ADD:
            if (__builtin_add_overflow(x, y, &r)) break;
            return ps_int(r);
        case PS_SUB:
            if (__builtin_sub_overflow(x, y, &r)) break;
            return ps_int(r);
        case PS_MUL:
            if (__builtin_mul_overflow(x, y, &r)) break;
            return ps_int(r);
        case PS_DIV:
        case PS_REM:
            if (y == 0)
                ps_fail("integer division by zero in %" PRId64 " %s 0", x, ps_op_symbol[op]);
            if (x == INT64_MIN && y == -1) break;
            return ps_int(op == PS_DIV ? x / y : x % y);
        case PS_EQ: return ps_bool(x == y);
        case PS_NE: return ps_bool(x != y);
        case PS_LT: return ps_bool(x < y);
        case PS_LE: return ps_bool(x <= y);
        case PS_GT: return ps_bool(x > y);
        default: return ps_bool(x >= y);
        }
        ps_fail("integer overflow in %" PRId64 " %s %" PRId64, x, ps_op_symbol[op], y);
    }
    if (ps_is_num(a) && ps_is_num(b)) {
        double x = ps_as_f64(a), y = ps_as_f64(b);
        switch (op) {
        case PS_ADD: return ps_float(x + y);
        case PS_SUB: return ps_float(x - y);
        case PS_MUL: return ps_float(x * y);
        case PS_DIV: return ps_float(x / y);
        case PS_REM: return ps_float(fmod(x, y));
        case PS_EQ: return ps_bool(x == y);
        case PS_NE: return ps_bool(x != y);
        case PS_LT: return ps_bool(x < y);
        case PS_LE: return ps_bool(x <= y);
        case PS_GT: return ps_bool(x > y);
        default: return ps_bool(x >= y);
        }
    }
    if (op == PS_EQ || op == PS_NE) {
        int same = 0;
        if (a.t == b.t && a.t != PS_T_INT && a.t != PS_T_FLOAT) same = ps_same(a, b);
        ps_drop(a);
        ps_drop(b);
        return ps_bool(op == PS_EQ ? same : !same);
    }
    const char *ta = ps_type_name(a), *tb = ps_type_name(b);
    ps_drop(a);
    ps_drop(b);
    ps_fail("cannot apply `%s` to %s and %s", ps_op_symbol[op], ta, tb);
}

/* ---- builtins ------------------------------------------------------------ */

PS_FN void ps_need_number(const char *f, PsVal v) {
    if (!ps_is_num(v)) ps_fail("`%s` needs numbers, got %s", f, ps_type_name(v));
}

/* min/max of n >= 1 values (value.rs builtin). Consumes args. */
PS_FN PsVal ps_minmax(int is_min, int n, PsVal *args) {
    const char *f = is_min ? "min" : "max";
    if (n < 1) ps_fail("`%s` needs at least one argument", f);
    ps_need_number(f, args[0]);
    int best = 0, any_float = 0;
    for (int i = 1; i < n; i++) {
        ps_need_number(f, args[i]);
        PsVal c = ps_bin(is_min ? PS_LT : PS_GT, args[i], args[best]);
        if (c.u.i) best = i;
    }
    for (int i = 0; i < n; i++) any_float |= args[i].t == PS_T_FLOAT;
    PsVal r = any_float ? ps_float(ps_as_f64(args[best])) : args[best];
    ps_drop_all(args, n);
    return r;
}

PS_FN PsVal ps_b_abs(PsVal v) {
    if (v.t == PS_T_INT) {
        if (v.u.i == INT64_MIN) ps_fail("integer overflow in abs");
        return ps_int(v.u.i < 0 ? -v.u.i : v.u.i);
    }
    ps_need_number("abs", v);
    return ps_float(fabs(v.u.f));
}

PS_FN PsVal ps_float_to_int(const char *f, double x) {
    if (isfinite(x) && x >= -9223372036854775808.0 && x <= 9223372036854775808.0) {
        /* Rust's `as` saturates at i64::MAX (2^63 itself passes the check). */
        if (x >= 9223372036854775808.0) return ps_int(INT64_MAX);
        return ps_int((int64_t)x);
    }
    ps_fail("`%s` result %s does not fit in an integer", f, ps_show_float(x).s);
}

PS_FN PsVal ps_b_floor(PsVal v) {
    if (v.t == PS_T_INT) return v;
    ps_need_number("floor", v);
    return ps_float_to_int("floor", floor(v.u.f));
}

PS_FN PsVal ps_b_ceil(PsVal v) {
    if (v.t == PS_T_INT) return v;
    ps_need_number("ceil", v);
    return ps_float_to_int("ceil", ceil(v.u.f));
}

PS_FN PsVal ps_b_sqrt(PsVal v) {
    ps_need_number("sqrt", v);
    return ps_float(sqrt(ps_as_f64(v)));
}

PS_FN PsVal ps_b_log2(PsVal v) {
    ps_need_number("log2", v);
    return ps_float(log2(ps_as_f64(v)));
}

PS_FN PsArr *ps_arr_new(int64_t n) {
    PsArr *a = (PsArr *)ps_xalloc(sizeof(PsArr) + (size_t)n * sizeof(PsVal));
    a->rc = 1;
    a->len = n;
    return a;
}

PS_FN PsVal ps_arr_val(PsArr *a) {
    PsVal v = ps_null();
    v.t = PS_T_ARRAY;
    v.u.a = a;
    return v;
}

/* `[a, b, c]`: takes the n values. */
PS_FN PsVal ps_arr_from(PsVal *items, int64_t n) {
    PsArr *a = ps_arr_new(n);
    for (int64_t i = 0; i < n; i++) a->v[i] = items[i];
    return ps_arr_val(a);
}

PS_FN PsVal ps_b_array(PsVal n, PsVal v) {
    if (n.t == PS_T_INT && n.u.i >= 0 && n.u.i <= PS_MAX_ARRAY_LEN) {
        PsArr *a = ps_arr_new(n.u.i);
        for (int64_t i = 0; i < n.u.i; i++) a->v[i] = ps_ref(v);
        ps_drop(v);
        return ps_arr_val(a);
    }
    ps_fail("`array(n, v)` needs 0 <= n <= %" PRId64 ", got %s", PS_MAX_ARRAY_LEN, ps_show(n).s);
}

PS_FN PsVal ps_b_len(PsVal v) {
    if (v.t != PS_T_ARRAY) ps_fail("`len` needs an array, got %s", ps_type_name(v));
    int64_t n = v.u.a->len;
    ps_drop(v);
    return ps_int(n);
}

PS_FN PsVal ps_b_sum(PsVal v) {
    if (v.t != PS_T_ARRAY) ps_fail("`sum` needs an array, got %s", ps_type_name(v));
    PsVal acc = ps_int(0);
    for (int64_t i = 0; i < v.u.a->len; i++) {
        ps_need_number("sum", v.u.a->v[i]);
        acc = ps_bin(PS_ADD, acc, v.u.a->v[i]);
    }
    ps_drop(v);
    return acc;
}

/* ---- arrays and fields --------------------------------------------------- */

/* value.rs array_index. Consumes i. */
PS_FN int64_t ps_index_of(int64_t len, PsVal i) {
    if (i.t == PS_T_INT && i.u.i >= 0 && i.u.i < len) return i.u.i;
    if (i.t == PS_T_INT)
        ps_fail("index %" PRId64 " is out of bounds for an array of length %" PRId64, i.u.i, len);
    const char *t = ps_type_name(i);
    ps_drop(i);
    ps_fail("an array index must be an int, got %s", t);
}

/* `a[i]`, first half: `a` must be an array (checked before `i` is evaluated). */
PS_FN void ps_check_indexable(PsVal a) {
    if (a.t != PS_T_ARRAY) ps_fail("cannot index %s", ps_type_name(a));
}

PS_FN PsVal ps_index(PsVal a, PsVal i) {
    int64_t k = ps_index_of(a.u.a->len, i);
    PsVal r = ps_ref(a.u.a->v[k]);
    ps_drop(a);
    return r;
}

/* `a[i] = v` on the array in variable *dst (copy-on-write). */
PS_FN void ps_assign_index(PsVal *dst, PsVal i, PsVal v) {
    if (dst->t != PS_T_ARRAY) ps_fail("cannot assign an element of %s", ps_type_name(*dst));
    int64_t k = ps_index_of(dst->u.a->len, i);
    if (dst->u.a->rc > 1) {
        PsArr *old = dst->u.a;
        PsArr *copy = ps_arr_new(old->len);
        for (int64_t j = 0; j < old->len; j++) copy->v[j] = ps_ref(old->v[j]);
        old->rc--;
        dst->u.a = copy;
    }
    ps_set(&dst->u.a->v[k], v);
}

enum { PS_F_SOURCE, PS_F_TAG, PS_F_BYTES };

PS_FN PsVal ps_field(PsVal s, int f) {
    static const char *const names[] = {"source", "tag", "bytes"};
    if (s.t != PS_T_STATUS) {
        const char *t = ps_type_name(s);
        ps_drop(s);
        ps_fail("`.%s` needs a status (from recv or wait), got %s", names[f], t);
    }
    return ps_int(f == PS_F_SOURCE ? s.x : f == PS_F_TAG ? s.y : s.u.i);
}

/* ---- MPI: errors, buffers ------------------------------------------------ */

PS_FN void ps_check(int rc, const char *what) {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING + 1];
    int len = 0, cls = 0;
    MPI_Error_class(rc, &cls);
    if (cls == MPI_ERR_TRUNCATE)
        ps_fail("message truncated in %s: a message is larger than the receive accepts", what);
    text[0] = 0;
    MPI_Error_string(rc, text, &len);
    text[len < 0 ? 0 : len] = 0;
    ps_fail("%s failed: %s", what, text);
}

/* Blocking operations, collectives and `copy` use these buffers, grown on
 * demand and reused; their bytes are zero (every message carries zeros). */
enum { PS_S_SEND, PS_S_RECV, PS_S_CSEND, PS_S_CRECV, PS_S_VSEND, PS_S_VRECV, PS_S_COPY_A,
       PS_S_COPY_B, PS_S_SLOTS };
static char *ps_scratch_mem[PS_S_SLOTS];
static size_t ps_scratch_len[PS_S_SLOTS];

PS_FN char *ps_scratch(int slot, size_t bytes) {
    if (bytes > ps_scratch_len[slot]) {
        size_t size = bytes < 4096 ? 4096 : bytes;
        free(ps_scratch_mem[slot]);
        ps_scratch_mem[slot] = (char *)ps_xalloc(size);
        memset(ps_scratch_mem[slot], 0, size);
        ps_scratch_len[slot] = size;
    }
    return ps_scratch_mem[slot];
}

/* Buffers of nonblocking operations live until the request completes; a
 * small pool reuses them. */
#define PS_POOL 64
static struct {
    char *p;
    size_t cap;
} ps_pool[PS_POOL];
static int ps_npool;

PS_FN char *ps_buf_get(size_t bytes, size_t *cap) {
    int best = -1;
    for (int i = 0; i < ps_npool; i++)
        if (ps_pool[i].cap >= bytes && (best < 0 || ps_pool[i].cap < ps_pool[best].cap)) best = i;
    if (best >= 0) {
        char *p = ps_pool[best].p;
        *cap = ps_pool[best].cap;
        ps_pool[best] = ps_pool[--ps_npool];
        return p;
    }
    size_t size = bytes < 64 ? 64 : bytes;
    char *p = (char *)ps_xalloc(size);
    memset(p, 0, size);
    *cap = size;
    return p;
}

PS_FN void ps_buf_put(char *p, size_t cap) {
    if (p == NULL) return;
    if (ps_npool < PS_POOL) {
        ps_pool[ps_npool].p = p;
        ps_pool[ps_npool].cap = cap;
        ps_npool++;
    } else {
        free(p);
    }
}

/* A byte count as an MPI count. */
PS_FN int ps_count(int64_t bytes) {
    if (bytes > INT_MAX)
        ps_fail("%" PRId64 " bytes is more than an MPI count holds (%d)", bytes, INT_MAX);
    return (int)bytes;
}

/* An array of n ints (at least one). */
PS_FN int *ps_int_array(int n) { return (int *)ps_xalloc((size_t)(n + 1) * sizeof(int)); }

/* ---- communicators ------------------------------------------------------- */

typedef struct {
    MPI_Comm comm;
    /* A duplicate for the runtime's own messages (long carried values). */
    MPI_Comm shadow;
    int rank, size;
} PsComm;

static PsComm *ps_comms;
static int ps_ncomms, ps_capcomms;

PS_FN int ps_comm_add(MPI_Comm c) {
    if (ps_ncomms == ps_capcomms) {
        ps_capcomms = ps_capcomms ? 2 * ps_capcomms : 16;
        PsComm *n = (PsComm *)realloc(ps_comms, (size_t)ps_capcomms * sizeof(PsComm));
        if (n == NULL) ps_fail("out of memory");
        ps_comms = n;
    }
    PsComm *e = &ps_comms[ps_ncomms];
    e->comm = c;
    if (c != MPI_COMM_WORLD) ps_check(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    ps_check(MPI_Comm_dup(c, &e->shadow), "MPI_Comm_dup");
    ps_check(MPI_Comm_set_errhandler(e->shadow, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    ps_check(MPI_Comm_rank(c, &e->rank), "MPI_Comm_rank");
    ps_check(MPI_Comm_size(c, &e->size), "MPI_Comm_size");
    return ps_ncomms++;
}

PS_FN int ps_comm_index(PsVal v, const char *what) {
    if (v.t != PS_T_COMM) {
        const char *t = ps_type_name(v);
        ps_drop(v);
        ps_fail("`%s` needs a communicator, got %s", what, t);
    }
    if (v.u.i < 0 || v.u.i >= ps_ncomms) ps_fail("communicator #%" PRId64 " does not exist", v.u.i);
    return (int)v.u.i;
}

PS_FN PsVal ps_rank_in(PsVal c) { return ps_int(ps_comms[ps_comm_index(c, "rank_in")].rank); }
PS_FN PsVal ps_size_in(PsVal c) { return ps_int(ps_comms[ps_comm_index(c, "size_in")].size); }

/* `comm:`, as the simulator's eval_comm checks it. */
PS_FN int ps_comm_arg(PsVal v) {
    if (v.t == PS_T_NULL)
        ps_fail("`comm:` is null (a comm_split with a negative color gives no communicator)");
    if (v.t != PS_T_COMM) {
        PsShow s = ps_show(v);
        ps_drop(v);
        ps_fail("`comm:` needs a communicator, got %s", s.s);
    }
    return ps_comm_index(v, "comm:");
}

/* `to:`/`from:` (MPI_ANY_SOURCE for `from: any`). */
PS_FN int ps_peer_arg(PsVal v, int comm, int is_recv) {
    if (v.t == PS_T_ANY && is_recv) return MPI_ANY_SOURCE;
    if (v.t == PS_T_INT && v.u.i >= 0 && v.u.i < ps_comms[comm].size) return (int)v.u.i;
    PsShow s = ps_show(v);
    ps_drop(v);
    if (comm == 0)
        ps_fail("`%s: %s` is not a valid rank (size is %d)", is_recv ? "from" : "to", s.s,
                ps_comms[comm].size);
    ps_fail("`%s: %s` is not a valid rank (size of communicator #%d is %d)",
            is_recv ? "from" : "to", s.s, comm, ps_comms[comm].size);
}

PS_FN int ps_tag_arg(PsVal v, int is_recv) {
    if (v.t == PS_T_ANY && is_recv) return MPI_ANY_TAG;
    if (v.t == PS_T_INT && v.u.i >= 0 && v.u.i <= INT_MAX) return (int)v.u.i;
    PsShow s = ps_show(v);
    ps_drop(v);
    ps_fail("`tag: %s` is not a valid tag (0 ..= %d)", s.s, INT_MAX);
}

/* p2p.rs value_bytes: an int >= 0, or a float >= 0 with no fraction. */
PS_FN int ps_value_bytes(PsVal v, int64_t *out) {
    if (v.t == PS_T_INT && v.u.i >= 0) {
        *out = v.u.i;
        return 1;
    }
    if (v.t == PS_T_FLOAT && v.u.f >= 0.0 && v.u.f == trunc(v.u.f) && v.u.f < 9.0e18) {
        *out = (int64_t)v.u.f;
        return 1;
    }
    return 0;
}

PS_FN int64_t ps_bytes_arg(PsVal v) {
    int64_t n = 0;
    if (!ps_value_bytes(v, &n)) {
        PsShow s = ps_show(v);
        ps_drop(v);
        ps_fail("`bytes:` must be a non-negative integer, got %s", s.s);
    }
    return n;
}

/* ---- requests ------------------------------------------------------------ */

typedef struct {
    MPI_Request req;
    char *buf;
    size_t cap;
    int64_t bytes;
    uint32_t gen;
    int live;
    int is_send;
} PsReq;

static PsReq *ps_reqs;
static int ps_nreqs, ps_capreqs;
static int *ps_free_reqs;
static int ps_nfree;

PS_FN PsVal ps_req_new(MPI_Request r, char *buf, size_t cap, int64_t bytes, int is_send) {
    int id;
    if (ps_nfree > 0) {
        id = ps_free_reqs[--ps_nfree];
    } else {
        if (ps_nreqs == ps_capreqs) {
            ps_capreqs = ps_capreqs ? 2 * ps_capreqs : 64;
            PsReq *n = (PsReq *)realloc(ps_reqs, (size_t)ps_capreqs * sizeof(PsReq));
            int *f = (int *)realloc(ps_free_reqs, (size_t)ps_capreqs * sizeof(int));
            if (n == NULL || f == NULL) ps_fail("out of memory");
            ps_reqs = n;
            ps_free_reqs = f;
        }
        id = ps_nreqs++;
        ps_reqs[id].gen = 0;
    }
    PsReq *q = &ps_reqs[id];
    q->req = r;
    q->buf = buf;
    q->cap = cap;
    q->bytes = bytes;
    q->live = 1;
    q->is_send = is_send;
    PsVal v = ps_null();
    v.t = PS_T_REQ;
    v.x = (int32_t)q->gen;
    v.u.i = id;
    return v;
}

PS_FN void ps_req_release(int id) {
    PsReq *q = &ps_reqs[id];
    ps_buf_put(q->buf, q->cap);
    q->buf = NULL;
    q->live = 0;
    q->gen++;
    ps_free_reqs[ps_nfree++] = id;
}

/* The live request in variable *slot, -1 for null or a completed one. */
PS_FN int ps_live_req(PsVal *slot, const char *what) {
    if (slot->t == PS_T_NULL) return -1;
    if (slot->t != PS_T_REQ) ps_fail("`%s` needs a request, got %s", what, ps_type_name(*slot));
    int64_t id = slot->u.i;
    if (id < 0 || id >= ps_nreqs || !ps_reqs[id].live || (int32_t)ps_reqs[id].gen != slot->x)
        return -1;
    return (int)id;
}

PS_FN PsVal ps_status_of(const MPI_Status *st) {
    int n = 0;
    MPI_Get_count(st, MPI_BYTE, &n);
    PsVal v = ps_null();
    v.t = PS_T_STATUS;
    v.x = st->MPI_SOURCE;
    v.y = st->MPI_TAG;
    v.u.i = n;
    return v;
}

PS_FN void ps_recv_check(int rc, const MPI_Status *st, int64_t cap, const char *what) {
    if (rc == MPI_SUCCESS) return;
    int cls = 0;
    MPI_Error_class(rc, &cls);
    if (cls == MPI_ERR_TRUNCATE)
        ps_fail("message truncated: rank %d sent a message with tag %d larger than this receive "
                "accepts (at most %" PRId64 " bytes)",
                st->MPI_SOURCE, st->MPI_TAG, cap);
    ps_check(rc, what);
}

/* ---- point-to-point ------------------------------------------------------ */

enum { PS_STANDARD, PS_SYNCHRONOUS, PS_BUFFERED };

/* Buffered sends (bsend, ibsend): the data is copied and sent with
 * MPI_Isend; the copy lives until that send completes, as with
 * MPI_Bsend's attached buffer but without its fixed size. */
static struct {
    MPI_Request req;
    char *buf;
    size_t cap;
} *ps_bsends;
static int ps_nbsends, ps_capbsends;

PS_FN void ps_bsend_sweep(void) {
    int i = 0;
    while (i < ps_nbsends) {
        int done = 0;
        ps_check(MPI_Test(&ps_bsends[i].req, &done, MPI_STATUS_IGNORE), "bsend");
        if (done) {
            ps_buf_put(ps_bsends[i].buf, ps_bsends[i].cap);
            ps_bsends[i] = ps_bsends[--ps_nbsends];
        } else {
            i++;
        }
    }
}

PS_FN void ps_bsend(int comm, int peer, int tag, int64_t bytes) {
    ps_bsend_sweep();
    if (ps_nbsends == ps_capbsends) {
        ps_capbsends = ps_capbsends ? 2 * ps_capbsends : 16;
        void *n = realloc(ps_bsends, (size_t)ps_capbsends * sizeof *ps_bsends);
        if (n == NULL) ps_fail("out of memory");
        ps_bsends = n;
    }
    size_t cap = 0;
    char *b = ps_buf_get((size_t)bytes, &cap);
    ps_bsends[ps_nbsends].buf = b;
    ps_bsends[ps_nbsends].cap = cap;
    ps_check(MPI_Isend(b, ps_count(bytes), MPI_BYTE, peer, tag, ps_comms[comm].comm,
                       &ps_bsends[ps_nbsends].req),
             "bsend");
    ps_nbsends++;
}

PS_FN void ps_send(int mode, int comm, int peer, int tag, int64_t bytes) {
    int n = ps_count(bytes);
    char *b = ps_scratch(PS_S_SEND, (size_t)bytes);
    MPI_Comm c = ps_comms[comm].comm;
    if (mode == PS_STANDARD)
        ps_check(MPI_Send(b, n, MPI_BYTE, peer, tag, c), "send");
    else if (mode == PS_SYNCHRONOUS)
        ps_check(MPI_Ssend(b, n, MPI_BYTE, peer, tag, c), "ssend");
    else
        ps_bsend(comm, peer, tag, bytes);
}

PS_FN PsVal ps_recv(int comm, int peer, int tag, int64_t bytes) {
    MPI_Status st;
    memset(&st, 0, sizeof st);
    char *b = ps_scratch(PS_S_RECV, (size_t)bytes);
    int rc = MPI_Recv(b, ps_count(bytes), MPI_BYTE, peer, tag, ps_comms[comm].comm, &st);
    ps_recv_check(rc, &st, bytes, "recv");
    return ps_status_of(&st);
}

PS_FN PsVal ps_isend(int mode, int comm, int peer, int tag, int64_t bytes) {
    int n = ps_count(bytes);
    if (mode == PS_BUFFERED) {
        /* Complete at once, as the simulator's buffered sends are. */
        ps_bsend(comm, peer, tag, bytes);
        return ps_req_new(MPI_REQUEST_NULL, NULL, 0, bytes, 1);
    }
    size_t cap = 0;
    char *b = ps_buf_get((size_t)bytes, &cap);
    MPI_Request r;
    MPI_Comm c = ps_comms[comm].comm;
    if (mode == PS_SYNCHRONOUS)
        ps_check(MPI_Issend(b, n, MPI_BYTE, peer, tag, c, &r), "issend");
    else
        ps_check(MPI_Isend(b, n, MPI_BYTE, peer, tag, c, &r), "isend");
    return ps_req_new(r, b, cap, bytes, 1);
}

PS_FN PsVal ps_irecv(int comm, int peer, int tag, int64_t bytes) {
    int n = ps_count(bytes);
    size_t cap = 0;
    char *b = ps_buf_get((size_t)bytes, &cap);
    MPI_Request r;
    ps_check(MPI_Irecv(b, n, MPI_BYTE, peer, tag, ps_comms[comm].comm, &r), "irecv");
    return ps_req_new(r, b, cap, bytes, 0);
}

PS_FN PsVal ps_sendrecv(int comm, int to, int stag, int64_t sbytes, int rcomm, int from, int rtag,
                        int64_t rbytes) {
    if (rcomm != comm) ps_fail("sendrecv needs one communicator for both messages");
    MPI_Status st;
    memset(&st, 0, sizeof st);
    char *sb = ps_scratch(PS_S_SEND, (size_t)sbytes);
    char *rb = ps_scratch(PS_S_RECV, (size_t)rbytes);
    int rc = MPI_Sendrecv(sb, ps_count(sbytes), MPI_BYTE, to, stag, rb, ps_count(rbytes), MPI_BYTE,
                          from, rtag, ps_comms[comm].comm, &st);
    ps_recv_check(rc, &st, rbytes, "sendrecv");
    return ps_status_of(&st);
}

/* Completes live request `id` whose MPI request has finished with `st`. */
PS_FN PsVal ps_req_finish(int id, const MPI_Status *st) {
    PsVal r = ps_reqs[id].is_send ? ps_null() : ps_status_of(st);
    ps_req_release(id);
    return r;
}

PS_FN PsVal ps_wait(PsVal *slot) {
    int id = ps_live_req(slot, "wait");
    PsVal r = ps_null();
    if (id >= 0) {
        MPI_Status st;
        memset(&st, 0, sizeof st);
        int rc = MPI_Wait(&ps_reqs[id].req, &st);
        ps_recv_check(rc, &st, ps_reqs[id].bytes, "wait");
        r = ps_req_finish(id, &st);
    }
    ps_set(slot, ps_null());
    return r;
}

PS_FN void ps_waitall_ids(int *ids, int n) {
    if (n == 0) return;
    MPI_Request *rs = (MPI_Request *)ps_xalloc((size_t)n * sizeof(MPI_Request));
    MPI_Status *st = (MPI_Status *)ps_xalloc((size_t)n * sizeof(MPI_Status));
    memset(st, 0, (size_t)n * sizeof(MPI_Status));
    for (int i = 0; i < n; i++) rs[i] = ps_reqs[ids[i]].req;
    int rc = MPI_Waitall(n, rs, st);
    if (rc == MPI_ERR_IN_STATUS) {
        for (int i = 0; i < n; i++)
            if (st[i].MPI_ERROR != MPI_SUCCESS && st[i].MPI_ERROR != MPI_ERR_PENDING)
                ps_recv_check(st[i].MPI_ERROR, &st[i], ps_reqs[ids[i]].bytes, "waitall");
    }
    ps_check(rc, "waitall");
    for (int i = 0; i < n; i++) ps_req_release(ids[i]);
    free(rs);
    free(st);
}

PS_FN void ps_waitall(PsVal **slots, int n) {
    int *ids = (int *)ps_xalloc((size_t)n * sizeof(int));
    int k = 0;
    for (int i = 0; i < n; i++) {
        int id = ps_live_req(slots[i], "waitall");
        if (id >= 0) {
            int dup = 0;
            for (int j = 0; j < k; j++) dup |= ids[j] == id;
            if (!dup) ids[k++] = id;
        }
    }
    ps_waitall_ids(ids, k);
    free(ids);
    for (int i = 0; i < n; i++) ps_set(slots[i], ps_null());
}

/* `waitall()`: every request of this rank not completed yet. */
PS_FN void ps_waitall_pending(void) {
    int *ids = (int *)ps_xalloc((size_t)(ps_nreqs + 1) * sizeof(int));
    int k = 0;
    for (int i = 0; i < ps_nreqs; i++)
        if (ps_reqs[i].live) ids[k++] = i;
    ps_waitall_ids(ids, k);
    free(ids);
}

PS_FN PsVal ps_waitany(PsVal **slots, int n) {
    int *ids = (int *)ps_xalloc((size_t)n * sizeof(int));
    int *pos = (int *)ps_xalloc((size_t)n * sizeof(int));
    MPI_Request *rs = (MPI_Request *)ps_xalloc((size_t)n * sizeof(MPI_Request));
    int k = 0;
    for (int i = 0; i < n; i++) {
        int id = ps_live_req(slots[i], "waitany");
        if (id >= 0) {
            ids[k] = id;
            pos[k] = i;
            rs[k] = ps_reqs[id].req;
            k++;
        }
    }
    PsVal r = ps_int(-1);
    for (int j = 0; j < k; j++) {
        if (rs[j] == MPI_REQUEST_NULL) {
            /* A buffered send (ibsend): complete from the start. */
            ps_req_release(ids[j]);
            ps_set(slots[pos[j]], ps_null());
            r = ps_int(pos[j]);
            k = 0;
            break;
        }
    }
    if (k > 0) {
        int which = MPI_UNDEFINED;
        MPI_Status st;
        memset(&st, 0, sizeof st);
        int rc = MPI_Waitany(k, rs, &which, &st);
        if (which >= 0 && which < k) {
            ps_recv_check(rc, &st, ps_reqs[ids[which]].bytes, "waitany");
            ps_req_release(ids[which]);
            ps_set(slots[pos[which]], ps_null());
            r = ps_int(pos[which]);
        } else {
            ps_check(rc, "waitany");
            /* Every request was already inactive (a completed ibsend). */
            ps_req_release(ids[0]);
            ps_set(slots[pos[0]], ps_null());
            r = ps_int(pos[0]);
        }
    }
    free(ids);
    free(pos);
    free(rs);
    return r;
}

PS_FN PsVal ps_test(PsVal *slot) {
    int id = ps_live_req(slot, "test");
    if (id < 0) return ps_bool(1);
    int done = 0;
    MPI_Status st;
    memset(&st, 0, sizeof st);
    int rc = MPI_Test(&ps_reqs[id].req, &done, &st);
    ps_recv_check(rc, &st, ps_reqs[id].bytes, "test");
    if (!done) return ps_bool(0);
    ps_req_release(id);
    ps_set(slot, ps_null());
    return ps_bool(1);
}

PS_FN PsVal ps_probe(int comm, int peer, int tag, int blocking) {
    MPI_Status st;
    memset(&st, 0, sizeof st);
    if (blocking) {
        ps_check(MPI_Probe(peer, tag, ps_comms[comm].comm, &st), "probe");
        return ps_status_of(&st);
    }
    int flag = 0;
    ps_check(MPI_Iprobe(peer, tag, ps_comms[comm].comm, &flag, &st), "iprobe");
    return flag ? ps_status_of(&st) : ps_null();
}

/* ---- collectives --------------------------------------------------------- */

enum { PS_BARRIER, PS_BCAST, PS_REDUCE, PS_ALLREDUCE, PS_GATHER, PS_GATHERV, PS_SCATTER,
       PS_SCATTERV, PS_ALLGATHER, PS_ALLGATHERV, PS_ALLTOALL, PS_ALLTOALLV, PS_REDUCE_SCATTER,
       PS_SCAN, PS_EXSCAN };

static const char *const ps_coll_name[] = {
    "barrier", "bcast", "reduce", "allreduce", "gather", "gatherv", "scatter", "scatterv",
    "allgather", "allgatherv", "alltoall", "alltoallv", "reduce_scatter", "scan", "exscan"};

enum { PS_OP_SUM, PS_OP_PROD, PS_OP_MIN, PS_OP_MAX, PS_OP_LAND, PS_OP_LOR, PS_NOPS };

/* `bytes:` of a collective: one count or an array of them. */
typedef struct {
    int given;
    int is_array;
    int64_t n;
    int64_t *v;
    int64_t len;
} PsCounts;

PS_FN void ps_counts_none(PsCounts *c) { memset(c, 0, sizeof *c); }

PS_FN void ps_counts_arg(PsCounts *c, PsVal v) {
    memset(c, 0, sizeof *c);
    c->given = 1;
    if (v.t == PS_T_ARRAY) {
        c->is_array = 1;
        c->len = v.u.a->len;
        c->v = (int64_t *)ps_xalloc((size_t)(c->len + 1) * sizeof(int64_t));
        for (int64_t i = 0; i < c->len; i++)
            if (!ps_value_bytes(v.u.a->v[i], &c->v[i]))
                ps_fail("`bytes:` counts must be non-negative integers, got %s",
                        ps_show(v.u.a->v[i]).s);
        ps_drop(v);
        return;
    }
    if (!ps_value_bytes(v, &c->n)) {
        PsShow s = ps_show(v);
        ps_drop(v);
        ps_fail("`bytes:` must be a non-negative integer or an array of them, got %s", s.s);
    }
}

PS_FN int ps_root_arg(PsVal v, int comm) {
    int size = ps_comms[comm].size;
    if (v.t == PS_T_INT && v.u.i >= 0 && v.u.i < size) return (int)v.u.i;
    PsShow s = ps_show(v);
    ps_drop(v);
    ps_fail("`root: %s` is not a valid rank (the communicator has %d ranks)", s.s, size);
}

/* `elem:` of a collective: an integer from 1 to 2^20. */
PS_FN int64_t ps_elem_arg(PsVal v) {
    if (v.t == PS_T_INT && v.u.i >= 1 && v.u.i <= (1 << 20)) return v.u.i;
    PsShow s = ps_show(v);
    ps_drop(v);
    ps_fail("`elem:` must be the size in bytes of one element, an integer from 1 to 1048576, "
            "got %s", s.s);
}

/* Values carried by collectives travel as 16-byte records: a number, a
 * bool, null or `any` is one record; an array is a header record (its
 * length, and how many records the whole array takes) followed by its
 * elements; a status is two records. A rank's block of a collective is
 * `bytes` rounded up to whole records (at least one); a value longer than
 * its block sends the rest in a second step (a collective where every rank
 * knows the sizes, else point-to-point on the communicator's shadow copy,
 * which user messages never see). Reductions combine single records. */
typedef struct {
    int64_t t; /* low 8 bits: the kind; arrays: length << 8 */
    int64_t bits;
} PsRec;

enum { PS_R_PAD, PS_R_NULL, PS_R_INT, PS_R_FLOAT, PS_R_BOOL, PS_R_ANY, PS_R_ARRAY, PS_R_STATUS,
       PS_R_MORE };

static MPI_Datatype ps_rec_type;
static MPI_Op ps_rec_ops[PS_NOPS];

/* Records `v` takes. */
PS_FN int64_t ps_rec_size(PsVal v) {
    switch (v.t) {
    case PS_T_ARRAY: {
        int64_t n = 1;
        for (int64_t i = 0; i < v.u.a->len; i++) n += ps_rec_size(v.u.a->v[i]);
        return n;
    }
    case PS_T_STATUS: return 2;
    case PS_T_REQ:
    case PS_T_COMM:
        ps_fail("`value:` cannot carry a %s to another rank in a C program", ps_type_name(v));
    default: return 1;
    }
}

/* The record of a number, bool, null or `any`. */
PS_FN PsRec ps_rec_scalar(PsVal v) {
    PsRec r;
    r.bits = 0;
    switch (v.t) {
    case PS_T_NULL: r.t = PS_R_NULL; break;
    case PS_T_ANY: r.t = PS_R_ANY; break;
    case PS_T_INT: r.t = PS_R_INT; r.bits = v.u.i; break;
    case PS_T_BOOL: r.t = PS_R_BOOL; r.bits = v.u.i; break;
    case PS_T_FLOAT:
        r.t = PS_R_FLOAT;
        memcpy(&r.bits, &v.u.f, sizeof(double));
        break;
    default:
        ps_fail("`value:` of a reduction must be a number, a bool or null in a C program, got %s",
                ps_type_name(v));
    }
    return r;
}

/* Writes `v` (not consumed) at `out`; returns the end. */
PS_FN PsRec *ps_rec_write(PsRec *out, PsVal v) {
    switch (v.t) {
    case PS_T_NULL:
    case PS_T_ANY:
    case PS_T_INT:
    case PS_T_BOOL:
    case PS_T_FLOAT:
        *out = ps_rec_scalar(v);
        return out + 1;
    case PS_T_STATUS:
        out->t = PS_R_STATUS;
        out->bits = v.u.i;
        out[1].t = PS_R_MORE | ((int64_t)(uint32_t)v.x << 8);
        out[1].bits = v.y;
        return out + 2;
    case PS_T_ARRAY: {
        PsRec *head = out++;
        for (int64_t i = 0; i < v.u.a->len; i++) out = ps_rec_write(out, v.u.a->v[i]);
        head->t = PS_R_ARRAY | (v.u.a->len << 8);
        head->bits = out - head;
        return out;
    }
    default:
        ps_fail("`value:` cannot carry a %s to another rank in a C program", ps_type_name(v));
    }
}

/* Records of the value that starts with record `r` (0 for padding). */
PS_FN int64_t ps_rec_total(PsRec r) {
    switch (r.t & 0xff) {
    case PS_R_PAD: return 0;
    case PS_R_ARRAY: return r.bits;
    case PS_R_STATUS: return 2;
    default: return 1;
    }
}

/* Reads the value at *p (at most up to `end`), advancing *p. */
PS_FN PsVal ps_rec_read(const PsRec **p, const PsRec *end) {
    if (*p >= end) ps_fail("internal error: a carried value is cut short");
    PsRec r = **p;
    (*p)++;
    switch (r.t & 0xff) {
    case PS_R_INT: return ps_int(r.bits);
    case PS_R_BOOL: return ps_bool(r.bits != 0);
    case PS_R_ANY: return ps_any();
    case PS_R_FLOAT: {
        double f;
        memcpy(&f, &r.bits, sizeof f);
        return ps_float(f);
    }
    case PS_R_STATUS: {
        if (*p >= end) ps_fail("internal error: a carried value is cut short");
        PsRec s = **p;
        (*p)++;
        PsVal v = ps_null();
        v.t = PS_T_STATUS;
        v.u.i = r.bits;
        v.x = (int32_t)(uint32_t)((uint64_t)s.t >> 8);
        v.y = (int32_t)s.bits;
        return v;
    }
    case PS_R_ARRAY: {
        int64_t n = (int64_t)((uint64_t)r.t >> 8);
        if (n < 0 || n > end - *p) ps_fail("internal error: a carried array is cut short");
        PsArr *a = ps_arr_new(n);
        for (int64_t i = 0; i < n; i++) a->v[i] = ps_rec_read(p, end);
        return ps_arr_val(a);
    }
    default: return ps_null();
    }
}

/* One value as records (malloc'd, at least `min` of them, padding after). */
PS_FN PsRec *ps_rec_encode(PsVal v, int64_t min, int64_t *total) {
    *total = ps_rec_size(v);
    int64_t n = *total > min ? *total : min;
    PsRec *r = (PsRec *)ps_xalloc((size_t)n * sizeof(PsRec));
    memset(r, 0, (size_t)n * sizeof(PsRec));
    ps_rec_write(r, v);
    return r;
}

PS_FN PsVal ps_rec_decode(const PsRec *r, int64_t total) {
    const PsRec *p = r;
    return ps_rec_read(&p, r + total);
}

/* A single-record value for a reduction (consumed). */
PS_FN PsRec ps_to_rec(PsVal v) { return ps_rec_scalar(v); }

PS_FN PsVal ps_from_rec(PsRec r) {
    const PsRec *p = &r;
    return ps_rec_read(&p, &r + 1);
}

/* collective.rs combine(): `a` is from the lower ranks. */
PS_FN PsVal ps_combine(int op, PsVal a, PsVal b) {
    switch (op) {
    case PS_OP_SUM: return ps_bin(PS_ADD, a, b);
    case PS_OP_PROD: return ps_bin(PS_MUL, a, b);
    case PS_OP_MIN:
    case PS_OP_MAX: {
        PsVal v[2] = {a, b};
        return ps_minmax(op == PS_OP_MIN, 2, v);
    }
    case PS_OP_LAND: {
        if (!ps_truth(a)) return ps_bool(0);
        return ps_bool(ps_truth(b));
    }
    default: {
        if (ps_truth(a)) return ps_bool(1);
        return ps_bool(ps_truth(b));
    }
    }
}

PS_FN void ps_rec_op(int op, void *in, void *inout, int *len) {
    PsRec *a = (PsRec *)in, *b = (PsRec *)inout;
    for (int i = 0; i < *len; i++) {
        if (a[i].t == PS_R_PAD) continue;
        if (b[i].t == PS_R_PAD) {
            b[i] = a[i];
            continue;
        }
        b[i] = ps_to_rec(ps_combine(op, ps_from_rec(a[i]), ps_from_rec(b[i])));
    }
}

#define PS_REC_OP(name, op)                                                                 \
    static void name(void *in, void *inout, int *len, MPI_Datatype *dt) {                   \
        (void)dt;                                                                           \
        ps_rec_op(op, in, inout, len);                                                      \
    }
PS_REC_OP(ps_rec_sum, PS_OP_SUM)
PS_REC_OP(ps_rec_prod, PS_OP_PROD)
PS_REC_OP(ps_rec_min, PS_OP_MIN)
PS_REC_OP(ps_rec_max, PS_OP_MAX)
PS_REC_OP(ps_rec_land, PS_OP_LAND)
PS_REC_OP(ps_rec_lor, PS_OP_LOR)

/* Records per block for `bytes` (at least one). */
PS_FN int ps_recs(int64_t bytes) {
    int64_t k = bytes <= 16 ? 1 : (bytes + 15) / 16;
    return ps_count(k);
}

/* The records of one carried value: its first `k` are in a block of the
 * collective, `total - k` more follow if it is longer. */
typedef struct {
    PsRec *r;
    int64_t total;
} PsEnc;

/* An array `value:` of one element per rank (scatter, alltoall). */
PS_FN void ps_per_rank_value(PsVal v, int n) {
    if (v.t != PS_T_ARRAY)
        ps_fail("`value:` must be an array of one element per rank, got %s", ps_type_name(v));
    if (v.u.a->len != n)
        ps_fail("`value:` must be an array of %d elements (one per rank), it has %" PRId64, n,
                v.u.a->len);
}

/* A collective with `value:`. */
PS_FN PsVal ps_coll_value(int kind, int comm, int root, int64_t bytes, PsVal value, int op) {
    MPI_Comm c = ps_comms[comm].comm, shadow = ps_comms[comm].shadow;
    int me = ps_comms[comm].rank, n = ps_comms[comm].size;
    int k = ps_recs(bytes);
    size_t block = (size_t)k * sizeof(PsRec);
    const char *name = ps_coll_name[kind];
    switch (kind) {
    case PS_REDUCE:
    case PS_ALLREDUCE:
    case PS_SCAN:
    case PS_EXSCAN: {
        PsRec *sb = (PsRec *)ps_scratch(PS_S_VSEND, block);
        PsRec *rb = (PsRec *)ps_scratch(PS_S_VRECV, block);
        memset(sb, 0, block);
        memset(rb, 0, block);
        sb[0] = ps_to_rec(value);
        if (kind == PS_REDUCE) {
            ps_check(MPI_Reduce(sb, rb, k, ps_rec_type, ps_rec_ops[op], root, c), name);
            if (me != root) return ps_null();
            if (n == 1) rb[0] = sb[0];
        } else if (kind == PS_ALLREDUCE) {
            ps_check(MPI_Allreduce(sb, rb, k, ps_rec_type, ps_rec_ops[op], c), name);
        } else if (kind == PS_SCAN) {
            ps_check(MPI_Scan(sb, rb, k, ps_rec_type, ps_rec_ops[op], c), name);
        } else {
            ps_check(MPI_Exscan(sb, rb, k, ps_rec_type, ps_rec_ops[op], c), name);
            if (me == 0) return ps_null();
        }
        return ps_from_rec(rb[0]);
    }
    case PS_BCAST: {
        int64_t total = 0;
        PsRec *buf;
        if (me == root) {
            buf = ps_rec_encode(value, k, &total);
        } else {
            buf = (PsRec *)ps_xalloc(block);
            memset(buf, 0, block);
        }
        ps_drop(value);
        ps_check(MPI_Bcast(buf, k, ps_rec_type, root, c), name);
        total = ps_rec_total(buf[0]);
        if (total > k) {
            if (me != root) {
                PsRec *more = (PsRec *)realloc(buf, (size_t)total * sizeof(PsRec));
                if (more == NULL) ps_fail("out of memory");
                buf = more;
            }
            ps_check(MPI_Bcast(buf + k, ps_count(total - k), ps_rec_type, root, c), name);
        }
        PsVal r = ps_rec_decode(buf, total);
        free(buf);
        return r;
    }
    case PS_GATHER:
    case PS_ALLGATHER: {
        int64_t mine = 0;
        PsRec *own = ps_rec_encode(value, k, &mine);
        ps_drop(value);
        int all = kind == PS_ALLGATHER;
        PsRec *rb = NULL;
        if (all || me == root) {
            rb = (PsRec *)ps_xalloc(block * (size_t)n);
            memset(rb, 0, block * (size_t)n);
        }
        if (all)
            ps_check(MPI_Allgather(own, k, ps_rec_type, rb, k, ps_rec_type, c), name);
        else
            ps_check(MPI_Gather(own, k, ps_rec_type, rb, k, ps_rec_type, root, c), name);
        if (!all && me != root) {
            if (mine > k)
                ps_check(MPI_Send(own + k, ps_count(mine - k), ps_rec_type, root, 0, shadow), name);
            free(own);
            return ps_null();
        }
        /* Every rank's value: its block, and the rest when it is longer. */
        PsArr *a = ps_arr_new(n);
        int *counts = ps_int_array(n), *displs = ps_int_array(n);
        int64_t extra = 0;
        for (int i = 0; i < n; i++) {
            int64_t t = ps_rec_total(rb[(size_t)i * (size_t)k]);
            counts[i] = ps_count(t > k ? t - k : 0);
            displs[i] = ps_count(extra);
            extra += counts[i];
        }
        PsRec *more = (PsRec *)ps_xalloc((size_t)(extra + 1) * sizeof(PsRec));
        if (all && extra > 0) {
            ps_check(MPI_Allgatherv(own + k, counts[me], ps_rec_type, more, counts, displs,
                                    ps_rec_type, c),
                     name);
        } else if (!all) {
            for (int i = 0; i < n; i++) {
                if (counts[i] == 0) continue;
                if (i == me)
                    memcpy(more + displs[i], own + k, (size_t)counts[i] * sizeof(PsRec));
                else
                    ps_check(MPI_Recv(more + displs[i], counts[i], ps_rec_type, i, 0, shadow,
                                      MPI_STATUS_IGNORE),
                             name);
            }
        }
        for (int i = 0; i < n; i++) {
            int64_t t = (int64_t)k + counts[i];
            PsRec *whole = (PsRec *)ps_xalloc((size_t)t * sizeof(PsRec));
            memcpy(whole, rb + (size_t)i * (size_t)k, block);
            memcpy(whole + k, more + displs[i], (size_t)counts[i] * sizeof(PsRec));
            a->v[i] = ps_rec_decode(whole, t);
            free(whole);
        }
        free(more);
        free(counts);
        free(displs);
        free(rb);
        free(own);
        return ps_arr_val(a);
    }
    case PS_SCATTER:
    case PS_ALLTOALL: {
        int sends = kind == PS_ALLTOALL || me == root;
        PsEnc *enc = (PsEnc *)ps_xalloc((size_t)n * sizeof(PsEnc));
        PsRec *sb = NULL;
        if (sends) {
            ps_per_rank_value(value, n);
            sb = (PsRec *)ps_xalloc(block * (size_t)n);
            for (int i = 0; i < n; i++) {
                enc[i].r = ps_rec_encode(value.u.a->v[i], k, &enc[i].total);
                memcpy(sb + (size_t)i * (size_t)k, enc[i].r, block);
            }
        }
        ps_drop(value);
        int recvs = kind == PS_ALLTOALL ? n : 1;
        PsRec *rb = (PsRec *)ps_xalloc(block * (size_t)recvs);
        memset(rb, 0, block * (size_t)recvs);
        MPI_Request *reqs = (MPI_Request *)ps_xalloc(2 * (size_t)n * sizeof(MPI_Request));
        int nreq = 0;
        PsRec **rest = (PsRec **)ps_xalloc((size_t)recvs * sizeof(PsRec *));
        int64_t *totals = (int64_t *)ps_xalloc((size_t)recvs * sizeof(int64_t));
        if (kind == PS_SCATTER)
            ps_check(MPI_Scatter(sb, k, ps_rec_type, rb, k, ps_rec_type, root, c), name);
        else
            ps_check(MPI_Alltoall(sb, k, ps_rec_type, rb, k, ps_rec_type, c), name);
        /* The rest of longer values, point-to-point. */
        for (int j = 0; j < recvs; j++) {
            int from = kind == PS_SCATTER ? root : j;
            totals[j] = ps_rec_total(rb[(size_t)j * (size_t)k]);
            rest[j] = NULL;
            if (totals[j] > k && from != me) {
                rest[j] = (PsRec *)ps_xalloc((size_t)(totals[j] - k) * sizeof(PsRec));
                ps_check(MPI_Irecv(rest[j], ps_count(totals[j] - k), ps_rec_type, from, 0, shadow,
                                   &reqs[nreq++]),
                         name);
            }
        }
        if (sends)
            for (int i = 0; i < n; i++)
                if (enc[i].total > k && i != me)
                    ps_check(MPI_Isend(enc[i].r + k, ps_count(enc[i].total - k), ps_rec_type, i,
                                       0, shadow, &reqs[nreq++]),
                             name);
        MPI_Status *sts = (MPI_Status *)ps_xalloc(2 * (size_t)n * sizeof(MPI_Status));
        ps_check(MPI_Waitall(nreq, reqs, sts), name);
        free(sts);
        PsVal result = ps_null();
        PsArr *a = kind == PS_ALLTOALL ? ps_arr_new(n) : NULL;
        for (int j = 0; j < recvs; j++) {
            int from = kind == PS_SCATTER ? root : j;
            int64_t t = totals[j] > k ? totals[j] : k;
            PsRec *whole = (PsRec *)ps_xalloc((size_t)t * sizeof(PsRec));
            memcpy(whole, rb + (size_t)j * (size_t)k, block);
            if (totals[j] > k) {
                /* From this rank itself: the rest is in its own encoding. */
                const PsRec *src = from == me ? enc[kind == PS_SCATTER ? me : j].r + k : rest[j];
                memcpy(whole + k, src, (size_t)(totals[j] - k) * sizeof(PsRec));
            }
            PsVal v = ps_rec_decode(whole, totals[j]);
            free(whole);
            free(rest[j]);
            if (a != NULL)
                a->v[j] = v;
            else
                result = v;
        }
        if (a != NULL) result = ps_arr_val(a);
        if (sends)
            for (int i = 0; i < n; i++) free(enc[i].r);
        free(enc);
        free(sb);
        free(rb);
        free(reqs);
        free(rest);
        free(totals);
        return result;
    }
    default:
        ps_drop(value);
        ps_fail("%s takes no `value:`", name);
    }
}

/* The element type and count of a reduction over `bytes` bytes: doubles,
 * or bytes (MPI_SIGNED_CHAR) when `bytes` is not a multiple of 8. */
PS_FN MPI_Datatype ps_reduce_type(int64_t bytes, int *count) {
    if (bytes % 8 == 0) {
        *count = ps_count(bytes / 8);
        return MPI_DOUBLE;
    }
    *count = ps_count(bytes);
    return MPI_SIGNED_CHAR;
}


/* Per-rank counts of a v-collective (or reduce_scatter) as MPI ints. */
PS_FN int *ps_per_rank(const PsCounts *cnt, int n, int64_t *total) {
    int *v = ps_int_array(n);
    *total = 0;
    for (int i = 0; i < n; i++) {
        int64_t x = cnt->is_array ? cnt->v[i] : cnt->n;
        v[i] = ps_count(x);
        *total += x;
    }
    return v;
}

PS_FN int *ps_displs(const int *counts, int n) {
    int *d = ps_int_array(n);
    int64_t at = 0;
    for (int i = 0; i < n; i++) {
        d[i] = ps_count(at);
        at += counts[i];
    }
    return d;
}

/* The MPI type of a reduction's `elem:` (bytes per element) and the count
 * of `bytes`: the C types whose sum MPI defines, by size. */
PS_FN MPI_Datatype ps_elem_type(int64_t elem, int64_t bytes, int *count) {
    *count = ps_count(bytes / elem);
    switch (elem) {
    case 1: return MPI_SIGNED_CHAR;
    case 2: return MPI_SHORT;
    case 4: return MPI_FLOAT;
    case 8: return MPI_DOUBLE;
    case 16: return MPI_C_DOUBLE_COMPLEX;
    default:
        ps_fail("`elem: %lld` has no predefined MPI type to reduce (1, 2, 4, 8 or 16 bytes)",
                (long long)elem);
    }
}

/* `elem` is the call's `elem:` (0 without one: reductions then take
 * doubles where the bytes allow, `ps_reduce_type`); the other collectives
 * move MPI_BYTE. */
PS_FN PsVal ps_coll(int kind, int comm, int root, PsCounts *cnt, int has_value, PsVal value,
                    int op, int64_t elem) {
    const char *name = ps_coll_name[kind];
    MPI_Comm c = ps_comms[comm].comm;
    int me = ps_comms[comm].rank, n = ps_comms[comm].size;
    int v_kind = kind == PS_GATHERV || kind == PS_SCATTERV || kind == PS_ALLGATHERV ||
                 kind == PS_ALLTOALLV || kind == PS_REDUCE_SCATTER;
    if (cnt->is_array && !v_kind) {
        ps_drop(value);
        ps_fail("`bytes:` of %s must be one integer, not an array", name);
    }
    if (cnt->is_array && cnt->len != n) {
        ps_drop(value);
        ps_fail("`bytes:` of %s has %" PRId64 " counts but the communicator has %d ranks", name,
                cnt->len, n);
    }
    PsVal result = ps_null();
    if (has_value && !cnt->is_array && cnt->n == 0) {
        /* As the simulator: a value travels in the call's bytes. */
        ps_drop(value);
        ps_ctx = name;
        ps_fail("`value:` needs `bytes:` above 0 (a call of 0 bytes carries nothing)");
    }
    if (has_value) {
        const char *saved = ps_ctx;
        ps_ctx = name;
        result = ps_coll_value(kind, comm, root, cnt->n, value, op);
        ps_ctx = saved;
        free(cnt->v);
        return result;
    }
    ps_drop(value);
    int64_t bytes = cnt->n;
    if (elem > 0 && !cnt->is_array && bytes % elem != 0)
        ps_fail("`bytes: %lld` is not a whole number of %lld-byte elements (`elem: %lld`)",
                (long long)bytes, (long long)elem, (long long)elem);
    size_t sz = (size_t)bytes, all = (size_t)bytes * (size_t)n;
    int count = 0;
    MPI_Datatype t;
    switch (kind) {
    case PS_BARRIER:
        ps_check(MPI_Barrier(c), name);
        break;
    case PS_BCAST:
        ps_check(MPI_Bcast(ps_scratch(PS_S_CSEND, sz), ps_count(bytes), MPI_BYTE, root, c), name);
        break;
    case PS_REDUCE:
        t = elem > 0 ? ps_elem_type(elem, bytes, &count) : ps_reduce_type(bytes, &count);
        ps_check(MPI_Reduce(ps_scratch(PS_S_CSEND, sz), ps_scratch(PS_S_CRECV, sz), count, t,
                            MPI_SUM, root, c),
                 name);
        break;
    case PS_ALLREDUCE:
        t = elem > 0 ? ps_elem_type(elem, bytes, &count) : ps_reduce_type(bytes, &count);
        ps_check(MPI_Allreduce(ps_scratch(PS_S_CSEND, sz), ps_scratch(PS_S_CRECV, sz), count, t,
                               MPI_SUM, c),
                 name);
        break;
    case PS_SCAN:
        t = elem > 0 ? ps_elem_type(elem, bytes, &count) : ps_reduce_type(bytes, &count);
        ps_check(MPI_Scan(ps_scratch(PS_S_CSEND, sz), ps_scratch(PS_S_CRECV, sz), count, t, MPI_SUM,
                          c),
                 name);
        break;
    case PS_EXSCAN:
        t = elem > 0 ? ps_elem_type(elem, bytes, &count) : ps_reduce_type(bytes, &count);
        ps_check(MPI_Exscan(ps_scratch(PS_S_CSEND, sz), ps_scratch(PS_S_CRECV, sz), count, t,
                            MPI_SUM, c),
                 name);
        break;
    case PS_GATHER:
        ps_check(MPI_Gather(ps_scratch(PS_S_CSEND, sz), ps_count(bytes), MPI_BYTE,
                            ps_scratch(PS_S_CRECV, all), ps_count(bytes), MPI_BYTE, root, c),
                 name);
        break;
    case PS_ALLGATHER:
        ps_check(MPI_Allgather(ps_scratch(PS_S_CSEND, sz), ps_count(bytes), MPI_BYTE,
                               ps_scratch(PS_S_CRECV, all), ps_count(bytes), MPI_BYTE, c),
                 name);
        break;
    case PS_SCATTER:
        ps_check(MPI_Scatter(ps_scratch(PS_S_CSEND, all), ps_count(bytes), MPI_BYTE,
                             ps_scratch(PS_S_CRECV, sz), ps_count(bytes), MPI_BYTE, root, c),
                 name);
        break;
    case PS_ALLTOALL:
        ps_check(MPI_Alltoall(ps_scratch(PS_S_CSEND, all), ps_count(bytes), MPI_BYTE,
                              ps_scratch(PS_S_CRECV, all), ps_count(bytes), MPI_BYTE, c),
                 name);
        break;
    case PS_GATHERV: {
        /* The root learns every rank's count first (a real program does the same). */
        int own = ps_count(cnt->is_array ? cnt->v[me] : cnt->n);
        int *got = ps_int_array(n);
        ps_check(MPI_Gather(&own, 1, MPI_INT, got, 1, MPI_INT, root, c), name);
        int64_t total = 0;
        int *counts = ps_int_array(n);
        for (int i = 0; i < n; i++) {
            /* Only the root's receive counts matter (and only it has `got`). */
            counts[i] = me != root ? 0 : cnt->is_array ? ps_count(cnt->v[i]) : got[i];
            total += counts[i];
        }
        int *displs = ps_displs(counts, n);
        ps_check(MPI_Gatherv(ps_scratch(PS_S_CSEND, (size_t)own), own, MPI_BYTE,
                             ps_scratch(PS_S_CRECV, (size_t)total), counts, displs, MPI_BYTE, root,
                             c),
                 name);
        free(got);
        free(counts);
        free(displs);
        break;
    }
    case PS_SCATTERV: {
        if (me == root && !cnt->is_array)
            ps_fail("scatterv: the root needs the count of every rank, not only its own");
        int own = ps_count(cnt->is_array ? cnt->v[me] : cnt->n);
        int64_t total = 0;
        int *counts = ps_per_rank(cnt, n, &total);
        int *displs = ps_displs(counts, n);
        ps_check(MPI_Scatterv(ps_scratch(PS_S_CSEND, (size_t)total), counts, displs, MPI_BYTE,
                              ps_scratch(PS_S_CRECV, (size_t)own), own, MPI_BYTE, root, c),
                 name);
        free(counts);
        free(displs);
        break;
    }
    case PS_ALLGATHERV: {
        int64_t total = 0;
        int *counts = ps_per_rank(cnt, n, &total);
        int *displs = ps_displs(counts, n);
        ps_check(MPI_Allgatherv(ps_scratch(PS_S_CSEND, (size_t)counts[me]), counts[me], MPI_BYTE,
                                ps_scratch(PS_S_CRECV, (size_t)total), counts, displs, MPI_BYTE,
                                c),
                 name);
        free(counts);
        free(displs);
        break;
    }
    case PS_ALLTOALLV: {
        /* Each rank learns what the others send it first (one int per pair). */
        int64_t stotal = 0, rtotal = 0;
        int *scounts = ps_per_rank(cnt, n, &stotal);
        int *rcounts = ps_int_array(n);
        ps_check(MPI_Alltoall(scounts, 1, MPI_INT, rcounts, 1, MPI_INT, c), name);
        for (int i = 0; i < n; i++) rtotal += rcounts[i];
        int *sd = ps_displs(scounts, n);
        int *rd = ps_displs(rcounts, n);
        ps_check(MPI_Alltoallv(ps_scratch(PS_S_CSEND, (size_t)stotal), scounts, sd, MPI_BYTE,
                               ps_scratch(PS_S_CRECV, (size_t)rtotal), rcounts, rd, MPI_BYTE, c),
                 name);
        free(scounts);
        free(rcounts);
        free(sd);
        free(rd);
        break;
    }
    case PS_REDUCE_SCATTER: {
        int64_t total = 0;
        int *counts = ps_per_rank(cnt, n, &total);
        int doubles = 1;
        for (int i = 0; i < n; i++) doubles &= counts[i] % 8 == 0;
        if (doubles)
            for (int i = 0; i < n; i++) counts[i] /= 8;
        ps_check(MPI_Reduce_scatter(ps_scratch(PS_S_CSEND, (size_t)total),
                                    ps_scratch(PS_S_CRECV, (size_t)total), counts,
                                    doubles ? MPI_DOUBLE : MPI_SIGNED_CHAR, MPI_SUM, c),
                 name);
        free(counts);
        break;
    }
    default:
        break;
    }
    free(cnt->v);
    return result;
}

/* `color:` of comm_split: an int, null (as -1). */
PS_FN int64_t ps_color_arg(PsVal v) {
    if (v.t == PS_T_INT) return v.u.i;
    if (v.t == PS_T_NULL) return -1;
    PsShow s = ps_show(v);
    ps_drop(v);
    ps_fail("`color:` must be an integer, got %s", s.s);
}

PS_FN int64_t ps_key_arg(PsVal v) {
    if (v.t == PS_T_INT) return v.u.i;
    PsShow s = ps_show(v);
    ps_drop(v);
    ps_fail("`key:` must be an integer, got %s", s.s);
}

PS_FN PsVal ps_comm_split(int comm, int64_t color, int64_t key) {
    if (color > INT_MAX) ps_fail("`color: %" PRId64 "` is more than MPI allows (%d)", color, INT_MAX);
    if (key > INT_MAX || key < INT_MIN)
        ps_fail("`key: %" PRId64 "` is outside MPI's int range", key);
    MPI_Comm nc = MPI_COMM_NULL;
    ps_check(MPI_Comm_split(ps_comms[comm].comm, color < 0 ? MPI_UNDEFINED : (int)color, (int)key,
                            &nc),
             "comm_split");
    if (nc == MPI_COMM_NULL) return ps_null();
    return ps_comm_val(ps_comm_add(nc));
}

PS_FN PsVal ps_comm_dup(int comm) {
    MPI_Comm nc = MPI_COMM_NULL;
    ps_check(MPI_Comm_dup(ps_comms[comm].comm, &nc), "comm_dup");
    return ps_comm_val(ps_comm_add(nc));
}

/* ---- compute and copy ---------------------------------------------------- */

/* Takes `seconds` of (modelled) time: SMPI injects it as computation;
 * a real MPI spins on MPI_Wtime. */
PS_FN void ps_spin(double seconds) {
#ifdef SMPI_H
    smpi_execute(seconds);
#else
    double end = MPI_Wtime() + seconds;
    while (MPI_Wtime() < end) {
    }
#endif
}

PS_FN void ps_compute_cost(PsVal cost, const char *kernel) {
    if (!ps_is_num(cost))
        ps_fail("cost of kernel `%s` must be a number, got %s", kernel, ps_type_name(cost));
    double s = ps_as_f64(cost);
    if (!(isfinite(s) && s >= 0.0))
        ps_fail("cost of kernel `%s` is %s s; it must be finite and not negative", kernel,
                ps_show_float(s).s);
    ps_spin(s);
}

PS_FN int64_t ps_kernel_arg(PsVal v, const char *kernel, int i) {
    if (v.t == PS_T_INT) return v.u.i;
    const char *t = ps_type_name(v);
    ps_drop(v);
    ps_fail("native kernel `%s` takes integers, but argument %d is %s", kernel, i + 1, t);
}

PS_FN void ps_copy(PsVal v) {
    int64_t n = ps_bytes_arg(v);
    char *a = ps_scratch(PS_S_COPY_A, (size_t)n);
    char *b = ps_scratch(PS_S_COPY_B, (size_t)n);
    memcpy(b, a, (size_t)n);
}

/* The program's own heap (`malloc(bytes: n)`, `free(bytes: n)`): a real
 * malloc, written whole as the simulator assumes, and the free of the latest
 * live allocation of that size (the simulator's rule; none is an error, as
 * in the simulator). */
typedef struct { void *p; int64_t n; } PsHeapBlock;
static PsHeapBlock *ps_heap;
static size_t ps_heap_len, ps_heap_cap;

PS_FN void ps_malloc(PsVal v) {
    int64_t n = ps_bytes_arg(v);
    void *p = malloc(n > 0 ? (size_t)n : 1);
    if (!p) ps_fail("malloc of %lld bytes failed", (long long)n);
    memset(p, 1, (size_t)n);
    if (ps_heap_len == ps_heap_cap) {
        ps_heap_cap = ps_heap_cap ? 2 * ps_heap_cap : 16;
        ps_heap = realloc(ps_heap, ps_heap_cap * sizeof *ps_heap);
        if (!ps_heap) ps_fail("out of memory");
    }
    ps_heap[ps_heap_len].p = p;
    ps_heap[ps_heap_len].n = n;
    ps_heap_len++;
}

PS_FN void ps_free(PsVal v) {
    int64_t n = ps_bytes_arg(v);
    for (size_t i = ps_heap_len; i-- > 0;) {
        if (ps_heap[i].n == n) {
            free(ps_heap[i].p);
            memmove(&ps_heap[i], &ps_heap[i + 1], (ps_heap_len - i - 1) * sizeof *ps_heap);
            ps_heap_len--;
            return;
        }
    }
    ps_fail("`free(bytes: %lld)` frees nothing: this rank has no live `malloc` of %lld bytes",
            (long long)n, (long long)n);
}

PS_FN PsVal ps_wtime(void) { return ps_float(MPI_Wtime() - ps_t0); }

PS_FN void ps_enter(void) {
    if (ps_depth >= PS_MAX_DEPTH)
        ps_fail("call depth exceeds %d (runaway recursion?)", PS_MAX_DEPTH);
    ps_depth++;
}

/* ---- params -------------------------------------------------------------- */

static PsVal *ps_param;
static int ps_nparams;
static const char *const *ps_param_names;
static int *ps_param_set; /* given on the command line */
static int *ps_param_from; /* given as the name of an earlier param: its index, else -1 */

/* Rust's i64::from_str: [+-]digits, in range. */
PS_FN int ps_parse_i64(const char *s, int64_t *out) {
    const char *p = s;
    if (*p == '+' || *p == '-') p++;
    if (*p == 0) return 0;
    for (const char *q = p; *q; q++)
        if (*q < '0' || *q > '9') return 0;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == NULL || *end != 0) return 0;
    *out = (int64_t)v;
    return 1;
}

/* Rust's f64::from_str for decimal numbers (no hex), finite only. */
PS_FN int ps_parse_f64(const char *s, double *out) {
    const char *p = s;
    int digits = 0;
    if (*p == '+' || *p == '-') p++;
    while (*p >= '0' && *p <= '9') p++, digits++;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') p++, digits++;
    }
    if (digits == 0) return 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (*p < '0' || *p > '9') return 0;
        while (*p >= '0' && *p <= '9') p++;
    }
    if (*p != 0) return 0;
    double v = strtod(s, NULL);
    if (!isfinite(v)) return 0;
    *out = v;
    return 1;
}

/* Frees what ps_init created, before MPI_Finalize. */
PS_FN void ps_free_mpi_objects(void) {
    for (int i = 0; i < PS_NOPS; i++)
        if (ps_rec_ops[i] != MPI_OP_NULL) MPI_Op_free(&ps_rec_ops[i]);
    if (ps_rec_type != MPI_DATATYPE_NULL) MPI_Type_free(&ps_rec_type);
}

PS_FN void ps_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
PS_FN void ps_usage_error(const char *fmt, ...) {
    if (ps_rank == 0) {
        char msg[2048];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        fprintf(stderr, "error: %s\n", msg);
        fflush(stderr);
    }
    ps_free_mpi_objects();
    MPI_Finalize();
    exit(1);
}

/* Command-line overrides `name=value`, as `parsim run --param name=value`. */
PS_FN void ps_parse_overrides(int argc, char **argv) {
    for (int a = 1; a < argc; a++) {
        char buf[1024];
        snprintf(buf, sizeof buf, "%s", argv[a]);
        char *eq = strchr(buf, '=');
        char *key = buf, *val = eq ? eq + 1 : NULL;
        if (eq) *eq = 0;
        while (*key == ' ' || *key == '\t') key++;
        for (size_t n = strlen(key); n > 0 && (key[n - 1] == ' ' || key[n - 1] == '\t');) key[--n] = 0;
        if (eq == NULL || *key == 0) ps_usage_error("expected NAME=VALUE, got `%s`", argv[a]);
        while (*val == ' ' || *val == '\t') val++;
        for (size_t n = strlen(val); n > 0 && (val[n - 1] == ' ' || val[n - 1] == '\t');) val[--n] = 0;
        int i = 0;
        while (i < ps_nparams && strcmp(ps_param_names[i], key) != 0) i++;
        if (i == ps_nparams) {
            char known[1024] = "";
            for (int j = 0; j < ps_nparams; j++) {
                size_t used = strlen(known);
                snprintf(known + used, sizeof known - used, "%s`%s`", j ? ", " : "", ps_param_names[j]);
            }
            if (ps_nparams == 0)
                ps_usage_error("unknown param `%s`; the program declares no params", key);
            ps_usage_error("unknown param `%s`; the program declares %s", key, known);
        }
        int from = 0;
        while (from < ps_nparams && strcmp(ps_param_names[from], val) != 0) from++;
        if (from < ps_nparams) {
            /* The name of an earlier param: its value, once evaluated (as `parsim run`). */
            if (from >= i)
                ps_usage_error("param `%s`: `%s` is declared after `%s`; an override may only name a param declared before it",
                               key, val, key);
            ps_param_from[i] = from;
            ps_param_set[i] = 0;
            continue;
        }
        ps_param_from[i] = -1;
        int64_t iv;
        double fv;
        PsVal v;
        if (ps_parse_i64(val, &iv))
            v = ps_int(iv);
        else if (ps_parse_f64(val, &fv))
            v = ps_float(fv);
        else
            ps_usage_error("param `%s` must be a number or the name of an earlier param, got `%s`", key, val);
        ps_set(&ps_param[i], v);
        ps_param_set[i] = 1;
    }
}

/* ---- start and end ------------------------------------------------------- */

PS_FN void ps_init(int *argc, char ***argv, int nparams, const char *const *names) {
    ps_rec_type = MPI_DATATYPE_NULL;
    for (int i = 0; i < PS_NOPS; i++) ps_rec_ops[i] = MPI_OP_NULL;
    MPI_Init(argc, argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &ps_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ps_size);
    ps_comm_add(MPI_COMM_WORLD);
    ps_check(MPI_Type_contiguous(2, MPI_INT64_T, &ps_rec_type), "MPI_Type_contiguous");
    ps_check(MPI_Type_commit(&ps_rec_type), "MPI_Type_commit");
    MPI_User_function *fns[PS_NOPS] = {ps_rec_sum, ps_rec_prod, ps_rec_min,
                                       ps_rec_max, ps_rec_land, ps_rec_lor};
#ifdef SMPI_H
    /* SimGrid 3.32's MPI_Scan/MPI_Exscan skip non-commutative user ops; the
     * combinations are commutative except for NaN in min/max and errors in
     * land/lor, so SMPI gets them as commutative ops. */
    const int commute = 1;
#else
    /* Non-commutative: MPI keeps the ranks' order, as the simulator folds. */
    const int commute = 0;
#endif
    for (int i = 0; i < PS_NOPS; i++)
        ps_check(MPI_Op_create(fns[i], commute, &ps_rec_ops[i]), "MPI_Op_create");
    ps_nparams = nparams;
    ps_param_names = names;
    ps_param = (PsVal *)ps_xalloc((size_t)(nparams + 1) * sizeof(PsVal));
    ps_param_set = (int *)ps_xalloc((size_t)(nparams + 1) * sizeof(int));
    ps_param_from = (int *)ps_xalloc((size_t)(nparams + 1) * sizeof(int));
    for (int i = 0; i <= nparams; i++) {
        ps_param[i] = ps_null();
        ps_param_set[i] = 0;
        ps_param_from[i] = -1;
    }
    ps_parse_overrides(*argc, *argv);
}

#ifdef PARSIM_TIME_KERNELS
/* `parsim calibrate blocks --in-program`: every native kernel call timed
 * inside the real program (CLOCK_MONOTONIC read before and after the call,
 * the MPITEST method of calibrate/src/blocks/timing.rs without its
 * batching: a call in the program is one call). Per rank, kernel and
 * argument tuple: the calls, the rank's first call of the kernel apart (it
 * meets untouched memory; the simulator charges it once per rank), and up
 * to PS_KT_KEEP samples, a uniform sample of all beyond that (Vitter's
 * Algorithm R, a fixed-seed xorshift: the same run keeps the same ones).
 * ps_finish writes them to PARSIM_TIME_KERNELS "/kernel-times.P.R.txt"
 * (P ranks, rank R); the build defines PARSIM_TIME_KERNELS as the
 * directory, a C string. Nothing here runs in a build without it. */
#define PS_KT_KEEP 65536
#define PS_KT_MAXARGS 16
typedef struct {
    int kernel; /* the kernel's index in the program, -1: an empty slot */
    const char *name;
    int nargs;
    int64_t args[PS_KT_MAXARGS];
    uint64_t calls, later; /* all calls; those after the first */
    double first;          /* the rank's first call of the kernel, if it had these arguments */
    double *samples;
    size_t n;
} PsKtTuple;
static PsKtTuple *ps_kt;
static size_t ps_kt_size, ps_kt_used;
static unsigned char *ps_kt_called; /* per kernel index: called once already */
static int ps_kt_nkernels;
static uint64_t ps_kt_rng = 0x2545F4914F6CDD1Dull;
static uint64_t ps_kt_skipped; /* calls with more than PS_KT_MAXARGS arguments */
static double ps_kt_dt = -1.0; /* the cost of one timer read pair */

PS_FN double ps_kt_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

PS_FN int ps_kt_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of 201 back-to-back reads (DT, subtracted by the reader). */
PS_FN double ps_kt_overhead(void) {
    double d[201];
    for (int i = 0; i < 201; i++) {
        double a = ps_kt_now();
        d[i] = ps_kt_now() - a;
    }
    qsort(d, 201, sizeof d[0], ps_kt_cmp);
    return d[100];
}

PS_FN uint64_t ps_kt_hash(int kernel, const int64_t *args, int nargs) {
    uint64_t h = 1469598103934665603ull ^ (uint64_t)(uint32_t)kernel;
    h *= 1099511628211ull;
    for (int i = 0; i < nargs; i++) {
        h ^= (uint64_t)args[i];
        h *= 1099511628211ull;
    }
    return h ^ (h >> 29);
}

PS_FN PsKtTuple *ps_kt_slot(PsKtTuple *table, size_t size, int kernel, const int64_t *args,
                            int nargs) {
    size_t i = (size_t)ps_kt_hash(kernel, args, nargs) & (size - 1);
    for (;; i = (i + 1) & (size - 1)) {
        PsKtTuple *t = &table[i];
        if (t->kernel < 0) return t;
        if (t->kernel == kernel && t->nargs == nargs &&
            (nargs == 0 || memcmp(t->args, args, (size_t)nargs * sizeof args[0]) == 0))
            return t;
    }
}

PS_FN void ps_kt_grow(void) {
    size_t size = ps_kt_size ? ps_kt_size * 2 : 64;
    PsKtTuple *table = (PsKtTuple *)ps_xalloc(size * sizeof *table);
    for (size_t i = 0; i < size; i++) table[i].kernel = -1;
    for (size_t i = 0; i < ps_kt_size; i++)
        if (ps_kt[i].kernel >= 0)
            *ps_kt_slot(table, size, ps_kt[i].kernel, ps_kt[i].args, ps_kt[i].nargs) = ps_kt[i];
    free(ps_kt);
    ps_kt = table;
    ps_kt_size = size;
}

/* One call of kernel `kernel` (`name`) with `args`, started at `t0`. */
PS_FN void ps_kt_record(int kernel, const char *name, const int64_t *args, int nargs, double t0) {
    double dt = ps_kt_now() - t0;
    if (nargs > PS_KT_MAXARGS || kernel < 0) {
        ps_kt_skipped++;
        return;
    }
    if (kernel >= ps_kt_nkernels) {
        int n = kernel + 1;
        ps_kt_called = (unsigned char *)realloc(ps_kt_called, (size_t)n);
        if (ps_kt_called == NULL) ps_fail("out of memory");
        memset(ps_kt_called + ps_kt_nkernels, 0, (size_t)(n - ps_kt_nkernels));
        ps_kt_nkernels = n;
    }
    if (2 * (ps_kt_used + 1) > ps_kt_size) ps_kt_grow();
    PsKtTuple *t = ps_kt_slot(ps_kt, ps_kt_size, kernel, args, nargs);
    if (t->kernel < 0) {
        t->kernel = kernel;
        t->name = name;
        t->nargs = nargs;
        if (nargs > 0) memcpy(t->args, args, (size_t)nargs * sizeof args[0]);
        t->calls = t->later = 0;
        t->first = -1.0;
        t->samples = NULL;
        t->n = 0;
        ps_kt_used++;
    }
    t->calls++;
    if (!ps_kt_called[kernel]) {
        ps_kt_called[kernel] = 1;
        t->first = dt;
        return;
    }
    t->later++;
    if (t->n < PS_KT_KEEP) {
        if ((t->n & (t->n - 1)) == 0) { /* grow at powers of two */
            size_t cap = t->n ? 2 * t->n : 16;
            t->samples = (double *)realloc(t->samples, cap * sizeof *t->samples);
            if (t->samples == NULL) ps_fail("out of memory");
        }
        t->samples[t->n++] = dt;
    } else {
        ps_kt_rng ^= ps_kt_rng << 13;
        ps_kt_rng ^= ps_kt_rng >> 7;
        ps_kt_rng ^= ps_kt_rng << 17;
        uint64_t j = ps_kt_rng % t->later;
        if (j < PS_KT_KEEP) t->samples[j] = dt;
    }
}

/* This rank's tuples, to PARSIM_TIME_KERNELS "/kernel-times.P.R.txt". */
PS_FN void ps_kt_write(void) {
    char path[4096];
    snprintf(path, sizeof path, "%s/kernel-times.%d.%d.txt", PARSIM_TIME_KERNELS, ps_size, ps_rank);
    FILE *f = fopen(path, "w");
    if (f == NULL) ps_fail("cannot write the kernel times to %s: %s", path, strerror(errno));
    fprintf(f, "parsim-kernel-times 1\nranks %d\nrank %d\ntimer_overhead %.9e\nskipped %" PRIu64 "\n",
            ps_size, ps_rank, ps_kt_dt, ps_kt_skipped);
    for (size_t i = 0; i < ps_kt_size; i++) {
        PsKtTuple *t = &ps_kt[i];
        if (t->kernel < 0) continue;
        fprintf(f, "tuple %s %d", t->name, t->nargs);
        for (int a = 0; a < t->nargs; a++) fprintf(f, " %" PRId64, t->args[a]);
        fprintf(f, "\ncalls %" PRIu64 "\nfirst %.9e\nsamples %zu\n", t->calls, t->first, t->n);
        for (size_t k = 0; k < t->n; k++) fprintf(f, "%.9e\n", t->samples[k]);
    }
    if (fclose(f) != 0) ps_fail("cannot write the kernel times to %s", path);
}
#endif

/* Every rank starts the clock together. */
PS_FN void ps_start(void) {
#ifdef PARSIM_TIME_KERNELS
    ps_kt_dt = ps_kt_overhead();
#endif
    ps_check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    ps_t0 = MPI_Wtime();
}

/* The run time (the slowest rank's), one line on rank 0, and the end. */
PS_FN int ps_finish(const char *program) {
    double elapsed = MPI_Wtime() - ps_t0, slowest = 0.0;
    ps_line = 0;
    /* Buffered sends still under way complete in the background. */
    for (int i = 0; i < ps_nbsends; i++) MPI_Request_free(&ps_bsends[i].req);
    ps_nbsends = 0;
    ps_check(MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD),
             "MPI_Reduce");
    fflush(stdout);
    if (ps_rank == 0) {
        printf("PARSIM_RESULT {\"program\":\"%s\",\"ranks\":%d,\"seconds\":%.9e}\n", program,
               ps_size, slowest);
        fflush(stdout);
    }
#ifdef PARSIM_TIME_KERNELS
    ps_kt_write();
#endif
    ps_free_mpi_objects();
    MPI_Finalize();
    return 0;
}

/* ==== end of the runtime; the program follows ============================= */
