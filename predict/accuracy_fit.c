/* accuracy_fit.c — the framework hook costs fitted to validation/ leave-one-source-out
 * (accuracy_fit.h): the 1-D minimiser, the per-source folds with their before / after errors,
 * and the stored table (configs/fitted/framework-host.json) read, written and applied.
 * Not here: printing or the Markdown section (cli/accuracy_fit.c). */
#include "accuracy_fit.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_min.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../base/atomic.h"
#include "../base/jsonrd.h"
#include "accuracy_field.h"

/* Below this change of log(predicted) between the range's ends a case is not acted on. */
#define ACT_MIN 1e-4
/* Below this spread of the objective over the range (squared log error) it is flat. */
#define FLAT_MIN 1e-7
#define GRID 25

static const char *const RANGE_DS =
    "20-2000 us: the floor is the host cost of one forward pre-hook that issues one async all-gather, "
    "20.6-23.7 us over a hook-less loop on an H100 (bench/gpu-results/2026-11-27-h100-sxm/fetch_loop.json, "
    "variant async; a ZeRO-3 sub-module hook does at least that); the ceiling is about 20x the slowest "
    "per-fetch host path measured there (sync+norm, 107 us)";
static const char *const RANGE_1 =
    "1-2000 us: the floor is one Python module call, 0.9-1.0 us per sub-module in the hook-less loop of "
    "bench/gpu-results/2026-11-27-h100-sxm/fetch_loop.json; the ceiling is about 20x the slowest per-fetch "
    "host path measured there (sync+norm, 107 us)";

/* The fitted values with their former estimates (model/calib.c before the fit) and ranges. */
static const struct {
    spec_framework fw;
    acc_fit_key key;
    double estimate_us, lo_us, hi_us;
    const char *const *why;
} FITTED[] = {
    {FW_DEEPSPEED, ACC_FIT_HOOK, 40, 20, 2000, &RANGE_DS}, {FW_FSDP2, ACC_FIT_HOOK, 30, 1, 2000, &RANGE_1},
    {FW_MEGATRON, ACC_FIT_HOOK, 5, 1, 2000, &RANGE_1},     {FW_DEEPSPEED, ACC_FIT_COLL, 20, 1, 2000, &RANGE_1},
    {FW_FSDP, ACC_FIT_COLL, 10, 1, 2000, &RANGE_1},        {FW_FSDP2, ACC_FIT_COLL, 10, 1, 2000, &RANGE_1},
    {FW_MEGATRON, ACC_FIT_COLL, 5, 1, 2000, &RANGE_1},
};
#define N_FITTED ((int)(sizeof FITTED / sizeof FITTED[0]))

int acc_fit_n_targets(void) { return N_FITTED; }

void acc_fit_target(int i, spec_framework *fw, acc_fit_key *key)
{
    *fw = FITTED[i].fw;
    *key = FITTED[i].key;
}

const char *acc_fit_key_name(acc_fit_key key) { return key == ACC_FIT_HOOK ? "hook_us" : "collective_us"; }

cost_param *acc_fit_slot(cost_calib *cal, spec_framework fw, acc_fit_key key)
{
    return key == ACC_FIT_HOOK ? &cal->fw_hook_s[fw] : &cal->fw_coll_s[fw];
}

const char *acc_fit_status_name(acc_fit_status st)
{
    static const char *const names[] = {ACC_FIT_STATUS, "undetermined",
                                        ("rejected (held out, not better than the estimate by 0.5 points of MAPE, or one source worse "
                                         "by more than 2)"),
                                        "at a bound of its range, on every source or in a fold (the data do not determine it)"};
    return names[st];
}

/* ---- the minimiser ------------------------------------------------------------------------- */

typedef struct {
    double (*f)(double, void *);
    void *ctx;
} min_fn;

static double min_call(double x, void *p)
{
    const min_fn *m = p;
    return m->f(x, m->ctx);
}

