/* anchor.c — the stack parameters fitted to measured steps with gsl_multifit_nlinear, their
 * standard errors from the residuals, and the anchored calibration written (see anchor.h).
 * Not here: reading the runs (cli/calanchor.c) or what the parameters mean to the model
 * (model/calib_anchor.c applies them). */
#include "anchor.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/atomic.h"
#include "../base/jsonrd.h"
#include "../model/analytic.h"
#include "../model/kernels.h"
#include "../model/workload.h"
#include "step.h"

/* Physical ranges: a compute factor from 5 % of the base's kernels to the one that puts the best
 * kernel at the datasheet peak; a network efficiency from 5 % to the line rate; a framework
 * overhead from none to 10 ms per hook (DeepSpeed's slowest per-module fetch measured in
 * hardware.md is in the tens of microseconds: 10 ms is a bound, not an estimate). */
#define LO_COMPUTE 0.05
#define LO_NET 0.05
#define HI_HOOK_S 10e-3

/* The order parameters are freed in as runs allow: the level (compute) first. */
static const int ORDER[COST_N_STACK] = {COST_STACK_COMPUTE, COST_STACK_NET, COST_STACK_HOOK};
static const char *const LABEL[COST_N_STACK] = {"compute-kernel efficiency (factor on the base's)",
                                                "framework overhead per hook", "network bandwidth efficiency"};

typedef struct actx {
    const cal_anchor_run *runs;
    int n;
    const cost_calib *base;
    int fw;
    double v[COST_N_STACK];   /* every parameter's value (SI; compute a factor)       */
    int free_idx[COST_N_STACK];
    int n_free;
    int cand[COST_N_STACK];   /* the parameters that may be freed, in ORDER            */
    int n_cand, next;         /* next: the first candidate not freed yet               */
} actx;

static void make_calib(const actx *a, const double *v, cost_calib *k)
{
    *k = *a->base;
    cost_anchor_scale_compute(k, v[COST_STACK_COMPUTE]);
    k->fw_hook_s[a->fw].v = v[COST_STACK_HOOK];
    k->bw_eff[TIER_NET].v = v[COST_STACK_NET];
}

double cal_anchor_predict(const cal_anchor_run *run, const cost_calib *k)
{
    if (run->step_fn)
        return run->step_fn(run->step_ctx, k);
    wl w;
    wl_build(run->model, run->training, &w);
    an_result r;
    an_predict(&w, run->training, run->layout, run->cluster, run->nodes, k, &r);
    return r.step_s;
}

/* What the least squares moves for parameter p: for the two efficiencies (compute factor,
 * network) their inverse, a time scale, since a step is about linear in 1 / efficiency (compute
 * time / factor + the rest); for the overhead the value. Fitted in the efficiencies themselves,
 * the two harness steps of an emulated two-node run (tests/fixtures/meas_emulated_2node.json,
 * 3-4x slower than its fitted kernels) ran the factor below its lower bound, where it was held
 * (0.05), then the network to 1: 1.00 s predicted for a step measured at 0.57 s. In the inverses
 * the same fit lands inside the bounds with residuals 0. */
static int inverse(int p) { return p == COST_STACK_COMPUTE || p == COST_STACK_NET; }
static double to_x(int p, double v) { return inverse(p) ? 1 / v : v; }
static double from_x(int p, double x) { return inverse(p) ? 1 / x : x; }

/* r_i = predicted / measured - 1 for the values in x (the free parameters, as to_x has them) */
static int resid(const gsl_vector *x, void *data, gsl_vector *out)
{
    const actx *a = data;
    double v[COST_N_STACK];
    memcpy(v, a->v, sizeof v);
    for (int j = 0; j < a->n_free && x; j++)
        v[a->free_idx[j]] = from_x(a->free_idx[j], gsl_vector_get(x, (size_t)j));
    cost_calib k;
    make_calib(a, v, &k);
    for (int i = 0; i < a->n; i++)
        gsl_vector_set(out, (size_t)i, cal_anchor_predict(&a->runs[i], &k) / a->runs[i].step_s - 1);
    return GSL_SUCCESS;
}

/* One trust-region fit of the free parameters from their values in a->v; the solution into
 * a->v, the unscaled covariance (J^T J)^-1 diagonal into cov_diag, the column norms of J into
 * jnorm, the sum of squared residuals into *chisq. */
