/*
 * zlib-ng's X86_SSSE3 kernels (zlib-ng's CMake builds them with: -mssse3).
 * This file only names the ccopt target they are built for; meson.build compiles zlib-ng's own
 * sources of the group with that target's flags, and zng_cpu_features.c asks the generated
 * ssse3.dispatch.h whether the running CPU can run the target.
 * @targets $keep_baseline ssse3
 */