int acc_fit_min1(double (*f)(double x, void *ctx), void *ctx, double lo, double hi, int n_grid, double *xmin,
                 double *fmin, double *frange, sc_err *err)
{
    if (n_grid < 3 || !(hi > lo))
        return sc_err_set(err, SC_ERUNTIME, "fit", "", "expected a range and at least 3 grid points");
    int best = 0;
    double fb = INFINITY, fmax = -INFINITY, fg[64];
    if (n_grid > 64)
        n_grid = 64;
    for (int i = 0; i < n_grid; i++) {
        fg[i] = f(lo + (hi - lo) * i / (n_grid - 1), ctx);
        if (fg[i] < fb)
            fb = fg[i], best = i;
        if (fg[i] > fmax)
            fmax = fg[i];
    }
    *frange = fmax - fb;
    *xmin = lo + (hi - lo) * best / (n_grid - 1);
    *fmin = fb;
    if (best == 0 || best == n_grid - 1 || !(fg[best] < fg[best - 1] && fg[best] < fg[best + 1]))
        return 0; /* at a bound, or a plateau: the grid point */
    double a = lo + (hi - lo) * (best - 1) / (n_grid - 1), b = lo + (hi - lo) * (best + 1) / (n_grid - 1);
    min_fn m = {f, ctx};
    gsl_function F = {min_call, &m};
    gsl_min_fminimizer *s = gsl_min_fminimizer_alloc(gsl_min_fminimizer_brent);
    if (!s)
        return sc_err_set(err, SC_ERUNTIME, "fit", "", "out of memory");
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    int st = gsl_min_fminimizer_set_with_values(s, &F, *xmin, fb, a, fg[best - 1], b, fg[best + 1]);
    for (int it = 0; !st && it < 100; it++) {
        if ((st = gsl_min_fminimizer_iterate(s)))
            break;
        double l = gsl_min_fminimizer_x_lower(s), u = gsl_min_fminimizer_x_upper(s);
        if (gsl_min_test_interval(l, u, 1e-6, 0) == GSL_SUCCESS)
            break;
    }
    if (!st && gsl_min_fminimizer_f_minimum(s) <= fb) {
        *xmin = gsl_min_fminimizer_x_minimum(s);
        *fmin = gsl_min_fminimizer_f_minimum(s);
    }
    gsl_set_error_handler(old);
    gsl_min_fminimizer_free(s);
    return 0;
}

/* ---- the cases a value acts on --------------------------------------------------------------- */

typedef struct {
    acc_suite *s;
    spec_framework fw;
    acc_fit_key key;
    int n;
    int *idx;          /* the framework's cases the value acts on        */
    int *src;          /* their source index into names                  */
    char (*names)[128];
    int n_src;
    int exclude;       /* source index left out, -1 none                 */
    /* per source, its runnable cases of the framework the value does not act on: their
       squared log errors (a constant of the objective) and their count */
    double fixed_sum[ACC_FIT_MAX_SRC];
    int fixed_n[ACC_FIT_MAX_SRC];
} fit_ctx;

/* log(predicted / measured) of case i with x's value at v_s and the framework's other fitted
 * values at their estimates (each value is fitted alone: the fit does not depend on what
 * model/calib.c ships); 0 when it does not run. */
static int case_log_err(const fit_ctx *x, int i, double v_s, double *out)
{
    acc_case *c = acc_case_mut(x->s, i);
    cost_param keep[ACC_FIT_N_KEYS];
    acc_outcome o;
    for (int k = 0; k < ACC_FIT_N_KEYS; k++)
        keep[k] = *acc_fit_slot(&c->cal, x->fw, (acc_fit_key)k);
    for (int f = 0; f < N_FITTED; f++)
        if (FITTED[f].fw == x->fw)
            acc_fit_slot(&c->cal, x->fw, FITTED[f].key)->v = FITTED[f].estimate_us * 1e-6;
    acc_fit_slot(&c->cal, x->fw, x->key)->v = v_s;
    acc_run_case(c, PRED_MODEL, &o);
    for (int k = 0; k < ACC_FIT_N_KEYS; k++)
        *acc_fit_slot(&c->cal, x->fw, (acc_fit_key)k) = keep[k];
    if (o.status != ACC_OK)
        return 0;
    *out = log1p(o.error);
    return 1;
}

