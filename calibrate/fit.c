/* fit.c — the cost model fitted to loaded measurements with GSL (nonlinear least squares for
 * the collectives, linear for GEMMs, a median for the interference factor), and the calibration
 * file written from the fit (see fit.h). Not here: loading measurements (measure.c). */
#include "fit.h"


#include <errno.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/atomic.h"
#include "../base/jsonrd.h"
#include "../model/calib_params.h"


/* ---- the collective fit ----------------------------------------------------------------- */
/* With an "nccl" base calibration the latencies are NCCL's Simple-protocol ones (model/nccl.h)
 * and two more constants can be fitted: the network floor and the tree's bandwidth. */
enum { P_EFF_INTRA, P_EFF_NET, P_HOP_INTRA, P_HOP_NET, P_BASE, P_FLOOR, P_TREE, N_P };
static const char *const PNAMES[N_P] = {"intra-node bandwidth efficiency", "network bandwidth efficiency",
                                        "intra-node hop latency", "network hop latency", "ring base latency",
                                        "network latency floor", "tree bandwidth factor"};

typedef struct fit_ctx {
    const cal_meas *m;
    const spec_cluster *c;
    cost_calib cal;     /* template: the values being fitted are overwritten */
    int free_idx[N_P];  /* fitted parameter j -> model parameter */
    int n_free;
    double fixed[N_P];
    cost_tier intra;
    int tie_net;        /* the network hop latency is held at the intra-node one (see cal_fit) */
    double rms;         /* RMS relative residual of the last fit */
} fit_ctx;

static void apply(const fit_ctx *f, const double *v, cost_calib *cal)
{
    *cal = f->cal;
    cal->bw_eff[f->intra].v = v[P_EFF_INTRA];
    cal->bw_eff[TIER_NET].v = v[P_EFF_NET];
    cal->hop_lat_s[f->intra].v = v[P_HOP_INTRA] * 1e-6;
    cal->hop_lat_s[TIER_NET].v = v[P_HOP_NET] * 1e-6;
    cal->base_lat_s[ALGO_RING].v = v[P_BASE] * 1e-6;
    if (cal->nccl.on) {
        cal->nccl.intra_hop_s[NCCL_SIMPLE] = v[P_HOP_INTRA] * 1e-6;
        cal->nccl.net_hop_s[NCCL_SIMPLE] = v[P_HOP_NET] * 1e-6;
        cal->nccl.base_lat_s[NCCL_RING][NCCL_SIMPLE] = v[P_BASE] * 1e-6;
        cal->nccl.net_floor_s = v[P_FLOOR] * 1e-6;
        cal->nccl.tree_bw = v[P_TREE];
    }
}

static int resid(const gsl_vector *x, void *data, gsl_vector *out)
{
    const fit_ctx *f = data;
    double v[N_P];
    memcpy(v, f->fixed, sizeof v);
    for (int j = 0; j < f->n_free && x; j++)
        v[f->free_idx[j]] = gsl_vector_get(x, (size_t)j);
    if (f->tie_net)
        v[P_HOP_NET] = v[P_HOP_INTRA];
    cost_calib cal;
    apply(f, v, &cal);
    for (int i = 0; i < f->m->n_coll; i++) {
        const cal_coll_m *c = &f->m->coll[i];
        cost_group g;
        cal_meas_group(f->c, c, &g);
        /* NCCL's choice (or the algorithm the run was pinned to): a 2-node all-reduce that
         * ran as a tree is fitted as a tree */
        double t = cal.nccl.on ? cost_coll_pick(&cal, c->kind, c->bytes, 1, &g, c->algo, NULL)
                               : cost_coll_time(&cal, c->kind, ALGO_RING, c->bytes, 1, &g);
        gsl_vector_set(out, (size_t)i, (t - c->time_s) / c->time_s);
    }
    return GSL_SUCCESS;
}

static double rms(const gsl_vector *r)
{
    double s = gsl_blas_dnrm2(r);
    return s / sqrt((double)r->size);
}

/* One GSL trust-region fit of the free parameters of f, from their values in f->fixed: all N_P
 * values into v (fixed ones as they are), standard errors into sd (0 for fixed ones), the RMS
 * relative residual into f->rms. */
