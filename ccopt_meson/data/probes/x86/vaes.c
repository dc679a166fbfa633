/* VAES: AES rounds on every 128-bit lane, 256-bit (VEX) form. */
#include <immintrin.h>

int ccopt_probe_vaes(const long long *src, long long *dst);
int ccopt_probe_vaes(const long long *src, long long *dst)
{
    __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)src);
    __m256i k = _mm256_loadu_si256((const __m256i *)(const void *)(src + 4));
    __m256i e = _mm256_aesenclast_epi128(_mm256_aesenc_epi128(a, k), k);
    __m256i d = _mm256_aesdeclast_epi128(_mm256_aesdec_epi128(e, k), k);
    _mm256_storeu_si256((__m256i *)(void *)dst, d);
    return _mm_cvtsi128_si32(_mm256_castsi256_si128(e));
}
