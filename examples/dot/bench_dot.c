/* Throughput of every compiled dot(), poly_sum() and i8dot() version this CPU runs,
 * and the cost of the dispatched call against a direct one.  Prints one JSON object;
 * "gflops" of i8dot is integer operations, GOP/s (a multiply and an add per element).
 *
 * Each figure is the best of ROUNDS timings, and the rounds take the versions in
 * turn, so that a burst of load from another process hits them all alike rather
 * than all the rounds of one version. */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#ifdef _WIN32
#include <windows.h> /* QueryPerformanceCounter: MSVC and mingw's default (-win32) gcc have no clock_gettime */
#else
#include <time.h>
#endif

#include "dot.h"

#define N 4096
#define ROUNDS 7
#define MAX_VERSIONS 32

typedef float (*dot_fn)(const float *, const float *, size_t);
typedef float (*poly_fn)(const float *, size_t);
typedef int32_t (*i8dot_fn)(const int8_t *, const int8_t *, size_t);

struct version {
    const char *target, *kernel;
    dot_fn dot;
    poly_fn poly;
    i8dot_fn i8;
    double best_ns;
};

static float a[N], b[N], x[N];
static int8_t ia[N], ib[N];
static volatile float sink;
static volatile int32_t isink;
static struct version dots[MAX_VERSIONS], polys[MAX_VERSIONS], i8dots[MAX_VERSIONS];
static int ndots, npolys, ni8dots;

static double now(void)
{
#ifdef _WIN32
    LARGE_INTEGER t, hz;
    QueryPerformanceCounter(&t);
    QueryPerformanceFrequency(&hz);
    return (double)t.QuadPart / (double)hz.QuadPart;
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
#endif
}

/* ns per call of one timing: `reps` calls of v's function on n elements */
static double time_ns(const struct version *v, size_t n, long reps)
{
    long r;
    double t0 = now();
    if (v->dot)
        for (r = 0; r < reps; r++) sink = v->dot(a, b, n);
    else if (v->i8)
        for (r = 0; r < reps; r++) isink = v->i8(ia, ib, n);
    else
        for (r = 0; r < reps; r++) sink = v->poly(x, n);
    return (now() - t0) / (double)reps * 1e9;
}

static void best_of_rounds(struct version *vs, int count, size_t n, long reps)
{
    int round, i;
    for (i = 0; i < count; i++) vs[i].best_ns = 1e30;
    for (round = 0; round < ROUNDS; round++)
        for (i = 0; i < count; i++) {
            double ns = time_ns(&vs[i], n, reps);
            if (ns < vs[i].best_ns) vs[i].best_ns = ns;
        }
}

static void add(struct version *vs, int *count, const char *target, const char *kernel, dot_fn d, poly_fn p,
                i8dot_fn i8)
{
    if (*count < MAX_VERSIONS) {
        struct version v;
        v.target = target;
        v.kernel = kernel;
        v.dot = d;
        v.poly = p;
        v.i8 = i8;
        v.best_ns = 0.0;
        vs[(*count)++] = v;
    }
}

/* operations per element: dot 2 (multiply, add); poly 2 per Horner step; i8dot 2 (integer) */
static void print_versions(const struct version *vs, int count, double flops_per_element, const char *indent)
{
    int i;
    for (i = 0; i < count; i++)
        printf("%s\n%s{\"target\": \"%s\", \"kernel\": \"%s\", \"ns_per_call\": %.1f, \"gflops\": %.2f}",
               i ? "," : "", indent, vs[i].target, vs[i].kernel, vs[i].best_ns,
               flops_per_element * N / vs[i].best_ns);
}

#include "dot.dispatch.h"
CCOPT_DISPATCH_DECLARE(dot_dispatch, float, dot, (const float *a, const float *b, size_t n))
CCOPT_DISPATCH_DECLARE(dot_dispatch, const char *, dot_kernel, (void))

