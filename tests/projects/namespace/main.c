/* Prints the version the dispatcher picked and what the run-time says of each feature. */
#include <stdio.h>
#include <string.h>

#include "level.dispatch.h"
CCOPT_DISPATCH_DECLARE(level_dispatch, const char *, level, (void))
CCOPT_DISPATCH_DEFINE(level_dispatch, const char *, level, (void), ())

#define SAY(NAME) \
    printf(" %s=%d", ccopt_cpu_name(CCOPT_CPU_ID(NAME)), CCOPT_CPU_HAVE(NAME)); \
    ok = ok && strcmp(ccopt_cpu_name(CCOPT_CPU_ID(NAME)), #NAME) == 0 && \
         (CCOPT_DISPATCH_GET(level_dispatch, level, #NAME) != 0) == CCOPT_CPU_HAVE(NAME);

int main(void)
{
    int ok = 1;
    printf("picked %s have", level());
    SAY(NRECIPES) SAY(NAMES_TEXT_MAX) SAY(BASELINE_OPTION) SAY(MACHINE) SAY(MAX_FEATURE)
    SAY(H) SAY(API) SAY(TABLE_H) SAY(TABLE_DATA) SAY(CHECK_BASELINE)
    printf("\n");
    return ok && strcmp(level(), CCOPT_DISPATCH_TARGET_NAME(level_dispatch, level)) == 0 ? 0 : 1;
}
