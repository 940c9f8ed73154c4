/* SPDX-License-Identifier: MIT */
/* conform_run.c - running the candidate of `tahq conform --run`, an
 * untrusted program: each command in its own session and process group
 * under /bin/sh, up to N cases at a time, a per-case deadline, the exit
 * status and a bounded head and tail of its stderr (read through a pipe, so
 * a candidate cannot fill the disk), its outputs read without following
 * links and only as regular files of a bounded size, its input copies
 * created afresh, conform a child subreaper so that processes which leave
 * the candidate's session are still found and killed, and termination
 * signals turned into a clean stop (everything killed, the caller removes
 * its temporary directory). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conform.h"

extern char **environ;

/* what is kept of a candidate's stderr: the start (for its err_* word) and
 * the end (for the report) */
#define STDERR_HEAD 65536
#define STDERR_TAIL 4096

/* ---------------------------------------------------------------- signals */

static const int term_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
#define N_TERM (sizeof term_signals / sizeof term_signals[0])

static volatile sig_atomic_t got_signal;
static sigset_t saved_mask;
static struct sigaction saved_act[N_TERM + 1];
static int signals_on;

static void on_term(int sig)
{
    got_signal = sig;
}
static void on_chld(int sig)
{
    (void)sig;
}

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
    /* processes that leave the candidate's session (setsid, double fork)
     * become conform's children instead of init's, so clean-up finds them */
    (void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
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

int conform_signal_pending(void)
{
    return got_signal;
}

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

/* 1 if pid names no process (a folder of a conform that was killed) */
static int pid_gone(long pid)
{
    return pid > 0 && pid <= INT_MAX && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

int conform_tmpdir(char *buf, size_t n)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    /* folders of conforms that died by SIGKILL (no clean-up ran) carry
     * their process id: remove those of our own whose process is gone */
    DIR *d = opendir(tmp);
    if (d) {
        struct dirent *e;
        char p[4096];
        while ((e = readdir(d)) != NULL) {
            long pid;
            char tail[8];
            struct stat st;
            if (sscanf(e->d_name, "tahq-conform-%ld-%6s", &pid, tail) != 2 || strlen(tail) != 6 ||
                !pid_gone(pid))
                continue;
            int r = snprintf(p, sizeof p, "%s/%s", tmp, e->d_name);
            if (r > 0 && (size_t)r < sizeof p && lstat(p, &st) == 0 && S_ISDIR(st.st_mode) &&
                st.st_uid == geteuid())
                conform_rmtree(p);
        }
        closedir(d);
    }
    int r = snprintf(buf, n, "%s/tahq-conform-%ld-XXXXXX", tmp, (long)getpid());
    if (r < 0 || (size_t)r >= n || !mkdtemp(buf))
        return -1;
    return 0;
}

int conform_case_dir(const char *tmp, char *buf, size_t n)
{
    int r = snprintf(buf, n, "%s/case-XXXXXX", tmp);
    if (r < 0 || (size_t)r >= n || !mkdtemp(buf))
        return -1;
    return 0;
}

/* Remove everything in the folder open as dfd (which is closed): no link is
 * followed, folders the candidate made unreadable are opened up first. */
static void rm_contents(int dfd, int depth)
{
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (unlinkat(dfd, e->d_name, 0) == 0)
            continue;
        if (depth < 64) {
            int sub = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0) {
                (void)fchmodat(dfd, e->d_name, 0700, 0);
                sub = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            }
            if (sub >= 0) {
                (void)fchmod(sub, 0700);
                rm_contents(sub, depth + 1);
            }
            (void)unlinkat(dfd, e->d_name, AT_REMOVEDIR);
        }
    }
    closedir(d);
}

void conform_rmtree(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
        (void)fchmod(fd, 0700);
        rm_contents(fd, 0);
    }
    rmdir(dir);
}