static int fit_collectives(fit_ctx *f, double *v, double *sd, int *flat, sc_err *err)
{
    *flat = -1;
    const cal_meas *m = f->m;
    memcpy(v, f->fixed, sizeof(double) * N_P);
    for (int j = 0; j < N_P; j++)
        sd[j] = 0;
    if (!f->n_free) {
        gsl_vector *r = gsl_vector_alloc((size_t)m->n_coll);
        if (!r)
            return sc_err_set(err, SC_ERUNTIME, "fit", "", "out of memory");
        resid(NULL, f, r);
        f->rms = rms(r);
        gsl_vector_free(r);
        return 0;
    }
    const gsl_multifit_nlinear_type *T = gsl_multifit_nlinear_trust;
    gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_workspace *w = gsl_multifit_nlinear_alloc(T, &fp, (size_t)m->n_coll, (size_t)f->n_free);
    gsl_vector *x = gsl_vector_alloc((size_t)f->n_free);
    gsl_matrix *cov = gsl_matrix_alloc((size_t)f->n_free, (size_t)f->n_free);
    if (!w || !x || !cov) {
        gsl_multifit_nlinear_free(w);
        gsl_vector_free(x);
        gsl_matrix_free(cov);
        return sc_err_set(err, SC_ERUNTIME, "fit", "", "out of memory");
    }
    for (int j = 0; j < f->n_free; j++)
        gsl_vector_set(x, (size_t)j, f->fixed[f->free_idx[j]]);
    gsl_multifit_nlinear_fdf fdf = {resid, NULL, NULL, (size_t)m->n_coll, (size_t)f->n_free, f, 0, 0, 0};
    /* GSL's errors are values here (cli/main.c turns its aborting handler off): a failed start
     * or step is an input the fit cannot use; a singular Jacobian leaves the covariance at zero
     * and the column test below names the parameter nothing determines. */
    int info = 0, gs = gsl_multifit_nlinear_init(x, &fdf, w);
    if (!gs)
        gs = gsl_multifit_nlinear_driver(200, 1e-10, 1e-10, 1e-10, NULL, NULL, &info, w);
    if (gs && gs != GSL_EMAXITER) {
        gsl_multifit_nlinear_free(w);
        gsl_vector_free(x);
        gsl_matrix_free(cov);
        return sc_err_set(err, SC_EINPUT, m->path, "$.collectives", "the fit of the collectives failed: %s",
                          gsl_strerror(gs));
    }
    gsl_vector *r = gsl_multifit_nlinear_residual(w);
    gsl_matrix *J = gsl_multifit_nlinear_jac(w);
    if (gsl_multifit_nlinear_covar(J, 0.0, cov))
        gsl_matrix_set_zero(cov);
    double chisq = gsl_blas_dnrm2(r);
    chisq *= chisq;
    int dof = m->n_coll - f->n_free;
    double s2 = dof > 0 ? chisq / dof : 0;
    f->rms = rms(r);
    const gsl_vector *sol = gsl_multifit_nlinear_position(w);
    int rc = 0;
    for (int j = 0; j < f->n_free && !rc; j++) {
        int p = f->free_idx[j];
        v[p] = gsl_vector_get(sol, (size_t)j);
        if (!isfinite(v[p]))
            rc = sc_err_set(err, SC_EINPUT, m->path, "$.collectives", "the fit of the %s did not converge (got %g)",
                            PNAMES[p], v[p]);
        double var = gsl_matrix_get(cov, (size_t)j, (size_t)j) * s2;
        sd[p] = var > 0 && isfinite(var) ? sqrt(var) : 0;
        /* a column of J that is all zero means no measurement depends on it (at the solution:
         * an efficiency that ran away upwards, its bandwidth term vanishing): the caller decides */
        gsl_vector_view col = gsl_matrix_column(J, (size_t)j);
        if (gsl_blas_dnrm2(&col.vector) < 1e-12 && *flat < 0)
            *flat = p;
    }
    gsl_multifit_nlinear_free(w);
    gsl_vector_free(x);
    gsl_matrix_free(cov);
    return rc;
}

/* ---- interference ------------------------------------------------------------------------ */
/* overlap_slowdown (model/cost.h: compute runs this fraction slower while a collective shares the
 * GPU) from the interference entries: factor_i = t_overlapped_i / t_alone_i - 1 per entry; the
 * value is their median (robust to one disturbed run: a clock change, a neighbour's job), its sd
 * the standard error sample sd / sqrt(n) (0 for one entry). Entries whose traffic is an NCCL
 * collective are used when there are any; device copies (one-rank runs) only when there are none,
 * and the report says so. Entries whose traffic spanned less than CAL_MIN_COVERAGE of the GEMMs
 * measured partly the GEMM alone and are left out. A negative median is noise (traffic cannot
 * speed a GEMM up): held at 0 and reported. No usable entries: the value is left as it is. */
static int fit_interference(const cal_meas *m, cost_calib *out, cal_fit_report *rep, sc_err *err)
{
    int n_nccl = 0, n_copy = 0;
    for (int i = 0; i < m->n_interf; i++) {
        const cal_interf_m *x = &m->interf[i];
        if (x->coverage < CAL_MIN_COVERAGE)
            rep->interf_dropped++;
        else if (x->nccl)
            n_nccl++;
        else
            n_copy++;
    }
    const int use_nccl = n_nccl > 0, n = use_nccl ? n_nccl : n_copy;
    if (!n)
        return 0;
    double *f = malloc(sizeof(double) * (size_t)n);
    if (!f)
        return sc_err_set(err, SC_ERUNTIME, "fit", "", "out of memory");
    int j = 0;
    for (int i = 0; i < m->n_interf; i++) {
        const cal_interf_m *x = &m->interf[i];
        if (x->coverage < CAL_MIN_COVERAGE || x->nccl != use_nccl)
            continue;
        if (!j)
            snprintf(rep->interf_kind, sizeof rep->interf_kind, "%s", x->concurrent);
        else if (strcmp(rep->interf_kind, x->concurrent))
            snprintf(rep->interf_kind, sizeof rep->interf_kind, "nccl-*");
        f[j] = x->t_overlapped_s / x->t_alone_s - 1;
        rep->interf_negative += f[j] < 0;
        j++;
    }
    gsl_sort(f, 1, (size_t)n);
    rep->interf_points = n;
    rep->interf_fallback = !use_nccl;
    rep->interf_median = gsl_stats_median_from_sorted_data(f, 1, (size_t)n);
    out->overlap_slowdown.v = rep->interf_median > 0 ? rep->interf_median : 0;
    out->overlap_slowdown.sd = n > 1 ? gsl_stats_sd(f, 1, (size_t)n) / sqrt((double)n) : 0;
    free(f);
    return 0;
}

/* Whether some collective had two ranks on a node (the intra-node tier's parameters can be
 * fitted) and whether some spanned nodes (the network's). */
static void coll_spans(const cal_meas *m, int *has_intra, int *has_net)
{
    *has_intra = *has_net = 0;
    for (int i = 0; i < m->n_coll; i++) {
        *has_intra |= m->coll[i].m > 1;
        *has_net |= m->coll[i].k > 1;
    }
}

/* The cost_calib field that collective-fit parameter p is reported as (NULL: the NCCL extras,
 * which have no row in model/calib_params.h). */