static int fit_once(actx *a, double *cov_diag, double *jnorm, double *chisq, sc_err *err)
{
    const size_t n = (size_t)a->n, p = (size_t)a->n_free;
    gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_workspace *w = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, n, p);
    gsl_vector *x = gsl_vector_alloc(p);
    gsl_matrix *cov = gsl_matrix_alloc(p, p);
    int rc = 0;
    if (!w || !x || !cov) {
        rc = sc_err_set(err, SC_ERUNTIME, "calibrate anchor", "", "out of memory");
        goto done;
    }
    for (size_t j = 0; j < p; j++)
        gsl_vector_set(x, j, to_x(a->free_idx[j], a->v[a->free_idx[j]]));
    gsl_multifit_nlinear_fdf fdf = {resid, NULL, NULL, n, p, a, 0, 0, 0};
    int info = 0, gs = gsl_multifit_nlinear_init(x, &fdf, w);
    if (!gs)
        gs = gsl_multifit_nlinear_driver(200, 1e-10, 1e-10, 1e-10, NULL, NULL, &info, w);
    if (gs && gs != GSL_EMAXITER) {
        rc = sc_err_set(err, SC_EINPUT, "calibrate anchor", "", "the fit of the stack parameters failed: %s",
                        gsl_strerror(gs));
        goto done;
    }
    gsl_matrix *J = gsl_multifit_nlinear_jac(w);
    if (gsl_multifit_nlinear_covar(J, 0.0, cov))
        gsl_matrix_set_zero(cov);
    double c = gsl_blas_dnrm2(gsl_multifit_nlinear_residual(w));
    *chisq = c * c;
    const gsl_vector *sol = gsl_multifit_nlinear_position(w);
    for (size_t j = 0; j < p; j++) {
        int q = a->free_idx[j];
        double xj = gsl_vector_get(sol, j);
        /* back to the parameter: |dv/dx| = v^2 for an inverse (first order), 1 otherwise */
        double dvdx = inverse(q) ? 1 / (xj * xj) : 1;
        a->v[q] = from_x(q, xj);
        cov_diag[q] = gsl_matrix_get(cov, j, j) * dvdx * dvdx;
        gsl_vector_view col = gsl_matrix_column(J, j);
        jnorm[q] = gsl_blas_dnrm2(&col.vector) / dvdx; /* |dr/dv| */
    }
done:
    gsl_multifit_nlinear_free(w);
    gsl_vector_free(x);
    gsl_matrix_free(cov);
    return rc;
}

static void bounds(const cost_calib *base, int which, double *lo, double *hi)
{
    switch (which) {
    case COST_STACK_COMPUTE: *lo = LO_COMPUTE, *hi = cost_anchor_compute_max(base); break;
    case COST_STACK_NET: *lo = LO_NET, *hi = 1.0; break;
    default: *lo = 0, *hi = HI_HOOK_S; break;
    }
}

/* Drop free parameter j from the fit (it keeps its value in a->v). A parameter the data cannot
 * determine goes back to the base's value and the next candidate takes its place (replace 1); one
 * held at its physical bound has moved from the base, so it keeps its run's slot and nothing
 * replaces it (replace 0): at most one parameter per run moves, fitted or at a bound (a single run
 * 5 % faster than the base once pushed all three to their bounds and moved a 16-node forecast by
 * 19 %, most of it from the network that run hardly used). */
static void hold(actx *a, int j, int replace)
{
    for (int q = j; q + 1 < a->n_free; q++)
        a->free_idx[q] = a->free_idx[q + 1];
    a->n_free--;
    if (replace && a->next < a->n_cand)
        a->free_idx[a->n_free++] = a->cand[a->next++];
}

/* The fraction of the GPU's dense peak that run r's measured step implies for its model FLOPs
 * alone (no recompute, no communication): the analytical model's MFU at its predicted step
 * scaled to the measured one (the FLOPs of a step do not depend on the calibration). The peak is
 * the cluster's dense BF16/FP16 one (gpu.peak_flops), FP8's for an FP8 run (model/kernels.h:
 * kern_peak, the datasheet ratio where the file gives none). 0 for a harness step (step_fn). */
