/* conform_run.c - running the candidate of `tahq conform --run`: each
 * command in its own process group under /bin/sh, up to N cases at a time,
 * a per-case deadline, the exit status and the tail of stderr kept, and
 * termination signals turned into a clean stop (every process group killed,
 * the caller removes its temporary directory). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conform.h"

extern char **environ;

/* ---------------------------------------------------------------- signals */

static const int term_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
#define N_TERM (sizeof term_signals / sizeof term_signals[0])

static volatile sig_atomic_t got_signal;
static sigset_t saved_mask;
static struct sigaction saved_act[N_TERM + 1];
static int signals_on;

static void on_term(int sig) { got_signal = sig; }
static void on_chld(int sig) { (void)sig; }

int conform_signals_begin(void)
{
    sigset_t block;
    sigemptyset(&block);
    for (size_t i = 0; i < N_TERM; ++i)
        sigaddset(&block, term_signals[i]);
    sigaddset(&block, SIGCHLD);
    if (sigprocmask(SIG_BLOCK, &block, &saved_mask) != 0)
        return -1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i <= N_TERM; ++i) {
        int sig = i < N_TERM ? term_signals[i] : SIGCHLD;
        sa.sa_handler = i < N_TERM ? on_term : on_chld;
        sigaction(sig, &sa, &saved_act[i]);
    }
    got_signal = 0;
    signals_on = 1;
    return 0;
}

int conform_signals_end(void)
{
    if (!signals_on)
        return 0;
    /* a termination signal still pending is delivered now, to on_term (which
     * only records it), before the old handlers come back; the caller
     * re-raises it */
    sigprocmask(SIG_SETMASK, &saved_mask, NULL);
    for (size_t i = 0; i <= N_TERM; ++i)
        sigaction(i < N_TERM ? term_signals[i] : SIGCHLD, &saved_act[i], NULL);
    signals_on = 0;
    return got_signal;
}

int conform_signal_pending(void) { return got_signal; }

void conform_die_by_signal(int sig)
{
    fflush(stdout);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = SIG_DFL;
    sigaction(sig, &sa, NULL);
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    sigprocmask(SIG_UNBLOCK, &s, NULL);
    raise(sig);
    _exit(128 + sig); /* not reached for a terminating signal */
}

/* ---------------------------------------------------------------- files */

int conform_tmpdir(char *buf, size_t n)
{
    const char *tmp = getenv("TMPDIR");
    int r = snprintf(buf, n, "%s/tahq-conform-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (r < 0 || (size_t)r >= n || !mkdtemp(buf))
        return -1;
    return 0;
}

void conform_rmtree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char p[4096];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            int r = snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            if (r > 0 && (size_t)r < sizeof p)
                remove(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

int conform_copy_file(const char *from, const char *to)
{
    int in = open(from, O_RDONLY);
    if (in < 0)
        return -1;
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0) {
        close(in);
        return -1;
    }
    char buf[65536];
    int rc = 0;
    for (;;) {
        ssize_t r = read(in, buf, sizeof buf);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            rc = r < 0 ? -1 : 0;
            break;
        }
        for (ssize_t w = 0; w < r;) {
            ssize_t k = write(out, buf + w, (size_t)(r - w));
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0) {
                rc = -1;
                break;
            }
            w += k;
        }
        if (rc)
            break;
    }
    close(in);
    if (close(out) != 0)
        rc = -1;
    return rc;
}

/* ---------------------------------------------------------------- results */

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGABRT: return "SIGABRT";
    case SIGALRM: return "SIGALRM";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGHUP: return "SIGHUP";
    case SIGILL: return "SIGILL";
    case SIGINT: return "SIGINT";
    case SIGKILL: return "SIGKILL";
    case SIGPIPE: return "SIGPIPE";
    case SIGQUIT: return "SIGQUIT";
    case SIGSEGV: return "SIGSEGV";
    case SIGTERM: return "SIGTERM";
    case SIGTRAP: return "SIGTRAP";
    default: return "?";
    }
}

