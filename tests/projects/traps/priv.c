/* A shared library whose dispatcher is private: 'static' before CCOPT_DISPATCH_DEFINE */
#include "priv.dispatch.h"
CCOPT_DISPATCH_DECLARE(priv_dispatch, int, priv_sum, (const int *v, int n))
static CCOPT_DISPATCH_DEFINE(priv_dispatch, int, priv_sum, (const int *v, int n), (v, n))

int priv_total(const int *v, int n)
{
    return priv_sum(v, n);
}
