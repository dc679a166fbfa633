/* AVX512_KNL: AVX512ER exp2/reciprocal approximations and AVX512PF gather prefetch. */
#include <immintrin.h>

int ccopt_probe_avx512_knl(const double *src, int *idx);
int ccopt_probe_avx512_knl(const double *src, int *idx)
{
    __m512d a = _mm512_loadu_pd(src);
    __m512 b = _mm512_rsqrt28_ps(_mm512_castpd_ps(_mm512_exp2a23_pd(a)));
    __m512i vi = _mm512_loadu_si512((const void *)idx);
    _mm512_prefetch_i32gather_ps(vi, (const void *)src, 4, _MM_HINT_T0);
    return (int)_mm512_cmpeq_epi32_mask(_mm512_castps_si512(_mm512_rcp28_ps(b)), vi);
}
