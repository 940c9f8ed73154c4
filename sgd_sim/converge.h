/* SPDX-License-Identifier: MIT */
/* converge.h - tahq-sim converge: the sweep (cmd_converge.c) and its
 * analysis, the model fits and the verdicts (converge_verdict.c). */
#ifndef TAHQ_SIM_CONVERGE_H
#define TAHQ_SIM_CONVERGE_H

#include <stdint.h>
#include <stdio.h>

#include "cmd_shared.h"
#include "direct_floor.h"
#include "fit.h"
#include "sim.h"

/* The verdict's thresholds (converge_verdict.c explains them). */
#define RATE_TOL 0.125
#define RES_LO 0.35
#define RES_HI 0.65
#define CLAIM_FLOOR_FRAC 0.05

/* At most this many methods, and horizons. */
enum { CONV_MAX_METHODS = 16, CONV_MAX_T = 16 };

/* converge methods: a codec name, optionally @BETA for the schedule
 * eta = c (T/T_tune)^-BETA / sqrt(T_tune) (equal to c/sqrt(T) at T_tune, so
 * c is tuned as for the 1/sqrt(T) schedule); default BETA = 1/2. */
typedef struct conv_method {
    char name[48];
    sim_method m;
    double sched;
} conv_method;

typedef struct conv_verdict {
    sim_fit_result fix1, free1;   /* first order: a T^-1/2 + b, a T^-beta + b */
    sim_fit_result fix2, free2;   /* the floor fit a T^-1/2 + a2/T + a3 T^-3/2 + b, the
                                        rate fit a T^-beta + a2/T + b */
    sim_fit_result fix2d, free2d; /* the same without the smallest horizon */
    sim_fit_result slow, fast;    /* a T^-beta + a2/T + b, beta = RES_LO and RES_HI */
    sim_fit_result slowd, fastd;  /* the same without the smallest horizon */
    double beta_lo, beta_hi;      /* union of the free2 and free2d intervals */
    double b, b_lo, b_hi;         /* the floor: estimate at beta = 1/2, union interval */
    int rate;                     /* 1 in the band [3/8, 5/8] (exponent not resolved
                                        from [RES_LO, RES_HI]), 0 not resolved, -1 different */
    int floor;                    /* 1 floor above 0, 0 consistent with 0, -1 below 0 */
    int floor_direct;             /* floor = 1 from the direct floor, the fit alone not */
    int fit_ok;
} conv_verdict;

/* One sweep: its methods, horizons, seeds, tuned steps, direct floors,
 * verdicts and output files. */
typedef struct converge {
    const sim_cli *o;
    sim_problem p;
    int nm; /* methods */
    char names[CONV_MAX_METHODS][48];
    conv_method cms[CONV_MAX_METHODS];
    double cbest[CONV_MAX_METHODS]; /* tuned c */
    int lo2, hi2, nT, ns;           /* T = 2^lo2 .. 2^hi2 (nT horizons), ns seeds */
    uint32_t Ts[CONV_MAX_T];
    double Td[CONV_MAX_T];
    uint32_t Ttune;
    gd_task gd[CONV_MAX_METHODS]; /* direct floors (SGD only) */
    conv_verdict vs[CONV_MAX_METHODS];
    double e_last[CONV_MAX_METHODS];       /* E at the largest horizon, the seed mean */
    FILE *fr, *fs, *ff, *fmod, *floc, *fv; /* converge_{runs,summary,fit,model,local,verdict}.csv */
} converge;

/* eta of method cm with tuned c at horizon T. */
double conv_eta(const conv_method *cm, double c, uint32_t T, uint32_t Ttune);

/* The fits of one method from its per-horizon, per-seed values
 * (vals[i * ns + s]) and the verdict drawn from them. */
void conv_analyse(const double *Td, const double *vals, int nT, int ns, uint64_t seed,
                  conv_verdict *v);

/* The verdicts of every method (c->vs from conv_analyse), the direct floor
 * beside the fitted one, the paper's claim and the controls; 1 when a
 * control fails. */
int conv_verdicts(converge *c);

#endif
