/* AVX_VNNI: VEX-encoded 8- and 16-bit dot products accumulating into 32-bit lanes. */
#include <immintrin.h>

int ccopt_probe_avx_vnni(const int *src, int *dst);
int ccopt_probe_avx_vnni(const int *src, int *dst)
{
    __m256i acc = _mm256_loadu_si256((const __m256i *)(const void *)src);
    __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(src + 8));
    __m256i s = _mm256_dpwssd_avx_epi32(_mm256_dpbusd_avx_epi32(acc, a, acc), a, acc);
    __m128i t = _mm_dpbusds_avx_epi32(_mm256_castsi256_si128(s), _mm256_castsi256_si128(a), _mm256_castsi256_si128(acc));
    _mm256_storeu_si256((__m256i *)(void *)dst, s);
    return _mm_cvtsi128_si32(t);
}
