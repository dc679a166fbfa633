/* AVX512_CLX: AVX512VNNI 8/16-bit dot products accumulated into 32-bit lanes. */
#include <immintrin.h>

int ccopt_probe_avx512_clx(const int *src, int *dst);
int ccopt_probe_avx512_clx(const int *src, int *dst)
{
    __m512i a = _mm512_loadu_si512((const void *)src);
    __m512i b = _mm512_dpbusd_epi32(a, a, _mm512_set1_epi8(3));
    b = _mm512_dpwssds_epi32(b, a, b);
    _mm512_storeu_si512((void *)dst, b);
    return (int)_mm512_cmpgt_epi32_mask(a, b);
}
