/* SPDX-License-Identifier: MIT */
/* cmd_throughput.c - tahq-sim throughput: message sizes and codec times of
 * one GPT2-XL-sized micro-batch and a GPipe step-time model over slow
 * links (throughput.csv); with --calibrate, the event model of
 * links_model.h against a measurement. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "cmd_shared.h"
#include "links_model.h"
#include "sim.h"

static double median5(double *v, int n)
{
    gsl_sort(v, 1, (size_t)n);
    return gsl_stats_median_from_sorted_data(v, 1, (size_t)n);
}

/* The model's assumptions, printed with the table and written next to the
 * CSV (throughput_assumptions.txt) so that a report can quote them as stated. */
static void throughput_assumptions(FILE *f, uint32_t B, uint32_t S, uint32_t C, uint32_t K,
                                   uint32_t M, double t_fwd, double t_bwd, double lat)
{
    fprintf(f,
            "throughput model (GPipe, K=%u stages, M=%u micro-batches of [%u, %u, %u] per step):\n",
            K, M, B, S, C);
    fprintf(f,
            "  - per stage and micro-batch compute: forward %.1f ms, backward %.1f ms (GPT2-XL "
            "1.5B / 8 stages,\n"
            "    2*N*tokens flops forward and twice that backward at an assumed 40 TFLOP/s "
            "sustained)\n",
            t_fwd * 1e3, t_bwd * 1e3);
    fprintf(
        f,
        "  - one full-duplex link per boundary, bandwidth as listed, %.1f ms latency per message\n",
        lat * 1e3);
    fprintf(
        f,
        "  - transfer of micro-batch i overlaps compute of micro-batch i+1: a pipeline slot takes\n"
        "    max(compute + encode + decode, latency + bytes*8/bandwidth); step = (M + K - 1) "
        "slots\n"
        "    forward + (M + K - 1) slots backward (GPipe fill and drain), no other overheads\n");
    fprintf(
        f,
        "  - codec time: 'cpu' = encode+decode measured here with the single-thread C reference;\n"
        "    'free' = codec time 0 (GPU kernels, as in the authors' runs)\n");
    fprintf(f,
            "  - AQ-SGD: steady state after the first epoch (4-bit delta + fp16 scales); its first "
            "epoch\n"
            "    sends fp32. Its cache costs 2*S*C*2 = %.2f MB per sample per stage\n",
            4.0 * S * C / 1e6);
    fprintf(f, "  - backward: fixpoint 6-bit for every compressed method, fp32 for fp32\n");
}

