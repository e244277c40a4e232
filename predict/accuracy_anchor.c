/* accuracy_anchor.c — cases as anchor runs, and the anchored accuracy (see accuracy_anchor.h).
 * Not here: the statistics of the shipped calibrations (accuracy_stats.c). */
#include "accuracy_anchor.h"
#include "accuracy_field.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int acc_case_anchor_run(const acc_case *c, cal_anchor_run *out, sc_err *err)
{
    memset(out, 0, sizeof *out);
    acc_outcome o;
    acc_run_case(c, PRED_MODEL, &o);
    if (o.status != ACC_OK && o.status != ACC_OOM)
        return sc_err_set(err, SC_EINPUT, c->file, "", "the case cannot be predicted (%s: %s), so it cannot anchor",
                          acc_status_name(o.status), o.why);
    snprintf(out->name, sizeof out->name, "%s", c->name);
    snprintf(out->file, sizeof out->file, "%s", c->file);
    out->cluster = &c->cluster;
    out->model = &c->model;
    out->training = &c->training;
    out->layout = &c->layout;
    out->nodes = c->nodes;
    /* tokens of one step = predicted step x predicted tokens/s; measured step = those tokens at
     * the measured rate. An OOM outcome still has its step; its tokens/s we recompute. */
    double pred_step = cal_anchor_predict(out, &c->cal);
    double tps = o.status == ACC_OK ? o.predicted_tps * o.step_s / pred_step : 0;
    if (o.status != ACC_OK) {
        /* the analytical engine's tokens per step do not depend on the fit: take them from a
         * prediction of the same point */
        pred_input in = {&c->cluster, &c->model, &c->training, c->nodes, &c->layout, &c->cal, NULL};
        pred_result res;
        if (pred_eval(&in, PRED_MODEL, NULL, &res, err))
            return SC_EINPUT;
        tps = res.r.tokens_per_s / res.gpus;
    }
    out->step_s = pred_step * tps / c->measured_tps;
    return 0;
}

/* ---- accuracy --anchored ------------------------------------------------------------------ */

typedef struct member {
    int idx;      /* case index                                   */
    int gpus;
} member;

static int by_gpus(const void *a, const void *b)
{
    const member *x = a, *y = b;
    return x->gpus != y->gpus ? (x->gpus > y->gpus) - (x->gpus < y->gpus) : (x->idx > y->idx) - (x->idx < y->idx);
}

/* Whether a case's step runs partly on the host: ZeRO-Offload / ZeRO-Infinity update the
 * optimizer states on the CPU and move them over PCIe. None of the stack parameters (GPU kernel
 * efficiency, the network's, the per-hook overhead) describes that part, so an anchor fitted on a
 * GPU-only run says nothing about it and one fitted on an offloaded run mixes it into the GPU
 * kernels' level: the two kinds are anchored apart (on deepspeed-azure-blog, one group of 47 runs
 * mixed 36 GPU-only 175B runs with 12 offloaded 530B / 1T ones). */
static int on_host(const acc_case *c) { return c->layout_ok && spec_layout_states_at(c->layout.kind) == SPEC_AT_HOST; }

/* Whether two cases were published in one document: their "source" up to its first space or comma
 * ("owner/repo@commit:path", a URL, or a paper's first author). An anchor fits the stack as one
 * measurement campaign ran it; a source folder may hold several (nvidia-dgxc-benchmarking: one
 * README per model and container release, 24.11 to 25.05; zeropp-blog: the blog's 384-GPU
 * figures and the tutorial's 64-GPU log, whose network the tutorial does not state), and the
 * issue's use is the same job at another scale or layout. Anchored across documents, a release's
 * level was carried to another release (dgxc 24.11 GPT-175B +21 % from a 25.04 anchor) and the
 * tutorial's run to the blog's (+189 %). */
static int same_document(const acc_case *a, const acc_case *b)
{
    size_t na = strcspn(a->source, " ,"), nb = strcspn(b->source, " ,");
    return na == nb && !strncmp(a->source, b->source, na);
}

/* The runnable cases of group (source, document, cluster, framework, offloaded or not) starting
 * at case i0 not yet taken. */
static int group_of(const acc_suite *s, const acc_outcome *o, int i0, int *taken, member *m)
{
    const acc_case *a = acc_case_at(s, i0);
    int n = 0;
    for (int i = i0; i < acc_n_cases(s); i++) {
        const acc_case *c = acc_case_at(s, i);
        if (taken[i] || o[i].status != ACC_OK || strcmp(c->source_id, a->source_id) ||
            strcmp(c->cluster.name, a->cluster.name) || strcmp(c->framework, a->framework) || on_host(c) != on_host(a) ||
            !same_document(c, a))
            continue;
        taken[i] = 1;
        m[n++] = (member){i, c->gpus};
    }
    return n;
}

/* Anchor on the median-GPU member of m (sorted), predict the others: errors appended to err_out
 * (fraction, > 0 too optimistic) and the shipped calibration's for the same runs to ship_out. */