void conform_run_text(const conform_run *r, double timeout, char *buf, size_t n)
{
    if (!r->ran)
        snprintf(buf, n, "was not run (the case had timed out)");
    else if (r->timed_out)
        snprintf(buf, n, "did not finish within %g s (TIMEOUT: its process group was killed)",
                 timeout);
    else if (r->exited && r->status > 128 && r->status < 128 + 65)
        snprintf(buf, n, "exited with status %d (a shell's code for signal %d, %s)", r->status,
                 r->status - 128, signal_name(r->status - 128));
    else if (r->exited)
        snprintf(buf, n, "exited with status %d", r->status);
    else
        snprintf(buf, n, "was killed by signal %d (%s)", r->sig, signal_name(r->sig));
}

int conform_run_failed(const conform_run *r)
{
    return r->ran && (r->timed_out || !r->exited || r->status != 0);
}

void conform_sanitize(char *s)
{
    unsigned char *p = (unsigned char *)s;
    while (*p) {
        unsigned c = *p;
        if (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f)) {
            ++p;
            continue;
        }
        /* a valid UTF-8 sequence (no overlongs, no surrogates) is kept */
        int len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
                                              : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
        int ok = len > 0;
        for (int k = 1; ok && k < len; ++k)
            ok = (p[k] & 0xc0) == 0x80;
        if (ok && len == 3 && ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0)))
            ok = 0;
        if (ok && len == 4 && ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90)))
            ok = 0;
        if (ok) {
            p += len;
        } else {
            *p = '?';
            ++p;
        }
    }
}

/* First err_* word of the first 64 KiB of the file and its last lines. */
static void read_stderr(const char *path, conform_run *r)
{
    snprintf(r->word, sizeof r->word, "(none)");
    r->tail[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    static char head[65537];
    size_t h = fread(head, 1, sizeof head - 1, f);
    head[h] = '\0';
    for (size_t i = 0; i < h; ++i)
        if (head[i] == '\0')
            head[i] = ' ';
    const char *p = strstr(head, "err_");
    if (p) {
        size_t k = 4;
        while ((p[k] >= 'a' && p[k] <= 'z') || p[k] == '_')
            ++k;
        if (k >= sizeof r->word)
            k = sizeof r->word - 1;
        snprintf(r->word, sizeof r->word, "%.*s", (int)k, p);
    }
    /* the tail: the last 4 KiB, then its last lines */
    char tail[4097];
    size_t t = 0;
    if (fseek(f, 0, SEEK_END) == 0) {
        long end = ftell(f);
        long from = end > 4096 ? end - 4096 : 0;
        if (end >= 0 && fseek(f, from, SEEK_SET) == 0)
            t = fread(tail, 1, sizeof tail - 1, f);
    }
    fclose(f);
    tail[t] = '\0';
    for (size_t i = 0; i < t; ++i)
        if (tail[i] == '\0')
            tail[i] = ' ';
    while (t > 0 && (tail[t - 1] == '\n' || tail[t - 1] == '\r' || tail[t - 1] == ' '))
        tail[--t] = '\0';
    size_t start = t;
    int lines = 0;
    while (start > 0) {
        if (tail[start - 1] == '\n' && ++lines == CONFORM_TAIL_LINES)
            break;
        --start;
    }
    /* copy line by line, each cut at 150 bytes */
    size_t o = 0;
    const char *s = tail + start;
    while (*s && o + 2 < sizeof r->tail) {
        const char *e = strchr(s, '\n');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        size_t keep = len > 150 ? 150 : len;
        if (keep > 0 && s[keep - 1] == '\r')
            --keep;
        if (o + keep + 5 >= sizeof r->tail)
            break;
        memcpy(r->tail + o, s, keep);
        o += keep;
        if (len > 150) {
            memcpy(r->tail + o, "...", 3);
            o += 3;
        }
        if (!e)
            break;
        r->tail[o++] = '\n';
        s = e + 1;
    }
    r->tail[o] = '\0';
    conform_sanitize(r->tail);
}

/* ---------------------------------------------------------------- scheduler */

typedef struct slot {
    int used;
    size_t id;
    conform_cmd *cmds;
    int ncmds, next;
    pid_t pid; /* running command, 0 when none */
    struct timespec start, deadline;
} slot;

struct conform_sched {
    char *cmd;
    int jobs;
    double timeout;
    slot *slots;
};

static struct timespec now_ts(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t;
}

static double ts_diff(struct timespec a, struct timespec b)
{
    return (double)(a.tv_sec - b.tv_sec) + (double)(a.tv_nsec - b.tv_nsec) * 1e-9;
}

conform_sched *conform_sched_new(const char *cmd, int jobs, double timeout)
{
    conform_sched *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->cmd = strdup(cmd);
    s->slots = calloc((size_t)jobs, sizeof *s->slots);
    if (!s->cmd || !s->slots) {
        free(s->cmd);
        free(s->slots);
        free(s);
        return NULL;
    }
    s->jobs = jobs;
    s->timeout = timeout;
    return s;
}

static void slot_clear(slot *sl)
{
    for (int i = 0; i < sl->ncmds; ++i) {
        free(sl->cmds[i].args);
        free(sl->cmds[i].stderr_path);
    }
    free(sl->cmds);
    memset(sl, 0, sizeof *sl);
}

/* Kill the process group of pid and reap pid. */
static void kill_reap(pid_t pid, int *status)
{
    kill(-pid, SIGKILL);
    while (waitpid(pid, status, 0) < 0 && errno == EINTR)
        ;
}

void conform_sched_free(conform_sched *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->jobs; ++i) {
        if (s->slots[i].pid > 0) {
            int st;
            kill_reap(s->slots[i].pid, &st);
        }
        slot_clear(&s->slots[i]);
    }
    free(s->slots);
    free(s->cmd);
    free(s);
}

