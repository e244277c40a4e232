/* accuracy_stats.c — the statistics over the suite's results and the committed figures (see
 * accuracy_stats.h): rows in, summaries out; figures.json written, read back and compared. Not
 * here: case files or running them (accuracy.c). Statistics are GSL's (median, Spearman). */
#include "accuracy_stats.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/jsonrd.h"

#define ACC_PICKBEST_TOL 0.005 /* a pick/best median or minimum may fall this much (rounding) */

/* ---- statistics ------------------------------------------------------------------------- */

/* n, MAPE, median signed error and (when rank) Spearman of the rows in idx[0..k). */
static int stats_of(const acc_row *rows, const int *idx, int k, int rank, acc_stats *st, double *work)
{
    double *err = work, *pred = work + k, *meas = work + 2 * k, *tmp = work + 3 * k;
    int n = 0;
    st->n_not_run = 0;
    for (int i = 0; i < k; i++) {
        const acc_row *r = &rows[idx[i]];
        if (!r->ok) {
            st->n_not_run++;
            continue;
        }
        err[n] = r->predicted / r->measured - 1;
        pred[n] = r->predicted;
        meas[n] = r->measured;
        n++;
    }
    st->n = n;
    st->mape_pct = st->bias_pct = st->spearman = NAN;
    if (n == 0)
        return 0;
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += fabs(err[i]);
    st->mape_pct = 100 * sum / n;
    gsl_sort(err, 1, (size_t)n);
    st->bias_pct = 100 * gsl_stats_median_from_sorted_data(err, 1, (size_t)n);
    if (rank && n >= 3) {
        double r = gsl_stats_spearman(pred, 1, meas, 1, (size_t)n, tmp);
        st->spearman = isfinite(r) ? r : NAN; /* a constant side has no ranking */
    }
    return 0;
}

void acc_summary_free(acc_summary *s)
{
    free(s->sources);
    free(s->pairs);
    free(s->by_framework);
    free(s->by_stack);
    acc_decisions_free(&s->decisions);
    memset(s, 0, sizeof *s);
}

/* The field's view of the rows (accuracy_field.h) into out; on failure out is freed. */
static int field_view(const acc_row *rows, int n, acc_summary *out, sc_err *err)
{
    int rc;
    if ((rc = acc_macro_by(rows, n, ACC_BY_FRAMEWORK, &out->by_framework, &out->n_by_framework, err)) ||
        (rc = acc_macro_by(rows, n, ACC_BY_STACK, &out->by_stack, &out->n_by_stack, err)) ||
        (rc = acc_seq_bands(rows, n, out->seq_bands, err)) || (rc = acc_decide(rows, n, &out->decisions, err)))
        acc_summary_free(out);
    return rc;
}

