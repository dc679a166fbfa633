/* PCLMULQDQ: 64x64 -> 128-bit carry-less multiply (CRC folding, GHASH). */
#include <wmmintrin.h>

int ccopt_probe_pclmulqdq(const unsigned long long *src, unsigned long long *dst);
int ccopt_probe_pclmulqdq(const unsigned long long *src, unsigned long long *dst)
{
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)src);
    __m128i k = _mm_set_epi64x((long long)src[3], (long long)src[2]);
    __m128i lo = _mm_clmulepi64_si128(a, k, 0x00);
    __m128i hi = _mm_clmulepi64_si128(a, k, 0x11);
    _mm_storeu_si128((__m128i *)(void *)dst, _mm_xor_si128(lo, hi));
    return _mm_cvtsi128_si32(_mm_clmulepi64_si128(lo, hi, 0x10));
}
