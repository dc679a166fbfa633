/*@targets baseline HASWELL SWITCHES */
#include "ccopt_config.h"
#include "ccopt_dispatch.h"

/* a*b+c in a loop: FMA instructions wherever the flags allow them */
double CCOPT_FN(muladd)(const double *a, const double *b, const double *c, double *out, int n);
double CCOPT_FN(muladd)(const double *a, const double *b, const double *c, double *out, int n)
{
    for (int i = 0; i < n; i++)
        out[i] = a[i] * b[i] + c[i];
    return out[n - 1];
}
