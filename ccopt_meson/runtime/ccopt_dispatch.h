/*
 * ccopt_dispatch.h: macros for dispatch sources and their callers.
 *
 * A dispatch source (say dot.dispatch.c) is compiled once per target with the
 * per-target args (which define CCOPT_TARGET); inside it, CCOPT_FN(dot) names
 * that target's version (dot_AVX2, dot_FMA3__AVX2, dot_BASELINE).  A caller
 * includes the generated "dot.dispatch.h" and then uses:
 *
 *   CCOPT_DISPATCH_DECLARE(float, dot, (const float *a, const float *b, size_t n))
 *   CCOPT_DISPATCH_DEFINE(float, dot, (const float *a, const float *b, size_t n), (a, b, n))
 *
 * DEFINE makes `float dot(...)`, which picks the highest version the running
 * CPU supports on its first call and afterwards costs one indirect call.
 * CCOPT_DISPATCH_PICK(dot) is that choice as an expression (a function
 * pointer, or 0 when no version fits and the source has no `baseline`), and
 * CCOPT_DISPATCH_TARGET_NAME(dot) the chosen target's name as a string.
 * The macros use the dispatch header included last.
 */
#ifndef CCOPT_DISPATCH_H_
#define CCOPT_DISPATCH_H_

#include "ccopt_cpu.h"

#define CCOPT__EXPAND(X) X
#define CCOPT__CAT2(A, B) A##_##B
#define CCOPT__CAT(A, B) CCOPT__CAT2(A, B)

#ifdef CCOPT_TARGET
#define CCOPT_FN(NAME) CCOPT__CAT(NAME, CCOPT_TARGET)
#else
#define CCOPT_FN(NAME) CCOPT__CAT(NAME, BASELINE)
#endif

#define CCOPT__DECL_CB(CHECK, TARGET, RET, NAME, PARAMS) RET CCOPT__CAT(NAME, TARGET) PARAMS;
#define CCOPT__DECL_BASE_CB(RET, NAME, PARAMS) RET CCOPT__CAT(NAME, BASELINE) PARAMS;
#define CCOPT_DISPATCH_DECLARE(RET, NAME, PARAMS) \
    CCOPT__DISPATCH_CALL(CCOPT_CPU_HAVE, CCOPT__DECL_CB, RET, NAME, PARAMS) \
    CCOPT__DISPATCH_BASELINE_CALL(CCOPT__DECL_BASE_CB, RET, NAME, PARAMS)

#define CCOPT__PICK_CB(CHECK, TARGET, NAME) (CHECK) ? CCOPT__CAT(NAME, TARGET) :
#define CCOPT_DISPATCH_PICK(NAME) \
    (CCOPT__DISPATCH_CALL(CCOPT_CPU_HAVE, CCOPT__PICK_CB, NAME) CCOPT__DISPATCH_FALLBACK(NAME))

#define CCOPT__NAME_CB(CHECK, TARGET, NAME) (CHECK) ? #TARGET :
#define CCOPT_DISPATCH_TARGET_NAME(NAME) \
    (CCOPT__DISPATCH_CALL(CCOPT_CPU_HAVE, CCOPT__NAME_CB, NAME) CCOPT__DISPATCH_FALLBACK_NAME)

/* CB(CHECK, TARGET, ...) once per compiled target of the dispatch header, highest first;
 * CHECK is the run-time test.  CCOPT_DISPATCH_HAS_BASELINE says whether a BASELINE version exists. */
#define CCOPT_DISPATCH_FOREACH(CB, ...) CCOPT__DISPATCH_CALL(CCOPT_CPU_HAVE, CB, __VA_ARGS__)

#if defined(__GNUC__) || defined(__clang__)
#define CCOPT__LOAD(P) __atomic_load_n(&(P), __ATOMIC_ACQUIRE)
#define CCOPT__STORE(P, V) __atomic_store_n(&(P), (V), __ATOMIC_RELEASE)
#else
/* Pointer-sized aligned loads and stores are atomic on every MSVC target. */
#define CCOPT__LOAD(P) (*(volatile void *const *)&(P), (P))
#define CCOPT__STORE(P, V) ((P) = (V))
#endif

#define CCOPT__DEFINE(RET, NAME, PARAMS, ARGS, RETURN) \
    RET NAME PARAMS { \
        static RET (*ccopt__best) PARAMS = 0; \
        RET (*ccopt__fn) PARAMS = CCOPT__LOAD(ccopt__best); \
        if (!ccopt__fn) { \
            ccopt__fn = CCOPT_DISPATCH_PICK(NAME); \
            if (!ccopt__fn) ccopt_cpu_no_version(#NAME); \
            CCOPT__STORE(ccopt__best, ccopt__fn); \
        } \
        RETURN ccopt__fn ARGS; \
    }
#define CCOPT_DISPATCH_DEFINE(RET, NAME, PARAMS, ARGS) CCOPT__DEFINE(RET, NAME, PARAMS, ARGS, return)
#define CCOPT_DISPATCH_DEFINE_VOID(NAME, PARAMS, ARGS) CCOPT__DEFINE(void, NAME, PARAMS, ARGS, )

#endif /* CCOPT_DISPATCH_H_ */
