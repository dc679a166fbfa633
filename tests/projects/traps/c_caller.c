/* C calling a C++ kernel: nothing C++ here */
#include <stdio.h>

#include "cxx_kernel.dispatch.h"
CCOPT_DISPATCH_DECLARE(cxx_kernel_dispatch, int, sum_cxx, (const int *v, int n))
CCOPT_DISPATCH_DEFINE(cxx_kernel_dispatch, int, sum_cxx, (const int *v, int n), (v, n))

int main(void)
{
    int v[] = {1, 2, 3, 4};
    printf("sum_cxx = %d (%s)\n", sum_cxx(v, 4), CCOPT_DISPATCH_TARGET_NAME(cxx_kernel_dispatch, sum_cxx));
    return sum_cxx(v, 4) == 10 ? 0 : 1;
}
