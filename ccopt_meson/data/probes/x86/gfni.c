/* GFNI: Galois-field byte multiply and affine transforms, 128-bit (SSE) forms. */
#include <immintrin.h>

int ccopt_probe_gfni(const unsigned char *src, unsigned char *dst);
int ccopt_probe_gfni(const unsigned char *src, unsigned char *dst)
{
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)src);
    __m128i m = _mm_set1_epi64x(0x0102040810204080LL);
    __m128i x = _mm_gf2p8affine_epi64_epi8(_mm_gf2p8mul_epi8(a, a), m, 0x63);
    _mm_storeu_si128((__m128i *)(void *)dst, _mm_gf2p8affineinv_epi64_epi8(x, m, 0));
    return _mm_cvtsi128_si32(x);
}
