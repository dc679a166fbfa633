// C++ calling a C kernel: no extern "C" here, the generated header gives the versions C linkage
#include <cstdio>

#include "c_kernel.dispatch.h"
CCOPT_DISPATCH_DECLARE(c_kernel_dispatch, int, sum_c, (const int *v, int n))
CCOPT_DISPATCH_DEFINE(c_kernel_dispatch, int, sum_c, (const int *v, int n), (v, n))

int main()
{
    int v[] = {1, 2, 3, 4};
    std::printf("sum_c = %d (%s)\n", sum_c(v, 4), CCOPT_DISPATCH_TARGET_NAME(c_kernel_dispatch, sum_c));
    return sum_c(v, 4) == 10 ? 0 : 1;
}