double cal_anchor_implied_mfu(const cal_anchor_run *r, const cost_calib *k, double *peak_flops)
{
    *peak_flops = 0;
    if (r->step_fn || !r->model)
        return 0;
    wl w;
    wl_build(r->model, r->training, &w);
    an_result res;
    an_predict(&w, r->training, r->layout, r->cluster, r->nodes, k, &res);
    double model_flops_s = res.mfu * r->cluster->gpu.peak_flops; /* per GPU, at the predicted step */
    double peak = r->cluster->gpu.peak_flops;
    if (r->training->precision == PREC_FP8) /* kern_peak has the sustained clock in: the datasheet's */
        peak = kern_peak(r->cluster, KD_FP8) / (r->cluster->gpu.clock_ratio > 0 ? r->cluster->gpu.clock_ratio : 1);
    *peak_flops = peak;
    return peak > 0 && r->step_s > 0 ? model_flops_s * res.step_s / r->step_s / peak : 0;
}

/* Validate the runs: count, one cluster, one framework, measured steps > 0. */
static int check_runs(const cal_anchor_run *runs, int n, sc_err *err)
{
    if (n < 1 || n > CAL_ANCHOR_MAX_RUNS)
        return sc_err_set(err, SC_EINPUT, "calibrate anchor", "", "expected 1 to %d runs, got %d", CAL_ANCHOR_MAX_RUNS,
                          n);
    for (int i = 0; i < n; i++) {
        if (!(runs[i].step_s > 0) || !isfinite(runs[i].step_s))
            return sc_err_set(err, SC_EINPUT, runs[i].file, "", "expected a measured step time > 0, got %g",
                              runs[i].step_s);
        if (strcmp(runs[i].cluster->name, runs[0].cluster->name))
            return sc_err_set(err, SC_EINPUT, runs[i].file, "cluster",
                              "expected the cluster of the first run (\"%s\"), got \"%s\": anchor each cluster "
                              "on its own runs",
                              runs[0].cluster->name, runs[i].cluster->name);
        if (runs[i].training->framework != runs[0].training->framework)
            return sc_err_set(err, SC_EINPUT, runs[i].file, "framework",
                              "expected the framework of the first run (%s), got %s: one stack per anchor",
                              spec_framework_str(runs[0].training->framework),
                              spec_framework_str(runs[i].training->framework));
    }
    return 0;
}

/* The fit with the free parameters in a: refit until every free value is inside its range and
 * determined; st receives each parameter's status, sd its standard error. */
