/* SVE2: SVE2 integer halving adds, three-way XOR and widening multiplies. */
#include <arm_sve.h>

int ccopt_probe_sve2(const uint8_t *src, uint64_t *dst);
int ccopt_probe_sve2(const uint8_t *src, uint64_t *dst)
{
    svbool_t pg = svptrue_b8();
    svuint8_t a = svld1_u8(pg, src), b = svld1_u8(pg, src + svcntb());
    svuint8_t h = svhadd_u8_x(pg, a, b);
    svuint16_t w = svmullb_u16(h, a);
    svuint64_t x = sveor3_u64(svreinterpret_u64_u16(w), svreinterpret_u64_u8(a), svreinterpret_u64_u8(b));
    svst1_u64(svptrue_b64(), dst, x);
    return (int)svaddv_u8(svmatch_u8(pg, a, b), h);
}
