/* SPDX-License-Identifier: MIT */
/*
 * tutil.h - small helpers shared by the tahq unit tests: bit views, a
 * deterministic test-data generator (SplitMix64), failure counting and
 * timing. Only libc/libm; nothing here calls the library.
 */
#ifndef TAHQ_TESTS_TUTIL_H
#define TAHQ_TESTS_TUTIL_H

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- bit views ---------------------------------------------------------- */
static inline uint32_t f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
static inline float u2f(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static inline uint64_t d2u(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* ---- failure accounting ---------------------------------------------------
 * Every check increments t_checks; a failed check increments t_fails and
 * prints the first T_MAX_REPORT failures. */
#ifndef T_MAX_REPORT
#define T_MAX_REPORT 20
#endif
static uint64_t t_checks;
static uint64_t t_fails;

static inline int t_check_(int ok, const char *file, int line, const char *what)
{
    t_checks++;
    if (!ok) {
        t_fails++;
        if (t_fails <= T_MAX_REPORT)
            fprintf(stderr, "%s:%d: FAILED: %s\n", file, line, what);
    }
    return ok;
}
/* CHECK(cond): plain check. CHECKF(cond, fmt, ...): with a message printed
 * on failure. Both evaluate to 1 when the check passed. */
static inline int t_checkf_(int ok, const char *file, int line, const char *what, const char *fmt,
                            ...) __attribute__((format(printf, 5, 6)));
static inline int t_checkf_(int ok, const char *file, int line, const char *what, const char *fmt,
                            ...)
{
    t_checks++;
    if (!ok) {
        t_fails++;
        if (t_fails <= T_MAX_REPORT) {
            va_list ap;
            fprintf(stderr, "%s:%d: FAILED: %s: ", file, line, what);
            va_start(ap, fmt);
            vfprintf(stderr, fmt, ap);
            va_end(ap);
            fprintf(stderr, "\n");
        }
    }
    return ok;
}
#define CHECK(c) t_check_((c) ? 1 : 0, __FILE__, __LINE__, #c)
#define CHECKF(c, ...) t_checkf_((c) ? 1 : 0, __FILE__, __LINE__, #c, __VA_ARGS__)
/* For tight loops: the counter is bumped inline, the reporting function is
 * called only on failure. */
#define CHECK_QUIET(c, ...)                                          \
    do {                                                             \
        if (__builtin_expect(!!(c), 1))                              \
            t_checks++;                                              \
        else                                                         \
            (void)t_checkf_(0, __FILE__, __LINE__, #c, __VA_ARGS__); \
    } while (0)

/* Print the one-line summary and return the process exit status: 1 when a
 * check failed, and also when no check ran at all (a test that checked
 * nothing must not pass). */
static inline int t_finish(const char *name, const char *what)
{
    int fail = t_fails != 0 || t_checks == 0;
    printf("%s: %s: %" PRIu64 " checks, %" PRIu64 " failed -> %s%s\n", name, what, t_checks,
           t_fails, fail ? "FAIL" : "PASS", t_checks == 0 ? " (no check ran)" : "");
    fflush(stdout);
    return fail ? 1 : 0;
}

/* ---- deterministic test data: SplitMix64 (Vigna) -------------------------- */
typedef struct trng {
    uint64_t s;
} trng;
static inline uint64_t trng_next(trng *r)
{
    uint64_t z = (r->s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}
static inline uint32_t trng_u32(trng *r)
{
    return (uint32_t)(trng_next(r) >> 32);
}
/* uniform integer in [0, n) (n > 0; slight modulo bias is irrelevant here) */
static inline uint64_t trng_below(trng *r, uint64_t n)
{
    return trng_next(r) % n;
}
/* uniform double in [0, 1) with 53 random bits */
static inline double trng_unit(trng *r)
{
    return (double)(trng_next(r) >> 11) * 0x1p-53;
}
/* standard normal (Box-Muller, double), rounded once to float by the caller */
static inline double trng_gauss(trng *r)
{
    double u1 = trng_unit(r), u2 = trng_unit(r);
    if (u1 < 0x1p-60)
        u1 = 0x1p-60;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
/* a random finite float with a random exponent in [emin, emax] and random sign */
static inline float trng_float_exp(trng *r, int emin, int emax)
{
    double m = 1.0 + trng_unit(r);
    int e = emin + (int)trng_below(r, (uint64_t)(emax - emin + 1));
    double v = ldexp(m, e);
    if (trng_next(r) & 1)
        v = -v;
    return (float)v;
}

/* ---- timing ---------------------------------------------------------------- */
static inline double t_now(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- little-endian field access -------------------------------------------- */
static inline uint64_t t_get_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}
static inline void t_put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) {
        p[i] = (uint8_t)(v & 0xFF);
        v >>= 8;
    }
}

#endif