static const cost_param *fit_field(const cost_calib *c, int p, cost_tier intra)
{
    switch (p) {
    case P_EFF_INTRA: return &c->bw_eff[intra];
    case P_EFF_NET: return &c->bw_eff[TIER_NET];
    case P_HOP_INTRA: return &c->hop_lat_s[intra];
    case P_HOP_NET: return &c->hop_lat_s[TIER_NET];
    case P_BASE: return &c->base_lat_s[ALGO_RING];
    default: return NULL;
    }
}

int cal_fit_held(const cal_fit_report *rep, const calib_param_def *d)
{
    cost_calib c;
    for (int p = 0; p < N_P; p++)
        if (rep->held & 1u << p && fit_field(&c, p, (cost_tier)rep->intra_tier) == calib_param_at(&c, d))
            return 1;
    return 0;
}

void cal_fit_defaults(const spec_cluster *c, cost_calib *k)
{
    cost_calib_defaults(c, k);
    memset(&k->kern, 0, sizeof k->kern);
}

/* The GEMM overhead when the fit cannot tell it: a negative intercept is held at 0 (a fixed cost
 * cannot be negative) and one whose standard error is not below its value at the base's; either
 * way without a standard error (an overhead of 0 ± 65.8 us drawn for a prediction's spread adds
 * only positive draws, tens of microseconds to each of thousands of GEMMs: the meaningless
 * 354 ± 83,162 s of the emulated loop). The efficiency is then refitted with the overhead fixed:
 * the weighted least squares slope through the intercept, t - c0 = F / (peak x eff), weights
 * 1/t^2, its variance s^2 / sum(w F^2) with s^2 = chi^2 / (n - 1). */
static void gemm_weak(const cal_meas *m, const spec_cluster *c, const cost_calib *start, cost_calib *out,
                      cal_fit_report *rep)
{
    const double v = out->gemm_overhead_s.v, sd = out->gemm_overhead_s.sd;
    if (v > 0 && sd < v)
        return;
    rep->gemm_weak = v > 0 ? 1 : 2;
    double c0 = v > 0 ? start->gemm_overhead_s.v : 0, sxy = 0, sxx = 0;
    for (int i = 0; i < m->n_gemm; i++) {
        const cal_gemm_m *g = &m->gemm[i];
        double x = 2 * g->m * g->n * g->k * g->batch, y = g->time_s, w = 1 / (y * y);
        sxy += w * x * (y - c0);
        sxx += w * x * x;
    }
    double c1 = sxy / sxx, chi2 = 0;
    for (int i = 0; i < m->n_gemm; i++) {
        const cal_gemm_m *g = &m->gemm[i];
        double x = 2 * g->m * g->n * g->k * g->batch, y = g->time_s, r = (c0 + c1 * x - y) / y;
        chi2 += r * r;
    }
    if (!(c1 > 0) || 1 / (c->gpu.peak_flops * c1) > 1.0) { /* keep the two-parameter fit */
        rep->gemm_weak = 0;
        return;
    }
    double var1 = m->n_gemm > 1 ? chi2 / (m->n_gemm - 1) / sxx : 0;
    out->gemm_overhead_s = (cost_param){c0, 0};
    out->gemm_eff.v = 1 / (c->gpu.peak_flops * c1);
    out->gemm_eff.sd = var1 > 0 ? sqrt(var1) / (c->gpu.peak_flops * c1 * c1) : 0;
    rep->gemm_rms_rel = sqrt(chi2 / m->n_gemm);
}

/* Of the free parameters, the one with the largest relative standard error when that error is not
 * smaller than the value itself (an interval of "0.79 ± 1.45 us" says the data cannot tell the
 * value, and drawing from it for a prediction's spread gives nonsense: the 354 ± 83,162 s of the
 * emulated loop): held at its base value (the start, f->fixed) with no standard error, named in
 * rep->undetermined. Only with a base to take it from (without one the fit has no other value to
 * offer and keeps its estimate). Returns 1 when it held one. */
static int weak_param(fit_ctx *f, const double *v, const double *sd, const cost_calib *base, cal_fit_report *rep)
{
    int worst = -1;
    double rel = 1;
    for (int j = 0; j < f->n_free && base; j++) {
        int p = f->free_idx[j];
        double r = v[p] != 0 ? sd[p] / fabs(v[p]) : sd[p] > 0 ? INFINITY : 0;
        if (r >= rel)
            worst = p, rel = r;
    }
    if (worst < 0)
        return 0;
    int k = 0;
    for (int j = 0; j < f->n_free; j++)
        if (f->free_idx[j] != worst)
            f->free_idx[k++] = f->free_idx[j];
    f->n_free = k;
    rep->weak |= 1u << worst;
    size_t l = strlen(rep->undetermined);
    snprintf(rep->undetermined + l, sizeof rep->undetermined - l, "%s%s (sd %.3g >= value %.3g)", l ? ", " : "",
             PNAMES[worst], sd[worst], v[worst]);
    return 1;
}

/* Which parameters are latencies (>= 0, in us) rather than efficiencies (in (0, 1], the tree's
 * in (0, 2]): in PNAMES order. */
static const int IS_LAT[N_P] = {0, 0, 1, 1, 1, 1, 0};

/* The fit's context: the measurements, the cluster, the starting values (base or defaults) and
 * the values of every parameter held fixed (the NCCL model's where it is on). */
