/* Throughput of every compiled dot() version this CPU runs, and the cost of the
 * dispatched call against a direct one.  Prints one JSON object. */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dot.h"
#include "dot.dispatch.h"

CCOPT_DISPATCH_DECLARE(float, dot, (const float *a, const float *b, size_t n))
CCOPT_DISPATCH_DECLARE(const char *, dot_kernel, (void))

#define N 4096
static float a[N], b[N];
static volatile float sink;
static int first = 1;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double best_ns(float (*fn)(const float *, const float *, size_t), size_t n, long reps)
{
    double best = 1e30;
    int round;
    for (round = 0; round < 5; round++) {
        long r;
        double t0 = now(), dt;
        for (r = 0; r < reps; r++) sink = fn(a, b, n);
        dt = (now() - t0) / (double)reps * 1e9;
        if (dt < best) best = dt;
    }
    return best;
}

static void report(const char *target, float (*fn)(const float *, const float *, size_t), const char *kernel)
{
    double ns = best_ns(fn, N, 20000);
    printf("%s\n    {\"target\": \"%s\", \"kernel\": \"%s\", \"ns_per_call\": %.1f, \"gflops\": %.2f}",
           first ? "" : ",", target, kernel, ns, 2.0 * N / ns);
    first = 0;
}

#define BENCH_CB(CHECK, TARGET, ...) \
    if (CHECK) report(#TARGET, CCOPT__CAT(dot, TARGET), CCOPT__CAT(dot_kernel, TARGET)());

int main(void)
{
    int i;
    double direct, dispatched;
    float (*picked)(const float *, const float *, size_t);
    ccopt_cpu_init();
    for (i = 0; i < N; i++) {
        a[i] = (float)(i % 7) * 0.5f;
        b[i] = (float)(i % 5) * 0.25f;
    }
    printf("{\"n\": %d, \"picked\": \"%s\", \"targets\": [", N, dot_target());
    CCOPT_DISPATCH_FOREACH(BENCH_CB, 0)
#if CCOPT_DISPATCH_HAS_BASELINE
    report("BASELINE", dot_BASELINE, dot_kernel_BASELINE());
#endif
    picked = CCOPT_DISPATCH_PICK(dot);
    direct = best_ns(picked, 8, 20000000);
    dispatched = best_ns(dot, 8, 20000000);
    printf("\n  ],\n  \"call_ns_direct\": %.2f, \"call_ns_dispatched\": %.2f}\n", direct, dispatched);
    return 0;
}
