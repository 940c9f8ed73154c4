#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *g_command = NULL;

void cli_set_command(const char *name) { g_command = name; }
const char *cli_command(void) { return g_command; }

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

int cli_opt_flag(const char *arg, const char *name) { return strcmp(arg, name) == 0; }

int cli_is_help(const char *arg) { return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0; }

int cli_opt_value(int argc, char **argv, int *i, const char *name, const char **val)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0)
        return 0;
    if (a[n] == '=') {
        *val = a + n + 1;
        return 1;
    }
    if (a[n] != '\0')
        return 0;
    if (*i + 1 >= argc) {
        cli_fail(EXIT_USAGE, "option %s needs a value", name);
        return -1;
    }
    *i += 1;
    *val = argv[*i];
    return 1;
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

int cli_read_file(const char *path, uint8_t **data, size_t *len)
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
    for (;;) {
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
        size_t r = fread(buf + n, 1, cap - n, f);
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

int cli_out_open(cli_out *o, const char *path)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    if (!*path)
        return cli_fail(EXIT_USAGE, "empty output path");
    if (strcmp(path, "-") == 0) {
        if (isatty(STDOUT_FILENO))
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
            return cli_fail(EXIT_RUNTIME, "%s: cannot open for writing: %s", path,
                            strerror(errno));
        return 0;
    }
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1u : 0u;
    const char *base = slash ? slash + 1 : path;
    /* DIR/.BASE.tmp-XXXXXX */
    size_t n = dirlen + 1u + strlen(base) + 12u + 1u;
    o->tmp_path = malloc(n);
    if (!o->tmp_path)
        return cli_fail(EXIT_RUNTIME, "out of memory");
    snprintf(o->tmp_path, n, "%.*s.%s.tmp-XXXXXX", (int)dirlen, path, base);
    int fd = mkstemp(o->tmp_path);
    if (fd < 0) {
        int e = errno;
        free(o->tmp_path);
        o->tmp_path = NULL;
        return cli_fail(EXIT_RUNTIME, "%s: cannot create output file: %s", path, strerror(e));
    }
    /* mkstemp creates mode 0600; give the file the usual 0666 & ~umask */
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, (mode_t)(0666 & ~mask));
    o->f = fdopen(fd, "wb");
    if (!o->f) {
        int e = errno;
        close(fd);
        unlink(o->tmp_path);
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
        unlink(o->tmp_path);
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
    if (rename(o->tmp_path, o->path) != 0) {
        int e = errno;
        cli_out_abort(o);
        return cli_fail(EXIT_RUNTIME, "%s: cannot rename output into place: %s", o->path,
                        strerror(e));
    }
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

void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; ++p) {
        unsigned c = *p;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", (int)c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\t')
            fputs("\\t", f);
        else if (c < 0x20u)
            fprintf(f, "\\u%04x", c);
        else
            fputc((int)c, f);
    }
    fputc('"', f);
}

void json_num(FILE *f, double v)
{
    if (!isfinite(v))
        fputs("null", f);
    else if (v == floor(v) && fabs(v) < 9007199254740992.0)
        fprintf(f, "%.0f", v);
    else
        fprintf(f, "%.17g", v);
}

/* ----- configuration text ----- */

const char *cli_alloc_name(tahq_alloc a)
{
    switch (a) {
    case TAHQ_ALLOC_NONE: return "none";
    case TAHQ_ALLOC_TOKEN: return "token";
    case TAHQ_ALLOC_TILE: return "tile";
    }
    return "?";
}

const char *cli_rounding_name(tahq_rounding r)
{
    switch (r) {
    case TAHQ_ROUND_NEAREST_EVEN: return "nearest";
    case TAHQ_ROUND_STOCHASTIC: return "stochastic";
    }
    return "?";
}

const char *cli_meta_name(tahq_meta m)
{
    switch (m) {
    case TAHQ_META_FP16: return "fp16";
    case TAHQ_META_BF16: return "bf16";
    case TAHQ_META_FP32: return "fp32";
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
    snprintf(buf, n, "G=%u %u/%u r=%u %s tau=%s %s %s", (unsigned)cfg->tile,
             (unsigned)cfg->hi_bits, (unsigned)cfg->lo_bits, (unsigned)cfg->hi_permille,
             cli_alloc_name(cfg->alloc), tau, cli_rounding_name(cfg->rounding),
             cli_meta_name(cfg->meta));
}

void json_config(FILE *f, const tahq_config *cfg)
{
    fprintf(f, "{\"tile\": %u, \"hi_bits\": %u, \"lo_bits\": %u, \"hi_permille\": %u, ",
            (unsigned)cfg->tile, (unsigned)cfg->hi_bits, (unsigned)cfg->lo_bits,
            (unsigned)cfg->hi_permille);
    fprintf(f, "\"alloc\": \"%s\", \"tau\": ", cli_alloc_name(cfg->alloc));
    if (isinf(cfg->tau))
        fputs("\"inf\"", f);
    else
        json_num(f, (double)cfg->tau);
    fprintf(f, ", \"rounding\": \"%s\", \"seed\": %llu, \"meta\": \"%s\"}",
            cli_rounding_name(cfg->rounding), (unsigned long long)cfg->seed,
            cli_meta_name(cfg->meta));
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