static int fit_loop(actx *a, cal_anchor_report *rep, int *st, double *sd, sc_err *err)
{
    double cov[COST_N_STACK] = {0}, jn[COST_N_STACK] = {0}, chisq = 0;
    double v0[COST_N_STACK]; /* the base's values, where a held parameter goes back to */
    memcpy(v0, a->v, sizeof v0);
    for (;;) {
        if (!a->n_free)
            break;
        int rc = fit_once(a, cov, jn, &chisq, err);
        if (rc)
            return rc;
        int again = 0;
        for (int j = 0; j < a->n_free && !again; j++) {
            int p = a->free_idx[j];
            double lo, hi;
            bounds(a->base, p, &lo, &hi);
            /* a parameter no run depends on (a single-node job cannot tell the network): its
             * Jacobian column vanishes beside its value */
            double scale = p == COST_STACK_HOOK ? 1e-6 : fabs(v0[p]);
            /* an efficiency is fitted as its inverse, a time scale: one that went through 0 asked
             * for less time than any efficiency gives, so it is past the upper bound, not the
             * lower (held at the lower, an emulated 2-node anchor predicted its steps 2.6-3.8x
             * too slow: docs/CALIBRATE.md) */
            int past_hi = a->v[p] > hi || (inverse(p) && a->v[p] <= 0); /* NaN: not past, undetermined */
            if (past_hi || a->v[p] < lo) { /* ran past its range (a flat Jacobian out there too) */
                st[p] = COST_ANCHOR_BOUND, a->v[p] = past_hi ? hi : lo;
                hold(a, j, 0), again = 1;
            } else if (!(jn[p] * scale > 1e-6) || !isfinite(a->v[p])) {
                st[p] = COST_ANCHOR_UNDETERMINED, a->v[p] = v0[p];
                hold(a, j, 1), again = 1;
            }
        }
        if (!again)
            break;
    }
    rep->n_free = a->n_free;
    rep->dof = a->n - a->n_free;
    if (!a->n_free) { /* nothing left to fit: the residuals of the held values */
        gsl_vector *r = gsl_vector_alloc((size_t)a->n);
        if (!r)
            return sc_err_set(err, SC_ERUNTIME, "calibrate anchor", "", "out of memory");
        resid(NULL, a, r);
        double c = gsl_blas_dnrm2(r);
        chisq = c * c;
        gsl_vector_free(r);
    }
    rep->rms = sqrt(chisq / a->n);
    /* the standard errors: covariance (J^T J)^-1 scaled by the residual variance chi^2 / dof;
     * with no residual degrees of freedom (as many runs as parameters) by the runs' measured
     * spread where every run has one; else none can be given */
    double spread2 = 0;
    int have_spread = 1;
    for (int i = 0; i < a->n; i++) {
        have_spread &= a->runs[i].spread_rel > 0;
        spread2 += a->runs[i].spread_rel * a->runs[i].spread_rel / a->n;
    }
    if (rep->dof > 0) {
        rep->s_rel = sqrt(chisq / rep->dof);
        snprintf(rep->sd_from, sizeof rep->sd_from, "residuals: sqrt(chi^2 / %d dof) = %.4f", rep->dof, rep->s_rel);
    } else if (have_spread && a->n_free) {
        rep->s_rel = sqrt(spread2);
        snprintf(rep->sd_from, sizeof rep->sd_from, "no dof left: the runs' measured spread, RMS %.4f", rep->s_rel);
    } else {
        rep->s_rel = 0;
        snprintf(rep->sd_from, sizeof rep->sd_from,
                 a->n_free ? "none: as many runs as parameters and no measured spread" : "none: nothing fitted");
    }
    for (int j = 0; j < a->n_free; j++) {
        int p = a->free_idx[j];
        double var = cov[p] * rep->s_rel * rep->s_rel;
        sd[p] = var > 0 && isfinite(var) ? sqrt(var) : 0;
        st[p] = COST_ANCHOR_FITTED;
        /* an interval not narrower than the value itself: the runs do not determine it (held
         * at the base's value; the others keep their fit) */
        if (sd[p] > 0 && sd[p] >= fabs(a->v[p])) {
            st[p] = COST_ANCHOR_UNDETERMINED, a->v[p] = v0[p], sd[p] = 0;
            rep->n_free--;
        }
    }
    return 0;
}

int cal_anchor_fit(const cal_anchor_run *runs, int n, const cost_calib *base, cost_calib *out, cal_anchor_report *rep,
                   sc_err *err)
{
    memset(rep, 0, sizeof *rep);
    int rc = check_runs(runs, n, err);
    if (rc)
        return rc;
    if (base->anchor.on)
        return sc_err_set(err, SC_EINPUT, "--calibration", "",
                          "expected a calibration that is not anchored already (its anchor's runs would count "
                          "twice): anchor on its base");
    for (int i = 0; i < n; i++) { /* an impossible measurement is refused, not fitted */
        double peak, mfu = cal_anchor_implied_mfu(&runs[i], base, &peak);
        if (mfu > 1)
            return sc_err_set(err, SC_EINPUT, runs[i].file, "measured",
                              "run %s: a measured step of %.4g s implies %.3g of the GPU's dense peak (%.4g TFLOP/s) "
                              "for the model's FLOPs alone; at most 1 is possible (check the step time or rate, the GPU "
                              "count and the job's shape)",
                              runs[i].name, runs[i].step_s, mfu, peak / 1e12);
    }
    actx a;
    memset(&a, 0, sizeof a);
    a.runs = runs, a.n = n, a.base = base, a.fw = (int)runs[0].training->framework;
    a.v[COST_STACK_COMPUTE] = 1;
    a.v[COST_STACK_HOOK] = base->fw_hook_s[a.fw].v;
    a.v[COST_STACK_NET] = base->bw_eff[TIER_NET].v;
    int multi_node = 0;
    for (int i = 0; i < n; i++)
        multi_node |= runs[i].nodes > 1;
    /* at most one parameter per run, in ORDER; the network only when a run crosses nodes, the
     * overhead only for a named framework (the ideal schedule has none) */
    for (int q = 0; q < COST_N_STACK; q++) {
        int p = ORDER[q];
        if ((p == COST_STACK_NET && !multi_node) || (p == COST_STACK_HOOK && a.fw == FW_IDEAL))
            continue;
        a.cand[a.n_cand++] = p;
    }
    while (a.next < a.n_cand && a.n_free < n)
        a.free_idx[a.n_free++] = a.cand[a.next++];
    int st[COST_N_STACK] = {0};
    double sd[COST_N_STACK] = {0};
    rep->n_runs = n;
    for (int i = 0; i < n; i++)
        rep->base_step_s[i] = cal_anchor_predict(&runs[i], base);
    if ((rc = fit_loop(&a, rep, st, sd, err)))
        return rc;
    make_calib(&a, a.v, out);
    cost_anchor *an = &out->anchor;
    memset(an, 0, sizeof *an);
    an->on = 1;
    snprintf(an->cluster, sizeof an->cluster, "%s", runs[0].cluster->name);
    an->framework = a.fw;
    for (int p = 0; p < COST_N_STACK; p++) {
        an->p[p] = (cost_param){a.v[p], sd[p]};
        an->status[p] = st[p];
    }
    out->fw_hook_s[a.fw].sd = sd[COST_STACK_HOOK];
    out->bw_eff[TIER_NET].sd = sd[COST_STACK_NET];
    for (int i = 0; i < n; i++) {
        rep->pred_step_s[i] = cal_anchor_predict(&runs[i], out);
        rep->resid[i] = rep->pred_step_s[i] / runs[i].step_s - 1;
    }
    return 0;
}