static int src_index(fit_ctx *x, const char *id)
{
    for (int k = 0; k < x->n_src; k++)
        if (!strcmp(x->names[k], id))
            return k;
    if (x->n_src == ACC_FIT_MAX_SRC)
        return -1;
    snprintf(x->names[x->n_src], sizeof x->names[0], "%s", id);
    return x->n_src++;
}

/* The framework's cases whose prediction moves between the range's ends; then, for their sources,
 * the framework's runnable cases it does not move (they weigh in their source's mean). */
static int acting_cases(fit_ctx *x, double lo_s, double hi_s, sc_err *err)
{
    const int n = acc_n_cases(x->s);
    x->idx = malloc(sizeof(int) * (size_t)(n ? n : 1));
    x->src = malloc(sizeof(int) * (size_t)(n ? n : 1));
    x->names = malloc(sizeof x->names[0] * ACC_FIT_MAX_SRC);
    char *fixed = calloc((size_t)(n ? n : 1), 1);
    double *fe = malloc(sizeof(double) * (size_t)(n ? n : 1));
    int rc = !x->idx || !x->src || !x->names || !fixed || !fe ? sc_err_set(err, SC_ERUNTIME, "fit", "", "out of memory") : 0;
    for (int i = 0; i < n && !rc; i++) {
        const acc_case *c = acc_case_at(x->s, i);
        double a, b;
        if (c->training.framework != x->fw || !case_log_err(x, i, lo_s, &a) ||
            !case_log_err(x, i, hi_s, &b))
            continue;
        if (fabs(a - b) < ACT_MIN) {
            fixed[i] = 1, fe[i] = a;
            continue;
        }
        int k = src_index(x, c->source_id);
        if (k < 0)
            rc = sc_err_set(err, SC_ERUNTIME, "fit", "", "more than %d sources", ACC_FIT_MAX_SRC);
        x->idx[x->n] = i;
        x->src[x->n++] = k;
    }
    for (int i = 0; i < n && !rc; i++)
        for (int k = 0; fixed[i] && k < x->n_src; k++)
            if (!strcmp(x->names[k], acc_case_at(x->s, i)->source_id))
                x->fixed_sum[k] += fe[i] * fe[i], x->fixed_n[k]++;
    free(fixed);
    free(fe);
    return rc;
}

/* The objective at x = ln(hook cost in s): per source (but the excluded one) the mean squared
 * log error of its runnable cases of the framework, averaged over the sources the value acts on
 * (each source weighs 1, its cases 1 / n_source each). */
static double objective(double xv, void *p)
{
    fit_ctx *x = p;
    double sum[ACC_FIT_MAX_SRC] = {0}, tot = 0;
    int cnt[ACC_FIT_MAX_SRC] = {0}, ns = 0;
    for (int j = 0; j < x->n; j++) {
        double e;
        if (x->src[j] != x->exclude && case_log_err(x, x->idx[j], exp(xv), &e))
            sum[x->src[j]] += e * e, cnt[x->src[j]]++;
    }
    for (int k = 0; k < x->n_src; k++)
        if (cnt[k])
            tot += (sum[k] + x->fixed_sum[k]) / (cnt[k] + x->fixed_n[k]), ns++;
    return ns ? tot / ns : 0;
}

/* ---- the folds ---------------------------------------------------------------------------- */

