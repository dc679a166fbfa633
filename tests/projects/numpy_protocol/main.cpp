#include <cstdio>
#include <cstring>

#include "k.dispatch.h"  // defines NPY__MTARGETS_EXPAND too, as the fork's headers do

extern "C" const char *k_BASELINE();
extern "C" const char *k_SSE41();
extern "C" const char *k_AVX2();

static int failures = 0;
static void expect(const char *what, const char *got, const char *want) {
  std::printf("%s: %s\n", what, got);
  if (std::strcmp(got, want) != 0) {
    std::printf("  expected %s\n", want);
    failures++;
  }
}

#define TEST_ONE(F) (std::strcmp(#F, "") != 0)
#define LIST(ok, T, ...) std::strcat(listed, ok ? #T " " : "?");

int main() {
  // numpy's per-source header: the targets, highest first, each with its run-time test
  char listed[64] = "";
  NPY_MTARGETS_CONF_DISPATCH(TEST_ONE, LIST, 0)
  expect("dispatch targets", listed, "AVX2 SSE41 ");
  // Baseline first, then ascending: every version calls the baseline's copy of the inline function.
  expect("baseline version", k_BASELINE(), "BASELINE");
  expect("SSE41 version", k_SSE41(), "BASELINE");
  expect("AVX2 version", k_AVX2(), "BASELINE");
  return failures != 0;
}
