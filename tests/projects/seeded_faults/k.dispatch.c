/* k.dispatch.c: compiled once per target; the version's loop is what its flags allow. */
#include <stddef.h>
#if defined(__ARM_FEATURE_SVE)
#include <arm_sve.h>
#endif
#ifdef SEED_inline_copy
#include "shared.h"
#endif

int CCOPT_FN(twice_sum)(const int *v, size_t n)
{
    int sum = 0;
    size_t i = 0;
#if defined(__AVX512F__)
    __m512i acc = _mm512_setzero_si512();
    for (; i + 16 <= n; i += 16)
        acc = _mm512_add_epi32(acc, _mm512_loadu_si512((const void *)(v + i)));
    sum = _mm512_reduce_add_epi32(acc);
#elif defined(__ARM_FEATURE_SVE)
    svint32_t acc = svdup_s32(0);
    for (; i + svcntw() <= n; i += svcntw())
        acc = svadd_s32_x(svptrue_b32(), acc, svld1_s32(svptrue_b32(), v + i));
    sum = (int)svaddv_s32(svptrue_b32(), acc);
#elif defined(__AVX2__)
    __m256i acc = _mm256_setzero_si256();
    int lanes[8], k;
    for (; i + 8 <= n; i += 8)
        acc = _mm256_add_epi32(acc, _mm256_loadu_si256((const __m256i *)(v + i)));
    _mm256_storeu_si256((__m256i *)lanes, acc);
    for (k = 0; k < 8; k++)
        sum += lanes[k];
#endif
    for (; i < n; i++)
        sum += v[i];
#ifdef SEED_inline_copy
    sum += shared_mix(v, (int)n) - shared_mix(v, (int)n);
#endif
    return 2 * sum;
}
