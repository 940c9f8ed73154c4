/* SPDX-License-Identifier: MIT */
/*
 * test_options.c - the option parser of common/tahq_options.h, which all
 * three programs use: tahq-sim and tahq-train with the plain rules, the tahq
 * command (support/util.c cli_parse) with the strict ones. Each status is
 * produced where it should be, under both rule sets, with the argument it
 * stopped at; a control shows that the table of expectations is not
 * satisfied by a parse that ignores the rules.
 */
#include "tahq_options.h"
#include "tutil.h"

typedef struct parsed {
    int flag, help;
    const char *value, *opt_out;
    int repeats;
} parsed;

static int count_repeat(const tahq_option *opt, const char *val)
{
    (void)val;
    ++*(int *)opt->dst;
    return 0;
}

static int refuse_bad(const tahq_option *opt, const char *val)
{
    if (strcmp(val, "bad") == 0)
        return -1;
    *(const char **)opt->dst = val;
    return 0;
}

typedef struct expect {
    int strict;
    const char *args; /* space-separated */
    tahq_options_status st;
    int at; /* argv index it stopped at (when not OK) */
    int npos;
} expect;

static const expect cases[] = {
    {0, "--flag --value v", TAHQ_OPTIONS_OK, 0, 0},
    {1, "--flag --value v", TAHQ_OPTIONS_OK, 0, 0},
    {0, "--value=v", TAHQ_OPTIONS_UNKNOWN, 1, 0},
    {1, "--value=v", TAHQ_OPTIONS_OK, 0, 0},
    {0, "-x", TAHQ_OPTIONS_POSITIONAL, 1, 0},
    {1, "-x", TAHQ_OPTIONS_UNKNOWN, 1, 0},
    {1, "-", TAHQ_OPTIONS_OK, 0, 1},
    {1, "a b", TAHQ_OPTIONS_OK, 0, 2},
    {1, "a b c", TAHQ_OPTIONS_POSITIONAL, 3, 2},
    {0, "a", TAHQ_OPTIONS_POSITIONAL, 1, 0},
    {0, "--value v --value w", TAHQ_OPTIONS_OK, 0, 0},
    {1, "--value v --value w", TAHQ_OPTIONS_TWICE, 3, 0},
    {1, "--rep 1 --rep 2 --rep 3", TAHQ_OPTIONS_OK, 0, 0},
    {1, "--flag=1", TAHQ_OPTIONS_FLAG_VALUE, 1, 0},
    {0, "--value", TAHQ_OPTIONS_NO_VALUE, 1, 0},
    {1, "--value", TAHQ_OPTIONS_NO_VALUE, 1, 0},
    {0, "--value --flag", TAHQ_OPTIONS_OK, 0, 0},
    {1, "--value --flag", TAHQ_OPTIONS_NO_VALUE, 1, 0},
    {1, "--value=--flag", TAHQ_OPTIONS_OK, 0, 0},
    {1, "--out", TAHQ_OPTIONS_OK, 0, 0},
    {1, "--out --flag", TAHQ_OPTIONS_OK, 0, 0},
    {0, "--out", TAHQ_OPTIONS_NO_VALUE, 1, 0},
    {1, "--check bad", TAHQ_OPTIONS_BAD_VALUE, 1, 0},
    {0, "--check bad", TAHQ_OPTIONS_BAD_VALUE, 1, 0},
    {1, "--flag --help --bogus", TAHQ_OPTIONS_STOPPED, 2, 0},
    {1, "-h", TAHQ_OPTIONS_STOPPED, 1, 0},
    {1, "--help=1", TAHQ_OPTIONS_UNKNOWN, 1, 0},
    {1, "--bogus --help", TAHQ_OPTIONS_UNKNOWN, 1, 0},
};

static tahq_options_status parse(const expect *e, parsed *p, const char **pos, int *npos,
                                 tahq_options_at *at, int ignore_rules)
{
    const tahq_option table[] = {
        {.name = "--flag", .dst = &p->flag},
        {.name = "--help", .alias = "-h", .dst = &p->help, .stops = 1},
        {.name = "--value", .arg = "V", .dst = &p->value},
        {.name = "--check", .arg = "V", .set = refuse_bad, .dst = &p->value},
        {.name = "--rep", .arg = "N", .set = count_repeat, .dst = &p->repeats, .repeat = 1},
        {.name = "--out", .arg = "FILE", .dst = &p->opt_out, .omitted = "-"},
        {.name = NULL},
    };
    const tahq_option *const tables[] = {table, NULL};
    /* static: the parsed values point into it, and main reads them after
     * parse returns (until the next call) */
    static char buf[256];
    char *argv[16];
    int argc = 0;
    snprintf(buf, sizeof buf, "prog %s", e->args);
    for (char *t = strtok(buf, " "); t && argc < 16; t = strtok(NULL, " "))
        argv[argc++] = t;
    memset(p, 0, sizeof *p);
    const tahq_options_rules rules = {pos, 2, npos, e->strict};
    const tahq_options_status st =
        ignore_rules
            ? tahq_options_parse(tables, argc, argv, 1, at)
            : tahq_options_parse_with(tables, argc, argv, 1, e->strict ? &rules : NULL, at);
    /* at's pointers point into buf: keep only what is checked */
    at->arg = at->val = NULL;
    return st;
}

/* How many cases give another status or stopping point than expected. */
static int mismatches(int ignore_rules, int report)
{
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const expect *e = &cases[i];
        parsed p;
        const char *pos[2];
        int npos = 0;
        tahq_options_at at;
        const tahq_options_status st = parse(e, &p, pos, &npos, &at, ignore_rules);
        const int ok = st == e->st && (st == TAHQ_OPTIONS_OK || at.index == e->at) &&
                       (!e->strict || npos == e->npos);
        bad += !ok;
        if (report)
            CHECKF(ok, "%s rules, '%s': status %d at %d npos %d, expected %d at %d npos %d",
                   e->strict ? "strict" : "plain", e->args, (int)st, at.index, npos, (int)e->st,
                   e->at, e->npos);
    }
    return bad;
}

int main(void)
{
    mismatches(0, 1);
    /* control: the same table parsed without the rules misses cases */
    const int missed = mismatches(1, 0);
    CHECKF(missed >= 10, "control: only %d cases tell the rules apart", missed);

    /* values land where they should */
    parsed p;
    const char *pos[2];
    int npos;
    tahq_options_at at;
    const expect v = {1, "a --value=x=y --rep 1 --rep 2 --out", TAHQ_OPTIONS_OK, 0, 1};
    CHECK(parse(&v, &p, pos, &npos, &at, 0) == TAHQ_OPTIONS_OK);
    CHECK(p.value && strcmp(p.value, "x=y") == 0);
    CHECK(p.repeats == 2);
    CHECK(p.opt_out && strcmp(p.opt_out, "-") == 0);
    CHECK(npos == 1);
    return t_finish("test_options", "tahq_options_parse_with, plain and strict rules");
}
