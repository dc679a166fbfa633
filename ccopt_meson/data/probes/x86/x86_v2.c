/* X86_V2 (x86-64-v2): SSE4.2 + POPCNT + CMPXCHG16B + LAHF/SAHF in 64-bit mode. */
#include <nmmintrin.h>
#if defined(__GNUC__) && !defined(__GCC_HAVE_SYNC_COMPARE_AND_SWAP_16)
    #error "CMPXCHG16B (-mcx16) is not enabled"
#endif
#if defined(__GNUC__) && !defined(__LAHF_SAHF__)
    #error "LAHF/SAHF (-msahf) is not enabled"
#endif

int ccopt_probe_x86_v2(long long *src, int n);
int ccopt_probe_x86_v2(long long *src, int n)
{
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)src);
    int r = (int)_mm_popcnt_u32((unsigned int)n) + _mm_cvtsi128_si32(_mm_cmpgt_epi64(a, a));
#if defined(__GNUC__)
    __extension__ unsigned __int128 *p = __extension__ (unsigned __int128 *)(void *)src;
    __extension__ unsigned __int128 old = *p;
    r += (int)__sync_bool_compare_and_swap(p, old, old + (unsigned)n);
#endif
    return r;
}
