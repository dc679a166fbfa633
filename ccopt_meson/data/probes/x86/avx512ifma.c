/* AVX512IFMA: 52-bit integer multiply-add (big-number arithmetic). */
#include <immintrin.h>

int ccopt_probe_avx512ifma(const long long *src, long long *dst);
int ccopt_probe_avx512ifma(const long long *src, long long *dst)
{
    __m512i a = _mm512_loadu_si512((const void *)src);
    __m512i lo = _mm512_madd52lo_epu64(a, a, a);
    _mm512_storeu_si512((void *)dst, _mm512_madd52hi_epu64(lo, a, lo));
    return (int)_mm512_cmpeq_epi64_mask(a, lo);
}
