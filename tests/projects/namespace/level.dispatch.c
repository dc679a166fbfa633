/* One version per feature, each named like one of the run-time's own identifiers: every generated
 * header must compile with them, and each version must run on a CPU that has its feature.
 *
 * @targets baseline nrecipes names_text_max baseline_option machine max_feature h api table_h table_data
 *          check_baseline
 */
#include "ccopt_config.h"
#include "ccopt_dispatch.h"

const char *CCOPT_FN(level)(void);

const char *CCOPT_FN(level)(void)
{
    return CCOPT_TARGET_NAME;
}
