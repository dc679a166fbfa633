/* AVX512F_REDUCE: the AVX512F horizontal reduction helpers (sequence intrinsics). */
#include <immintrin.h>

int ccopt_probe_extra_avx512f_reduce(const float *src, int n);
int ccopt_probe_extra_avx512f_reduce(const float *src, int n)
{
    __m512 a = _mm512_loadu_ps(src);
    __m512d d = _mm512_cvtps_pd(_mm512_castps512_ps256(a));
    __m512i i = _mm512_cvttps_epi32(a);
    float f = _mm512_reduce_add_ps(a) + _mm512_reduce_mul_ps(a) + _mm512_reduce_min_ps(a);
    double g = _mm512_reduce_max_pd(d) + _mm512_mask_reduce_add_pd((__mmask8)n, d);
    int r = _mm512_reduce_and_epi32(i) ^ _mm512_reduce_or_epi32(i) ^ _mm512_reduce_max_epu32(i);
    long long q = _mm512_reduce_min_epi64(_mm512_castpd_si512(d)) + _mm512_reduce_add_epi64(_mm512_castps_si512(a));
    return r + (int)f + (int)g + (int)q;
}
