/* accuracy_field.c — what each case's source ran, the bias per framework and per stack
 * macro-averaged over sources, the error by sequence length and pick/best per compare group (see
 * accuracy_field.h). Not here: the per-source statistics or the figures file as a whole
 * (accuracy_stats.c); loading cases (accuracy.c). Medians are GSL's. */
#include "accuracy_field.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accuracy_stats.h"

/* ---- "ran" ---------------------------------------------------------------------------------- */

/* The stacks a case may name (validation/README.md "What the source ran"). */
const char *const ACC_STACKS[] = {"megatron-core-te", "megatron-lm", "megatron-deepspeed", "deepspeed",
                                  "hf-trainer-deepspeed", "hf-accelerate-fsdp", "fsdp-trainer", "torchtitan",
                                  "olmo-core", "nanotron", "colossalai", "maxtext", "lightning", "atorch", "paddlenlp", "other", NULL};
/* Attention kernels: unfused (eager softmax(QK^T)V), Megatron's fused scale-mask-softmax, the
 * CUDA FlashAttention 1/2/3, the 2022 Triton FlashAttention, xformers, PyTorch SDPA (backend
 * unstated, or flash / cuDNN / memory-efficient), Transformer Engine's cuDNN fused attention. */
const char *const ACC_ATTENTION_KERNELS[] = {"unfused", "megatron-fused-softmax", "fa1", "fa1-triton", "fa2", "fa3",
                                             "xformers", "sdpa", "sdpa-flash", "sdpa-cudnn", "sdpa-efficient",
                                             "te-cudnn", "unstated", NULL};
static const char *const REDUCE[] = {"fp32", "bf16", "fp16", "unstated", NULL};
static const char *const CKPT[] = {"none", "full", "selective", "op", "save_dot_except_mlpwi", "save_qkv_proj", "partial", "unstated", NULL};

/* One of choices at $.ran.<key> into out. Not jr_enum: its message keeps the first 160
 * characters of the list, and the attention kernels and the stacks need more. */
static int ran_enum(jr *r, const json_t *o, const char *key, const char *const *choices, char *out, size_t n)
{
    char p[64], want[400] = "one of ";
    snprintf(p, sizeof p, "$.ran.%s", key);
    for (int i = 0; choices[i]; i++) {
        size_t l = strlen(want);
        snprintf(want + l, sizeof want - l, "%s\"%s\"", i ? ", " : "", choices[i]);
    }
    json_t *v = json_object_get(o, key);
    if (!v)
        return jr_missing(r, p, want);
    for (int i = 0; json_is_string(v) && choices[i]; i++)
        if (!strcmp(json_string_value(v), choices[i])) {
            snprintf(out, n, "%s", choices[i]);
            return 0;
        }
    char got[96]; /* "got" first: a long list may not fit the 256-character message whole */
    jr_show(v, got, sizeof got);
    return sc_err_set(r->err, SC_EINPUT, r->src, p, "got %s, expected %s", got, want);
}

int acc_ran_load(jr *r, const json_t *root, acc_ran *out)
{
    static const char *const keys[] = {"stack", "framework_version", "attention_kernel", "reduce_dtype",
                                       "checkpointing", "where", NULL};
    memset(out, 0, sizeof *out);
    json_t *o;
    int rc;
    if ((rc = jr_obj(r, root, "$", "ran", 0, &o)) || !o)
        return rc;
    if ((rc = jr_only_keys(r, o, "$.ran", keys)) || (rc = ran_enum(r, o, "stack", ACC_STACKS, out->stack, sizeof out->stack)) ||
        (rc = jr_str(r, o, "$.ran", "framework_version", 1, out->framework_version, sizeof out->framework_version)) ||
        (rc = ran_enum(r, o, "attention_kernel", ACC_ATTENTION_KERNELS, out->attention_kernel,
                       sizeof out->attention_kernel)) ||
        (rc = ran_enum(r, o, "reduce_dtype", REDUCE, out->reduce_dtype, sizeof out->reduce_dtype)) ||
        (rc = ran_enum(r, o, "checkpointing", CKPT, out->checkpointing, sizeof out->checkpointing)) ||
        (rc = jr_str(r, o, "$.ran", "where", 0, out->where, sizeof out->where)))
        return rc;
    if (!out->framework_version[0])
        return jr_bad(r, "$.ran.framework_version", "the version the source ran, or \"unstated\"",
                      json_object_get(o, "framework_version"));
    out->given = 1;
    return 0;
}

