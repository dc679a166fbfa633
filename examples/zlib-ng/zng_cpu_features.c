/*
 * zlib-ng's cpu_check_features(), answered by ccopt's run-time library.
 *
 * It replaces zlib-ng's cpu_features.c, arch/x86/x86_features.c and arch/arm/arm_features.c: no
 * cpuid, xgetbv or getauxval here.  zlib-ng's functable.c is used unchanged; it reads the fields
 * of struct cpu_features, and each field is true exactly when ccopt's check of the target that
 * built that field's kernel group passes (the CHECK of the group's generated dispatch header:
 * the target's features, everything they imply, and the OS state they need).  So a kernel is
 * never picked on a CPU that lacks an instruction its flags allowed, CCOPT_DISABLE_CPU_FEATURES
 * steers the choice, and a group the compiler could not build stays 0.
 */
#include <string.h>

#include "zbuild.h"
#include "cpu_features.h"
#include "ccopt_cpu.h"
#include "ccopt_dispatch.h"

#define ZNG__OR_CHECK(CHECK, TARGET, UNUSED) || (CHECK)

/* One function per group: 1 when the running CPU runs the group's target (0 when not built).
 * SRC names the group's statement file, as its generated header does (sse2.dispatch.c: sse2_dispatch). */
#define ZNG_GROUP(NAME, SRC) static int NAME(void) { return 0 CCOPT_DISPATCH_FOREACH(SRC, ZNG__OR_CHECK, 0); }

#if defined(X86_FEATURES)
#include "sse2.dispatch.h"
ZNG_GROUP(usable_sse2, sse2_dispatch)
#include "ssse3.dispatch.h"
ZNG_GROUP(usable_ssse3, ssse3_dispatch)
#include "sse41.dispatch.h"
ZNG_GROUP(usable_sse41, sse41_dispatch)
#include "sse42.dispatch.h"
ZNG_GROUP(usable_sse42, sse42_dispatch)
#include "pclmulqdq.dispatch.h"
ZNG_GROUP(usable_pclmulqdq, pclmulqdq_dispatch)
#include "avx2.dispatch.h"
ZNG_GROUP(usable_avx2, avx2_dispatch)
#include "avx512.dispatch.h"
ZNG_GROUP(usable_avx512, avx512_dispatch)
#include "avx512vnni.dispatch.h"
ZNG_GROUP(usable_avx512vnni, avx512vnni_dispatch)
#include "vpclmulqdq.dispatch.h"
ZNG_GROUP(usable_vpclmulqdq, vpclmulqdq_dispatch)
#elif defined(ARM_FEATURES)
#include "neon.dispatch.h"
ZNG_GROUP(usable_neon, neon_dispatch)
#include "crc32.dispatch.h"
ZNG_GROUP(usable_crc32, crc32_dispatch)
#endif

Z_INTERNAL void cpu_check_features(struct cpu_features *features) {
    memset(features, 0, sizeof(struct cpu_features));
    (void)ccopt_cpu_init();  /* a missing baseline feature is the application's to report */
#if defined(X86_FEATURES)
    {
        struct x86_cpu_features *f = &features->x86;
        f->has_sse2 = usable_sse2();
        f->has_ssse3 = usable_ssse3();
        f->has_sse41 = usable_sse41();
        f->has_sse42 = usable_sse42();
        f->has_pclmulqdq = usable_pclmulqdq();
        /* zlib-ng asks for AVX2 and BMI2 together: one target covers both */
        f->has_avx2 = f->has_bmi2 = usable_avx2();
        f->has_avx512_common = f->has_avx512f = f->has_avx512dq = f->has_avx512bw = f->has_avx512vl = usable_avx512();
        f->has_avx512vnni = usable_avx512vnni();
        /* functable.c picks these only when has_pclmulqdq and has_avx512_common are set too */
        f->has_vpclmulqdq = usable_vpclmulqdq();
        f->has_os_save_ymm = f->has_avx2;
        f->has_os_save_zmm = f->has_avx512_common;
    }
#elif defined(ARM_FEATURES)
    features->arm.has_neon = usable_neon();
    features->arm.has_crc32 = usable_crc32();
#endif
}
