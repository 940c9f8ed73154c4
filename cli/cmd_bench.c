/* SPDX-License-Identifier: MIT */
/* cmd_bench.c - tahq bench: encode / decode throughput on an LLM-like tensor
 * for each profile and rounding mode, beside memcpy of the same number of
 * bytes measured in the same run (every repetition times memcpy, encode and
 * decode back to back, so each ratio compares numbers taken under the same
 * machine load), plus the peak memory of one round trip. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "codec_ops.h"
#include "commands.h"
#include "cpu_path.h"
#include "llm_tensor.h"
#include "tahq_jobs.h"
#include "tahq_paper_v1.h"
#include "util.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define BENCH_X86 1
#endif

#define BENCH_CHANNELS 2048u /* 8 KiB of float32 per token */
#define BENCH_SEQ 1024u

/* Called through a volatile pointer so that the copy cannot be removed. */
static void *(*volatile memcpy_fn)(void *, const void *, size_t) = memcpy;
static volatile uint32_t g_sink;
static volatile float g_fsink;

static void bench_help(void)
{
    printf(
        "usage: tahq bench [--mib N] [--reps R] [--threads T] [--paths LIST] [--gain] [--json]\n"
        "Throughput of encode and decode on an LLM-like float32 tensor of N MiB\n"
        "(default 64; [N/8, 1024, 2048] if N is a multiple of 8, else [1, 128*N, 2048]),\n"
        "for each profile and rounding mode:\n"
        "  canonical nearest     the paper operating point (G=64 4/3 r=800 token tau=2 fp16)\n"
        "  canonical stochastic  the same with stochastic rounding (seed 0)\n"
        "  gain nearest          with --gain: the paper point in gain allocation\n"
        "                        (alloc 3, SPEC 4.3), and gain stochastic\n"
        "  paper-v1 nearest      the authors' format (SPEC Appendix A; nearest only)\n"
        "and each codec: 'reference' (tahq_encode / tahq_decode, tahq_paper_v1_*; one\n"
        "thread) and 'parallel' (tahq_encode_parallel / tahq_decode_parallel,\n"
        "tahq_paper_v1_encode_parallel / _decode_parallel: the fast paths) on 1 and on T threads\n"
        "(--threads, 1..256, default 1); the parallel codec's message and output are\n"
        "compared with the reference's (the bench fails if they differ).\n"
        "The canonical and gain profiles' parallel codec runs once per CPU path\n"
        "(--paths, a comma-separated list of scalar, avx2, avx512; default every path\n"
        "this CPU has): scalar = the reference's functions divided among threads,\n"
        "avx2 = AVX2/BMI2/F16C, avx512 = its 16-lane forms (cpu/cpu_path.h); a listed\n"
        "path the CPU lacks is reported and left out. Each such row names its path\n"
        "and the runs of each path's code it counted (JSON \"cpu_path\",\n"
        "\"cpu_path_runs\"); the reference and paper-v1 rows have \"cpu_path\": null\n"
        "(they do not use the selector).\n"
        "With T > 1, three controls each run on 1 and on T threads at once (best of 3):\n"
        "  integer  the same integer work (an xorshift chain) on each thread, lasting as\n"
        "           long as the 1-thread encode, as the decode, and 0.5 s: the speedup\n"
        "           the machine allows work of that length at that moment (T on idle\n"
        "           cores)\n"
        "  vector   12 independent chains of AVX2 multiplies and adds on registers, no\n"
        "           memory, the same on each thread, as long as the encode: near T when\n"
        "           the threads have vector units of their own, near 1 when they share\n"
        "           one core's; 'skipped: no AVX2' where the CPU lacks AVX2\n"
        "  stream   the input read (4 bytes per element) and 0.5 bytes per element\n"
        "           written, with next to no arithmetic, the tensor split among the\n"
        "           threads as the parallel encoder splits it, in passes as long as the\n"
        "           encode: GB/s of input on 1 and on T threads (each also against the\n"
        "           memcpy of the encode's row) and T's over 1's: the memory bandwidth\n"
        "           encode's traffic can have\n"
        "The encode they are timed against is canonical nearest's, parallel codec, on\n"
        "1 and T threads; its speedup is printed beside the three (JSON\n"
        "\"thread_scaling_control\": \"vector\", \"stream\", \"encode\").\n"
        "Each repetition times memcpy of the same bytes, then encode, then decode;\n"
        "GB/s = 10^9 bytes of float32 per second, best of R repetitions (default 5),\n"
        "and each ratio is against the memcpy of the same row.\n"
        "Also reported: the peak resident memory (getrusage ru_maxrss) of one round\n"
        "trip of the tensor (canonical nearest, parallel codec on T threads: encode,\n"
        "then decode) in a child process, next to input + message + output bytes;\n"
        "the date, uname, CPU model and load average. The encode the controls are\n"
        "timed against and the round trip run on the best listed path.\n"
        "--json prints one JSON object instead of the table (top-level GB/s fields:\n"
        "canonical nearest, reference codec).\n");
}

static int opt_mib(const cli_option *opt, const char *v)
{
    uint32_t *mib = opt->dst;
    if (cli_parse_u32(v, 1u << 20, mib) != 0 || *mib == 0)
        return cli_fail(EXIT_USAGE, "invalid value '%s' for --mib (need 1..1048576)", v), -1;
    return 0;
}

static int opt_reps(const cli_option *opt, const char *v)
{
    uint32_t *reps = opt->dst;
    if (cli_parse_u32(v, 100000u, reps) != 0 || *reps == 0)
        return cli_fail(EXIT_USAGE, "invalid value '%s' for --reps (need 1..100000)", v), -1;
    return 0;
}

/* --paths: a bit per path named in the comma-separated list */
static int opt_paths(const cli_option *opt, const char *v)
{
    unsigned *set = opt->dst;
    *set = 0;
    char buf[64];
    snprintf(buf, sizeof buf, "%s", v);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        tahq_cpu_path p;
        if (!tahq_cpu_path_parse(tok, &p))
            return cli_fail(EXIT_USAGE, "invalid path '%s' in --paths (scalar, avx2, avx512)", tok),
                   -1;
        *set |= 1u << p;
    }
    if (*set == 0)
        return cli_fail(EXIT_USAGE, "--paths needs at least one path"), -1;
    return 0;
}

/* ---- the codecs under test ------------------------------------------------ */

typedef enum { PROF_CANONICAL, PROF_PAPER_V1 } bench_profile;

typedef struct bench_case {
    const char *profile;
    const char *rounding;
    bench_profile kind;
    tahq_config cfg;          /* canonical */
    tahq_paper_v1_config pv1; /* paper-v1 */
} bench_case;

typedef struct bench_bufs {
    const tahq_shape *shape;
    const float *x;
    float *y;
    uint8_t *msg;
    size_t cap;
    void *ws;
    size_t wsz;
} bench_bufs;

static tahq_status case_sizes(const bench_case *c, const tahq_shape *shape, uint32_t threads,
                              int par, size_t *cap, size_t *wsz)
{
    if (c->kind == PROF_PAPER_V1) {
        tahq_status st = tahq_paper_v1_encode_bound(&c->pv1, shape, cap);
        if (st != TAHQ_OK)
            return st;
        return par ? tahq_paper_v1_encode_parallel_workspace_size(&c->pv1, shape, wsz)
                   : tahq_paper_v1_workspace_size(&c->pv1, shape, wsz);
    }
    tahq_status st = tahq_encode_bound(&c->cfg, shape, cap);
    if (st != TAHQ_OK)
        return st;
    return par ? tahq_encode_parallel_workspace_size(&c->cfg, shape, threads, wsz)
               : tahq_encode_workspace_size(&c->cfg, shape, wsz);
}

