/* SPDX-License-Identifier: MIT */
/* cmd_conform.c - tahq conform: the options; the conformance runner itself is
 * in the conformance kit (golden/kit/tahq_golden.h, conform_main). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "tahq_golden.h"
#include "util.h"

/* ---------------------------------------------------------------- command */

static void help(void)
{
    printf("usage: tahq conform --vectors DIR (--candidate DIR | --run CMD | --check) [options]\n"
           "Check another implementation against a golden vector set (golden/README.md).\n"
           "  --vectors DIR      the set (DIR/manifest.json, inputs/, expected/)\n"
           "  --candidate DIR    judge files the candidate produced: ID.bin (encode), ID.npy\n"
           "                     (decode of the expected or the input message), ID.err (status "
           "name of\n"
           "                     an invalid case)\n"
           "  --run CMD          run the candidate: 'CMD encode IN.npy OUT.bin --config JSON'\n"
           "                     and 'CMD decode IN.bin OUT.npy' (paper_v1 and\n"
           "                     paper_v1_decode cases add\n"
           "                     --config JSON --shape BxSxC) with /bin/sh, stdin and stdout\n"
           "                     /dev/null; a failure exits non-zero and names the status\n"
           "                     (err_crc, ...) on stderr. IN is a private copy of the\n"
           "                     set's file. A command or script that does not exist (also\n"
           "                     behind env, nice, ... or interpreter options), or a first\n"
           "                     case that fails with exit status 126/127 or a script\n"
           "                     that cannot be opened, is one error (exit 2). The candidate\n"
           "                     is untrusted: it runs in its own session, which is killed\n"
           "                     with whatever it started (setsid children too) when its\n"
           "                     case ends; its outputs are read only as regular files (no\n"
           "                     links, FIFOs or devices) of at most twice their expected\n"
           "                     size; of its stderr the first 64 KiB and last 4 KiB are\n"
           "                     kept; a crash (a signal, or a shell's exit status 129..192)\n"
           "                     fails the case even after the right output\n"
           "  --check            only validate the manifest and every file's size and sha256\n"
           "selection (every case by default; repeatable; a case must match one --case,\n"
           "one --kind or --profile and one --flag if given, and no --exclude or\n"
           "--exclude-flag):\n"
           "  --case TEXT        the cases whose id contains TEXT\n"
           "  --exclude TEXT     not the cases whose id contains TEXT\n"
           "  --flag FLAG        the cases with the manifest flag FLAG (bits_8, tie_entropy,\n"
           "                     ...)\n"
           "  --exclude-flag FLAG  not the cases with FLAG (e.g. bits_8 for a codec\n"
           "                     limited to 7 bits)\n"
           "  --kind KIND        the cases of kind encode, encode_error, decode_error,\n"
           "                     decode, paper_v1 or paper_v1_decode\n"
           "  --profile NAME     format1 (kinds encode, encode_error, decode_error, decode)\n"
           "                     or paper-v1 (kinds paper_v1, paper_v1_decode)\n"
           "judgement:\n"
           "  --tolerance        also judge non-bit-exact candidates: values within the\n"
           "                     SPEC 6 bound, header fields and error codes exact; the exit\n"
           "                     status then follows the tolerant verdict, and a case that\n"
           "                     passes only so is headed TOLERANT\n"
           "running (--run only):\n"
           "  --jobs N           run N cases at once (1..256, default 1); the output is in\n"
           "                     case order and the same for every N\n"
           "  --timeout SECONDS  per case (its encode and decode together; default 300, or\n"
           "                     $TAHQ_CONFORM_TIMEOUT): the candidate's session is killed,\n"
           "                     the case fails as TIMEOUT\n"
           "  --workdir DIR      where the candidate's outputs go, kept afterwards (default:\n"
           "                     the private temporary folder, removed at the end and on\n"
           "                     SIGINT, SIGTERM, SIGHUP; that of a conform killed by\n"
           "                     SIGKILL is removed by the next conform); not inside the set\n"
           "output:\n"
           "  --json             one JSON object on stdout instead of the text report\n"
           "  --tap              TAP version 13 on stdout instead of the text report\n"
           "  --junit FILE       also write a JUnit XML report to FILE (atomically)\n"
           "  -v                 print passing cases too (text report)\n"
           "  --progress         a line on stderr per tenth of the cases (or 10 s) with the\n"
           "                     time left (the default when stderr is a terminal)\n"
           "The text report prints a block per case that is not an exact pass, headed\n"
           "FAIL, TIMEOUT or TOLERANT (with -v also PASS), then the summary. A failed\n"
           "candidate run shows its exit status (or signal) and the last %d lines of its\n"
           "stderr. Options other than the selection ones may be given once.\n"
           "Exit status: 0 every selected case passed, 1 a case failed or the set is\n"
           "damaged, 2 usage error or an error of conform's own (bad option, missing set\n"
           "folder or candidate, a candidate command that cannot be run, no case selected,\n"
           "a --flag or --exclude-flag that no case has, a --junit file or temporary folder\n"
           "that cannot be written); killed by a signal:\n"
           "that signal, after the temporary folder is removed.\n",
           CONFORM_TAIL_LINES);
}

