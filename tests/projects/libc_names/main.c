/* Prints the version the dispatcher picked and what the run-time says of each feature.  Every name is
 * written out, not handed through a macro of this file: a macro argument is expanded before it is passed
 * on (EOF would reach CCOPT_CPU_HAVE as (-1)); ccopt's own macros paste the names they are given. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ccopt_config.h"
#include "level.dispatch.h"
CCOPT_DISPATCH_DECLARE(level_dispatch, const char *, level, (void))
CCOPT_DISPATCH_DEFINE(level_dispatch, const char *, level, (void), ())

typedef const char *(*version_fn)(void);
static int ok = 1;

/* What the run-time, the generated header and the dispatch macros say of one feature agree. */
static void say(const char *name, int id, int have, int check, version_fn got, version_fn version)
{
    printf(" %s=%d", ccopt_cpu_name(id), have);
    ok = ok && strcmp(ccopt_cpu_name(id), name) == 0 && ccopt_cpu_id(name) == id && check == have &&
         got == (have ? version : 0) && strcmp(version(), name) == 0;
}

#define LISTED(NAME, ...) " " #NAME

int main(void)
{
    printf("picked %s have", level());
    say("EOF", CCOPT_CPU_ID(EOF), CCOPT_CPU_HAVE(EOF), CCOPT_DISPATCH_CHECK(level_dispatch, EOF),
        CCOPT_DISPATCH_GET(level_dispatch, level, "EOF"), CCOPT_DISPATCH_VERSION(level, EOF));
    say("NULL", CCOPT_CPU_ID(NULL), CCOPT_CPU_HAVE(NULL), CCOPT_DISPATCH_CHECK(level_dispatch, NULL),
        CCOPT_DISPATCH_GET(level_dispatch, level, "NULL"), CCOPT_DISPATCH_VERSION(level, NULL));
    say("BUFSIZ", CCOPT_CPU_ID(BUFSIZ), CCOPT_CPU_HAVE(BUFSIZ), CCOPT_DISPATCH_CHECK(level_dispatch, BUFSIZ),
        CCOPT_DISPATCH_GET(level_dispatch, level, "BUFSIZ"), CCOPT_DISPATCH_VERSION(level, BUFSIZ));
    say("SIZE_MAX", CCOPT_CPU_ID(SIZE_MAX), CCOPT_CPU_HAVE(SIZE_MAX), CCOPT_DISPATCH_CHECK(level_dispatch, SIZE_MAX),
        CCOPT_DISPATCH_GET(level_dispatch, level, "SIZE_MAX"), CCOPT_DISPATCH_VERSION(level, SIZE_MAX));
    say("INT_MAX", CCOPT_CPU_ID(INT_MAX), CCOPT_CPU_HAVE(INT_MAX), CCOPT_DISPATCH_CHECK(level_dispatch, INT_MAX),
        CCOPT_DISPATCH_GET(level_dispatch, level, "INT_MAX"), CCOPT_DISPATCH_VERSION(level, INT_MAX));
    say("ERANGE", CCOPT_CPU_ID(ERANGE), CCOPT_CPU_HAVE(ERANGE), CCOPT_DISPATCH_CHECK(level_dispatch, ERANGE),
        CCOPT_DISPATCH_GET(level_dispatch, level, "ERANGE"), CCOPT_DISPATCH_VERSION(level, ERANGE));
    say("EXIT_FAILURE", CCOPT_CPU_ID(EXIT_FAILURE), CCOPT_CPU_HAVE(EXIT_FAILURE),
        CCOPT_DISPATCH_CHECK(level_dispatch, EXIT_FAILURE), CCOPT_DISPATCH_GET(level_dispatch, level, "EXIT_FAILURE"),
        CCOPT_DISPATCH_VERSION(level, EXIT_FAILURE));
    say("NRECIPES", CCOPT_CPU_ID(NRECIPES), CCOPT_CPU_HAVE(NRECIPES), CCOPT_DISPATCH_CHECK(level_dispatch, NRECIPES),
        CCOPT_DISPATCH_GET(level_dispatch, level, "NRECIPES"), CCOPT_DISPATCH_VERSION(level, NRECIPES));
    say("CCOPT_TARGET", CCOPT_CPU_ID(CCOPT_TARGET), CCOPT_CPU_HAVE(CCOPT_TARGET),
        CCOPT_DISPATCH_CHECK(level_dispatch, CCOPT_TARGET), CCOPT_DISPATCH_GET(level_dispatch, level, "CCOPT_TARGET"),
        CCOPT_DISPATCH_VERSION(level, CCOPT_TARGET));
    say("CCOPT_FN", CCOPT_CPU_ID(CCOPT_FN), CCOPT_CPU_HAVE(CCOPT_FN), CCOPT_DISPATCH_CHECK(level_dispatch, CCOPT_FN),
        CCOPT_DISPATCH_GET(level_dispatch, level, "CCOPT_FN"), CCOPT_DISPATCH_VERSION(level, CCOPT_FN));
    printf("\n");
    /* the build-wide lists, made by stringizing callbacks */
    ok = ok && strcmp(CCOPT_WITH_CPU_DISPATCH_CALL(LISTED, ~) + 1, CCOPT_WITH_CPU_DISPATCH) == 0;
    ok = ok && strcmp(level(), CCOPT_DISPATCH_TARGET_NAME(level_dispatch, level)) == 0;
    ok = ok && CCOPT_DISPATCH_PICK(level_dispatch, level) != 0 &&
         CCOPT_DISPATCH_RUNS(level_dispatch) == (strcmp(level(), "BASELINE") != 0);
    return ok ? 0 : 1;
}
