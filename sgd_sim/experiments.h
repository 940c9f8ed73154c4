/* SPDX-License-Identifier: MIT */
/* tahq-sim commands */
#ifndef TAHQ_SIM_EXPERIMENTS_H
#define TAHQ_SIM_EXPERIMENTS_H

typedef struct sim_cli {
    const char *out;     /* output folder */
    int quick;
    int trajectory;      /* delta: along SGD's trajectory */
    int range;           /* floor: over steps and update precisions */
    int jobs;
    int seeds;           /* 0 = default */
    int K;
    int adamw;           /* --optimizer adamw */
    double beta1, beta2, eps;
    double weight_decay; /* < 0: the command's default */
    double lr;           /* train: step size, 0 = default */
    int steps;           /* train: 0 = default */
    const char *methods; /* comma list, NULL = default */
    const char *runs;    /* converge: analyse this converge_runs.csv instead of running */
    const char *calibrate; /* throughput: calibrate against this measurement (plots/links.py calib) */
} sim_cli;

int cmd_converge(const sim_cli *o);
int cmd_delta(const sim_cli *o);
int cmd_floor(const sim_cli *o);
int cmd_floor_range(const sim_cli *o);
int cmd_train(const sim_cli *o);
int cmd_throughput(const sim_cli *o);

#endif
