/* @targets baseline avx2 asimd */
#include <cstddef>
#include "ccopt_config.h"
#include "ccopt_dispatch.h"

extern "C" const char *CCOPT_FN(scale_name)() {
#ifdef CCOPT_HAVE_AVX2
    return "avx2";
#else
    return "baseline";
#endif
}
