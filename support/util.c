/* SPDX-License-Identifier: MIT */
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *g_command = NULL;

void cli_set_command(const char *name)
{
    g_command = name;
}
const char *cli_command(void)
{
    return g_command;
}

int cli_fail(int code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* one line: fold any newline a path or message might carry */
    for (char *p = msg; *p; ++p)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    fflush(stdout);
    if (g_command)
        fprintf(stderr, "tahq %s: %s\n", g_command, msg);
    else
        fprintf(stderr, "tahq: %s\n", msg);
    return code;
}

const char *cli_status_text(int status)
{
    if (status == CLI_ERR_NOMEM)
        return "out of memory";
    return tahq_strerror(status);
}

int cli_is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

/* "--help" and "-h", which every command takes and no table lists. */
static const cli_option help_options[] = {
    {.name = "--help", .alias = "-h", .stops = 1},
    CLI_END,
};

#define CLI_MAX_TABLES 16

int cli_parse(int argc, char **argv, const cli_option *const *tables, const char **pos, int max_pos,
              int *npos)
{
    const cli_option *all[CLI_MAX_TABLES + 2] = {help_options};
    for (size_t t = 0; tables[t]; ++t) {
        if (t >= CLI_MAX_TABLES)
            return cli_fail(EXIT_RUNTIME, "more than %d option tables", CLI_MAX_TABLES);
        all[t + 1] = tables[t];
    }
    const tahq_options_rules rules = {pos, max_pos, npos, 1};
    tahq_options_at at;
    switch (tahq_options_parse_with(all, argc, argv, 1, &rules, &at)) {
    case TAHQ_OPTIONS_OK:
        return 0;
    case TAHQ_OPTIONS_STOPPED:
        return CLI_HELP;
    case TAHQ_OPTIONS_POSITIONAL:
        return cli_fail(EXIT_USAGE, "too many arguments (see tahq %s --help)", cli_command());
    case TAHQ_OPTIONS_UNKNOWN:
        return cli_fail(EXIT_USAGE, "unknown option %.*s", (int)strcspn(at.arg, "="), at.arg);
    case TAHQ_OPTIONS_TWICE:
        return cli_fail(EXIT_USAGE, "%s given twice", at.opt->name);
    case TAHQ_OPTIONS_FLAG_VALUE:
        return cli_fail(EXIT_USAGE, "option %s takes no value", at.opt->name);
    case TAHQ_OPTIONS_NO_VALUE:
        return cli_fail(EXIT_USAGE, "option %s needs a value", at.opt->name);
    case TAHQ_OPTIONS_BAD_VALUE: /* the handler said why */
        break;
    }
    return EXIT_USAGE;
}

int cli_opt_u32_pos(const cli_option *opt, const char *val)
{
    uint32_t *v = opt->dst;
    if (cli_parse_u32(val, UINT32_MAX, v) != 0 || *v == 0)
        return cli_fail(EXIT_USAGE, "invalid value '%s' for %s (need an integer >= 1)", val,
                        opt->name),
               -1;
    return 0;
}

int cli_opt_u64(const cli_option *opt, const char *val)
{
    if (cli_parse_u64(val, opt->dst) != 0)
        return cli_fail(EXIT_USAGE, "invalid value '%s' for %s", val, opt->name), -1;
    return 0;
}

int cli_opt_nonempty(const cli_option *opt, const char *val)
{
    if (!*val)
        return cli_fail(EXIT_USAGE, "empty value for %s", opt->name), -1;
    *(const char **)opt->dst = val;
    return 0;
}

int cli_parse_u64(const char *s, uint64_t *v)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    uint64_t r = 0;
    for (const char *p = s; *p; ++p) {
        if (*p < '0' || *p > '9')
            return -1;
        unsigned d = (unsigned)(*p - '0');
        if (r > (UINT64_MAX - d) / 10u)
            return -1;
        r = r * 10u + d;
    }
    *v = r;
    return 0;
}

int cli_parse_u32(const char *s, uint32_t max, uint32_t *v)
{
    uint64_t r;
    if (cli_parse_u64(s, &r) != 0 || r > max)
        return -1;
    *v = (uint32_t)r;
    return 0;
}

