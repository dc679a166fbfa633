/* AVX512BW: 512-bit byte and word arithmetic, shuffles and 64-bit masks. */
#include <immintrin.h>

int ccopt_probe_avx512bw(const unsigned char *src, unsigned char *dst);
int ccopt_probe_avx512bw(const unsigned char *src, unsigned char *dst)
{
    __m512i a = _mm512_loadu_si512((const void *)src);
    __m512i b = _mm512_shuffle_epi8(_mm512_adds_epu8(a, a), a);
    __mmask64 m = _mm512_cmpeq_epi8_mask(a, b);
    __m512i c = _mm512_maddubs_epi16(b, _mm512_mask_blend_epi8(m, a, b));
    _mm512_storeu_si512((void *)dst, c);
    return (int)_cvtmask64_u64(m) + (int)_mm512_cmplt_epi16_mask(a, c);
}
