/* Prints the version the dispatcher picked; fails when it computes a wrong sum. */
#include <stdio.h>

#include "sum.dispatch.h"
CCOPT_DISPATCH_DECLARE(sum_dispatch, unsigned long, sum_bytes, (const unsigned char *p, size_t n))
CCOPT_DISPATCH_DEFINE(sum_dispatch, unsigned long, sum_bytes, (const unsigned char *p, size_t n), (p, n))

int main(void)
{
    static unsigned char data[1000];
    unsigned long want = 0;
    size_t i;
    for (i = 0; i < sizeof data; ++i) {
        data[i] = (unsigned char)(i * 7 + 3);
        want += data[i];
    }
    printf("picked %s\n", CCOPT_DISPATCH_TARGET_NAME(sum_dispatch, sum_bytes));
    return sum_bytes(data, sizeof data) == want ? 0 : 1;
}