int cal_anchor_unreproduced(const cal_anchor_report *rep, const cal_anchor_run *runs, int n, double *allowed)
{
    int worst = -1;
    double excess = 0;
    for (int i = 0; i < n; i++) {
        /* the fit's residual scale only where a parameter was fitted with dof left: nothing
         * fitted, s_rel is the unexplained residual itself */
        double fit_scale = rep->n_free > 0 && rep->dof > 0 ? rep->s_rel : 0;
        double a = runs[i].spread_rel > 0 ? 2 * runs[i].spread_rel : fit_scale > 0 ? 2 * fit_scale : 1e-6;
        double over = isfinite(rep->resid[i]) ? fabs(rep->resid[i]) - a : INFINITY; /* NaN: not reproduced */
        if (over > excess || (worst < 0 && over == INFINITY))
            worst = i, excess = over, *allowed = a;
    }
    return worst;
}

const char *cal_anchor_label(int which) { return which >= 0 && which < COST_N_STACK ? LABEL[which] : "?"; }

/* ---- writing ---------------------------------------------------------------------------- */

static json_t *param_json(int p, const cost_calib *k, const char *src)
{
    static const double per_si[COST_N_STACK] = {1, 1e6, 1};
    const cost_anchor *an = &k->anchor;
    return json_pack("{s:f, s:f, s:s, s:s}", "value", an->p[p].v * per_si[p], "sd", an->p[p].sd * per_si[p],
                     "status", cost_anchor_status_str(an->status[p]), "source", src);
}

