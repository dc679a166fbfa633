/* XOP (AMD): integer multiply-accumulate, rotates and byte permutes. */
/* MSVC declares the AMD intrinsics in ammintrin.h; clang-cl defines _MSC_VER too, but its ammintrin.h
 * has only SSE4a, and its x86intrin.h has them once the flag defines the feature's macro */
#if defined(_MSC_VER) && !defined(__clang__)
    #include <ammintrin.h>
#else
    #include <x86intrin.h>
#endif

int ccopt_probe_xop(const int *src, int *dst);
int ccopt_probe_xop(const int *src, int *dst)
{
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)src);
    __m128i b = _mm_macc_epi32(a, a, _mm_roti_epi32(a, 7));
    b = _mm_perm_epi8(a, b, _mm_haddq_epi32(b));
    _mm_storeu_si128((__m128i *)(void *)dst, b);
    return _mm_cvtsi128_si32(_mm_comlt_epi32(a, b));
}
