/* ccopt_cpu.h: which CPU features the running machine has, for per-CPU dispatch.
 *
 * Compile ccopt_cpu.c into the program (C99; no other dependency) with the
 * build's baseline given as -DCCOPT_HAVE_<NAME> for each baseline feature, and
 * ccopt_cpu_table.h (generated from the feature tables at configure time, or by
 * `python -m ccopt_meson.emit_runtime > ccopt_cpu_table.h`) on the include path.
 *
 *     if (ccopt_cpu_init() != 0)
 *         fprintf(stderr, "this build needs %s\n", ccopt_cpu_baseline_missing());
 *     if (CCOPT_CPU_HAVE(AVX2)) ...
 *
 * Detection: cpuid and XCR0 on x86 (AVX and AVX-512 count only when the OS
 * saves their registers; AMX on Linux only once arch_prctl(ARCH_REQ_XCOMP_PERM)
 * has granted this process the tile data, see "Process state" below); AT_HWCAP/AT_HWCAP2 on Linux (getauxval(), else
 * /proc/self/auxv); sysctlbyname() on macOS arm64; IsProcessorFeaturePresent()
 * on Windows arm64.  Elsewhere only features that are part of the
 * architecture (NEON on aarch64) are reported.
 *
 * A feature counts only when every feature it implies counts too: masking AVX
 * masks AVX2, FMA3, AVX512F, ...
 *
 * Environment, read once by ccopt_cpu_init() (names separated by spaces or
 * commas, case-insensitive; the semantics of numpy's NPY_*_CPU_FEATURES):
 *   CCOPT_DISABLE_CPU_FEATURES  the named features, and every feature that
 *                               implies one of them, are reported absent.
 *   CCOPT_ENABLE_CPU_FEATURES   only the named features (with what they imply)
 *                               and the baseline stay enabled; BASELINE alone
 *                               keeps only the baseline.
 * Unknown names, baseline features in the DISABLE list and setting both
 * variables print one line on stderr ("ccopt: CCOPT_...: ...") and are
 * otherwise ignored; an ENABLE list with no known name is ignored whole.
 *
 * Process state: ccopt_cpu_init() only reads (cpuid, xgetbv, the auxiliary
 * vector, sysctl).  The one request that changes the process, Linux's
 * arch_prctl(ARCH_REQ_XCOMP_PERM) for AMX tile data (after which the kernel
 * sizes every signal frame for it, and a host's 8 KiB sigaltstack() fails), is
 * made by the first ccopt_cpu_have() of a feature that needs it (AMX_TILE and
 * what implies it): by a dispatcher with an AMX version, by
 * ccopt_cpu_features_text(), or by the caller; never by a library without AMX
 * code.  A feature masked by CCOPT_DISABLE_CPU_FEATURES is never requested.
 *
 * Symbols: every function is declared with CCOPT_CPU_API, by default hidden
 * visibility on ELF and Mach-O (GCC, Clang), so a shared library linking
 * libccopt_cpu exports nothing of it and calls its own copy directly; two
 * libraries with different tables in one process each answer with their own.
 *
 * Compile-time knobs: CCOPT_CPU_CHECK_BASELINE (an executable stops before
 * main() with ccopt_cpu_baseline_message() on a CPU below its baseline; set by
 * the Meson glue); CCOPT_CPU_BASELINE_OPTION (the option that message names,
 * "-Dccopt-meson:cpu-baseline" by default); CCOPT_CPU_BASELINE_CAUSE and CCOPT_CPU_BASELINE_CURE (what set
 * the baseline, the change that lowers it: set by the Meson glue); CCOPT_CPU_API (declaration prefix; define it empty to
 * export the functions); CCOPT_CPU_NO_GETAUXVAL (always read /proc/self/auxv
 * on Linux); CCOPT_CPU_QUIET (no message about the environment variables on
 * stderr, for a library that must not write to its host's: the Meson option
 * runtime-messages=false).  ccopt_cpu_no_version() still says why it aborts.
 */
#ifndef CCOPT_CPU_H
#define CCOPT_CPU_H

#include <stddef.h>

#include "ccopt_cpu_table.h"

#ifndef CCOPT_CPU_API
#if (defined(__GNUC__) || defined(__clang__)) && !defined(_WIN32) && !defined(__CYGWIN__)
#define CCOPT_CPU_API __attribute__((visibility("hidden")))
#else
#define CCOPT_CPU_API /* PE/COFF: nothing is exported without __declspec(dllexport) */
#endif
#endif

#ifndef CCOPT_CPU_BASELINE_OPTION
#define CCOPT_CPU_BASELINE_OPTION "-Dccopt-meson:cpu-baseline"
#endif
/* What set the baseline and what lowers it, in the below-baseline line; the Meson glue defines both from
 * the build's own request ("set by -march=haswell in c_args", "build it with a lower CPU (or none) in
 * c_args"). */
#ifndef CCOPT_CPU_BASELINE_CAUSE
#define CCOPT_CPU_BASELINE_CAUSE "set by " CCOPT_CPU_BASELINE_OPTION
#endif
#ifndef CCOPT_CPU_BASELINE_CURE
#define CCOPT_CPU_BASELINE_CURE "build it with a lower baseline, e.g. " CCOPT_CPU_BASELINE_OPTION "=detect"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Detect once.  Thread-safe and idempotent: every call returns the first
 * result.  0 on success; non-zero when the running CPU lacks a feature of the
 * baseline the build was compiled for (see ccopt_cpu_baseline_missing()). */