int cmd_throughput(const sim_cli *o)
{
    /* one micro-batch of GPT2-XL: [1, 1024, 1600]; LLM-like values */
    const uint32_t B = 1, S = o->quick ? 256 : 1024, C = 1600, K = 8, M = 32;
    const double t_fwd = 9.6e-3 * S / 1024.0, t_bwd = 19.2e-3 * S / 1024.0, lat = 1e-3;
    size_t n = (size_t)B * S * C;
    float *x = malloc(sizeof(float) * n), *prev = malloc(sizeof(float) * n),
          *y = malloc(sizeof(float) * n);
    float *g = malloc(sizeof(float) * n);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 11);
    for (uint32_t t = 0; t < S; t++)
        for (uint32_t c = 0; c < C; c++) {
            double v = gsl_ran_gaussian(rng, 1.0);
            if (c == 3 || c == 700)
                v *= 20;
            if ((t == 0 || t % 97 == 13) && (c == 3 || c == 700))
                v = c == 3 ? 2000 : -1200;
            x[(size_t)t * C + c] = (float)v;
            prev[(size_t)t * C + c] = (float)(v + gsl_ran_gaussian(rng, 0.05 * fabs(v) + 0.01));
            g[(size_t)t * C + c] = (float)(gsl_ran_gaussian(rng, 1e-4) * (c % 64 == 5 ? 10 : 1));
        }
    gsl_rng_free(rng);
    const char *mn[] = {"fp32", "fp16", "aqsgd", "tah", "tah-tile", "plain4"};
    const int nm = 6;
    double fb[6], bb[6], tf[6], tb[6];
    int reps = o->quick ? 3 : 5;
    for (int i = 0; i < nm; i++) {
        sim_method m;
        sim_method_parse(mn[i], &m);
        sim_note_no_low_units("throughput", mn[i], &m, B, S, C);
        double ts[8], us[8];
        for (int r = 0; r < reps; r++) {
            double a = sim_now();
            fb[i] = (double)sim_fwd_roundtrip(&m, B, S, C, x, prev, y, 1);
            ts[r] = sim_now() - a;
            a = sim_now();
            bb[i] = (double)sim_bwd_roundtrip(&m, B, S, C, g, y, 1);
            us[r] = sim_now() - a;
        }
        tf[i] = m.fwd == SIM_FWD_NONE ? 0 : median5(ts, reps);
        tb[i] = m.bwd == SIM_BWD_NONE ? 0 : median5(us, reps);
        fprintf(stderr, "throughput: measured %s\n", mn[i]);
    }
    throughput_assumptions(stdout, B, S, C, K, M, t_fwd, t_bwd, lat);
    printf("\n");
    FILE *fa = sim_open_out(o, "throughput_assumptions.txt");
    if (fa) {
        throughput_assumptions(fa, B, S, C, K, M, t_fwd, t_bwd, lat);
        fclose(fa);
    }
    printf("%-9s %12s %12s %10s %10s\n", "method", "fwd_bytes", "bwd_bytes", "enc+dec_ms",
           "bwd_ms");
    for (int i = 0; i < nm; i++)
        printf("%-9s %12.0f %12.0f %10.2f %10.2f\n", mn[i], fb[i], bb[i], tf[i] * 1e3, tb[i] * 1e3);
    static const double bws[] = {10e9, 5e9, 2e9, 1e9, 500e6, 200e6, 100e6};
    FILE *f = sim_open_csv(
        o, "throughput.csv",
        "bandwidth_bps,method,codec,fwd_bytes,bwd_bytes,step_s,tokens_per_s,speedup_vs_fp32");
    for (int mode = 0; mode < 2; mode++) {
        printf("\ntokens/s (codec %s; speedup vs fp32 in parentheses)\n%-9s", mode ? "free" : "cpu",
               "link");
        for (int i = 0; i < nm; i++)
            printf(" %17s", mn[i]);
        printf("\n");
        for (size_t b = 0; b < sizeof bws / sizeof bws[0]; b++) {
            double base = 0;
            printf("%6.0fMb ", bws[b] / 1e6);
            for (int i = 0; i < nm; i++) {
                double cf = mode ? 0 : tf[i], cb = mode ? 0 : tb[i];
                double xf = lat + fb[i] * 8 / bws[b], xb = lat + bb[i] * 8 / bws[b];
                double sf = fmax(t_fwd + cf, xf), sb = fmax(t_bwd + cb, xb);
                double step = (M + K - 1) * (sf + sb);
                double tps = (double)M * B * S / step;
                if (i == 0)
                    base = tps;
                printf(" %9.0f (%5.2fx)", tps, tps / base);
                if (f)
                    fprintf(f, "%.0f,%s,%s,%.0f,%.0f,%.6g,%.6g,%.4f\n", bws[b], mn[i],
                            mode ? "free" : "cpu", fb[i], bb[i], step, tps, tps / base);
            }
            printf("\n");
        }
    }
    sim_close_out(f);
    free(x);
    free(prev);
    free(y);
    free(g);
    if (o->calibrate)
        return lk_calibrate(o->calibrate, o->out, nm, mn, fb, bb, S, C);
    return 0;
}

const sim_command sim_cmd_throughput = {
    "throughput",
    "GPipe step-time model over 10 Gbps .. 100 Mbps links",
    "usage: tahq-sim throughput [--quick] [--out DIR] [--calibrate FILE]\n"
    "Message sizes and codec times of one GPT2-XL-sized micro-batch, and a GPipe step-time model "
    "over\n"
    "10 Gbps .. 100 Mbps links. Writes throughput.csv and throughput_assumptions.txt.\n"
    "--calibrate FILE: an event model of the step (overlapped or blocking sends) with the "
    "compute,\n"
    "codec and update times, message sizes and link latency measured over shaped links\n"
    "(scripts/slow_links.sh; FILE from plots/links.py calib): model vs measurement per link, "
    "method\n"
    "and phase with residuals, model curves, AQ-SGD/TAH vs epochs, and the projection to the "
    "paper's\n"
    "setting with its assumptions. Writes links_model_points.csv, links_model_curve.csv,\n"
    "links_epochs.csv, links_projection.csv and links_projection.txt.\n",
    cmd_throughput,
};
