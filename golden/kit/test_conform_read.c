/* SPDX-License-Identifier: MIT */
/* conform_read_capped's errno contract: ENOENT exactly when nothing is at
 * the path. conform reports "missing X" on ENOENT and the reason in err
 * otherwise, so a stale ENOENT left by an earlier call turned a FIFO
 * candidate output into "missing" (seen under ASan, whose interceptors
 * leave a different errno behind). Each case plants errno = ENOENT first. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "conform.h"

static int failures;

static void expect(const char *what, const char *path, int nofollow, uint64_t cap, int want_rc,
                   int want_missing, const char *want_err)
{
    uint8_t *d = NULL;
    size_t len = 0;
    char err[200] = "";
    errno = ENOENT;
    int rc = conform_read_capped(path, nofollow, cap, &d, &len, err, sizeof err);
    int missing = rc != 0 && errno == ENOENT;
    int ok = rc == want_rc && missing == want_missing && strstr(err, want_err) != NULL;
    printf("%s %s: rc %d, missing %d, err \"%s\"\n", ok ? "ok  " : "FAIL", what, rc, missing, err);
    failures += !ok;
    free(d);
}

int main(void)
{
    char dir[] = "/tmp/tahq-conform-read-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char reg[256], fifo[256], none[256], link[256];
    snprintf(reg, sizeof reg, "%s/reg", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(none, sizeof none, "%s/none", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    FILE *f = fopen(reg, "wb");
    if (!f || fwrite("12345678", 1, 8, f) != 8 || fclose(f) != 0 || mkfifo(fifo, 0600) != 0 ||
        symlink(reg, link) != 0) {
        perror("setting up");
        return 1;
    }
    /* the control: a plain absent path is "missing" */
    expect("absent path", none, 1, 100, -1, 1, "cannot open");
    expect("regular file", reg, 1, 100, 0, 0, "");
    expect("FIFO", fifo, 1, 100, -1, 0, "is not a regular file");
    expect("directory", dir, 1, 100, -1, 0, "is not a regular file");
    expect("over the cap", reg, 1, 7, -1, 0, "more than the 7");
    expect("symbolic link, nofollow", link, 1, 100, -1, 0, "symbolic link");
    expect("symbolic link, followed", link, 0, 100, 0, 0, "");
    unlink(reg);
    unlink(fifo);
    unlink(link);
    rmdir(dir);
    printf("%s\n", failures ? "FAILED" : "all passed");
    return failures != 0;
}
