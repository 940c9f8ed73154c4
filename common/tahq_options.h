/* SPDX-License-Identifier: MIT */ /*
 * tahq_options.h - command-line options described by a table: one entry per
 * option says its name, its value, where the value goes and its help line,
 * so that the parse and the help text come from the same place and cannot
 * drift apart. The pattern of the tahq program's cli_parse (support/util.h),
 * header-only (static inline, C11 and C++) for the programs of sgd_sim/,
 * which may not include cli/.
 *
 * Parsing: "--name VALUE" or a flag "--name"; any order, an option may be
 * given again (the last value wins). What the program prints on an error
 * is its own: tahq_options_parse only says what went wrong and where.
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
    double lo, hi;               /* tahq_option_int, tahq_option_double: the range */
    const char *const *choices;  /* tahq_option_choice: the names, NULL-terminated */
    int stops;                   /* a flag that ends the parse (--help, --version) */
    const char *usage;           /* the help's left column, when not name and arg */
    const char *help;            /* NULL: not listed (an alias, or listed on the
                                    line of another option) */
};

typedef enum tahq_options_status {
    TAHQ_OPTIONS_OK = 0,
    TAHQ_OPTIONS_STOPPED,    /* an option with `stops` was given */
    TAHQ_OPTIONS_POSITIONAL, /* an argument that does not start with "--" and is no option */
    TAHQ_OPTIONS_UNKNOWN,    /* "--" and no option of that name */
    TAHQ_OPTIONS_NO_VALUE,   /* an option that takes a value is the last argument */
    TAHQ_OPTIONS_BAD_VALUE   /* its handler refused the value */
} tahq_options_status;

/* Where a parse stopped: the entry, argv index, argument and value. */
typedef struct tahq_options_at {
    const tahq_option *opt;
    int index;
    const char *arg, *val;
} tahq_options_at;

static inline const tahq_option *tahq_options_find(const tahq_option *const *tables, const char *arg)
{
    for (size_t t = 0; tables[t]; t++)
        for (const tahq_option *o = tables[t]; o->name; o++)
            if (strcmp(o->name, arg) == 0 || (o->alias && strcmp(o->alias, arg) == 0))
                return o;
    return NULL;
}

/* Parse argv[first .. argc-1] against the tables (a NULL-terminated list);
 * at (may be NULL) says where it stopped when the result is not
 * TAHQ_OPTIONS_OK. */
static inline tahq_options_status tahq_options_parse(const tahq_option *const *tables, int argc,
                                                     char **argv, int first, tahq_options_at *at)
{
    tahq_options_at here = {NULL, 0, NULL, NULL};
    tahq_options_status st = TAHQ_OPTIONS_OK;
    for (int i = first; i < argc && st == TAHQ_OPTIONS_OK; i++) {
        here.index = i;
        here.arg = argv[i];
        here.val = NULL;
        here.opt = tahq_options_find(tables, argv[i]);
        const tahq_option *o = here.opt;
        if (!o)
            st = strncmp(argv[i], "--", 2) == 0 ? TAHQ_OPTIONS_UNKNOWN : TAHQ_OPTIONS_POSITIONAL;
        else if (!o->arg) {
            if (o->dst)
                *(int *)o->dst = 1;
            if (o->stops)
                st = TAHQ_OPTIONS_STOPPED;
        } else if (i + 1 >= argc)
            st = TAHQ_OPTIONS_NO_VALUE;
        else {
            here.val = argv[++i];
            if (o->set)
                st = o->set(o, here.val) ? TAHQ_OPTIONS_BAD_VALUE : TAHQ_OPTIONS_OK;
            else
                *(const char **)o->dst = here.val;
        }
    }
    if (at)
        *at = here;
    return st;
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
