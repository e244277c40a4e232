/* validate.c — `shardcast validate`: predict every measured collective, GEMM and sharded step
 * (steps with the simulator) from a calibration, print predicted vs measured with the error per
 * row and the mean absolute percentage error per kind, and fail past --tolerance.
 * Not here: the measurements (calibrate/bench), the fit (calibrate/fit.c) or the step the harness
 * runs (calibrate/step.h, which builds the workload and op graph predicted here). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../calibrate/measure.h"
#include "../calibrate/step.h"
#include "../predict/engine.h"
#include "commands.h"
#include "eval.h"

static const char HELP[] =
    "usage: shardcast validate MEASUREMENTS.json --cluster C [--calibration CAL] [--tolerance 0.10]\n\n"
    "MEASUREMENTS is the harness's file (shardcast-measurements/1) or published nccl-tests sweeps\n"
    "(published-collectives/1, e.g. ../shared/reference/collectives/): then the points measured on\n"
    "--cluster are predicted, each with NCCL's algorithm and protocol as the model picks them, and\n"
    "the error is broken down by collective, size decade and node count with its signed bias.\n\n"
    "Predicts each measured collective (cost model), GEMM (cost model) and sharded training step\n"
    "(simulator, on the measured layer stack: 4 GEMMs per layer, parameters all-gathered before\n"
    "forward and backward, gradients reduce-scattered, no prefetch) and prints predicted vs\n"
    "measured with the relative error, then the mean absolute percentage error (MAPE) per kind.\n"
    "A GPU GEMM timed as one isolated call (files without \"timing\": \"back_to_back\", before\n"
    "2026-11-28) under 100 us is mostly the host's launch: shown, marked, not scored.\n"
    "Exit status 1 when any kind's MAPE exceeds the tolerance.\n\n"
    "  --cluster NAME|FILE    the cluster the measurements were taken on\n"
    "  --calibration F|NAME   cost-model parameters (default: configs/calibrations/<cluster>.json;\n"
    "                         defaults: the built-in values, no file)\n"
    "  --tolerance F          largest acceptable MAPE per kind (default 0.10)\n"
    "  --json                 machine-readable output\n";

typedef struct opts {
    const char *calibration;
    double tolerance;
} opts;

static int own(int opt, const char *arg, void *ctx)
{
    opts *o = ctx;
    sc_err err;
    char *end;
    if (opt == 2000)
        o->calibration = arg;
    else if (opt == 2001) {
        o->tolerance = strtod(arg, &end);
        if (end == arg || *end || !(o->tolerance >= 1e-6 && o->tolerance <= 1e3))
            return cli_fail(&err, sc_err_set(&err, SC_EINPUT, "--tolerance", "", "expected a fraction from 1e-6 to 1000, got \"%s\"", arg));
    }
    return 0;
}

typedef struct acc {
    double sum;
    int n;
} acc;

static void add(acc *a, json_t *rows, const char *kind, const char *what, double pred, double meas, int show)
{
    double e = (pred - meas) / meas;
    a->sum += fabs(e);
    a->n++;
    if (show)
        printf("  %-14s %-44s %12.4g %12.4g %+8.1f%%\n", kind, what, meas, pred, 100 * e);
    json_array_append_new(rows, json_pack("{s:s, s:s, s:f, s:f, s:f}", "kind", kind, "what", what, "measured",
                                          meas, "predicted", pred, "error", e));
}

/* Collective errors broken down by collective, size decade and node count. */
#define BD_DECADES 12 /* 1 B .. 1e11 B */
#define BD_NODES 16   /* 1, 2, 4, ... 2^15 nodes */
typedef struct bd_cell {
    double abs, sgn;
    int n;
} bd_cell;
typedef struct breakdown {
    bd_cell kind[N_COLLS], decade[BD_DECADES], nodes[BD_NODES];
} breakdown;

static void bd_cell_add(bd_cell *c, double e)
{
    c->abs += fabs(e);
    c->sgn += e;
    c->n++;
}

static void bd_add(breakdown *b, const cal_coll_m *x, double e)
{
    int d = (int)floor(log10(x->bytes));
    d = d < 0 ? 0 : d >= BD_DECADES ? BD_DECADES - 1 : d;
    int k = 0;
    while ((2 << k) <= x->k && k < BD_NODES - 1)
        k++;
    bd_cell_add(&b->kind[x->kind], e);
    bd_cell_add(&b->decade[d], e);
    bd_cell_add(&b->nodes[k], e);
}

