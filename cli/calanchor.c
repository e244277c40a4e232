/* calanchor.c — `shardcast calibrate anchor RUN... [--calibration BASE] -o OUT.json`: measured
 * runs of the user's job (shardcast-case/1 files) in, the stack parameters fitted
 * (calibrate/anchor.h), the anchored calibration written and the fit printed. Not here: the fit,
 * loading cases (predict/accuracy_anchor.h). */
#include <jansson.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/jsonrd.h"
#include "../calibrate/trainlog.h"
#include "../predict/engine.h"
#include "../model/workload.h"
#include "../predict/accuracy_anchor.h"
#include "commands.h"
#include "common.h"

static const char HELP[] =
    "usage: shardcast calibrate anchor [RUN.json...] [--log FORMAT:FILE]... [--case SHAPE.json | shape options]\n"
    "                                  [--calibration BASE] -o OUT.json\n\n"
    "Anchors the model on measured runs of your own job: fits a few stack parameters by GSL least\n"
    "squares on the relative step-time residuals, every other value from BASE:\n"
    "  compute-kernel efficiency  a factor on BASE's GEMM and attention efficiencies (the level),\n"
    "                             at most the one that puts the best kernel at the datasheet peak\n"
    "  network bandwidth efficiency  when a run spans nodes (0.05..1)\n"
    "  framework overhead per hook   for deepspeed / fsdp / fsdp2 / megatron runs (0..10 ms)\n"
    "in that order, at most one parameter per run; a parameter held at its range's bound gives its\n"
    "place to the next. Standard errors come from the residuals (chi^2 / dof), or with as many runs\n"
    "as parameters from nothing (none is printed); a parameter whose standard error is not smaller\n"
    "than its value is undetermined and held at BASE's value.\n\n"
    "RUN is a shardcast-case/1 file (validation/README.md) in a folder named by its source_id;\n"
    "its cluster and model paths resolve against the folder above it (as in validation/). All runs\n"
    "must share one cluster and one framework. OUT.json is BASE's file with an \"anchor\" object\n"
    "(parameters, runs, residuals) that predict, sweep and plan apply with --calibration OUT.json;\n"
    "they say so when the target cluster is not the runs'. A run the fit leaves off by more than its\n"
    "measurement allows (2 x its measured spread; a parameter held at a bound, or nothing fitted)\n"
    "is named in a one-line warning on stderr: forecasts made with OUT.json carry its residual.\n\n"
    "--log FORMAT:FILE reads a training log (repeatable): deepspeed (throughput timer\n"
    "CurrSamplesPerSec= / SamplesPerSec=, samples/sec:), megatron (elapsed time per iteration (ms)),\n"
    "torchtitan (tps: per GPU, mfu:), composer (throughput/tokens_per_sec), hf-trainer\n"
    "(train_samples_per_second), nanotron (tokens_per_sec_per_gpu). Warm-up entries are dropped (the\n"
    "first fifth, at least one, of 3 or more; --warmup N: the first N) and the median of the rest is\n"
    "the run's rate, its sample sd / median its spread. Samples and tokens per second are the whole\n"
    "job's unless the key says per GPU. The job's shape (what ran) comes from --case SHAPE.json (a\n"
    "case file; its measured value is not used) or from the shape options: --cluster --model\n"
    "--nodes N --layout L --micro-batch --grad-accum --precision --checkpointing --framework ...\n"
    "('shardcast predict --help'); one node count and one layout.\n\n"
    "  --calibration BASE     calibration name or file (default: the first run's cluster's)\n"
    "  --log FORMAT:FILE      a training log of the job (repeatable)\n"
    "  --case FILE            the logs' job shape from a case file\n"
    "  --warmup N             log entries to drop at the start (default: see above)\n"
    "  -o, --out FILE         anchored calibration to write (atomically)\n"
    "  --json                 the fit as JSON on stdout\n";

#define MAX_LOGS 16

typedef struct opts {
    const char *out, *base, *shape_case;
    const char *logs[MAX_LOGS];
    int n_logs, warmup;
} opts;

