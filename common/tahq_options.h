/* SPDX-License-Identifier: MIT */ /*
 * tahq_options.h - command-line options described by a table: one entry per
 * option says its name, its value, where the value goes and its help line,
 * so that the parse and the help text come from the same place and cannot
 * drift apart. The one option parser of the project: tahq-sim and
 * tahq-train call it directly, the tahq command through cli_parse
 * (support/util.h), which adds its error messages. Header-only (static
 * inline, C11 and C++).
 *
 * Parsing: "--name VALUE" or a flag "--name"; any order, an option may be
 * given again (the last value wins). What the program prints on an error
 * is its own: tahq_options_parse only says what went wrong and where.
 * tahq_options_parse_with takes rules: other arguments collected as
 * positionals, and the strict rules of the tahq command ("--name=VALUE",
 * each option once, no value that starts with "--", "-x" an option).
 *
 * Help: tahq_options_help prints each listed entry as
 *     "  " LEFT, padded to `column`, then the help text
 * where LEFT is `usage`, or the name and the value's name; a LEFT that
 * leaves no room before the column gets two spaces instead. A '\n' in the
 * help text starts a line indented to the column.
 */
#ifndef TAHQ_OPTIONS_H
#define TAHQ_OPTIONS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tahq_option tahq_option;
/* Parses val into opt->dst: 0, or non-zero when val is refused. */
typedef int (*tahq_option_fn)(const tahq_option *opt, const char *val);

struct tahq_option {
    const char *name;   /* "--out"; NULL ends a table */
    const char *alias;  /* another spelling ("-h", "--methods"), or NULL */
    const char *arg;    /* the value's name in the help ("DIR"); NULL: a flag */
    tahq_option_fn set; /* NULL: a flag sets *(int *)dst to 1, a value is kept
                           in *(const char **)dst */
    void *dst;
    double lo, hi;              /* tahq_option_int, tahq_option_double: the range */
    const char *const *choices; /* tahq_option_choice: the names, NULL-terminated */
    int stops;                  /* a flag that ends the parse (--help, --version) */
    const char *usage;          /* the help's left column, when not name and arg */
    const char *help;           /* NULL: not listed (an alias, or listed on the
                                    line of another option) */
    /* strict rules only: */
    int repeat;          /* may be given more than once */
    const char *omitted; /* the value when it is left out (the option
                                    is last or followed by a "--" argument);
                                    NULL: a value is required */
};

typedef enum tahq_options_status {
    TAHQ_OPTIONS_OK = 0,
    TAHQ_OPTIONS_STOPPED,    /* an option with `stops` was given */
    TAHQ_OPTIONS_POSITIONAL, /* an argument that does not start with "--" and is no option */
    TAHQ_OPTIONS_UNKNOWN,    /* "--" and no option of that name */
    TAHQ_OPTIONS_NO_VALUE,   /* an option that takes a value is the last argument */
    TAHQ_OPTIONS_BAD_VALUE,  /* its handler refused the value */
    TAHQ_OPTIONS_TWICE,      /* strict: an option without `repeat` given again */
    TAHQ_OPTIONS_FLAG_VALUE  /* strict: "--flag=VALUE" */
} tahq_options_status;

/* How a parse treats what is not an option, and how strict it is. */
typedef struct tahq_options_rules {
    const char **pos; /* positionals go to pos[0 .. max_pos - 1]; the one  */
    int max_pos;      /* after them (or any, with pos NULL) is             */
    int *npos;        /* TAHQ_OPTIONS_POSITIONAL; *npos counts them        */
    int strict;       /* the rules of the tahq command: "--name=VALUE" too
                         (a flag "--help" that ends the parse only on its
                         own), each option once unless `repeat`, an argument
                         that starts with "--" never a value, and an
                         argument that starts with '-' an option ("-" alone
                         a positional) */
} tahq_options_rules;

/* Where a parse stopped: the entry, argv index, argument and value. */
typedef struct tahq_options_at {
    const tahq_option *opt;
    int index;
    const char *arg, *val;
} tahq_options_at;

static inline int tahq_options_named(const char *name, const char *arg, size_t len)
{
    return name && strlen(name) == len && strncmp(name, arg, len) == 0;
}

/* The entry named by the first len characters of arg; with len short of the
 * whole argument ("--name=VALUE"), never a flag that ends the parse. */
static inline const tahq_option *tahq_options_find_n(const tahq_option *const *tables,
                                                     const char *arg, size_t len)
{
    const int whole = arg[len] == '\0';
    for (size_t t = 0; tables[t]; t++)
        for (const tahq_option *o = tables[t]; o->name; o++)
            if ((whole || !o->stops) &&
                (tahq_options_named(o->name, arg, len) || tahq_options_named(o->alias, arg, len)))
                return o;
    return NULL;
}

static inline const tahq_option *tahq_options_find(const tahq_option *const *tables,
                                                   const char *arg)
{
    return tahq_options_find_n(tables, arg, strlen(arg));
}

/* The options a strict parse has seen (the first 64 distinct ones). */
typedef struct tahq_options_seen {
    const tahq_option *opt[64];
    int n;
} tahq_options_seen;

/* 1 when o was seen before; notes it otherwise. */
static inline int tahq_options_again(tahq_options_seen *seen, const tahq_option *o)
{
    for (int k = 0; k < seen->n; k++)
        if (seen->opt[k] == o)
            return 1;
    if (seen->n < 64)
        seen->opt[seen->n++] = o;
    return 0;
}

/* Parse argv[first .. argc-1] against the tables (a NULL-terminated list)
 * under rules (NULL: no positionals, not strict); at (may be NULL) says
 * where it stopped when the result is not TAHQ_OPTIONS_OK (arg the whole
 * argument, "--name=VALUE" included). */
