// Compiled once per target with numpy's macros; no ccopt header is included.
#include "k.dispatch.h"

#if !defined(NPY_MTARGETS_BASELINE) && !defined(NPY_MTARGETS_CURRENT)
#error "each version is built with NPY_MTARGETS_BASELINE or NPY_MTARGETS_CURRENT"
#endif
#if defined(CCOPT_TARGET) || defined(CCOPT_CONFIG_H_)
#error "numpy's protocol: no CCOPT_ macro, no forced include of ccopt_config.h"
#endif
#if !defined(NPY_HAVE_SSE2)
#error "the baseline's NPY_HAVE_ defines reach every version"
#endif

#define K_STR2(x) #x
#define K_STR(x) K_STR2(x)
#define K_CAT2(a, b) a##b
#define K_CAT(a, b) K_CAT2(a, b)

// An inline function every version defines: the linker keeps one copy (a COMDAT), the first it
// meets. Not inlined, so each version calls that one copy.
__attribute__((noinline)) inline const char *version_name() {
#ifdef NPY_MTARGETS_BASELINE
  return "BASELINE";
#else
  return K_STR(NPY_MTARGETS_CURRENT);
#endif
}

#ifdef NPY_MTARGETS_BASELINE
extern "C" const char *k_BASELINE() { return version_name(); }
#else
extern "C" const char *K_CAT(k_, NPY_MTARGETS_CURRENT)() { return version_name(); }
#endif
