/* calfit.c — `shardcast calibrate fit`: fit the cost model to a measurements file and write a
 * calibration with each parameter's uncertainty and the fit's residual. Not here: the fit
 * itself (calibrate/measure.c) or running the benchmarks (calibrate/bench). */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "../calibrate/anchor.h"
#include "../calibrate/fit.h"
#include "../model/calib_params.h"
#include "commands.h"
#include "common.h"

static const char HELP[] =
    "usage: shardcast calibrate fit MEASUREMENTS.json --cluster C -o CALIBRATION.json [--base CAL]\n\n"
    "Fits the collective cost model (bandwidth efficiency and hop latency per link tier, ring base\n"
    "latency) by GSL nonlinear least squares on relative error, the GEMM efficiency and overhead by\n"
    "linear least squares, the memory-bandwidth efficiency, and the interference factor\n"
    "overlap_slowdown (median over GEMMs timed alone and beside NCCL collectives; device copies only\n"
    "when no NCCL entries exist), to what shardcast-bench measured on cluster C. Prints each\n"
    "parameter with its standard error and the residual. A parameter the measurements cannot\n"
    "determine (e.g. the network on one node) is refused, unless --base names a calibration to take\n"
    "it from (the output says which values came from there); without interference entries\n"
    "overlap_slowdown is kept from --base (or the defaults).\n\n"
    "  --cluster NAME|FILE    the cluster the measurements were taken on (line rates, peak)\n"
    "  --base NAME|FILE       calibration for the parameters not measured (\"defaults\": built-in)\n"
    "  -o, --out FILE         calibration JSON to write (atomically)\n"
    "  --anchor-steps         after the kernels and collectives, anchor the stack on the harness's\n"
    "                         measured sharded steps (\"steps\") as 'calibrate anchor' does: a\n"
    "                         compute-kernel efficiency factor on the fitted kernels, then the network's\n"
    "                         when the steps span nodes (at most one parameter per step, sd from the\n"
    "                         residuals); the file then carries an \"anchor\" object with the steps and\n"
    "                         their residuals. Not the default: the factor also scales the GEMMs that\n"
    "                         'validate' checks against their own measurements\n";

typedef struct opts {
    const char *out, *base;
    int anchor_steps;
} opts;

static int own(int opt, const char *arg, void *ctx)
{
    opts *o = ctx;
    if (opt == 'o')
        o->out = arg;
    else if (opt == 2000)
        o->base = arg;
    else if (opt == 2001)
        o->anchor_steps = 1;
    return 0;
}

/* One reported parameter (a row of model/calib_params.h): its value and standard error in the
 * table's unit, "(held at bound)" when the fit held it there, "(kept)" when it came from the base. */
static void param_row(const calib_param_def *d, const cost_calib *out, const cal_fit_report *rep)
{
    const cost_param p = *calib_param_at((cost_calib *)out, d);
    const double sc = d->file_per_si;
    if (d->from == CALIB_FROM_MEMBW && rep->membw_points == 1) /* one copy size (the largest): no spread, not kept */
        printf("  %-34s %12.4g   %-10s %s%s\n", d->label, p.v * sc, "(1 size)", d->unit,
               " (the largest copies; smaller ones may run from cache)");
    else if (p.sd > 0 || (d->from == CALIB_FROM_INTERF && rep->interf_points)) /* a median: its sd even if 0 */
        printf("  %-34s %12.4g ± %-10.3g %s\n", d->label, p.v * sc, p.sd * sc, d->unit);
    else
        printf("  %-34s %12.4g   %-10s %s\n", d->label, p.v * sc, cal_fit_held(rep, d) ? "(held at bound)" : "(kept)",
               d->unit);
    const char *by = calib_param_off_by(out, d);
    if (by)
        printf("  %-34s (inactive: the base's %s is in force, kept as it was)\n", "", by);
}

/* NCCL's constants, after the collectives' rows (those are the plain model's, kept in the file too). */
static void nccl_rows(const cost_calib *out, const cal_fit_report *rep)
{
    static const char *const nn[5] = {"NCCL intra-node step (Simple)", "NCCL network step (Simple)",
                                      "NCCL ring base (Simple)", "NCCL network floor", "NCCL tree bandwidth"};
    const double nv[5] = {out->nccl.intra_hop_s[NCCL_SIMPLE], out->nccl.net_hop_s[NCCL_SIMPLE],
                          out->nccl.base_lat_s[NCCL_RING][NCCL_SIMPLE], out->nccl.net_floor_s, out->nccl.tree_bw};
    for (int j = 0; j < 5; j++) {
        double sc = j == 4 ? 1 : 1e6;
        printf("  %-34s %12.4g ± %-10.3g %s%s\n", nn[j], nv[j] * sc, rep->nccl_sd[j] * sc, j == 4 ? "" : "us",
               rep->nccl_fitted[j] ? "" : " (kept from the base)");
    }
}

