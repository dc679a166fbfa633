/* AVX512BITALG: byte and word population counts and bit shuffles into masks. */
#include <immintrin.h>

int ccopt_probe_avx512bitalg(const unsigned char *src, unsigned char *dst);
int ccopt_probe_avx512bitalg(const unsigned char *src, unsigned char *dst)
{
    __m512i a = _mm512_loadu_si512((const void *)src);
    __m512i c = _mm512_add_epi16(_mm512_popcnt_epi16(a), _mm512_popcnt_epi8(a));
    __mmask64 m = _mm512_bitshuffle_epi64_mask(a, c);
    _mm512_storeu_si512((void *)dst, c);
    return (int)_cvtmask64_u64(m);
}
