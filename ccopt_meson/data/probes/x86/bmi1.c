/* BMI1: ANDN, BEXTR, BLSI/BLSMSK/BLSR and TZCNT. */
#include <immintrin.h>
/* clang compiles _tzcnt_u32 without -mbmi (as BSF): check the macro too */
#if defined(__GNUC__) && !defined(__BMI__)
    #error "BMI1 is not enabled"
#endif

int ccopt_probe_bmi1(const unsigned int *src, unsigned int *dst);
int ccopt_probe_bmi1(const unsigned int *src, unsigned int *dst)
{
    unsigned int x = src[0];
    dst[0] = _andn_u32(x, src[1]) + _bextr_u32(x, 3, 9) + _blsi_u32(x) + _blsmsk_u32(x);
    dst[1] = _blsr_u32(x);
    return (int)_tzcnt_u32(x);
}