int acc_summarize(const acc_row *rows, int n, acc_summary *out, sc_err *err)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < n; i++)
        if (!(isfinite(rows[i].measured) && rows[i].measured > 0) ||
            (rows[i].ok && !(isfinite(rows[i].predicted) && rows[i].predicted > 0)))
            return sc_err_set(err, SC_ERUNTIME, rows[i].name, "", "expected finite positive tokens/s, got predicted %g, measured %g",
                              rows[i].predicted, rows[i].measured);
    int *idx = malloc(sizeof(int) * (size_t)(n ? n : 1));
    double *work = malloc(sizeof(double) * 5 * (size_t)(n ? n : 1));
    out->sources = calloc((size_t)(n ? n : 1), sizeof *out->sources);
    int pair_cap = 16;
    out->pairs = calloc((size_t)pair_cap, sizeof *out->pairs);
    if (!idx || !work || !out->sources || !out->pairs) {
        free(idx);
        free(work);
        acc_summary_free(out);
        return sc_err_set(err, SC_ERUNTIME, "accuracy", "", "out of memory");
    }
    /* overall */
    for (int i = 0; i < n; i++)
        idx[i] = i;
    stats_of(rows, idx, n, 0, &out->overall, work);
    /* per source, in order of first appearance */
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = !strcmp(rows[j].source_id, rows[i].source_id);
        if (seen)
            continue;
        int k = 0;
        for (int j = i; j < n; j++)
            if (!strcmp(rows[j].source_id, rows[i].source_id))
                idx[k++] = j;
        acc_stats *st = &out->sources[out->n_sources++];
        snprintf(st->source_id, sizeof st->source_id, "%s", rows[i].source_id);
        stats_of(rows, idx, k, 1, st, work);
    }
    /* layout pairs of each compare group, groups in order of first appearance */
    for (int i = 0; i < n; i++) {
        if (!rows[i].compare_group[0])
            continue;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = !strcmp(rows[j].compare_group, rows[i].compare_group);
        if (seen)
            continue;
        for (int a = i; a < n; a++)
            for (int b = a + 1; b < n; b++) {
                const acc_row *ra = &rows[a], *rb = &rows[b];
                if (strcmp(ra->compare_group, rows[i].compare_group) || strcmp(rb->compare_group, rows[i].compare_group) ||
                    !strcmp(ra->layout, rb->layout))
                    continue;
                if (out->n_pairs == pair_cap) {
                    acc_pair *more = realloc(out->pairs, sizeof *more * (size_t)pair_cap * 2);
                    if (!more) {
                        free(idx);
                        free(work);
                        acc_summary_free(out);
                        return sc_err_set(err, SC_ERUNTIME, "accuracy", "", "out of memory");
                    }
                    out->pairs = more;
                    pair_cap *= 2;
                }
                acc_pair *p = &out->pairs[out->n_pairs++];
                memset(p, 0, sizeof *p);
                p->a = a;
                p->b = b;
                p->measured_ratio = ra->measured / rb->measured;
                p->predicted_ratio = NAN;
                if (!ra->ok || !rb->ok) {
                    p->state = ACC_PAIR_NOT_RUN;
                    continue;
                }
                p->predicted_ratio = ra->predicted / rb->predicted;
                if (ra->measured == rb->measured)
                    p->state = ACC_PAIR_TIE;
                else
                    p->state = (ra->measured > rb->measured) == (ra->predicted > rb->predicted) ? ACC_PAIR_RIGHT
                                                                                                  : ACC_PAIR_WRONG;
                if (p->state == ACC_PAIR_TIE)
                    continue;
                int right = p->state == ACC_PAIR_RIGHT;
                out->overall.pairs++;
                out->overall.pairs_right += right;
                if (!strcmp(ra->source_id, rb->source_id))
                    for (int s = 0; s < out->n_sources; s++)
                        if (!strcmp(out->sources[s].source_id, ra->source_id)) {
                            out->sources[s].pairs++;
                            out->sources[s].pairs_right += right;
                        }
            }
    }
    free(idx);
    free(work);
    return field_view(rows, n, out, err);
}

/* ---- committed figures ----------------------------------------------------------------- */

/* A number or null (never NaN in a file). */
static json_t *num(double v) { return isfinite(v) ? json_real(round(v * 1e4) / 1e4) : json_null(); }

static json_t *stats_json(const acc_stats *st)
{
    return json_pack("{s:i, s:i, s:o, s:o}", "n", st->n, "not_run", st->n_not_run, "mape_pct", num(st->mape_pct),
                     "bias_pct", num(st->bias_pct));
}

char *acc_figures_dump(const pred_engine *engines, const acc_summary *const *summaries, int n_engines)
{
    json_t *eng = json_object();
    for (int i = 0; eng && i < n_engines; i++) {
        const acc_summary *s = summaries[i];
        json_t *src = json_object();
        for (int k = 0; src && k < s->n_sources; k++)
            json_object_set_new(src, s->sources[k].source_id, stats_json(&s->sources[k]));
        json_object_set_new(eng, pred_engine_name(engines[i]),
                            json_pack("{s:o, s:o, s:o*}", "overall", stats_json(&s->overall), "sources", src,
                                      "decisions", acc_decisions_json(&s->decisions)));
    }
    json_t *root = json_pack("{s:s, s:s, s:o}", "schema", "shardcast-figures/1", "note",
                             "written by 'shardcast accuracy --write-figures' (make accuracy-report); 'make check' "
                             "fails when a MAPE gets worse by more than 0.5 points or fewer cases run, or a pick/best median or "
                             "minimum falls by more than 0.005",
                             "engines", eng);
    if (!root)
        return NULL;
    char *text = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    json_decref(root);
    return text;
}