int cli_parse_float(const char *s, float *v)
{
    if (!s || !*s)
        return -1;
    if (strcmp(s, "inf") == 0 || strcmp(s, "+inf") == 0 || strcmp(s, "infinity") == 0) {
        *v = INFINITY;
        return 0;
    }
    /* plain decimal numbers only (no hex, no nan) */
    for (const char *p = s; *p; ++p)
        if (!((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' || *p == 'E' || *p == '+' ||
              *p == '-'))
            return -1;
    char *end = NULL;
    errno = 0;
    float r = strtof(s, &end);
    /* ERANGE on underflow still gives the correctly rounded subnormal (or 0):
     * accept it; reject only overflow. */
    if (end == s || *end != '\0' || (errno == ERANGE && isinf(r)))
        return -1;
    *v = r;
    return 0;
}

int cli_has_suffix(const char *path, const char *suffix)
{
    size_t n = strlen(path), m = strlen(suffix);
    return n >= m && strcmp(path + n - m, suffix) == 0;
}

/* ----- inputs, so that no output replaces one ----- */

typedef struct noted_input {
    dev_t dev;
    ino_t ino;
    char *path;
} noted_input;

static noted_input *g_inputs = NULL;
static size_t g_n_inputs = 0, g_cap_inputs = 0;

int cli_note_input(int fd, const char *path)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return 0; /* a pipe or terminal cannot be replaced by an output */
    if (cli_same_input(&st))
        return 0;
    if (g_n_inputs == g_cap_inputs) {
        size_t ncap = g_cap_inputs ? 2u * g_cap_inputs : 16u;
        noted_input *n = realloc(g_inputs, ncap * sizeof *n);
        if (!n)
            return cli_fail(EXIT_RUNTIME, "out of memory");
        g_inputs = n;
        g_cap_inputs = ncap;
    }
    char *copy = strdup(path);
    if (!copy)
        return cli_fail(EXIT_RUNTIME, "out of memory");
    g_inputs[g_n_inputs].dev = st.st_dev;
    g_inputs[g_n_inputs].ino = st.st_ino;
    g_inputs[g_n_inputs].path = copy;
    g_n_inputs++;
    return 0;
}

const char *cli_same_input(const struct stat *st)
{
    for (size_t i = 0; i < g_n_inputs; ++i)
        if (g_inputs[i].dev == st->st_dev && g_inputs[i].ino == st->st_ino)
            return g_inputs[i].path;
    return NULL;
}

/* Standard input stays open for the rest of the program. */
static void close_input(FILE *f)
{
    if (f != stdin)
        fclose(f);
}

/* How many bytes a stream may hold, from what was read of it so far
 * (SIZE_MAX: not known yet). */
typedef size_t (*read_limit_fn)(const uint8_t *head, size_t n, void *ctx);

static int read_bounded(const char *path, uint8_t **data, size_t *len, read_limit_fn limit,
                        void *ctx);

int cli_read_file(const char *path, uint8_t **data, size_t *len)
{
    return read_bounded(path, data, len, NULL, NULL);
}

/* A format-1 message: once the magic is wrong nothing more is read; once
 * the header is there and its sizes agree (tahq_parse_header on the header
 * alone then says only TRUNCATED, or OK or CRC for an empty payload), the
 * header's payload size and one byte more (a longer stream is err_size);
 * a header that is refused is all that is read. */
static size_t message_limit(const uint8_t *head, size_t n, void *ctx)
{
    (void)ctx;
    static const uint8_t magic[4] = {0x54, 0x41, 0x48, 0x51};
    if (n >= 4 && memcmp(head, magic, 4) != 0)
        return 4;
    if (n < TAHQ_HEADER_BYTES)
        return SIZE_MAX;
    tahq_header h;
    tahq_status st = tahq_parse_header(head, TAHQ_HEADER_BYTES, &h);
    if (st != TAHQ_ERR_TRUNCATED && st != TAHQ_OK && st != TAHQ_ERR_CRC)
        return TAHQ_HEADER_BYTES;
    uint64_t payload = 0;
    for (int i = 7; i >= 0; --i) /* bytes 56..63, little-endian (SPEC 8.1) */
        payload = payload << 8 | head[56 + i];
    if (payload > (uint64_t)SIZE_MAX - TAHQ_HEADER_BYTES - 1u)
        return TAHQ_HEADER_BYTES;
    return (size_t)payload + TAHQ_HEADER_BYTES + 1u;
}

