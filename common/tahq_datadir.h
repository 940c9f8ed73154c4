/* SPDX-License-Identifier: MIT */ /* tahq_datadir.h - where an installed program finds its data (the plot
 * scripts): share/tahq next to the program's own bin/ folder, so that an
 * installed tree still works after it is moved, with no source path compiled
 * in. Used by tahq (bounds --plots) and tahq-sim (plots).
 *
 * tahq_data_path(rel, out, n) looks for REL (e.g. "plots/bounds.sh") in
 *   1. $TAHQ_DATA_DIR/REL, when the variable is set;
 *   2. EXE/../share/tahq/REL, EXE the folder of the running program
 *      (/proc/self/exe): PREFIX/bin -> PREFIX/share/tahq; the build tree
 *      mirrors that layout (BUILD/cli -> BUILD/share/tahq, a link to the
 *      sources' plots/ made by CMake);
 *   3. TAHQ_INSTALL_DATADIR/REL, the configured install prefix's share/tahq
 *      (when the program was built with it).
 * Returns 0 and the path in out when found; -1 otherwise, with out holding
 * the candidates tried (separated by ", ") for the error message. */
#ifndef TAHQ_DATADIR_H
#define TAHQ_DATADIR_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline int tahq_data_try(const char *dir, const char *sub, const char *rel, char *out,
                                size_t n, char *tried, size_t tn)
{
    int w = snprintf(out, n, "%s%s/%s", dir, sub, rel);
    if (w < 0 || (size_t)w >= n)
        return -1;
    if (access(out, R_OK) == 0)
        return 0;
    /* the places tried, as much as fits in tn (the precision also keeps
     * GCC's format-truncation check from assuming out longer than that) */
    size_t used = strlen(tried);
    if (used < tn)
        snprintf(tried + used, tn - used, "%s%.*s", used ? ", " : "", (int)(tn - used), out);
    return -1;
}

static inline int tahq_data_path(const char *rel, char *out, size_t n)
{
    char tried[3 * 4096 + 8] = "";
    const char *env = getenv("TAHQ_DATA_DIR");
    if (env && *env && tahq_data_try(env, "", rel, out, n, tried, sizeof tried) == 0)
        return 0;
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0'; /* the program's folder */
            if (tahq_data_try(exe, "/../share/tahq", rel, out, n, tried, sizeof tried) == 0)
                return 0;
        }
    }
#ifdef TAHQ_INSTALL_DATADIR
    if (tahq_data_try(TAHQ_INSTALL_DATADIR, "", rel, out, n, tried, sizeof tried) == 0)
        return 0;
#endif
    snprintf(out, n, "%s", tried);
    return -1;
}

#endif
