/* SPDX-License-Identifier: MIT */
/* cmd_golden_gen.c - tahq golden-gen: the options; the generator itself is
 * in the conformance kit (golden/kit/tahq_golden.h, golden_generate). Every
 * tensor of a set is computed from fixed seeds with Philox4x32-10, integer
 * operations and exact binary32 scaling, so a set is byte-identical on every
 * platform where libtahq is correct. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "tahq.h"
#include "tahq_golden.h"
#include "util.h"

static void help(void)
{
    printf("usage: tahq golden-gen DIR [--set v1|v2|v3|v4]\n"
           "Write the golden vector set (default %s; format %u) into DIR: manifest.json,\n"
           "inputs/, expected/. Deterministic: the same libtahq always writes the same bytes.\n"
           "Each case is checked while it is written (encode status, decode of the own\n"
           "message, the error code the SPEC prescribes for invalid inputs).\n"
           "  --set v2   the cases of v1 and the cases added for mutation adequacy\n"
           "             (golden/mutation): each names in \"kills\" the mutants of\n"
           "             golden/mutation/catalogue.txt it tells apart from the reference\n"
           "  --set v3   the cases of the gain allocation (SPEC 4.3, alloc 3, messages of\n"
           "             header version 3); each names the mistake it catches, checked\n"
           "             while the set is written (golden/kit/golden_gain.c)\n"
           "  --set v4   the set to use: the cases of v2 and v3 and the cases found by\n"
           "             boundary search (golden/mutation); every case names in \"kills\"\n"
           "             the mutants of both catalogues it is recorded as killing\n",
           GOLDEN_DEFAULT_SET, (unsigned)TAHQ_FORMAT_VERSION);
}

int cmd_golden_gen(int argc, char **argv)
{
    const char *dir = NULL;
    const char *set = GOLDEN_DEFAULT_SET;
    int npos = 0;
    const cli_option own[] = {CLI_VALUE("--set", &set), CLI_END};
    const cli_option *const tables[] = {own, NULL};
    int prc = cli_parse(argc, argv, tables, &dir, 1, &npos);
    if (prc == CLI_HELP)
        help();
    if (prc)
        return prc == CLI_HELP ? 0 : prc;
    if (!golden_set_known(set))
        return cli_fail(EXIT_USAGE, "--set: unknown set '%s' (v1, v2, v3 or v4)", set);
    if (!dir)
        return cli_fail(EXIT_USAGE, "need DIR (see tahq golden-gen --help)");
    return golden_generate(dir, set);
}