/* Whether the profile has the CPU codec (any number of threads): format 1
 * (tahq_encode_parallel / tahq_decode_parallel) and paper-v1
 * (tahq_paper_v1_encode_parallel / tahq_paper_v1_decode_parallel) both have. */
static int case_has_cpu(const bench_case *c)
{
    return c->kind == PROF_CANONICAL || c->kind == PROF_PAPER_V1;
}

/* Whether the case's parallel codec runs the path selector's code (format 1:
 * canonical and gain; paper-v1 has its own BMI2 check). */
static int case_uses_path(const bench_case *c)
{
    return c->kind == PROF_CANONICAL;
}

/* par 0: the reference codec (tahq_encode, tahq_paper_v1_encode); par 1:
 * tahq_encode_parallel / tahq_paper_v1_encode_parallel on `threads` threads
 * (their fast paths). */
static tahq_status case_encode(const bench_case *c, const bench_bufs *b, uint32_t threads, int par,
                               size_t *len)
{
    tahq_parallel p;
    tahq_parallel_threads(&p, threads);
    if (c->kind == PROF_PAPER_V1)
        return par ? tahq_paper_v1_encode_parallel(&c->pv1, b->shape, b->x, b->ws, b->wsz, b->msg,
                                                   b->cap, len, &p)
                   : tahq_paper_v1_encode(&c->pv1, b->shape, b->x, b->ws, b->wsz, b->msg, b->cap,
                                          len);
    if (par) {
        tahq_parallel par;
        tahq_parallel_threads(&par, threads);
        return tahq_encode_parallel(&c->cfg, b->shape, b->x, b->ws, b->wsz, b->msg, b->cap, len,
                                    &par);
    }
    return tahq_encode(&c->cfg, b->shape, b->x, b->ws, b->wsz, b->msg, b->cap, len);
}

static tahq_status case_decode(const bench_case *c, const bench_bufs *b, uint32_t threads, int par,
                               size_t len, size_t n)
{
    if (c->kind == PROF_PAPER_V1) {
        tahq_parallel p;
        tahq_parallel_threads(&p, threads);
        return par ? tahq_paper_v1_decode_parallel(b->msg, len, &c->pv1, b->shape, b->y, n, &p)
                   : tahq_paper_v1_decode(b->msg, len, &c->pv1, b->shape, b->y, n);
    }
    if (par) {
        tahq_parallel par;
        tahq_parallel_threads(&par, threads);
        return tahq_decode_parallel(b->msg, len, b->y, n, &par);
    }
    return tahq_decode(b->msg, len, b->y, n);
}

#define BENCH_CASES_MAX 5

/* canonical nearest and stochastic, with `gain` the same two in gain
 * allocation, then paper-v1. */
static int make_cases(bench_case *cases, int gain)
{
    memset(cases, 0, BENCH_CASES_MAX * sizeof *cases);
    int n = 0;
    cases[n].profile = "canonical";
    cases[n].rounding = "nearest";
    cases[n].kind = PROF_CANONICAL;
    tahq_config_default(&cases[n].cfg);
    n++;
    cases[n] = cases[0];
    cases[n].rounding = "stochastic";
    cases[n].cfg.rounding = TAHQ_ROUND_STOCHASTIC;
    n++;
    if (gain) {
        for (int i = 0; i < 2; i++) {
            cases[n] = cases[i];
            cases[n].profile = "gain";
            cases[n].cfg.alloc = TAHQ_ALLOC_GAIN;
            n++;
        }
    }
    cases[n].profile = "paper-v1";
    cases[n].rounding = "nearest";
    cases[n].kind = PROF_PAPER_V1;
    tahq_paper_v1_config_default(&cases[n].pv1);
    n++;
    return n;
}

static json_t *case_jconfig(const bench_case *c)
{
    if (c->kind == PROF_CANONICAL)
        return cli_jconfig(&c->cfg);
    return json_pack("{s:I, s:I, s:I, s:I}", "tile", (json_int_t)c->pv1.tile, "hi_bits",
                     (json_int_t)c->pv1.hi_bits, "lo_bits", (json_int_t)c->pv1.lo_bits,
                     "hi_permille", (json_int_t)c->pv1.hi_permille);
}

/* ---- the machine ----------------------------------------------------------- */

static void cpu_model(char *buf, size_t n)
{
    snprintf(buf, n, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            const char *colon = strchr(line, ':');
            if (colon) {
                colon++;
                while (*colon == ' ' || *colon == '\t')
                    colon++;
                snprintf(buf, n, "%s", colon);
                size_t l = strlen(buf);
                while (l > 0 && (buf[l - 1] == '\n' || buf[l - 1] == '\r'))
                    buf[--l] = '\0';
            }
            break;
        }
    }
    fclose(f);
}

/* The 1, 5 and 15 minute load averages (/proc/loadavg); 0 if unknown. */
static int load_average(double l[3])
{
    l[0] = l[1] = l[2] = 0.0;
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f)
        return -1;
    int n = fscanf(f, "%lf %lf %lf", &l[0], &l[1], &l[2]);
    fclose(f);
    return n == 3 ? 0 : -1;
}

static json_t *jloadavg(void)
{
    double l[3];
    if (load_average(l) != 0)
        return json_null();
    return json_pack("[o, o, o]", cli_jnum(l[0]), cli_jnum(l[1]), cli_jnum(l[2]));
}

static json_t *jmachine(void)
{
    struct utsname u;
    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (uname(&u) != 0)
        return json_pack("{s:o, s:I}", "cpu_model", cli_jstr(cpu), "online_cpus", (json_int_t)ncpu);
    return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:I}", "sysname", cli_jstr(u.sysname),
                     "nodename", cli_jstr(u.nodename), "release", cli_jstr(u.release), "version",
                     cli_jstr(u.version), "machine", cli_jstr(u.machine), "cpu_model",
                     cli_jstr(cpu), "online_cpus", (json_int_t)ncpu);
}

static void utc_date(char *buf, size_t n)
{
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm))
        strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
    else
        snprintf(buf, n, "unknown");
}

/* ---- peak memory of one round trip ------------------------------------------- */

typedef struct rt_memory {
    int ok;
    uint64_t input_bytes, message_bytes, message_capacity, output_bytes;
    uint64_t rss_start, rss_after_fill, rss_peak; /* bytes (ru_maxrss, KiB on Linux) */
    uint32_t threads;
} rt_memory;

static uint64_t maxrss_bytes(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (uint64_t)ru.ru_maxrss * 1024u;
}

/* In a child process, so that the parent's buffers are not in its resident
 * set and ru_maxrss (which only grows) starts from the bare program: fill the
 * tensor, encode it, decode it. The parent forks before it allocates the
 * tensors of the throughput runs. */
static void child_roundtrip(int fd, const bench_case *c, const tahq_shape *shape, uint32_t threads)
{
    rt_memory m;
    memset(&m, 0, sizeof m);
    m.threads = threads;
    m.rss_start = maxrss_bytes();
    uint64_t n = shape_count(shape);
    size_t in_bytes = (size_t)n * sizeof(float);
    size_t cap = 0, wsz = 0, len = 0;
    float *x = NULL, *y = NULL;
    uint8_t *msg = NULL;
    void *ws = NULL;
    const int par = case_has_cpu(c);
    if (case_sizes(c, shape, threads, par, &cap, &wsz) != TAHQ_OK)
        goto done;
    x = malloc(in_bytes);
    if (!x ||
        llm_tensor_fill(x, shape->batch, shape->seq_len, shape->channels, LLM_DEFAULT_SEED) != 0)
        goto done;
    m.rss_after_fill = maxrss_bytes();
    msg = malloc(cap);
    ws = wsz ? malloc(wsz) : NULL;
    y = malloc(in_bytes);
    if (!msg || (wsz && !ws) || !y)
        goto done;
    bench_bufs b = {shape, x, y, msg, cap, ws, wsz};
    if (case_encode(c, &b, threads, par, &len) != TAHQ_OK)
        goto done;
    if (case_decode(c, &b, threads, par, len, (size_t)n) != TAHQ_OK)
        goto done;
    g_sink += (uint32_t)y[n / 2u == 0 ? 0 : n / 2u - 1u] + msg[len / 2u];
    m.input_bytes = in_bytes;
    m.message_bytes = len;
    m.message_capacity = cap;
    m.output_bytes = in_bytes;
    m.rss_peak = maxrss_bytes();
    m.ok = 1;
done:
    free(x);
    free(y);
    free(msg);
    free(ws);
    ssize_t w = write(fd, &m, sizeof m);
    (void)w;
}

