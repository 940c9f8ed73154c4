/* SPDX-License-Identifier: MIT */
/* util.h - shared helpers of the tools (the tahq program, the conformance
 * kit, tests and fuzzers): error output,
 * option parsing, number parsing, whole-file reading, atomic file writing,
 * JSON output and timing. */
#ifndef TAHQ_SUPPORT_UTIL_H
#define TAHQ_SUPPORT_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include <jansson.h>

#include "tahq.h"
#include "../common/tahq_options.h"

#include "tahq_version.h"
#define TAHQ_CLI_VERSION TAHQ_VERSION_STRING

/* Exit codes. */
#define EXIT_OK 0
#define EXIT_RUNTIME 1 /* files, data, library errors, failed checks */
#define EXIT_USAGE 2   /* command line cannot be parsed, option value out of range */

/* A status outside tahq_status for "out of memory" in CLI helpers. */
#define CLI_ERR_NOMEM 100

#if defined(__GNUC__)
#define CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CLI_PRINTF(a, b)
#endif

/* The command name used as prefix of error messages ("tahq encode: ..."). */
void cli_set_command(const char *name);
const char *cli_command(void);

/* Print "tahq CMD: message" (one line) to stderr and return code. */
int cli_fail(int code, const char *fmt, ...) CLI_PRINTF(2, 3);
/* Text of a tahq_status or CLI_ERR_NOMEM. */
const char *cli_status_text(int status);

/* Command-line options: each command describes its options in tables and
 * parses its arguments in one loop (cli_parse), the option tables of
 * common/tahq_options.h under their strict rules.
 *
 * An option is a flag ("--json") or takes a value ("--tile 64" or
 * "--tile=64"). Without a handler, a flag sets *(int *)dst to 1 and a value
 * is kept in *(const char **)dst; a handler parses the value itself (into
 * opt->dst) and returns 0, or -1 after printing the error (cli_fail). An
 * option may be given once unless it is a CLI_OPT_REPEAT. A table ends with
 * CLI_END. */
typedef tahq_option cli_option;
typedef tahq_option_fn cli_opt_fn;
#define CLI_FLAG(name_, dst_)          \
    {                                  \
        .name = (name_), .dst = (dst_) \
    }
#define CLI_VALUE(name_, dst_)                         \
    {                                                  \
        .name = (name_), .arg = "VALUE", .dst = (dst_) \
    }
#define CLI_OPT(name_, fn_, dst_)                                    \
    {                                                                \
        .name = (name_), .arg = "VALUE", .set = (fn_), .dst = (dst_) \
    }
/* May be given more than once (the handler collects the values). */
#define CLI_OPT_REPEAT(name_, fn_, dst_)                                          \
    {                                                                             \
        .name = (name_), .arg = "VALUE", .set = (fn_), .dst = (dst_), .repeat = 1 \
    }
/* A value that may be left out ("--json" alone, last or followed by another
 * "--" option): the handler then gets "-" (standard output). */
#define CLI_OPT_OR_STDOUT(name_, fn_, dst_)                                          \
    {                                                                                \
        .name = (name_), .arg = "VALUE", .set = (fn_), .dst = (dst_), .omitted = "-" \
    }
#define CLI_END      \
    {                \
        .name = NULL \
    }
#define CLI_HELP (-1)
/* Parse argv[1..argc-1] against the tables (a NULL-terminated list): options
 * in any order, the other arguments into pos[0..max_pos-1] (*npos of them;
 * "-" is one). "--help" or "-h" stops the parse. Refused, with one line
 * "tahq CMD: ..." and EXIT_USAGE: an unknown option, an option given twice,
 * a value missing (the option is last, or followed by another "--" argument:
 * a value that starts with "--" is written --x=--v), a value given to a
 * flag, more than max_pos arguments, or a value its handler refuses.
 * Returns 0, CLI_HELP or EXIT_USAGE. */
int cli_parse(int argc, char **argv, const cli_option *const *tables, const char **pos, int max_pos,
              int *npos);
/* Handlers for the common value types (dst: uint32_t *, uint64_t *, const
 * char ** that must not be empty). cli_opt_u32_pos takes 1..UINT32_MAX. */
int cli_opt_u32_pos(const cli_option *opt, const char *val);
int cli_opt_u64(const cli_option *opt, const char *val);
int cli_opt_nonempty(const cli_option *opt, const char *val);
int cli_is_help(const char *arg);

/* Strict number parsing: whole string, no sign for unsigned, range checked.
 * Return 0 on success, -1 otherwise (nothing printed). */
int cli_parse_u64(const char *s, uint64_t *v);
int cli_parse_u32(const char *s, uint32_t max, uint32_t *v);
int cli_parse_float(const char *s, float *v); /* also "inf" */

/* 1 if path ends with suffix. */
int cli_has_suffix(const char *path, const char *suffix);

/* Read a whole file into a malloc'd buffer (*len bytes); "-" reads standard
 * input. Returns 0, or an exit code after printing an error naming the file.
 * The file is noted as an input (cli_note_input). */