int cli_read_message(const char *path, uint8_t **data, size_t *len)
{
    return read_bounded(path, data, len, message_limit, NULL);
}

static size_t fixed_limit(const uint8_t *head, size_t n, void *ctx)
{
    (void)head;
    (void)n;
    return *(const size_t *)ctx;
}

int cli_read_file_max(const char *path, size_t max, uint8_t **data, size_t *len)
{
    size_t stop = max < SIZE_MAX ? max + 1u : max; /* one more: the parser sees "too long" */
    return read_bounded(path, data, len, fixed_limit, &stop);
}

static int read_bounded(const char *path, uint8_t **data, size_t *len, read_limit_fn limit,
                        void *ctx)
{
    *data = NULL;
    *len = 0;
    int from_stdin = strcmp(path, "-") == 0;
    FILE *f = from_stdin ? stdin : fopen(path, "rb");
    if (!f)
        return cli_fail(EXIT_RUNTIME, "%s: cannot open: %s", path, strerror(errno));
    if (from_stdin)
        path = "(standard input)";
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        int e = errno;
        close_input(f);
        return cli_fail(EXIT_RUNTIME, "%s: cannot stat: %s", path, strerror(e));
    }
    int rc = cli_note_input(fileno(f), path);
    if (rc) {
        close_input(f);
        return rc;
    }
    if (S_ISDIR(st.st_mode)) {
        close_input(f);
        return cli_fail(EXIT_RUNTIME, "%s: is a directory", path);
    }
    size_t cap = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size : 65536u;
    if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > (uint64_t)SIZE_MAX - 1u) {
        close_input(f);
        return cli_fail(EXIT_RUNTIME, "%s: file too large", path);
    }
    uint8_t *buf = malloc(cap + 1u);
    if (!buf) {
        close_input(f);
        return cli_fail(EXIT_RUNTIME, "%s: out of memory (%zu bytes)", path, cap);
    }
    size_t n = 0;
    /* a pipe or device is read only as far as its content says it goes
     * (/dev/zero is not read to the end of memory) */
    size_t stop = SIZE_MAX;
    const int streamed = !S_ISREG(st.st_mode) && limit;
    for (;;) {
        if (streamed) {
            stop = limit(buf, n, ctx);
            if (n >= stop)
                break;
        }
        if (n == cap) {
            if (cap > SIZE_MAX / 2u - 1u) {
                free(buf);
                close_input(f);
                return cli_fail(EXIT_RUNTIME, "%s: file too large", path);
            }
            size_t ncap = cap * 2u;
            uint8_t *nb = realloc(buf, ncap + 1u);
            if (!nb) {
                free(buf);
                close_input(f);
                return cli_fail(EXIT_RUNTIME, "%s: out of memory", path);
            }
            buf = nb;
            cap = ncap;
        }
        /* from a stream, small steps until its limit is known */
        size_t want = cap - n;
        if (streamed) {
            size_t step = stop != SIZE_MAX        ? stop - n
                          : n < 4                 ? 4 - n
                          : n < TAHQ_HEADER_BYTES ? TAHQ_HEADER_BYTES - n
                                                  : want;
            if (step < want)
                want = step;
        }
        size_t r = fread(buf + n, 1, want, f);
        n += r;
        if (r == 0) {
            if (ferror(f)) {
                int e = errno;
                free(buf);
                close_input(f);
                return cli_fail(EXIT_RUNTIME, "%s: read error: %s", path, strerror(e));
            }
            break;
        }
    }
    close_input(f);
    *data = buf;
    *len = n;
    return 0;
}

/* ----- atomic output ----- */

