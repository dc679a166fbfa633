/* FMA3: three-operand fused multiply-add on 128/256-bit vectors. */
#include <immintrin.h>

int ccopt_probe_fma3(const float *src, double *dst);
int ccopt_probe_fma3(const float *src, double *dst)
{
    __m256 a = _mm256_loadu_ps(src);
    __m256 b = _mm256_fmadd_ps(a, a, _mm256_fnmsub_ps(a, a, a));
    __m128d d = _mm_fmsub_pd(_mm_loadu_pd(dst), _mm_set1_pd(2.0), _mm_set1_pd(1.0));
    _mm_storeu_pd(dst, d);
    return _mm256_movemask_ps(_mm256_fmaddsub_ps(a, b, a));
}
