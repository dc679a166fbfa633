/*
 * zlib-ng's ARM_CRC32 kernels (zlib-ng's CMake builds them with: -march=armv8-a+crc).
 * This file only names the ccopt target they are built for; meson.build compiles zlib-ng's own
 * sources of the group with that target's flags, and zng_cpu_features.c asks the generated
 * crc32.dispatch.h whether the running CPU can run the target.
 * @targets $keep_baseline crc32
 */