/* ---- small statistics ------------------------------------------------------------------------ */

double acc_mape(const double *e, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += fabs(e[i]);
    return n > 0 ? s / n : 0;
}

double acc_median_sort(double *v, int n)
{
    if (n <= 0)
        return NAN;
    gsl_sort(v, 1, (size_t)n);
    return gsl_stats_median_from_sorted_data(v, 1, (size_t)n);
}

static double err_of(const acc_row *r) { return r->predicted / r->measured - 1; }


static const char *str_or(const char *s, const char *dflt) { return s && s[0] ? s : dflt; }

static const char *key_of(const acc_row *r, acc_by by)
{
    return by == ACC_BY_FRAMEWORK ? str_or(r->framework, "unrecorded") : str_or(r->stack, "unrecorded");
}

/* ---- macro-averaged bias ------------------------------------------------------------------- */

/* The statistics of the rows whose key is m->key: per source the median and the MAPE, then the
 * mean over sources. work holds 2 n doubles. */
static void macro_fill(const acc_row *rows, int n, acc_by by, acc_macro *m, double *work)
{
    double *all = work, *one = work + n, sum_bias = 0, sum_mape = 0;
    int k_all = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(key_of(&rows[i], by), m->key))
            continue;
        if (!rows[i].ok) {
            m->n_not_run++;
            continue;
        }
        all[k_all++] = err_of(&rows[i]);
        int seen = 0; /* the source's first predicted case of this key opens its vote */
        for (int j = 0; j < i && !seen; j++)
            seen = rows[j].ok && !strcmp(key_of(&rows[j], by), m->key) && !strcmp(rows[j].source_id, rows[i].source_id);
        if (seen)
            continue;
        int k = 0;
        double abs_sum = 0;
        for (int j = i; j < n; j++)
            if (rows[j].ok && !strcmp(key_of(&rows[j], by), m->key) && !strcmp(rows[j].source_id, rows[i].source_id)) {
                one[k] = err_of(&rows[j]);
                abs_sum += fabs(one[k++]);
            }
        sum_bias += acc_median_sort(one, k);
        sum_mape += abs_sum / k;
        m->n_sources++;
    }
    m->n = k_all;
    m->bias_pooled_pct = 100 * acc_median_sort(all, k_all);
    m->bias_macro_pct = m->n_sources ? 100 * sum_bias / m->n_sources : NAN;
    m->mape_macro_pct = m->n_sources ? 100 * sum_mape / m->n_sources : NAN;
}

int acc_macro_by(const acc_row *rows, int n, acc_by by, acc_macro **out, int *n_out, sc_err *err)
{
    *out = calloc((size_t)(n ? n : 1), sizeof **out);
    double *work = malloc(sizeof(double) * 2 * (size_t)(n ? n : 1));
    *n_out = 0;
    if (!*out || !work) {
        free(*out);
        free(work);
        *out = NULL;
        return sc_err_set(err, SC_ERUNTIME, "accuracy", "", "out of memory");
    }
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = !strcmp(key_of(&rows[j], by), key_of(&rows[i], by));
        if (seen)
            continue;
        acc_macro *m = &(*out)[(*n_out)++];
        snprintf(m->key, sizeof m->key, "%s", key_of(&rows[i], by));
        macro_fill(rows, n, by, m, work);
    }
    free(work);
    return 0;
}

/* ---- sequence-length bands ----------------------------------------------------------------- */

