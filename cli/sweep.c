/* sweep.c — `shardcast sweep`: predict over nodes x layouts x micro-batch and write one CSV row
 * per point (every output column, units in the header), atomically. Progress on stderr.
 * Not here: plotting (cli/plot.c) or recommendation (cli/plan.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "eval.h"

static const char HELP[] =
    "usage: shardcast sweep --cluster C --model M --nodes LIST --layout L [--layout ...] -o out.csv\n\n"
    "Predicts every point of nodes x layouts x micro-batches and writes a CSV (written to\n"
    "out.csv.tmp, then renamed: an interrupted sweep leaves no half-written file). Without -o\n"
    "the CSV goes to stdout. Columns carry units (step_s, mem_total_GiB, comm_GB_per_rank...).\n\n" CLI_COMMON_HELP
    "  --micro-batches LIST   micro-batch sizes to sweep, e.g. 1,2,4 (default: --micro-batch)\n"
    "  --calibration F|NAME   cost-model parameters (default: configs/calibrations/<cluster>.json)\n"
    "  --engine model|sim     engine (default model)\n"
    "  -o, --out FILE         CSV output\n"
    "  --progress             progress on stderr even when it is not a terminal\n";

typedef struct opts {
    const char *calibration, *out, *mbs;
    cli_engine engine;
    int progress;
} opts;

static int own(int opt, const char *arg, void *ctx)
{
    opts *o = ctx;
    sc_err err;
    switch (opt) {
    case 2000: o->calibration = arg; return 0;
    case 2001: return cli_parse_engine(arg, &o->engine, &err) ? cli_fail(&err, SC_EINPUT) : 0;
    case 'o': o->out = arg; return 0;
    case 2003: o->mbs = arg; return 0;
    case 2004: o->progress = 1; return 0;
    }
    return 0;
}

int cmd_sweep(int argc, char **argv)
{
    static const struct option extra[] = {{"calibration", required_argument, 0, 2000},
                                          {"engine", required_argument, 0, 2001},
                                          {"out", required_argument, 0, 'o'},
                                          {"micro-batches", required_argument, 0, 2003},
                                          {"progress", no_argument, 0, 2004}};
    cli_setup s;
    opts o = {0};
    cli_setup_init(&s, argv[0]);
    int rc = cli_getopt(argc, argv, "sweep", HELP, extra, 5, &s, own, &o);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (optind < argc)
        return cli_usage_error("sweep", "unexpected argument");
    sc_err err;
    cli_calib cal;
    if ((rc = cli_setup_load(&s, NEED_CLUSTER | NEED_MODEL | NEED_NODES | NEED_LAYOUTS, &err)) ||
        (rc = cli_calib_load(&s, o.calibration, &cal, &err)))
        return cli_fail(&err, rc);
    int mbs[CLI_MAX_NODES], n_mb = 1;
    mbs[0] = s.training.micro_batch;
    if (o.mbs && (rc = cli_parse_int_list(o.mbs, "--micro-batches", mbs, CLI_MAX_NODES, &n_mb, &err)))
        return cli_fail(&err, rc);

    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) {
        fprintf(stderr, "shardcast sweep: out of memory\n");
        return 1;
    }
    cli_csv_header(mem);
    long total = (long)s.n_nodes * s.n_layouts * n_mb, done = 0;
    int show = o.progress || isatty(2);
    for (int mi = 0; mi < n_mb; mi++)
        for (int li = 0; li < s.n_layouts; li++) {
            double base_per_gpu = NAN;
            for (int ni = 0; ni < s.n_nodes; ni++) {
                spec_training tr = s.training;
                tr.micro_batch = mbs[mi];
                cli_point p;
                if ((rc = cli_eval(&s, &cal, o.engine, NULL, &tr, s.nodes[ni], &s.layouts[li], &p, &err))) {
                    fclose(mem);
                    free(buf);
                    return cli_fail(&err, rc);
                }
                double per_gpu = p.r.samples_per_s / p.gpus;
                if (ni == 0)
                    base_per_gpu = per_gpu;
                p.weak_eff = per_gpu / base_per_gpu;
                cli_csv_row(mem, &s, &p);
                done++;
                if (show && (done % 64 == 0 || done == total))
                    fprintf(stderr, "\rsweep: %ld/%ld points", done, total);
            }
        }
    if (show)
        fprintf(stderr, "\n");
    fclose(mem);
    if (!o.out || !strcmp(o.out, "-")) {
        fwrite(buf, 1, len, stdout);
        free(buf);
        return 0;
    }
    rc = cli_write_atomic(o.out, buf, len, &err);
    free(buf);
    if (rc)
        return cli_fail(&err, rc);
    fprintf(stderr, "sweep: %ld rows -> %s\n", total, o.out);
    return 0;
}
