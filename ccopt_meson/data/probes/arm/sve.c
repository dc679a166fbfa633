/* SVE: scalable vectors with predication, vector-length queries and reductions. */
#include <arm_sve.h>

int ccopt_probe_sve(const float *src, float *dst, int n);
int ccopt_probe_sve(const float *src, float *dst, int n)
{
    svbool_t pg = svwhilelt_b32_s32(0, n);
    svfloat32_t a = svld1_f32(pg, src);
    svfloat32_t b = svmla_f32_x(pg, svadd_f32_z(pg, a, a), a, svdup_n_f32(2.0f));
    svst1_f32(pg, dst, b);
    return (int)svaddv_f32(pg, b) + (int)svcntw() + (int)svcntp_b32(pg, svcmplt_f32(pg, a, b));
}
