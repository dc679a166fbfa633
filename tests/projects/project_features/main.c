/* The project's own ADX feature is probed, built and detected; #carry and #simd_test expand. */
#include <stdio.h>
#include <string.h>

#include "add.dispatch.h"
CCOPT_DISPATCH_DECLARE(add_dispatch, unsigned int, add2, (const unsigned int *a, unsigned int *sum))
CCOPT_DISPATCH_DEFINE(add_dispatch, unsigned int, add2, (const unsigned int *a, unsigned int *sum), (a, sum))

const char *simd_name(void);
const char *simd_version(void);

int main(void)
{
    const unsigned int a[4] = {0xffffffffu, 1, 1, 2};
    unsigned int sum[2];
    const char *want = !CCOPT_CPU_HAVE(ADX) ? "BASELINE" : CCOPT_CPU_HAVE(BMI2) ? "BMI2__ADX" : "ADX";
    printf("add2: %s (ADX %d), simd: %s\n", CCOPT_DISPATCH_TARGET_NAME(add_dispatch, add2), CCOPT_CPU_HAVE(ADX),
           simd_version());
    if (add2(a, sum) != 4 || sum[0] != 0 || strcmp(CCOPT_DISPATCH_TARGET_NAME(add_dispatch, add2), want) != 0)
        return 1;
    return strcmp(simd_name(), "simd") != 0;
}