static int measure_roundtrip_memory(const bench_case *c, const tahq_shape *shape, uint32_t threads,
                                    rt_memory *m)
{
    memset(m, 0, sizeof *m);
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        child_roundtrip(fds[1], c, shape, threads);
        close(fds[1]);
        _exit(0);
    }
    close(fds[1]);
    ssize_t got = 0;
    while (got < (ssize_t)sizeof *m) {
        ssize_t r = read(fds[0], (char *)m + got, sizeof *m - (size_t)got);
        if (r <= 0)
            break;
        got += r;
    }
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (got != (ssize_t)sizeof *m || !m->ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    return 0;
}

/* ---- what T threads can do on this machine now ------------------------------ */

/* A fixed amount of integer work that touches no memory (an xorshift chain),
 * timed on one thread and then on T threads at once, each doing the same
 * amount: T * t1 / tT is the speedup the machine gives T threads at this
 * moment (1 when the cores are taken by other work, T on idle cores). On a
 * machine whose other cores run other work, a thread that wakes up may wait
 * milliseconds for a core, so the control is timed at the length of the
 * codec's own one-thread encode and decode (and at about 0.5 s): the codec's
 * speedup is read against the control of its own length. Best of 3.
 *
 * Two more controls, at the encode's length, tell which roof the encoder's
 * own scaling meets. The vector control runs independent AVX2 multiply and
 * add chains on registers only: near T when the T threads have vector units
 * of their own, near 1 when they share one core's (SMT siblings, which a
 * hypervisor may present as separate cores). The stream control moves the
 * encoder's bytes with next to no arithmetic: it reads the input tensor
 * (4 bytes per element) and writes 0.5 bytes per element, split among the
 * threads as the parallel encoder splits it, so its T-thread rate is the
 * memory bandwidth that encode's traffic can have. */
typedef enum { CTL_INTEGER, CTL_VECTOR, CTL_STREAM } control_kind;

typedef struct control_arg {
    control_kind kind;
    uint64_t iterations; /* xorshift steps, vector steps or passes over the share */
    uint64_t seed;
    const unsigned char *src; /* stream: this thread's share of the input */
    unsigned char *dst;       /* and of the output, 8 bytes per block */
    uint64_t blocks;          /* stream: 64-byte blocks (16 float32) in the share */
} control_arg;

/* 64 bytes read (16 float32) and 8 written per block of the stream control */
#define STREAM_BLOCK 64u
#define STREAM_OUT 8u

static void integer_work(const control_arg *a)
{
    uint64_t x = 0x9E3779B97F4A7C15u + a->seed;
    for (uint64_t i = 0; i < a->iterations; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    g_sink += (uint32_t)x;
}

/* independent accumulator chains of the vector control */
#define VECTOR_CHAINS 12

#ifdef BENCH_X86
#define VSTEP(v) v = _mm256_add_ps(_mm256_mul_ps(v, half), c)

/* Twelve chains of a multiply then an add, written out so that each stays in
 * a register at -O2: 24 operations in flight per step, more than two vector
 * ports can start within one chain's latency (a multiply and an add, about 8
 * cycles on common cores), so the loop runs at the units' throughput, not
 * the chains' latency. x -> x / 2 + c stays near 2 c: no overflow, no
 * subnormals. The sum goes to a volatile so the loop cannot be removed. */
__attribute__((target("avx2"))) static void vector_work(const control_arg *a)
{
    const __m256 half = _mm256_set1_ps(0.5f), c = _mm256_set1_ps(1.0f);
    const float s = (float)(a->seed % 64u);
    __m256 v0 = _mm256_set1_ps(s), v1 = _mm256_set1_ps(s + 1), v2 = _mm256_set1_ps(s + 2),
           v3 = _mm256_set1_ps(s + 3), v4 = _mm256_set1_ps(s + 4), v5 = _mm256_set1_ps(s + 5),
           v6 = _mm256_set1_ps(s + 6), v7 = _mm256_set1_ps(s + 7), v8 = _mm256_set1_ps(s + 8),
           v9 = _mm256_set1_ps(s + 9), v10 = _mm256_set1_ps(s + 10), v11 = _mm256_set1_ps(s + 11);
    for (uint64_t i = 0; i < a->iterations; i++) {
        VSTEP(v0);
        VSTEP(v1);
        VSTEP(v2);
        VSTEP(v3);
        VSTEP(v4);
        VSTEP(v5);
        VSTEP(v6);
        VSTEP(v7);
        VSTEP(v8);
        VSTEP(v9);
        VSTEP(v10);
        VSTEP(v11);
    }
    __m256 sum = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(v0, v1), _mm256_add_ps(v2, v3)),
                               _mm256_add_ps(_mm256_add_ps(v4, v5), _mm256_add_ps(v6, v7)));
    sum = _mm256_add_ps(sum, _mm256_add_ps(_mm256_add_ps(v8, v9), _mm256_add_ps(v10, v11)));
    float lanes[8];
    _mm256_storeu_ps(lanes, sum);
    g_fsink = lanes[0] + lanes[1] + lanes[2] + lanes[3] + lanes[4] + lanes[5] + lanes[6] + lanes[7];
}
#undef VSTEP
#endif

/* Whether the vector control can run here: an x86 build on a CPU (and OS)
 * with AVX2; otherwise it is reported as skipped, never replaced. */
static int vector_available(void)
{
#ifdef BENCH_X86
    return __builtin_cpu_supports("avx2");
#else
    return 0;
#endif
}

static uint64_t load_u64(const unsigned char *p)
{
    uint64_t w;
    memcpy(&w, p, sizeof w);
    return w;
}

/* Each block's 8 words folded into the one word written for it: a few
 * integer operations per 16 elements, far below what a core can do, so the
 * time is the memory traffic. The share is read into locals first: the
 * stores could alias *a and would make the loop reload it. */
static void stream_work(const control_arg *a)
{
    const unsigned char *const src = a->src;
    unsigned char *const dst = a->dst;
    const uint64_t blocks = a->blocks, passes = a->iterations;
    uint64_t acc = a->seed;
    for (uint64_t pass = 0; pass < passes; pass++) {
        for (uint64_t b = 0; b < blocks; b++) {
            const unsigned char *s = src + b * STREAM_BLOCK;
            const uint64_t f =
                ((load_u64(s) ^ load_u64(s + 8)) + (load_u64(s + 16) ^ load_u64(s + 24))) ^
                ((load_u64(s + 32) ^ load_u64(s + 40)) + (load_u64(s + 48) ^ load_u64(s + 56)));
            memcpy(dst + b * STREAM_OUT, &f, STREAM_OUT);
            acc += f;
        }
    }
    g_sink += (uint32_t)acc;
}

static void control_work(const control_arg *a)
{
    switch (a->kind) {
    case CTL_VECTOR:
#ifdef BENCH_X86
        vector_work(a);
#endif
        break;
    case CTL_STREAM:
        stream_work(a);
        break;
    default:
        integer_work(a);
        break;
    }
}

