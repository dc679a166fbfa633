/* AVX512_ICL: AVX512VBMI2 (concat-shift, expand), AVX512BITALG and AVX512VPOPCNTDQ. */
#include <immintrin.h>

int ccopt_probe_avx512_icl(const int *src, int *dst);
int ccopt_probe_avx512_icl(const int *src, int *dst)
{
    __m512i a = _mm512_loadu_si512((const void *)src);
    __m512i vbmi2 = _mm512_maskz_expand_epi8(0x5555555555555555ULL, _mm512_shldi_epi32(a, a, 5));
    __m512i bitalg = _mm512_popcnt_epi16(_mm512_popcnt_epi8(vbmi2));
    __m512i vpopcnt = _mm512_popcnt_epi32(_mm512_popcnt_epi64(bitalg));
    __mmask64 m = _mm512_bitshuffle_epi64_mask(vpopcnt, a);
    _mm512_storeu_si512((void *)dst, _mm512_shrdv_epi64(vpopcnt, a, bitalg));
    return (int)(m >> 3);
}