#define ADD_DOT_CB(CHECK, TARGET, ...) \
    if (CHECK) add(dots, &ndots, #TARGET, CCOPT_DISPATCH_VERSION(dot_kernel, TARGET)(), CCOPT_DISPATCH_VERSION(dot, TARGET), 0, 0);

static void bench_dot_versions(void)
{
    struct version calls[2];
    CCOPT_DISPATCH_FOREACH(dot_dispatch, ADD_DOT_CB, 0)
    best_of_rounds(dots, ndots, N, 20000);
    printf("{\"n\": %d, \"picked\": \"%s\", \"targets\": [", N, dot_target());
    print_versions(dots, ndots, 2.0, "    ");
    /* the cost of the dispatcher: a short call, direct to the picked version and through dot() */
    calls[0].dot = CCOPT_DISPATCH_PICK(dot_dispatch, dot);
    calls[1].dot = dot;
    calls[0].poly = calls[1].poly = 0;
    calls[0].i8 = calls[1].i8 = 0;
    best_of_rounds(calls, 2, 8, 2000000);
    printf("\n  ],\n  \"call_ns_direct\": %.2f, \"call_ns_dispatched\": %.2f,\n", calls[0].best_ns, calls[1].best_ns);
}

#include "poly.dispatch.h"
CCOPT_DISPATCH_DECLARE(poly_dispatch, float, poly_sum, (const float *x, size_t n))
CCOPT_DISPATCH_DECLARE(poly_dispatch, const char *, poly_kernel, (void))

#define ADD_POLY_CB(CHECK, TARGET, ...) \
    if (CHECK) add(polys, &npolys, #TARGET, CCOPT_DISPATCH_VERSION(poly_kernel, TARGET)(), 0, CCOPT_DISPATCH_VERSION(poly_sum, TARGET), 0);

static void bench_poly_versions(void)
{
    CCOPT_DISPATCH_FOREACH(poly_dispatch, ADD_POLY_CB, 0)
    best_of_rounds(polys, npolys, N, 2000);
    printf("  \"poly\": {\"n\": %d, \"degree\": %d, \"picked\": \"%s\", \"targets\": [", N, POLY_DEGREE,
           poly_target());
    print_versions(polys, npolys, 2.0 * POLY_DEGREE, "      ");
    printf("\n    ]},\n");
}

#include "i8dot.dispatch.h"
CCOPT_DISPATCH_DECLARE(i8dot_dispatch, int32_t, i8dot, (const int8_t *a, const int8_t *b, size_t n))
CCOPT_DISPATCH_DECLARE(i8dot_dispatch, const char *, i8dot_kernel, (void))

#define ADD_I8DOT_CB(CHECK, TARGET, ...) \
    if (CHECK) add(i8dots, &ni8dots, #TARGET, CCOPT_DISPATCH_VERSION(i8dot_kernel, TARGET)(), 0, 0, CCOPT_DISPATCH_VERSION(i8dot, TARGET));

static void bench_i8dot_versions(void)
{
    CCOPT_DISPATCH_FOREACH(i8dot_dispatch, ADD_I8DOT_CB, 0)
    best_of_rounds(i8dots, ni8dots, N, 20000);
    printf("  \"i8dot\": {\"n\": %d, \"picked\": \"%s\", \"targets\": [", N, i8dot_target());
    print_versions(i8dots, ni8dots, 2.0, "      ");
    printf("\n    ]}\n}\n");
}

int main(void)
{
    int i;
    ccopt_cpu_init();
    for (i = 0; i < N; i++) {
        a[i] = (float)(i % 7) * 0.5f;
        b[i] = (float)(i % 5) * 0.25f;
        x[i] = (float)((i * 37) % 201 - 100) * 0.01f; /* [-1, 1] */
        ia[i] = (int8_t)((i * 73 + 11) % 256 - 128); /* [-128, 127] */
        ib[i] = (int8_t)((i * 151 + 7) % 255 - 127); /* [-127, 127]: i8dot's range for b */
    }
    bench_dot_versions();
    bench_poly_versions();
    bench_i8dot_versions();
    return 0;
}
