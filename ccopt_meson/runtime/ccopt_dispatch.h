/*
 * ccopt_dispatch.h: macros for dispatch sources and their callers.
 *
 * A dispatch source (say dot.dispatch.c) is compiled once per target with the
 * per-target args (which define CCOPT_TARGET and CCOPT__TARGET_WITH); inside it,
 * CCOPT_FN(dot) names that target's version (dot_AVX2, dot_FMA3__AVX2, dot_BASELINE).
 *
 * A caller includes the generated "dot.dispatch.h" and names that source in
 * every macro, by the header's name with '.' turned into '_' (dot_dispatch):
 *
 *   #include "dot.dispatch.h"
 *   #include "poly.dispatch.h"
 *   CCOPT_DISPATCH_DECLARE(dot_dispatch, float, dot, (const float *a, const float *b, size_t n))
 *   CCOPT_DISPATCH_DEFINE(dot_dispatch, float, dot, (const float *a, const float *b, size_t n), (a, b, n))
 *
 * Each function is bound to the target list of the source it names, so any
 * number of dispatch headers can be included, in any order.  A source name
 * whose header was not included is a compile error naming CCOPT_SRC_<source>.
 *
 * DEFINE makes `float dot(...)` (DEFINE_AS(src, RET, my_dot, dot, ...) makes `my_dot`, a name of the
 * library's own, picking among dot's versions), which picks the highest version the running
 * CPU supports on its first call and afterwards costs one indirect call; with
 * CCOPT_TRACE=1 in the environment that first call prints the pick on stderr
 * ("ccopt: dot: FMA3__AVX2 (FMA3 AVX2 present)").
 * CCOPT_DISPATCH_PICK(src, dot) is that choice as an expression (a function
 * pointer, or 0 when no version fits and the source has no `baseline`),
 * CCOPT_DISPATCH_TARGET_NAME(src, dot) the chosen target's name,
 * CCOPT_DISPATCH_GET(src, dot, "AVX2") the AVX2 version if it was compiled and
 * this CPU runs it (else 0), CCOPT_DISPATCH_VERSION(dot, AVX2) the version
 * itself (dot_AVX2), CCOPT_DISPATCH_RUNS(src) whether this CPU runs any
 * compiled version above BASELINE, CCOPT_DISPATCH_CHECK(src, AVX2) the run-time
 * check of one compiled target, and the generated header defines
 * CCOPT_DISPATCH_HAS_<src>_<TARGET> to 1 for every compiled target.
 */
#ifndef CCOPT_DISPATCH_H_
#define CCOPT_DISPATCH_H_

#include <string.h>

#include "ccopt_cpu.h"

#define CCOPT__EXPAND(X) X
/* the per-source macros of a generated header: CCOPT_SRC_<source>(PART) */
#define CCOPT__SRC2(SRC, PART) CCOPT_SRC_##SRC##_##PART
#define CCOPT__SRC(SRC, PART) CCOPT__SRC2(SRC, PART)

/* A target's name is a feature's name, and a features file may name a feature like a macro of the C
 * library (EOF, NULL, BUFSIZ, INT_MAX, ERANGE): a macro argument is expanded before it is substituted,
 * unless it is an operand of ## or #, so a target name handed from macro to macro becomes (-1) on its way.
 * Every macro here that makes a name or a string from a target name therefore pastes or stringizes the
 * argument it was given, and hands on only what it made.
 *
 * In a dispatch source: the target this build of it is for, as a name and as a string.  A value given
 * with -D is expanded when it is read, so CCOPT_TARGET=EOF cannot name dot_EOF; the version's args also
 * define CCOPT__TARGET_WITH as the opening of a call, CCOPT__WITH_TARGET(EOF, (data/macros.json's
 * 'target_with'), which CCOPT_FN and CCOPT_TARGET_NAME close: the name's first reader pastes it. */
