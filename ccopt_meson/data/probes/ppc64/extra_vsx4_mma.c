/* VSX4_MMA: POWER10 Matrix-Multiply Assist accumulators (__vector_quad, xvf32ger*). */
#include <altivec.h>

int ccopt_probe_extra_vsx4_mma(float *src, float *dst);
int ccopt_probe_extra_vsx4_mma(float *src, float *dst)
{
    __vector unsigned char a = vec_xl(0, (unsigned char *)(void *)src);
    __vector unsigned char b = vec_xl(16, (unsigned char *)(void *)src);
    __vector unsigned char rows[4];
    __vector_quad acc;
    __builtin_mma_xvf32ger(&acc, a, b);
    __builtin_mma_xvf32gerpp(&acc, b, a);
    __builtin_mma_disassemble_acc(rows, &acc);
    vec_xst(rows[0], 0, (unsigned char *)(void *)dst);
    return (int)vec_extract(rows[3], 5);
}
