/* Checks every compiled version of each kernel the CPU can run against a
 * double-precision reference (i8dot: an exact int64 one), then reports which one
 * the dispatcher picked (dot's pick on the last line). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "dot.h"

static float a[1003], b[1003], x[1003];
/* int8 data: a covers [-128, 127], b covers [-127, 127] (i8dot's input range, dot.h) */
#define I8_N 2093
static int8_t ia[I8_N], ib[I8_N];
/* lengths around every vector width and unrolled block (16..64 bytes, x8), and odd tails */
static const size_t i8_lengths[] = {0, 1, 3, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256,
                                    257, 511, 512, 513, 1003, 1024, 2047, 2048, I8_N};
static double want, want_poly;
static int failures, ran;

static void check(const char *target, float (*fn)(const float *, const float *, size_t), const char *kernel)
{
    float got = fn(a, b, 1003);
    int ok = fabs(got - want) <= 1e-3 * fabs(want);
    printf("%-12s %-10s %s (%g vs %g)\n", target, kernel, ok ? "ok" : "WRONG", got, want);
    failures += !ok;
    ran++;
}

static void check_poly(const char *target, float (*fn)(const float *, size_t), const char *kernel)
{
    float got = fn(x, 1003);
    int ok = fabs(got - want_poly) <= 1e-4 * fabs(want_poly);
    printf("poly %-12s %-10s %s (%.9g vs %.9g)\n", target, kernel, ok ? "ok" : "WRONG", got, want_poly);
    failures += !ok;
    ran++;
}

static long long i8_reference(const int8_t *p, const int8_t *q, size_t n)
{
    long long sum = 0;
    size_t i;
    for (i = 0; i < n; i++) sum += (long long)p[i] * q[i];
    return sum;
}

/* exact equality with the int64 reference at every length, and at odd offsets */
static void check_i8dot(const char *target, int32_t (*fn)(const int8_t *, const int8_t *, size_t),
                        const char *kernel)
{
    size_t j, bad = (size_t)-1;
    long long got = 0, want_i8 = 0;
    for (j = 0; j < sizeof i8_lengths / sizeof i8_lengths[0] && bad == (size_t)-1; j++) {
        size_t n = i8_lengths[j];
        got = fn(ia, ib, n);
        want_i8 = i8_reference(ia, ib, n);
        if (got == want_i8 && n >= 4) {
            got = fn(ia + 1, ib + 3, n - 3);
            want_i8 = i8_reference(ia + 1, ib + 3, n - 3);
        }
        if (got != want_i8) bad = n;
    }
    if (bad == (size_t)-1)
        printf("i8dot %-12s %-10s ok (%lld vs %lld, %d lengths)\n", target, kernel, got, want_i8,
               (int)(sizeof i8_lengths / sizeof i8_lengths[0]));
    else
        printf("i8dot %-12s %-10s WRONG at n=%lu (%lld vs %lld)\n", target, kernel, (unsigned long)bad, got,
               want_i8);
    failures += bad != (size_t)-1;
    ran++;
}

#include "dot.dispatch.h"
CCOPT_DISPATCH_DECLARE(dot_dispatch, float, dot, (const float *a, const float *b, size_t n))
CCOPT_DISPATCH_DECLARE(dot_dispatch, const char *, dot_kernel, (void))

#define CHECK_CB(CHECK, TARGET, ...) \
    if (CHECK) check(#TARGET, CCOPT_DISPATCH_VERSION(dot, TARGET), CCOPT_DISPATCH_VERSION(dot_kernel, TARGET)()); \
    else printf("%-12s skipped: this CPU lacks it\n", #TARGET);

static void check_dot_versions(void)
{
    CCOPT_DISPATCH_FOREACH(dot_dispatch, CHECK_CB, 0)
}

#include "poly.dispatch.h"
CCOPT_DISPATCH_DECLARE(poly_dispatch, float, poly_sum, (const float *x, size_t n))
CCOPT_DISPATCH_DECLARE(poly_dispatch, const char *, poly_kernel, (void))

#define CHECK_POLY_CB(CHECK, TARGET, ...) \
    if (CHECK) check_poly(#TARGET, CCOPT_DISPATCH_VERSION(poly_sum, TARGET), CCOPT_DISPATCH_VERSION(poly_kernel, TARGET)()); \
    else printf("poly %-12s skipped: this CPU lacks it\n", #TARGET);

static void check_poly_versions(void)
{
    CCOPT_DISPATCH_FOREACH(poly_dispatch, CHECK_POLY_CB, 0)
}

#include "i8dot.dispatch.h"
CCOPT_DISPATCH_DECLARE(i8dot_dispatch, int32_t, i8dot, (const int8_t *a, const int8_t *b, size_t n))
CCOPT_DISPATCH_DECLARE(i8dot_dispatch, const char *, i8dot_kernel, (void))

#define CHECK_I8DOT_CB(CHECK, TARGET, ...) \
    if (CHECK) check_i8dot(#TARGET, CCOPT_DISPATCH_VERSION(i8dot, TARGET), CCOPT_DISPATCH_VERSION(i8dot_kernel, TARGET)()); \
    else printf("i8dot %-12s skipped: this CPU lacks it\n", #TARGET);

static void check_i8dot_versions(void)
{
    CCOPT_DISPATCH_FOREACH(i8dot_dispatch, CHECK_I8DOT_CB, 0)
}

int main(void)
{
    static const float c[POLY_DEGREE + 1] = POLY_COEFFS;
    int i, k;
    if (ccopt_cpu_init() != 0)
        printf("warning: this CPU lacks baseline features: %s\n", ccopt_cpu_baseline_missing());
    for (i = 0; i < 1003; i++) {
        double p = c[POLY_DEGREE];
        a[i] = (float)((i % 17) - 8) * 0.25f;
        b[i] = (float)((i % 13) - 6) * 0.5f;
        want += (double)a[i] * b[i];
        x[i] = (float)((i * 37) % 201 - 100) * 0.01f; /* [-1, 1] */
        for (k = POLY_DEGREE - 1; k >= 0; k--) p = p * x[i] + c[k];
        want_poly += p;
    }
    for (i = 0; i < I8_N; i++) {
        /* pseudo-random bytes, the first 32 at the extremes: |a| = 128 with |b| = 127 in
         * both bytes of a pmaddubsw pair is the largest pair sum, 2 * 128 * 127 */
        ia[i] = (int8_t)(i < 32 ? (i & 4 ? 127 : -128) : (i * 73 + 11) % 256 - 128);
        ib[i] = (int8_t)(i < 32 ? (i & 8 ? 127 : -127) : (i * 151 + 7) % 255 - 127);
    }
    check_poly_versions();
    printf("poly dispatch picked: %s\n", poly_target());
    if (fabs(poly_sum(x, 1003) - want_poly) > 1e-4 * fabs(want_poly)) {
        printf("dispatched poly_sum call is WRONG\n");
        return 1;
    }
    check_i8dot_versions();
    printf("i8dot dispatch picked: %s\n", i8dot_target());
    if (i8dot(ia, ib, I8_N) != i8_reference(ia, ib, I8_N)) {
        printf("dispatched i8dot call is WRONG\n");
        return 1;
    }
    check_dot_versions();
    printf("dispatch picked: %s\n", dot_target());
    if (fabs(dot(a, b, 1003) - want) > 1e-3 * fabs(want)) {
        printf("dispatched call is WRONG\n");
        return 1;
    }
    return failures ? 1 : 0;
}
