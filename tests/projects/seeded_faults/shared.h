/* shared.h: an inline function every version of the dispatch source defines and the library's baseline code
 * also calls.  Built above the baseline in a version, it is correct there; the linker keeps one copy (the
 * first in link order) for every caller. */
#ifndef SHARED_H
#define SHARED_H
#if defined(__ARM_FEATURE_DOTPROD)
#include <arm_neon.h>
#endif
__attribute__((weak, noinline)) int shared_mix(const int *v, int n)
{
    int h = 0, i = 0;
#if defined(__AVX2__)
    __m256i acc = _mm256_setzero_si256();
    for (; i + 8 <= n; i += 8)
        acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(_mm256_loadu_si256((const __m256i *)(v + i)),
                                                      _mm256_set1_epi32(3)));
    h = _mm256_extract_epi32(acc, 0) + _mm256_extract_epi32(acc, 7);
#elif defined(__ARM_FEATURE_DOTPROD)
    uint32x4_t acc = vdupq_n_u32(0);
    for (; i + 4 <= n; i += 4)
        acc = vdotq_u32(acc, vreinterpretq_u8_s32(vld1q_s32(v + i)), vdupq_n_u8(3));
    h = (int)vaddvq_u32(acc);
#endif
    for (; i < n; i++)
        h += v[i] * 3;
    return h;
}
#endif
