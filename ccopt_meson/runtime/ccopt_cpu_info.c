/* ccopt-cpu-info: what ccopt_cpu.c detects on this machine.
 *
 *   ccopt-cpu-info          text: arch, level, usable and unusable features
 *   ccopt-cpu-info --json   {"arch": ..., "level": ..., "features": {"NAME": bool, ...},
 *                            "baseline_missing": [...]}
 *
 * Every feature of the architecture is listed, after the environment masks
 * (CCOPT_DISABLE_CPU_FEATURES / CCOPT_ENABLE_CPU_FEATURES).  Exits 0 even when
 * the baseline is missing: it reports, it does not judge.
 */
#include <stdio.h>
#include <string.h>

#include "ccopt_cpu.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: ccopt-cpu-info [--json]\n");
}

/* Print the names of one space-separated list as JSON strings (they are
 * [A-Z0-9_] only, so need no escaping). */
static void print_json_list(const char *list)
{
    const char *sep = "";
    while (*list != '\0') {
        size_t n = strcspn(list, " ");
        if (n != 0) {
            printf("%s\"%.*s\"", sep, (int)n, list);
            sep = ", ";
        }
        list += n;
        list += strspn(list, " ");
    }
}

static void print_json(void)
{
    int id, level = ccopt_cpu_level();
    const char *sep = "";
    printf("{\"arch\": \"%s\", ", ccopt_cpu_arch());
    if (level < 0)
        printf("\"level\": null, ");
    else
        printf("\"level\": \"%s\", ", ccopt_cpu_name(level));
    printf("\"features\": {");
    for (id = 0; id < ccopt_cpu_count(); ++id) {
        if (!ccopt_cpu_on_arch(id))
            continue;
        printf("%s\"%s\": %s", sep, ccopt_cpu_name(id), ccopt_cpu_have(id) ? "true" : "false");
        sep = ", ";
    }
    printf("}, \"baseline_missing\": [");
    print_json_list(ccopt_cpu_baseline_missing());
    printf("]}\n");
}

static void print_text(void)
{
    int id, level = ccopt_cpu_level();
    const char *missing = ccopt_cpu_baseline_missing();
    printf("arch: %s\n", ccopt_cpu_arch());
    printf("level: %s\n", level < 0 ? "-" : ccopt_cpu_name(level));
    printf("features:");
    for (id = 0; id < ccopt_cpu_count(); ++id)
        if (ccopt_cpu_on_arch(id) && ccopt_cpu_have(id))
            printf(" %s", ccopt_cpu_name(id));
    printf("\nunavailable:");
    for (id = 0; id < ccopt_cpu_count(); ++id)
        if (ccopt_cpu_on_arch(id) && !ccopt_cpu_have(id))
            printf(" %s", ccopt_cpu_name(id));
    printf("\nbaseline missing: %s\n", *missing != '\0' ? missing : "-");
}

int main(int argc, char **argv)
{
    int i, json = 0;
    for (i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "ccopt-cpu-info: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    (void)ccopt_cpu_init(); /* a missing baseline is reported below, not fatal here */
    if (json)
        print_json();
    else
        print_text();
    return 0;
}
