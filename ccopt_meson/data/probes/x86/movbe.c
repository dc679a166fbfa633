/* MOVBE: byte-swapping loads and stores. */
#include <immintrin.h>
/* gcc has no MOVBE intrinsic (it emits movbe for byte swaps of memory operands): check its macro */
#if defined(__GNUC__) && !defined(__clang__) && !defined(__MOVBE__)
    #error "MOVBE is not enabled"
#endif

int ccopt_probe_movbe(const unsigned int *src, unsigned int *dst);
int ccopt_probe_movbe(const unsigned int *src, unsigned int *dst)
{
#if defined(__clang__) || defined(__INTEL_COMPILER)
    _storebe_i32(dst, _loadbe_i32(src));
#elif defined(_MSC_VER)
    _store_be_u32(dst, _load_be_u32(src));
#else
    *dst = __builtin_bswap32(*src);
#endif
    return (int)dst[0];
}
