/* lib.c: the public function xxh3_update dispatches to accumulate's versions. */
#include "xxh.h"

#include "accumulate.dispatch.h"

CCOPT_DISPATCH_DECLARE(accumulate_dispatch, uint64_t, accumulate, (uint64_t acc, const uint32_t *data, size_t n))
CCOPT_DISPATCH_DEFINE_AS(accumulate_dispatch, uint64_t, xxh3_update, accumulate,
                         (uint64_t acc, const uint32_t *data, size_t n), (acc, data, n))

const char *xxh3_update_target(void)
{
    return CCOPT_DISPATCH_TARGET_NAME(accumulate_dispatch, accumulate);
}
