/* ccopt_cpu.c: runtime CPU feature detection, walking ccopt_cpu_table.h.
 *
 * Nothing here names a feature: the generated table gives, for the machine
 * this file is compiled for, each feature's detection recipe and the closure
 * of its implications.  See ccopt_cpu.h for the interface.
 */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* syscall() under -std=c99 */
#endif
#if defined(_MSC_VER) && !defined(_CRT_SECURE_NO_WARNINGS)
#define _CRT_SECURE_NO_WARNINGS /* getenv() and fopen() are fine here */
#endif

#define CCOPT_CPU_TABLE_DATA
#include "ccopt_cpu.h"
/* The table's data part has a guard of its own: in a unity build another source may have included
 * ccopt_cpu.h (and the table's public part) before this file defined CCOPT_CPU_TABLE_DATA. */
#include "ccopt_cpu_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ backends */

#if CCOPT_CPU_USES_CPUID && (defined(__GNUC__) || defined(_MSC_VER))
#define CCOPT__CPUID 1
#if defined(_MSC_VER)
#include <intrin.h>
#include <immintrin.h>
#else
#include <cpuid.h>
#endif
#else
#define CCOPT__CPUID 0
#endif

#if CCOPT_CPU_USES_AUXV && defined(__linux__)
#define CCOPT__AUXV 1
#define CCOPT__GETAUXVAL 0
#if !defined(CCOPT_CPU_NO_GETAUXVAL)
#if defined(__has_include)
#if __has_include(<sys/auxv.h>)
#undef CCOPT__GETAUXVAL
#define CCOPT__GETAUXVAL 1
#endif
#elif defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 16))
#undef CCOPT__GETAUXVAL
#define CCOPT__GETAUXVAL 1 /* getauxval() is in glibc since 2.16 */
#endif
#endif
#if CCOPT__GETAUXVAL
#include <sys/auxv.h>
#endif
#else
#define CCOPT__AUXV 0
#endif

#if defined(__APPLE__) && (CCOPT_CPU_USES_SYSCTL || CCOPT__CPUID)
#define CCOPT__SYSCTL 1
#include <sys/types.h>
#include <sys/sysctl.h>
#else
#define CCOPT__SYSCTL 0
#endif

#if CCOPT_CPU_USES_WIN_PF && defined(_WIN32)
#define CCOPT__WIN_PF 1
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#else
#define CCOPT__WIN_PF 0
#endif

/* Linux hands out large XSTATE components (AMX tile data) only to processes
 * that ask: until arch_prctl(ARCH_REQ_XCOMP_PERM) succeeds, the first tile
 * instruction kills the process although CPUID and XCR0 report the feature.
 * Once granted, the kernel sizes every signal frame of the process for that
 * state, and a host program's small sigaltstack() (8 KiB) fails with ENOMEM.
 * So the request is made lazily, by the first ccopt_cpu_have() of a feature
 * that needs the state (a dispatcher with an AMX version, ccopt_cpu_features_text()),
 * never by ccopt_cpu_init(): a library without AMX code changes nothing in its host.
 * Other systems enable such state for every process. */
#if CCOPT_CPU_USES_XCOMP_PERM && CCOPT__CPUID && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#define CCOPT__XCOMP_PERM 1
#define CCOPT__ARCH_REQ_XCOMP_PERM 0x1023 /* <asm/prctl.h>, Linux 5.16 */
#if !defined(__cplusplus)
/* <unistd.h> declares it only under _GNU_SOURCE (or the default feature set), which a unity build, or a
 * parent compiling this file in one of its own targets, may have fixed otherwise before this file's first
 * line; glibc's and musl's declarations are this one.  C++ compilers define _GNU_SOURCE themselves. */
long syscall(long number, ...);
#endif
static int ccopt__xcomp_perm(int component)
{
#if defined(SYS_arch_prctl)
    return syscall(SYS_arch_prctl, CCOPT__ARCH_REQ_XCOMP_PERM, (unsigned long)component) == 0;
#else
    (void)component;
    return 0;
#endif
}
#else
#define CCOPT__XCOMP_PERM 0
#endif

#if CCOPT__SYSCTL
static int ccopt__sysctl(const char *name)
{
    int value = 0;
    size_t size = sizeof value;
    if (sysctlbyname(name, &value, &size, NULL, 0) != 0)
        return 0;
    return value != 0;
}
#endif

