/* SPDX-License-Identifier: MIT */
/* conform.h - the parts of the conformance runner (conform.c, `tahq conform`,
 * golden/README.md): the message comparison by field (conform_diff.c), the
 * paper_v1 tie rule (conform_pv1.c), running the candidate and the text of
 * the TAP and JUnit reports (conform_run.c). */
#ifndef TAHQ_GOLDEN_CONFORM_H
#define TAHQ_GOLDEN_CONFORM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "tahq.h"
#include "tahq_paper_v1.h"
#include "tahq_golden.h"
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

/* What one run of the candidate did. */
typedef struct conform_run {
    int ran;    /* 1 once the command was started */
    int exited; /* 1: exit status in status; 0: killed by signal sig */
    int status, sig;
    int timed_out; /* killed by conform after --timeout */
    double seconds;
    uint64_t stderr_bytes; /* how much it wrote on stderr (only a bounded part is kept) */
    char op[8];            /* "encode" or "decode" */
    char word[64];         /* first err_* word of its stderr, or "(none)" */
    char tail[CONFORM_TAIL_LINES * 160 + 8]; /* its last lines of stderr (printable) */
} conform_run;

/* "exited with status 3", "was killed by signal 11 (SIGSEGV)", "did not finish
 * within 2 s (TIMEOUT: ...)", "was not run (...)". */
void conform_run_text(const conform_run *r, double timeout, char *buf, size_t n);
/* 1 if the run failed: a non-zero exit status, a signal or a timeout. */
int conform_run_failed(const conform_run *r);
/* 1 if it crashed: killed by a signal, or an exit status 129..192, which a
 * shell (the /bin/sh -c that runs it) gives for a child killed by one. */
int conform_run_crashed(const conform_run *r);

/* One candidate command of a case: argument text appended to the --run
 * command; its stderr is read through a pipe into result. */
typedef struct conform_cmd {
    char *args;
    conform_run *result;
} conform_cmd;

#define CONFORM_JOBS_MAX 256

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

/* A private temporary directory under $TMPDIR (or /tmp), named
 * tahq-conform-PID-XXXXXX; the folders of earlier conforms whose process is
 * gone (killed by SIGKILL) are removed first. And its removal with
 * everything in it, subfolders included, following no link. */
int conform_tmpdir(char *buf, size_t n);
void conform_rmtree(const char *dir);
/* A new folder tmp/case-XXXXXX for one case's input copies: made now, so
 * the candidate cannot have put anything there. 0 or -1. */
int conform_case_dir(const char *tmp, char *buf, size_t n);

/* Read a file of at most cap bytes: only a regular file (never waits on a
 * FIFO or reads a device), with nofollow not through a symbolic link.
 * 0, or -1 with the reason in err ("is not a regular file", ...) and
 * errno ENOENT exactly when nothing is at path (never a stale errno). */
int conform_read_capped(const char *path, int nofollow, uint64_t cap, uint8_t **data, size_t *len,
                        char *err, size_t n);
/* Copy a set file of at most `bytes` bytes to a new file `to` (O_EXCL,
 * O_NOFOLLOW). 0 or -1. */
int conform_copy_in(const char *from, uint64_t bytes, const char *to);
/* Replace path by a new file holding text and a newline, never writing
 * through a link the candidate put there. 0 or -1. */
int conform_write_text(const char *path, const char *text);
/* Kill (SIGKILL) and reap every descendant of conform outside the given
 * sessions: what a candidate left running (also after setsid, since conform
 * is a child subreaper). Returns how many were killed. */
int conform_kill_strays(const pid_t *keep_sessions, int nkeep);

/* ---------------------------------------------------------------- reports */

/* Text made safe for JSON, XML and YAML: printable ASCII, valid UTF-8,
 * newline and tab; any other byte becomes '?'. In place. */
void conform_sanitize(char *s);
/* XML text with &, <, >, " and ' escaped. */
void conform_xml_str(FILE *f, const char *s);
/* A double-quoted YAML (and JSON) string. */
void conform_yaml_str(FILE *f, const char *s);

#endif
