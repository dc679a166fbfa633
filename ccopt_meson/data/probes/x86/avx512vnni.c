/* AVX512VNNI: EVEX 8- and 16-bit dot products accumulating into 32-bit lanes. */
#include <immintrin.h>

int ccopt_probe_avx512vnni(const int *src, int *dst);
int ccopt_probe_avx512vnni(const int *src, int *dst)
{
    __m512i acc = _mm512_loadu_si512((const void *)src);
    __m512i a = _mm512_loadu_si512((const void *)(src + 16));
    __m512i s = _mm512_dpwssds_epi32(_mm512_dpbusd_epi32(acc, a, acc), a, acc);
    _mm512_storeu_si512((void *)dst, s);
    return (int)_mm512_cmpeq_epi32_mask(s, a);
}
