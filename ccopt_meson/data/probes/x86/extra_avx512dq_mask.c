/* AVX512DQ_MASK: 8-bit opmask register operations (kand/kxor/knot/kshift/ktest). */
#include <immintrin.h>

int ccopt_probe_extra_avx512dq_mask(const double *src, int n);
int ccopt_probe_extra_avx512dq_mask(const double *src, int n)
{
    __m512d a = _mm512_loadu_pd(src);
    __mmask8 m = _mm512_cmp_pd_mask(a, _mm512_setzero_pd(), _CMP_GT_OQ);
    __mmask8 k = _kxor_mask8(_knot_mask8(m), _cvtu32_mask8((unsigned int)n));
    k = _kand_mask8(_kshiftli_mask8(k, 2), _kadd_mask8(m, k));
    return (int)_ktestz_mask8_u8(k, m) + (int)_kortestc_mask8_u8(m, k) + (int)_cvtmask8_u32(k);
}
