/* FMA3_ISA: fused multiply-add alone (no F16C). */
#include <immintrin.h>

int ccopt_probe_fma3_isa(const double *src, double *dst);
int ccopt_probe_fma3_isa(const double *src, double *dst)
{
    __m256d a = _mm256_loadu_pd(src);
    __m128d b = _mm_fmsub_pd(_mm_loadu_pd(src + 4), _mm_loadu_pd(src + 6), _mm256_castpd256_pd128(a));
    a = _mm256_fmadd_pd(a, a, _mm256_loadu_pd(src + 8));
    _mm256_storeu_pd(dst, _mm256_fnmadd_pd(a, a, a));
    return _mm_movemask_pd(b);
}
