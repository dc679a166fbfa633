/* SSE4.2: 64-bit signed compare, CRC32 and packed string compare. */
#include <nmmintrin.h>

int ccopt_probe_sse42(const long long *src, unsigned int crc);
int ccopt_probe_sse42(const long long *src, unsigned int crc)
{
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)src);
    __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(src + 2));
    __m128i g = _mm_cmpgt_epi64(a, b);
    crc = _mm_crc32_u32(crc, (unsigned int)_mm_cvtsi128_si32(g));
    crc = _mm_crc32_u8(crc, (unsigned char)_mm_cmpistri(a, b, _SIDD_CMP_EQUAL_ANY));
    return (int)crc;
}