static int out_open(cli_out *o, const char *path, int text);
/* The temporary files being written, removed by a termination signal
 * (SIGINT, SIGTERM, SIGHUP) before the process dies of it. */
#define MAX_OPEN_TMP 8
static char *volatile g_tmp[MAX_OPEN_TMP];
static const int g_tmp_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define N_TMP_SIGNALS (sizeof g_tmp_signals / sizeof g_tmp_signals[0])

static void remove_tmp_and_die(int sig)
{
    for (int i = 0; i < MAX_OPEN_TMP; ++i)
        if (g_tmp[i])
            unlink(g_tmp[i]);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void block_tmp_signals(sigset_t *old)
{
    sigset_t s;
    sigemptyset(&s);
    for (size_t i = 0; i < N_TMP_SIGNALS; ++i)
        sigaddset(&s, g_tmp_signals[i]);
    sigprocmask(SIG_BLOCK, &s, old);
}

/* Note path as being written; the handler is installed where the signal
 * still has its default action (a command with its own handling, such as
 * conform's, keeps it). Signals are blocked by the caller. */
static void tmp_register(char *path)
{
    static int installed;
    if (!installed) {
        installed = 1;
        for (size_t i = 0; i < N_TMP_SIGNALS; ++i) {
            struct sigaction old, sa;
            if (sigaction(g_tmp_signals[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL)
                continue;
            memset(&sa, 0, sizeof sa);
            sigemptyset(&sa.sa_mask);
            sa.sa_handler = remove_tmp_and_die;
            sigaction(g_tmp_signals[i], &sa, NULL);
        }
    }
    for (int i = 0; i < MAX_OPEN_TMP; ++i)
        if (!g_tmp[i]) {
            g_tmp[i] = path;
            return;
        }
}

static void tmp_unregister(const char *path)
{
    for (int i = 0; i < MAX_OPEN_TMP; ++i)
        if (g_tmp[i] == path)
            g_tmp[i] = NULL;
}

/* Remove DIR/.BASE.tmp-PID-XXXXXX files of this user whose process PID is
 * gone: what a writer killed by SIGKILL (no handler runs) left behind. */
static void sweep_stale_tmp(const char *path, size_t dirlen, const char *base)
{
    char dir[PATH_MAX];
    if (dirlen >= sizeof dir)
        return;
    snprintf(dir, sizeof dir, "%.*s", (int)(dirlen ? dirlen : 1), dirlen ? path : ".");
    DIR *d = opendir(dir);
    if (!d)
        return;
    size_t blen = strlen(base);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *nm = e->d_name;
        if (nm[0] != '.' || strncmp(nm + 1, base, blen) != 0 ||
            strncmp(nm + 1 + blen, ".tmp-", 5) != 0)
            continue;
        char *end;
        errno = 0;
        long pid = strtol(nm + 1 + blen + 5, &end, 10);
        if (errno || pid <= 0 || pid > INT_MAX || *end != '-' || strlen(end + 1) != 6 ||
            (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
            continue;
        char p[PATH_MAX];
        struct stat st;
        int r = snprintf(p, sizeof p, "%s/%s", dir, nm);
        if (r > 0 && (size_t)r < sizeof p && lstat(p, &st) == 0 && S_ISREG(st.st_mode) &&
            st.st_uid == geteuid())
            unlink(p);
    }
    closedir(d);
}

int cli_out_open(cli_out *o, const char *path)
{
    return out_open(o, path, 0);
}

int cli_out_open_text(cli_out *o, const char *path)
{
    return out_open(o, path, 1);
}

static int out_open(cli_out *o, const char *path, int text)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    if (!*path)
        return cli_fail(EXIT_USAGE, "empty output path");
    if (strcmp(path, "-") == 0) {
        if (!text && isatty(STDOUT_FILENO))
            return cli_fail(EXIT_USAGE, "-: standard output is a terminal; refusing to write "
                                        "binary output there (redirect it, or give a file)");
        /* The data takes over standard output; the command's own text
         * (its summary line, --json) goes to standard error from here on,
         * so the two never mix. */
        fflush(stdout);
        int data_fd = dup(STDOUT_FILENO);
        if (data_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0 ||
            !(o->f = fdopen(data_fd, "wb"))) {
            int e = errno;
            if (data_fd >= 0)
                close(data_fd);
            return cli_fail(EXIT_RUNTIME, "-: cannot use standard output: %s", strerror(e));
        }
        return 0;
    }
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
        return cli_fail(EXIT_USAGE,
                        "%s: is a symbolic link; refusing to replace it by a regular file "
                        "(give the link's target as the output, or remove the link)",
                        path);
    int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode))
        return cli_fail(EXIT_RUNTIME, "%s: is a directory", path);
    const char *input = exists ? cli_same_input(&st) : NULL;
    if (input)
        return cli_fail(EXIT_USAGE,
                        "%s: is the same file as the input %s; refusing to overwrite an input "
                        "(choose another output path)",
                        path, input);
    if (exists && !S_ISREG(st.st_mode)) {
        /* a device or pipe (/dev/null, /dev/stdout): write to it directly */
        o->f = fopen(path, "wb");
        if (!o->f)
            return cli_fail(EXIT_RUNTIME, "%s: cannot open for writing: %s", path, strerror(errno));
        return 0;
    }
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1u : 0u;
    const char *base = slash ? slash + 1 : path;
    sweep_stale_tmp(path, dirlen, base);
    /* DIR/.BASE.tmp-PID-XXXXXX: the process id tells a later command
     * whether the file is still being written */
    size_t n = dirlen + 1u + strlen(base) + 5u + 20u + 8u + 1u;
    o->tmp_path = malloc(n);
    if (!o->tmp_path)
        return cli_fail(EXIT_RUNTIME, "out of memory");
    snprintf(o->tmp_path, n, "%.*s.%s.tmp-%ld-XXXXXX", (int)dirlen, path, base, (long)getpid());
    sigset_t old_mask;
    block_tmp_signals(&old_mask); /* no signal between creating and noting it */
    int fd = mkstemp(o->tmp_path);
    if (fd >= 0)
        tmp_register(o->tmp_path);
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    if (fd < 0) {
        int e = errno;
        free(o->tmp_path);
        o->tmp_path = NULL;
        return cli_fail(EXIT_RUNTIME, "%s: cannot create output file: %s", path, strerror(e));
    }
    /* mkstemp creates mode 0600: the file replaced keeps its mode, a new
     * one gets the usual 0666 & ~umask */
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, exists ? (st.st_mode & 07777) : (mode_t)(0666 & ~mask));
    o->f = fdopen(fd, "wb");
    if (!o->f) {
        int e = errno;
        close(fd);
        unlink(o->tmp_path);
        tmp_unregister(o->tmp_path);
        free(o->tmp_path);
        o->tmp_path = NULL;
        return cli_fail(EXIT_RUNTIME, "%s: cannot open output file: %s", path, strerror(e));
    }
    return 0;
}

