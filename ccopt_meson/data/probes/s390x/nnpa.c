/* NNPA (z16, arch14): the NNP-data-type-1 (DLFloat16) conversions of the vector facility. */
#if __ARCH__ < 14
    #error "NNPA (arch14) is not enabled"
#endif
/* clang's <vecintrin.h> has no include guard: include it only once per TU */
#ifndef __VEC_CLASS_FP_ZERO
    #include <vecintrin.h>
#endif

int ccopt_probe_nnpa(__vector signed short *half, __vector float *single);
int ccopt_probe_nnpa(__vector signed short *half, __vector float *single)
{
    __vector signed short h = half[0];
    __vector float hi = vec_extend_to_fp32_hi(h, 0), lo = vec_extend_to_fp32_lo(h, 0);
    half[1] = vec_round_from_fp32(hi, lo, 0);
    half[2] = vec_convert_to_fp16(vec_convert_from_fp16(h, 0), 0);
    single[0] = hi + lo;
    return vec_extract(half[2], 0);
}