/* Every failure leaves errno set by the failing step itself: callers
 * read ENOENT as "missing", and an errno left over from an earlier call
 * (a FIFO opens without touching errno) must not read as that. */
static int read_failed(int fd, uint8_t *b, int e)
{
    free(b);
    if (fd >= 0)
        close(fd);
    errno = e;
    return -1;
}

int conform_read_capped(const char *path, int nofollow, uint64_t cap, uint8_t **data, size_t *len,
                        char *err, size_t n)
{
    *data = NULL;
    *len = 0;
    /* O_NONBLOCK: opening a FIFO does not wait for a writer */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
    if (fd < 0) {
        int e = errno; /* kept for the caller: ENOENT is "missing" */
        snprintf(err, n, e == ELOOP ? "is a symbolic link" : "cannot open: %s", strerror(e));
        errno = e;
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, n, "is not a regular file");
        return read_failed(fd, NULL, EINVAL);
    }
    if ((uint64_t)st.st_size > cap) {
        snprintf(err, n, "has %llu bytes, more than the %llu this case allows",
                 (unsigned long long)st.st_size, (unsigned long long)cap);
        return read_failed(fd, NULL, EFBIG);
    }
    size_t want = (size_t)st.st_size;
    uint8_t *b = malloc(want + 1);
    if (!b) {
        snprintf(err, n, "out of memory");
        return read_failed(fd, NULL, ENOMEM);
    }
    size_t got = 0;
    /* one byte more than its size: a file that grows is not read on */
    while (got < want + 1) {
        ssize_t r = read(fd, b + got, want + 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            snprintf(err, n, "read error: %s", strerror(e));
            return read_failed(fd, b, e == ENOENT ? EIO : e);
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    if (got > want) {
        snprintf(err, n, "changed while it was read");
        return read_failed(fd, b, EAGAIN);
    }
    close(fd);
    *data = b;
    *len = got;
    return 0;
}

int conform_copy_in(const char *from, uint64_t bytes, const char *to)
{
    uint8_t *d;
    size_t len;
    char e[200];
    if (conform_read_capped(from, 0, bytes, &d, &len, e, sizeof e) != 0) {
        errno = EINVAL;
        return -1;
    }
    /* O_EXCL | O_NOFOLLOW in a folder made just now: never someone's link */
    int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (out < 0) {
        free(d);
        return -1;
    }
    int rc = 0;
    for (size_t w = 0; w < len;) {
        ssize_t k = write(out, d + w, len - w);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            rc = -1;
            break;
        }
        w += (size_t)k;
    }
    free(d);
    if (close(out) != 0)
        rc = -1;
    return rc;
}

int conform_write_text(const char *path, const char *text)
{
    (void)unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    size_t len = strlen(text);
    int rc = write(fd, text, len) == (ssize_t)len && write(fd, "\n", 1) == 1 ? 0 : -1;
    if (close(fd) != 0)
        rc = -1;
    return rc;
}

/* ---------------------------------------------------------------- processes */

/* pid, parent and session of a process from /proc/PID/stat; 0 or -1 */
static int proc_stat(long pid, long *ppid, long *sid)
{
    char p[64], buf[1024];
    snprintf(p, sizeof p, "/proc/%ld/stat", pid);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t r = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (r <= 0)
        return -1;
    buf[r] = '\0';
    const char *c = strrchr(buf, ')'); /* the name may hold anything */
    char state;
    long pgrp;
    if (!c || sscanf(c + 1, " %c %ld %ld %ld", &state, ppid, &pgrp, sid) != 4)
        return -1;
    return 0;
}