/* Thread t of the team runs the work of args[t]. */
static void control_thread(void *args, int t)
{
    control_work((control_arg *)args + t);
}

typedef struct control_result {
    double target_s, one_s, all_s, speedup;
    uint64_t iterations;
} control_result;

/* `one` on the calling thread, then args[0 .. threads - 1] at once, best of 3
 * each. `work` is the T-thread run's work over the 1-thread run's: T when
 * every thread repeats the same work, 1 when the threads split it. */
static control_result control_times(uint32_t threads, const control_arg *one, control_arg *args,
                                    double work)
{
    control_result r = {0, 1e300, 1e300, 1, one->iterations};
    for (int rep = 0; rep < 3; rep++) {
        double t0 = cli_now();
        control_work(one);
        double t1 = cli_now();
        tahq_jobs_each((int)threads, control_thread, args);
        double t2 = cli_now();
        r.one_s = t1 - t0 < r.one_s ? t1 - t0 : r.one_s;
        r.all_s = t2 - t1 < r.all_s ? t2 - t1 : r.all_s;
    }
    r.speedup = work * r.one_s / r.all_s;
    return r;
}

/* The same `iterations` of integer or vector work on each thread. */
static control_result control_scaling(uint32_t threads, control_kind kind, uint64_t iterations)
{
    control_arg args[TAHQ_JOBS_MAX];
    memset(args, 0, sizeof args);
    for (uint32_t j = 0; j < threads; j++) {
        args[j].kind = kind;
        args[j].iterations = iterations;
        args[j].seed = j;
    }
    return control_times(threads, &args[0], args, (double)threads);
}

/* Iterations of `a` that take about `seconds` on one thread (from `probe` of
 * them, best of 3), at least `least`. */
static uint64_t control_iterations(control_arg a, uint64_t probe, double seconds, uint64_t least)
{
    a.iterations = probe;
    double best = 1e300;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = cli_now();
        control_work(&a);
        double t = cli_now() - t0;
        best = t < best ? t : best;
    }
    double n = seconds / best * (double)probe;
    return n < (double)least ? least : (uint64_t)n;
}

/* The stream control over the n float32 at src (n a multiple of 16),
 * writing n / 2 bytes at dst, in passes that take about `seconds` on one
 * thread: on one thread the whole, on T threads a share of whole blocks
 * each. */
static control_result stream_scaling(uint32_t threads, const float *src, uint64_t n, void *dst,
                                     double seconds)
{
    control_arg one = {
        CTL_STREAM, 1, 0, (const unsigned char *)src, dst, n * sizeof(float) / STREAM_BLOCK};
    one.iterations = control_iterations(one, 1, seconds, 1);
    control_arg args[TAHQ_JOBS_MAX];
    for (uint32_t t = 0; t < threads; t++) {
        const uint64_t b0 = one.blocks * t / threads, b1 = one.blocks * (t + 1u) / threads;
        args[t] = one;
        args[t].seed = t;
        args[t].src = one.src + b0 * STREAM_BLOCK;
        args[t].dst = one.dst + b0 * STREAM_OUT;
        args[t].blocks = b1 - b0;
    }
    control_result r = control_times(threads, &one, args, 1.0);
    r.target_s = seconds;
    return r;
}

/* Integer or vector work of about `seconds` on one thread, the same on each
 * of T threads. */
static control_result control_at(uint32_t threads, control_kind kind, double seconds)
{
    const control_arg probe = {kind, 0, 0, NULL, NULL, 0};
    const uint64_t iterations = kind == CTL_VECTOR
                                    ? control_iterations(probe, 1000000u, seconds, 10000u)
                                    : control_iterations(probe, 10000000u, seconds, 100000u);
    control_result r = control_scaling(threads, kind, iterations);
    r.target_s = seconds;
    return r;
}

static json_t *jcontrol(const control_result *c)
{
    return json_pack("{s:o, s:o, s:o, s:o}", "length_s", cli_jnum(c->target_s), "one_thread_s",
                     cli_jnum(c->one_s), "all_threads_s", cli_jnum(c->all_s), "speedup",
                     cli_jnum(c->speedup));
}

/* ---- throughput -------------------------------------------------------------- */

typedef struct bench_row {
    const bench_case *c;
    uint32_t threads;
    int par;  /* 0: reference codec, 1: tahq_encode_parallel / tahq_decode_parallel */
    int path; /* the CPU path of a format-1 parallel row, else -1 */
    int ref;  /* index of the case's reference row */
    unsigned long long runs[TAHQ_CPU_PATH_COUNT]; /* runs of each path's code in the row */
    size_t len;
    double cpy_s, enc_s, dec_s;    /* best of reps */
    int same_message, same_output; /* vs the reference row of the case (-1: not compared) */
} bench_row;

typedef struct bench_ctx {
    const tahq_shape *shape;
    uint64_t n;
    size_t in_bytes;
    const float *x;
    float *cp;
    float *y;
    uint8_t *msg;
    uint8_t *ref_msg; /* the reference codec's message of the current case */
    float *ref_y;     /* and its output */
    size_t cap;
    void *ws;
    size_t wsz;
    uint32_t reps;
} bench_ctx;

static int run_row(bench_ctx *k, const bench_case *c, uint32_t threads, int par, bench_row *row)
{
    memset(row, 0, sizeof *row);
    row->c = c;
    row->threads = threads;
    row->par = par;
    row->path = par && case_uses_path(c) ? (int)tahq_cpu_path_get() : -1;
    unsigned long long runs0[TAHQ_CPU_PATH_COUNT];
    for (int p = 0; p < TAHQ_CPU_PATH_COUNT; p++)
        runs0[p] = tahq_cpu_path_runs((tahq_cpu_path)p);
    row->cpy_s = row->enc_s = row->dec_s = 1e300;
    row->same_message = row->same_output = -1;
    size_t cap = 0, wsz = 0;
    tahq_status st = case_sizes(c, k->shape, threads, par, &cap, &wsz);
    if (st != TAHQ_OK)
        return cli_fail(EXIT_RUNTIME, "%s size query failed: %s", c->profile, tahq_strerror(st));
    if (cap > k->cap || wsz > k->wsz)
        return cli_fail(EXIT_RUNTIME, "internal: %s buffers larger than allocated", c->profile);
    bench_bufs b = {k->shape, k->x, k->y, k->msg, k->cap, k->ws, k->wsz};
    for (uint32_t r = 0; r < k->reps; ++r) {
        double t0 = cli_now();
        memcpy_fn(k->cp, k->x, k->in_bytes);
        double t1 = cli_now();
        g_sink += ((const uint32_t *)(const void *)k->cp)[(r * 7919u) % k->n];
        st = case_encode(c, &b, threads, par, &row->len);
        double t2 = cli_now();
        if (st != TAHQ_OK)
            return cli_fail(EXIT_RUNTIME, "%s encode failed: %s", c->profile, tahq_strerror(st));
        st = case_decode(c, &b, threads, par, row->len, (size_t)k->n);
        double t3 = cli_now();
        if (st != TAHQ_OK)
            return cli_fail(EXIT_RUNTIME, "%s decode failed: %s", c->profile, tahq_strerror(st));
        g_sink += k->msg[row->len / 2u];
        if (t1 - t0 < row->cpy_s)
            row->cpy_s = t1 - t0;
        if (t2 - t1 < row->enc_s)
            row->enc_s = t2 - t1;
        if (t3 - t2 < row->dec_s)
            row->dec_s = t3 - t2;
    }
    for (int p = 0; p < TAHQ_CPU_PATH_COUNT; p++)
        row->runs[p] = tahq_cpu_path_runs((tahq_cpu_path)p) - runs0[p];
    return 0;
}

