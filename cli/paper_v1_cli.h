/* paper_v1_cli.h - tahq encode/decode --profile paper-v1 (cmd_paper_v1.c). */
#ifndef TAHQ_CLI_PAPER_V1_H
#define TAHQ_CLI_PAPER_V1_H

/* 1 if argv has --profile paper-v1, 0 if no --profile, -1 after printing a
 * usage error (missing or unknown profile). */
int paper_v1_profile_requested(int argc, char **argv);
int cmd_paper_v1_encode(int argc, char **argv);
int cmd_paper_v1_decode(int argc, char **argv);

#endif
