/* ns per call of step(): `call_cost dispatched CALLS` calls step() as a user does (its dispatcher: a
 * load and an indirect call), `call_cost direct CALLS` the version the dispatcher picks through a
 * pointer the caller holds (the floor: the indirect call alone).  Each call takes the last one's
 * result, so the calls run one after another.  Prints one JSON object; the figure is the best of
 * ROUNDS timings of CALLS calls, after a warm-up call (the dispatcher's first call picks, and with
 * CCOPT_TRACE=1 prints its line).  The time is the thread's CPU time: on a shared machine the wall
 * clock also counts the time the program waited for a core, which is not the call's. */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "step.h"

#define ROUNDS 5

/* The thread's CPU time (POSIX; the benchmark runs where Meson and gcc do), else the monotonic clock. */
static double now(void)
{
    struct timespec ts;
#ifdef CLOCK_THREAD_CPUTIME_ID
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
#else
    clock_gettime(CLOCK_MONOTONIC, &ts);
#endif
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static volatile int sink;

int main(int argc, char **argv)
{
    step_fn fn;
    long calls, i;
    int dispatched;
    int round, x;
    double best = 1e30;
    if (argc != 3 || (strcmp(argv[1], "dispatched") != 0 && strcmp(argv[1], "direct") != 0)
        || (calls = atol(argv[2])) < 1) {
        fprintf(stderr, "usage: call_cost dispatched|direct CALLS\n");
        return 2;
    }
    x = step(0);
    fn = step_picked();
    dispatched = strcmp(argv[1], "dispatched") == 0;
    for (round = 0; round < ROUNDS; round++) {
        double t0 = now(), ns;
        if (dispatched)
            for (i = 0; i < calls; i++) x = step(x);
        else
            for (i = 0; i < calls; i++) x = fn(x);
        ns = (now() - t0) / (double)calls * 1e9;
        if (ns < best) best = ns;
    }
    sink = x;
    printf("{\"mode\": \"%s\", \"picked\": \"%s\", \"calls\": %ld, \"ns_per_call\": %.4f}\n", argv[1],
           step_target(), calls, best);
    return 0;
}