/* MAPE and median signed error of source k's runnable cases of the framework with value v_s. */
static int source_errors(fit_ctx *x, const char *source, double v_s, double *mape, double *bias)
{
    const int n = acc_n_cases(x->s);
    double *e = malloc(sizeof(double) * (size_t)(n ? n : 1)), le;
    int m = 0;
    if (!e)
        return -1;
    for (int i = 0; i < n; i++) {
        const acc_case *c = acc_case_at(x->s, i);
        if (c->training.framework == x->fw && !strcmp(c->source_id, source) && case_log_err(x, i, v_s, &le))
            e[m++] = expm1(le);
    }
    if (m) {
        *mape = acc_mape(e, m);
        *bias = acc_median_sort(e, m);
    }
    free(e);
    return m;
}

/* Fit leaving source index `exclude` out (-1: none): *v_s the value, *determined. */
static int fit_one(fit_ctx *x, const acc_fit_param *p, int exclude, double *v_s, double *obj, int *determined,
                   sc_err *err)
{
    x->exclude = exclude;
    int others = 0;
    for (int k = 0; k < x->n_src; k++)
        others += k != exclude;
    double xm, fm, fr;
    *determined = 0;
    *v_s = p->estimate_s;
    *obj = NAN;
    if (!others)
        return 0;
    int rc = acc_fit_min1(objective, x, log(p->lo_s), log(p->hi_s), GRID, &xm, &fm, &fr, err);
    if (rc || fr < FLAT_MIN)
        return rc;
    *determined = 1;
    *v_s = exp(xm);
    *obj = fm;
    return 0;
}

static int fold_at(fit_ctx *x, acc_fit_param *p, int k, sc_err *err)
{
    acc_fit_fold *f = &p->fold[k];
    double obj;
    memset(f, 0, sizeof *f);
    snprintf(f->source, sizeof f->source, "%s", x->names[k]);
    for (int j = 0; j < x->n; j++)
        f->n_act += x->src[j] == k;
    int rc = fit_one(x, p, k, &f->fit_s, &obj, &f->determined, err);
    if (rc)
        return rc;
    if ((f->n = source_errors(x, f->source, p->estimate_s, &f->mape_before, &f->bias_before)) < 0 ||
        source_errors(x, f->source, f->fit_s, &f->mape_after, &f->bias_after) < 0)
        return sc_err_set(err, SC_ERUNTIME, "fit", "", "out of memory");
    return 0;
}

/* Keep the fit only where, held out, it beats the estimate by ACC_FIT_GAIN_MIN (issue 27: no
 * worse than what it replaces), makes no held-out source worse by more than
 * ACC_FIT_SOURCE_WORSE_MAX (added when Megatron's per-collective cost, fitted at 160 us after
 * smallm27's stream-K GEMMs, passed the mean by 0.54 points while megatron-core-h100 went
 * 5.95 -> 11.13 % held out), and it is inside its range on every source and in every fold:
 * a fold whose optimum runs to a bound says that leaving one source out leaves the value
 * undetermined, so no fold's held-out error can be trusted to mean the value transfers (the
 * rule was tightened after the first fit, toward rejecting: DeepSpeed's per-collective cost sat
 * at 1.19 ms only while one flagperf case was in the fit, at the 2 ms ceiling without it).
 * Else the estimate stays. */
static int at_bound(const acc_fit_param *p, double v)
{
    return fabs(v - p->lo_s) < 1e-3 * p->lo_s || fabs(v - p->hi_s) < 1e-3 * p->hi_s;
}

