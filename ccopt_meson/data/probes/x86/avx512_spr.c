/* AVX512_SPR: AVX512FP16 half-precision vector arithmetic. */
#include <immintrin.h>

int ccopt_probe_avx512_spr(const unsigned short *src, unsigned short *dst);
int ccopt_probe_avx512_spr(const unsigned short *src, unsigned short *dst)
{
    __m512h a = _mm512_castsi512_ph(_mm512_loadu_si512((const void *)src));
    __m512h b = _mm512_fmadd_ph(a, a, _mm512_sqrt_ph(a));
    __m512 f = _mm512_cvtxph_ps(_mm512_castph512_ph256(b));
    _mm512_storeu_si512((void *)dst, _mm512_castph_si512(_mm512_mul_ph(a, b)));
    return (int)_mm512_cmp_ph_mask(a, b, _CMP_LT_OQ) + (int)_mm512_cmp_ps_mask(f, f, _CMP_EQ_OQ);
}
