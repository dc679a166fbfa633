/* The dispatcher, in a file of its own as a library defines it, and the picked version for the floor. */
#include "step.h"

#include "step.dispatch.h"

CCOPT_DISPATCH_DECLARE(step_dispatch, int, step, (int x))
CCOPT_DISPATCH_DEFINE(step_dispatch, int, step, (int x), (x))
step_fn step_picked(void) { return CCOPT_DISPATCH_PICK(step_dispatch, step); }
const char *step_target(void) { return CCOPT_DISPATCH_TARGET_NAME(step_dispatch, step); }