void cli_out_write(cli_out *o, const void *data, size_t n)
{
    if (o->failed || n == 0)
        return;
    if (fwrite(data, 1, n, o->f) != n) {
        o->failed = 1;
        o->err = errno;
    }
}

void cli_out_abort(cli_out *o)
{
    if (o->f) {
        fclose(o->f);
        o->f = NULL;
    }
    if (o->tmp_path) {
        sigset_t old_mask;
        block_tmp_signals(&old_mask);
        unlink(o->tmp_path);
        tmp_unregister(o->tmp_path);
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
        free(o->tmp_path);
        o->tmp_path = NULL;
    }
}

int cli_out_commit(cli_out *o)
{
    if (!o->failed && fflush(o->f) != 0) {
        o->failed = 1;
        o->err = errno;
    }
    if (!o->failed && o->tmp_path && fsync(fileno(o->f)) != 0 && errno != EINVAL &&
        errno != EROFS) {
        o->failed = 1;
        o->err = errno;
    }
    if (fclose(o->f) != 0 && !o->failed) {
        o->failed = 1;
        o->err = errno;
    }
    o->f = NULL;
    if (o->failed && !o->tmp_path)
        return cli_fail(EXIT_RUNTIME, "%s: write error: %s", o->path,
                        o->err ? strerror(o->err) : "unknown error");
    if (!o->tmp_path)
        return 0; /* written directly */
    if (o->failed) {
        int e = o->err;
        cli_out_abort(o);
        return cli_fail(EXIT_RUNTIME, "%s: write error: %s", o->path,
                        e ? strerror(e) : "unknown error");
    }
    sigset_t old_mask;
    block_tmp_signals(&old_mask);
    if (rename(o->tmp_path, o->path) != 0) {
        int e = errno;
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
        cli_out_abort(o);
        return cli_fail(EXIT_RUNTIME, "%s: cannot rename output into place: %s", o->path,
                        strerror(e));
    }
    tmp_unregister(o->tmp_path);
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    free(o->tmp_path);
    o->tmp_path = NULL;
    return 0;
}