/* Committed {n, not_run, mape_pct, bias_pct} at `at`; mape NAN when null. */
static int read_stats(jr *r, const json_t *o, const char *at, int *n, double *mape)
{
    static const char *const keys[] = {"n", "not_run", "mape_pct", "bias_pct", NULL};
    int rc, nr = 0;
    if (!json_is_object(o))
        return jr_bad(r, at, "an object {\"n\", \"not_run\", \"mape_pct\", \"bias_pct\"}", o);
    if ((rc = jr_only_keys(r, o, at, keys)) || (rc = jr_int(r, o, at, "n", 0, 1 << 30, 1, n)) ||
        (rc = jr_int(r, o, at, "not_run", 0, 1 << 30, 0, &nr)))
        return rc;
    json_t *m = json_object_get(o, "mape_pct");
    *mape = NAN;
    if (m && !json_is_null(m) && (rc = jr_min(r, o, at, "mape_pct", 0.0, 1, mape)))
        return rc;
    return 0;
}

static void compare(const char *what, int n0, double mape0, const acc_stats *now, double tol, char *report,
                    size_t len, int *worse)
{
    if (now->n < n0)
        acc_report_line(report, len, worse, "%s: %d cases run, committed %d (%d fewer)", what, now->n, n0, n0 - now->n);
    if (isfinite(mape0) && isfinite(now->mape_pct) && now->mape_pct > mape0 + tol)
        acc_report_line(report, len, worse, "%s: MAPE %.2f%%, committed %.2f%% (worse by %.2f points, more than %.2f)", what,
             now->mape_pct, mape0, now->mape_pct - mape0, tol);
}

int acc_figures_check(const char *path, pred_engine e, const acc_summary *s, double tol_pts, char *report,
                      size_t report_len, int *worse, sc_err *err)
{
    *worse = 0;
    if (report_len)
        report[0] = '\0';
    jr r = {path, err};
    json_t *root;
    int rc = jr_load_root(&r, NULL, &root);
    if (rc)
        return rc;
    static const char *const keys[] = {"schema", "note", "engines", NULL};
    char schema[40];
    json_t *engines, *eng, *src;
    const char *ename = pred_engine_name(e);
    char at[160];
    snprintf(at, sizeof at, "$.engines.%s", ename);
    if ((rc = jr_only_keys(&r, root, "$", keys)) || (rc = jr_str(&r, root, "$", "schema", 1, schema, sizeof schema)))
        goto out;
    if (strcmp(schema, "shardcast-figures/1")) {
        rc = jr_bad(&r, "$.schema", "\"shardcast-figures/1\"", json_object_get(root, "schema"));
        goto out;
    }
    if ((rc = jr_obj(&r, root, "$", "engines", 1, &engines)))
        goto out;
    if (!(eng = json_object_get(engines, ename))) {
        rc = jr_missing(&r, at, "the figures of this engine (rewrite them with --write-figures)");
        goto out;
    }
    static const char *const ekeys[] = {"overall", "sources", "decisions", NULL};
    json_t *ov;
    int n0;
    double mape0;
    char sat[320];
    if (!json_is_object(eng)) {
        rc = jr_bad(&r, at, "an object", eng);
        goto out;
    }
    if ((rc = jr_only_keys(&r, eng, at, ekeys)) || (rc = jr_obj(&r, eng, at, "overall", 1, &ov)) ||
        (rc = jr_obj(&r, eng, at, "sources", 1, &src)))
        goto out;
    snprintf(sat, sizeof sat, "%s.overall", at);
    if ((rc = read_stats(&r, ov, sat, &n0, &mape0)))
        goto out;
    compare("overall", n0, mape0, &s->overall, tol_pts, report, report_len, worse);
    const char *name;
    json_t *v;
    json_object_foreach(src, name, v) {
        snprintf(sat, sizeof sat, "%s.sources.%.100s", at, name);
        if ((rc = read_stats(&r, v, sat, &n0, &mape0)))
            goto out;
        const acc_stats *now = NULL;
        for (int k = 0; k < s->n_sources && !now; k++)
            if (!strcmp(s->sources[k].source_id, name))
                now = &s->sources[k];
        char what[160];
        snprintf(what, sizeof what, "source %.120s", name);
        if (!now) {
            if (n0 > 0)
                acc_report_line(report, report_len, worse, "%s: no cases now, committed %d (rewrite the figures if it was removed)",
                     what, n0);
            continue;
        }
        compare(what, n0, mape0, now, tol_pts, report, report_len, worse);
    }
    snprintf(sat, sizeof sat, "%s.decisions", at);
    rc = acc_decisions_check(&r, json_object_get(eng, "decisions"), sat, &s->decisions, ACC_PICKBEST_TOL, report,
                             report_len, worse);
out:
    json_decref(root);
    return rc;
}
