/* SSE42_ISA: SSE4.2 string compares and the CRC32C instruction alone (no POPCNT). */
#include <nmmintrin.h>

int ccopt_probe_sse42_isa(const char *src, unsigned int *dst);
int ccopt_probe_sse42_isa(const char *src, unsigned int *dst)
{
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)src);
    __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(src + 16));
    int at = _mm_cmpestri(a, 16, b, 16, _SIDD_UBYTE_OPS | _SIDD_CMP_EQUAL_ORDERED);
    dst[0] = _mm_crc32_u32(_mm_crc32_u8(dst[0], (unsigned char)src[0]), dst[1]);
    return at + _mm_cvtsi128_si32(_mm_cmpgt_epi64(a, b));
}
