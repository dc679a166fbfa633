/* A third-party file, as shipped: built once per target, its function renamed by the compile args */
#include "ksw2.h"

int ksw_extz2_sse(int x)
{
    return 2 * x;
}
