/* BMI2: BZHI, PDEP/PEXT, MULX and the flagless shifts. */
#include <immintrin.h>
#if defined(__GNUC__) && !defined(__BMI2__)
    #error "BMI2 is not enabled"
#endif

int ccopt_probe_bmi2(const unsigned int *src, unsigned int *dst);
int ccopt_probe_bmi2(const unsigned int *src, unsigned int *dst)
{
    unsigned int x = src[0];
    dst[0] = _bzhi_u32(x, src[1] & 31) + _pdep_u32(x, 0x0f0f0f0fu) + _pext_u32(x, 0xff00ff00u);
#if defined(__x86_64__) || defined(_M_X64)
    {
        unsigned long long hi = 0;
        dst[1] = (unsigned int)_mulx_u64(x, src[2], &hi);
        return (int)hi;
    }
#else
    return (int)_pext_u32(dst[0], x);
#endif
}
