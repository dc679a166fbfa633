#include <stdio.h>

#include "ccopt_config.h"
#include "k.dispatch.h"

CCOPT_DISPATCH_DECLARE(k_dispatch, int, k_version, (void))
CCOPT_DISPATCH_DEFINE(k_dispatch, int, k_version, (void), ())

int main(void)
{
    printf("baseline '%s', picked %s\n", CCOPT_WITH_CPU_BASELINE, CCOPT_DISPATCH_TARGET_NAME(k_dispatch, k_version));
    return k_version() == 1 ? 0 : 1;
}
