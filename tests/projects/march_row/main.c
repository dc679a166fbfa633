/* Prints the version picked on this CPU, after running it. */
#include <stdio.h>

#include "fma.dispatch.h"
CCOPT_DISPATCH_DECLARE(fma_dispatch, double, muladd,
                       (const double *a, const double *b, const double *c, double *out, int n))
CCOPT_DISPATCH_DEFINE(fma_dispatch, double, muladd,
                      (const double *a, const double *b, const double *c, double *out, int n), (a, b, c, out, n))

int main(void)
{
    double a[64], b[64], c[64], out[64];
    for (int i = 0; i < 64; i++) {
        a[i] = i;
        b[i] = 2.0;
        c[i] = 1.0;
    }
    double last = muladd(a, b, c, out, 64);
    printf("%s %g\n", CCOPT_DISPATCH_TARGET_NAME(fma_dispatch, muladd), last);
    return last != 127.0;
}