static void fit_start(fit_ctx *f, const cal_meas *m, const spec_cluster *c, const cost_calib *start,
                      cal_fit_report *rep)
{
    memset(f, 0, sizeof *f);
    f->m = m;
    f->c = c;
    f->cal = *start;
    f->intra = c->fabric.kind == FABRIC_PCIE ? TIER_PCIE : TIER_NVLINK;
    rep->intra_tier = (int)f->intra;
    f->fixed[P_EFF_INTRA] = start->bw_eff[f->intra].v;
    f->fixed[P_EFF_NET] = start->bw_eff[TIER_NET].v;
    f->fixed[P_HOP_INTRA] = start->hop_lat_s[f->intra].v * 1e6;
    f->fixed[P_HOP_NET] = start->hop_lat_s[TIER_NET].v * 1e6;
    f->fixed[P_BASE] = start->base_lat_s[ALGO_RING].v * 1e6;
    const nccl_params *np = &start->nccl;
    if (np->on) {
        f->fixed[P_HOP_INTRA] = np->intra_hop_s[NCCL_SIMPLE] * 1e6;
        f->fixed[P_HOP_NET] = np->net_hop_s[NCCL_SIMPLE] * 1e6;
        f->fixed[P_BASE] = np->base_lat_s[NCCL_RING][NCCL_SIMPLE] * 1e6;
        f->fixed[P_FLOOR] = np->net_floor_s * 1e6;
        f->fixed[P_TREE] = np->tree_bw;
    }
}

/* The NCCL model's parameters that some prediction depends on: determinable[] (set from the
 * collectives' spans) narrowed to them. */
static int fit_probe(fit_ctx *f, int *determinable, sc_err *err)
{
    const cal_meas *m = f->m;
    /* the floor and the tree's bandwidth only where some prediction depends on them (a
     * tree that NCCL never picks for these sizes teaches nothing about its bandwidth) */
    gsl_vector *r0 = gsl_vector_alloc((size_t)m->n_coll), *r1 = gsl_vector_alloc((size_t)m->n_coll);
    if (!r0 || !r1) {
        gsl_vector_free(r0);
        gsl_vector_free(r1);
        return sc_err_set(err, SC_ERUNTIME, "fit", "", "out of memory");
    }
    resid(NULL, f, r0);
    for (int p = 0; p < N_P; p++) {
        if (p < P_FLOOR && !determinable[p])
            continue;
        double keep = f->fixed[p];
        int lat = p >= P_HOP_INTRA && p <= P_FLOOR;
        f->fixed[p] = lat ? keep + 10 : keep * 0.999; /* a bottleneck it is not does not move */
        resid(NULL, f, r1);
        f->fixed[p] = keep;
        gsl_vector_sub(r1, r0);
        determinable[p] = gsl_blas_dnrm2(r1) > 1e-9;
    }
    gsl_vector_free(r0);
    gsl_vector_free(r1);
    return 0;
}

/* The parameters fitted (determinable ones), the others taken from the base (named in
 * rep->undetermined) or refused without one; enough measurements for them. */
static int fit_free_params(fit_ctx *f, const int *determinable, const cost_calib *base, cal_fit_report *rep,
                           sc_err *err)
{
    const cal_meas *m = f->m;
    char und[256] = "";
    for (int j = 0; j < N_P; j++) {
        if (determinable[j]) {
            f->free_idx[f->n_free++] = j;
            continue;
        }
        if (j >= P_FLOOR) /* NCCL extras: kept from the base, never required */
            continue;
        if (!base)
            return sc_err_set(err, SC_EINPUT, m->path, "$.collectives",
                              "the measurements cannot determine the %s (%s); measure %s, or give --base CALIBRATION "
                              "to take it from there",
                              PNAMES[j], j == P_EFF_NET || j == P_HOP_NET ? "no collective spans nodes" : "no collective has two ranks on a node",
                              j == P_EFF_NET || j == P_HOP_NET ? "on two or more nodes" : "with several ranks per node");
        size_t l = strlen(und);
        snprintf(und + l, sizeof und - l, "%s%s", l ? ", " : "", PNAMES[j]);
    }
    snprintf(rep->undetermined, sizeof rep->undetermined, "%s", und);
    if (m->n_coll && m->n_coll < f->n_free + 1)
        return sc_err_set(err, SC_EINPUT, m->path, "$.collectives",
                          "expected at least %d collective measurements to fit %d parameters, got %d", f->n_free + 1,
                          f->n_free, m->n_coll);
    return 0;
}

/* The collectives' fit as an active-set least squares (see cal_fit): a parameter past its bound
 * held there, a network hop below the intra-node one tied to it, one the data barely determine
 * held at its base value, and the others refitted, as often as needed; v and sd the result. */
static int fit_active_set(fit_ctx *f, const int *determinable, const cost_calib *base, double *v, double *sd,
                          cal_fit_report *rep, sc_err *err)
{
    const cal_meas *m = f->m;
    int rc;
    for (;;) {
        int flat;
        if ((rc = fit_collectives(f, v, sd, &flat, err)))
            return rc;
        int worst = -1;
        double bound = 0;
        for (int j = 0; j < f->n_free; j++) {
            int p = f->free_idx[j];
            double hi = p == P_TREE ? 2.0 : 1.0;
            if (IS_LAT[p] && v[p] < 0 && (worst < 0 || !IS_LAT[worst] || v[p] < v[worst]))
                worst = p, bound = 0;
            else if (!IS_LAT[p] && worst < 0 && (p == flat || (v[p] > hi && v[p] - 2 * sd[p] <= hi)))
                worst = p, bound = hi; /* ran away past its bound, or above it by less than two of its
                                          standard errors (noise: the emulated loop's 1.049 +- 0.068
                                          on a loaded 2-core host); further above it is refused below */
        }
        if (worst < 0 && flat == P_HOP_NET && !f->tie_net && determinable[P_HOP_INTRA]) {
            /* A ring's cross-node step pays the slower of the two hops (model/cost.c), so a
             * network hop fitted below the intra-node one changes no prediction: nothing
             * depends on it there. That happens where the two are close and the measurements
             * noisy (the emulated loop on a loaded 2-core host: veth vs loopback). Tied to
             * the intra-node hop, the one value every cross-node step then pays; reported. */
            int k = 0;
            for (int j = 0; j < f->n_free; j++)
                if (f->free_idx[j] != P_HOP_NET)
                    f->free_idx[k++] = f->free_idx[j];
            f->n_free = k;
            f->tie_net = 1;
            rep->held |= 1u << P_HOP_NET;
            size_t l = strlen(rep->at_bound);
            snprintf(rep->at_bound + l, sizeof rep->at_bound - l, "%s%s at the %s", l ? ", " : "",
                     PNAMES[P_HOP_NET], PNAMES[P_HOP_INTRA]);
            continue;
        }
        if (worst < 0 && flat >= 0)
            return sc_err_set(err, SC_EINPUT, m->path, "$.collectives",
                              "the measurements cannot determine the %s: no measured time depends on it",
                              PNAMES[flat]);
        if (worst < 0 && weak_param(f, v, sd, base, rep))
            continue; /* one held at its base value: refit the others */
        if (worst < 0)
            break;
        int k = 0;
        for (int j = 0; j < f->n_free; j++)
            if (f->free_idx[j] != worst)
                f->free_idx[k++] = f->free_idx[j];
        f->n_free = k;
        f->fixed[worst] = bound;
        rep->held |= 1u << worst;
        size_t l = strlen(rep->at_bound);
        if (IS_LAT[worst])
            snprintf(rep->at_bound + l, sizeof rep->at_bound - l, "%s%s", l ? ", " : "", PNAMES[worst]);
        else
            snprintf(rep->at_bound + l, sizeof rep->at_bound - l, "%s%s at %g", l ? ", " : "", PNAMES[worst], bound);
        if (!f->n_free) {
            memcpy(v, f->fixed, sizeof f->fixed); /* every value held: the fit's output is the bounds */
            break;
        }
    }
    return 0;
}

