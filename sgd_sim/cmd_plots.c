/* SPDX-License-Identifier: MIT */
/* cmd_plots.c - tahq-sim plots: renders the figures of the CSVs in --out
 * with plots/sim.sh, found where an installed program finds its data
 * (common/tahq_datadir.h). */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd_shared.h"
#include "tahq_datadir.h"

int cmd_plots(const sim_cli *o)
{
    char script[3 * 4096 + 16];
    if (tahq_data_path("plots/sim.sh", script, sizeof script) != 0) {
        fprintf(stderr,
                "tahq-sim: plots/sim.sh not found (tried %s); set TAHQ_DATA_DIR to the "
                "folder that holds plots/\n",
                script);
        return 1;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execlp("sh", "sh", script, o->out, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0)
        return 1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

const sim_command sim_cmd_plots = {
    "plots",
    "render the plots (plots/sim.sh) from the CSVs in --out",
    "usage: tahq-sim plots [--out DIR]\nRenders the plots (plots/sim.sh) from the CSVs in DIR.\n",
    cmd_plots,
};
