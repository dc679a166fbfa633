/* LZCNT: leading-zero count (ABM), which differs from BSR for a zero input. */
#include <immintrin.h>
/* clang compiles _lzcnt_u32 without -mlzcnt (as BSR plus a branch): check the macro too */
#if defined(__GNUC__) && !defined(__LZCNT__)
    #error "LZCNT is not enabled"
#endif

int ccopt_probe_lzcnt(const unsigned int *src, unsigned int *dst);
int ccopt_probe_lzcnt(const unsigned int *src, unsigned int *dst)
{
    dst[0] = _lzcnt_u32(src[0]);
#if defined(__x86_64__) || defined(_M_X64)
    dst[1] = (unsigned int)_lzcnt_u64(((unsigned long long)src[1] << 32) | src[2]);
#endif
    return (int)__lzcnt16((unsigned short)src[3]);
}