/* The fitted values checked (finite, latencies >= 0, efficiencies in (0, 1], the tree's in (0,
 * 2]) and written into out with their standard errors. */
static int fit_coll_out(const fit_ctx *f, int nccl_on, double *v, double *sd, cost_calib *out, cal_fit_report *rep,
                        sc_err *err)
{
    const cal_meas *m = f->m;
    if (f->tie_net)
        v[P_HOP_NET] = v[P_HOP_INTRA];
    for (int p = 0; p < N_P; p++) /* a value held (at a bound, or at the base's) has no sd */
        if ((rep->held | rep->weak) & 1u << p)
            sd[p] = 0;
    rep->coll_points = m->n_coll;
    rep->coll_rms_rel = f->rms;
    for (int j = 0; j < (nccl_on ? N_P : P_FLOOR); j++) {
        int lat = IS_LAT[j];
        double hi = j == P_TREE ? 2.0 : 1.0; /* a 2-node tree moves half a ring's bytes */
        if (!isfinite(v[j]) || v[j] < 0 || (!lat && v[j] == 0) || (!lat && v[j] > hi))
            return sc_err_set(err, SC_EINPUT, m->path, "$.collectives",
                              "the fit gives an impossible %s (%g%s): the measurements do not follow the cost "
                              "model%s",
                              PNAMES[j], v[j], lat ? " us" : "",
                              !lat && v[j] > hi ? ", or the cluster's line rate for this tier is too low" : "");
    }
    apply(f, v, out);
    out->bw_eff[f->intra].sd = sd[P_EFF_INTRA];
    out->bw_eff[TIER_NET].sd = sd[P_EFF_NET];
    out->hop_lat_s[f->intra].sd = sd[P_HOP_INTRA] * 1e-6;
    out->hop_lat_s[TIER_NET].sd = sd[P_HOP_NET] * 1e-6;
    out->base_lat_s[ALGO_RING].sd = sd[P_BASE] * 1e-6;
    if (nccl_on)
        for (int j = 0; j < 5; j++) {
            int p = P_HOP_INTRA + j;
            for (int q = 0; q < f->n_free; q++)
                rep->nccl_fitted[j] |= f->free_idx[q] == p;
            rep->nccl_sd[j] = sd[p] * (p == P_TREE ? 1 : 1e-6);
        }
    return 0;
}

/* GEMMs: t = overhead + FLOPs / (peak x eff), linear in FLOPs (gsl_fit_linear); at least 3. */
static int fit_gemms(const cal_meas *m, const spec_cluster *c, const cost_calib *start, cost_calib *out,
                     cal_fit_report *rep, sc_err *err)
{
    double *xs = malloc(sizeof(double) * (size_t)m->n_gemm), *ys = malloc(sizeof(double) * (size_t)m->n_gemm);
    if (!xs || !ys) {
        free(xs);
        free(ys);
        return sc_err_set(err, SC_ERUNTIME, "fit", "", "out of memory");
    }
    for (int i = 0; i < m->n_gemm; i++) {
        const cal_gemm_m *g = &m->gemm[i];
        xs[i] = 2 * g->m * g->n * g->k * g->batch;
        ys[i] = g->time_s;
    }
    /* weights 1/t^2: the errors are relative, small GEMMs count as much as large ones; the
     * covariance is scaled by chi^2/dof since the weights fix only the shape of the errors */
    double *ws = malloc(sizeof(double) * (size_t)m->n_gemm);
    if (!ws) {
        free(xs);
        free(ys);
        return sc_err_set(err, SC_ERUNTIME, "fit", "", "out of memory");
    }
    for (int i = 0; i < m->n_gemm; i++)
        ws[i] = 1 / (ys[i] * ys[i]);
    double c0, c1, cov00, cov01, cov11, chisq;
    int gs = gsl_fit_wlinear(xs, 1, ws, 1, ys, 1, (size_t)m->n_gemm, &c0, &c1, &cov00, &cov01, &cov11, &chisq);
    free(ws);
    if (gs || !isfinite(c0) || !isfinite(c1)) {
        free(xs);
        free(ys);
        return sc_err_set(err, SC_EINPUT, m->path, "$.gemms",
                          "the GEMM fit failed (%s): measure GEMMs of several sizes",
                          gs ? gsl_strerror(gs) : "not a number");
    }
    double scale = m->n_gemm > 2 ? chisq / (m->n_gemm - 2) : 0;
    cov00 *= scale;
    cov11 *= scale;
    double e2 = 0;
    for (int i = 0; i < m->n_gemm; i++) {
        double rr = (c0 + c1 * xs[i] - ys[i]) / ys[i];
        e2 += rr * rr;
    }
    free(xs);
    free(ys);
    if (!(c1 > 0))
        return sc_err_set(err, SC_EINPUT, m->path, "$.gemms",
                          "the GEMM times do not grow with FLOPs: the efficiency cannot be determined");
    rep->gemm_points = m->n_gemm;
    rep->gemm_rms_rel = sqrt(e2 / m->n_gemm);
    double eff = 1 / (c->gpu.peak_flops * c1);
    if (eff > 1.0) /* calibration files hold efficiencies <= 1 (model/calib.c) */
        return sc_err_set(err, SC_EINPUT, m->path, "$.gemms",
                          "the fit gives a GEMM efficiency of %g, above 1: the cluster's peak_tflops (%g) is too "
                          "low for these measurements",
                          eff, c->gpu.peak_flops / 1e12);
    out->gemm_eff.v = eff;
    out->gemm_eff.sd = cov11 > 0 && isfinite(cov11) ? sqrt(cov11) / (c->gpu.peak_flops * c1 * c1) : 0;
    out->gemm_overhead_s.v = c0 > 0 ? c0 : 0;
    out->gemm_overhead_s.sd = cov00 > 0 && isfinite(cov00) ? sqrt(cov00) : 0;
    gemm_weak(m, c, start, out, rep);
    return 0;
}

