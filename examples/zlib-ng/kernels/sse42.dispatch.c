/*
 * zlib-ng's X86_SSE42 kernels (zlib-ng's CMake builds them with: -msse4.2).
 * This file only names the ccopt target they are built for; meson.build compiles zlib-ng's own
 * sources of the group with that target's flags, and zng_cpu_features.c asks the generated
 * sse42.dispatch.h whether the running CPU can run the target.
 * @targets $keep_baseline sse42_isa
 */
