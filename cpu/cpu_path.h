/* SPDX-License-Identifier: MIT */
/* cpu_path.h - which instruction set the CPU codec's fast paths use
 * (implemented in fast_tile.c, beside the CPU feature checks).
 *
 *   scalar  the reference's functions (ref/), what TAHQ_SCALAR_ONLY builds
 *   avx2    AVX2, BMI2, F16C (fast_tile.c, fast_encode.c, fast_gain.c)
 *   avx512  the avx2 path with 16-lane forms of the hot loops (the token
 *           entropy, the tile phase's nearest codes, the decoder's tiles:
 *           encode_avx512.h, decode_avx512.h); adds AVX-512 F, BW, DQ, VL
 *
 * Every path writes the same bytes and floats as the reference. The path in
 * use is the best the CPU and build support, or the one the environment
 * variable TAHQ_CPU_PATH names (scalar, avx2, avx512; a path the CPU lacks
 * gives the best below it), read once at the first use; tahq_cpu_path_set
 * changes it (tests, the bench). Each fast entry reads the path when it is
 * called (all paths give the same bytes: a change during a parallel encode
 * changes only its speed); the parallel encoder decides at its start
 * whether the fast paths run at all. Not public. */
#ifndef TAHQ_CPU_PATH_H
#define TAHQ_CPU_PATH_H

typedef enum tahq_cpu_path {
    TAHQ_CPU_SCALAR = 0,
    TAHQ_CPU_AVX2 = 1,
    TAHQ_CPU_AVX512 = 2,
} tahq_cpu_path;

#define TAHQ_CPU_PATH_COUNT 3

/* The best path this CPU and build support. */
tahq_cpu_path tahq_cpu_path_best(void);

/* The path in use. */
tahq_cpu_path tahq_cpu_path_get(void);

/* Use path p from now on: 1, or 0 (nothing changed) if p is above
 * tahq_cpu_path_best(). */
int tahq_cpu_path_set(tahq_cpu_path p);

/* "scalar", "avx2", "avx512" */
const char *tahq_cpu_path_name(tahq_cpu_path p);

/* The path named s: 1 and *p set, or 0. */
int tahq_cpu_path_parse(const char *s, tahq_cpu_path *p);

/* How many times code of path p ran in the entries that have a form per
 * path (a row's entropy, a run of tiles of the encoder or the decoder, an
 * 8-value log2): the tests' proof that the path they chose is the one
 * that ran. tahq_cpu_path_count adds one (relaxed atomic). */
void tahq_cpu_path_count(tahq_cpu_path p);
unsigned long long tahq_cpu_path_runs(tahq_cpu_path p);

#endif