/* The GEMM rows that can fit the back-to-back GEMM time (an isolated launch-bound call cannot:
 * measure.h cal_gemm_launch_bound; counted in rep->gemm_isolated), fitted when there are 3. */
static int fit_gemm_rows(const cal_meas *m, const spec_cluster *c, const cost_calib *start, int have_base,
                         cost_calib *out, cal_fit_report *rep, sc_err *err)
{
    cal_gemm_m *kept = malloc(sizeof(cal_gemm_m) * (size_t)(m->n_gemm > 0 ? m->n_gemm : 1));
    if (!kept)
        return sc_err_set(err, SC_ERUNTIME, "fit", "", "out of memory");
    int n = 0;
    for (int i = 0; i < m->n_gemm; i++)
        if (!cal_gemm_launch_bound(m, &m->gemm[i]))
            kept[n++] = m->gemm[i];
    rep->gemm_isolated = m->n_gemm - n;
    int rc = 0;
    if (n >= 3) {
        cal_meas sub = *m;
        sub.gemm = kept;
        sub.n_gemm = n;
        rc = fit_gemms(&sub, c, start, out, rep, err);
    } else if (!have_base) {
        rc = sc_err_set(err, SC_EINPUT, m->path, "$.gemms",
                        "expected at least 3 GEMM measurements to fit the GEMM efficiency, got %d%s (or give --base)", n,
                        rep->gemm_isolated ? " timed back to back (isolated calls under 100 us are left out)" : "");
    }
    free(kept);
    return rc;
}


/* Memory bandwidth: the efficiency of the largest copies. */
static int fit_membw(const cal_meas *m, const spec_cluster *c, cost_calib *out, cal_fit_report *rep, sc_err *err)
{
    double *e = malloc(sizeof(double) * (size_t)m->n_membw);
    if (!e)
        return sc_err_set(err, SC_ERUNTIME, "fit", "", "out of memory");
    /* only the largest copies: smaller ones can stay in the caches and measure the cache, not
     * the memory the cost model means (1 MiB copies gave "efficiencies" of 1.4 on a CPU) */
    double top = 0;
    for (int i = 0; i < m->n_membw; i++)
        top = fmax(top, m->membw[i].bytes);
    int ne = 0;
    for (int i = 0; i < m->n_membw; i++)
        if (m->membw[i].bytes >= top / 2) /* a copy of `bytes` reads and writes them: 2 x bytes */
            e[ne++] = 2 * m->membw[i].bytes / m->membw[i].time_s / c->gpu.hbm_bw_Bps;
    out->hbm_eff.v = gsl_stats_mean(e, 1, (size_t)ne);
    out->hbm_eff.sd = ne > 1 ? gsl_stats_sd(e, 1, (size_t)ne) : 0;
    rep->membw_points = ne;
    free(e);
    if (out->hbm_eff.v > 1.0) /* calibration files hold efficiencies <= 1 (model/calib.c) */
        return sc_err_set(err, SC_EINPUT, m->path, "$.membw",
                          "the measured copies give a memory-bandwidth efficiency of %g, above 1: the "
                          "cluster's hbm_bandwidth_GBps (%g) is too low for them (caches?)",
                          out->hbm_eff.v, c->gpu.hbm_bw_Bps / 1e9);
    return 0;
}

