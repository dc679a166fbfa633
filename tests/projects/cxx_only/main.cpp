#include <cstdio>
#include "scale.dispatch.h"

extern "C" {
CCOPT_DISPATCH_DECLARE(scale_dispatch, const char *, scale_name, ())
}

int main() {
    const char *(*fn)() = CCOPT_DISPATCH_PICK(scale_dispatch, scale_name);
    std::printf("picked %s (%s)\n", CCOPT_DISPATCH_TARGET_NAME(scale_dispatch, scale_name), fn());
    return fn ? 0 : 1;
}
