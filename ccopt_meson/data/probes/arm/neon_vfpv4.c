/* NEON_VFPV4: fused multiply-add/subtract on Advanced SIMD vectors. */
#include <arm_neon.h>

int ccopt_probe_neon_vfpv4(const float *src, float *dst);
int ccopt_probe_neon_vfpv4(const float *src, float *dst)
{
    float32x4_t a = vld1q_f32(src);
    float32x4_t b = vfmaq_f32(a, a, vld1q_f32(src + 4));
    float32x2_t c = vfms_f32(vget_low_f32(a), vget_high_f32(b), vget_low_f32(b));
#ifdef __aarch64__
    vst1q_f64((double *)(void *)dst, vfmaq_f64(vdupq_n_f64(1.0), vcvt_f64_f32(c), vdupq_n_f64(2.0)));
#endif
    vst1q_f32(dst + 4, b);
    return (int)vget_lane_f32(c, 1);
}
