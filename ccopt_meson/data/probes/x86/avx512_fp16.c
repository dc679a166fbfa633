/* AVX512_FP16: arithmetic on 32 half-precision floats per register. */
#include <immintrin.h>

int ccopt_probe_avx512_fp16(const _Float16 *src, _Float16 *dst);
int ccopt_probe_avx512_fp16(const _Float16 *src, _Float16 *dst)
{
    __m512h a = _mm512_loadu_ph(src);
    __m512h b = _mm512_fmadd_ph(a, a, _mm512_add_ph(a, a));
    _mm512_storeu_ph(dst, _mm512_sqrt_ph(b));
    return (int)_mm512_cmp_ph_mask(a, b, _CMP_LT_OQ);
}
