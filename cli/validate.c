/* validate.c — `shardcast validate`: predict every measured collective, GEMM and sharded step
 * (steps with the simulator) from a calibration, print predicted vs measured with the error per
 * row and the mean absolute percentage error per kind, and fail past --tolerance.
 * Not here: the measurements (calibrate/bench) or the fit (calibrate/measure.c). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../calibrate/measure.h"
#include "../sim/exec.h"
#include "commands.h"
#include "eval.h"

static const char HELP[] =
    "usage: shardcast validate MEASUREMENTS.json --cluster C [--calibration CAL] [--tolerance 0.10]\n\n"
    "Predicts each measured collective (cost model), GEMM (cost model) and sharded training step\n"
    "(simulator, on the measured layer stack: 4 GEMMs per layer, parameters all-gathered before\n"
    "forward and backward, gradients reduce-scattered, no prefetch) and prints predicted vs\n"
    "measured with the relative error, then the mean absolute percentage error (MAPE) per kind.\n"
    "Exit status 1 when any kind's MAPE exceeds the tolerance.\n\n"
    "  --cluster NAME|FILE    the cluster the measurements were taken on\n"
    "  --calibration F|NAME   cost-model parameters (default: configs/calibrations/<cluster>.json)\n"
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

/* The workload of the harness's layer stack: qkv, proj, fc1, fc2 per layer. */
static void harness_wl(const cal_step_m *st, wl *w)
{
    memset(w, 0, sizeof *w);
    double h = st->hidden, f = st->ffn, T = (double)st->seq_len * st->micro_batch;
    w->micro_batch = st->micro_batch;
    w->elem_bytes = st->elem_bytes;
    w->model.seq_len = st->seq_len;
    w->n_layers = 1;
    wl_layer *L = &w->layer[0];
    L->kind = WL_BLOCK;
    snprintf(L->name, sizeof L->name, "block");
    L->count = st->layers;
    L->params = 3 * h * h + h * h + 2 * h * f;
    const double shapes[4][3] = {{T, 3 * h, h}, {T, h, h}, {T, f, h}, {T, h, f}};
    for (int i = 0; i < 4; i++) {
        wl_gemm *g = &L->gemm[L->n_gemm++];
        snprintf(g->name, sizeof g->name, "gemm%d", i);
        g->m = shapes[i][0];
        g->n = shapes[i][1];
        g->k = shapes[i][2];
        g->batch = 1;
        L->fwd_flops += 2 * g->m * g->n * g->k;
    }
    L->bwd_flops = 2 * L->fwd_flops;
    w->params = L->params * L->count;
    w->model_flops = 3 * L->fwd_flops * L->count;
    w->hw_flops = w->model_flops;
    w->tokens = T;
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

int cmd_validate(int argc, char **argv)
{
    static const struct option extra[] = {{"calibration", required_argument, 0, 2000},
                                          {"tolerance", required_argument, 0, 2001}};
    cli_setup s;
    opts o = {NULL, 0.10};
    cli_setup_init(&s, argv[0]);
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
    int show = !s.json;
    json_t *rows = json_array();
    acc a_coll = {0, 0}, a_gemm = {0, 0}, a_step = {0, 0};
    if (show)
        printf("validate %s (%s, %d ranks on %d nodes) against %s\n\n  %-14s %-44s %12s %12s %9s\n", m->path,
               m->device, m->ranks, m->nodes, cal.path[0] ? cal.path : "built-in defaults", "kind", "what",
               "measured s", "predicted s", "error");
    for (int i = 0; i < m->n_coll; i++) {
        const cal_coll_m *x = &m->coll[i];
        cost_group g;
        cal_meas_group(&s.cluster, x, &g);
        double t = cost_coll_best(&cal.cal, x->kind, x->bytes, 1, &g, NULL);
        char what[96];
        snprintf(what, sizeof what, "%s %s n=%d k=%d %.0f B", layout_coll_name(x->kind), layout_group_name(x->group),
                 x->n, x->k, x->bytes);
        add(&a_coll, rows, "collective", what, t, x->time_s, show);
    }
    for (int i = 0; i < m->n_gemm; i++) {
        const cal_gemm_m *x = &m->gemm[i];
        wl_gemm g = {"gemm", x->m, x->n, x->k, x->batch};
        char what[96];
        snprintf(what, sizeof what, "GEMM %.0fx%.0fx%.0f", x->m, x->n, x->k);
        add(&a_gemm, rows, "gemm", what, cost_gemm_time(&cal.cal, &s.cluster, &g, x->elem_bytes), x->time_s, show);
    }
    for (int i = 0; i < m->n_step; i++) {
        const cal_step_m *x = &m->step[i];
        if (m->ranks_per_node != s.cluster.gpus_per_node || m->ranks != m->nodes * m->ranks_per_node) {
            cal_meas_free(m);
            json_decref(rows);
            return cli_fail(&err, sc_err_set(&err, SC_EINPUT, argv[optind], "$.host",
                                             "expected %d ranks per node as on %s, got %d", s.cluster.gpus_per_node,
                                             s.cluster.name, m->ranks_per_node));
        }
        if ((rc = spec_layout_check(&x->layout, &s.cluster, m->nodes, &err))) {
            cal_meas_free(m);
            json_decref(rows);
            return cli_fail(&err, rc);
        }
        wl w;
        harness_wl(x, &w);
        spec_training tr;
        spec_training_defaults(&tr);
        tr.micro_batch = x->micro_batch;
        tr.grad_accum = x->grad_accum;
        tr.prefetch_layers = 0;
        tr.act_ckpt = 0;
        tr.precision = x->elem_bytes == 4 ? PREC_FP32 : PREC_BF16;
        lo_graph g;
        layout_build(&w, &tr, &x->layout, &s.cluster, m->nodes, &g);
        /* the harness times forward, backward and gradient sync, not an optimizer */
        int nb = 0;
        for (int b = 0; b < g.n_boundary; b++)
            if (!g.boundary[b].is_optimizer)
                g.boundary[nb++] = g.boundary[b];
        g.n_boundary = nb;
        an_timed t;
        an_time(&g, &w, &cal.cal, &s.cluster, &t);
        exec_opts eo = {0};
        exec_result er;
        if ((rc = exec_run(&g, &t, &cal.cal, &s.cluster, &eo, &er, &err))) {
            cal_meas_free(m);
            json_decref(rows);
            return cli_fail(&err, rc);
        }
        char what[96];
        snprintf(what, sizeof what, "step %s, %d layers, hidden %d", x->layout_str, x->layers, x->hidden);
        add(&a_step, rows, "step", what, er.step_s, x->step_s, show);
    }
    int fail = 0;
    json_t *mape = json_object();
    const struct {
        const char *name;
        acc *a;
    } kinds[] = {{"collective", &a_coll}, {"gemm", &a_gemm}, {"step", &a_step}};
    if (show)
        printf("\n");
    for (int k = 0; k < 3; k++) {
        if (!kinds[k].a->n)
            continue;
        double v = kinds[k].a->sum / kinds[k].a->n;
        int bad = v > o.tolerance;
        fail |= bad;
        json_object_set_new(mape, kinds[k].name, json_real(v));
        if (show)
            printf("MAPE %-10s %6.1f%% over %d rows%s\n", kinds[k].name, 100 * v, kinds[k].a->n,
                   bad ? "  (over the tolerance)" : "");
    }
    if (show)
        printf("%s: tolerance %.0f%%\n", fail ? "FAIL" : "ok", 100 * o.tolerance);
    cal_meas_free(m);
    if (s.json) {
        json_t *root = json_pack("{s:o, s:o, s:f, s:b}", "rows", rows, "mape", mape, "tolerance", o.tolerance, "ok", !fail);
        cli_print_json(root);
    } else {
        json_decref(rows);
        json_decref(mape);
    }
    return fail ? 1 : 0;
}