#define CCOPT__WITH_TARGET(TARGET, CB, NAME) CB(#TARGET, NAME##_##TARGET)
#define CCOPT__VERSION_OF(STRING, VERSION) VERSION
#define CCOPT__STRING_OF(STRING, VERSION) STRING
#if defined(CCOPT__TARGET_WITH)
#define CCOPT_FN(NAME) CCOPT__TARGET_WITH CCOPT__VERSION_OF, NAME)
#define CCOPT_TARGET_NAME CCOPT__TARGET_WITH CCOPT__STRING_OF, CCOPT__UNUSED)
#elif defined(CCOPT_TARGET)
#error "CCOPT_TARGET is defined without CCOPT__TARGET_WITH: compile each version with all the args its target was given"
#else
#define CCOPT_FN(NAME) CCOPT__WITH_TARGET(BASELINE, CCOPT__VERSION_OF, NAME)
#define CCOPT_TARGET_NAME "BASELINE"
#endif

/* The version of NAME for TARGET, as a name: CCOPT_DISPATCH_VERSION(dot, AVX2) is dot_AVX2.  Both are
 * pasted as given (a callback's TARGET reaches it expanded: paste it in the callback, as those below do). */
#define CCOPT_DISPATCH_VERSION(NAME, TARGET) NAME##_##TARGET

/* CB(CHECK, TARGET, ...) once per compiled version of SRC, highest first, BASELINE last (CHECK 1);
 * CHECK is the run-time test of that target, TARGET its name as written: a CB that pastes or stringizes
 * TARGET itself (##, #) works for every feature name, one that hands it to another macro expands it. */
#define CCOPT_DISPATCH_FOREACH(SRC, CB, ...) \
    CCOPT__SRC(SRC, CALL)(CCOPT_CPU_HAVE, CB, __VA_ARGS__) CCOPT__SRC(SRC, BASE)(CB, __VA_ARGS__)
/* The compiled targets of SRC as a string, highest first: "AVX512F AVX2 BASELINE". */
#define CCOPT_DISPATCH_TARGETS(SRC) CCOPT__SRC(SRC, TARGETS)

/* 1 when this CPU runs a compiled version of SRC other than BASELINE (the check a library with tables of
 * its own makes before installing a source's functions); 0 otherwise. */
#define CCOPT__RUNS_CB(CHECK, TARGET, UNUSED) || (CHECK)
#define CCOPT_DISPATCH_RUNS(SRC) (0 CCOPT__SRC(SRC, CALL)(CCOPT_CPU_HAVE, CCOPT__RUNS_CB, ~))
/* The run-time check of one compiled target of SRC (its members and what the compiler's flags add):
 * CCOPT_DISPATCH_CHECK(pitch_dispatch, SSE41); BASELINE is 1.  A target SRC was not compiled for is a
 * compile error naming CCOPT_SRC_<SRC>_CHECK_<TARGET>. */
#define CCOPT_DISPATCH_CHECK(SRC, TARGET) CCOPT_SRC_##SRC##_CHECK_##TARGET(CCOPT_CPU_HAVE)

/* The versions' linkage is their source's language: a C++ caller declares a C source's versions in
 * extern "C" (the generated header's LINK_BEGIN / LINK_END), a C++ source's with C++ linkage. */
#ifdef __cplusplus
#define CCOPT__C_BEGIN extern "C" {
#define CCOPT__C_END }
#else
#define CCOPT__C_BEGIN
#define CCOPT__C_END
#endif
#define CCOPT__DECL_CB(CHECK, TARGET, RET, NAME, PARAMS) RET NAME##_##TARGET PARAMS;
#define CCOPT_DISPATCH_DECLARE(SRC, RET, NAME, PARAMS) \
    CCOPT__SRC(SRC, LINK_BEGIN) CCOPT_DISPATCH_FOREACH(SRC, CCOPT__DECL_CB, RET, NAME, PARAMS) CCOPT__SRC(SRC, LINK_END)

#define CCOPT__PICK_CB(CHECK, TARGET, NAME) (CHECK) ? NAME##_##TARGET :
#define CCOPT_DISPATCH_PICK(SRC, NAME) \
    (CCOPT__SRC(SRC, CALL)(CCOPT_CPU_HAVE, CCOPT__PICK_CB, NAME) CCOPT__SRC(SRC, FALLBACK)(NAME))