int conform_sched_running(const conform_sched *s)
{
    int n = 0;
    for (int i = 0; i < s->jobs; ++i)
        n += s->slots[i].used;
    return n;
}

/* Start the next command of the slot; 0, or -1 when it cannot be spawned
 * (the result then says "exit status 127" with the reason as its tail). */
static int spawn_next(conform_sched *s, slot *sl)
{
    conform_cmd *c = &sl->cmds[sl->next++];
    conform_run *r = c->result;
    size_t len = strlen(s->cmd) + strlen(c->args) + 32;
    char *line = malloc(len);
    if (!line)
        return -1;
    snprintf(line, len, "%s %s", s->cmd, c->args);
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, c->stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    sigset_t def;
    sigemptyset(&def);
    for (size_t i = 0; i < N_TERM; ++i)
        sigaddset(&def, term_signals[i]);
    sigaddset(&def, SIGCHLD);
    posix_spawnattr_setsigdefault(&at, &def);
    posix_spawnattr_setsigmask(&at, &saved_mask);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
    char *argv[] = {"/bin/sh", "-c", line, NULL};
    pid_t pid;
    snprintf(r->op, sizeof r->op, "%.7s", c->args);
    char *sp = strchr(r->op, ' ');
    if (sp)
        *sp = '\0';
    r->ran = 1;
    sl->start = now_ts();
    int e = posix_spawn(&pid, "/bin/sh", &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    free(line);
    if (e != 0) {
        r->exited = 1;
        r->status = 127;
        snprintf(r->word, sizeof r->word, "(none)");
        snprintf(r->tail, sizeof r->tail, "tahq conform: cannot start /bin/sh: %s", strerror(e));
        sl->pid = 0;
        return -1;
    }
    setpgid(pid, pid); /* also in the parent, so the group exists before any kill */
    sl->pid = pid;
    return 0;
}

int conform_sched_start(conform_sched *s, size_t id, const conform_cmd *cmds, int ncmds)
{
    slot *sl = NULL;
    for (int i = 0; i < s->jobs && !sl; ++i)
        if (!s->slots[i].used)
            sl = &s->slots[i];
    if (!sl || ncmds < 1)
        return -1;
    sl->cmds = calloc((size_t)ncmds, sizeof *sl->cmds);
    if (!sl->cmds)
        return -1;
    sl->used = 1;
    sl->id = id;
    sl->ncmds = ncmds;
    for (int i = 0; i < ncmds; ++i) {
        sl->cmds[i].args = strdup(cmds[i].args);
        sl->cmds[i].stderr_path = strdup(cmds[i].stderr_path);
        sl->cmds[i].result = cmds[i].result;
        memset(cmds[i].result, 0, sizeof *cmds[i].result);
        if (!sl->cmds[i].args || !sl->cmds[i].stderr_path) {
            slot_clear(sl);
            return -1;
        }
    }
    struct timespec t = now_ts();
    sl->deadline = t;
    if (s->timeout > 0) {
        double whole = (double)(time_t)s->timeout;
        sl->deadline.tv_sec += (time_t)s->timeout;
        sl->deadline.tv_nsec += (long)((s->timeout - whole) * 1e9);
        if (sl->deadline.tv_nsec >= 1000000000L) {
            sl->deadline.tv_sec += 1;
            sl->deadline.tv_nsec -= 1000000000L;
        }
    }
    /* a command that cannot be spawned counts as run and failed; go on */
    while (sl->next < sl->ncmds && spawn_next(s, sl) != 0)
        ;
    return 0;
}

/* The slot's current command ended with wait status st. Returns 1 if the
 * case is finished. */
static int command_done(conform_sched *s, slot *sl, int st, int timed_out)
{
    conform_cmd *c = &sl->cmds[sl->next - 1];
    conform_run *r = c->result;
    r->seconds = ts_diff(now_ts(), sl->start);
    r->timed_out = timed_out;
    if (WIFEXITED(st)) {
        r->exited = 1;
        r->status = WEXITSTATUS(st);
    } else if (WIFSIGNALED(st)) {
        r->exited = 0;
        r->sig = WTERMSIG(st);
    }
    read_stderr(c->stderr_path, r);
    sl->pid = 0;
    if (timed_out)
        return 1; /* the rest of the case is not run */
    while (sl->next < sl->ncmds)
        if (spawn_next(s, sl) == 0)
            return 0;
    return 1;
}

long conform_sched_wait(conform_sched *s)
{
    for (;;) {
        if (got_signal) {
            for (int i = 0; i < s->jobs; ++i)
                if (s->slots[i].pid > 0) {
                    int st;
                    kill_reap(s->slots[i].pid, &st);
                    s->slots[i].pid = 0;
                }
            return -1;
        }
        struct timespec t = now_ts();
        double wait = 3600;
        for (int i = 0; i < s->jobs; ++i) {
            slot *sl = &s->slots[i];
            if (!sl->used)
                continue;
            if (sl->pid == 0) { /* nothing left to start (spawn failures) */
                size_t id = sl->id;
                slot_clear(sl);
                return (long)id;
            }
            siginfo_t info;
            memset(&info, 0, sizeof info);
            if (waitid(P_PID, (id_t)sl->pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
                info.si_pid == sl->pid) {
                /* exited: kill what it left behind in its group, then reap */
                int st = 0;
                kill_reap(sl->pid, &st);
                if (command_done(s, sl, st, 0)) {
                    size_t id = sl->id;
                    slot_clear(sl);
                    return (long)id;
                }
                continue;
            }
            if (s->timeout > 0) {
                double left = ts_diff(sl->deadline, t);
                if (left <= 0) {
                    int st = 0;
                    kill_reap(sl->pid, &st);
                    command_done(s, sl, st, 1);
                    size_t id = sl->id;
                    slot_clear(sl);
                    return (long)id;
                }
                if (left < wait)
                    wait = left;
            }
        }
        /* sleep until a child exits, a signal arrives or a deadline passes */
        struct timespec ts;
        ts.tv_sec = (time_t)wait;
        ts.tv_nsec = (long)((wait - (double)ts.tv_sec) * 1e9);
        if (ts.tv_nsec >= 1000000000L)
            ts.tv_nsec = 999999999L;
        sigset_t m = saved_mask;
        for (size_t i = 0; i < N_TERM; ++i)
            sigdelset(&m, term_signals[i]);
        sigdelset(&m, SIGCHLD);
        pselect(0, NULL, NULL, NULL, &ts, &m);
    }
}

/* ---------------------------------------------------------------- command check */

static int is_interpreter(const char *w)
{
    const char *b = strrchr(w, '/');
    b = b ? b + 1 : w;
    static const char *names[] = {"sh", "bash", "dash", "ksh", "zsh", "perl", "ruby", "node",
                                  "Rscript", "julia"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
        if (strcmp(b, names[i]) == 0)
            return 1;
    if (strncmp(b, "python", 6) == 0 && strspn(b + 6, "0123456789.") == strlen(b + 6))
        return 1;
    return 0;
}

/* Next plain word of s (no quoting or shell syntax), or 0 if the next word
 * is not plain (then nothing is checked). */
static int next_word(const char **s, char *w, size_t n)
{
    const char *p = *s;
    while (*p == ' ' || *p == '\t')
        ++p;
    size_t k = 0;
    while (p[k] && p[k] != ' ' && p[k] != '\t')
        ++k;
    if (k == 0 || k >= n)
        return 0;
    for (size_t i = 0; i < k; ++i)
        if (strchr("'\"\\$`;|&<>(){}[]*?~#!\n", p[i]))
            return 0;
    memcpy(w, p, k);
    w[k] = '\0';
    *s = p + k;
    return 1;
}

static int command_found(const char *w)
{
    struct stat st;
    if (strchr(w, '/'))
        return stat(w, &st) == 0 && S_ISREG(st.st_mode) && access(w, X_OK) == 0;
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/bin:/bin";
    char buf[4096];
    while (*path) {
        const char *e = strchr(path, ':');
        size_t len = e ? (size_t)(e - path) : strlen(path);
        int r = snprintf(buf, sizeof buf, "%.*s/%s", (int)len, len ? path : ".", w);
        if (r > 0 && (size_t)r < sizeof buf && stat(buf, &st) == 0 && S_ISREG(st.st_mode) &&
            access(buf, X_OK) == 0)
            return 1;
        path += len;
        if (*path == ':')
            ++path;
    }
    return 0;
}

/* NAME=value, NAME a shell name */
static int is_assignment(const char *w)
{
    const char *eq = strchr(w, '=');
    if (!eq || eq == w || (w[0] >= '0' && w[0] <= '9'))
        return 0;
    return strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") ==
           (size_t)(eq - w);
}

int conform_check_command(const char *cmd, char *err, size_t n)
{
    /* words after which the command proper follows: not checked */
    static const char *wrappers[] = {"exec", "command", "env", "nice", "nohup", "time",
                                     "timeout", "eval", ".", "cd", "ulimit", "xargs"};
    const char *s = cmd;
    char w[1024];
    do {
        if (!next_word(&s, w, sizeof w))
            return 0; /* not a plain word: the shell decides */
    } while (is_assignment(w));
    for (size_t i = 0; i < sizeof wrappers / sizeof wrappers[0]; ++i)
        if (strcmp(w, wrappers[i]) == 0)
            return 0;
    if (!command_found(w)) {
        snprintf(err, n, "the candidate command '%s' %s", w,
                 strchr(w, '/') ? (access(w, F_OK) == 0 ? "is not executable" : "does not exist")
                                : "is not found on PATH");
        return -1;
    }
    if (is_interpreter(w)) {
        char script[1024];
        if (next_word(&s, script, sizeof script) && script[0] != '-') {
            struct stat st;
            if (stat(script, &st) != 0 || !S_ISREG(st.st_mode)) {
                snprintf(err, n, "the candidate script '%s' (run by %s) does not exist", script,
                         w);
                return -1;
            }
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- text */

void conform_xml_str(FILE *f, const char *s)
{
    for (; *s; ++s) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            /* XML 1.0 has no other control characters */
            fputc((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t' && *s != '\r' ? '?' : *s,
                  f);
        }
    }
}

void conform_yaml_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; ++p) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p == '\t')
            fputs("\\t", f);
        else if (*p < 0x20)
            fprintf(f, "\\x%02x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}