int acc_seq_bands(const acc_row *rows, int n, acc_seqband out[ACC_N_SEQ_BANDS], sc_err *err)
{
    static const acc_seqband BANDS[ACC_N_SEQ_BANDS] = {
        {"<= 2k", 0, 2048, 0, 0, NAN, NAN},
        {"(2k, 4k]", 2048, 4096, 0, 0, NAN, NAN},
        {"(4k, 16k)", 4096, 16383, 0, 0, NAN, NAN},
        {">= 16k", 16383, 0, 0, 0, NAN, NAN},
    };
    double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
    if (!v)
        return sc_err_set(err, SC_ERUNTIME, "accuracy", "", "out of memory");
    for (int b = 0; b < ACC_N_SEQ_BANDS; b++) {
        acc_seqband *x = &out[b];
        *x = BANDS[b];
        double abs_sum = 0;
        for (int i = 0; i < n; i++) {
            const acc_row *r = &rows[i];
            if (!r->ok || r->seq_len <= x->lo || (x->hi && r->seq_len > x->hi))
                continue;
            int seen = 0;
            for (int j = 0; j < i && !seen; j++)
                seen = rows[j].ok && rows[j].seq_len > x->lo && (!x->hi || rows[j].seq_len <= x->hi) &&
                       !strcmp(rows[j].source_id, r->source_id);
            x->n_sources += !seen;
            v[x->n] = err_of(r);
            abs_sum += fabs(v[x->n++]);
        }
        x->mape_pct = x->n ? 100 * abs_sum / x->n : NAN;
        x->median_pct = 100 * acc_median_sort(v, x->n);
    }
    free(v);
    return 0;
}

/* ---- pick / best ------------------------------------------------------------------------------ */

void acc_decisions_free(acc_decisions *d)
{
    free(d->groups);
    free(d->sources);
    memset(d, 0, sizeof *d);
}

static void decide_group(const acc_row *rows, int n, int first, acc_decision *g)
{
    memset(g, 0, sizeof *g);
    g->group = rows[first].compare_group;
    g->source_id = rows[first].source_id;
    g->pick = g->best = -1;
    g->pick_best = NAN;
    for (int i = first; i < n; i++) {
        if (strcmp(rows[i].compare_group, g->group))
            continue;
        g->n++;
        if (!rows[i].ok)
            continue;
        g->n_run++;
        if (g->pick < 0 || rows[i].predicted > rows[g->pick].predicted)
            g->pick = i;
        if (g->best < 0 || rows[i].measured > rows[g->best].measured)
            g->best = i;
    }
    if (g->n_run >= 2)
        g->pick_best = rows[g->pick].measured / rows[g->best].measured;
}

/* Median and minimum of the judged groups of source id (NULL: all). v holds n_groups doubles. */
static void pickbest_of(const acc_decisions *d, const char *id, acc_pickbest *pb, double *v)
{
    snprintf(pb->source_id, sizeof pb->source_id, "%s", id ? id : "");
    pb->groups = 0;
    pb->min = NAN;
    for (int g = 0; g < d->n_groups; g++) {
        const acc_decision *x = &d->groups[g];
        if (!isfinite(x->pick_best) || (id && strcmp(x->source_id, id)))
            continue;
        v[pb->groups++] = x->pick_best;
        pb->min = isfinite(pb->min) && pb->min < x->pick_best ? pb->min : x->pick_best;
    }
    pb->median = acc_median_sort(v, pb->groups);
}

int acc_decide(const acc_row *rows, int n, acc_decisions *out, sc_err *err)
{
    memset(out, 0, sizeof *out);
    out->groups = calloc((size_t)(n ? n : 1), sizeof *out->groups);
    out->sources = calloc((size_t)(n ? n : 1), sizeof *out->sources);
    double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
    if (!out->groups || !out->sources || !v) {
        free(v);
        acc_decisions_free(out);
        return sc_err_set(err, SC_ERUNTIME, "accuracy", "", "out of memory");
    }
    for (int i = 0; i < n; i++) {
        if (!rows[i].compare_group || !rows[i].compare_group[0])
            continue;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = rows[j].compare_group && !strcmp(rows[j].compare_group, rows[i].compare_group);
        if (!seen)
            decide_group(rows, n, i, &out->groups[out->n_groups++]);
    }
    pickbest_of(out, NULL, &out->overall, v);
    for (int g = 0; g < out->n_groups; g++) {
        int seen = 0;
        for (int h = 0; h < g && !seen; h++)
            seen = !strcmp(out->groups[h].source_id, out->groups[g].source_id);
        if (!seen)
            pickbest_of(out, out->groups[g].source_id, &out->sources[out->n_sources++], v);
    }
    free(v);
    return 0;
}

/* ---- figures ---------------------------------------------------------------------------------- */

void acc_report_line(char *report, size_t len, int *worse, const char *fmt, ...)
{
    size_t used = strlen(report);
    va_list ap;
    va_start(ap, fmt);
    if (used < len)
        vsnprintf(report + used, len - used, fmt, ap);
    va_end(ap);
    used = strlen(report);
    if (used + 1 < len) {
        report[used] = '\n';
        report[used + 1] = '\0';
    }
    (*worse)++;
}