int cal_fit(const cal_meas *m, const spec_cluster *c, const cost_calib *base, const char *base_name, cost_calib *out,
            cal_fit_report *rep, sc_err *err)
{
    memset(rep, 0, sizeof *rep);
    int rc0 = cal_meas_check(m, c, err);
    if (rc0)
        return rc0;
    cost_calib start;
    if (base)
        start = *base;
    else
        cal_fit_defaults(c, &start);
    *out = start;

    /* which parameters can the collectives determine? */
    int has_intra, has_net, rc;
    coll_spans(m, &has_intra, &has_net);
    fit_ctx f;
    fit_start(&f, m, c, &start, rep);
    const nccl_params *np = &start.nccl;
    int determinable[N_P] = {has_intra, has_net, has_intra, has_net, m->n_coll > 0, 0, 0};
    if (np->on && m->n_coll && (rc = fit_probe(&f, determinable, err)))
        return rc;
    if ((rc = fit_free_params(&f, determinable, base, rep, err)))
        return rc;
    if (m->n_coll) {
        /* Physical bounds, as an active-set least squares: latencies cannot be negative and
         * bandwidth efficiencies cannot exceed 1 (the tree's factor 2: a 2-node tree moves half a
         * ring's bytes). An unconstrained fit of a latency the data barely determine can land
         * below 0; noisy latency-dominated points can drive an efficiency up until its bandwidth
         * term vanishes and nothing depends on it. Either is held at its bound, reported, and the
         * others refitted, as often as needed. An efficiency that the data place above 1 is
         * refused below (the cluster spec or the measurements are wrong), as is any other
         * parameter nothing depends on. */
        double v[N_P], sd[N_P] = {0};
        if ((rc = fit_active_set(&f, determinable, base, v, sd, rep, err)) ||
            (rc = fit_coll_out(&f, np->on, v, sd, out, rep, err)))
            return rc;
    }
    if ((rc = fit_gemm_rows(m, c, &start, base != NULL, out, rep, err)))
        return rc;
    if (m->n_membw >= 1 && (rc = fit_membw(m, c, out, rep, err)))
        return rc;
    int rc_i = fit_interference(m, out, rep, err);
    if (rc_i)
        return rc_i;
    snprintf(out->name, sizeof out->name, "%.40s (fitted)", c->name);
    snprintf(out->cluster, sizeof out->cluster, "%s", c->name);
    snprintf(out->source, sizeof out->source,
             "fitted by shardcast calibrate fit to %.200s (%s, %.60s, %.30s)%s%.100s%s%.80s", m->path, m->backend,
             m->device, m->date, base_name ? "; unmeasured values from " : "", base_name ? base_name : "",
             !rep->at_bound[0]                   ? ""
             : strstr(rep->at_bound, " at 1") || strstr(rep->at_bound, " at the ") ? "; held at a physical bound: "
                                                                                  : "; held at 0: ",
             rep->at_bound);
    return 0;
}

/* ---- writing ---------------------------------------------------------------------------- */
/* A standard error below what an input may hold (JR_TINY in the file's unit: a parameter the
 * measurements determine exactly, e.g. synthetic ones) is written as 0, so the file loads back. */
static double sd_out(double sd) { return fabs(sd) < JR_TINY ? 0.0 : sd; }

static json_t *val(cost_param p, double scale, const char *src)
{
    return json_pack("{s:f, s:f, s:s}", "value", p.v * scale, "sd", sd_out(p.sd * scale), "source", src);
}

static json_t *pval(double v, double sd, const char *src)
{
    return json_pack("{s:f, s:f, s:s}", "value", v, "sd", sd_out(sd), "source", src);
}

/* The object at a JSON path ("$.links.nvlink") under root, made (in order) where missing. */
static json_t *path_object(json_t *root, const char *path)
{
    char buf[64], *save = NULL;
    snprintf(buf, sizeof buf, "%s", path);
    json_t *o = root;
    for (char *t = strtok_r(buf, ".", &save); t && o; t = strtok_r(NULL, ".", &save)) {
        if (!strcmp(t, "$"))
            continue;
        json_t *c = json_object_get(o, t);
        if (!c && (!(c = json_object()) || json_object_set_new(o, t, c)))
            return NULL;
        o = c;
    }
    return o;
}

/* Which of the collective fit's NCCL values (cal_fit_report.nccl_fitted's order: intra-node
 * hop, network hop, ring base latency, network floor, tree bandwidth; all Simple) row d is, or -1. */
static int nccl_fit_slot(const calib_nested_def *d)
{
    static const size_t at[5] = {offsetof(cost_calib, nccl.intra_hop_s[NCCL_SIMPLE]),
                                 offsetof(cost_calib, nccl.net_hop_s[NCCL_SIMPLE]),
                                 offsetof(cost_calib, nccl.base_lat_s[NCCL_RING][NCCL_SIMPLE]),
                                 offsetof(cost_calib, nccl.net_floor_s), offsetof(cost_calib, nccl.tree_bw)};
    for (int j = 0; j < 5; j++)
        if (d->offset == at[j])
            return j;
    return -1;
}

/* The nested objects of a written calibration, from the table (model/calib_params.h:
 * calib_nested): "kernels" when k's kernel models are in force (else the roofline of "$.gpu"
 * is, and no object is written), "nccl" when k has one, "frameworks" always. The collective
 * fit's NCCL values carry their standard errors and `fitted`, the others `kept`. */
static int nested_json(json_t *root, const cost_calib *k, const cal_fit_report *rep, const char *fitted,
                       const char *kept)
{
    int n;
    const calib_nested_def *defs = calib_nested(&n);
    if (k->kern.gemm_eff > 0) {
        json_t *ko = path_object(root, "$.kernels");
        if (!ko || json_object_set_new(ko, "fused_attention", json_string(k->kern.fa_version == 1 ? "xformers" : "fa2")))
            return -1;
    }
    for (int i = 0; i < n; i++) {
        const calib_nested_def *d = &defs[i];
        double v = calib_nested_get(k, d);
        if ((!strncmp(d->path, "$.kernels", 9) && !(k->kern.gemm_eff > 0)) ||
            (!strncmp(d->path, "$.nccl", 6) && !k->nccl.on) || (d->optional && d->store != CALIB_FLAG &&
                                                                 !strncmp(d->path, "$.kernels", 9) && !(v > 0)))
            continue;
        int slot = strncmp(d->path, "$.nccl", 6) ? -1 : nccl_fit_slot(d), fit = slot >= 0 && rep->nccl_fitted[slot];
        double sd = fit ? rep->nccl_sd[slot] : d->store == CALIB_PARAM ? ((const cost_param *)((const char *)k + d->offset))->sd : 0;
        json_t *o = path_object(root, d->path);
        json_t *j = pval(v * d->file_per_si, sd * d->file_per_si, fit ? fitted : kept);
        if (!o || !j || json_object_set_new(o, d->key, j))
            return -1;
    }
    return 0;
}