#define CCOPT__NAME_CB(CHECK, TARGET, NAME) (CHECK) ? #TARGET :
#define CCOPT_DISPATCH_TARGET_NAME(SRC, NAME) \
    (CCOPT__SRC(SRC, CALL)(CCOPT_CPU_HAVE, CCOPT__NAME_CB, NAME) CCOPT__SRC(SRC, FALLBACK_NAME))

/* The version for a target name known only at run time (a test, a benchmark, a user's choice):
 * 0 unless that target was compiled and this CPU runs it. */
#define CCOPT__GET_CB(CHECK, TARGET, NAME, WANT) (strcmp((WANT), #TARGET) == 0 && (CHECK)) ? NAME##_##TARGET :
#define CCOPT_DISPATCH_GET(SRC, NAME, TARGET_NAME) \
    (CCOPT_DISPATCH_FOREACH(SRC, CCOPT__GET_CB, NAME, TARGET_NAME) 0)

#if defined(__GNUC__) || defined(__clang__)
#define CCOPT__LOAD(P) __atomic_load_n(&(P), __ATOMIC_ACQUIRE)
#define CCOPT__STORE(P, V) __atomic_store_n(&(P), (V), __ATOMIC_RELEASE)
#else
/* Pointer-sized aligned loads and stores are atomic on every MSVC target. */
#define CCOPT__LOAD(P) (*(volatile void *const *)&(P), (P))
#define CCOPT__STORE(P, V) ((P) = (V))
#endif

/* The first call stores its pick before the trace and loads it again after: a pick held across the
 * trace's call took one more callee-saved register, which gcc 12 -O3 saves and restores on every call,
 * the first call's branch sharing the function's prologue (bench/call_cost: 1.12x the same dispatcher
 * without the trace call; stored first, the later calls' instructions are those of that dispatcher). */
#define CCOPT__DEFINE_AS(SRC, RET, PUBLIC, KERNEL, PARAMS, ARGS, RETURN) \
    RET PUBLIC PARAMS { \
        static RET (*ccopt__best) PARAMS = 0; \
        RET (*ccopt__fn) PARAMS = CCOPT__LOAD(ccopt__best); \
        if (!ccopt__fn) { \
            ccopt__fn = CCOPT_DISPATCH_PICK(SRC, KERNEL); \
            if (!ccopt__fn) ccopt_cpu_no_version(#PUBLIC); \
            CCOPT__STORE(ccopt__best, ccopt__fn); \
            ccopt_cpu_trace(#PUBLIC, CCOPT_DISPATCH_TARGET_NAME(SRC, KERNEL)); \
            ccopt__fn = CCOPT__LOAD(ccopt__best); \
        } \
        RETURN ccopt__fn ARGS; \
    }
#define CCOPT_DISPATCH_DEFINE(SRC, RET, NAME, PARAMS, ARGS) CCOPT__DEFINE_AS(SRC, RET, NAME, NAME, PARAMS, ARGS, return)
#define CCOPT_DISPATCH_DEFINE_VOID(SRC, NAME, PARAMS, ARGS) CCOPT__DEFINE_AS(SRC, void, NAME, NAME, PARAMS, ARGS, )
/* The same dispatcher under a name of the library's own: PUBLIC (the library's API, declared in its header)
 * picks among KERNEL's versions (KERNEL_AVX2, KERNEL_BASELINE, ...), so a library keeps its public names
 * whatever its kernels are called.  The trace and the no-version message name PUBLIC. */
#define CCOPT_DISPATCH_DEFINE_AS(SRC, RET, PUBLIC, KERNEL, PARAMS, ARGS) \
    CCOPT__DEFINE_AS(SRC, RET, PUBLIC, KERNEL, PARAMS, ARGS, return)
#define CCOPT_DISPATCH_DEFINE_VOID_AS(SRC, PUBLIC, KERNEL, PARAMS, ARGS) \
    CCOPT__DEFINE_AS(SRC, void, PUBLIC, KERNEL, PARAMS, ARGS, )

#endif /* CCOPT_DISPATCH_H_ */