static double gbps(size_t bytes, double s)
{
    return (double)bytes / 1e9 / s;
}

static json_t *jrow(const bench_ctx *k, const bench_row *r)
{
    double cpy = gbps(k->in_bytes, r->cpy_s), enc = gbps(k->in_bytes, r->enc_s),
           dec = gbps(k->in_bytes, r->dec_s);
    json_t *o = json_pack("{s:s, s:s, s:s, s:o, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, "
                          "s:o}",
                          "profile", r->c->profile, "rounding", r->c->rounding, "codec",
                          r->par ? "parallel" : "reference", "config", case_jconfig(r->c),
                          "threads", (json_int_t)r->threads, "message_bytes", (json_int_t)r->len,
                          "bits_per_element", cli_jnum((double)r->len * 8.0 / (double)k->n),
                          "memcpy_gbps", cli_jnum(cpy), "encode_gbps", cli_jnum(enc), "decode_gbps",
                          cli_jnum(dec), "encode_over_memcpy", cli_jnum(enc / cpy),
                          "decode_over_memcpy", cli_jnum(dec / cpy), "memcpy_s", cli_jnum(r->cpy_s),
                          "encode_s", cli_jnum(r->enc_s), "decode_s", cli_jnum(r->dec_s));
    if (o) {
        json_object_set_new(o, "cpu_path",
                            r->path < 0 ? json_null()
                                        : json_string(tahq_cpu_path_name((tahq_cpu_path)r->path)));
        json_t *runs = json_object();
        for (int p = 0; p < TAHQ_CPU_PATH_COUNT; p++)
            json_object_set_new(runs, tahq_cpu_path_name((tahq_cpu_path)p),
                                json_integer((json_int_t)r->runs[p]));
        json_object_set_new(o, "cpu_path_runs", runs);
    }
    if (o && r->same_message >= 0) {
        json_object_set_new(o, "message_identical_to_reference", json_boolean(r->same_message));
        json_object_set_new(o, "output_identical_to_reference", json_boolean(r->same_output));
    }
    return o;
}

static json_t *jmemory(const rt_memory *m, const bench_case *c)
{
    uint64_t sum = m->input_bytes + m->message_bytes + m->output_bytes;
    return json_pack(
        "{s:s, s:s, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "profile", c->profile,
        "rounding", c->rounding, "threads", (json_int_t)m->threads, "input_bytes",
        cli_ju64(m->input_bytes), "message_bytes", cli_ju64(m->message_bytes),
        "message_capacity_bytes", cli_ju64(m->message_capacity), "output_bytes",
        cli_ju64(m->output_bytes), "input_message_output_bytes", cli_ju64(sum), "rss_start_bytes",
        cli_ju64(m->rss_start), "rss_after_fill_bytes", cli_ju64(m->rss_after_fill),
        "peak_rss_bytes", cli_ju64(m->rss_peak), "peak_over_input_message_output",
        cli_jnum((double)m->rss_peak / (double)sum), "peak_minus_start_over_input_message_output",
        cli_jnum((double)(m->rss_peak - m->rss_start) / (double)sum));
}

/* The largest message and workspace of every case and thread count, into
 * k->cap and k->wsz. 0 or the exit status after a message. */
static int max_sizes(bench_ctx *k, const bench_case *cases, int n_cases, const tahq_shape *shape,
                     uint32_t threads)
{
    for (int i = 0; i < n_cases; i++) {
        for (uint32_t t = 1; t <= threads; t = t == threads ? threads + 1 : threads) {
            for (int par = 0; par <= case_has_cpu(&cases[i]); par++) {
                size_t cap = 0, wsz = 0;
                tahq_status st = case_sizes(&cases[i], shape, t, par, &cap, &wsz);
                if (st != TAHQ_OK)
                    return cli_fail(EXIT_RUNTIME, "size query failed: %s", tahq_strerror(st));
                k->cap = cap > k->cap ? cap : k->cap;
                k->wsz = wsz > k->wsz ? wsz : k->wsz;
            }
        }
    }
    return 0;
}

/* The parallel codec's rows against its 1-thread row of the same path and
 * the reference, appended to jscaling. */
static void append_scaling(json_t *jscaling, const bench_row *all, int n_rows)
{
    for (int i = 0; i < n_rows; i++) {
        if (!all[i].par || all[i].threads != 1)
            continue;
        const bench_row *ref = &all[all[i].ref], *a = &all[i];
        for (int j = i; j < n_rows && all[j].c == a->c && all[j].path == a->path; j++) {
            const bench_row *b = &all[j];
            json_t *o = json_pack(
                "{s:s, s:s, s:I, s:o, s:o, s:o, s:o, s:o}", "profile", a->c->profile, "rounding",
                a->c->rounding, "threads", (json_int_t)b->threads, "encode_speedup",
                cli_jnum(a->enc_s / b->enc_s), "decode_speedup", cli_jnum(a->dec_s / b->dec_s),
                "encode_speedup_over_reference", cli_jnum(ref->enc_s / b->enc_s),
                "decode_speedup_over_reference", cli_jnum(ref->dec_s / b->dec_s), "memcpy_ratio",
                cli_jnum(a->cpy_s / b->cpy_s));
            if (o)
                json_object_set_new(o, "cpu_path",
                                    a->path < 0
                                        ? json_null()
                                        : json_string(tahq_cpu_path_name((tahq_cpu_path)a->path)));
            json_array_append_new(jscaling, o);
        }
    }
}

/* The parallel rows of case i on the current path, on 1 and on `threads`
 * threads, each compared with the reference row `ref`. */
static int run_par_rows(bench_ctx *k, const bench_case *c, uint32_t threads, int ref,
                        bench_row *all, int *n_rows)
{
    for (uint32_t t = 1; t <= threads; t = t == threads ? threads + 1 : threads) {
        bench_row *par = &all[*n_rows];
        int rc = run_row(k, c, t, 1, par);
        if (rc != 0)
            return rc;
        (*n_rows)++;
        par->ref = ref;
        par->same_message = par->len == all[ref].len && memcmp(k->msg, k->ref_msg, par->len) == 0;
        par->same_output = memcmp(k->y, k->ref_y, k->in_bytes) == 0;
        if (!par->same_message || !par->same_output)
            return cli_fail(EXIT_RUNTIME,
                            "%s %s: the parallel codec on %u threads (%s path) gave a different %s "
                            "than the reference",
                            c->profile, c->rounding, (unsigned)t,
                            par->path < 0 ? "own" : tahq_cpu_path_name((tahq_cpu_path)par->path),
                            par->same_message ? "output" : "message");
    }
    return 0;
}

/* Every case on the reference codec and, where it has one, on the parallel
 * codec on 1 and on `threads` threads, for each CPU path in `paths` (bits)
 * where the case uses the selector, whose message and output must equal the
 * reference's. all[] gets the rows, *n_rows their count. The path in use is
 * `best` afterwards. 0 or the exit status after a message. */
static int run_rows(bench_ctx *k, const bench_case *cases, int n_cases, uint32_t threads,
                    unsigned paths, tahq_cpu_path best, bench_row *all, int *n_rows)
{
    int rc = 0;
    for (int i = 0; i < n_cases && rc == 0; i++) {
        const int ref = *n_rows;
        bench_row *one = &all[ref];
        if ((rc = run_row(k, &cases[i], 1, 0, one)) != 0)
            return rc;
        one->ref = ref;
        (*n_rows)++;
        if (!case_has_cpu(&cases[i]))
            continue;
        memcpy(k->ref_msg, k->msg, one->len);
        memcpy(k->ref_y, k->y, k->in_bytes);
        if (!case_uses_path(&cases[i])) {
            rc = run_par_rows(k, &cases[i], threads, ref, all, n_rows);
            continue;
        }
        for (int p = 0; p < TAHQ_CPU_PATH_COUNT && rc == 0; p++)
            if ((paths >> p) & 1u) {
                tahq_cpu_path_set((tahq_cpu_path)p);
                rc = run_par_rows(k, &cases[i], threads, ref, all, n_rows);
            }
        tahq_cpu_path_set(best);
    }
    return rc;
}

