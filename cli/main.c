/* SPDX-License-Identifier: MIT */
/* main.c - the tahq command-line program: dispatch to the subcommands. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "tahq.h"
#include "util.h"

typedef struct command {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
} command;

static const command commands[] = {
    {"encode", cmd_encode, "compress a float32 tensor (.npy or raw .f32) into a message"},
    {"decode", cmd_decode, "decompress a message into float32 .npy or raw .f32"},
    {"inspect", cmd_inspect, "print a message's header, size, precision split, tiles"},
    {"roundtrip", cmd_roundtrip, "encode + decode a tensor; error statistics and bound check"},
    {"report", cmd_report, "verification report on the built-in LLM-like tensor"},
    {"bench", cmd_bench, "single-thread encode/decode throughput beside memcpy"},
    {"gen-llm", cmd_gen_llm, "write the built-in LLM-like activation tensor"},
    {"golden-gen", cmd_golden_gen, "write the golden vector set (golden/README.md)"},
    {"conform", cmd_conform, "check another implementation against golden vectors"},
    {"bounds", cmd_bounds, "error vs bits/element sweep against the SPEC error bound"},
    {"alloc-study", cmd_alloc_study, "precision-allocation policies at equal bits vs the oracle"},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tahq COMMAND [ARGS] [--json]\n"
            "       tahq --help | --version\n"
            "TAH-Quant activation compression, reference codec (format %u).\n\n"
            "commands:\n",
            (unsigned)TAHQ_FORMAT_VERSION);
    for (size_t i = 0; i < N_COMMANDS; ++i)
        fprintf(f, "  %-11s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'tahq COMMAND --help' describes a command. Exit status: 0 ok, 1 runtime\n"
               "error or failed check, 2 usage error.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (cli_is_help(cmd) || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("tahq %s, format %u\n", TAHQ_CLI_VERSION, (unsigned)TAHQ_FORMAT_VERSION);
        return 0;
    }
    for (size_t i = 0; i < N_COMMANDS; ++i) {
        if (strcmp(cmd, commands[i].name) == 0) {
            cli_set_command(commands[i].name);
            int rc = commands[i].fn(argc - 1, argv + 1);
            if (fflush(stdout) != 0 && rc == 0) {
                perror("tahq: stdout");
                rc = EXIT_RUNTIME;
            }
            return rc;
        }
    }
    fprintf(stderr, "tahq: unknown command '%s' (see tahq --help)\n", cmd);
    return EXIT_USAGE;
}