/* SECONDS: a decimal number > 0 and <= 1 week. */
static int parse_seconds(const char *s, double *v)
{
    if (!s || !*s || strspn(s, "0123456789.") != strlen(s) || strchr(s, '.') != strrchr(s, '.'))
        return -1;
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    if (errno || *end || !(d > 0) || d > 604800)
        return -1;
    *v = d;
    return 0;
}

/* ---------------------------------------------------------------- main */

#define USAGE(...) cli_fail(EXIT_USAGE, __VA_ARGS__)

/* a value given once, not empty (dst: const char **) */
static int opt_once(const cli_option *opt, const char *v)
{
    if (!*v)
        return USAGE("%s needs a non-empty value", opt->name), -1;
    *(const char **)opt->dst = v;
    return 0;
}

/* the repeatable selections: --case, --exclude, --flag, --exclude-flag */
typedef struct sel_list {
    const char **v;
    int *n;
    int case_flag; /* values are case flags: a-z, 0-9, '_' */
} sel_list;

static int opt_select(const cli_option *opt, const char *v)
{
    const sel_list *l = opt->dst;
    if (!*v)
        return USAGE("%s needs a non-empty value", opt->name), -1;
    if (l->case_flag && strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(v))
        return USAGE("%s '%s': a case flag is made of a-z, 0-9 and '_'", opt->name, v), -1;
    if (*l->n >= CONFORM_MAX_SEL)
        return USAGE("at most %d %s options", CONFORM_MAX_SEL, opt->name), -1;
    l->v[(*l->n)++] = v;
    return 0;
}

static int opt_kind(const cli_option *opt, const char *v)
{
    unsigned b = conform_kind_bit(v);
    if (!b)
        return USAGE("--kind '%s': not a case kind (encode, encode_error, decode_error, "
                     "decode, paper_v1, paper_v1_decode)",
                     v),
               -1;
    *(unsigned *)opt->dst |= b;
    return 0;
}

static int opt_profile(const cli_option *opt, const char *v)
{
    unsigned *kinds = opt->dst;
    if (strcmp(v, "format1") == 0)
        *kinds |= CONFORM_KIND_ENCODE | CONFORM_KIND_ENCODE_ERROR | CONFORM_KIND_DECODE_ERROR |
                  CONFORM_KIND_DECODE;
    else if (strcmp(v, "paper-v1") == 0)
        *kinds |= CONFORM_KIND_PAPER_V1 | CONFORM_KIND_PAPER_V1_DECODE;
    else
        return USAGE("--profile '%s': not a profile (format1, paper-v1)", v), -1;
    return 0;
}

