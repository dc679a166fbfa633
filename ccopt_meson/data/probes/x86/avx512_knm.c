/* AVX512_KNM: 4FMAPS/4VNNIW multi-register ops and AVX512VPOPCNTDQ. */
#include <immintrin.h>

int ccopt_probe_avx512_knm(const float *src, int *dst);
int ccopt_probe_avx512_knm(const float *src, int *dst)
{
    __m128 q = _mm_loadu_ps(src);
    __m512 a = _mm512_loadu_ps(src + 4);
    __m512 f = _mm512_4fmadd_ps(a, a, a, a, a, &q);
    __m512i i = _mm512_castps_si512(f);
    __m128i *qi = (__m128i *)(void *)dst;
    i = _mm512_4dpwssd_epi32(i, i, i, i, i, qi);
    _mm512_storeu_si512((void *)dst, _mm512_popcnt_epi64(_mm512_popcnt_epi32(i)));
    return (int)_mm512_cmpeq_epi32_mask(i, i);
}
