/* ASIMD (ARMv8 Advanced SIMD): directed rounding, IEEE maxnm/minnm and float->int with rounding. */
#include <arm_neon.h>

int ccopt_probe_asimd(const float *src, float *dst);
int ccopt_probe_asimd(const float *src, float *dst)
{
    float32x4_t a = vld1q_f32(src);
    float32x4_t b = vmaxnmq_f32(vrndq_f32(a), vrndmq_f32(vld1q_f32(src + 4)));
    /* float->int after a directed rounding (VRINTN): gcc 12's AArch32 arm_neon.h has no vcvtnq_s32_f32 */
    int32x4_t i = vcvtq_s32_f32(vrndnq_f32(vminnmq_f32(a, vrndaq_f32(b))));
#ifdef __aarch64__
    i = vaddq_s32(i, vcvtnq_s32_f32(b));
    float64x2_t d = vrndnq_f64(vcvt_f64_f32(vget_low_f32(b)));
    vst1q_f64((double *)(void *)dst, vmaxnmq_f64(d, vsqrtq_f64(d)));
    i = vaddq_s32(i, vdupq_n_s32((int)vaddvq_f32(vdivq_f32(a, b))));
#endif
    vst1q_f32(dst + 4, b);
    return vgetq_lane_s32(i, 3);
}
