/*
 * zlib-ng's X86_AVX512 kernels (zlib-ng's CMake builds them with: -mavx512f -mavx512dq -mavx512bw -mavx512vl -mbmi2).
 * This file only names the ccopt target they are built for; meson.build compiles zlib-ng's own
 * sources of the group with that target's flags, and zng_cpu_features.c asks the generated
 * avx512.dispatch.h whether the running CPU can run the target.
 * @targets $keep_baseline (avx512dq avx512bw avx512vl bmi2)
 */
