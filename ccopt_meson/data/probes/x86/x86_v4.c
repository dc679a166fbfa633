/* X86_V4 (x86-64-v4): AVX512 F, CD, VL, BW and DQ together. */
#include <immintrin.h>

int ccopt_probe_x86_v4(const int *src, int *dst);
int ccopt_probe_x86_v4(const int *src, int *dst)
{
    __m512i a = _mm512_loadu_si512((const void *)src);
    __m512i f = _mm512_ternarylogic_epi32(a, a, _mm512_set1_epi32(5), 0x6a);
    __m512i cd = _mm512_lzcnt_epi32(_mm512_conflict_epi32(f));
    __m512i bw = _mm512_adds_epu16(_mm512_shuffle_epi8(cd, a), a);
    __m512i dq = _mm512_xor_epi64(_mm512_mullo_epi64(bw, cd), f);
    __m256i vl = _mm256_rol_epi32(_mm512_castsi512_si256(dq), 7);
    _mm512_storeu_si512((void *)dst, dq);
    return (int)_mm512_movepi64_mask(dq) + (int)_mm256_cmpeq_epi32_mask(vl, _mm256_setzero_si256());
}
