/* AVX512_SKX: AVX512VL (256/128-bit EVEX), AVX512BW (byte/word) and AVX512DQ (qword/fp conv). */
#include <immintrin.h>

int ccopt_probe_avx512_skx(const long long *src, double *dst);
int ccopt_probe_avx512_skx(const long long *src, double *dst)
{
    __m512i a = _mm512_loadu_si512((const void *)src);
    __m512i bw = _mm512_subs_epi8(_mm512_abs_epi8(a), _mm512_maddubs_epi16(a, a));
    __m512d dq = _mm512_cvtepi64_pd(_mm512_mullo_epi64(a, bw));
    __m256i vl = _mm256_ternarylogic_epi64(_mm512_castsi512_si256(bw),
                                           _mm256_loadu_si256((const __m256i *)(const void *)src),
                                           _mm256_set1_epi64x(3), 0xe8);
    __mmask16 m = _mm256_cmpeq_epi16_mask(vl, _mm256_setzero_si256());
    _mm512_storeu_pd(dst, _mm512_mask_range_pd(dq, (__mmask8)m, dq, dq, 2));
    return (int)m + (int)_mm512_movepi8_mask(bw) + _mm_cvtsi128_si32(_mm_cvtepi64_epi32(_mm256_castsi256_si128(vl)));
}
