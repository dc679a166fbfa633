/* SSE2: packed double and 128-bit integer arithmetic. */
#include <emmintrin.h>

int ccopt_probe_sse2(const double *src, int *dst);
int ccopt_probe_sse2(const double *src, int *dst)
{
    __m128d a = _mm_loadu_pd(src);
    __m128d b = _mm_sqrt_pd(_mm_add_pd(a, a));
    __m128i i = _mm_cvttpd_epi32(_mm_mul_pd(a, b));
    i = _mm_add_epi16(_mm_sad_epu8(i, i), _mm_slli_epi32(i, 3));
    _mm_storeu_si128((__m128i *)(void *)dst, i);
    return _mm_movemask_epi8(i) + _mm_movemask_pd(b);
}