static json_t *runs_json(const cal_anchor_report *rep, const cal_anchor_run *runs, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n && a; i++) {
        char lay[96];
        spec_layout_str(runs[i].layout, lay, sizeof lay);
        const char *model = runs[i].model ? runs[i].model->name : "the harness's step (calibrate/step.h)";
        json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:f, s:f, s:f, s:f, s:f}", "name", runs[i].name, "file",
                              runs[i].file, "model", model, "layout", lay, "nodes", runs[i].nodes, "gpus",
                              runs[i].nodes * runs[i].cluster->gpus_per_node, "measured_step_s", runs[i].step_s,
                              "spread_rel", runs[i].spread_rel, "base_step_s", rep->base_step_s[i],
                              "predicted_step_s", rep->pred_step_s[i], "residual", rep->resid[i]);
        if (!o || json_array_append_new(a, o)) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *anchor_json(const char *base_path, const cost_calib *k, const cal_anchor_report *rep,
                           const cal_anchor_run *runs, int n)
{
    char fitted[256], kept[160];
    snprintf(fitted, sizeof fitted, "fitted by shardcast calibrate anchor to %d run%s, %d parameter%s; sd from %s", n,
             n == 1 ? "" : "s", rep->n_free, rep->n_free == 1 ? "" : "s", rep->sd_from);
    snprintf(kept, sizeof kept, "the base calibration's (%.120s)", base_path);
    json_t *o = json_pack("{s:s, s:s, s:s}", "cluster", k->anchor.cluster, "framework",
                          spec_framework_str((spec_framework)k->anchor.framework), "base", base_path);
    for (int p = 0; p < COST_N_STACK && o; p++) {
        int f = k->anchor.status[p] == COST_ANCHOR_FITTED || k->anchor.status[p] == COST_ANCHOR_BOUND;
        if (json_object_set_new(o, cost_anchor_key(p), param_json(p, k, f ? fitted : kept))) {
            json_decref(o);
            return NULL;
        }
    }
    json_t *r = runs_json(rep, runs, n);
    if (!o || !r || json_object_set_new(o, "runs", r) ||
        json_object_set_new(o, "rms_residual", json_real(rep->rms)) ||
        json_object_set_new(o, "dof", json_integer(rep->dof))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

int cal_anchor_write(const char *path, const char *base_path, const cost_calib *k, const cal_anchor_report *rep,
                     const cal_anchor_run *runs, int n, sc_err *err)
{
    if (!base_path || !base_path[0])
        return sc_err_set(err, SC_EINPUT, "--calibration", "",
                          "expected a calibration file to anchor on; the built-in defaults of %s have none (name one "
                          "of configs/calibrations, or a fitted one)",
                          runs[0].cluster->name);
    jr r = {base_path, err}; /* the checked reader: capped, no FIFO hang, duplicate keys refused */
    json_t *root;
    int rd = jr_load_root(&r, NULL, &root);
    if (rd)
        return rd;
    char name[SPEC_NAME_MAX], src[SPEC_SOURCE_MAX];
    snprintf(name, sizeof name, "%.40s (anchored)", k->name);
    snprintf(src, sizeof src,
             "anchored by shardcast calibrate anchor on %d measured run%s (%.40s, first: %.100s); other values: %.200s", n,
             n == 1 ? "" : "s", runs[0].cluster->name, runs[0].file, k->source);
    json_t *an = anchor_json(base_path, k, rep, runs, n);
    int oom = !an || json_object_set_new(root, "name", json_string(name)) ||
              json_object_set_new(root, "source", json_string(src)) || json_object_set_new(root, "anchor", an);
    char *txt = oom ? NULL : json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(8) | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (!txt)
        return sc_err_set(err, SC_ERUNTIME, path, "", "out of memory (or a value that is not a number)");
    int rc = at_write(path, txt, strlen(txt), err);
    free(txt);
    return rc;
}

/* ---- the harness's steps ------------------------------------------------------------------ */

/* One measured step predicted with k: its op graph (calibrate/step.h) timed by the analytical
 * model (validate predicts it with the simulator; the fit needs a smooth, fast prediction). */
static double harness_step(const void *ctx, const cost_calib *k)
{
    const cal_anchor_step_ctx *x = ctx;
    wl w;
    lo_graph g;
    sc_err err;
    if (cal_step_graph(&x->step->shape, x->step->elem_bytes, &x->step->layout, x->c, x->nodes, "steps", &w, &g, &err))
        return NAN;
    an_timed t;
    an_time(&g, &w, k, x->c, &t);
    an_result r;
    an_run(&t, &r);
    return r.step_s;
}

void cal_anchor_steps(const cal_meas *m, const spec_cluster *c, cal_anchor_run *runs, cal_anchor_step_ctx *ctx,
                      int max, int *n)
{
    static const spec_training ideal; /* the harness's step has no framework's schedule */
    *n = 0;
    if (m->ranks_per_node != c->gpus_per_node || m->ranks != m->nodes * m->ranks_per_node)
        return;
    for (int i = 0; i < m->n_step && *n < max; i++) {
        const cal_step_m *x = &m->step[i];
        sc_err err;
        if (spec_layout_check(&x->layout, c, m->nodes, &err))
            continue;
        ctx[*n] = (cal_anchor_step_ctx){x, c, m->nodes};
        cal_anchor_run *r = &runs[*n];
        memset(r, 0, sizeof *r);
        snprintf(r->name, sizeof r->name, "step %.40s, %d layers, hidden %d", x->layout_str, x->shape.layers,
                 x->shape.hidden);
        snprintf(r->file, sizeof r->file, "%.1000s", m->path);
        r->cluster = c, r->training = &ideal, r->layout = &x->layout, r->nodes = m->nodes;
        r->step_s = x->step_s;
        r->step_fn = harness_step, r->step_ctx = &ctx[*n];
        (*n)++;
    }
}