static int own(int opt, const char *arg, void *ctx)
{
    opts *o = ctx;
    sc_err err;
    if (opt == 'o')
        o->out = arg;
    else if (opt == 2100 && !*arg) { /* said for the option, not the configs folder */
        sc_err_set(&err, SC_EINPUT, "--calibration", "", "expected a name or a path, got nothing");
        return cli_fail(&err, SC_EINPUT);
    } else if (opt == 2100)
        o->base = arg;
    else if (opt == 2102)
        o->shape_case = arg;
    else if (opt == 2101) {
        if (o->n_logs == MAX_LOGS) {
            sc_err_set(&err, SC_EINPUT, "--log", "", "expected at most %d logs", MAX_LOGS);
            return cli_fail(&err, SC_EINPUT);
        }
        o->logs[o->n_logs++] = arg;
    } else if (opt == 2103 && cli_parse_int(arg, "--warmup", 0, 1000000, &o->warmup, &err))
        return cli_fail(&err, SC_EINPUT);
    return 0;
}

/* A log's rate as a step time for the job shape in r (specs set): the step's samples from the
 * analytical model (they do not depend on the calibration), divided by the rate. */
static double log_step(const tl_result *t, const cal_anchor_run *r)
{
    an_result res;
    pred_step_shape(r->model, r->training, r->layout, r->cluster, r->nodes, &res);
    double samples = res.samples_per_step, tokens = res.tokens_per_s * res.step_s;
    switch (t->metric) {
    case TL_STEP_S: return t->median;
    case TL_SAMPLES_PER_S: return samples / t->median;
    case TL_TOKENS_PER_S: return tokens / t->median;
    default: return tokens / (t->median * r->nodes * r->cluster->gpus_per_node);
    }
}

/* The job shape of the logs: --case, else the shape options (one node count, one layout). */
static int log_shape(cli_setup *s, const opts *o, acc_case *shape, cal_anchor_run *r, sc_err *err);

/* Case i of argv into c and run r; paths resolve against the folder above the case's folder. */
static int load_run(const cli_setup *s, const char *file, acc_case *c, cal_anchor_run *r, sc_err *err)
{
    char d1[4096], dir[4096];
    snprintf(d1, sizeof d1, "%s", file);
    snprintf(dir, sizeof dir, "%s", dirname(d1)); /* <dir>/<source_id>/<name>.json */
    snprintf(d1, sizeof d1, "%s", dir);
    snprintf(dir, sizeof dir, "%s", dirname(d1));
    const char *roots[2] = {s->config_roots[0], s->config_roots[1]};
    acc_paths p = {dir, roots, 2, NULL};
    int rc = acc_case_load(NULL, file, &p, c, err);
    return rc ? rc : acc_case_anchor_run(c, r, err);
}

static int log_shape(cli_setup *s, const opts *o, acc_case *shape, cal_anchor_run *r, sc_err *err)
{
    int rc;
    if (o->shape_case) {
        if ((rc = load_run(s, o->shape_case, shape, r, err)))
            return rc;
    } else {
        if ((rc = cli_setup_load(s, NEED_CLUSTER | NEED_MODEL | NEED_NODES | NEED_LAYOUTS, err)))
            return rc;
        if (s->n_nodes != 1 || s->n_layouts != 1)
            return sc_err_set(err, SC_EINPUT, s->n_nodes != 1 ? "--nodes" : "--layout", "",
                              "expected one value for a log's job shape, got %d", s->n_nodes != 1 ? s->n_nodes : s->n_layouts);
        memset(r, 0, sizeof *r);
        r->cluster = &s->cluster, r->model = &s->model, r->training = &s->training, r->layout = &s->layouts[0];
        r->nodes = s->nodes[0];
    }
    return 0;
}

/* Log i as run r (the shape in tmpl); what was read is said on `say` (stderr under --json, whose
 * stdout is the JSON alone). */
static int load_log(const char *spec, int warmup, const cal_anchor_run *tmpl, cal_anchor_run *r, FILE *say, sc_err *err)
{
    tl_result t;
    int rc = tl_read(spec, warmup, &t, err);
    if (rc)
        return rc;
    *r = *tmpl;
    const char *file = strchr(spec, ':') + 1;
    snprintf(r->file, sizeof r->file, "%s", file);
    snprintf(r->name, sizeof r->name, "%s log: %d of %d entries", t.format, t.n_found - t.n_warmup, t.n_found);
    r->step_s = log_step(&t, r);
    r->spread_rel = t.spread_rel;
    fprintf(say, "%s: %s entries %d, warm-up %d dropped; median %s %.6g, spread (sd / median) %.4f -> step %.6g s\n", file,
            t.format, t.n_found, t.n_warmup, tl_metric_name(t.metric), t.median, t.spread_rel, r->step_s);
    return 0;
}

