/* RVV: RISC-V vector extension 1.0 (strip-mined load, fused multiply-add, scalar move, store). */
#include <riscv_vector.h>
/* RVV intrinsics >= v0.11 (gcc 13+, clang 16+) carry the __riscv_ prefix; older clang had none */
#if defined(__riscv_v_intrinsic) || (defined(__clang_major__) && __clang_major__ >= 16)
    #define CCOPT_RVV_(name) __riscv_##name
#else
    #define CCOPT_RVV_(name) name
#endif

int ccopt_probe_rvv(const float *src, float *dst, int n);
int ccopt_probe_rvv(const float *src, float *dst, int n)
{
    size_t vl = CCOPT_RVV_(vsetvl_e32m1)((size_t)n);
    vfloat32m1_t a = CCOPT_RVV_(vle32_v_f32m1)(src, vl);
    vfloat32m1_t b = CCOPT_RVV_(vfmacc_vv_f32m1)(a, a, CCOPT_RVV_(vfadd_vv_f32m1)(a, a, vl), vl);
    CCOPT_RVV_(vse32_v_f32m1)(dst, b, vl);
    return (int)vl + (int)CCOPT_RVV_(vfmv_f_s_f32m1_f32)(b);
}
#undef CCOPT_RVV_
