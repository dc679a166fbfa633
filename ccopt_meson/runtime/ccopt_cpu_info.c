/* ccopt-cpu-info: what ccopt_cpu.c detects on this machine.
 *
 *   ccopt-cpu-info          text: arch, level, usable and unusable features
 *   ccopt-cpu-info --json   {"arch": ..., "level": ..., "features": {"NAME": bool, ...},
 *                            "baseline_missing": [...]}
 *   ccopt-cpu-info --run-as TARGET PROGRAM [ARGS...]
 *                           run PROGRAM as if this CPU had only TARGET (AVX2, X86_V3, FMA3__AVX2,
 *                           BASELINE) on top of the baseline, through CCOPT_ENABLE_CPU_FEATURES /
 *                           CCOPT_DISABLE_CPU_FEATURES; exit 77 (Meson's "skipped") when it lacks TARGET
 *
 * Every feature of the architecture is listed, after the environment masks
 * (CCOPT_DISABLE_CPU_FEATURES / CCOPT_ENABLE_CPU_FEATURES).  Exits 0 even when
 * the baseline is missing: it reports, it does not judge.
 */
#ifndef _POSIX_C_SOURCE /* a unity build's earlier source may have chosen (ccopt_cpu.c: _GNU_SOURCE) */
#define _POSIX_C_SOURCE 200112L
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#include <process.h>
#else
#include <unistd.h>
#endif

#include "ccopt_cpu.h"

#define SKIPPED 77 /* Meson's and automake's exit code for a skipped test */

static void usage(FILE *out)
{
    fprintf(out, "usage: ccopt-cpu-info [--json]\n       ccopt-cpu-info --run-as TARGET PROGRAM [ARGS...]\n");
}

static int set_env(const char *name, const char *value)
{
#ifdef _WIN32
    return _putenv_s(name, value == NULL ? "" : value);
#else
    return value == NULL ? unsetenv(name) : setenv(name, value, 1);
#endif
}

/* The features of a target name ("FMA3__AVX2" is FMA3 and AVX2) into `list`, space-separated;
 * 0 when every one is a known feature this CPU has, else 1 after saying which one is not. */
static int target_features(const char *target, char *list, size_t len)
{
    char name[64];
    const char *p = target;
    list[0] = '\0';
    while (*p != '\0') {
        size_t n = strcspn(p, "_");
        int id;
        while (p[n] == '_' && p[n + 1] != '_' && p[n + 1] != '\0') /* X86_V3: one '_' is part of the name */
            n += 1 + strcspn(p + n + 1, "_");
        if (n == 0 || n >= sizeof name || strlen(list) + n + 2 > len) {
            fprintf(stderr, "ccopt-cpu-info: '%s' is not a target name\n", target);
            return 2;
        }
        memcpy(name, p, n);
        name[n] = '\0';
        id = ccopt_cpu_id(name);
        if (id < 0 || !ccopt_cpu_on_arch(id)) {
            fprintf(stderr, "ccopt-cpu-info: %s is not a CPU feature of %s\n", name, ccopt_cpu_arch());
            return 2;
        }
        if (!ccopt_cpu_have(id)) {
            printf("ccopt-cpu-info: this CPU lacks %s: skipped\n", name);
            return SKIPPED;
        }
        if (list[0] != '\0')
            strcat(list, " ");
        strcat(list, name);
        p += n;
        while (*p == '_')
            p++;
    }
    return 0;
}

#ifdef _WIN32
/* One argument as the C runtime's command-line parser (CommandLineToArgvW's rules) reads it back:
 * _spawnvp joins argv with spaces and quotes nothing, so "a b" would arrive as two arguments.
 * Quoted when empty or holding blanks or quotes; backslashes are doubled only before a quote.
 * https://learn.microsoft.com/en-us/cpp/c-language/parsing-c-command-line-arguments */
static char *quote_arg(const char *arg)
{
    size_t n = strlen(arg), i, k = 0, slashes = 0;
    char *out;
    if (n != 0 && strpbrk(arg, " \t\n\v\"") == NULL)
        return (char *)arg;
    out = (char *)malloc(2 * n + 3);
    if (out == NULL)
        return NULL;
    out[k++] = '"';
    for (i = 0; i <= n; ++i) {
        if (arg[i] == '\\') {
            slashes++;
            continue;
        }
        if (arg[i] == '"' || arg[i] == '\0') /* a quote, or the closing one: double the backslashes */
            slashes *= 2;
        while (slashes > 0) {
            out[k++] = '\\';
            slashes--;
        }
        if (arg[i] == '"')
            out[k++] = '\\';
        if (arg[i] != '\0')
            out[k++] = arg[i];
    }
    out[k++] = '"';
    out[k] = '\0';
    return out;
}

/* A program _spawnvp would hand to cmd.exe: a batch file (.bat, .cmd), or a name without an extension,
 * which _spawnvp completes with .com, .exe, .bat or .cmd.  cmd.exe parses the whole command line again, so
 * & | < > ^ inside an argument run as commands whatever quoting the C runtime's rules give it. */
static int batch_or_unknown(const char *prog)
{
    const char *base = prog, *p, *dot;
    for (p = prog; *p != '\0'; ++p)
        if (*p == '/' || *p == '\\' || *p == ':')
            base = p + 1;
    dot = strrchr(base, '.');
    return dot == NULL || dot[1] == '\0' || _stricmp(dot, ".bat") == 0 || _stricmp(dot, ".cmd") == 0;
}

static int spawn(char **argv)
{
    int argc = 0, i;
    char **quoted;
    while (argv[argc] != NULL)
        argc++;
    quoted = (char **)malloc(((size_t)argc + 1) * sizeof *quoted);
    if (quoted == NULL)
        return -1;
    for (i = 0; i < argc; ++i)
        if ((quoted[i] = quote_arg(argv[i])) == NULL)
            return -1;
    quoted[argc] = NULL;
    return (int)_spawnvp(_P_WAIT, argv[0], (const char *const *)quoted);
}
#endif

/* Run argv[0] with only `target`'s features (and the baseline) left to the dispatchers. */
static int run_as(const char *target, char **argv)
{
    char list[512];
    int rc;
    (void)ccopt_cpu_init();
    if (strcmp(target, "BASELINE") == 0)
        strcpy(list, target); /* the baseline alone: each dispatcher falls back to its baseline version */
    else if ((rc = target_features(target, list, sizeof list)) != 0)
        return rc;
    rc = set_env("CCOPT_DISABLE_CPU_FEATURES", NULL) | set_env("CCOPT_ENABLE_CPU_FEATURES", list);
    if (rc != 0) {
        fprintf(stderr, "ccopt-cpu-info: cannot set the environment\n");
        return 2;
    }
    fflush(stdout);
#ifdef _WIN32
    if (batch_or_unknown(argv[0])) {
        fprintf(stderr, "ccopt-cpu-info: --run-as runs programs only (NAME.exe): %s would run through cmd.exe, "
                "which reads & | < > ^ in its arguments as commands\n", argv[0]);
        return 2;
    }
    rc = spawn(argv);
    if (rc != -1)
        return rc;
#else
    execvp(argv[0], argv);
#endif
    fprintf(stderr, "ccopt-cpu-info: cannot run %s\n", argv[0]);
    return 127;
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
    if (argc >= 4 && strcmp(argv[1], "--run-as") == 0)
        return run_as(argv[2], argv + 3);
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