int conform_kill_strays(const pid_t *keep_sessions, int nkeep)
{
    const long self = (long)getpid();
    int killed_total = 0;
    for (int round = 0; round < 50; ++round) {
        /* every process and its parent; the descendants of conform are
         * found by following parents (a subreaper keeps them in its tree) */
        size_t cap = 1024, np = 0;
        long(*pr)[3] = malloc(cap * sizeof *pr);
        DIR *d = opendir("/proc");
        if (!pr || !d) {
            free(pr);
            if (d)
                closedir(d);
            return killed_total;
        }
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            char *end;
            long pid = strtol(e->d_name, &end, 10);
            long ppid, sid;
            if (*end || pid <= 0 || proc_stat(pid, &ppid, &sid) != 0)
                continue;
            if (np == cap) {
                long(*t)[3] = realloc(pr, 2 * cap * sizeof *pr);
                if (!t)
                    break;
                pr = t;
                cap *= 2;
            }
            pr[np][0] = pid;
            pr[np][1] = ppid;
            pr[np][2] = sid;
            np++;
        }
        closedir(d);
        int found = 0;
        for (size_t i = 0; i < np; ++i) {
            int kept = 0;
            /* a case's shell is kept by its pid too: between fork and its
             * setsid it is still in conform's session */
            for (int k = 0; k < nkeep && !kept; ++k)
                kept = pr[i][2] == (long)keep_sessions[k] || pr[i][0] == (long)keep_sessions[k];
            if (kept || pr[i][0] == self)
                continue;
            /* a descendant of conform? (depth bounded against cycles) */
            long up = pr[i][1];
            int mine = 0;
            for (int depth = 0; depth < 4096 && up > 1 && !mine; ++depth) {
                if (up == self) {
                    mine = 1;
                    break;
                }
                size_t j = 0;
                while (j < np && pr[j][0] != up)
                    ++j;
                up = j < np ? pr[j][1] : 0;
            }
            if (!mine)
                continue;
            kill((pid_t)pr[i][0], SIGKILL);
            found++;
            if (pr[i][1] == self) /* our child (reparented): reap it */
                (void)waitpid((pid_t)pr[i][0], NULL, 0);
        }
        free(pr);
        killed_total += found;
        if (!found)
            break;
    }
    return killed_total;
}

/* ---------------------------------------------------------------- results */

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGABRT:
        return "SIGABRT";
    case SIGALRM:
        return "SIGALRM";
    case SIGBUS:
        return "SIGBUS";
    case SIGFPE:
        return "SIGFPE";
    case SIGHUP:
        return "SIGHUP";
    case SIGILL:
        return "SIGILL";
    case SIGINT:
        return "SIGINT";
    case SIGKILL:
        return "SIGKILL";
    case SIGPIPE:
        return "SIGPIPE";
    case SIGQUIT:
        return "SIGQUIT";
    case SIGSEGV:
        return "SIGSEGV";
    case SIGTERM:
        return "SIGTERM";
    case SIGTRAP:
        return "SIGTRAP";
    default:
        return "?";
    }
}

void conform_run_text(const conform_run *r, double timeout, char *buf, size_t n)
{
    if (!r->ran)
        snprintf(buf, n, "was not run (the case's time ran out before it)");
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

int conform_run_crashed(const conform_run *r)
{
    /* killed by a signal, or a shell's 128 + N for a child it lost to one */
    return r->ran && !r->timed_out && (!r->exited || (r->status > 128 && r->status < 128 + 65));
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
        int len = c >= 0xc2 && c <= 0xdf   ? 2
                  : c >= 0xe0 && c <= 0xef ? 3
                  : c >= 0xf0 && c <= 0xf4 ? 4
                                           : 0;
        int ok = len > 0;
        for (int k = 1; ok && k < len; ++k)
            ok = (p[k] & 0xc0) == 0x80;
        if (ok && len == 3 && ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0)))
            ok = 0;
        if (ok && len == 4 && ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90)))
            ok = 0;
        /* U+FFFE and U+FFFF: valid UTF-8, but not XML 1.0 characters */
        if (ok && len == 3 && c == 0xef && p[1] == 0xbf && p[2] >= 0xbe)
            ok = 0;
        if (ok) {
            p += len;
        } else {
            *p = '?';
            ++p;
        }
    }
}

