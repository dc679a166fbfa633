/* AES: AES-NI rounds, last rounds, key-schedule assist and inverse mix columns. */
#include <wmmintrin.h>

int ccopt_probe_aes(const unsigned char *src, unsigned char *dst);
int ccopt_probe_aes(const unsigned char *src, unsigned char *dst)
{
    __m128i block = _mm_loadu_si128((const __m128i *)(const void *)src);
    __m128i key = _mm_aeskeygenassist_si128(block, 0x1b);
    __m128i enc = _mm_aesenclast_si128(_mm_aesenc_si128(block, key), key);
    __m128i dec = _mm_aesdeclast_si128(_mm_aesdec_si128(enc, _mm_aesimc_si128(key)), key);
    _mm_storeu_si128((__m128i *)(void *)dst, dec);
    return _mm_cvtsi128_si32(enc);
}
