/* SSE4.1: 32-bit multiply, blendv, rounding, dot product and extract. */
#include <smmintrin.h>

int ccopt_probe_sse41(const float *src, int *dst);
int ccopt_probe_sse41(const float *src, int *dst)
{
    __m128 a = _mm_loadu_ps(src);
    __m128 b = _mm_blendv_ps(_mm_floor_ps(a), _mm_dp_ps(a, a, 0xff), a);
    __m128i i = _mm_mullo_epi32(_mm_cvtps_epi32(b), _mm_cvtepi8_epi32(_mm_castps_si128(a)));
    i = _mm_max_epi32(_mm_packus_epi32(i, i), _mm_min_epu32(i, i));
    _mm_storeu_si128((__m128i *)(void *)dst, i);
    return _mm_extract_epi32(i, 2) + _mm_testz_si128(i, i);
}
