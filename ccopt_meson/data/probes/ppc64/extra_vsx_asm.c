/* VSX_ASM: inline assembly using a VSX instruction with "wa" (VSX register) operands. */
#ifndef __VSX__
    #error "VSX is not supported"
#endif
#include <altivec.h>

int ccopt_probe_extra_vsx_asm(float *src, int *dst);
int ccopt_probe_extra_vsx_asm(float *src, int *dst)
{
    __vector float a = vec_xl(0, src);
    __vector signed int r;
    __asm__ ("xvcvspsxws %x0,%x1" : "=wa" (r) : "wa" (a));
    vec_xst(r, 0, dst);
    return vec_extract(r, 0);
}
