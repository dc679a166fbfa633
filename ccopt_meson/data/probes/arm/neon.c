/* NEON: 128-bit single-precision and integer Advanced SIMD arithmetic. */
#include <arm_neon.h>

int ccopt_probe_neon(const float *src, float *dst);
int ccopt_probe_neon(const float *src, float *dst)
{
    float32x4_t a = vld1q_f32(src);
    float32x4_t b = vmlaq_f32(vmulq_f32(a, a), a, vdupq_n_f32(2.0f));
    int32x4_t i = vaddq_s32(vcvtq_s32_f32(b), vreinterpretq_s32_f32(a));
    vst1q_f32(dst, b);
#ifdef __aarch64__
    vst1q_f64((double *)(void *)dst, vmulq_f64(vcvt_f64_f32(vget_low_f32(a)), vdupq_n_f64(3.0)));
#endif
    return vgetq_lane_s32(i, 1) + (int)vget_lane_u32(vreinterpret_u32_s32(vget_low_s32(i)), 0);
}
