/* calimport.c — `shardcast calibrate import nccl-tests LOG...`: nccl-tests' printed tables into
 * the measurements format (calibrate/import.c), written whole or not at all. Not here: parsing
 * (calibrate/import.c), fitting (calibrate fit). */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../calibrate/import.h"
#include "commands.h"
#include "common.h"

static const char HELP[] =
    "usage: shardcast calibrate import nccl-tests LOG... -o measurements.json [--kind K] [--ranks N]\n"
    "       [--nodes K] [--algorithm A] [--in-place]\n\n"
    "Turns nccl-tests output (all_reduce_perf, all_gather_perf, reduce_scatter_perf; one log per\n"
    "run) into shardcast-measurements/1 for 'calibrate fit' and 'validate'. Ranks and nodes come\n"
    "from the '#  Rank N ... on HOST' header lines, the collective from the 'Collective test\n"
    "starting' line or the file name; options override. Times are the out-of-place column.\n"
    "Logs of nccl-tests before its root column (2020) are read too.\n"
    "A run pinned with NCCL_ALGO (shown in the log, or --algorithm) is fitted with that algorithm\n"
    "(a 2-node all-reduce measured with the tree is not fitted as a ring); otherwise with NCCL's\n"
    "choice as the model makes it.\n\n"
    "  -o FILE             output measurements (written to a temporary beside FILE, then renamed)\n"
    "  --kind K            all-reduce | all-gather | reduce-scatter\n"
    "  --ranks N, --nodes K  when the log has no rank lines\n"
    "  --algorithm A       ring | tree | nvls | nvls-tree | pat (the run's NCCL_ALGO)\n"
    "  --in-place          use the in-place columns\n";

int cmd_calibrate_import(int argc, char **argv)
{
    static const struct option lo[] = {{"help", no_argument, 0, 'h'},        {"kind", required_argument, 0, 1},
                                       {"ranks", required_argument, 0, 2},   {"nodes", required_argument, 0, 3},
                                       {"algorithm", required_argument, 0, 4}, {"in-place", no_argument, 0, 5},
                                       {"output", required_argument, 0, 'o'}, {0, 0, 0, 0}};
    cal_import_opts o = {0};
    const char *outp = NULL;
    int c;
    optind = 1;
    opterr = 0; /* one line: getopt's own message no longer precedes ours */
    while ((c = getopt_long(argc, argv, ":ho:", lo, NULL)) != -1) {
        switch (c) {
        case 'h': fputs(HELP, stdout); return 0;
        case 1: o.kind = optarg; break;
        case 2:
        case 3: { /* the measurement loader's ranges: ranks to 2^24, nodes to 2^20 (atoi took "8x" as 8) */
            char *end;
            long v = strtol(optarg, &end, 10), hi = c == 2 ? 1L << 24 : 1L << 20;
            if (end == optarg || *end || v < 1 || v > hi) {
                sc_err e;
                sc_err_set(&e, SC_EINPUT, c == 2 ? "--ranks" : "--nodes", "", "expected an integer from 1 to %ld, got \"%.60s\"",
                           hi, optarg);
                return cli_fail(&e, SC_EINPUT);
            }
            *(c == 2 ? &o.ranks : &o.nodes) = (int)v;
            break;
        }
        case 4: o.algorithm = optarg; break;
        case 5: o.in_place = 1; break;
        case 'o': outp = optarg; break;
        default: return cli_getopt_error("calibrate import", c, argv, lo);
        }
    }
    char what[200]; /* each usage error says what it got, as the rest of the CLI does */
    if (optind >= argc || strcmp(argv[optind], "nccl-tests")) {
        snprintf(what, sizeof what, "expected the format first, nccl-tests, got %s%.100s%s", optind < argc ? "'" : "nothing",
                 optind < argc ? argv[optind] : "", optind < argc ? "'" : "");
        return cli_usage_error("calibrate import", what);
    }
    optind++;
    if (optind >= argc)
        return cli_usage_error("calibrate import", "expected one or more nccl-tests logs");
    if (!outp)
        return cli_usage_error("calibrate import", "expected -o measurements.json");
    if (o.kind && strcmp(o.kind, "all-reduce") && strcmp(o.kind, "all-gather") && strcmp(o.kind, "reduce-scatter")) {
        snprintf(what, sizeof what, "--kind: expected all-reduce, all-gather or reduce-scatter, got '%.100s'", o.kind);
        return cli_usage_error("calibrate import", what);
    }
    static const char *const algos[] = {"ring", "tree", "nvls", "nvls-tree", "pat"};
    if (o.algorithm) {
        int ok = 0;
        for (int i = 0; i < 5; i++)
            ok |= !strcmp(o.algorithm, algos[i]);
        snprintf(what, sizeof what, "--algorithm: expected ring, tree, nvls, nvls-tree or pat, got '%.100s'", o.algorithm);
        if (!ok)
            return cli_usage_error("calibrate import", what);
    }
    sc_err err;
    json_t *doc;
    int rc = cal_import_nccl_tests(argv + optind, argc - optind, &o, &doc, &err);
    if (rc)
        return cli_fail(&err, rc);
    /* whole or absent (base/atomic: unique temporary beside it, fsync, rename) */
    size_t n = json_array_size(json_object_get(doc, "collectives"));
    char *text = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    json_decref(doc);
    if (!text)
        return cli_fail(&err, sc_err_set(&err, SC_ERUNTIME, outp, "", "out of memory"));
    rc = cli_write_atomic(outp, text, strlen(text), &err);
    free(text);
    if (rc)
        return cli_fail(&err, rc);
    fprintf(stderr, "calibrate import: %zu collectives from %d log%s -> %s\n", n, argc - optind,
            argc - optind == 1 ? "" : "s", outp);
    return 0;
}