static inline tahq_options_status tahq_options_parse_with(const tahq_option *const *tables,
                                                          int argc, char **argv, int first,
                                                          const tahq_options_rules *rules,
                                                          tahq_options_at *at)
{
    const tahq_options_rules none = {NULL, 0, NULL, 0};
    const tahq_options_rules *r = rules ? rules : &none;
    tahq_options_seen seen;
    seen.n = 0;
    if (r->npos)
        *r->npos = 0;
    tahq_options_at here = {NULL, 0, NULL, NULL};
    tahq_options_status st = TAHQ_OPTIONS_OK;
    for (int i = first; i < argc && st == TAHQ_OPTIONS_OK; i++) {
        const char *a = argv[i];
        const char *eq = r->strict ? strchr(a, '=') : NULL;
        here.index = i;
        here.arg = a;
        here.val = NULL;
        here.opt = tahq_options_find_n(tables, a, eq ? (size_t)(eq - a) : strlen(a));
        const tahq_option *o = here.opt;
        if (!o) {
            const int option = r->strict ? a[0] == '-' && a[1] != '\0' : strncmp(a, "--", 2) == 0;
            if (option)
                st = TAHQ_OPTIONS_UNKNOWN;
            else if (r->pos && *r->npos < r->max_pos)
                r->pos[(*r->npos)++] = a;
            else
                st = TAHQ_OPTIONS_POSITIONAL;
        } else if (r->strict && !o->repeat && tahq_options_again(&seen, o))
            st = TAHQ_OPTIONS_TWICE;
        else if (!o->arg) {
            if (eq)
                st = TAHQ_OPTIONS_FLAG_VALUE;
            else {
                if (o->dst)
                    *(int *)o->dst = 1;
                if (o->stops)
                    st = TAHQ_OPTIONS_STOPPED;
            }
        } else {
            if (eq)
                here.val = eq + 1;
            else if (i + 1 < argc && !(r->strict && strncmp(argv[i + 1], "--", 2) == 0))
                here.val = argv[++i];
            else if (r->strict && o->omitted)
                here.val = o->omitted;
            else
                st = TAHQ_OPTIONS_NO_VALUE;
            if (st == TAHQ_OPTIONS_OK) {
                if (o->set)
                    st = o->set(o, here.val) ? TAHQ_OPTIONS_BAD_VALUE : TAHQ_OPTIONS_OK;
                else
                    *(const char **)o->dst = here.val;
            }
        }
    }
    if (at)
        *at = here;
    return st;
}

/* tahq_options_parse_with without rules: no positionals, not strict. */
static inline tahq_options_status tahq_options_parse(const tahq_option *const *tables, int argc,
                                                     char **argv, int first, tahq_options_at *at)
{
    return tahq_options_parse_with(tables, argc, argv, first, NULL, at);
}

/* An integer in [lo, hi], the whole value (decimal) into *(int *)dst. */
static inline int tahq_option_int(const tahq_option *opt, const char *val)
{
    char *end;
    errno = 0;
    const long v = strtol(val, &end, 10);
    if (errno || end == val || *end || v < opt->lo || v > opt->hi)
        return 1;
    *(int *)opt->dst = (int)v;
    return 0;
}

/* A number in [lo, hi], the whole value, into *(double *)dst. */
static inline int tahq_option_double(const tahq_option *opt, const char *val)
{
    char *end;
    errno = 0;
    const double v = strtod(val, &end);
    if (errno || end == val || *end || !(v >= opt->lo && v <= opt->hi))
        return 1;
    *(double *)opt->dst = v;
    return 0;
}

/* The index of val in the NULL-terminated choices, or -1. */
static inline int tahq_choice_index(const char *const *choices, const char *val)
{
    for (int i = 0; choices[i]; i++)
        if (strcmp(choices[i], val) == 0)
            return i;
    return -1;
}

/* One of the names in `choices`; its index into *(int *)dst. */
static inline int tahq_option_choice(const tahq_option *opt, const char *val)
{
    const int i = tahq_choice_index(opt->choices, val);
    if (i < 0)
        return 1;
    *(int *)opt->dst = i;
    return 0;
}

/* The choices as prose for an error message: "linear, cosine or const". */
static inline void tahq_option_choices_text(const char *const *choices, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; choices[i] && used < n; i++) {
        const char *sep = i == 0 ? "" : choices[i + 1] ? ", " : " or ";
        int w = snprintf(buf + used, n - used, "%s%s", sep, choices[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

/* One help line: "  " left, padded to column (two spaces when left leaves
 * no room), then help with its continuation lines indented to the column;
 * an empty help prints left alone. */
static inline void tahq_options_help_line(FILE *f, const char *left, const char *help, int column)
{
    const int w = fprintf(f, "  %s", left);
    if (help[0])
        fprintf(f, "%*s", w < column ? column - w : 2, "");
    for (const char *p = help; *p; p++) {
        fputc(*p, f);
        if (*p == '\n')
            fprintf(f, "%*s", column, "");
    }
    fputc('\n', f);
}

/* The help lines of one table (see the top of the file). */
static inline void tahq_options_help(FILE *f, const tahq_option *table, int column)
{
    for (const tahq_option *o = table; o->name; o++) {
        if (!o->help)
            continue;
        char left[128];
        if (o->usage)
            snprintf(left, sizeof left, "%s", o->usage);
        else
            snprintf(left, sizeof left, "%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        tahq_options_help_line(f, left, o->help, column);
    }
}

#endif /* TAHQ_OPTIONS_H */
