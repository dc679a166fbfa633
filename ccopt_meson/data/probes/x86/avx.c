/* AVX: 256-bit floating-point arithmetic, permutes and blends. */
#include <immintrin.h>

int ccopt_probe_avx(const float *src, float *dst);
int ccopt_probe_avx(const float *src, float *dst)
{
    __m256 a = _mm256_loadu_ps(src);
    __m256 b = _mm256_permute_ps(_mm256_add_ps(a, a), 0x1b);
    __m256d d = _mm256_castps_pd(_mm256_blendv_ps(a, b, a));
    _mm256_storeu_ps(dst, _mm256_mul_ps(b, _mm256_castpd_ps(_mm256_sqrt_pd(d))));
    return _mm256_movemask_ps(b) + _mm256_testz_ps(a, b);
}
