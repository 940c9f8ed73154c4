/* SPDX-License-Identifier: MIT */
/* cmd_gen_llm.c - tahq gen-llm: write the built-in LLM-like tensor. */
#include <stdio.h>
#include <stdlib.h>

#include "codec_ops.h"
#include "commands.h"
#include "llm_tensor.h"
#include "npy.h"
#include "util.h"

static void gen_help(void)
{
    printf("usage: tahq gen-llm OUT.npy [--batch B] [--seq S] [--channels C] [--seed N]\n"
           "                    [--json]\n"
           "Write the built-in deterministic LLM-like activation tensor (the data of\n"
           "tahq report) as float32 .npy of shape [B, S, C] (defaults %u, %u, %u, seed\n"
           "%llu), or as raw float32 if OUT ends in .f32. The values are identical on\n"
           "every IEEE-754 platform.\n",
           LLM_DEFAULT_BATCH, LLM_DEFAULT_SEQ, LLM_DEFAULT_CHANNELS,
           (unsigned long long)LLM_DEFAULT_SEED);
}

int cmd_gen_llm(int argc, char **argv)
{
    uint32_t B = LLM_DEFAULT_BATCH, S = LLM_DEFAULT_SEQ, C = LLM_DEFAULT_CHANNELS;
    uint64_t seed = LLM_DEFAULT_SEED;
    const char *out = NULL;
    int json = 0, npos = 0;
    const cli_option own[] = {CLI_FLAG("--json", &json),
                              CLI_OPT("--batch", cli_opt_u32_pos, &B),
                              CLI_OPT("--seq", cli_opt_u32_pos, &S),
                              CLI_OPT("--channels", cli_opt_u32_pos, &C),
                              CLI_OPT("--seed", cli_opt_u64, &seed),
                              CLI_END};
    const cli_option *const tables[] = {own, NULL};
    int prc = cli_parse(argc, argv, tables, &out, 1, &npos);
    if (prc == CLI_HELP)
        gen_help();
    if (prc)
        return prc == CLI_HELP ? 0 : prc;
    if (!out)
        return cli_fail(EXIT_USAGE, "need OUT.npy (see tahq gen-llm --help)");
    const int raw_out = tensor_out_raw(out);
    if (raw_out < 0)
        return EXIT_USAGE;
    uint64_t n = (uint64_t)B * S;
    if (n > TAHQ_MAX_ELEMENTS / C)
        return cli_fail(EXIT_USAGE, "[%u, %u, %u] exceeds 2^40 elements", (unsigned)B, (unsigned)S,
                        (unsigned)C);
    n *= C;
    if (n > SIZE_MAX / sizeof(float))
        return cli_fail(EXIT_RUNTIME, "tensor too large for this machine");
    float *x = malloc((size_t)n * sizeof(float));
    if (!x || llm_tensor_fill(x, B, S, C, seed) != 0) {
        free(x);
        return cli_fail(EXIT_RUNTIME, "out of memory (%llu elements)", (unsigned long long)n);
    }
    uint64_t dims[3] = {B, S, C};
    int rc = raw_out ? raw_f32_write(out, n, x) : npy_write(out, 3, dims, x);
    free(x);
    if (rc)
        return rc;
    if (json) {
        return cli_json_print(stdout, json_pack("{s:s, s:o, s:[I, I, I], s:o, s:I}", "command",
                                                "gen-llm", "output", cli_jstr(out), "shape",
                                                (json_int_t)B, (json_int_t)S, (json_int_t)C, "seed",
                                                cli_ju64(seed), "elements", (json_int_t)n));
    } else {
        printf("%s: LLM-like tensor [%u, %u, %u], seed %llu, %llu elements\n", out, (unsigned)B,
               (unsigned)S, (unsigned)C, (unsigned long long)seed, (unsigned long long)n);
    }
    return 0;
}