/* src, prefixed as the shipped files mark a value a nested object switches off
 * (calib_param_off_by), into buf. */
static const char *inactive_source(const cost_calib *k, const calib_param_def *d, const char *src, char *buf, size_t n)
{
    const char *by = calib_param_off_by(k, d);
    if (!by)
        return src;
    snprintf(buf, n, "INACTIVE while %s is present: %s", by, src);
    return buf;
}

int cal_calib_write(const char *path, const cost_calib *k, const cal_fit_report *rep, const cal_meas *m,
                    const char *base_name, sc_err *err)
{
    char fitted_c[256], fitted_g[256], fitted_m[200], kept[200];
    snprintf(fitted_c, sizeof fitted_c, "fitted: %d collectives, RMS relative residual %.3f", rep->coll_points,
             rep->coll_rms_rel);
    snprintf(fitted_g, sizeof fitted_g, "fitted: %d GEMMs, RMS relative residual %.3f", rep->gemm_points,
             rep->gemm_rms_rel);
    snprintf(fitted_m, sizeof fitted_m, "measured: mean of %d bandwidth runs", rep->membw_points);
    snprintf(kept, sizeof kept, "not measured: from %s", base_name ? base_name : "built-in defaults");
    char weak[320];
    snprintf(weak, sizeof weak, "not determined by the measurements (standard error not below the value): from %.180s",
             base_name ? base_name : "built-in defaults");
    char interf[512] = "";
    if (rep->interf_points) {
        int l = snprintf(interf, sizeof interf,
                         "measured by shardcast-bench: GEMM alone vs with concurrent %s, %d entries%s%.40s: median of "
                         "t_overlapped_s / t_alone_s - 1, sd = sample sd / sqrt(n)",
                         rep->interf_kind, rep->interf_points, m->date[0] ? ", " : "", m->date);
        if (rep->interf_fallback && l > 0 && (size_t)l < sizeof interf)
            l += snprintf(interf + l, sizeof interf - (size_t)l,
                          "; no NCCL entries: device copies stood in for a collective");
        if (rep->interf_median < 0 && l > 0 && (size_t)l < sizeof interf)
            l += snprintf(interf + l, sizeof interf - (size_t)l, "; median %.3g is noise, held at 0",
                          rep->interf_median);
        if (rep->interf_dropped && l > 0 && (size_t)l < sizeof interf)
            snprintf(interf + l, sizeof interf - (size_t)l, "; %d entries left out (traffic spanned < %.0f%% of the GEMMs)",
                     rep->interf_dropped, CAL_MIN_COVERAGE * 100);
    }
    int has_intra, has_net;
    coll_spans(m, &has_intra, &has_net);
    const char *intra = has_intra ? fitted_c : kept, *net = has_net ? fitted_c : kept;
    cost_tier it = (cost_tier)rep->intra_tier;
    /* every top-level parameter from the table (model/calib_params.h), each with the source of
     * its value: required ones first, then the optional ones that are set (the file's order) */
    json_t *root = json_pack("{s:s, s:s, s:s}", "name", k->name, "source", k->source, "cluster", k->cluster);
    int n_defs, oom = !root;
    const calib_param_def *defs = calib_params(&n_defs);
    for (int pass = 0; pass < 2 && !oom; pass++)
        for (int i = 0; i < n_defs && !oom; i++) {
            const calib_param_def *d = &defs[i];
            const cost_param *pv = calib_param_at((cost_calib *)k, d);
            if (d->optional != pass || (d->optional && !(pv->v > 0)))
                continue;
            const char *src = kept;
            switch (d->from) {
            case CALIB_FROM_BASE: break;
            case CALIB_FROM_GEMM:
                src = rep->gemm_points ? fitted_g : kept;
                if (rep->gemm_weak && pv == &k->gemm_overhead_s) /* gemm_weak: held */
                    src = rep->gemm_weak == 2 ? "fitted below 0: held at 0 (a fixed cost is not negative)" : weak;
                break;
            case CALIB_FROM_MEMBW: src = rep->membw_points ? fitted_m : kept; break;
            case CALIB_FROM_INTERF: src = rep->interf_points ? interf : kept; break;
            case CALIB_FROM_COLL: /* a link tier: from the collectives that spanned it */
                if (d->tier < 0)
                    src = m->n_coll ? fitted_c : kept;
                else
                    src = d->tier == TIER_NET ? net : (cost_tier)d->tier == it ? intra : kept;
                for (int p = 0; p < N_P; p++) /* weak_param: held at the base's value */
                    if (rep->weak & 1u << p && fit_field(k, p, it) == pv)
                        src = weak;
                break;
            }
            char note[768];
            src = inactive_source(k, d, src, note, sizeof note);
            json_t *obj = path_object(root, d->path);
            json_t *v = val(*pv, d->file_per_si, src);
            oom = !obj || !v || json_object_set_new(obj, d->key, v);
        }
    if (oom) {
        json_decref(root);
        root = NULL;
    }
    if (root && nested_json(root, k, rep, fitted_c, kept)) {
        json_decref(root);
        root = NULL;
    }
    if (!root)
        return sc_err_set(err, SC_ERUNTIME, path, "", "out of memory");
    char *txt = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(8));
    json_decref(root);
    if (!txt)
        return sc_err_set(err, SC_ERUNTIME, path, "", "out of memory (or a value that is not a number)");
    int rc = at_write(path, txt, strlen(txt), err);
    free(txt);
    return rc;
}
