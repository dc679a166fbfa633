/* AVX512DQ: 64-bit integer multiply, int64 <-> double conversions, float classification. */
#include <immintrin.h>

int ccopt_probe_avx512dq(const long long *src, double *dst);
int ccopt_probe_avx512dq(const long long *src, double *dst)
{
    __m512i a = _mm512_loadu_si512((const void *)src);
    __m512d d = _mm512_cvtepi64_pd(_mm512_mullo_epi64(a, a));
    __mmask8 m = _mm512_fpclass_pd_mask(d, 0x81);
    _mm512_storeu_pd(dst, _mm512_and_pd(d, _mm512_cvtepi64_pd(a)));
    return (int)m + _mm_cvtsi128_si32(_mm512_extracti64x2_epi64(a, 1));
}
