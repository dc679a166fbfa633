/* SSSE3: byte shuffle, absolute value, alignr and horizontal integer add. */
#include <tmmintrin.h>

int ccopt_probe_ssse3(const int *src, int *dst);
int ccopt_probe_ssse3(const int *src, int *dst)
{
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)src);
    __m128i b = _mm_shuffle_epi8(a, _mm_abs_epi8(a));
    b = _mm_hadd_epi16(_mm_alignr_epi8(a, b, 5), _mm_sign_epi16(b, a));
    _mm_storeu_si128((__m128i *)(void *)dst, b);
    return _mm_cvtsi128_si32(_mm_maddubs_epi16(a, b));
}