/* Print one breakdown table and return it as a JSON array; worst: the largest MAPE. */
static json_t *bd_table(const char *title, const bd_cell *c, int n, int what, int show, double *worst)
{
    json_t *a = json_array();
    if (show)
        printf("\n  %-16s %6s %8s %8s\n", title, "points", "MAPE", "bias");
    for (int i = 0; i < n; i++) {
        if (!c[i].n)
            continue;
        char label[32];
        if (what == 0)
            snprintf(label, sizeof label, "%s", layout_coll_name((cost_coll)i));
        else if (what == 1)
            snprintf(label, sizeof label, "1e%d-1e%d B", i, i + 1);
        else
            snprintf(label, sizeof label, "%d nodes", 1 << i);
        double mape = c[i].abs / c[i].n, bias = c[i].sgn / c[i].n;
        if (mape > *worst)
            *worst = mape;
        if (show)
            printf("  %-16s %6d %7.1f%% %+7.1f%%\n", label, c[i].n, 100 * mape, 100 * bias);
        json_array_append_new(a, json_pack("{s:s, s:i, s:f, s:f}", "group", label, "points", c[i].n, "mape", mape,
                                           "bias", bias));
    }
    return a;
}

/* What one validate run works on and adds up: the measurements, the cluster and calibration they
 * are predicted with, the rows, each kind's error sums and the collectives' breakdown. */
typedef struct vrun {
    cal_meas *m;
    const spec_cluster *cluster;
    const cost_calib *cal;
    const char *file; /* the measurements file as given, for errors */
    int show, published;
    json_t *rows;
    acc coll, gemm, step;
    int gemm_unscored; /* isolated launch-bound GEMM rows shown, not in the MAPE */
    breakdown bd;
} vrun;

/* Every measured collective predicted by the cost model with NCCL's pick, one row each. */
static void validate_colls(vrun *v)
{
    const cal_meas *m = v->m;
    for (int i = 0; i < m->n_coll; i++) {
        const cal_coll_m *x = &m->coll[i];
        cost_group g;
        cal_meas_group(v->cluster, x, &g);
        cost_algo algo;
        double t = cost_coll_pick(v->cal, x->kind, x->bytes, 1, &g, x->algo, &algo);
        char what[96], an[32];
        cost_algo_name(algo, an, sizeof an);
        snprintf(what, sizeof what, "%s %s n=%d k=%d %.0f B %s", layout_coll_name(x->kind),
                 v->published ? x->source : layout_group_name(x->group), x->n, x->k, x->bytes, an);
        add(&v->coll, v->rows, "collective", what, t, x->time_s, v->show);
        json_t *row = json_array_get(v->rows, json_array_size(v->rows) - 1);
        char *slash = strchr(an, '/');
        if (slash)
            *slash++ = 0;
        json_object_set_new(row, "n", json_integer(x->n));
        json_object_set_new(row, "k", json_integer(x->k));
        json_object_set_new(row, "m", json_integer(x->m));
        json_object_set_new(row, "bytes", json_real(x->bytes));
        json_object_set_new(row, "collective", json_string(layout_coll_name(x->kind)));
        json_object_set_new(row, "algorithm", json_string(an));
        json_object_set_new(row, "protocol", json_string(slash ? slash : "Simple"));
        if (v->published)
            json_object_set_new(row, "source", json_string(x->source));
        bd_add(&v->bd, x, (t - x->time_s) / x->time_s);
    }
}

/* Every measured GEMM predicted by the cost model, one row each; a launch-bound row (an isolated
 * call, calibrate/measure.h cal_gemm_launch_bound) is shown with its error but not scored. */
static void validate_gemms(vrun *v)
{
    const cal_meas *m = v->m;
    for (int i = 0; i < m->n_gemm; i++) {
        const cal_gemm_m *x = &m->gemm[i];
        wl_gemm g = {.name = "gemm", .m = x->m, .n = x->n, .k = x->k, .batch = x->batch};
        char what[96];
        int lb = cal_gemm_launch_bound(m, x);
        snprintf(what, sizeof what, "GEMM %.0fx%.0fx%.0f%s", x->m, x->n, x->k, lb ? " (isolated: not scored)" : "");
        double t = cost_gemm_time(v->cal, v->cluster, &g, x->elem_bytes);
        if (!lb) {
            add(&v->gemm, v->rows, "gemm", what, t, x->time_s, v->show);
            continue;
        }
        acc unscored = {0, 0};
        add(&unscored, v->rows, "gemm", what, t, x->time_s, v->show);
        json_object_set_new(json_array_get(v->rows, json_array_size(v->rows) - 1), "scored", json_false());
        v->gemm_unscored++;
    }
}