/* What is kept of one command's stderr while it runs. */
typedef struct err_buf {
    char head[STDERR_HEAD + 1];
    char ring[STDERR_TAIL];
    uint64_t total;
} err_buf;

static void err_add(err_buf *b, const char *d, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        if (b->total < STDERR_HEAD)
            b->head[b->total] = d[i];
        b->ring[b->total % STDERR_TAIL] = d[i];
        b->total++;
    }
}

/* First err_* word of the first 64 KiB of stderr and its last lines. */
static void read_stderr(const err_buf *b, conform_run *r)
{
    snprintf(r->word, sizeof r->word, "(none)");
    r->tail[0] = '\0';
    static char head[STDERR_HEAD + 1];
    size_t h = b->total < STDERR_HEAD ? (size_t)b->total : STDERR_HEAD;
    memcpy(head, b->head, h);
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
    char tail[STDERR_TAIL + 1];
    size_t t = b->total < STDERR_TAIL ? (size_t)b->total : STDERR_TAIL;
    for (size_t i = 0; i < t; ++i)
        tail[i] = b->ring[(b->total - t + i) % STDERR_TAIL];
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
    r->stderr_bytes = b->total;
}

/* ---------------------------------------------------------------- scheduler */

typedef struct slot {
    int used;
    size_t id;
    conform_cmd *cmds;
    int ncmds, next;
    pid_t pid; /* running command, 0 when none; also its session and group */
    int errfd; /* read end of its stderr pipe, -1 when none */
    err_buf *eb;
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
    for (int i = 0; i < jobs; ++i)
        s->slots[i].errfd = -1;
    return s;
}

static void slot_clear(slot *sl)
{
    for (int i = 0; i < sl->ncmds; ++i)
        free(sl->cmds[i].args);
    free(sl->cmds);
    if (sl->errfd >= 0)
        close(sl->errfd);
    err_buf *eb = sl->eb;
    memset(sl, 0, sizeof *sl);
    sl->eb = eb;
    sl->errfd = -1;
}

/* Read what the slot's stderr pipe holds now (at most `budget` bytes). */
static void drain_stderr(slot *sl, size_t budget)
{
    char buf[8192];
    while (sl->errfd >= 0 && budget > 0) {
        ssize_t r = read(sl->errfd, buf, sizeof buf < budget ? sizeof buf : budget);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r == 0 || errno != EAGAIN) {
                close(sl->errfd);
                sl->errfd = -1;
            }
            return;
        }
        err_add(sl->eb, buf, (size_t)r);
        budget -= (size_t)r;
    }
}

/* The running sessions other than the one of `except` (the processes
 * there are still some case's). */