CCOPT_CPU_API int ccopt_cpu_init(void);

/* The baseline features (with what they imply) this CPU lacks, space
 * separated in interest order; "" when none.  Auto-initializes. */
CCOPT_CPU_API const char *ccopt_cpu_baseline_missing(void);

/* One line for a user (no newline) when this CPU lacks a baseline feature, else NULL:
 *   ccopt: this CPU lacks ... AVX2 X86_V3, which this build requires (its CPU baseline, set by
 *   -march=haswell in c_args); to run here, build it with a lower CPU (or none) in c_args
 * A shared library or Python extension calls it before any baseline code runs and reports it its
 * host's way (an ImportError); an executable built by the Meson glue checks it before main()
 * (CCOPT_CPU_CHECK_BASELINE).  Auto-initializes. */
CCOPT_CPU_API const char *ccopt_cpu_baseline_message(void);

/* 1 when the feature is usable, after the environment masks; 0 otherwise,
 * including ids of other architectures and out-of-range ids.  Auto-initializes. */
CCOPT_CPU_API int ccopt_cpu_have(int feature_id);
/* NAME is pasted as written, never expanded: the generated dispatch headers' checks hand it every target's
 * members, and a feature may be named like a macro of the C library (EOF). */
#define CCOPT_CPU_HAVE(NAME) ccopt_cpu_have(CCOPT_CPU_F_##NAME)
/* The id of a feature: CCOPT_CPU_ID(AVX2) is the enum constant CCOPT_CPU_F_AVX2.  Every identifier made
 * from a feature name begins CCOPT_CPU_F_ (or CCOPT_CPU_BASE_F_), where no fixed name of the run-time
 * lies, so any name a features file may hold (API, MACHINE, TABLE_H, ...) is a feature like any other. */
#define CCOPT_CPU_ID(NAME) CCOPT_CPU_F_##NAME

/* Every id of every architecture: 0 <= id < ccopt_cpu_count() == CCOPT_CPU_MAX_FEATURE. */
CCOPT_CPU_API int ccopt_cpu_count(void);
/* "AVX2" for CCOPT_CPU_ID(AVX2); NULL when out of range. */
CCOPT_CPU_API const char *ccopt_cpu_name(int id);
/* The id of a name (case-insensitive), or -1. */
CCOPT_CPU_API int ccopt_cpu_id(const char *name);
/* 1 when the id is a feature of the architecture this file was compiled for. */
CCOPT_CPU_API int ccopt_cpu_on_arch(int id);

/* The architecture this file was compiled for: "x86_64", "aarch64", ...,
 * "unknown" when the feature tables do not know it. */
CCOPT_CPU_API const char *ccopt_cpu_arch(void);

/* The usable features of this architecture, space separated in interest
 * order, written to buf (always NUL-terminated when len > 0, truncated when
 * too small).  Returns the length of the whole text, as snprintf does. */
CCOPT_CPU_API int ccopt_cpu_features_text(char *buf, size_t len);

/* The level of this CPU: on x86_64 the highest usable x86-64 psABI level
 * (CCOPT_CPU_ID(X86_V2) .. CCOPT_CPU_ID(X86_V4)); on other architectures the highest
 * usable feature in interest order (e.g. CCOPT_CPU_ID(ASIMDDP), CCOPT_CPU_ID(VSX3));
 * -1 when none is usable. */
CCOPT_CPU_API int ccopt_cpu_level(void);

/* Called by CCOPT_DISPATCH_DEFINE when no compiled version of NAME runs on this
 * CPU (its dispatch source has no `baseline` target, or optimization is
 * disabled): prints one line naming the function and the CPU's features on
 * stderr and aborts, instead of calling a null pointer. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noreturn))
#elif defined(_MSC_VER)
__declspec(noreturn)
#endif
CCOPT_CPU_API void ccopt_cpu_no_version(const char *name);

/* Called by CCOPT_DISPATCH_DEFINE on the first call of NAME, once it picked the version for TARGET: with
 * the environment variable CCOPT_TRACE set (to anything but "" or "0") it prints one line on stderr,
 * "ccopt: dot: FMA3__AVX2 (FMA3 AVX2 present)" or "ccopt: dot: BASELINE (no compiled version above the
 * baseline runs on this CPU)"; otherwise nothing.  Later calls never reach it: tracing costs nothing per
 * call, and works in release builds. */
CCOPT_CPU_API void ccopt_cpu_trace(const char *name, const char *target);

/* Test seam: pretend the CPU and OS report exactly the features with
 * have[id] != 0 (an array of CCOPT_CPU_MAX_FEATURE flags), then apply the
 * implication closure, the baseline check and the environment masks as for a
 * real CPU.  A feature whose state the OS grants on request (Linux AMX) counts
 * as granted for have[id] == 1; with have[id] == 2 its first query makes the
 * real request, as for a real CPU.  NULL goes back to real detection.  Not
 * thread-safe: call it before other threads query features. */
CCOPT_CPU_API void ccopt_cpu_set_for_test(const unsigned char *have);

#ifdef __cplusplus
}
#endif

#endif /* CCOPT_CPU_H */
