/* POPCNT: population count on 32-bit (and 64-bit on x86_64) integers. */
#include <nmmintrin.h>

int ccopt_probe_popcnt(const unsigned int *src, int n);
int ccopt_probe_popcnt(const unsigned int *src, int n)
{
    int r = _mm_popcnt_u32(src[0] ^ (unsigned int)n);
#if defined(__x86_64__) || defined(_M_X64)
    r += (int)_mm_popcnt_u64(((unsigned long long)src[1] << 32) | src[2]);
#endif
    return r;
}
