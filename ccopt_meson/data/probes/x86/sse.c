/* SSE: packed single-precision arithmetic, reciprocal approximation and movemask. */
#include <xmmintrin.h>

int ccopt_probe_sse(const float *src, float *dst);
int ccopt_probe_sse(const float *src, float *dst)
{
    __m128 a = _mm_loadu_ps(src);
    __m128 b = _mm_rcp_ps(_mm_add_ps(a, _mm_set1_ps(1.0f)));
    _mm_storeu_ps(dst, _mm_max_ps(_mm_mul_ps(a, b), a));
    return _mm_movemask_ps(_mm_cmplt_ps(a, b));
}