static void settle(acc_fit_param *p, int determined)
{
    double b = 0, a = 0;
    for (int k = 0; k < p->n_fold; k++)
        b += p->fold[k].mape_before, a += p->fold[k].mape_after;
    p->held_mape_before = p->n_fold ? b / p->n_fold : NAN;
    p->held_mape_after = p->n_fold ? a / p->n_fold : NAN;
    int any = 0;
    for (int k = 0; k < p->n_fold; k++)
        any |= p->fold[k].determined;
    int bound = at_bound(p, p->fit_s), worse = 0;
    for (int k = 0; k < p->n_fold; k++) {
        bound |= p->fold[k].determined && at_bound(p, p->fold[k].fit_s);
        worse |= p->fold[k].mape_after > p->fold[k].mape_before + ACC_FIT_SOURCE_WORSE_MAX;
    }
    p->status = !determined || !any ? ACC_FIT_UNDETERMINED
                : bound             ? ACC_FIT_BOUND
                : worse || p->held_mape_after > p->held_mape_before - ACC_FIT_GAIN_MIN ? ACC_FIT_REJECTED
                                                                                      : ACC_FIT_FITTED;
    p->value_s = p->status == ACC_FIT_FITTED ? p->fit_s : p->estimate_s;
    for (int k = 0; k < p->n_fold; k++)
        p->fold[k].value_s = p->status == ACC_FIT_FITTED ? p->fold[k].fit_s : p->estimate_s;
}

int acc_fit_host(acc_suite *s, spec_framework fw, acc_fit_key key, acc_fit_param *out, sc_err *err)
{
    int f = 0;
    while (f < N_FITTED && (FITTED[f].fw != fw || FITTED[f].key != key))
        f++;
    if (f == N_FITTED)
        return sc_err_set(err, SC_EINPUT, "fit", "", "expected a fitted value, got %s %s", spec_framework_str(fw),
                          acc_fit_key_name(key));
    memset(out, 0, sizeof *out);
    *out = (acc_fit_param){.fw = fw, .key = key, .estimate_s = FITTED[f].estimate_us * 1e-6, .lo_s = FITTED[f].lo_us * 1e-6,
                           .hi_s = FITTED[f].hi_us * 1e-6};
    snprintf(out->range_why, sizeof out->range_why, "%s", *FITTED[f].why);
    fit_ctx x = {.s = s, .fw = fw, .key = key, .exclude = -1};
    int rc = acting_cases(&x, out->lo_s, out->hi_s, err), det = 0;
    if (!rc && x.n_src >= 2) /* leave-one-source-out needs a source to fit on */
        rc = fit_one(&x, out, -1, &out->fit_s, &out->objective, &det, err);
    else
        out->fit_s = out->estimate_s, out->objective = NAN;
    out->n_fold = x.n_src >= 2 ? x.n_src : 0;
    for (int k = 0; !rc && k < out->n_fold; k++)
        rc = fold_at(&x, out, k, err);
    if (!rc)
        settle(out, det);
    free(x.idx);
    free(x.src);
    free(x.names);
    return rc;
}

/* ---- the stored table ------------------------------------------------------------------------ */

int acc_fit_value_for(const acc_fit_table *t, const acc_case *c, acc_fit_key key, double *out_s)
{
    for (int i = 0; i < t->n; i++) {
        const acc_fit_param *p = &t->p[i];
        if (p->fw != c->training.framework || p->key != key)
            continue;
        *out_s = p->value_s;
        for (int k = 0; k < p->n_fold; k++)
            if (!strcmp(p->fold[k].source, c->source_id))
                *out_s = p->fold[k].value_s;
        return 1;
    }
    return 0;
}

void acc_fit_apply(acc_suite *s, const acc_fit_table *t)
{
    for (int i = 0; i < acc_n_cases(s); i++) {
        acc_case *c = acc_case_mut(s, i);
        double v;
        for (int k = 0; k < ACC_FIT_N_KEYS; k++)
            if (acc_fit_value_for(t, c, (acc_fit_key)k, &v))
                acc_fit_slot(&c->cal, c->training.framework, (acc_fit_key)k)->v = v;
    }
}

static json_t *us(double s) { return json_real(round(s * 1e8) / 100); } /* us, 2 decimals */
static json_t *pct(double f) { return isfinite(f) ? json_real(round(f * 1e4) / 100) : json_null(); }