int cli_write_file(const char *path, const void *data, size_t n)
{
    cli_out o;
    int rc = cli_out_open(&o, path);
    if (rc)
        return rc;
    cli_out_write(&o, data, n);
    return cli_out_commit(&o);
}

/* ----- JSON ----- */

/* Length of the UTF-8 sequence at p (n bytes left), 0 if not well formed
 * (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF). */
static size_t utf8_len(const unsigned char *p, size_t n)
{
    unsigned c = p[0];
    size_t len;
    unsigned min;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        min = 0x10000;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    unsigned v = c & (0x3fu >> (len - 1));
    for (size_t k = 1; k < len; ++k) {
        if ((p[k] & 0xc0) != 0x80)
            return 0;
        v = (v << 6) | (p[k] & 0x3fu);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    return len;
}

json_t *cli_jstr(const char *s)
{
    json_t *j = json_string(s);
    if (j || !s)
        return j;
    /* not UTF-8 (a file name can be any bytes): each stray byte as U+FFFD */
    size_t n = strlen(s), o = 0;
    char *t = malloc(3 * n + 1);
    if (!t)
        return NULL;
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t l = utf8_len(p + i, n - i);
        if (l) {
            memcpy(t + o, p + i, l);
            o += l;
            i += l;
        } else {
            memcpy(t + o, "\xef\xbf\xbd", 3);
            o += 3;
            i += 1;
        }
    }
    j = json_stringn(t, o);
    free(t);
    return j;
}

json_t *cli_jnum(double v)
{
    if (!isfinite(v))
        return json_null();
    if (v == floor(v) && fabs(v) < 9007199254740992.0)
        return json_integer((json_int_t)v);
    return json_real(v);
}

/* jansson's integers stop at INT64_MAX. A larger u64 is held as a string
 * that starts with a NUL byte, which no other string of the output can hold
 * (they all come from C strings), and written as the bare number by
 * u64_fix. */
#define U64_MARK "\\u0000u64:"

json_t *cli_ju64(uint64_t v)
{
    if (v <= (uint64_t)INT64_MAX)
        return json_integer((json_int_t)v);
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%cu64:%llu", '\0', (unsigned long long)v);
    return json_stringn(buf, (size_t)n);
}

/* "\u0000u64:DIGITS" -> DIGITS, in place. */
static void u64_fix(char *t)
{
    const size_t ml = strlen(U64_MARK);
    char *w = t;
    for (const char *r = t; *r;) {
        if (r[0] == '"' && strncmp(r + 1, U64_MARK, ml) == 0) {
            const char *d = r + 1 + ml;
            size_t nd = strspn(d, "0123456789");
            if (nd > 0 && d[nd] == '"') {
                memmove(w, d, nd);
                w += nd;
                r = d + nd + 1;
                continue;
            }
        }
        *w++ = *r++;
    }
    *w = '\0';
}

json_t *cli_jshape(const tahq_shape *s)
{
    return json_pack("[I, I, I]", (json_int_t)s->batch, (json_int_t)s->seq_len,
                     (json_int_t)s->channels);
}

char *cli_json_text(json_t *v)
{
    if (!v)
        return NULL;
    char *t = json_dumps(v, CLI_JSON_FLAGS);
    json_decref(v);
    if (t)
        u64_fix(t);
    return t;
}