/* Every measured sharded step predicted by the simulator on the harness's op graph, one row each. */
static int validate_steps(vrun *v, sc_err *err)
{
    const cal_meas *m = v->m;
    int rc;
    /* a step measured on part of one node (the lent GPU machines, a workstation's first GPU) is
     * the same cluster with that many GPUs in its node: the node's links per GPU are unchanged */
    spec_cluster part = *v->cluster;
    const spec_cluster *c = v->cluster;
    if (m->nodes == 1 && m->ranks == m->ranks_per_node && m->ranks_per_node >= 1 &&
        m->ranks_per_node < c->gpus_per_node) {
        part.nics_per_node = c->nics_per_node * m->ranks_per_node / c->gpus_per_node;
        if (part.nics_per_node < 1)
            part.nics_per_node = 1;
        part.gpus_per_node = m->ranks_per_node;
        c = &part;
    }
    for (int i = 0; i < m->n_step; i++) {
        const cal_step_m *x = &m->step[i];
        if (m->ranks_per_node != c->gpus_per_node || m->ranks != m->nodes * m->ranks_per_node)
            return sc_err_set(err, SC_EINPUT, v->file, "$.host",
                              "expected %d ranks per node as on %s (or one node's subset), got %d on %d nodes",
                              c->gpus_per_node, c->name, m->ranks_per_node, m->nodes);
        if ((rc = spec_layout_check(&x->layout, c, m->nodes, err)))
            return rc;
        wl w;
        lo_graph g;
        double sim_step_s = 0;
        if ((rc = cal_step_graph(&x->shape, x->elem_bytes, &x->layout, c, m->nodes, v->file, &w, &g, err)) ||
            (rc = pred_graph_sim_step(&g, &w, v->cal, c, &sim_step_s, err)))
            return rc;
        char what[128];
        snprintf(what, sizeof what, "step %s, %d layers, hidden %d%s", x->layout_str, x->shape.layers, x->shape.hidden,
                 c == &part ? " (part of a node)" : "");
        add(&v->step, v->rows, "step", what, sim_step_s, x->step_s, v->show);
    }
    return 0;
}

/* The collectives' error by collective, size decade and node count (NULL without collectives). */
static json_t *validate_breakdown(const vrun *v)
{
    if (!v->m->n_coll)
        return NULL;
    double worst_decade = 0, w2 = 0, w3 = 0;
    if (v->show)
        printf("\ncollective error by collective, size decade and node count (bias: mean signed error)");
    json_t *bdj = json_object();
    json_object_set_new(bdj, "collective", bd_table("collective", v->bd.kind, N_COLLS, 0, v->show, &w2));
    json_object_set_new(bdj, "size_decade", bd_table("size", v->bd.decade, BD_DECADES, 1, v->show, &worst_decade));
    json_object_set_new(bdj, "nodes", bd_table("nodes", v->bd.nodes, BD_NODES, 2, v->show, &w3));
    json_object_set_new(bdj, "worst_decade_mape", json_real(worst_decade));
    return bdj;
}

/* Each kind's MAPE into mape (printed unless --json); whether one is over the tolerance. */
static int validate_mape(vrun *v, double tolerance, json_t *mape)
{
    int fail = 0;
    const struct {
        const char *name;
        acc *a;
    } kinds[] = {{"collective", &v->coll}, {"gemm", &v->gemm}, {"step", &v->step}};
    if (v->show)
        printf("\n");
    for (int k = 0; k < 3; k++) {
        if (!kinds[k].a->n)
            continue;
        double x = kinds[k].a->sum / kinds[k].a->n;
        int bad = x > tolerance;
        fail |= bad;
        json_object_set_new(mape, kinds[k].name, json_real(x));
        if (v->show)
            printf("MAPE %-10s %6.1f%% over %d row%s%s\n", kinds[k].name, 100 * x, kinds[k].a->n,
                   kinds[k].a->n == 1 ? "" : "s", bad ? "  (over the tolerance)" : "");
    }
    if (v->show && v->gemm_unscored)
        printf("%d GEMM row%s not scored: timed as one isolated call under %.0f us, the host's launch inside the "
               "time (measure back to back: shardcast-bench since 2026-11-28)\n",
               v->gemm_unscored, v->gemm_unscored == 1 ? "" : "s", CAL_LAUNCH_BOUND_S * 1e6);
    json_object_set_new(mape, "gemm_unscored", json_integer(v->gemm_unscored));
    if (v->show)
        printf("%s: tolerance %.0f%%\n", fail ? "FAIL" : "ok", 100 * tolerance);
    return fail;
}

/* CPU measurements checked against a GPU cluster (or the reverse) cannot agree: the warning
 * into mismatch (empty when they can), said first. */