/* The row of canonical nearest's parallel codec on 1 thread and path `best`
 * (the controls' lengths), or -1. */
static int control_row(const bench_row *all, int n_rows, tahq_cpu_path best)
{
    for (int i = 0; i < n_rows; i++)
        if (all[i].par && all[i].threads == 1 && all[i].path == (int)best)
            return i;
    return -1;
}

/* The controls of a run with T > 1 and the encode they are read against
 * (canonical nearest's parallel codec on the best path, on 1 and T threads). */
typedef struct bench_controls {
    int ran;                       /* 0: T = 1, nothing below measured */
    control_result enc, dec, lng;  /* integer: the encode's, decode's, 0.5 s length */
    control_result vec;            /* vector, the encode's length (if vec_ok) */
    control_result stream;         /* stream, the encode's length */
    int vec_ok;                    /* 0: no AVX2, vec not measured */
    const bench_row *enc1, *enc_t; /* the encode rows on 1 and on T threads */
    /* GB/s of input, computed once for the text and the JSON: the memcpy
     * of enc1's row, the stream control on 1 and T threads, the encode on
     * 1 and T threads (enc_all 0 without enc_t) */
    double cpy_gbps, stream_one, stream_all, enc_one, enc_all;
} bench_controls;

/* The row of the same case and path as `one` on `threads` threads, or NULL. */
static const bench_row *threads_row(const bench_row *all, int n_rows, const bench_row *one,
                                    uint32_t threads)
{
    for (int i = 0; i < n_rows; i++)
        if (all[i].c == one->c && all[i].par && all[i].path == one->path &&
            all[i].threads == threads)
            return &all[i];
    return NULL;
}

/* The controls' lines of the text report, the encode's scaling last. */
static void print_controls(const bench_ctx *k, uint32_t threads, const bench_controls *ctl)
{
    printf("control: the same integer work on each of %u threads at once does %.3fx the "
           "work of one thread when it lasts as long as the 1-thread encode (%.1f ms), "
           "%.3fx as the decode (%.1f ms), %.3fx over %.0f ms: the most any code of that "
           "length can gain now\n",
           (unsigned)threads, ctl->enc.speedup, ctl->enc.target_s * 1e3, ctl->dec.speedup,
           ctl->dec.target_s * 1e3, ctl->lng.speedup, ctl->lng.target_s * 1e3);
    if (ctl->vec_ok)
        printf("vector control: %d independent chains of AVX2 multiply and add on registers "
               "on each of %u threads at once do %.3fx the work of one thread when they last "
               "as long as the 1-thread encode (%.1f ms)\n",
               VECTOR_CHAINS, (unsigned)threads, ctl->vec.speedup, ctl->vec.target_s * 1e3);
    else
        printf("vector control: skipped: no AVX2\n");
    const control_result *st = &ctl->stream;
    const double cpy = ctl->cpy_gbps, s1 = ctl->stream_one, st_t = ctl->stream_all;
    printf("stream control: the %.1f MiB input read (4 bytes per element) and %.1f bytes per "
           "element written, split among the threads, %llu pass%s (%.1f ms on 1 thread): "
           "1 thread %.3f GB/s (%.3fx memcpy), %u threads %.3f GB/s (%.3fx memcpy), %.3fx\n",
           (double)k->in_bytes / 1048576.0, (double)STREAM_OUT * 4.0 / STREAM_BLOCK,
           (unsigned long long)st->iterations, st->iterations == 1 ? "" : "es", st->one_s * 1e3, s1,
           s1 / cpy, (unsigned)threads, st_t, st_t / cpy, st->speedup);
    if (!ctl->enc_t)
        return;
    const double e1 = ctl->enc_one, et = ctl->enc_all;
    char vec[32];
    if (ctl->vec_ok)
        snprintf(vec, sizeof vec, "%.3fx", ctl->vec.speedup);
    else
        snprintf(vec, sizeof vec, "skipped");
    printf("encode scaling %.3fx (%s %s, parallel codec, %s path: %.3f GB/s on 1 thread, "
           "%.3f GB/s on %u threads, %.3fx the stream control's %u-thread GB/s); controls: "
           "integer %.3fx, vector %s, stream %.3fx\n",
           ctl->enc1->enc_s / ctl->enc_t->enc_s, ctl->enc1->c->profile, ctl->enc1->c->rounding,
           tahq_cpu_path_name((tahq_cpu_path)ctl->enc1->path), e1, et, (unsigned)threads, et / st_t,
           (unsigned)threads, ctl->enc.speedup, vec, st->speedup);
}

/* The text report on stdout. */
static void print_text(const char *date, const char *cpu, const tahq_shape *shape,
                       const bench_ctx *k, uint32_t reps, const bench_row *all, int n_rows,
                       uint32_t threads, const bench_controls *ctl, const rt_memory *mem)
{
    double l[3];
    load_average(l);
    printf("tahq bench %s on %s; load average %.2f %.2f %.2f\n", date, cpu, l[0], l[1], l[2]);
    printf("LLM-like tensor [%u, %u, %u], %zu bytes float32 (%.1f MiB); best of %u\n",
           (unsigned)shape->batch, (unsigned)shape->seq_len, (unsigned)shape->channels, k->in_bytes,
           (double)k->in_bytes / 1048576.0, (unsigned)reps);
    printf("GB/s = 10^9 bytes of float32 per second; x memcpy = against the memcpy of "
           "the same row\n");
    printf("%-10s %-10s %-9s %-6s %3s %9s %9s %9s %8s %9s %8s\n", "profile", "rounding", "codec",
           "path", "thr", "msg bits", "memcpy", "encode", "x memcpy", "decode", "x memcpy");
    for (int i = 0; i < n_rows; i++) {
        const bench_row *r = &all[i];
        double c2 = gbps(k->in_bytes, r->cpy_s), e2 = gbps(k->in_bytes, r->enc_s),
               d2 = gbps(k->in_bytes, r->dec_s);
        printf("%-10s %-10s %-9s %-6s %3u %9.4f %9.3f %9.3f %8.4f %9.3f %8.4f\n", r->c->profile,
               r->c->rounding, r->par ? "parallel" : "reference",
               r->path < 0 ? "-" : tahq_cpu_path_name((tahq_cpu_path)r->path), (unsigned)r->threads,
               (double)r->len * 8.0 / (double)k->n, c2, e2, e2 / c2, d2, d2 / c2);
    }
    for (int i = 0; i < n_rows; i++)
        if (all[i].par)
            printf("%s %s: parallel codec, %s path, on %u thread%s: encode %.3fx, decode %.3fx "
                   "of the reference; message and output identical to it\n",
                   all[i].c->profile, all[i].c->rounding,
                   all[i].path < 0 ? "own" : tahq_cpu_path_name((tahq_cpu_path)all[i].path),
                   (unsigned)all[i].threads, all[i].threads == 1 ? "" : "s",
                   all[all[i].ref].enc_s / all[i].enc_s, all[all[i].ref].dec_s / all[i].dec_s);
    if (ctl->ran)
        print_controls(k, threads, ctl);
    uint64_t sum = mem->input_bytes + mem->message_bytes + mem->output_bytes;
    printf(
        "round trip (canonical nearest, parallel codec, %u thread%s): peak RSS %.1f MiB; input + "
        "message + output %.1f MiB; peak / that %.3f (program alone at start %.1f MiB)\n",
        (unsigned)mem->threads, mem->threads == 1 ? "" : "s", (double)mem->rss_peak / 1048576.0,
        (double)sum / 1048576.0, (double)mem->rss_peak / (double)sum,
        (double)mem->rss_start / 1048576.0);
}

