/* SSE3: horizontal add, add-subtract and duplicate moves. */
#include <pmmintrin.h>

int ccopt_probe_sse3(const float *src, float *dst);
int ccopt_probe_sse3(const float *src, float *dst)
{
    __m128 a = _mm_loadu_ps(src);
    __m128 b = _mm_hadd_ps(a, _mm_movehdup_ps(a));
    __m128d d = _mm_loaddup_pd((const double *)(const void *)(src + 4));
    _mm_storeu_ps(dst, _mm_addsub_ps(b, a));
    return _mm_movemask_ps(b) + _mm_movemask_pd(_mm_hsub_pd(d, d));
}
