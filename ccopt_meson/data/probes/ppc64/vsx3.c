/* VSX3 (POWER9, ISA 3.0): absolute difference, count trailing zeros and variable-length loads. */
#ifndef __VSX__
    #error "VSX is not supported"
#endif
#include <altivec.h>

int ccopt_probe_vsx3(unsigned int *src, int n);
int ccopt_probe_vsx3(unsigned int *src, int n)
{
    __vector unsigned int a = vec_xl(0, src);
    __vector unsigned int b = vec_absd(a, vec_splats((unsigned int)n));
    __vector unsigned int c = vec_cnttz(b);
    __vector unsigned char l = vec_xl_len((unsigned char *)(void *)src, (unsigned long)n & 15);
    vec_xst(vec_rlnm(c, a, b), 0, src);
    return (int)vec_extract(c, 2) + (int)vec_first_mismatch_index(l, l);
}
