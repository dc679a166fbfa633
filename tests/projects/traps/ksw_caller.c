/* The vendor's name is the dispatcher: its callers are unchanged */
#include <stdio.h>

#include "ksw2_extz2_sse.h"
CCOPT_DISPATCH_DECLARE(ksw2_extz2_sse, int, ksw_extz2_sse, (int x))
CCOPT_DISPATCH_DEFINE(ksw2_extz2_sse, int, ksw_extz2_sse, (int x), (x))

int main(void)
{
    printf("ksw_extz2_sse = %d (%s)\n", ksw_extz2_sse(21), CCOPT_DISPATCH_TARGET_NAME(ksw2_extz2_sse, ksw_extz2_sse));
    return ksw_extz2_sse(21) == 42 ? 0 : 1;
}
