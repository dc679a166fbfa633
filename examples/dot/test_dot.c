/* Checks every compiled version of each kernel the CPU can run against a
 * double-precision reference, then reports which one the dispatcher picked
 * (dot's pick on the last line). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "dot.h"

static float a[1003], b[1003], x[1003];
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

/* The dispatch macros use the dispatch header included last: one section per kernel. */
#include "dot.dispatch.h"
CCOPT_DISPATCH_DECLARE(float, dot, (const float *a, const float *b, size_t n))
CCOPT_DISPATCH_DECLARE(const char *, dot_kernel, (void))

#define CHECK_CB(CHECK, TARGET, ...) \
    if (CHECK) check(#TARGET, CCOPT__CAT(dot, TARGET), CCOPT__CAT(dot_kernel, TARGET)()); \
    else printf("%-12s skipped: this CPU lacks it\n", #TARGET);

static void check_dot_versions(void)
{
    CCOPT_DISPATCH_FOREACH(CHECK_CB, 0)
#if CCOPT_DISPATCH_HAS_BASELINE
    check("BASELINE", dot_BASELINE, dot_kernel_BASELINE());
#endif
}

#include "poly.dispatch.h"
CCOPT_DISPATCH_DECLARE(float, poly_sum, (const float *x, size_t n))
CCOPT_DISPATCH_DECLARE(const char *, poly_kernel, (void))

#define CHECK_POLY_CB(CHECK, TARGET, ...) \
    if (CHECK) check_poly(#TARGET, CCOPT__CAT(poly_sum, TARGET), CCOPT__CAT(poly_kernel, TARGET)()); \
    else printf("poly %-12s skipped: this CPU lacks it\n", #TARGET);

static void check_poly_versions(void)
{
    CCOPT_DISPATCH_FOREACH(CHECK_POLY_CB, 0)
#if CCOPT_DISPATCH_HAS_BASELINE
    check_poly("BASELINE", poly_sum_BASELINE, poly_kernel_BASELINE());
#endif
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
    check_poly_versions();
    printf("poly dispatch picked: %s\n", poly_target());
    if (fabs(poly_sum(x, 1003) - want_poly) > 1e-4 * fabs(want_poly)) {
        printf("dispatched poly_sum call is WRONG\n");
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
