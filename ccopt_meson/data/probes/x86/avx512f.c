/* AVX512F: 512-bit float/integer arithmetic with opmasks, ternary logic and permutes. */
#include <immintrin.h>

int ccopt_probe_avx512f(const float *src, float *dst);
int ccopt_probe_avx512f(const float *src, float *dst)
{
    __m512 a = _mm512_loadu_ps(src);
    __mmask16 m = _mm512_cmp_ps_mask(a, _mm512_setzero_ps(), _CMP_LT_OQ);
    __m512 b = _mm512_mask_fmadd_ps(a, m, a, _mm512_set1_ps(2.0f));
    __m512i i = _mm512_ternarylogic_epi32(_mm512_castps_si512(a), _mm512_castps_si512(b),
                                          _mm512_set1_epi32(-1), 0x96);
    _mm512_storeu_ps(dst, _mm512_permutexvar_ps(i, b));
    return (int)_mm512_cmpeq_epi32_mask(i, _mm512_srli_epi32(i, 3));
}