static void validate_mismatch(const cal_meas *m, const spec_cluster *c, char *mismatch, size_t n)
{
    int cpu_meas = !strcmp(m->backend, "cpu"), cpu_cluster = !strcmp(c->gpu.arch, "cpu");
    mismatch[0] = 0;
    if (cpu_meas != cpu_cluster)
        snprintf(mismatch, n,
                 "%.150s was measured with the %s backend (%.60s) but cluster %.60s has %s %.60s: its predictions "
                 "cannot match these measurements (use the cluster they were taken on%s)",
                 m->path, m->backend, m->device, c->name, cpu_cluster ? "CPU" : "GPU", c->gpu.name,
                 cpu_meas ? ", e.g. --cluster emulated-cpu" : "");
    if (mismatch[0])
        fprintf(stderr, "shardcast validate: warning: %s\n", mismatch);
}

/* The rows: published collectives only those of the cluster, then the table's header, then every
 * collective, GEMM and step predicted. */
static int validate_rows(vrun *v, const char *cal_path, sc_err *err)
{
    cal_meas *m = v->m;
    for (int i = 0; i < m->n_coll; i++)
        v->published |= m->coll[i].cluster[0] != 0;
    if (v->published && !cal_meas_keep_cluster(m, v->cluster->name))
        return sc_err_set(err, SC_EINPUT, v->file, "$.entries", "no published collective was measured on %s",
                          v->cluster->name);
    if (v->show && v->published)
        printf("validate %s (%s: the %d points measured on %s) against %s\n\n  %-14s %-44s %12s %12s %9s\n", m->path,
               m->device, m->n_coll, v->cluster->name, cal_path[0] ? cal_path : "built-in defaults", "kind", "what",
               "measured s", "predicted s", "error");
    else if (v->show)
        printf("validate %s (%s, %d rank%s on %d node%s) against %s\n\n  %-14s %-44s %12s %12s %9s\n", m->path,
               m->device, m->ranks, m->ranks == 1 ? "" : "s", m->nodes, m->nodes == 1 ? "" : "s", cal_path[0] ? cal_path : "built-in defaults", "kind", "what",
               "measured s", "predicted s", "error");
    validate_colls(v);
    validate_gemms(v);
    return validate_steps(v, err);
}

int cmd_validate(int argc, char **argv)
{
    static const struct option extra[] = {{"calibration", required_argument, 0, 2000},
                                          {"tolerance", required_argument, 0, 2001}};
    cli_setup s;
    opts o = {NULL, 0.10};
    cli_setup_init(&s, argv[0]);
    static const char *const TAKES[] = {"cluster", "json", NULL}; /* of the shared options only --cluster and --json: the rest would be accepted and ignored */
    s.accept = TAKES;
    int rc;
    if (cli_args(argc, argv, "validate", HELP, extra, 2, &s, own, &o, 1, "expected one measurements file", &rc))
        return rc;
    sc_err err;
    cli_calib cal;
    cal_meas *m;
    if ((rc = cli_setup_load(&s, NEED_CLUSTER, &err)) || (rc = cli_calib_load(&s, o.calibration, &cal, &err)) ||
        (rc = cal_meas_load(argv[optind], &m, &err)))
        return cli_fail(&err, rc);
    if ((rc = cal_meas_check(m, &s.cluster, &err))) {
        cal_meas_free(m);
        return cli_fail(&err, rc);
    }
    char mismatch[1024];
    validate_mismatch(m, &s.cluster, mismatch, sizeof mismatch);
    vrun v;
    memset(&v, 0, sizeof v);
    v.m = m;
    v.cluster = &s.cluster;
    v.cal = &cal.cal;
    v.file = argv[optind];
    v.show = !s.json;
    v.rows = json_array();
    if ((rc = validate_rows(&v, cal.path, &err))) {
        cal_meas_free(m);
        json_decref(v.rows);
        return cli_fail(&err, rc);
    }
    json_t *bdj = validate_breakdown(&v), *mape = json_object();
    int fail = validate_mape(&v, o.tolerance, mape);
    cal_meas_free(m);
    if (s.json) {
        json_t *root = json_pack("{s:o, s:o, s:f, s:b}", "rows", v.rows, "mape", mape, "tolerance", o.tolerance, "ok", !fail);
        if (mismatch[0])
            json_object_set_new(root, "warning", json_string(mismatch));
        if (bdj)
            json_object_set_new(root, "collective_breakdown", bdj);
        if (cli_print_json(root))
            return 1; /* the report did not reach stdout */
    } else {
        json_decref(v.rows);
        json_decref(mape);
        json_decref(bdj);
    }
    return fail ? 1 : 0;
}