int cli_json_put(FILE *f, const char *pre, json_t *v, int skip_open, int skip_close)
{
    char *t = cli_json_text(v);
    size_t n = t ? strlen(t) : 0;
    size_t cut = (skip_open ? 1u : 0u) + (skip_close ? 1u : 0u);
    if (!t || n < cut) {
        free(t);
        return -1;
    }
    fprintf(f, "%s%.*s", pre, (int)(n - cut), t + (skip_open ? 1 : 0));
    free(t);
    return 0;
}

int cli_json_print(FILE *f, json_t *v)
{
    char *t = cli_json_text(v);
    if (!t)
        return cli_fail(EXIT_RUNTIME, "out of memory (JSON output)");
    int bad = fputs(t, f) == EOF || fputc('\n', f) == EOF;
    free(t);
    if (bad)
        return cli_fail(EXIT_RUNTIME, "cannot write the JSON output");
    return 0;
}

/* ----- configuration text ----- */

const char *cli_alloc_name(tahq_alloc a)
{
    switch (a) {
    case TAHQ_ALLOC_NONE:
        return "none";
    case TAHQ_ALLOC_TOKEN:
        return "token";
    case TAHQ_ALLOC_TILE:
        return "tile";
    case TAHQ_ALLOC_GAIN:
        return "gain";
    }
    return "?";
}

const char *cli_rounding_name(tahq_rounding r)
{
    switch (r) {
    case TAHQ_ROUND_NEAREST_EVEN:
        return "nearest";
    case TAHQ_ROUND_STOCHASTIC:
        return "stochastic";
    }
    return "?";
}

const char *cli_meta_name(tahq_meta m)
{
    switch (m) {
    case TAHQ_META_FP16:
        return "fp16";
    case TAHQ_META_BF16:
        return "bf16";
    case TAHQ_META_FP32:
        return "fp32";
    }
    return "?";
}

static void tau_text(float tau, char *buf, size_t n)
{
    if (isinf(tau))
        snprintf(buf, n, "inf");
    else
        snprintf(buf, n, "%.9g", (double)tau);
}

void cli_config_text(const tahq_config *cfg, char *buf, size_t n)
{
    char tau[32];
    tau_text(cfg->tau, tau, sizeof tau);
    snprintf(buf, n, "G=%u %u/%u r=%u %s tau=%s %s %s", (unsigned)cfg->tile, (unsigned)cfg->hi_bits,
             (unsigned)cfg->lo_bits, (unsigned)cfg->hi_permille, cli_alloc_name(cfg->alloc), tau,
             cli_rounding_name(cfg->rounding), cli_meta_name(cfg->meta));
}

json_t *cli_jconfig(const tahq_config *cfg)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:s, s:o, s:s, s:o, s:s}", "tile", (json_int_t)cfg->tile,
                     "hi_bits", (json_int_t)cfg->hi_bits, "lo_bits", (json_int_t)cfg->lo_bits,
                     "hi_permille", (json_int_t)cfg->hi_permille, "alloc",
                     cli_alloc_name(cfg->alloc), "tau",
                     isinf(cfg->tau) ? json_string("inf") : cli_jnum((double)cfg->tau), "rounding",
                     cli_rounding_name(cfg->rounding), "seed", cli_ju64(cfg->seed), "meta",
                     cli_meta_name(cfg->meta));
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* mkdir -p: every missing directory of path, mode 0777 before the umask;
 * existing ones are fine. 0, or -1 (an empty or over-long path, or a
 * failed mkdir, which sets errno). */
int cli_mkdir_p(const char *path)
{
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf)
        return -1;
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; ++i) {
        if (buf[i] == '/' || buf[i] == '\0') {
            char c = buf[i];
            buf[i] = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return -1;
            buf[i] = c;
        }
    }
    return 0;
}

/* A CSV number: %.10g, or nan, inf, -inf. */
void cli_csv_number(FILE *f, double v)
{
    if (isnan(v))
        fputs("nan", f);
    else if (isinf(v))
        fputs(v > 0 ? "inf" : "-inf", f);
    else
        fprintf(f, "%.10g", v);
}