static json_t *fold_json(const acc_fit_fold *f)
{
    return json_pack("{s:s, s:o, s:o, s:s, s:i, s:i, s:o, s:o, s:o, s:o}", "source", f->source, "value_us", us(f->value_s),
                     "fit_us", us(f->fit_s), "status", f->determined ? ACC_FIT_STATUS : "undetermined", "n", f->n,
                     "n_acted_on", f->n_act, "mape_before_pct", pct(f->mape_before), "bias_before_pct",
                     pct(f->bias_before), "mape_after_pct", pct(f->mape_after), "bias_after_pct", pct(f->bias_after));
}

static json_t *param_json(const acc_fit_param *p)
{
    json_t *held = json_array(), *on = json_array();
    for (int k = 0; k < p->n_fold; k++) {
        json_array_append_new(held, fold_json(&p->fold[k]));
        json_array_append_new(on, json_string(p->fold[k].source));
    }
    return json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:[o,o], s:s, s:o, s:o, s:o, s:o, s:o}", "framework",
                     spec_framework_str(p->fw), "key", acc_fit_key_name(p->key), "status", acc_fit_status_name(p->status), "value_us",
                     us(p->value_s), "fit_us", us(p->fit_s), "estimate_us", us(p->estimate_s), "bounds_us",
                     us(p->lo_s), us(p->hi_s), "bounds_why", p->range_why, "objective",
                     isfinite(p->objective) ? json_real(p->objective) : json_null(), "held_out_mape_before_pct",
                     pct(p->held_mape_before), "held_out_mape_after_pct", pct(p->held_mape_after), "fitted_on", on,
                     "held_out", held);
}

int acc_fit_write(const char *path, const acc_fit_table *t, const char *command, sc_err *err)
{
    json_t *ps = json_array();
    for (int i = 0; i < t->n; i++)
        json_array_append_new(ps, param_json(&t->p[i]));
    json_t *root = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:o}", "schema", ACC_FIT_SCHEMA, "what",
        "framework host costs per hook invocation (hook_us, cost_calib fw_hook_s) and per collective issued "
        "(collective_us, fw_coll_s), " ACC_FIT_STATUS
        ": per framework the value fitted on every source of validation/ (value_us: what predict ships, "
        "model/calib.c) and per source the value fitted without it (held_out: what shardcast accuracy "
        "predicts that source with); errors over the source's cases of the framework, before = the former "
        "estimate, after = the held-out fit",
        "objective",
        "macro-weighted mean over sources of the mean squared ln(predicted / measured tokens/s per GPU) over the "
        "framework's cases the value acts on, analytical engine; log-spaced grid of 25 then GSL Brent (gsl_min)",
        "date", t->date, "command", command, "params", ps);
    char *text = root ? json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(10)) : NULL;
    json_decref(root);
    if (!text)
        return sc_err_set(err, SC_ERUNTIME, path, "", "out of memory");
    size_t len = strlen(text);
    char *buf = malloc(len + 2);
    int rc = buf ? 0 : sc_err_set(err, SC_ERUNTIME, path, "", "out of memory");
    if (!rc) {
        memcpy(buf, text, len);
        buf[len] = '\n';
        rc = at_write(path, buf, len + 1, err);
    }
    free(buf);
    free(text);
    return rc;
}

/* A required number that may be null (NAN) or negative (a signed error). */
static int num_or_null(jr *r, const json_t *o, const char *base, const char *key, double *out)
{
    char p[128];
    jr_subpath(p, sizeof p, base, key);
    const json_t *v = json_object_get(o, key);
    if (!v)
        return jr_missing(r, p, "a number or null");
    if (json_is_null(v)) {
        *out = NAN;
        return 0;
    }
    if (!json_is_number(v) || !jr_plausible(json_number_value(v)))
        return jr_bad(r, p, "a number or null", v);
    *out = json_number_value(v);
    return 0;
}

