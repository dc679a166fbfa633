/* One version per feature, each named like a macro of the C library, which the headers below define
 * (EOF is (-1)), or like an identifier of ccopt's own: every generated header must compile with them,
 * and each version must run on a CPU that has its feature.
 *
 * @targets baseline eof null bufsiz size_max int_max erange exit_failure nrecipes ccopt_target ccopt_fn
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

const char *CCOPT_FN(level)(void);

const char *CCOPT_FN(level)(void)
{
    return CCOPT_TARGET_NAME;
}