#if CCOPT__CPUID
static void ccopt__cpuid(unsigned int leaf, unsigned int subleaf, unsigned int out[4])
{
#if defined(_MSC_VER)
    int r[4];
    __cpuidex(r, (int)leaf, (int)subleaf);
    out[0] = (unsigned int)r[0];
    out[1] = (unsigned int)r[1];
    out[2] = (unsigned int)r[2];
    out[3] = (unsigned int)r[3];
#else
    unsigned int a = 0, b = 0, c = 0, d = 0;
    __cpuid_count(leaf, subleaf, a, b, c, d);
    out[0] = a;
    out[1] = b;
    out[2] = c;
    out[3] = d;
#endif
}

/* The highest leaf of the range of `base` (0 or 0x80000000), 0 without cpuid. */
static unsigned int ccopt__cpuid_max(unsigned int base)
{
#if defined(_MSC_VER)
    unsigned int r[4];
    ccopt__cpuid(base, 0, r);
    return r[0];
#else
    /* also checks, on i386, that the cpuid instruction exists at all */
    return (unsigned int)__get_cpuid_max(base, NULL);
#endif
}

static unsigned long long ccopt__xgetbv(void)
{
#if defined(_MSC_VER)
    return (unsigned long long)_xgetbv(0);
#else
    unsigned int eax = 0, edx = 0;
    /* the xgetbv encoding, for assemblers older than the mnemonic */
    __asm__ __volatile__(".byte 0x0f, 0x01, 0xd0" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((unsigned long long)edx << 32) | eax;
#endif
}

/* Fill regs[i] for every leaf of the table; returns XCR0, or 0 when the OS
 * does not use xsave (then no AVX state is saved and AVX must not be used). */
static unsigned long long ccopt__x86_read(unsigned int regs[][4])
{
    unsigned int max_basic = ccopt__cpuid_max(0), max_ext = 0, leaf1[4];
    unsigned long long xcr0 = 0;
    int i;
    if (max_basic != 0)
        max_ext = ccopt__cpuid_max(0x80000000u);
    for (i = 0; i < CCOPT_CPU_NLEAVES; ++i) {
        unsigned int leaf = (unsigned int)ccopt_cpu_leaves[i].leaf;
        unsigned int top = (leaf & 0x80000000u) ? max_ext : max_basic;
        regs[i][0] = regs[i][1] = regs[i][2] = regs[i][3] = 0;
        /* a leaf above the maximum returns another leaf's data, not zeros */
        if (max_basic != 0 && leaf <= top && (top & 0x80000000u) == (leaf & 0x80000000u))
            ccopt__cpuid(leaf, (unsigned int)ccopt_cpu_leaves[i].subleaf, regs[i]);
    }
    if (max_basic >= 1) {
        ccopt__cpuid(1, 0, leaf1);
        if ((leaf1[2] >> 27) & 1u) /* OSXSAVE: the OS enabled xgetbv */
            xcr0 = ccopt__xgetbv();
    }
#if defined(__APPLE__)
    /* macOS enables the AVX-512 state (opmask, ZMM) lazily on first use, so
     * XCR0 lacks it until then; the kernel advertises support by sysctl. */
    if ((xcr0 & 0xe0u) != 0xe0u && ccopt__sysctl("hw.optional.avx512f"))
        xcr0 |= 0xe0u;
#endif
    return xcr0;
}

static int ccopt__cpuid_ok(const ccopt_cpu_recipe *r, unsigned int regs[][4], unsigned long long xcr0)
{
    int j;
    if ((xcr0 & r->xcr0) != r->xcr0)
        return 0;
    for (j = 0; j < r->cpuid_count; ++j) {
        const ccopt_cpu_cpuid_bit *b = &ccopt_cpu_cpuid_bits[r->cpuid_first + j];
        if (!((regs[b->leaf][b->reg] >> b->bit) & 1u))
            return 0;
    }
    return 1;
}
#endif /* CCOPT__CPUID */

#if CCOPT__AUXV
/* Linux ABI values, the same on every architecture. */
#define CCOPT__AT_NULL 0UL
#define CCOPT__AT_HWCAP 16UL
#define CCOPT__AT_HWCAP2 26UL

static void ccopt__auxv(unsigned long long *hwcap, unsigned long long *hwcap2)
{
    unsigned long pair[2]; /* (type, value): the native word size of the process */
    FILE *fh;
    *hwcap = *hwcap2 = 0;
#if CCOPT__GETAUXVAL
    *hwcap = getauxval(CCOPT__AT_HWCAP);
    *hwcap2 = getauxval(CCOPT__AT_HWCAP2);
    if (*hwcap != 0)
        return;
#endif
    /* no getauxval() (old libc, or CCOPT_CPU_NO_GETAUXVAL): read the vector */
    fh = fopen("/proc/self/auxv", "rb");
    if (fh == NULL)
        return;
    while (fread(pair, sizeof pair, 1, fh) == 1 && pair[0] != CCOPT__AT_NULL) {
        if (pair[0] == CCOPT__AT_HWCAP)
            *hwcap = pair[1];
        else if (pair[0] == CCOPT__AT_HWCAP2)
            *hwcap2 = pair[1];
    }
    fclose(fh);
}
#endif /* CCOPT__AUXV */

/* What the CPU and OS report for each feature of this machine, before the
 * implication closure. */
static void ccopt__detect(unsigned char raw[CCOPT_CPU_MAX_FEATURE])
{
    int i;
#if CCOPT__CPUID
    unsigned int regs[CCOPT_CPU_NLEAVES + 1][4];
    unsigned long long xcr0 = ccopt__x86_read(regs);
#endif
#if CCOPT__AUXV
    unsigned long long hwcap, hwcap2;
    ccopt__auxv(&hwcap, &hwcap2);
#endif
    memset(raw, 0, CCOPT_CPU_MAX_FEATURE);
    for (i = 0; i < CCOPT_CPU_NRECIPES; ++i) {
        const ccopt_cpu_recipe *r = &ccopt_cpu_recipes[i];
        int ok = r->always;
#if CCOPT__CPUID
        if (!ok && r->cpuid)
            ok = ccopt__cpuid_ok(r, regs, xcr0);
#endif
#if CCOPT__AUXV
        if (!ok && r->auxv)
            ok = (hwcap & r->hwcap) == r->hwcap && (hwcap2 & r->hwcap2) == r->hwcap2;
#endif
#if CCOPT__SYSCTL && CCOPT_CPU_USES_SYSCTL
        if (!ok && r->sysctl != NULL)
            ok = ccopt__sysctl(r->sysctl);
#endif
#if CCOPT__WIN_PF
        if (!ok && r->win_pf != 0)
            ok = IsProcessorFeaturePresent((DWORD)r->win_pf) != 0;
#endif
        raw[r->id] = (unsigned char)(ok != 0);
    }
}

/* ------------------------------------------------------------------ closure, baseline, masks */

static unsigned char ccopt__have[CCOPT_CPU_MAX_FEATURE];
static char ccopt__missing[CCOPT_CPU_NAMES_TEXT_MAX];
/* The one line ccopt_cpu_baseline_message() returns: the missing names, about 90 bytes of words, the cause
 * and the cure. */
static char ccopt__message[CCOPT_CPU_NAMES_TEXT_MAX + 128 + sizeof CCOPT_CPU_BASELINE_CAUSE +
                           sizeof CCOPT_CPU_BASELINE_CURE];
static int ccopt__result;

#if CCOPT__XCOMP_PERM
/* The XSTATE component a feature, or one it implies, needs granted before it counts (0: none). */
static unsigned char ccopt__perm_of[CCOPT_CPU_MAX_FEATURE];
/* Per component: 0 not requested yet, 1 granted, 2 refused. */
static int ccopt__perm_state[64];

static void ccopt__perm_reset(const unsigned char *fake)
{
    int i, j;
    memset(ccopt__perm_of, 0, sizeof ccopt__perm_of);
    for (i = 0; i < CCOPT_CPU_NRECIPES; ++i)
        ccopt__perm_of[ccopt_cpu_recipes[i].id] = (unsigned char)ccopt_cpu_recipes[i].xcomp_perm;
    for (i = 0; i < CCOPT_CPU_NRECIPES; ++i) { /* the closure is transitive: one pass suffices */
        const ccopt_cpu_recipe *r = &ccopt_cpu_recipes[i];
        for (j = 0; j < r->implies_count; ++j)
            if (ccopt__perm_of[ccopt_cpu_implies[r->implies_first + j]] != 0)
                ccopt__perm_of[r->id] = ccopt__perm_of[ccopt_cpu_implies[r->implies_first + j]];
    }
    for (i = 0; i < 64; ++i) /* the test seam grants, unless a fake feature asks for the real request */
        ccopt__perm_state[i] = fake != NULL ? 1 : 0;
    for (i = 0; fake != NULL && i < CCOPT_CPU_NRECIPES; ++i)
        if (fake[ccopt_cpu_recipes[i].id] == 2 && ccopt_cpu_recipes[i].xcomp_perm != 0)
            ccopt__perm_state[ccopt_cpu_recipes[i].xcomp_perm] = 0;
}

/* Whether the component is granted, requesting it on the first call.  Two threads racing here
 * both request it, which is harmless: the kernel's answer does not change. */
static int ccopt__granted(int component)
{
#if defined(__ATOMIC_ACQUIRE)
    int state = __atomic_load_n(&ccopt__perm_state[component], __ATOMIC_ACQUIRE);
#else
    int state = ccopt__perm_state[component];
#endif
    if (state == 0) {
        state = ccopt__xcomp_perm(component) ? 1 : 2;
#if defined(__ATOMIC_RELEASE)
        __atomic_store_n(&ccopt__perm_state[component], state, __ATOMIC_RELEASE);
#else
        ccopt__perm_state[component] = state;
#endif
    }
    return state == 1;
}
#endif

/* The feature counts when it and everything it implies are reported. */
static int ccopt__closed(const unsigned char *raw, const ccopt_cpu_recipe *r)
{
    int j;
    if (!raw[r->id])
        return 0;
    for (j = 0; j < r->implies_count; ++j)
        if (!raw[ccopt_cpu_implies[r->implies_first + j]])
            return 0;
    return 1;
}

static void ccopt__mark(unsigned char *set, const ccopt_cpu_recipe *r)
{
    int j;
    set[r->id] = 1;
    for (j = 0; j < r->implies_count; ++j)
        set[ccopt_cpu_implies[r->implies_first + j]] = 1;
}

/* Append one character, snprintf-style: count everything, store what fits. */
static size_t ccopt__put(char *buf, size_t len, size_t n, char c)
{
    if (buf != NULL && n + 1 < len) {
        buf[n] = c;
        buf[n + 1] = '\0';
    }
    return n + 1;
}

static size_t ccopt__put_text(char *buf, size_t len, size_t n, const char *text)
{
    while (*text != '\0')
        n = ccopt__put(buf, len, n, *text++);
    return n;
}

static size_t ccopt__put_word(char *buf, size_t len, size_t n, const char *word)
{
    if (n != 0)
        n = ccopt__put(buf, len, n, ' ');
    return ccopt__put_text(buf, len, n, word);
}

static int ccopt__upper(int c)
{
    return (c >= 'a' && c <= 'z') ? c - 'a' + 'A' : c;
}

static int ccopt__name_eq(const char *tok, size_t n, const char *name)
{
    size_t i;
    for (i = 0; i < n; ++i)
        if (name[i] == '\0' || ccopt__upper((unsigned char)tok[i]) != ccopt__upper((unsigned char)name[i]))
            return 0;
    return name[n] == '\0';
}

static const ccopt_cpu_recipe *ccopt__find(const char *tok, size_t n)
{
    int i;
    for (i = 0; i < CCOPT_CPU_NRECIPES; ++i)
        if (ccopt__name_eq(tok, n, ccopt_cpu_names[ccopt_cpu_recipes[i].id]))
            return &ccopt_cpu_recipes[i];
    return NULL;
}

static int ccopt__is_sep(char c)
{
    return c == ' ' || c == ',' || c == '\t' || c == '\n' || c == '\r';
}

/* The next name of a list, or NULL at its end. */
static const char *ccopt__token(const char *s, size_t *n)
{
    while (*s != '\0' && ccopt__is_sep(*s))
        ++s;
    for (*n = 0; s[*n] != '\0' && !ccopt__is_sep(s[*n]); ++*n) {
    }
    return *n != 0 ? s : NULL;
}

/* What the environment parser says is bounded: a variable holding 1 MB of names must not print
 * megabytes, and its bytes must never reach the terminal raw (an ESC would be a terminal command). */
#define CCOPT__ENV_MESSAGES 8 /* messages per variable; the rest are counted */
/* CCOPT_CPU_QUIET: a library that must not write to its host's stderr says nothing about the
 * environment variables (they still apply). */
#ifdef CCOPT_CPU_QUIET
#define CCOPT__QUIET 1
#else
#define CCOPT__QUIET 0
#endif
#define CCOPT__ENV_ECHO 40    /* bytes of one name echoed */

typedef struct {
    const char *var;
    unsigned long said, hidden;
    int listed; /* the known names were printed once */
} ccopt__env_log;

/* Start one message about `log->var`; 0 (and counted) once the variable has said enough. */
static int ccopt__say(ccopt__env_log *log)
{
    if (CCOPT__QUIET || log->said >= CCOPT__ENV_MESSAGES) {
        ++log->hidden;
        return 0;
    }
    ++log->said;
    fprintf(stderr, "ccopt: %s: ", log->var);
    return 1;
}

static void ccopt__said(const ccopt__env_log *log)
{
    if (log->hidden != 0 && !CCOPT__QUIET)
        fprintf(stderr, "ccopt: %s: %lu more ignored names not shown\n", log->var, log->hidden);
}

/* A name from the environment: cut to CCOPT__ENV_ECHO bytes, unprintable bytes as \xHH. */
static void ccopt__echo(const char *tok, size_t n)
{
    size_t i, shown = n > CCOPT__ENV_ECHO ? CCOPT__ENV_ECHO - 3 : n;
    for (i = 0; i < shown; ++i) {
        unsigned char c = (unsigned char)tok[i];
        if (c == '\\')
            fputs("\\\\", stderr);
        else if (c >= 0x20 && c < 0x7f)
            fputc(c, stderr);
        else
            fprintf(stderr, "\\x%02x", c);
    }
    if (shown < n)
        fputs("...", stderr);
}

/* The recipe of a name in an environment list, or NULL after saying why not. */
static const ccopt_cpu_recipe *ccopt__lookup(ccopt__env_log *log, const char *tok, size_t n)
{
    const ccopt_cpu_recipe *r = ccopt__find(tok, n);
    int i, any = 0;
    if (r != NULL)
        return r;
    for (i = 0; i < CCOPT_CPU_MAX_FEATURE; ++i)
        if (ccopt__name_eq(tok, n, ccopt_cpu_names[i]))
            any = 1;
    if (!ccopt__say(log))
        return NULL;
    if (any) {
        ccopt__echo(tok, n);
        fprintf(stderr, " is not a CPU feature of %s; ignored\n", CCOPT_CPU_MACHINE);
        return NULL;
    }
    fputs("unknown CPU feature '", stderr);
    ccopt__echo(tok, n);
    if (log->listed) {
        fputs("'; ignored\n", stderr);
        return NULL;
    }
    log->listed = 1;
    fprintf(stderr, "'; ignored (known on %s:", CCOPT_CPU_MACHINE);
    for (i = 0; i < CCOPT_CPU_NRECIPES; ++i)
        fprintf(stderr, " %s", ccopt_cpu_names[ccopt_cpu_recipes[i].id]);
    fprintf(stderr, ")\n");
    return NULL;
}

static const char *ccopt__env(const char *var)
{
    size_t n;
    const char *value = getenv(var);
    return (value != NULL && ccopt__token(value, &n) != NULL) ? value : NULL;
}

/* CCOPT_DISABLE_CPU_FEATURES / CCOPT_ENABLE_CPU_FEATURES, numpy's semantics:
 * clear features in `raw`; the closure then hides whatever implies them. */
static void ccopt__apply_env(unsigned char *raw, const unsigned char *base)
{
    static const char dis_var[] = "CCOPT_DISABLE_CPU_FEATURES", en_var[] = "CCOPT_ENABLE_CPU_FEATURES";
    const char *dis = ccopt__env(dis_var), *en = ccopt__env(en_var), *tok;
    const ccopt_cpu_recipe *r;
    unsigned char keep[CCOPT_CPU_MAX_FEATURE];
    ccopt__env_log dis_log = {dis_var, 0, 0, 0}, en_log = {en_var, 0, 0, 0};
    size_t n;
    int i, known = 0;
    if (dis != NULL && en != NULL) {
        if (!CCOPT__QUIET)
            fprintf(stderr, "ccopt: %s and %s are both set; set only one of them (both are ignored)\n",
                    dis_var, en_var);
        return;
    }
    for (tok = ccopt__token(dis ? dis : "", &n); tok != NULL; tok = ccopt__token(tok + n, &n)) {
        if ((r = ccopt__lookup(&dis_log, tok, n)) == NULL)
            continue;
        if (!base[r->id])
            raw[r->id] = 0;
        else if (ccopt__say(&dis_log))
            fprintf(stderr, "%s is in the baseline this build requires and cannot be disabled; ignored\n",
                    ccopt_cpu_names[r->id]);
    }
    ccopt__said(&dis_log);
    if (en == NULL)
        return;
    memcpy(keep, base, sizeof keep);
    for (tok = ccopt__token(en, &n); tok != NULL; tok = ccopt__token(tok + n, &n)) {
        if (ccopt__name_eq(tok, n, "BASELINE")) { /* the baseline alone: every dispatcher's fallback */
            known = 1;
            continue;
        }
        if ((r = ccopt__lookup(&en_log, tok, n)) == NULL)
            continue;
        known = 1;
        if (!ccopt__closed(raw, r) && ccopt__say(&en_log))
            fprintf(stderr, "%s is not supported by this CPU; ignored\n", ccopt_cpu_names[r->id]);
        ccopt__mark(keep, r);
    }
    ccopt__said(&en_log);
    if (!known) { /* every name was ignored: so is the variable, not every dispatch feature */
        if (!CCOPT__QUIET)
            fprintf(stderr, "ccopt: %s names no CPU feature of %s; ignored (all features stay enabled)\n",
                    en_var, CCOPT_CPU_MACHINE);
        return;
    }
    for (i = 0; i < CCOPT_CPU_MAX_FEATURE; ++i)
        if (!keep[i])
            raw[i] = 0;
}

/* Fill ccopt__have and ccopt__missing; returns the ccopt_cpu_init() result. */
static int ccopt__compute(const unsigned char *fake)
{
    unsigned char raw[CCOPT_CPU_MAX_FEATURE], base[CCOPT_CPU_MAX_FEATURE];
    size_t n = 0;
    int i;
    if (fake != NULL)
        for (i = 0; i < CCOPT_CPU_MAX_FEATURE; ++i)
            raw[i] = (unsigned char)(fake[i] != 0);
    else
        ccopt__detect(raw);
#if CCOPT__XCOMP_PERM
    ccopt__perm_reset(fake);
#endif
    memset(base, 0, sizeof base);
    for (i = 0; i < CCOPT_CPU_NRECIPES; ++i)
        if (ccopt_cpu_recipes[i].baseline)
            ccopt__mark(base, &ccopt_cpu_recipes[i]);
    ccopt__missing[0] = '\0';
    for (i = 0; i < CCOPT_CPU_NRECIPES; ++i) {
        const ccopt_cpu_recipe *r = &ccopt_cpu_recipes[i];
        if (base[r->id] && !ccopt__closed(raw, r))
            n = ccopt__put_word(ccopt__missing, sizeof ccopt__missing, n, ccopt_cpu_names[r->id]);
    }
    ccopt__message[0] = '\0';
    if (n != 0) { /* no snprintf: the run-time calls only the libc functions it always did */
        static const char *const parts[] = {"ccopt: this CPU lacks ", ccopt__missing,
            ", which this build requires (its CPU baseline, ", CCOPT_CPU_BASELINE_CAUSE, "); to run here, ",
            CCOPT_CPU_BASELINE_CURE};
        size_t m = 0, k;
        for (k = 0; k < sizeof parts / sizeof parts[0]; ++k)
            m = ccopt__put_text(ccopt__message, sizeof ccopt__message, m, parts[k]);
    }
    ccopt__apply_env(raw, base);
    memset(ccopt__have, 0, sizeof ccopt__have);
    for (i = 0; i < CCOPT_CPU_NRECIPES; ++i)
        ccopt__have[ccopt_cpu_recipes[i].id] = (unsigned char)ccopt__closed(raw, &ccopt_cpu_recipes[i]);
    return n != 0;
}

/* ------------------------------------------------------------------ once */

/* 0: not detected, 1: a thread is detecting, 2: done (results published). */
#if defined(__ATOMIC_ACQUIRE) /* GCC >= 4.7, Clang */
static int ccopt__state;
static int ccopt__load_state(void)
{
    return __atomic_load_n(&ccopt__state, __ATOMIC_ACQUIRE);
}
static int ccopt__claim(void)
{
    int expected = 0;
    return __atomic_compare_exchange_n(&ccopt__state, &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}
static void ccopt__publish(void)
{
    __atomic_store_n(&ccopt__state, 2, __ATOMIC_RELEASE);
}
#elif defined(_MSC_VER)
#include <intrin.h>
static volatile long ccopt__state;
static int ccopt__load_state(void)
{
    return (int)_InterlockedCompareExchange(&ccopt__state, 0, 0);
}
static int ccopt__claim(void)
{
    return _InterlockedCompareExchange(&ccopt__state, 1, 0) == 0;
}
static void ccopt__publish(void)
{
    _InterlockedExchange(&ccopt__state, 2);
}
#else /* no atomics known: correct single-threaded; call ccopt_cpu_init() before starting threads */
static volatile int ccopt__state;
static int ccopt__load_state(void)
{
    return ccopt__state;
}
static int ccopt__claim(void)
{
    if (ccopt__state != 0)
        return 0;
    ccopt__state = 1;
    return 1;
}
static void ccopt__publish(void)
{
    ccopt__state = 2;
}
#endif

/* ------------------------------------------------------------------ public */

int ccopt_cpu_init(void)
{
    if (ccopt__load_state() != 2) {
        if (ccopt__claim()) {
            ccopt__result = ccopt__compute(NULL);
            ccopt__publish();
        } else {
            while (ccopt__load_state() != 2) {
                /* another thread is detecting; that takes microseconds */
            }
        }
    }
    return ccopt__result;
}

void ccopt_cpu_set_for_test(const unsigned char *have)
{
    ccopt__result = ccopt__compute(have);
    ccopt__publish();
}

const char *ccopt_cpu_baseline_missing(void)
{
    ccopt_cpu_init();
    return ccopt__missing;
}

const char *ccopt_cpu_baseline_message(void)
{
    ccopt_cpu_init();
    return ccopt__message[0] != '\0' ? ccopt__message : NULL;
}

int ccopt_cpu_have(int feature_id)
{
    if (feature_id < 0 || feature_id >= CCOPT_CPU_MAX_FEATURE)
        return 0;
    if (ccopt__load_state() != 2)
        ccopt_cpu_init();
    if (!ccopt__have[feature_id])
        return 0;
#if CCOPT__XCOMP_PERM
    if (ccopt__perm_of[feature_id] != 0)
        return ccopt__granted(ccopt__perm_of[feature_id]);
#endif
    return 1;
}

int ccopt_cpu_count(void)
{
    return CCOPT_CPU_MAX_FEATURE;
}

const char *ccopt_cpu_name(int id)
{
    return (id >= 0 && id < CCOPT_CPU_MAX_FEATURE) ? ccopt_cpu_names[id] : NULL;
}

int ccopt_cpu_id(const char *name)
{
    int i;
    if (name == NULL)
        return -1;
    for (i = 0; i < CCOPT_CPU_MAX_FEATURE; ++i)
        if (ccopt__name_eq(name, strlen(name), ccopt_cpu_names[i]))
            return i;
    return -1;
}

int ccopt_cpu_on_arch(int id)
{
    int i;
    for (i = 0; i < CCOPT_CPU_NRECIPES; ++i)
        if (ccopt_cpu_recipes[i].id == id)
            return 1;
    return 0;
}

const char *ccopt_cpu_arch(void)
{
    return CCOPT_CPU_MACHINE;
}

int ccopt_cpu_features_text(char *buf, size_t len)
{
    size_t n = 0;
    int i;
    ccopt_cpu_init();
    if (buf != NULL && len > 0)
        buf[0] = '\0';
    for (i = 0; i < CCOPT_CPU_NRECIPES; ++i)
        if (ccopt_cpu_have(ccopt_cpu_recipes[i].id))
            n = ccopt__put_word(buf, len, n, ccopt_cpu_names[ccopt_cpu_recipes[i].id]);
    return (int)n;
}

int ccopt_cpu_level(void)
{
    int i;
    for (i = CCOPT_CPU_NLEVELS - 1; i >= 0; --i)
        if (ccopt_cpu_have(ccopt_cpu_levels[i]))
            return ccopt_cpu_levels[i];
    return -1;
}

void ccopt_cpu_trace(const char *name, const char *target)
{
    const char *on = getenv("CCOPT_TRACE");
    const char *p;
    char members[256];
    size_t n = 0;
    if (on == NULL || on[0] == '\0' || strcmp(on, "0") == 0)
        return;
    if (strcmp(target, "BASELINE") == 0) {
        fprintf(stderr, "ccopt: %s: BASELINE (no compiled version above the baseline runs on this CPU)\n", name);
        return;
    }
    for (p = target; *p != '\0' && n + 1 < sizeof members; ++p) { /* FMA3__AVX2: its members FMA3 AVX2 */
        if (p[0] == '_' && p[1] == '_') {
            members[n++] = ' ';
            ++p;
        } else {
            members[n++] = *p;
        }
    }
    members[n] = '\0';
    fprintf(stderr, "ccopt: %s: %s (%s present)\n", name, target, members);
}

void ccopt_cpu_no_version(const char *name)
{
    char have[1024];
    ccopt_cpu_features_text(have, sizeof have);
    fprintf(stderr, "ccopt: no compiled version of %s() runs on this CPU (features: %s); "
                    "add 'baseline' to its @targets statement\n", name, have[0] ? have : "none");
    abort();
}

/* ------------------------------------------------------------------ before main */

/* CCOPT_CPU_CHECK_BASELINE (the Meson glue defines it): an executable whose baseline this CPU lacks
 * stops before main() with ccopt_cpu_baseline_message() and exit status 1, not SIGILL in the first
 * baseline instruction.  This object must itself be compiled without the baseline's -m flags (the glue
 * gives it only the baseline's macros), or the check could fault before it speaks.
 *
 * A constructor, not .preinit_array: the static library is linked into shared libraries and Python
 * extensions too, where the linker refuses .preinit_array ("not allowed in DSO").  In those the
 * constructor returns at once: it acts only when this copy is part of the main program (its own ELF
 * header is the one whose program headers the kernel passed in AT_PHDR); a library reports through
 * ccopt_cpu_baseline_message() instead of killing its host.  Priority 101 runs it before the
 * executable's other constructors; constructors of shared libraries the executable links run earlier,
 * and one compiled for the baseline can still fault first (docs/reference/runtime.md). */
#if defined(CCOPT_CPU_CHECK_BASELINE) && defined(__linux__) && defined(__ELF__) && \
    (defined(__GNUC__) || defined(__clang__)) && defined(__has_include)
#if __has_include(<sys/auxv.h>) && __has_include(<link.h>)
#include <link.h> /* ElfW */
#include <sys/auxv.h>
#include <unistd.h>

#define CCOPT__BELOW_BASELINE_EXIT 1

/* Defined by the linker for the object (executable or shared library) this copy is linked into. */
extern const ElfW(Ehdr) __ehdr_start __attribute__((weak, visibility("hidden")));

static int ccopt__in_main_program(void)
{
    const ElfW(Ehdr) *self = &__ehdr_start;
    if (self == NULL)
        return 0;
    return getauxval(AT_PHDR) == (unsigned long)((const char *)self + self->e_phoff);
}

__attribute__((constructor(101))) static void ccopt__check_before_main(void)
{
    const char *message;
    int i, any = 0;
    for (i = 0; i < CCOPT_CPU_NRECIPES; ++i) /* no baseline: nothing to check, no cpuid at start */
        any |= ccopt_cpu_recipes[i].baseline;
    if (!any || !ccopt__in_main_program())
        return;
    message = ccopt_cpu_baseline_message();
    if (message == NULL)
        return;
    fputs(message, stderr);
    fputc('\n', stderr);
    _exit(CCOPT__BELOW_BASELINE_EXIT); /* no atexit handlers or destructors: they may be baseline code */
}
#endif
#endif

/* The run-time's dispatch manifest note (ccopt_meson/manifest.py): the baseline this build declares, in every
 * executable and shared library that links this object.  The build's generated kernel header holds it; the
 * intrinsics headers it would also include are not needed here. */
#if defined(CCOPT_CPU_CHECK_BASELINE) && defined(__has_include)
#if __has_include("ccopt_kernel.h")
#define CCOPT_CPU_MANIFEST 1
#ifndef CCOPT_NO_INTRIN_HEADERS
#define CCOPT_NO_INTRIN_HEADERS 1
#endif
#include "ccopt_kernel.h"
#endif
#endif