/* A required time in us (positive) into seconds. */
static int us_at(jr *r, const json_t *o, const char *base, const char *key, double *out_s)
{
    double v = 0;
    int rc = jr_pos(r, o, base, key, 1, &v);
    *out_s = v * 1e-6;
    return rc;
}

static int fold_from(jr *r, const json_t *o, const char *at, acc_fit_fold *f)
{
    static const char *const keys[] = {"source", "value_us", "fit_us", "status", "n", "n_acted_on", "mape_before_pct",
                                       "bias_before_pct", "mape_after_pct", "bias_after_pct", NULL};
    static const char *const st[] = {ACC_FIT_STATUS, "undetermined", NULL};
    int rc, det = 0;
    double m[4];
    if (!json_is_object(o))
        return jr_bad(r, at, "an object", o);
    if ((rc = jr_only_keys(r, o, at, keys)) || (rc = jr_str(r, o, at, "source", 1, f->source, sizeof f->source)) ||
        (rc = us_at(r, o, at, "value_us", &f->value_s)) || (rc = us_at(r, o, at, "fit_us", &f->fit_s)) ||
        (rc = jr_enum(r, o, at, "status", st, 1, &det)) || (rc = jr_int(r, o, at, "n", 0, 1000000, 1, &f->n)) ||
        (rc = jr_int(r, o, at, "n_acted_on", 0, 1000000, 1, &f->n_act)))
        return rc;
    for (int i = 0; i < 4; i++)
        if ((rc = num_or_null(r, o, at, keys[6 + i], &m[i])))
            return rc;
    f->determined = det == 0;
    f->mape_before = m[0] / 100, f->bias_before = m[1] / 100, f->mape_after = m[2] / 100, f->bias_after = m[3] / 100;
    return 0;
}

/* "bounds_us": [lo, hi] with 0 < lo < hi, into seconds. */
static int bounds_from(jr *r, const json_t *o, const char *at, double *lo_s, double *hi_s)
{
    char p[160];
    jr_subpath(p, sizeof p, at, "bounds_us");
    const json_t *b = json_object_get(o, "bounds_us");
    if (!b)
        return jr_missing(r, p, "[lo, hi] in us");
    const json_t *l = json_array_get(b, 0), *h = json_array_get(b, 1);
    if (!json_is_array(b) || json_array_size(b) != 2 || !json_is_number(l) || !json_is_number(h) ||
        !(json_number_value(l) > 0) || !(json_number_value(h) > json_number_value(l)) ||
        !jr_plausible(json_number_value(l)) || !jr_plausible(json_number_value(h)))
        return jr_bad(r, p, "[lo, hi] in us with 0 < lo < hi", b);
    *lo_s = json_number_value(l) * 1e-6;
    *hi_s = json_number_value(h) * 1e-6;
    return 0;
}

