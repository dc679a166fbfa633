/* AVX512VBMI2: byte/word compress and expand, concatenate-and-shift. */
#include <immintrin.h>

int ccopt_probe_avx512vbmi2(const unsigned char *src, unsigned char *dst);
int ccopt_probe_avx512vbmi2(const unsigned char *src, unsigned char *dst)
{
    __m512i a = _mm512_loadu_si512((const void *)src);
    __mmask64 m = _mm512_cmpgt_epi8_mask(a, _mm512_setzero_si512());
    __m512i c = _mm512_maskz_compress_epi8(m, a);
    __m512i s = _mm512_shrdv_epi32(_mm512_shldi_epi16(a, c, 3), c, a);
    _mm512_mask_compressstoreu_epi8(dst, m, s);
    return _mm_cvtsi128_si32(_mm512_castsi512_si128(_mm512_maskz_expand_epi16((__mmask32)m, s)));
}