/* The tensor of `mib` MiB: [mib/8, 1024, 2048] when 128 * mib rows fill whole
 * sequences of 1024, else [1, 128 * mib, 2048]. */
static void bench_shape(uint32_t mib, tahq_shape *shape)
{
    uint64_t rows = (uint64_t)mib * 128u; /* 128 rows of 2048 float32 = 1 MiB */
    shape->channels = BENCH_CHANNELS;
    if (rows % BENCH_SEQ == 0) {
        shape->batch = (uint32_t)(rows / BENCH_SEQ);
        shape->seq_len = BENCH_SEQ;
    } else {
        shape->batch = 1;
        shape->seq_len = (uint32_t)rows;
    }
}

/* Keeps in *paths the listed paths this CPU has, reports each listed one it
 * lacks, and selects the best of the rest, in *best. 0, or the exit status
 * after a message when none is left. */
static int select_paths(unsigned *paths, tahq_cpu_path *best)
{
    const unsigned listed = *paths;
    *paths &= (2u << tahq_cpu_path_best()) - 1u;
    if (*paths == 0)
        return cli_fail(EXIT_USAGE, "none of the --paths is available on this CPU (best: %s)",
                        tahq_cpu_path_name(tahq_cpu_path_best()));
    *best = TAHQ_CPU_SCALAR;
    for (int p = 0; p < TAHQ_CPU_PATH_COUNT; p++)
        if ((*paths >> p) & 1u)
            *best = (tahq_cpu_path)p;
    tahq_cpu_path_set(*best);
    for (int p = 0; p < TAHQ_CPU_PATH_COUNT; p++)
        if (((listed & ~*paths) >> p) & 1u)
            fprintf(stderr,
                    "tahq bench: the %s path is not available on this CPU or build; left out\n",
                    tahq_cpu_path_name((tahq_cpu_path)p));
    return 0;
}

/* The buffers of k (k->cap and k->wsz already set) and the input, *x (also
 * k->x), filled; every page of the outputs touched once before timing. 0,
 * or the exit status after a message; the caller frees what was allocated. */
static int alloc_buffers(bench_ctx *k, float **x, uint32_t mib)
{
    *x = malloc(k->in_bytes);
    k->y = malloc(k->in_bytes);
    k->cp = malloc(k->in_bytes);
    k->msg = malloc(k->cap);
    k->ws = k->wsz ? malloc(k->wsz) : NULL;
    k->ref_msg = malloc(k->cap);
    k->ref_y = malloc(k->in_bytes);
    k->x = *x;
    if (!*x || !k->y || !k->cp || !k->msg || (k->wsz && !k->ws) || !k->ref_msg || !k->ref_y)
        return cli_fail(EXIT_RUNTIME, "out of memory (%u MiB tensor)", (unsigned)mib);
    const tahq_shape *shape = k->shape;
    if (llm_tensor_fill(*x, shape->batch, shape->seq_len, shape->channels, LLM_DEFAULT_SEED) != 0)
        return cli_fail(EXIT_RUNTIME, "out of memory");
    memset(k->y, 0, k->in_bytes);
    memset(k->cp, 0, k->in_bytes);
    memset(k->msg, 0, k->cap);
    if (k->ws)
        memset(k->ws, 0, k->wsz);
    return 0;
}

/* With T > 1, the integer control at the length of the 1-thread parallel
 * encode and decode of canonical nearest on the best path and a long one,
 * and the vector and stream controls at the encode's length (the stream
 * through k's input, writing into k->cp); else ctl->ran stays 0. */
static void run_controls(const bench_ctx *k, uint32_t threads, const bench_row *all, int n_rows,
                         tahq_cpu_path best, bench_controls *ctl)
{
    const control_result none = {0, 0, 0, 1, 0};
    memset(ctl, 0, sizeof *ctl);
    ctl->enc = ctl->dec = ctl->lng = ctl->vec = ctl->stream = none;
    const int cr = control_row(all, n_rows, best);
    if (threads <= 1 || cr < 0)
        return;
    ctl->ran = 1;
    ctl->enc1 = &all[cr];
    ctl->enc_t = threads_row(all, n_rows, &all[cr], threads);
    const double enc_s = all[cr].enc_s;
    /* the three at the encode's length back to back, so that they meet the
     * same load from other work on the machine */
    ctl->enc = control_at(threads, CTL_INTEGER, enc_s);
    ctl->vec_ok = vector_available();
    if (ctl->vec_ok)
        ctl->vec = control_at(threads, CTL_VECTOR, enc_s);
    ctl->stream = stream_scaling(threads, k->x, k->n, k->cp, enc_s);
    ctl->dec = control_at(threads, CTL_INTEGER, all[cr].dec_s);
    ctl->lng = control_at(threads, CTL_INTEGER, 0.5);
    const double passes = (double)ctl->stream.iterations;
    ctl->cpy_gbps = gbps(k->in_bytes, all[cr].cpy_s);
    ctl->stream_one = passes * gbps(k->in_bytes, ctl->stream.one_s);
    ctl->stream_all = passes * gbps(k->in_bytes, ctl->stream.all_s);
    ctl->enc_one = gbps(k->in_bytes, all[cr].enc_s);
    ctl->enc_all = ctl->enc_t ? gbps(k->in_bytes, ctl->enc_t->enc_s) : 0.0;
}

/* The stream control's object: its times, passes, traffic, GB/s of input on
 * 1 and T threads and their ratios to the memcpy of the encode's row. */
static json_t *jstream(const bench_controls *ctl)
{
    const control_result *st = &ctl->stream;
    const double cpy = ctl->cpy_gbps, s1 = ctl->stream_one, st_t = ctl->stream_all;
    json_t *o = jcontrol(st);
    if (!o)
        return NULL;
    json_object_set_new(o, "passes", cli_ju64(st->iterations));
    json_object_set_new(o, "bytes_read_per_element", cli_jnum(4.0));
    json_object_set_new(o, "bytes_written_per_element",
                        cli_jnum((double)STREAM_OUT * 4.0 / STREAM_BLOCK));
    json_object_set_new(o, "one_thread_gbps", cli_jnum(s1));
    json_object_set_new(o, "all_threads_gbps", cli_jnum(st_t));
    json_object_set_new(o, "memcpy_gbps", cli_jnum(cpy));
    json_object_set_new(o, "one_thread_over_memcpy", cli_jnum(s1 / cpy));
    json_object_set_new(o, "all_threads_over_memcpy", cli_jnum(st_t / cpy));
    return o;
}

/* The encode the controls are read against, or null without its T row. */
static json_t *jencode_scaling(const bench_controls *ctl)
{
    const bench_row *a = ctl->enc1, *b = ctl->enc_t;
    if (!b)
        return json_null();
    const double e1 = ctl->enc_one, et = ctl->enc_all, st_t = ctl->stream_all;
    return json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o}", "profile", a->c->profile,
                     "rounding", a->c->rounding, "cpu_path",
                     tahq_cpu_path_name((tahq_cpu_path)a->path), "one_thread_s", cli_jnum(a->enc_s),
                     "all_threads_s", cli_jnum(b->enc_s), "one_thread_gbps", cli_jnum(e1),
                     "all_threads_gbps", cli_jnum(et), "speedup", cli_jnum(a->enc_s / b->enc_s),
                     "all_threads_over_stream", cli_jnum(et / st_t));
}

