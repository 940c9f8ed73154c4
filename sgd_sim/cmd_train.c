/* SPDX-License-Identifier: MIT */
/* cmd_train.c - tahq-sim train: loss curves on the LLM-like residual-MLP
 * pipeline, one run per method (train.csv, train_eval.csv). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd_shared.h"
#include "sim.h"

/* ======================================================================== */
/* train: loss curves on the LLM-like residual-MLP pipeline                 */
/* ======================================================================== */
typedef struct train_task {
    const sim_problem *p;
    sim_method m;
    sim_opts so;
    int steps, every;
    double *loss, *eval; /* [steps], [steps/every+1] */
    sim_traffic tr;
    int failed;
} train_task;

/* task `task` of the array ctx, as the job pool runs it */
static void train_run(void *ctx, size_t task)
{
    train_task *t = (train_task *)ctx + task;
    sim_run *r = sim_run_new(t->p, &t->m, &t->so);
    if (!r) {
        t->failed = 1;
        return;
    }
    for (int s = 0; s < t->steps; s++) {
        if (s % t->every == 0)
            t->eval[s / t->every] = sim_run_eval_loss(r);
        t->loss[s] = sim_run_step(r);
        if (!isfinite(t->loss[s]))
            t->failed = 1;
    }
    t->eval[t->steps / t->every] = sim_run_eval_loss(r);
    sim_run_traffic(r, &t->tr);
    sim_run_free(r);
}

int cmd_train(const sim_cli *o)
{
    sim_problem p;
    if (sim_problem_mlp(&p, (uint32_t)o->K, 2))
        return 1;
    char names[16][48];
    int nm = sim_split_methods(
        o->methods, "fp32,fp16,tah,tah-tile-g16,tah-sr,plain4,plain2,tah2/1,aqsgd", names, 16);
    int steps = o->steps > 0 ? o->steps : (o->quick ? 200 : 1000), every = 25;
    train_task *tt = calloc(nm, sizeof *tt);
    for (int i = 0; i < nm; i++) {
        if (sim_method_parse(names[i], &tt[i].m)) {
            fprintf(stderr, "tahq-sim: unknown method %s\n", names[i]);
            return 2;
        }
        sim_note_no_low_units("train", names[i], &tt[i].m, 1, p.S, p.C);
        tt[i].p = &p;
        tt[i].so = (sim_opts){.micro = 4,
                              .batch = 1,
                              .eta = o->lr > 0  ? o->lr
                                     : o->adamw ? 1e-3
                                                : 0.02,
                              .adamw = o->adamw,
                              .beta1 = o->beta1,
                              .beta2 = o->beta2,
                              .eps = o->eps,
                              .weight_decay =
                                  o->weight_decay >= 0 ? o->weight_decay : SIM_ADAMW_WEIGHT_DECAY,
                              .clip = 1.0,
                              .seed = 3};
        tt[i].steps = steps;
        tt[i].every = every;
        tt[i].loss = calloc(steps, sizeof(double));
        tt[i].eval = calloc(steps / every + 1, sizeof(double));
    }
    printf(
        "train: LLM-like problem, K=%u residual MLP stages (C=%u, hidden %u), S=%u, %u sequences, "
        "4 micro-batches x 1 sequence, %s eta=%g, per-stage clip 1.0, %d steps\n",
        p.K, p.C, p.d, p.S, p.n_seq, o->adamw ? "AdamW" : "SGD", tt[0].so.eta, steps);
    if (o->adamw)
        printf("train: AdamW beta1=%g beta2=%g eps=%g weight_decay=%g (decoupled)\n", o->beta1,
               o->beta2, o->eps, tt[0].so.weight_decay);
    sim_jobs_run(o->jobs, (size_t)nm, train_run, tt, "train");
    FILE *f = sim_open_csv(o, "train.csv", "method,step,loss");
    FILE *fe = sim_open_csv(o, "train_eval.csv", "method,step,eval_loss");
    printf("%-10s %10s %10s %10s %9s %9s %12s\n", "method", "loss@0", "eval@end", "avg_last10%",
           "fwd_b/e", "bwd_b/e", "cache_bytes");
    for (int i = 0; i < nm; i++) {
        double tail = 0;
        int nt = steps / 10 > 0 ? steps / 10 : 1;
        for (int s = 0; s < steps; s++) {
            if (f)
                fprintf(f, "%s,%d,%.6g\n", names[i], s, tt[i].loss[s]);
            if (s >= steps - nt)
                tail += tt[i].loss[s] / nt;
        }
        for (int s = 0; s <= steps / every; s++)
            if (fe)
                fprintf(fe, "%s,%d,%.6g\n", names[i], s * every, tt[i].eval[s]);
        printf("%-10s %10.4f %10.4f %10.4f %9.3f %9.3f %12llu%s\n", names[i], tt[i].eval[0],
               tt[i].eval[steps / every], tail,
               8.0 * tt[i].tr.fwd_bytes / (double)tt[i].tr.fwd_elems,
               8.0 * tt[i].tr.bwd_bytes / (double)tt[i].tr.bwd_elems,
               (unsigned long long)tt[i].tr.cache_bytes,
               tt[i].failed ? "  (diverged/codec error)" : "");
        free(tt[i].loss);
        free(tt[i].eval);
    }
    sim_close_out(f);
    sim_close_out(fe);
    free(tt);
    sim_problem_free(&p);
    return 0;
}

const sim_command sim_cmd_train = {
    "train",
    "loss curves on the LLM-like residual-MLP pipeline",
    "usage: tahq-sim train [--methods LIST] [--steps N] [--lr X] [--optimizer sgd|adamw ...] "
    "[--out DIR]\n"
    "Loss curves on the LLM-like residual-MLP pipeline (1000 steps; --quick 200). Writes train.csv "
    "and\n"
    "train_eval.csv.\n",
    cmd_train,
};