/* The parameters the fit determines, in their report places (model/calib_params.h): of the link
 * tiers the network and the one the intra-node collectives used; with an "nccl" base NCCL's
 * constants follow the collectives' rows. */
static void param_rows(const cost_calib *out, const cal_fit_report *rep)
{
    int n, last = 0, nccl_due = out->nccl.on;
    const calib_param_def *d = calib_params(&n);
    for (int i = 0; i < n; i++)
        last = d[i].report > last ? d[i].report : last;
    for (int place = 1; place <= last; place++)
        for (int i = 0; i < n; i++) {
            if (d[i].report != place || (d[i].tier >= 0 && d[i].tier != TIER_NET && d[i].tier != rep->intra_tier))
                continue;
            if (nccl_due && d[i].from != CALIB_FROM_COLL) {
                nccl_rows(out, rep);
                nccl_due = 0;
            }
            param_row(&d[i], out, rep);
        }
    if (nccl_due)
        nccl_rows(out, rep);
}

/* The harness's measured steps anchor the stack of the fitted calibration (calibrate/anchor.h):
 * the file at path is rewritten with an "anchor" object. Nothing to do without usable steps. */
static int anchor_steps(const cal_meas *m, const spec_cluster *c, const cost_calib *fitted, const char *path,
                        sc_err *err)
{
    cal_anchor_run *runs = calloc(CAL_ANCHOR_MAX_RUNS, sizeof *runs);
    cal_anchor_step_ctx *ctx = calloc(CAL_ANCHOR_MAX_RUNS, sizeof *ctx);
    cost_calib *k = malloc(sizeof *k);
    cal_anchor_report rep;
    int n = 0, rc = !runs || !ctx || !k ? sc_err_set(err, SC_ERUNTIME, "calibrate fit", "", "out of memory") : 0;
    if (!rc)
        cal_anchor_steps(m, c, runs, ctx, CAL_ANCHOR_MAX_RUNS, &n);
    if (!rc && m->n_step && !n)
        printf("steps: none usable (ranks per node %d, the cluster's GPUs per node %d): the stack is not anchored\n",
               m->ranks_per_node, c->gpus_per_node);
    if (!rc && n && !(rc = cal_anchor_fit(runs, n, fitted, k, &rep, err)) &&
        !(rc = cal_anchor_write(path, path, k, &rep, runs, n, err))) {
        static const char *const unit[COST_N_STACK] = {"x the fitted kernels", "us", "of line rate"};
        static const double per_si[COST_N_STACK] = {1, 1e6, 1};
        printf("stack anchored on %d measured step%s (RMS relative residual %.3f; sd from %s):\n", n, n == 1 ? "" : "s",
               rep.rms, rep.sd_from);
        for (int p = 0; p < COST_N_STACK; p++)
            if (k->anchor.status[p] != COST_ANCHOR_BASE)
                printf("  %-48s %10.4g %s%-9.3g %s (%s)\n", cal_anchor_label(p), k->anchor.p[p].v * per_si[p],
                       k->anchor.p[p].sd > 0 ? "± " : "  ", k->anchor.p[p].sd * per_si[p], unit[p],
                       cost_anchor_status_str(k->anchor.status[p]));
        for (int i = 0; i < n; i++)
            printf("  %-44s measured %.4f s, kernels alone %.4f s, anchored %.4f s\n", runs[i].name, runs[i].step_s,
                   rep.base_step_s[i], rep.pred_step_s[i]);
    }
    free(runs), free(ctx), free(k);
    return rc;
}