int cli_read_file(const char *path, uint8_t **data, size_t *len);
/* The same for a format-1 message: from a pipe or device, reading stops
 * where the header says the message ends (one byte further, so that a
 * longer stream is still err_size), or after the magic or the header when
 * they are refused; a regular file is read whole. */
int cli_read_message(const char *path, uint8_t **data, size_t *len);
/* The same for an input of at most max bytes: of a pipe or device no more
 * than max + 1 bytes are read (the caller's parser refuses a longer one). */
int cli_read_file_max(const char *path, size_t max, uint8_t **data, size_t *len);

/* No output replaces an input. Every input file is noted when it is opened
 * (its device and inode, so "./x", an absolute path, a hard link or a
 * symlink to it are all the same file), and cli_out_open refuses an output
 * path that is the same file as a noted input. Returns 0, or an exit code
 * (printed) when there is no memory to keep the note. */
int cli_note_input(int fd, const char *path);
/* The noted input that is the same file as st, or NULL. */
const char *cli_same_input(const struct stat *st);

/* Atomic output: data goes to a temporary file in the directory of path,
 * which is renamed onto path by cli_out_commit; cli_out_abort (or a failed
 * write or commit) removes it, so no partial output is ever left behind.
 * cli_out_open refuses (nothing written, nothing removed):
 *   - an output that is the same file as an input of the command;
 *   - an output path that is a symbolic link (the rename would replace the
 *     link by a regular file; write to the link's target instead);
 *   - "-" when standard output is a terminal.
 * "-" is standard output, written directly; the command's own text goes
 * to standard error from then on. A device or pipe path (/dev/null, a FIFO)
 * is written directly as well. */
typedef struct cli_out {
    FILE *f;
    char *tmp_path;
    const char *path;
    int failed;
    int err; /* errno of the first failure */
} cli_out;
int cli_out_open(cli_out *o, const char *path); /* 0 or exit code (printed) */
/* The same for text output (JSON, CSV): "-" is standard output even when
 * that is a terminal. */
int cli_out_open_text(cli_out *o, const char *path);
void cli_out_write(cli_out *o, const void *data, size_t n); /* errors are kept for commit */
int cli_out_commit(cli_out *o);                             /* 0 or exit code (printed) */
void cli_out_abort(cli_out *o);
/* Write a whole buffer atomically. */
int cli_write_file(const char *path, const void *data, size_t n);
/* Create a directory and its missing parents (mkdir -p); 0 or -1. */
int cli_mkdir_p(const char *path);
/* Write v to a CSV file as %.10g, or nan, inf, -inf. */
void cli_csv_number(FILE *f, double v);

/* JSON output, built with jansson and written by cli_json_print: one line,
 * ", " and ": " separators, members in the order they were added, doubles
 * with 17 significant digits. The constructors return a new reference (or
 * NULL when out of memory, which json_pack's "o" and cli_json_print report). */
#define CLI_JSON_FLAGS (JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17))
json_t *cli_jstr(const char *s); /* bytes that are not UTF-8 become U+FFFD */
json_t *cli_jnum(double v);      /* null if not finite; an integer if integral, |v| < 2^53 */
json_t *cli_ju64(uint64_t v);    /* an integer, up to UINT64_MAX (see cli_json_text) */
/* Print v and a newline to f and release v: 0, or EXIT_RUNTIME (printed) if
 * v is NULL (out of memory while building it) or cannot be written. */
int cli_json_print(FILE *f, json_t *v);
/* v's text (malloc'd; v released), or NULL if v is NULL or out of memory;
 * the u64 values of cli_ju64 above INT64_MAX (beyond jansson's integers)
 * become bare numbers here: write JSON through cli_json_text, cli_json_put
 * or cli_json_print only.
 * For output streamed record by record (a long list on lines of their own),
 * cli_json_put writes pre, then v's text less its first character when
 * skip_open and its last when skip_close (the braces of an object whose
 * members continue the enclosing text); 0, or -1 when v could not be built
 * (nothing written). */
char *cli_json_text(json_t *v);
int cli_json_put(FILE *f, const char *pre, json_t *v, int skip_open, int skip_close);

/* Names of configuration values. */
const char *cli_alloc_name(tahq_alloc a);
/* Token and gain allocation: one precision-map bit per row (SPEC §4.2). */
static inline int cli_alloc_per_row(tahq_alloc a)
{
    return a == TAHQ_ALLOC_TOKEN || a == TAHQ_ALLOC_GAIN;
}
const char *cli_rounding_name(tahq_rounding r);
const char *cli_meta_name(tahq_meta m);
/* Short description "G=64 4/3 r=800 token tau=2 nearest fp16". */
void cli_config_text(const tahq_config *cfg, char *buf, size_t n);
/* {"tile", "hi_bits", "lo_bits", "hi_permille", "alloc", "tau" (number, or
 * "inf"), "rounding", "seed", "meta"}; [B, S, C]. */
json_t *cli_jconfig(const tahq_config *cfg);
json_t *cli_jshape(const tahq_shape *s);

/* Monotonic clock in seconds. */
double cli_now(void);

#endif