/* "thread_scaling_control": the integer control (its "speedup" the long
 * one's), "vector" ("skipped" says why when it did not run), "stream", and
 * the "encode" they are read against. */
static json_t *jcontrols(uint32_t threads, const bench_controls *ctl)
{
    json_t *o = json_pack("{s:I, s:o, s:o, s:o, s:o}", "threads", (json_int_t)threads, "speedup",
                          cli_jnum(ctl->lng.speedup), "long", jcontrol(&ctl->lng), "encode_length",
                          jcontrol(&ctl->enc), "decode_length", jcontrol(&ctl->dec));
    if (!o)
        return NULL;
    json_t *v = ctl->vec_ok ? jcontrol(&ctl->vec) : json_pack("{s:n}", "speedup");
    if (v) {
        json_object_set_new(v, "skipped", ctl->vec_ok ? json_null() : json_string("no AVX2"));
        json_object_set_new(v, "instructions", json_string("avx2 mul + add, registers only"));
        json_object_set_new(v, "chains", json_integer(VECTOR_CHAINS));
        json_object_set_new(v, "steps", cli_ju64(ctl->vec.iterations));
    }
    json_object_set_new(o, "vector", v);
    json_object_set_new(o, "stream", jstream(ctl));
    json_object_set_new(o, "encode", jencode_scaling(ctl));
    return o;
}

/* The JSON report on stdout; takes load_before, jrows and jscaling. Returns
 * cli_json_print's status. */
static int print_json(const char *date, const bench_ctx *k, const bench_case *cases,
                      const bench_row *all, uint32_t threads, unsigned paths, const rt_memory *mem,
                      const bench_controls *ctl, json_t *load_before, json_t *jrows,
                      json_t *jscaling)
{
    const bench_row *d = &all[0]; /* canonical nearest, 1 thread: the top-level fields */
    double cpy = gbps(k->in_bytes, d->cpy_s), enc = gbps(k->in_bytes, d->enc_s),
           dec = gbps(k->in_bytes, d->dec_s);
    json_t *o = json_pack(
        "{s:s, s:o, s:I, s:I, s:o, s:o, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
        "command", "bench", "shape", cli_jshape(k->shape), "input_bytes", (json_int_t)k->in_bytes,
        "message_bytes", (json_int_t)d->len, "bits_per_element",
        cli_jnum((double)d->len * 8.0 / (double)k->n), "config", cli_jconfig(&cases[0].cfg), "reps",
        (json_int_t)k->reps, "threads", (json_int_t)1, "memcpy_gbps", cli_jnum(cpy), "encode_gbps",
        cli_jnum(enc), "decode_gbps", cli_jnum(dec), "encode_over_memcpy", cli_jnum(enc / cpy),
        "decode_over_memcpy", cli_jnum(dec / cpy), "memcpy_s", cli_jnum(d->cpy_s), "encode_s",
        cli_jnum(d->enc_s), "decode_s", cli_jnum(d->dec_s));
    if (o) {
        json_object_set_new(o, "date", json_string(date));
        json_object_set_new(o, "machine", jmachine());
        json_object_set_new(o, "load_before", load_before);
        load_before = NULL;
        json_object_set_new(o, "load_after", jloadavg());
        json_object_set_new(o, "max_threads", json_integer((json_int_t)threads));
        json_t *jp = json_array();
        for (int p = 0; p < TAHQ_CPU_PATH_COUNT; p++)
            if ((paths >> p) & 1u)
                json_array_append_new(jp, json_string(tahq_cpu_path_name((tahq_cpu_path)p)));
        json_object_set_new(o, "cpu_paths", jp);
        json_object_set_new(o, "cpu_path_best",
                            json_string(tahq_cpu_path_name(tahq_cpu_path_best())));
        json_object_set_new(o, "results", jrows);
        json_object_set_new(o, "scaling", jscaling);
        json_object_set_new(o, "roundtrip_memory", jmemory(mem, &cases[0]));
        if (ctl->ran)
            json_object_set_new(o, "thread_scaling_control", jcontrols(threads, ctl));
        jrows = jscaling = NULL;
    }
    json_decref(load_before);
    json_decref(jrows);
    json_decref(jscaling);
    return cli_json_print(stdout, o);
}

int cmd_bench(int argc, char **argv)
{
    uint32_t mib = 64, reps = 5, threads = 1;
    int json = 0, npos = 0, gain = 0;
    unsigned paths = (1u << TAHQ_CPU_PATH_COUNT) - 1u;
    const cli_option own[] = {CLI_FLAG("--json", &json),
                              CLI_FLAG("--gain", &gain),
                              CLI_OPT("--mib", opt_mib, &mib),
                              CLI_OPT("--paths", opt_paths, &paths),
                              CLI_OPT("--reps", opt_reps, &reps),
                              CLI_OPT("--threads", opt_threads, &threads),
                              CLI_END};
    const cli_option *const tables[] = {own, NULL};
    int prc = cli_parse(argc, argv, tables, NULL, 0, &npos);
    if (prc == CLI_HELP)
        bench_help();
    if (prc)
        return prc == CLI_HELP ? 0 : prc;

    char date[40], cpu[256];
    utc_date(date, sizeof date);
    cpu_model(cpu, sizeof cpu);
    json_t *load_before = jloadavg();

    tahq_shape shape;
    bench_shape(mib, &shape);
    bench_case cases[BENCH_CASES_MAX];
    int n_cases = make_cases(cases, gain);
    /* the listed paths this CPU has; the best of them for the rest */
    tahq_cpu_path best = TAHQ_CPU_SCALAR;
    int rc = select_paths(&paths, &best);
    if (rc != 0) {
        json_decref(load_before);
        return rc;
    }

    /* before any large allocation: see child_roundtrip */
    rt_memory mem;
    if (measure_roundtrip_memory(&cases[0], &shape, threads, &mem) != 0) {
        json_decref(load_before);
        return cli_fail(EXIT_RUNTIME, "round-trip memory measurement failed (%u MiB tensor)",
                        (unsigned)mib);
    }

    bench_ctx k;
    memset(&k, 0, sizeof k);
    k.shape = &shape;
    k.n = shape_count(&shape);
    k.in_bytes = (size_t)k.n * sizeof(float);
    k.reps = reps;
    if (max_sizes(&k, cases, n_cases, &shape, threads) != 0) {
        json_decref(load_before);
        return EXIT_RUNTIME;
    }
    float *x = NULL;
    json_t *jrows = json_array(), *jscaling = json_array();
    /* reference, then parallel on 1 and on T threads for each path */
    bench_row all[(1 + 2 * TAHQ_CPU_PATH_COUNT) * BENCH_CASES_MAX];
    int n_rows = 0;
    if ((rc = alloc_buffers(&k, &x, mib)) != 0)
        goto out;
    if ((rc = run_rows(&k, cases, n_cases, threads, paths, best, all, &n_rows)) != 0)
        goto out;

    bench_controls ctl;
    run_controls(&k, threads, all, n_rows, best, &ctl);
    for (int i = 0; i < n_rows; i++)
        json_array_append_new(jrows, jrow(&k, &all[i]));
    append_scaling(jscaling, all, n_rows);

    if (json) {
        rc = print_json(date, &k, cases, all, threads, paths, &mem, &ctl, load_before, jrows,
                        jscaling);
        load_before = jrows = jscaling = NULL;
    } else {
        print_text(date, cpu, &shape, &k, reps, all, n_rows, threads, &ctl, &mem);
    }
out:
    json_decref(load_before);
    json_decref(jrows);
    json_decref(jscaling);
    free(x);
    free(k.y);
    free(k.cp);
    free(k.msg);
    free(k.ws);
    free(k.ref_msg);
    free(k.ref_y);
    return rc;
}
