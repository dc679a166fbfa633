/* AVX512_BF16: float -> bfloat16 conversion and bfloat16 dot products. */
#include <immintrin.h>

int ccopt_probe_avx512_bf16(const float *src, float *dst);
int ccopt_probe_avx512_bf16(const float *src, float *dst)
{
    __m512 a = _mm512_loadu_ps(src);
    __m512 b = _mm512_loadu_ps(src + 16);
    __m512bh h = _mm512_cvtne2ps_pbh(a, b);
    __m256bh l = _mm512_cvtneps_pbh(a);
    __m512 d = _mm512_dpbf16_ps(a, h, h);
    _mm512_storeu_ps(dst, d);
    return (int)_mm512_cmp_ps_mask(d, b, _CMP_LT_OQ) + (int)_mm_cvtsi128_si32(_mm256_castsi256_si128((__m256i)l));
}
