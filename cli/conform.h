/* conform.h - the parts of `tahq conform` (golden/README.md): the message
 * comparison by field (conform_diff.c), running the candidate
 * (conform_run.c) and the TAP and JUnit reports (conform_out.c). */
#ifndef TAHQ_CLI_CONFORM_H
#define TAHQ_CLI_CONFORM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tahq.h"
#include "tahq_paper_v1.h"
#include "tahq_spec.h"

/* ---------------------------------------------------------------- diff */

/* Compare a candidate's format-1 message got[glen] with the expected one.
 * Returns 1 if byte-identical. Otherwise detail gets the first difference
 * by field: a header field other than the CRC first, then the first
 * differing payload field (section, tile, element, both values), then the
 * length; header.crc only when everything else is identical. *field gets
 * "header.<name>", "precision_map", "gate_flags", "zero_points", "scales",
 * "codes", "pivots" or "length"; *tile the tile or -1. */
int conform_diff_message(const uint8_t *exp, size_t elen, const uint8_t *got, size_t glen,
                         char *detail, size_t n, const char **field, int64_t *tile);

/* paper_v1 (conform_pv1.c): the candidate's message got[glen], whose token
 * bitmap differs from the expected one, for input x: 1 if its low tokens are
 * a lowest-entropy selection within the entropy tolerance and its other
 * fields are within the paper_v1 tolerance of the reference at its
 * bit-widths. detail says why; *field the failing field or NULL. */
int conform_pv1_ties(const tahq_paper_v1_config *cfg, const tahq_shape *sh, const float *x,
                     const uint8_t *got, size_t glen, char *detail, size_t n, const char **field);

/* ---------------------------------------------------------------- running */

#define CONFORM_TAIL_LINES 5

/* What one run of the candidate did. */
typedef struct conform_run {
    int ran;       /* 1 once the command was started */
    int exited;    /* 1: exit status in status; 0: killed by signal sig */
    int status, sig;
    int timed_out; /* killed by conform after --timeout */
    double seconds;
    char op[8];                /* "encode" or "decode" */
    char word[64];             /* first err_* word of its stderr, or "(none)" */
    char tail[CONFORM_TAIL_LINES * 160 + 8]; /* its last lines of stderr (printable) */
} conform_run;

/* "exited with status 3", "was killed by signal 11 (SIGSEGV)", "did not finish
 * within 2 s (TIMEOUT: ...)", "was not run (...)". */
void conform_run_text(const conform_run *r, double timeout, char *buf, size_t n);
/* 1 if the run failed: a non-zero exit status, a signal or a timeout. */
int conform_run_failed(const conform_run *r);

/* One candidate command of a case: argument text appended to the --run
 * command, with its stderr going to stderr_path. */
typedef struct conform_cmd {
    char *args;
    char *stderr_path;
    conform_run *result;
} conform_cmd;

/* Block SIGINT, SIGTERM, SIGHUP, SIGPIPE and SIGCHLD and catch them: a
 * termination signal is then noticed by conform_sched_wait, which kills
 * the running candidates. 0 or -1. */
int conform_signals_begin(void);
/* Restore the signal mask and handlers; returns the termination signal
 * received (0 if none). */
int conform_signals_end(void);
/* The termination signal received so far, 0 if none. */
int conform_signal_pending(void);
/* Die by signal sig (after cleaning up): the default action, raised. */
void conform_die_by_signal(int sig);

/* The scheduler: runs the commands of up to `jobs` cases at once, each
 * case's commands one after the other under a shared deadline of
 * `timeout` seconds (0: none), every command in its own process group
 * (`/bin/sh -c 'CMD ARGS'`, stdin and stdout /dev/null). */
typedef struct conform_sched conform_sched;
conform_sched *conform_sched_new(const char *cmd, int jobs, double timeout);
void conform_sched_free(conform_sched *s);
/* Start case `id` with its commands (they are copied). 0 or -1. */
int conform_sched_start(conform_sched *s, size_t id, const conform_cmd *cmds, int ncmds);
/* Number of cases started and not yet finished. */
int conform_sched_running(const conform_sched *s);
/* Wait until a case finishes (returns its id >= 0), or a termination
 * signal arrives (returns -1 after killing every running process group).
 * Only to be called while some case is running. */
long conform_sched_wait(conform_sched *s);

/* The command line's first word (after VAR=value assignments) can be run,
 * and the script after an interpreter (sh, bash, python3, ...) exists.
 * Returns 0, or -1 with a message in err. */
int conform_check_command(const char *cmd, char *err, size_t n);

/* A private temporary directory under $TMPDIR (or /tmp) and its removal
 * with everything in it (flat: files only). */
int conform_tmpdir(char *buf, size_t n);
void conform_rmtree(const char *dir);

/* Copy a file (0 or -1). */
int conform_copy_file(const char *from, const char *to);

/* ---------------------------------------------------------------- reports */

/* Text made safe for JSON, XML and YAML: printable ASCII, valid UTF-8,
 * newline and tab; any other byte becomes '?'. In place. */
void conform_sanitize(char *s);
/* XML text with &, <, >, " and ' escaped. */
void conform_xml_str(FILE *f, const char *s);
/* A double-quoted YAML (and JSON) string. */
void conform_yaml_str(FILE *f, const char *s);

#endif