static int parse_args(int argc, char **argv, conform_options *o)
{
    memset(o, 0, sizeof *o);
    o->jobs = 1;
    const char *jobs_s = NULL, *timeout_s = NULL;
    sel_list cases = {o->cases, &o->ncases, 0}, excludes = {o->excludes, &o->nexcludes, 0},
             flags = {o->flags, &o->nflags, 1}, xflags = {o->xflags, &o->nxflags, 1};
    const cli_option own[] = {CLI_OPT("--vectors", opt_once, &o->vectors),
                              CLI_OPT("--candidate", opt_once, &o->candidate),
                              CLI_OPT("--run", opt_once, &o->run),
                              CLI_OPT("--workdir", opt_once, &o->workdir),
                              CLI_OPT("--junit", opt_once, &o->junit),
                              CLI_OPT("--jobs", opt_once, &jobs_s),
                              CLI_OPT("--timeout", opt_once, &timeout_s),
                              CLI_OPT_REPEAT("--case", opt_select, &cases),
                              CLI_OPT_REPEAT("--exclude", opt_select, &excludes),
                              CLI_OPT_REPEAT("--flag", opt_select, &flags),
                              CLI_OPT_REPEAT("--exclude-flag", opt_select, &xflags),
                              CLI_OPT_REPEAT("--kind", opt_kind, &o->kinds),
                              CLI_OPT_REPEAT("--profile", opt_profile, &o->kinds),
                              CLI_FLAG("--json", &o->json),
                              CLI_FLAG("--tap", &o->tap),
                              CLI_FLAG("--tolerance", &o->tolerance),
                              CLI_FLAG("--check", &o->check_only),
                              CLI_FLAG("-v", &o->verbose),
                              CLI_FLAG("--progress", &o->progress),
                              CLI_END};
    const cli_option *const tables[] = {own, NULL};
    int npos = 0;
    int rc = cli_parse(argc, argv, tables, NULL, 0, &npos);
    if (rc == CLI_HELP) {
        help();
        return -1;
    }
    if (rc)
        return rc;
    if (!o->vectors)
        return USAGE("need --vectors DIR (see tahq conform --help)");
    if (!!o->candidate + !!o->run + o->check_only != 1)
        return USAGE("need exactly one of --candidate, --run, --check");
    if (jobs_s) {
        uint32_t j;
        if (cli_parse_u32(jobs_s, 256, &j) || j < 1)
            return USAGE("--jobs '%s': need a whole number from 1 to 256", jobs_s);
        o->jobs = (int)j;
    }
    if (timeout_s && parse_seconds(timeout_s, &o->timeout))
        return USAGE("--timeout '%s': need a number of seconds > 0 (at most 604800)", timeout_s);
    const char *env_timeout = getenv("TAHQ_CONFORM_TIMEOUT");
    if (!timeout_s && env_timeout && *env_timeout && parse_seconds(env_timeout, &o->timeout))
        return USAGE("TAHQ_CONFORM_TIMEOUT='%s': need a number of seconds > 0 (at most 604800)",
                     env_timeout);
    if (o->timeout == 0)
        o->timeout = CONFORM_DEFAULT_TIMEOUT;
    if (!o->json && !o->tap && isatty(STDERR_FILENO))
        o->progress = 1;
    if (!o->run && (jobs_s || timeout_s || o->workdir))
        return USAGE("%s applies to --run only", jobs_s      ? "--jobs"
                                                 : timeout_s ? "--timeout"
                                                             : "--workdir");
    if (o->check_only && o->progress && !isatty(STDERR_FILENO))
        return USAGE("--progress applies to --run and --candidate");
    if (o->json && o->tap)
        return USAGE("--json and --tap both write to stdout: give one");
    if (o->check_only && (o->ncases || o->nexcludes || o->nflags || o->nxflags || o->kinds ||
                          o->tolerance || o->tap || o->junit || o->verbose))
        return USAGE("--check validates the whole set: selection, judgement and report options "
                     "do not apply");
    return 0;
}

int cmd_conform(int argc, char **argv)
{
    conform_options o;
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc < 0 ? 0 : rc;
    return conform_main(&o);
}
