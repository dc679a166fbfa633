/* AVX512BW_MASK: 32/64-bit opmask register operations (kand/kor/knot/kshift/kortest). */
#include <immintrin.h>

int ccopt_probe_extra_avx512bw_mask(const char *src, int n);
int ccopt_probe_extra_avx512bw_mask(const char *src, int n)
{
    __m512i a = _mm512_loadu_si512((const void *)src);
    __mmask64 m = _mm512_cmpgt_epi8_mask(a, _mm512_set1_epi8((char)n));
    __mmask32 h = _mm512_cmpeq_epi16_mask(a, _mm512_setzero_si512());
    m = _kandn_mask64(_knot_mask64(m), _kshiftli_mask64(m, 3));
    h = _kxnor_mask32(_kor_mask32(h, _cvtu32_mask32((unsigned int)n)), _kshiftri_mask32(h, 1));
    return (int)_kortestz_mask64_u8(m, m) + (int)_cvtmask32_u32(h) + (int)_cvtmask64_u64(_kadd_mask64(m, m));
}