static int param_from(jr *r, const json_t *o, const char *at, acc_fit_param *p)
{
    static const char *const keys[] = {"framework", "key", "status", "value_us", "fit_us", "estimate_us", "bounds_us",
                                       "bounds_why", "objective", "held_out_mape_before_pct", "held_out_mape_after_pct",
                                       "fitted_on", "held_out", NULL};
    static const char *const hook[] = {"hook_us", "collective_us", NULL};
    const char *st[] = {acc_fit_status_name(ACC_FIT_FITTED), acc_fit_status_name(ACC_FIT_UNDETERMINED),
                        acc_fit_status_name(ACC_FIT_REJECTED), acc_fit_status_name(ACC_FIT_BOUND), NULL};
    char fw[32], sub[160];
    int rc, k = 0, s = 0;
    if (!json_is_object(o))
        return jr_bad(r, at, "an object", o);
    if ((rc = jr_only_keys(r, o, at, keys)) || (rc = jr_str(r, o, at, "framework", 1, fw, sizeof fw)) ||
        (rc = jr_enum(r, o, at, "key", hook, 1, &k)) || (rc = jr_enum(r, o, at, "status", st, 1, &s)) ||
        (rc = us_at(r, o, at, "value_us", &p->value_s)) || (rc = us_at(r, o, at, "fit_us", &p->fit_s)) ||
        (rc = us_at(r, o, at, "estimate_us", &p->estimate_s)) || (rc = num_or_null(r, o, at, "objective", &p->objective)) ||
        (rc = num_or_null(r, o, at, "held_out_mape_before_pct", &p->held_mape_before)) ||
        (rc = num_or_null(r, o, at, "held_out_mape_after_pct", &p->held_mape_after)))
        return rc;
    if ((rc = jr_str(r, o, at, "bounds_why", 1, p->range_why, sizeof p->range_why)) ||
        (rc = bounds_from(r, o, at, &p->lo_s, &p->hi_s)))
        return rc;
    int f = spec_framework_parse(fw);
    jr_subpath(sub, sizeof sub, at, "framework");
    if (f <= FW_IDEAL)
        return sc_err_set(r->err, SC_EINPUT, r->src, sub, "expected deepspeed, fsdp, fsdp2 or megatron, got \"%s\"", fw);
    p->fw = (spec_framework)f;
    p->key = (acc_fit_key)k;
    p->status = (acc_fit_status)s;
    p->held_mape_before /= 100, p->held_mape_after /= 100;
    const json_t *h = json_object_get(o, "held_out");
    jr_subpath(sub, sizeof sub, at, "held_out");
    if (!json_is_array(h) || json_array_size(h) > ACC_FIT_MAX_SRC)
        return h ? jr_bad(r, sub, "an array of at most 64 sources", h) : jr_missing(r, sub, "an array");
    p->n_fold = (int)json_array_size(h);
    for (int i = 0; i < p->n_fold && !rc; i++) {
        char el[192];
        snprintf(el, sizeof el, "%s[%d]", sub, i);
        rc = fold_from(r, json_array_get(h, (size_t)i), el, &p->fold[i]);
    }
    return rc;
}

int acc_fit_load(const char *path, acc_fit_table *t, sc_err *err)
{
    static const char *const keys[] = {"schema", "what", "objective", "date", "command", "params", NULL};
    static const char *const schema[] = {ACC_FIT_SCHEMA, NULL};
    memset(t, 0, sizeof *t);
    jr r = {path, err};
    json_t *root;
    int rc = jr_load_root(&r, NULL, &root), sch = 0;
    if (rc)
        return rc;
    const json_t *ps = json_object_get(root, "params");
    if (!(rc = jr_only_keys(&r, root, "$", keys)) && !(rc = jr_enum(&r, root, "$", "schema", schema, 1, &sch)) &&
        !(rc = jr_str(&r, root, "$", "date", 1, t->date, sizeof t->date)) &&
        (!json_is_array(ps) || json_array_size(ps) > N_FRAMEWORKS * ACC_FIT_N_KEYS))
        rc = ps ? jr_bad(&r, "$.params", "an array of at most 10 values", ps) : jr_missing(&r, "$.params", "an array");
    for (size_t i = 0; !rc && i < json_array_size(ps); i++) {
        char at[64];
        snprintf(at, sizeof at, "$.params[%zu]", i);
        rc = param_from(&r, json_array_get(ps, i), at, &t->p[t->n]);
        for (int j = 0; !rc && j < t->n; j++)
            if (t->p[j].fw == t->p[t->n].fw && t->p[j].key == t->p[t->n].key)
                rc = sc_err_set(err, SC_EINPUT, path, at, "expected one entry per framework and key, got %s %s twice",
                                spec_framework_str(t->p[j].fw), acc_fit_key_name(t->p[j].key));
        t->n += !rc;
    }
    json_decref(root);
    return rc;
}