static int running_sessions(const conform_sched *s, const slot *except, pid_t *out)
{
    int n = 0;
    for (int i = 0; i < s->jobs; ++i)
        if (&s->slots[i] != except && s->slots[i].pid > 0)
            out[n++] = s->slots[i].pid;
    return n;
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
        free(s->slots[i].eb);
    }
    /* what the candidate left outside its sessions (setsid children) */
    conform_kill_strays(NULL, 0);
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
    if (!sl->eb)
        sl->eb = malloc(sizeof *sl->eb);
    if (!line || !sl->eb) {
        free(line);
        return -1;
    }
    sl->eb->total = 0;
    snprintf(line, len, "%s %s", s->cmd, c->args);
    char *argv[] = {"/bin/sh", "-c", line, NULL};
    snprintf(r->op, sizeof r->op, "%.7s", c->args);
    char *sp = strchr(r->op, ' ');
    if (sp)
        *sp = '\0';
    r->ran = 1;
    sl->start = now_ts();
    int pfd[2] = {-1, -1};
    const pid_t parent = getpid();
    /* close-on-exec: no other case's candidate holds this pipe open */
    int piped = pipe(pfd) == 0 && fcntl(pfd[0], F_SETFD, FD_CLOEXEC) == 0 &&
                fcntl(pfd[1], F_SETFD, FD_CLOEXEC) == 0;
    pid_t pid = piped ? fork() : -1;
    if (pid == 0) {
        /* the child: only async-signal-safe calls until exec */
        setsid(); /* its own session and process group: killed as one */
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0); /* dies with a killed conform */
        if (getppid() != parent)
            _exit(127);
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = SIG_DFL;
        for (size_t i = 0; i < N_TERM; ++i)
            sigaction(term_signals[i], &sa, NULL);
        sigaction(SIGCHLD, &sa, NULL);
        sigprocmask(SIG_SETMASK, &saved_mask, NULL);
        int in = open("/dev/null", O_RDONLY), out = open("/dev/null", O_WRONLY);
        if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(pfd[1], 2) < 0)
            _exit(127);
        execve("/bin/sh", argv, environ);
        _exit(127);
    }
    int e = errno;
    free(line);
    if (pfd[1] >= 0)
        close(pfd[1]);
    if (pid < 0) {
        if (pfd[0] >= 0)
            close(pfd[0]);
        r->exited = 1;
        r->status = 127;
        snprintf(r->word, sizeof r->word, "(none)");
        snprintf(r->tail, sizeof r->tail, "tahq conform: cannot start /bin/sh: %s", strerror(e));
        sl->pid = 0;
        return -1;
    }
    fcntl(pfd[0], F_SETFL, fcntl(pfd[0], F_GETFL) | O_NONBLOCK);
    sl->errfd = pfd[0];
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
        sl->cmds[i].result = cmds[i].result;
        memset(cmds[i].result, 0, sizeof *cmds[i].result);
        if (!sl->cmds[i].args) {
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
    /* what is left in the pipe (a bounded amount: a process that left the
     * session may still be writing), then the pipe is closed */
    drain_stderr(sl, (size_t)1 << 20);
    if (sl->errfd >= 0) {
        close(sl->errfd);
        sl->errfd = -1;
    }
    read_stderr(sl->eb, r);
    sl->pid = 0;
    pid_t keep[CONFORM_JOBS_MAX];
    conform_kill_strays(keep, running_sessions(s, sl, keep));
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
        for (int i = 0; i < s->jobs; ++i)
            if (s->slots[i].pid > 0)
                drain_stderr(&s->slots[i], (size_t)1 << 20);
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
        fd_set rd;
        FD_ZERO(&rd);
        int maxfd = -1;
        for (int i = 0; i < s->jobs; ++i) {
            int fd = s->slots[i].pid > 0 ? s->slots[i].errfd : -1;
            if (fd >= 0 && fd < FD_SETSIZE) {
                FD_SET(fd, &rd);
                maxfd = fd > maxfd ? fd : maxfd;
            }
        }
        pselect(maxfd + 1, &rd, NULL, NULL, &ts, &m);
    }
}

/* ---------------------------------------------------------------- command check */

