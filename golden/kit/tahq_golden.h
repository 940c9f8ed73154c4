/* SPDX-License-Identifier: MIT */
/* tahq_golden.h - the conformance kit (golden/README.md) as a library: the
 * golden set generator (`tahq golden-gen`) and the conformance runner
 * (`tahq conform`). The tahq program parses the options and calls these;
 * each returns the process exit status (0 ok, 1 runtime error or failed
 * check, 2 usage) after printing its report or a one-line error. */
#ifndef TAHQ_GOLDEN_H
#define TAHQ_GOLDEN_H

/* The set golden-gen writes without --set. */
#define GOLDEN_DEFAULT_SET "v1"

/* 1 if set is one the generator writes: "v1", "v2", "v3" or "v4". */
int golden_set_known(const char *set);
/* Write golden set `set` into dir (created if absent): manifest.json,
 * inputs/, expected/, byte for byte the same on every correct libtahq. */
int golden_generate(const char *dir, const char *set);

/* Case kinds of a manifest, as a bit set for the selection. */
enum {
    CONFORM_KIND_ENCODE = 1,
    CONFORM_KIND_ENCODE_ERROR = 2,
    CONFORM_KIND_DECODE_ERROR = 4,
    CONFORM_KIND_PAPER_V1 = 8,
    CONFORM_KIND_DECODE = 16,
    CONFORM_KIND_PAPER_V1_DECODE = 32,
    CONFORM_KIND_ALL = 63
};
/* The bit of a kind name ("encode", "paper_v1_decode", ...), 0 if unknown. */
unsigned conform_kind_bit(const char *kind);

/* At most this many of each repeatable selection option. */
#define CONFORM_MAX_SEL 64
/* A candidate that never ends must not hold up CI for ever: without
 * --timeout each case gets this many seconds (TAHQ_CONFORM_TIMEOUT
 * overrides the default, for CI machines that know their candidate). */
#define CONFORM_DEFAULT_TIMEOUT 300.0

/* The report shows this many last lines of a failed candidate's stderr. */
#define CONFORM_TAIL_LINES 5

/* What `tahq conform` was asked to do (its --help says what each means). */
typedef struct conform_options {
    const char *vectors, *candidate, *run, *workdir, *junit;
    const char *cases[CONFORM_MAX_SEL], *excludes[CONFORM_MAX_SEL], *flags[CONFORM_MAX_SEL],
        *xflags[CONFORM_MAX_SEL];
    int ncases, nexcludes, nflags, nxflags;
    unsigned kinds; /* 0: every kind */
    int json, tap, tolerance, check_only, verbose, progress;
    int jobs;
    double timeout; /* per case */
} conform_options;

/* Check the candidate against the set (exactly one of candidate, run and
 * check_only set, as the option parser ensures). */
int conform_main(const conform_options *o);

#endif
