/* One kernel (the sum of n bytes) per target of fine-grained features and groups; each version
 * runs its target's own instructions in a way that leaves the sum alone, so a version picked
 * for a CPU without them dies with SIGILL instead of passing.
 *
 * @targets baseline (avx512vl avx512vbmi) (vpclmulqdq avx512vl) pclmulqdq avx2 avx2_isa sse41
 */
#include <stddef.h>

#include "ccopt_config.h" /* this target's CCOPT_HAVE_<F> and intrinsics headers */
#include "ccopt_dispatch.h"

unsigned long CCOPT_FN(sum_bytes)(const unsigned char *p, size_t n);

#if defined(CCOPT_HAVE_AVX512VBMI) && defined(CCOPT_HAVE_AVX512VL) || defined(CCOPT_HAVE_VPCLMULQDQ) || \
    defined(CCOPT_HAVE_AVX2) || defined(CCOPT_HAVE_AVX2_ISA)
static __m256i touch(__m256i x)
{
#if defined(CCOPT_HAVE_AVX512VBMI)
    const __m256i identity = _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
                                              20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31);
    return _mm256_permutexvar_epi8(identity, x); /* VBMI with VL: a 256-bit byte permute */
#elif defined(CCOPT_HAVE_VPCLMULQDQ)
    return _mm256_or_si256(x, _mm256_clmulepi64_epi128(x, _mm256_setzero_si256(), 0x00)); /* x | 0 */
#else
    return x;
#endif
}

unsigned long CCOPT_FN(sum_bytes)(const unsigned char *p, size_t n)
{
    __m256i acc = _mm256_setzero_si256();
    unsigned long s = 0;
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        acc = _mm256_add_epi64(acc, _mm256_sad_epu8(touch(_mm256_loadu_si256((const __m256i *)(const void *)(p + i))),
                                                    _mm256_setzero_si256()));
    s = (unsigned long)(_mm256_extract_epi64(acc, 0) + _mm256_extract_epi64(acc, 1) + _mm256_extract_epi64(acc, 2) +
                        _mm256_extract_epi64(acc, 3));
    for (; i < n; ++i)
        s += p[i];
    return s;
}
#elif defined(CCOPT_HAVE_PCLMULQDQ) || defined(CCOPT_HAVE_SSE41)
unsigned long CCOPT_FN(sum_bytes)(const unsigned char *p, size_t n)
{
    __m128i acc = _mm_setzero_si128();
    unsigned long s;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
#if defined(CCOPT_HAVE_PCLMULQDQ)
        x = _mm_or_si128(x, _mm_clmulepi64_si128(x, _mm_setzero_si128(), 0x00)); /* x | 0 */
#else
        x = _mm_blend_epi16(x, x, 0x55); /* SSE4.1 */
#endif
        acc = _mm_add_epi64(acc, _mm_sad_epu8(x, _mm_setzero_si128()));
    }
    s = (unsigned long)(_mm_cvtsi128_si64(acc) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(acc, acc)));
    for (; i < n; ++i)
        s += p[i];
    return s;
}
#else
unsigned long CCOPT_FN(sum_bytes)(const unsigned char *p, size_t n)
{
    unsigned long s = 0;
    size_t i;
    for (i = 0; i < n; ++i)
        s += p[i];
    return s;
}
#endif