static void print_fit(const cost_calib *k, const cal_anchor_report *rep, const cal_anchor_run *runs, int n,
                      const char *base, const char *out)
{
    static const double per_si[COST_N_STACK] = {1, 1e6, 1};
    static const char *const unit[COST_N_STACK] = {"x base", "us", "of line rate"};
    printf("anchored %s on %d run%s of %s (%s) -> %s\n", base, n, n == 1 ? "" : "s", k->anchor.cluster,
           spec_framework_str((spec_framework)k->anchor.framework), out);
    for (int p = 0; p < COST_N_STACK; p++) {
        const cost_param *v = &k->anchor.p[p];
        int st = k->anchor.status[p];
        printf("  %-48s %10.4g", cal_anchor_label(p), v->v * per_si[p]);
        if (st == COST_ANCHOR_FITTED && v->sd > 0)
            printf(" ± %-9.3g %s\n", v->sd * per_si[p], unit[p]);
        else
            printf("   %-9s %s%s\n", st == COST_ANCHOR_FITTED ? "(no sd)" : "", unit[p],
                   st == COST_ANCHOR_FITTED       ? ""
                   : st == COST_ANCHOR_BOUND      ? " (held at its physical bound)"
                   : st == COST_ANCHOR_UNDETERMINED ? " (undetermined by these runs: the base's)"
                                                    : " (the base's)");
    }
    printf("standard errors: %s\n", rep->sd_from);
    printf("%-40s %6s %12s %12s %12s %8s\n", "run", "GPUs", "measured s", "base s", "anchored s", "resid %");
    for (int i = 0; i < n; i++)
        printf("%-40.40s %6d %12.4f %12.4f %12.4f %+8.2f\n", runs[i].name, runs[i].nodes * runs[i].cluster->gpus_per_node,
               runs[i].step_s, rep->base_step_s[i], rep->pred_step_s[i], 100 * rep->resid[i]);
    printf("RMS relative residual %.4f over %d run%s, %d parameter%s fitted (%d dof)\n", rep->rms, n, n == 1 ? "" : "s",
           rep->n_free, rep->n_free == 1 ? "" : "s", rep->dof);
}

/* One line on stderr when the anchored calibration does not reproduce a run beyond what its
 * measurement allows (cal_anchor_unreproduced): a parameter held at its bound, or nothing fitted,
 * leaves the run's residual in every forecast made with the file. */
static void warn_unreproduced(const cost_calib *k, const cal_anchor_report *rep, const cal_anchor_run *runs, int n)
{
    double allowed = 0;
    int w = cal_anchor_unreproduced(rep, runs, n, &allowed);
    if (w < 0)
        return;
    char held[160] = "";
    for (int p = 0; p < COST_N_STACK; p++)
        if (k->anchor.status[p] == COST_ANCHOR_BOUND && !held[0])
            snprintf(held, sizeof held, "; %s held at its physical bound", cal_anchor_label(p));
    fprintf(stderr,
            "shardcast calibrate anchor: warning: the anchored calibration does not reproduce run '%.60s': residual "
            "%+.1f %% (allowed %.1f %%: %s)%s, %d parameter%s fitted; forecasts made with it carry that error\n",
            runs[w].name, 100 * rep->resid[w], 100 * allowed,
            runs[w].spread_rel > 0 ? "2 x its measured spread" : "none past the fit's convergence or 2 x its residual sd",
            held, rep->n_free, rep->n_free == 1 ? "" : "s");
}

