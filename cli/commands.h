/* SPDX-License-Identifier: MIT */
/* commands.h - the subcommands of the tahq program. Each takes the
 * arguments after "tahq" (argv[0] is the command name) and returns the
 * process exit status (0 ok, 1 runtime error or failed check, 2 usage). */
#ifndef TAHQ_CLI_COMMANDS_H
#define TAHQ_CLI_COMMANDS_H

int cmd_encode(int argc, char **argv);
int cmd_decode(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_roundtrip(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_gen_llm(int argc, char **argv);
int cmd_golden_gen(int argc, char **argv);
int cmd_conform(int argc, char **argv);
int cmd_bounds(int argc, char **argv);
int cmd_alloc_study(int argc, char **argv);

#endif