static json_t *num4(double v) { return isfinite(v) ? json_real(round(v * 1e4) / 1e4) : json_null(); }

static json_t *pb_json(const acc_pickbest *pb)
{
    return json_pack("{s:i, s:o, s:o}", "groups", pb->groups, "median", num4(pb->median), "min", num4(pb->min));
}

json_t *acc_decisions_json(const acc_decisions *d)
{
    json_t *src = json_object();
    for (int k = 0; src && k < d->n_sources; k++)
        json_object_set_new(src, d->sources[k].source_id, pb_json(&d->sources[k]));
    return src ? json_pack("{s:o, s:o}", "overall", pb_json(&d->overall), "sources", src) : NULL;
}

/* The committed {groups, median, min} at `at`; NAN for null. */
static int read_pb(jr *r, const json_t *o, const char *at, int *groups, double *median, double *min)
{
    static const char *const keys[] = {"groups", "median", "min", NULL};
    int rc;
    if (!json_is_object(o))
        return jr_bad(r, at, "an object {\"groups\", \"median\", \"min\"}", o);
    if ((rc = jr_only_keys(r, o, at, keys)) || (rc = jr_int(r, o, at, "groups", 0, 1 << 30, 1, groups)))
        return rc;
    *median = *min = NAN;
    json_t *m = json_object_get(o, "median"), *lo = json_object_get(o, "min");
    if (m && !json_is_null(m) && (rc = jr_min(r, o, at, "median", 0.0, 1, median)))
        return rc;
    if (lo && !json_is_null(lo) && (rc = jr_min(r, o, at, "min", 0.0, 1, min)))
        return rc;
    return 0;
}

static void compare_pb(const char *what, int g0, double med0, double min0, const acc_pickbest *now, double tol,
                       char *report, size_t len, int *worse)
{
    if (now->groups < g0)
        acc_report_line(report, len, worse, "%s: %d compare groups judged, committed %d", what, now->groups, g0);
    if (isfinite(med0) && (!isfinite(now->median) || now->median < med0 - tol))
        acc_report_line(report, len, worse, "%s: median pick/best %.3f, committed %.3f (worse by more than %.3f)", what,
                        now->median, med0, tol);
    if (isfinite(min0) && (!isfinite(now->min) || now->min < min0 - tol))
        acc_report_line(report, len, worse, "%s: lowest pick/best %.3f, committed %.3f (worse by more than %.3f)", what,
                        now->min, min0, tol);
}

int acc_decisions_check(jr *r, const json_t *o, const char *at, const acc_decisions *d, double tol, char *report,
                        size_t report_len, int *worse)
{
    static const char *const keys[] = {"overall", "sources", NULL};
    json_t *ov, *src;
    int rc, g0;
    double med0, min0;
    char sat[320];
    if (!o)
        return 0;
    if (!json_is_object(o))
        return jr_bad(r, at, "an object {\"overall\", \"sources\"}", o);
    if ((rc = jr_only_keys(r, o, at, keys)) || (rc = jr_obj(r, o, at, "overall", 1, &ov)) ||
        (rc = jr_obj(r, o, at, "sources", 1, &src)))
        return rc;
    snprintf(sat, sizeof sat, "%.200s.overall", at);
    if ((rc = read_pb(r, ov, sat, &g0, &med0, &min0)))
        return rc;
    compare_pb("pick/best overall", g0, med0, min0, &d->overall, tol, report, report_len, worse);
    const char *name;
    json_t *v;
    json_object_foreach(src, name, v) {
        snprintf(sat, sizeof sat, "%.160s.sources.%.100s", at, name);
        if ((rc = read_pb(r, v, sat, &g0, &med0, &min0)))
            return rc;
        acc_pickbest none = {"", 0, NAN, NAN};
        const acc_pickbest *now = &none;
        for (int k = 0; k < d->n_sources; k++)
            if (!strcmp(d->sources[k].source_id, name))
                now = &d->sources[k];
        char what[160];
        snprintf(what, sizeof what, "pick/best of source %.120s", name);
        compare_pb(what, g0, med0, min0, now, tol, report, report_len, worse);
    }
    return 0;
}