static int is_interpreter(const char *w)
{
    const char *b = strrchr(w, '/');
    b = b ? b + 1 : w;
    static const char *names[] = {"sh",   "bash", "dash", "ksh",     "zsh",
                                  "perl", "ruby", "node", "Rscript", "julia"};
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

/* Skip the options of a wrapper word (env, nice, ...) that come before the
 * command it runs; 0 when the words cannot be followed (the shell decides). */
static int skip_wrapper(const char *wrapper, const char **s, char *w, size_t n)
{
    for (;;) {
        const char *before = *s;
        if (!next_word(s, w, n))
            return 0;
        if (strcmp(wrapper, "env") == 0 &&
            (is_assignment(w) || strcmp(w, "-i") == 0 || strcmp(w, "-") == 0))
            continue;
        if (strcmp(wrapper, "env") == 0 && strcmp(w, "-u") == 0) {
            if (!next_word(s, w, n))
                return 0;
            continue;
        }
        if (strcmp(wrapper, "nice") == 0 && strcmp(w, "-n") == 0) {
            if (!next_word(s, w, n))
                return 0;
            continue;
        }
        if (strcmp(wrapper, "timeout") == 0 && w[0] != '-') {
            /* its duration, then the command */
            if (!next_word(s, w, n))
                return 0;
        }
        if (w[0] == '-') {
            if (strcmp(wrapper, "nice") == 0 || strcmp(wrapper, "nohup") == 0 ||
                strcmp(wrapper, "exec") == 0 || strcmp(wrapper, "command") == 0 ||
                strcmp(wrapper, "time") == 0)
                continue; /* -5, -p, --: no value follows */
            return 0;     /* an option whose value we do not know */
        }
        (void)before;
        return 1;
    }
}

int conform_check_command(const char *cmd, char *err, size_t n)
{
    /* words after which the command proper follows, with their options */
    static const char *wrappers[] = {"exec", "command", "env", "nice", "nohup", "time", "timeout"};
    /* words after which no single command can be checked */
    static const char *opaque[] = {"eval", ".", "cd", "ulimit", "xargs", "source"};
    const char *s = cmd;
    char w[1024];
    do {
        if (!next_word(&s, w, sizeof w))
            return 0; /* not a plain word: the shell decides */
    } while (is_assignment(w));
    for (int depth = 0; depth < 8; ++depth) {
        int wrapped = 0;
        for (size_t i = 0; i < sizeof opaque / sizeof opaque[0]; ++i)
            if (strcmp(w, opaque[i]) == 0)
                return 0;
        for (size_t i = 0; i < sizeof wrappers / sizeof wrappers[0] && !wrapped; ++i)
            if (strcmp(w, wrappers[i]) == 0) {
                char wrapper[16];
                snprintf(wrapper, sizeof wrapper, "%.15s", w);
                if (!skip_wrapper(wrapper, &s, w, sizeof w))
                    return 0;
                wrapped = 1;
            }
        if (!wrapped)
            break;
    }
    if (!command_found(w)) {
        snprintf(err, n, "the candidate command '%s' %s", w,
                 strchr(w, '/') ? (access(w, F_OK) == 0 ? "is not executable" : "does not exist")
                                : "is not found on PATH");
        return -1;
    }
    if (is_interpreter(w)) {
        /* the script is the first word that is not an option; an option
         * that takes a value or names code (-c, -m, -e, -W ...) ends the
         * check */
        int python = strncmp(strrchr(w, '/') ? strrchr(w, '/') + 1 : w, "python", 6) == 0;
        char interp[1024], script[1024];
        snprintf(interp, sizeof interp, "%s", w);
        for (;;) {
            if (!next_word(&s, script, sizeof script))
                return 0;
            if (script[0] != '-')
                break;
            if (strcmp(script, "--") == 0) {
                if (!next_word(&s, script, sizeof script))
                    return 0;
                break;
            }
            /* single-letter flags without a value: python -u -B -O -E -s
             * -S -I -b -d -q -v -x, shell -e -u -x -v ... */
            const char *flags = python ? "uBOEsSIbdqvxR" : "euxvnaf";
            if (strspn(script + 1, flags) != strlen(script + 1) || !script[1])
                return 0;
        }
        struct stat st;
        if (stat(script, &st) != 0 || !S_ISREG(st.st_mode)) {
            snprintf(err, n, "the candidate script '%s' (run by %s) does not exist", script,
                     interp);
            return -1;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- text */

void conform_xml_str(FILE *f, const char *s)
{
    for (; *s; ++s) {
        switch (*s) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&apos;", f);
            break;
        default:
            /* XML 1.0 has no other control characters */
            fputc((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t' && *s != '\r' ? '?' : *s, f);
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
