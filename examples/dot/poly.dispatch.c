/*
 * A compute-bound kernel next to the load-bound dot product: the sum of p(x[i])
 * for the degree-16 polynomial of dot.h, by Horner's rule, compiled once per
 * target listed in meson.build.
 * Its targets are listed in meson.build, so editing this file recompiles only its versions.
 */
#include <stddef.h>

#include "ccopt_config.h"
#include "ccopt_dispatch.h"
#include "dot.h"

#if defined(CCOPT_HAVE_AVX512F)
#define POLY_WIDTH 16
#define POLY_KERNEL "avx512"
#elif defined(CCOPT_HAVE_AVX2) && defined(CCOPT_HAVE_FMA3)
#define POLY_WIDTH 8
#define POLY_KERNEL "avx2+fma"
#elif defined(CCOPT_HAVE_AVX2) || defined(CCOPT_HAVE_AVX)
#define POLY_WIDTH 8
#define POLY_KERNEL "avx"
#elif defined(CCOPT_HAVE_SSE2)
#define POLY_WIDTH 4
#define POLY_KERNEL "sse"
#elif defined(CCOPT_HAVE_ASIMD) || defined(CCOPT_HAVE_NEON)
#include <arm_neon.h>
#define POLY_WIDTH 4
#define POLY_KERNEL "neon"
#elif defined(CCOPT_HAVE_VSX)
#include <altivec.h>
#define POLY_WIDTH 4
#define POLY_KERNEL "vsx"
#elif defined(CCOPT_HAVE_VXE) /* float vectors need z14; z13's VX has double only */
#include <vecintrin.h>
#define POLY_WIDTH 4
#define POLY_KERNEL "zvector"
#else
#define POLY_WIDTH 1
#define POLY_KERNEL "scalar"
#endif

/* Independent Horner chains in flight.  Eight keep two fused multiply-add units
 * busy (latency 4, two per cycle), and their 8 x vectors plus 8 accumulators fill
 * the 16 SSE/AVX registers; without FMA each step is a multiply then a dependent
 * add, so those versions wait on latency as well as doing twice the instructions. */
#define POLY_CHAINS 8

static const float poly_c[POLY_DEGREE + 1] = POLY_COEFFS;

const char *CCOPT_FN(poly_kernel)(void) { return POLY_KERNEL; }

static float poly_one(float x)
{
    float p = poly_c[POLY_DEGREE];
    int k;
    for (k = POLY_DEGREE - 1; k >= 0; k--)
        p = p * x + poly_c[k];
    return p;
}

#if POLY_WIDTH == 16
typedef __m512 poly_vec;
#define POLY_LOAD(P) _mm512_loadu_ps(P)
#define POLY_SET1(F) _mm512_set1_ps(F)
#define POLY_MULADD(A, X, C) _mm512_fmadd_ps(A, X, C)
#define POLY_ADD(A, B) _mm512_add_ps(A, B)
static float poly_hsum(poly_vec v) { return _mm512_reduce_add_ps(v); }
#elif POLY_WIDTH == 8
typedef __m256 poly_vec;
#define POLY_LOAD(P) _mm256_loadu_ps(P)
#define POLY_SET1(F) _mm256_set1_ps(F)
#if defined(CCOPT_HAVE_FMA3)
#define POLY_MULADD(A, X, C) _mm256_fmadd_ps(A, X, C)
#else
#define POLY_MULADD(A, X, C) _mm256_add_ps(_mm256_mul_ps(A, X), C)
#endif
#define POLY_ADD(A, B) _mm256_add_ps(A, B)
static float poly_hsum(poly_vec v)
{
    float lanes[8];
    _mm256_storeu_ps(lanes, v);
    return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}
#elif POLY_WIDTH == 4 && defined(CCOPT_HAVE_SSE2)
typedef __m128 poly_vec;
#define POLY_LOAD(P) _mm_loadu_ps(P)
#define POLY_SET1(F) _mm_set1_ps(F)
#define POLY_MULADD(A, X, C) _mm_add_ps(_mm_mul_ps(A, X), C)
#define POLY_ADD(A, B) _mm_add_ps(A, B)
static float poly_hsum(poly_vec v)
{
    float lanes[4];
    _mm_storeu_ps(lanes, v);
    return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
}
#elif POLY_WIDTH == 4 && (defined(CCOPT_HAVE_ASIMD) || defined(CCOPT_HAVE_NEON))
typedef float32x4_t poly_vec;
#define POLY_LOAD(P) vld1q_f32(P)
#define POLY_SET1(F) vdupq_n_f32(F)
#if defined(__aarch64__)
#define POLY_MULADD(A, X, C) vfmaq_f32(C, A, X)
#else
#define POLY_MULADD(A, X, C) vmlaq_f32(C, A, X)
#endif
#define POLY_ADD(A, B) vaddq_f32(A, B)
static float poly_hsum(poly_vec v)
{
    float lanes[4];
    vst1q_f32(lanes, v);
    return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
}
#elif POLY_WIDTH == 4 /* VSX, z/Architecture vector */
typedef __vector float poly_vec;
#define POLY_LOAD(P) vec_xl(0, P)
#define POLY_SET1(F) vec_splats(F)
#define POLY_MULADD(A, X, C) vec_madd(A, X, C)
#define POLY_ADD(A, B) ((A) + (B))
static float poly_hsum(poly_vec v) { return (v[0] + v[1]) + (v[2] + v[3]); }
#endif

float CCOPT_FN(poly_sum)(const float *x, size_t n)
{
    size_t i = 0;
    float sum = 0.0f;
#if POLY_WIDTH > 1
    /* POLY_CHAINS vectors of x at once, one Horner step for all of them at a time */
    poly_vec xv[POLY_CHAINS], acc[POLY_CHAINS], cv[POLY_DEGREE + 1];
    poly_vec total = POLY_SET1(0.0f);
    int j, k;
    for (k = 0; k <= POLY_DEGREE; k++) cv[k] = POLY_SET1(poly_c[k]);
    for (; i + POLY_WIDTH * POLY_CHAINS <= n; i += POLY_WIDTH * POLY_CHAINS) {
        for (j = 0; j < POLY_CHAINS; j++) {
            xv[j] = POLY_LOAD(x + i + POLY_WIDTH * j);
            acc[j] = cv[POLY_DEGREE];
        }
        /* Keep this a loop: fully unrolled, GCC expands each chain as one expression,
         * chain after chain, and the chains no longer overlap in the pipeline. */
#if defined(__clang__)
#pragma nounroll
#elif defined(__GNUC__) && __GNUC__ >= 8
#pragma GCC unroll 1
#endif
        for (k = POLY_DEGREE - 1; k >= 0; k--)
            for (j = 0; j < POLY_CHAINS; j++)
                acc[j] = POLY_MULADD(acc[j], xv[j], cv[k]);
        for (j = 1; j < POLY_CHAINS; j++) acc[0] = POLY_ADD(acc[0], acc[j]);
        total = POLY_ADD(total, acc[0]);
    }
    sum = poly_hsum(total);
#else
    {
        /* portable C: four chains, which is what a build without SIMD runs */
        float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
        for (; i + 4 <= n; i += 4) {
            s0 += poly_one(x[i]);
            s1 += poly_one(x[i + 1]);
            s2 += poly_one(x[i + 2]);
            s3 += poly_one(x[i + 3]);
        }
        sum = (s0 + s1) + (s2 + s3);
    }
#endif
    for (; i < n; i++)
        sum += poly_one(x[i]);
    return sum;
}
