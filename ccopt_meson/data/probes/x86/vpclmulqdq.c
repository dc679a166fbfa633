/* VPCLMULQDQ: carry-less multiply of every 128-bit lane, 256-bit (VEX) form. */
#include <immintrin.h>

int ccopt_probe_vpclmulqdq(const long long *src, long long *dst);
int ccopt_probe_vpclmulqdq(const long long *src, long long *dst)
{
    __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)src);
    __m256i k = _mm256_loadu_si256((const __m256i *)(const void *)(src + 4));
    __m256i lo = _mm256_clmulepi64_epi128(a, k, 0x00);
    __m256i hi = _mm256_clmulepi64_epi128(a, k, 0x11);
    _mm256_storeu_si256((__m256i *)(void *)dst, lo);
    _mm256_storeu_si256((__m256i *)(void *)(dst + 4), hi);
    return _mm_cvtsi128_si32(_mm256_castsi256_si128(hi));
}
