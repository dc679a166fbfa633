/* Checks every compiled version the CPU can run against a double-precision
 * reference, then reports which one the dispatcher picked. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "dot.h"
#include "dot.dispatch.h"

CCOPT_DISPATCH_DECLARE(float, dot, (const float *a, const float *b, size_t n))
CCOPT_DISPATCH_DECLARE(const char *, dot_kernel, (void))

static float a[1003], b[1003];
static double want;
static int failures, ran;

static void check(const char *target, float (*fn)(const float *, const float *, size_t), const char *kernel)
{
    float got = fn(a, b, 1003);
    int ok = fabs(got - want) <= 1e-3 * fabs(want);
    printf("%-12s %-10s %s (%g vs %g)\n", target, kernel, ok ? "ok" : "WRONG", got, want);
    failures += !ok;
    ran++;
}

#define CHECK_CB(CHECK, TARGET, ...) \
    if (CHECK) check(#TARGET, CCOPT__CAT(dot, TARGET), CCOPT__CAT(dot_kernel, TARGET)()); \
    else printf("%-12s skipped: this CPU lacks it\n", #TARGET);

int main(void)
{
    int i;
    if (ccopt_cpu_init() != 0)
        printf("warning: this CPU lacks baseline features: %s\n", ccopt_cpu_baseline_missing());
    for (i = 0; i < 1003; i++) {
        a[i] = (float)((i % 17) - 8) * 0.25f;
        b[i] = (float)((i % 13) - 6) * 0.5f;
        want += (double)a[i] * b[i];
    }
    CCOPT_DISPATCH_FOREACH(CHECK_CB, 0)
#if CCOPT_DISPATCH_HAS_BASELINE
    check("BASELINE", dot_BASELINE, dot_kernel_BASELINE());
#endif
    printf("dispatch picked: %s\n", dot_target());
    if (fabs(dot(a, b, 1003) - want) > 1e-3 * fabs(want)) {
        printf("dispatched call is WRONG\n");
        return 1;
    }
    return failures ? 1 : 0;
}
