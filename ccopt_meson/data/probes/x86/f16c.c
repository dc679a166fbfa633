/* F16C: conversions between half and single precision. */
#include <immintrin.h>

int ccopt_probe_f16c(const float *src, unsigned short *dst);
int ccopt_probe_f16c(const float *src, unsigned short *dst)
{
    __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src), _MM_FROUND_TO_NEAREST_INT);
    __m128 f = _mm_cvtph_ps(_mm_cvtps_ph(_mm_loadu_ps(src + 8), 0));
    _mm_storeu_si128((__m128i *)(void *)dst, h);
    return _mm256_movemask_ps(_mm256_cvtph_ps(h)) + _mm_movemask_ps(f);
}