static int anchor_group(const acc_suite *s, member *m, int n, double *err_out, double *ship_out, int *k,
                        const acc_outcome *o, acc_anchor_src *src, acc_anchor_sum *sum, sc_err *err)
{
    qsort(m, (size_t)n, sizeof *m, by_gpus);
    const acc_case *ac = acc_case_at(s, m[(n - 1) / 2].idx);
    cal_anchor_run run;
    int rc = acc_case_anchor_run(ac, &run, err);
    if (rc)
        return rc;
    cost_calib fitted;
    cal_anchor_report rep;
    if ((rc = cal_anchor_fit(&run, 1, &ac->cal, &fitted, &rep, err)))
        return rc;
    size_t l = strlen(src->anchors);
    snprintf(src->anchors + l, sizeof src->anchors - l, "%s%s", l ? ", " : "", ac->name);
    for (int j = 0; j < n; j++) {
        if (j == (n - 1) / 2)
            continue;
        const acc_case *c = acc_case_at(s, m[j].idx);
        cal_anchor_run r;
        if ((rc = acc_case_anchor_run(c, &r, err)))
            return rc;
        /* error in tokens/s = measured step / predicted step - 1 (same tokens per step) */
        err_out[*k] = r.step_s / cal_anchor_predict(&r, &fitted) - 1;
        ship_out[*k] = o[m[j].idx].error;
        if (sum->n_held < ACC_ANCHOR_MAX_RUNS) {
            acc_anchor_held *h = &sum->held[sum->n_held++];
            snprintf(h->name, sizeof h->name, "%s", c->name);
            snprintf(h->anchor, sizeof h->anchor, "%s", ac->name);
            h->src = (int)(src - sum->src);
            h->error = err_out[*k];
            h->shipped = ship_out[*k];
        }
        (*k)++;
    }
    return 0;
}

/* The median of e[0..n) without reordering e (acc_median_sort on a copy); 0 when n = 0. */
static double median_of(const double *e, int n)
{
    if (!n)
        return 0;
    double *t = malloc(sizeof(double) * (size_t)n);
    if (!t)
        return NAN;
    memcpy(t, e, sizeof(double) * (size_t)n);
    double v = acc_median_sort(t, n);
    free(t);
    return v;
}

int acc_anchored(const acc_suite *s, acc_anchor_sum *out, sc_err *err)
{
    memset(out, 0, sizeof *out);
    int n = acc_n_cases(s), rc = 0;
    acc_outcome *o = calloc((size_t)(n ? n : 1), sizeof *o);
    int *taken = calloc((size_t)(n ? n : 1), sizeof *taken);
    member *m = malloc(sizeof *m * (size_t)(n ? n : 1));
    double *all = malloc(sizeof(double) * (size_t)(n ? n : 1)), *ship = malloc(sizeof(double) * (size_t)(n ? n : 1));
    int *src_of = malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!o || !taken || !m || !all || !ship || !src_of)
        rc = sc_err_set(err, SC_ERUNTIME, "accuracy", "", "out of memory");
    for (int i = 0; i < n && !rc; i++)
        acc_run_case(acc_case_at(s, i), PRED_MODEL, &o[i]);
    int k = 0;
    for (int i = 0; i < n && !rc; i++) {
        if (taken[i])
            continue;
        int g = group_of(s, o, i, taken, m);
        if (g < 3)
            continue;
        const char *sid = acc_case_at(s, m[0].idx)->source_id;
        acc_anchor_src *src = NULL;
        for (int q = 0; q < out->n_src; q++)
            if (!strcmp(out->src[q].source_id, sid))
                src = &out->src[q];
        if (!src) {
            if (out->n_src == ACC_ANCHOR_MAX_SOURCES) {
                rc = sc_err_set(err, SC_EINPUT, "accuracy", "", "more than %d sources", ACC_ANCHOR_MAX_SOURCES);
                break;
            }
            src = &out->src[out->n_src++];
            snprintf(src->source_id, sizeof src->source_id, "%s", sid);
        }
        int k0 = k;
        if ((rc = anchor_group(s, m, g, all, ship, &k, o, src, out, err)))
            break;
        for (int j = k0; j < k; j++)
            src_of[j] = (int)(src - out->src);
        double prev_abs = src->mape * src->n, prev_ship = src->shipped_mape * src->n;
        src->groups++;
        src->n += k - k0;
        src->mape = (prev_abs + acc_mape(all + k0, k - k0) * (k - k0)) / src->n;
        src->shipped_mape = (prev_ship + acc_mape(ship + k0, k - k0) * (k - k0)) / src->n;
    }
    if (!rc) {
        out->n = k;
        out->mape = acc_mape(all, k);
        out->bias = median_of(all, k);
        out->shipped_mape = acc_mape(ship, k);
    }
    /* per-source bias: the median of its errors */
    for (int q = 0; q < out->n_src && !rc; q++) {
        int nq = 0;
        for (int j = 0; j < k; j++)
            if (src_of[j] == q)
                m[nq++].idx = j;
        double *e = ship; /* reused: the shipped errors are summed already */
        for (int j = 0; j < nq; j++)
            e[j] = all[m[j].idx];
        out->src[q].bias = median_of(e, nq);
    }
    free(o), free(taken), free(m), free(all), free(ship), free(src_of);
    return rc;
}