int cmd_calibrate_fit(int argc, char **argv)
{
    static const struct option extra[] = {{"out", required_argument, 0, 'o'}, {"base", required_argument, 0, 2000},
                                          {"anchor-steps", no_argument, 0, 2001}};
    cli_setup s;
    opts o = {0};
    cli_setup_init(&s, argv[0]);
    static const char *const TAKES[] = {"cluster", NULL}; /* of the shared options only --cluster: the rest would be accepted and ignored */
    s.accept = TAKES;
    int rc;
    if (cli_args(argc, argv, "calibrate fit", HELP, extra, 3, &s, own, &o, 1, "expected one measurements file", &rc))
        return rc;
    sc_err err;
    if (!o.out) {
        sc_err_set(&err, SC_EINPUT, "-o", "", "required: the calibration file to write");
        return cli_fail(&err, SC_EINPUT);
    }
    if ((rc = cli_setup_load(&s, NEED_CLUSTER, &err)))
        return cli_fail(&err, rc);
    cost_calib base, out;
    char base_path[4096] = "";
    if (o.base && !strcmp(o.base, "defaults")) {
        cal_fit_defaults(&s.cluster, &base);
        snprintf(base_path, sizeof base_path, "built-in defaults (%s)", base.source);
    } else if (o.base && !*o.base) {
        return cli_fail(&err, sc_err_set(&err, SC_EINPUT, "--base", "", "expected a name or a path, got nothing"));
    } else if (o.base && ((rc = cli_resolve(&s, "calibrations", o.base, base_path, sizeof base_path, &err)) ||
                          (rc = cost_calib_load(base_path, &base, &err)))) {
        return cli_fail(&err, rc);
    }
    cal_meas *m;
    if ((rc = cal_meas_load(argv[optind], &m, &err)))
        return cli_fail(&err, rc);
    /* CPU measurements fitted for a GPU cluster (or the reverse): the fitted efficiencies are of
     * the wrong machine's (issue 29 item 6), as validate warns too */
    int cpu_meas = !strcmp(m->backend, "cpu"), cpu_cluster = !strcmp(s.cluster.gpu.arch, "cpu");
    if (cpu_meas != cpu_cluster)
        fprintf(stderr,
                "shardcast calibrate fit: warning: %.150s was measured with the %s backend (%.60s) but cluster %.60s "
                "has %s %.60s: the fitted values describe the machine measured, not this cluster%s\n",
                m->path, m->backend, m->device, s.cluster.name, cpu_cluster ? "CPU" : "GPU", s.cluster.gpu.name,
                cpu_meas ? " (fit CPU measurements with --cluster emulated-cpu)" : "");
    int published = 0; /* published sweeps: fit the points of --cluster only */
    for (int i = 0; i < m->n_coll; i++)
        published |= m->coll[i].cluster[0] != 0;
    if (published && !cal_meas_keep_cluster(m, s.cluster.name)) {
        cal_meas_free(m);
        return cli_fail(&err, sc_err_set(&err, SC_EINPUT, argv[optind], "$.entries",
                                         "no published collective was measured on %s", s.cluster.name));
    }
    cal_fit_report rep;
    if ((rc = cal_fit(m, &s.cluster, o.base ? &base : NULL, o.base ? base_path : NULL, &out, &rep, &err)) ||
        (rc = cal_calib_write(o.out, &out, &rep, m, o.base ? base_path : NULL, &err))) {
        cal_meas_free(m);
        return cli_fail(&err, rc);
    }
    if (published)
        printf("fitted %s (%s: the %d points measured on %s) -> %s\n", m->path, m->device, m->n_coll,
               s.cluster.name, o.out);
    else
        printf("fitted %s (%s, %d ranks on %d node%s) for %s -> %s\n", m->path, m->device, m->ranks, m->nodes,
               m->nodes == 1 ? "" : "s", s.cluster.name, o.out);
    printf("collectives: %d points, RMS relative residual %.3f; GEMMs: %d points, residual %.3f; memory: %d; "
           "interference: %d\n",
           rep.coll_points, rep.coll_rms_rel, rep.gemm_points, rep.gemm_rms_rel, rep.membw_points, rep.interf_points);
    param_rows(&out, &rep);
    if (rep.gemm_isolated)
        printf("GEMMs: %d rows left out: timed as one isolated call under %.0f us, the host's launch inside the time "
               "(measure back to back: shardcast-bench since 2026-11-28)\n",
               rep.gemm_isolated, CAL_LAUNCH_BOUND_S * 1e6);
    if (rep.interf_points)
        printf("interference: median of %d entries with concurrent %s%s%s\n", rep.interf_points, rep.interf_kind,
               rep.interf_fallback ? " (no NCCL entries: device copies stood in for a collective)" : "",
               rep.interf_negative ? "; negative factors are noise" : "");
    if (rep.interf_points && rep.interf_median < 0)
        printf("interference: the median factor %.4g is negative (noise: traffic cannot speed a GEMM up): held at 0\n",
               rep.interf_median);
    if (rep.interf_dropped)
        printf("interference: %d entries left out: their traffic spanned less than %.0f%% of the GEMMs\n",
               rep.interf_dropped, CAL_MIN_COVERAGE * 100);
    if (rep.at_bound[0])
        printf("held at a physical bound (latencies at 0, efficiencies at 1, a network hop at the intra-node "
               "one; past it when fitted freely, the data barely determine them): %s\n",
               rep.at_bound);
    if (rep.undetermined[0])
        printf("not determined by these measurements, taken from %s: %s\n", base_path, rep.undetermined);
    rc = o.anchor_steps ? anchor_steps(m, &s.cluster, &out, o.out, &err) : 0;
    cal_meas_free(m);
    return rc ? cli_fail(&err, rc) : 0;
}
