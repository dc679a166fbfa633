/* AVX512_CNL: AVX512IFMA 52-bit integer multiply-add and AVX512VBMI byte permutes. */
#include <immintrin.h>

int ccopt_probe_avx512_cnl(const long long *src, long long *dst);
int ccopt_probe_avx512_cnl(const long long *src, long long *dst)
{
    __m512i a = _mm512_loadu_si512((const void *)src);
    __m512i ifma = _mm512_madd52hi_epu64(_mm512_madd52lo_epu64(a, a, a), a, a);
    __m512i vbmi = _mm512_permutex2var_epi8(ifma, a, _mm512_multishift_epi64_epi8(a, ifma));
    _mm512_storeu_si512((void *)dst, _mm512_permutexvar_epi8(a, vbmi));
    return (int)_mm512_cmpeq_epi64_mask(ifma, vbmi);
}
