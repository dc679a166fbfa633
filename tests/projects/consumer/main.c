/* Three dispatch headers at the top, in no particular order: each function keeps its own list. */
#include <stdio.h>
#include <string.h>

#include "third.dispatch.h"
#include "stated.dispatch.h"
#include "listed.dispatch.h"

CCOPT_DISPATCH_DECLARE(listed_dispatch, const char *, listed, (void))
CCOPT_DISPATCH_DECLARE(stated_dispatch, const char *, stated, (void))
CCOPT_DISPATCH_DECLARE(third_dispatch, const char *, third, (void))
CCOPT_DISPATCH_DEFINE(stated_dispatch, const char *, stated, (void), ())
CCOPT_DISPATCH_DEFINE(listed_dispatch, const char *, listed, (void), ())

static int check(const char *fn, const char *got, const char *picked)
{
    printf("%s: %s (picked %s)\n", fn, got, picked);
    return strcmp(got, picked) != 0;
}

int main(void)
{
    int bad = 0;
    const char *(*t)(void) = CCOPT_DISPATCH_PICK(third_dispatch, third);
    bad += check("stated", stated(), CCOPT_DISPATCH_TARGET_NAME(stated_dispatch, stated));
    bad += check("listed", listed(), CCOPT_DISPATCH_TARGET_NAME(listed_dispatch, listed));
    if (t != 0)
        bad += check("third", t(), CCOPT_DISPATCH_TARGET_NAME(third_dispatch, third));
    printf("targets: %s | %s | %s\n", CCOPT_DISPATCH_TARGETS(stated_dispatch), CCOPT_DISPATCH_TARGETS(listed_dispatch),
           CCOPT_DISPATCH_TARGETS(third_dispatch));
    return bad;
}