int cmd_calibrate_anchor(int argc, char **argv)
{
    static const struct option extra[] = {{"out", required_argument, 0, 'o'},
                                          {"calibration", required_argument, 0, 2100},
                                          {"log", required_argument, 0, 2101},
                                          {"case", required_argument, 0, 2102},
                                          {"warmup", required_argument, 0, 2103}};
    cli_setup s;
    opts o = {0};
    cli_setup_init(&s, argv[0]);
    o.warmup = -1;
    int rc = cli_getopt(argc, argv, "calibrate anchor", HELP, extra, 5, &s, own, &o);
    if (rc) /* -1: --help was printed, exit 0 (as cli_args); else the option error's status */
        return rc < 0 ? 0 : rc;
    if (optind >= argc && !o.n_logs)
        return cli_usage_error("calibrate anchor", "expected one or more runs (case files or --log)");
    sc_err err;
    if (!o.out) {
        sc_err_set(&err, SC_EINPUT, "-o", "", "required: the calibration file to write");
        return cli_fail(&err, SC_EINPUT);
    }
    if (s.first_shared && (!o.n_logs || o.shape_case)) { /* case files carry their own shape */
        char opt[64];
        snprintf(opt, sizeof opt, "--%s", s.first_shared);
        sc_err_set(&err, SC_EINPUT, opt, "",
                   "a shape option gives the job of --log runs without --case; here %s give every run's shape "
                   "and this option would be ignored: drop it", o.n_logs ? "--case and the case files" : "the case files");
        return cli_fail(&err, SC_EINPUT);
    }
    int nc = argc - optind, n = nc + o.n_logs;
    if (n > CAL_ANCHOR_MAX_RUNS) {
        sc_err_set(&err, SC_EINPUT, "calibrate anchor", "", "expected at most %d runs, got %d", CAL_ANCHOR_MAX_RUNS, n);
        return cli_fail(&err, SC_EINPUT);
    }
    acc_case *cases = calloc((size_t)nc + 1, sizeof *cases); /* the last: --case's shape */
    cal_anchor_run *runs = calloc((size_t)n, sizeof *runs);
    cost_calib *base = malloc(sizeof *base), *out = malloc(sizeof *out);
    char base_path[4096] = "";
    cal_anchor_report rep;
    if (!cases || !runs || !base || !out)
        rc = sc_err_set(&err, SC_ERUNTIME, "calibrate anchor", "", "out of memory");
    /* the logs before the case files: "--log deepspeed run.log" (a space for the colon) is said
     * as --log's error, not as run.log failing to read as a case file */
    cal_anchor_run shape;
    if (!rc && o.n_logs)
        rc = log_shape(&s, &o, &cases[nc], &shape, &err);
    for (int i = 0; i < o.n_logs && !rc; i++)
        rc = load_log(o.logs[i], o.warmup, &shape, &runs[nc + i], s.json ? stderr : stdout, &err);
    for (int i = 0; i < nc && !rc; i++)
        rc = load_run(&s, argv[optind + i], &cases[i], &runs[i], &err);
    const char *roots[2] = {s.config_roots[0], s.config_roots[1]};
    if (!rc && (o.base || !nc)) { /* logs only: the shape's cluster's calibration */
        rc = pred_calib_load(runs[0].cluster, o.base, roots, 2, base, base_path, sizeof base_path, &err);
    } else if (!rc) {
        *base = cases[0].cal;
        snprintf(base_path, sizeof base_path, "%s", cases[0].calib_path);
    }
    if (!rc)
        rc = cal_anchor_fit(runs, n, base, out, &rep, &err);
    if (!rc)
        rc = cal_anchor_write(o.out, base_path, out, &rep, runs, n, &err);
    int status = rc ? cli_fail(&err, rc) : 0;
    if (!status && s.json) { /* the "anchor" object as written */
        jr r = {o.out, &err};
        json_t *root = NULL, *a = NULL;
        if (!(rc = jr_load_root(&r, NULL, &root)) && !(a = json_object_get(root, "anchor")))
            rc = sc_err_set(&err, SC_ERUNTIME, o.out, "$.anchor", "missing from the file just written");
        status = rc ? cli_fail(&err, rc) : cli_print_json(json_incref(a));
        json_decref(root);
    } else if (!status)
        print_fit(out, &rep, runs, n, base_path, o.out);
    if (!status)
        warn_unreproduced(out, &rep, runs, n);
    free(cases), free(runs), free(base), free(out);
    return status;
}
