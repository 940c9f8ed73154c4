/* tahq-sim: pipeline-parallel SGD with compressed stage boundaries. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "experiments.h"
#include "sim.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tahq-sim COMMAND [options]\n"
            "commands:\n"
            "  converge    SGD rate on the smooth problem: avg/min |grad f|^2 vs T, slopes, CIs\n"
            "  delta       relative bias (delta) and variance of the compressed gradient per codec\n"
            "  train       loss curves on the LLM-like residual-MLP pipeline\n"
            "  throughput  GPipe step-time model over 10 Gbps .. 100 Mbps links\n"
            "  plots       render the plots (plots/sim.sh) from the CSVs in --out\n"
            "  all         converge, delta, train, throughput, plots\n"
            "options:\n"
            "  --out DIR       output folder (build-sim/sim)\n"
            "  --quick         small sweep (converge: T = 2^8..2^12, asserts slopes and ratio)\n"
            "  --jobs N        worker threads (2)\n"
            "  --seeds N       seeds per T (10)\n"
            "  --stages K      pipeline stages, 2..8 (4)\n"
            "  --methods LIST  comma list: fp32 fp16 tah tahH/L tah-tile tah-sr plainB aqsgd,\n"
            "                  each optionally +bwd-none, +bwd-fixB or +bwd-tah\n"
            "  --steps N       train: steps\n"
            "  --optimizer O   sgd (default) or adamw, for converge and train (--adamw = adamw)\n"
            "  --lr X          train: step size (SGD 0.02, AdamW 0.001)\n"
            "  --beta1 X       AdamW first-moment decay (0.9)\n"
            "  --beta2 X       AdamW second-moment decay (0.999)\n"
            "  --eps X         AdamW denominator epsilon (1e-8)\n"
            "  --weight-decay X  AdamW decoupled weight decay (train 0.01; converge 0, since\n"
            "                  decay moves the stationary point away from w*)\n"
            "converge tunes c in eta = c/sqrt(T) once per method on a log grid: SGD c = gamma/L,\n"
            "gamma = 0.25..16; AdamW c = 2^-7..2^-1 (converge_tuning.csv records grid and choice).\n");
}

static int run_plots(const char *out)
{
    pid_t pid = fork();
    if (pid == 0) {
        execlp("sh", "sh", TAHQ_SIM_PLOTS, out, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0)
        return 1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    sim_cli o = {.out = "build-sim/sim", .jobs = 2, .K = 4, .beta1 = SIM_ADAMW_BETA1,
                 .beta2 = SIM_ADAMW_BETA2, .eps = SIM_ADAMW_EPS, .weight_decay = -1};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--quick") == 0)
            o.quick = 1;
        else if (strcmp(a, "--adamw") == 0)
            o.adamw = 1;
        else if (strcmp(a, "--optimizer") == 0 && v) {
            const char *x = argv[++i];
            if (strcmp(x, "sgd") == 0)
                o.adamw = 0;
            else if (strcmp(x, "adamw") == 0)
                o.adamw = 1;
            else {
                fprintf(stderr, "tahq-sim: --optimizer must be sgd or adamw, not %s\n", x);
                return 2;
            }
        } else if ((strcmp(a, "--beta1") == 0 || strcmp(a, "--beta2") == 0 || strcmp(a, "--eps") == 0 ||
                    strcmp(a, "--weight-decay") == 0 || strcmp(a, "--lr") == 0) && v) {
            char *end = NULL;
            double x = strtod(argv[++i], &end);
            if (!end || *end || !(x >= 0) || x > 1e6) {
                fprintf(stderr, "tahq-sim: %s needs a non-negative number, not %s\n", a, argv[i]);
                return 2;
            }
            if (strcmp(a, "--beta1") == 0)
                o.beta1 = x;
            else if (strcmp(a, "--beta2") == 0)
                o.beta2 = x;
            else if (strcmp(a, "--eps") == 0)
                o.eps = x;
            else if (strcmp(a, "--lr") == 0)
                o.lr = x;
            else
                o.weight_decay = x;
        } else if (strcmp(a, "--out") == 0 && v)
            o.out = argv[++i];
        else if (strcmp(a, "--jobs") == 0 && v)
            o.jobs = atoi(argv[++i]);
        else if (strcmp(a, "--seeds") == 0 && v)
            o.seeds = atoi(argv[++i]);
        else if (strcmp(a, "--stages") == 0 && v)
            o.K = atoi(argv[++i]);
        else if (strcmp(a, "--steps") == 0 && v)
            o.steps = atoi(argv[++i]);
        else if (strcmp(a, "--methods") == 0 && v)
            o.methods = argv[++i];
        else {
            fprintf(stderr, "tahq-sim: unknown option %s\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (o.K < 2 || o.K > 8 || o.jobs < 1 || o.jobs > 16 || o.seeds < 0 || o.seeds == 1) {
        fprintf(stderr, "tahq-sim: --stages must be 2..8, --jobs 1..16, --seeds >= 2\n");
        return 2;
    }
    if (o.beta1 >= 1 || o.beta2 >= 1 || o.eps <= 0) {
        fprintf(stderr, "tahq-sim: --beta1 and --beta2 must be in [0, 1), --eps > 0\n");
        return 2;
    }
    sim_blas_init();
    const char *c = argv[1];
    if (strcmp(c, "converge") == 0)
        return cmd_converge(&o);
    if (strcmp(c, "delta") == 0)
        return cmd_delta(&o);
    if (strcmp(c, "train") == 0)
        return cmd_train(&o);
    if (strcmp(c, "throughput") == 0)
        return cmd_throughput(&o);
    if (strcmp(c, "plots") == 0)
        return run_plots(o.out);
    if (strcmp(c, "all") == 0) {
        int rc = cmd_converge(&o);
        rc |= cmd_delta(&o);
        rc |= cmd_train(&o);
        rc |= cmd_throughput(&o);
        rc |= run_plots(o.out);
        return rc;
    }
    fprintf(stderr, "tahq-sim: unknown command %s\n", c);
    usage(stderr);
    return 2;
}
