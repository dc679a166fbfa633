/*
 * A float dot product, compiled once per target listed in meson.build.
 * Its targets are listed in meson.build, so editing this file recompiles only its versions.
 */
#include <stddef.h>

#include "ccopt_config.h"
#include "ccopt_dispatch.h"

#if defined(CCOPT_HAVE_AVX512F)
#define DOT_WIDTH 16
#define DOT_KERNEL "avx512"
#elif defined(CCOPT_HAVE_AVX2) && defined(CCOPT_HAVE_FMA3)
#define DOT_WIDTH 8
#define DOT_KERNEL "avx2+fma"
#elif defined(CCOPT_HAVE_AVX2) || defined(CCOPT_HAVE_AVX)
#define DOT_WIDTH 8
#define DOT_KERNEL "avx"
#elif defined(CCOPT_HAVE_SSE2)
#define DOT_WIDTH 4
#define DOT_KERNEL "sse"
#elif defined(CCOPT_HAVE_ASIMD) || defined(CCOPT_HAVE_NEON)
#include <arm_neon.h>
#define DOT_WIDTH 4
#define DOT_KERNEL "neon"
#elif defined(CCOPT_HAVE_VSX)
#include <altivec.h>
#define DOT_WIDTH 4
#define DOT_KERNEL "vsx"
#elif defined(CCOPT_HAVE_VXE) /* float vectors need z14; z13's VX has double only */
#include <vecintrin.h>
#define DOT_WIDTH 4
#define DOT_KERNEL "zvector"
#else
#define DOT_WIDTH 1
#define DOT_KERNEL "scalar"
#endif

const char *CCOPT_FN(dot_kernel)(void) { return DOT_KERNEL; }

/* Eight independent accumulators hide the FMA latency, so the kernel is bound by
 * arithmetic throughput while the data stays in L1. */
float CCOPT_FN(dot)(const float *a, const float *b, size_t n)
{
    size_t i = 0;
    float tail = 0.0f;
#if DOT_WIDTH == 16
    __m512 acc[8];
    int k;
    for (k = 0; k < 8; k++) acc[k] = _mm512_setzero_ps();
    for (; i + 128 <= n; i += 128)
        for (k = 0; k < 8; k++)
            acc[k] = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16 * k), _mm512_loadu_ps(b + i + 16 * k), acc[k]);
    for (k = 1; k < 8; k++) acc[0] = _mm512_add_ps(acc[0], acc[k]);
    tail = _mm512_reduce_add_ps(acc[0]);
#elif DOT_WIDTH == 8
    __m256 acc[8];
    float lanes[8];
    int k;
    for (k = 0; k < 8; k++) acc[k] = _mm256_setzero_ps();
    for (; i + 64 <= n; i += 64)
        for (k = 0; k < 8; k++) {
#if defined(CCOPT_HAVE_FMA3)
            acc[k] = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8 * k), _mm256_loadu_ps(b + i + 8 * k), acc[k]);
#else
            acc[k] = _mm256_add_ps(acc[k], _mm256_mul_ps(_mm256_loadu_ps(a + i + 8 * k), _mm256_loadu_ps(b + i + 8 * k)));
#endif
        }
    for (k = 1; k < 8; k++) acc[0] = _mm256_add_ps(acc[0], acc[k]);
    _mm256_storeu_ps(lanes, acc[0]);
    for (k = 0; k < 8; k++) tail += lanes[k];
#elif DOT_WIDTH == 4 && defined(CCOPT_HAVE_SSE2)
    __m128 acc[8];
    float lanes[4];
    int k;
    for (k = 0; k < 8; k++) acc[k] = _mm_setzero_ps();
    for (; i + 32 <= n; i += 32)
        for (k = 0; k < 8; k++)
            acc[k] = _mm_add_ps(acc[k], _mm_mul_ps(_mm_loadu_ps(a + i + 4 * k), _mm_loadu_ps(b + i + 4 * k)));
    for (k = 1; k < 8; k++) acc[0] = _mm_add_ps(acc[0], acc[k]);
    _mm_storeu_ps(lanes, acc[0]);
    for (k = 0; k < 4; k++) tail += lanes[k];
#elif DOT_WIDTH == 4 && (defined(CCOPT_HAVE_ASIMD) || defined(CCOPT_HAVE_NEON))
    float32x4_t acc[4];
    float lanes[4];
    int k;
    for (k = 0; k < 4; k++) acc[k] = vdupq_n_f32(0.0f);
    for (; i + 16 <= n; i += 16)
        for (k = 0; k < 4; k++)
            acc[k] = vmlaq_f32(acc[k], vld1q_f32(a + i + 4 * k), vld1q_f32(b + i + 4 * k));
    for (k = 1; k < 4; k++) acc[0] = vaddq_f32(acc[0], acc[k]);
    vst1q_f32(lanes, acc[0]);
    for (k = 0; k < 4; k++) tail += lanes[k];
#elif DOT_WIDTH == 4 && defined(CCOPT_HAVE_VSX)
    __vector float acc = vec_splats(0.0f);
    for (; i + 4 <= n; i += 4)
        acc = vec_madd(vec_xl(0, a + i), vec_xl(0, b + i), acc);
    tail = acc[0] + acc[1] + acc[2] + acc[3];
#elif DOT_WIDTH == 4 && defined(CCOPT_HAVE_VXE)
    __vector float acc = vec_splats(0.0f);
    for (; i + 4 <= n; i += 4)
        acc = vec_madd(vec_xl(0, a + i), vec_xl(0, b + i), acc);
    tail = acc[0] + acc[1] + acc[2] + acc[3];
#else
    {
        /* portable C: four partial sums, which is what the baseline build runs */
        float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
        for (; i + 4 <= n; i += 4) {
            s0 += a[i] * b[i];
            s1 += a[i + 1] * b[i + 1];
            s2 += a[i + 2] * b[i + 2];
            s3 += a[i + 3] * b[i + 3];
        }
        tail = (s0 + s1) + (s2 + s3);
    }
#endif
    for (; i < n; i++)
        tail += a[i] * b[i];
    return tail;
}
