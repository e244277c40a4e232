/* accuracy.c — `shardcast accuracy [DIR]`: predict every published case under validation/ with
 * the shipped calibrations (predict/accuracy), print the per-case signed errors, the per-source
 * and overall statistics and the layout-order checks; --json, -o cases.csv, --markdown (the
 * report docs/ACCURACY.md), --plot-data (for plots/accuracy.gp), --check / --write-figures (the
 * committed figures make check guards). Not here: loading cases or statistics (predict/). */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/atomic.h"
#include "../base/proc.h"
#include "../predict/accuracy.h"
#include "../predict/results.h"
#include "commands.h"
#include "common.h"

static const char HELP[] =
    "usage: shardcast accuracy [DIR] [--engine model|sim|both] [--json] [-o cases.csv]\n"
    "                          [--check FILE] [--write-figures FILE] [--markdown FILE]\n\n"
    "Predicts every published end-to-end training measurement under DIR (default:\n"
    "$SHARDCAST_VALIDATION, else the validation/ directory beside the binary; one JSON case per\n"
    "file in DIR/<source_id>/, schema in\n"
    "validation/README.md) with the shipped calibrations, and compares in tokens/s per GPU:\n"
    "error = predicted / measured - 1 (positive: shardcast is too optimistic). Prints each case,\n"
    "then per source and overall: cases predicted, cases that could not be (with why), MAPE,\n"
    "median signed error (bias), Spearman rank correlation within the source, and for every pair\n"
    "of layouts measured at the same point (compare_group) whether the predicted order is right.\n\n"
    "options:\n"
    "  --engine E             model (analytical), sim (simulator) or both (default)\n"
    "  --json                 machine-readable output on stdout\n"
    "  -o, --out FILE         every case and engine as CSV (written whole or not at all)\n"
    "  --check FILE           compare with committed figures (validation/figures.json): exit 1\n"
    "                         when the overall or a source's MAPE is worse by more than 0.5\n"
    "                         points, or fewer cases run\n"
    "  --write-figures FILE   write the figures of this run to FILE (make accuracy-report)\n"
    "  --markdown FILE        write the report (docs/ACCURACY.md)\n"
    "  --plot-data FILE       write the points for plots/accuracy.gp (model engine, by source)\n"
    "  --source ID            only the cases of DIR/ID/ (while writing them)\n"
    "  --progress             progress on stderr even when it is not a terminal\n\n"
    "Exit status: 0 ok; 1 a case failed to evaluate, or --check found a regression; 2 bad input\n"
    "(a broken case file is named with its JSON path).\n";

#define CHECK_TOL_PTS 0.5

typedef struct opts {
    const char *dir, *csv, *check, *figures, *markdown, *plot_data, *source;
    int json, progress, engines[PRED_N_ENGINES]; /* engines[e]: run engine e */
} opts;

typedef struct run {
    const opts *o;
    acc_suite *s;
    int n;
    pred_engine eng[PRED_N_ENGINES];
    int n_eng;
    acc_summary sum[PRED_N_ENGINES]; /* by index into eng[] */
    acc_row *rows[PRED_N_ENGINES];
    char dir[4096];
} run;

static const char *engine_long(pred_engine e) { return e == PRED_SIM ? "simulator" : "analytical model"; }

/* "-" for an undefined number, else v with `dec` decimals ("%+.1f" when sign). */
static const char *fmt_num(char *buf, size_t n, int sign, int dec, double v)
{
    if (!isfinite(v))
        snprintf(buf, n, "-");
    else if (sign)
        snprintf(buf, n, "%+.*f", dec, v);
    else
        snprintf(buf, n, "%.*f", dec, v);
    return buf;
}

static void progress(void *ctx, int done, int total, const acc_case *c)
{
    (void)c;
    fprintf(stderr, "\raccuracy: %s %d/%d cases", (const char *)ctx, done, total);
    if (done == total)
        fputc('\n', stderr);
}

/* The status column of a case: "ok", or the reason; per engine when they differ. */
static void status_text(const run *r, int i, char *buf, size_t n)
{
    const acc_outcome *o0 = acc_outcome_at(r->s, i, r->eng[0]);
    int same = 1;
    for (int k = 1; k < r->n_eng; k++) {
        const acc_outcome *ok = acc_outcome_at(r->s, i, r->eng[k]);
        same = same && ok->status == o0->status && !strcmp(ok->why, o0->why);
    }
    if (same) {
        if (o0->status == ACC_OK)
            snprintf(n ? buf : buf, n, "ok");
        else
            snprintf(buf, n, "%s: %s", acc_status_name(o0->status), o0->why);
        return;
    }
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < r->n_eng && used < n; k++) {
        const acc_outcome *ok = acc_outcome_at(r->s, i, r->eng[k]);
        int w = snprintf(buf + used, n - used, "%s%s: %s%s%s", k ? "; " : "", pred_engine_name(r->eng[k]),
                         acc_status_name(ok->status), ok->status == ACC_OK ? "" : " ", ok->status == ACC_OK ? "" : ok->why);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

static int width_of(const run *r, int field, int least)
{
    int w = least;
    for (int i = 0; i < r->n; i++) {
        const acc_case *c = acc_case_at(r->s, i);
        const char *s = field == 0 ? c->name : field == 1 ? c->source_id : c->layout_str;
        if ((int)strlen(s) > w)
            w = (int)strlen(s);
    }
    return w;
}

static const char *pair_word(acc_pair_state s)
{
    return s == ACC_PAIR_RIGHT ? "right" : s == ACC_PAIR_WRONG ? "WRONG" : s == ACC_PAIR_TIE ? "tie" : "not run";
}

/* The clusters predicted with built-in default calibrations (no calibrations/<name>.json), as
 * "a, b (k cases)" into buf; 0 when none. */
static int default_calibs(const run *r, char *buf, size_t n)
{
    int k = 0;
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < r->n; i++) {
        const acc_case *c = acc_case_at(r->s, i);
        if (c->calib_path[0])
            continue;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = !acc_case_at(r->s, j)->calib_path[0] && !strcmp(acc_case_at(r->s, j)->cluster.name, c->cluster.name);
        k++;
        if (!seen && used < n) {
            int w = snprintf(buf + used, n - used, "%s%s", used ? ", " : "", c->cluster.name);
            used += w > 0 ? (size_t)w : 0;
        }
    }
    if (k && used < n)
        snprintf(buf + used, n - used, " (%d case%s)", k, k == 1 ? "" : "s");
    return k;
}

/* ---- text ---------------------------------------------------------------------------------- */

static void print_text(const run *r)
{
    char b1[64], b2[64], st[600];
    int wn = width_of(r, 0, 4), ws = width_of(r, 1, 6), wlay = width_of(r, 2, 6);
    printf("%d case%s from %d source%s in %s; tokens/s per GPU; err = predicted / measured - 1 (+: too optimistic)\n\n",
           r->n, r->n == 1 ? "" : "s", r->sum[0].n_sources, r->sum[0].n_sources == 1 ? "" : "s", r->dir);
    printf("%-*s  %-*s  %-*s %6s %10s", wn, "case", ws, "source", wlay, "layout", "GPUs", "measured");
    for (int k = 0; k < r->n_eng; k++)
        printf(" %10s %7s", pred_engine_name(r->eng[k]), "err %");
    printf("  status\n");
    for (int i = 0; i < r->n; i++) {
        const acc_case *c = acc_case_at(r->s, i);
        printf("%-*s  %-*s  %-*s %6d %10.1f", wn, c->name, ws, c->source_id, wlay, c->layout_str, c->gpus, c->measured_tps);
        for (int k = 0; k < r->n_eng; k++) {
            const acc_outcome *o = acc_outcome_at(r->s, i, r->eng[k]);
            int ok = o->status == ACC_OK;
            printf(" %10s %7s", fmt_num(b1, sizeof b1, 0, 1, ok ? o->predicted_tps : NAN),
                   fmt_num(b2, sizeof b2, 1, 1, ok ? 100 * o->error : NAN));
        }
        status_text(r, i, st, sizeof st);
        printf("  %s\n", st);
    }
    for (int k = 0; k < r->n_eng; k++) {
        const acc_summary *s = &r->sum[k];
        printf("\nengine %s (%s)\n", pred_engine_name(r->eng[k]), engine_long(r->eng[k]));
        printf("%-*s %5s %8s %8s %8s %9s  %s\n", ws, "source", "n", "not run", "MAPE %", "bias %", "Spearman",
               "layout order right");
        for (int j = 0; j <= s->n_sources; j++) {
            const acc_stats *x = j < s->n_sources ? &s->sources[j] : &s->overall;
            char b3[64], pairs[64];
            if (x->pairs)
                snprintf(pairs, sizeof pairs, "%d of %d", x->pairs_right, x->pairs);
            else
                snprintf(pairs, sizeof pairs, "-");
            printf("%-*s %5d %8d %8s %8s %9s  %s\n", ws, j < s->n_sources ? x->source_id : "overall", x->n,
                   x->n_not_run, fmt_num(b1, sizeof b1, 0, 1, x->mape_pct), fmt_num(b2, sizeof b2, 1, 1, x->bias_pct),
                   fmt_num(b3, sizeof b3, 0, 2, x->spearman), pairs);
        }
    }
    char dc[1024];
    if (default_calibs(r, dc, sizeof dc))
        printf("\nbuilt-in default calibration (no calibrations/<cluster>.json) for: %s\n", dc);
    const acc_summary *s0 = &r->sum[0];
    if (s0->n_pairs) {
        int wg = 5;
        for (int p = 0; p < s0->n_pairs; p++) {
            int l = (int)strlen(acc_case_at(r->s, s0->pairs[p].a)->compare_group);
            wg = l > wg ? l : wg;
        }
        printf("\nlayout order within compare groups (a / b in tokens/s per GPU)\n");
        printf("%-*s  %-*s  %-*s %12s", wg, "group", wlay, "a", wlay, "b", "measured a/b");
        for (int k = 0; k < r->n_eng; k++) {
            char h[32];
            snprintf(h, sizeof h, "%s a/b", pred_engine_name(r->eng[k]));
            printf(" %13s %-*s", h, k + 1 < r->n_eng ? 7 : 0, "order");
        }
        printf("\n");
        for (int p = 0; p < s0->n_pairs; p++) {
            const acc_case *a = acc_case_at(r->s, s0->pairs[p].a), *b = acc_case_at(r->s, s0->pairs[p].b);
            printf("%-*s  %-*s  %-*s %12.3f", wg, a->compare_group, wlay, a->layout_str, wlay, b->layout_str,
                   s0->pairs[p].measured_ratio);
            for (int k = 0; k < r->n_eng; k++) {
                const acc_pair *q = &r->sum[k].pairs[p];
                printf(" %13s %-*s", fmt_num(b1, sizeof b1, 0, 3, q->predicted_ratio), k + 1 < r->n_eng ? 7 : 0,
                       pair_word(q->state));
            }
            printf("\n");
        }
    }
}

/* ---- JSON --------------------------------------------------------------------------------- */

static json_t *jnum(double v) { return isfinite(v) ? json_real(v) : json_null(); }
static json_t *jstr_or_null(const char *s) { return s[0] ? json_string(s) : json_null(); }

static json_t *stats_json(const acc_stats *x)
{
    return json_pack("{s:i, s:i, s:o, s:o, s:o, s:i, s:i}", "n", x->n, "not_run", x->n_not_run, "mape_pct",
                     jnum(x->mape_pct), "bias_pct", jnum(x->bias_pct), "spearman", jnum(x->spearman), "pairs", x->pairs,
                     "pairs_right", x->pairs_right);
}

static int print_json(const run *r)
{
    json_t *cases = json_array(), *engines = json_array(), *summary = json_object(), *pairs = json_array();
    for (int k = 0; k < r->n_eng; k++)
        json_array_append_new(engines, json_string(pred_engine_name(r->eng[k])));
    for (int i = 0; i < r->n; i++) {
        const acc_case *c = acc_case_at(r->s, i);
        json_t *res = json_object();
        for (int k = 0; k < r->n_eng; k++) {
            const acc_outcome *o = acc_outcome_at(r->s, i, r->eng[k]);
            int ok = o->status == ACC_OK, ran = ok || o->status == ACC_OOM;
            json_object_set_new(res, pred_engine_name(r->eng[k]),
                                json_pack("{s:s, s:o, s:o, s:o, s:o, s:o}", "status", acc_status_name(o->status), "reason",
                                          jstr_or_null(o->why), "predicted_tokens_per_s_per_gpu",
                                          jnum(ok ? o->predicted_tps : NAN), "error", jnum(ok ? o->error : NAN), "step_s",
                                          jnum(ran ? o->step_s : NAN), "mem_GiB", jnum(ran ? o->mem_GiB : NAN)));
        }
        json_array_append_new(
            cases, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:s, s:o, s:s, s:f, s:s, s:o, s:f, s:s, s:o}",
                             "name", c->name, "source_id", c->source_id, "file", c->file, "framework", c->framework,
                             "cluster", c->cluster_ref, "model", c->model_ref, "nodes", c->nodes, "gpus", c->gpus,
                             "layout", c->layout_str, "compare_group", jstr_or_null(c->compare_group), "metric",
                             acc_metric_name(c->measured.metric), "measured_value", c->measured.value,
                             "flop_convention", acc_flops_name(c->measured.convention), "flops_per_token",
                             jnum(c->flops_per_token > 0 ? c->flops_per_token : NAN),
                             "measured_tokens_per_s_per_gpu", c->measured_tps, "calibration",
                             c->calib_path[0] ? c->calib_path : "built-in defaults", "results", res));
    }
    for (int k = 0; k < r->n_eng; k++) {
        const acc_summary *s = &r->sum[k];
        json_t *src = json_array();
        for (int j = 0; j < s->n_sources; j++) {
            json_t *x = stats_json(&s->sources[j]);
            json_object_set_new(x, "source_id", json_string(s->sources[j].source_id));
            json_array_append_new(src, x);
        }
        json_object_set_new(summary, pred_engine_name(r->eng[k]),
                            json_pack("{s:o, s:o}", "overall", stats_json(&s->overall), "sources", src));
    }
    for (int p = 0; p < r->sum[0].n_pairs; p++) {
        const acc_pair *q0 = &r->sum[0].pairs[p];
        const acc_case *a = acc_case_at(r->s, q0->a), *b = acc_case_at(r->s, q0->b);
        json_t *per = json_object();
        for (int k = 0; k < r->n_eng; k++) {
            const acc_pair *q = &r->sum[k].pairs[p];
            json_object_set_new(per, pred_engine_name(r->eng[k]),
                                json_pack("{s:o, s:s}", "predicted_ratio", jnum(q->predicted_ratio), "order",
                                          pair_word(q->state)));
        }
        json_array_append_new(pairs, json_pack("{s:s, s:s, s:s, s:s, s:s, s:f, s:o}", "group", a->compare_group, "a",
                                               a->name, "b", b->name, "layout_a", a->layout_str, "layout_b",
                                               b->layout_str, "measured_ratio", q0->measured_ratio, "predicted", per));
    }
    return cli_print_json(json_pack("{s:s, s:o, s:o, s:o, s:o}", "dir", r->dir, "engines", engines, "cases", cases,
                                    "summary", summary, "layout_pairs", pairs));
}

/* ---- CSV (RFC 4180) ---------------------------------------------------------------------- */

static void csv_field(FILE *f, const char *s, int last)
{
    res_csv_text(f, s, 0);
    fputc(last ? '\n' : ',', f);
}

static void csv_num(FILE *f, double v, int last)
{
    char b[64];
    csv_field(f, isfinite(v) ? (snprintf(b, sizeof b, "%.9g", v), b) : "", last);
}

static int write_csv(const run *r, const char *path, sc_err *err)
{
    at_file *af; /* written straight into the target's temporary (base/atomic) */
    int rc = at_begin(path, &af, err);
    if (rc)
        return rc;
    FILE *f = at_stream(af);
    fputs("case,source_id,framework,cluster,model,nodes,gpus,layout,compare_group,metric,measured_value,"
          "flop_convention,measured_tokens_per_s_per_gpu,engine,status,predicted_tokens_per_s_per_gpu,error,step_s,"
          "mem_GiB,reason\n",
          f);
    for (int i = 0; i < r->n; i++) {
        const acc_case *c = acc_case_at(r->s, i);
        for (int k = 0; k < r->n_eng; k++) {
            const acc_outcome *o = acc_outcome_at(r->s, i, r->eng[k]);
            int ok = o->status == ACC_OK, ran = ok || o->status == ACC_OOM;
            csv_field(f, c->name, 0);
            csv_field(f, c->source_id, 0);
            csv_field(f, c->framework, 0);
            csv_field(f, c->cluster_ref, 0);
            csv_field(f, c->model_ref, 0);
            csv_num(f, c->nodes, 0);
            csv_num(f, c->gpus, 0);
            csv_field(f, c->layout_str, 0);
            csv_field(f, c->compare_group, 0);
            csv_field(f, acc_metric_name(c->measured.metric), 0);
            csv_num(f, c->measured.value, 0);
            csv_field(f, c->measured.convention == ACC_FLOPS_NONE ? "" : acc_flops_name(c->measured.convention), 0);
            csv_num(f, c->measured_tps, 0);
            csv_field(f, pred_engine_name(r->eng[k]), 0);
            csv_field(f, acc_status_name(o->status), 0);
            csv_num(f, ok ? o->predicted_tps : NAN, 0);
            csv_num(f, ok ? o->error : NAN, 0);
            csv_num(f, ran ? o->step_s : NAN, 0);
            csv_num(f, ran ? o->mem_GiB : NAN, 0);
            csv_field(f, o->why, 1);
        }
    }
    return at_commit(af, AT_CHECK_NONE, err);
}

/* ---- plot data: one block per source (header line "source"), measured predicted ------------ */

static int write_plot_data(const run *r, const char *path, sc_err *err)
{
    int k = 0;
    while (k < r->n_eng && r->eng[k] != PRED_MODEL)
        k++;
    if (k == r->n_eng)
        k = 0;
    at_file *af; /* written straight into the target's temporary (base/atomic) */
    int rc = at_begin(path, &af, err);
    if (rc)
        return rc;
    FILE *f = at_stream(af);
    fprintf(f, "# shardcast accuracy: engine %s, tokens/s per GPU; one block per source: measured predicted\n",
            pred_engine_name(r->eng[k]));
    int blocks = 0;
    const acc_summary *s = &r->sum[k];
    for (int j = 0; j < s->n_sources; j++) {
        if (!s->sources[j].n)
            continue;
        fprintf(f, "%s\"%s\" \"%s\"\n", blocks++ ? "\n\n" : "", s->sources[j].source_id, "predicted");
        for (int i = 0; i < r->n; i++) {
            const acc_case *c = acc_case_at(r->s, i);
            const acc_outcome *o = acc_outcome_at(r->s, i, r->eng[k]);
            if (o->status == ACC_OK && !strcmp(c->source_id, s->sources[j].source_id))
                fprintf(f, "%.6g %.6g\n", c->measured_tps, o->predicted_tps);
        }
    }
    return at_commit(af, AT_CHECK_NONE, err);
}

/* ---- Markdown report ------------------------------------------------------------------------ */

static void md_cell(FILE *f, const char *s)
{
    for (; *s; s++)
        if (*s == '|')
            fputs("\\|", f);
        else if (*s == '\n')
            fputc(' ', f);
        else
            fputc(*s, f);
}

static int write_markdown(const run *r, const char *path, sc_err *err)
{
    at_file *af; /* written straight into the target's temporary (base/atomic) */
    int rc = at_begin(path, &af, err);
    if (rc)
        return rc;
    FILE *f = at_stream(af);
    char b1[64], b2[64], b3[64], st[600];
    fputs("# How accurate is shardcast?\n\n"
          "<!-- Generated by `make accuracy-report` (shardcast accuracy --markdown); edit cli/accuracy.c, not this "
          "file. -->\n\n"
          "Every case under [`validation/`](../validation/README.md) is one published measurement of a real\n"
          "training run (a paper's table, a framework's benchmark page, a vendor's report), described in\n"
          "shardcast's terms with its source and a confidence note. `shardcast accuracy` predicts each one\n"
          "with the shipped calibrations — which come from datasheets and microbenchmarks only; no\n"
          "parameter is ever fitted to these cases — and compares in tokens/s per GPU (each measured metric\n"
          "is converted as `validation/README.md` says, with the source's FLOP convention for TFLOPS and\n"
          "MFU). The error of a case is `predicted / measured - 1`: positive means shardcast is too\n"
          "optimistic. Per source and overall: n (cases predicted), the cases that could not be (and why),\n"
          "MAPE (mean absolute error), bias (median signed error), the Spearman rank correlation of\n"
          "predicted vs measured within a source, and for every pair of layouts measured at the same point\n"
          "whether shardcast orders them the same way.\n\n"
          "`make check` runs the analytical engine over the cases and fails when the overall MAPE or any\n"
          "source's gets worse than the committed figures (`validation/figures.json`) by more than 0.5\n"
          "points, or when fewer cases run; `make accuracy-report` regenerates this file, the plot and the\n"
          "figures.\n\n",
          f);
    fprintf(f, "%d case%s from %d source%s.\n\n", r->n, r->n == 1 ? "" : "s", r->sum[0].n_sources,
            r->sum[0].n_sources == 1 ? "" : "s");
    if (!r->n) {
        fputs("No cases yet.\n", f);
    } else {
        fputs("![predicted vs measured tokens/s per GPU](accuracy.png)\n\n", f);
        for (int k = 0; k < r->n_eng; k++) {
            const acc_summary *s = &r->sum[k];
            fprintf(f, "## Summary: %s\n\n", engine_long(r->eng[k]));
            fputs("| source | n | not run | MAPE % | bias % | Spearman | layout order right |\n"
                  "|---|---:|---:|---:|---:|---:|---:|\n",
                  f);
            for (int j = 0; j <= s->n_sources; j++) {
                const acc_stats *x = j < s->n_sources ? &s->sources[j] : &s->overall;
                char pairs[64];
                if (x->pairs)
                    snprintf(pairs, sizeof pairs, "%d of %d", x->pairs_right, x->pairs);
                else
                    snprintf(pairs, sizeof pairs, "-");
                fprintf(f, "| %s%s%s | %d | %d | %s | %s | %s | %s |\n", j < s->n_sources ? "" : "**",
                        j < s->n_sources ? x->source_id : "overall", j < s->n_sources ? "" : "**", x->n, x->n_not_run,
                        fmt_num(b1, sizeof b1, 0, 1, x->mape_pct), fmt_num(b2, sizeof b2, 1, 1, x->bias_pct),
                        fmt_num(b3, sizeof b3, 0, 2, x->spearman), pairs);
            }
            fputs("\n", f);
        }
        fputs("## Sources\n\n| source | cases | published | where |\n|---|---:|---|---|\n", f);
        for (int j = 0; j < r->sum[0].n_sources; j++) {
            const char *id = r->sum[0].sources[j].source_id;
            int cnt = 0, first = -1;
            char lo[16] = "", hi[16] = "";
            for (int i = 0; i < r->n; i++) {
                const acc_case *c = acc_case_at(r->s, i);
                if (strcmp(c->source_id, id))
                    continue;
                cnt++;
                if (first < 0)
                    first = i;
                if (!lo[0] || strcmp(c->date, lo) < 0)
                    snprintf(lo, sizeof lo, "%s", c->date);
                if (strcmp(c->date, hi) > 0)
                    snprintf(hi, sizeof hi, "%s", c->date);
            }
            fputs("| ", f);
            md_cell(f, id);
            fprintf(f, " | %d | %s%s%s | ", cnt, lo, strcmp(lo, hi) ? " to " : "", strcmp(lo, hi) ? hi : "");
            /* the first case's citation, and how many other distinct ones the cases give (each
             * case file carries its own, down to the figure or row) */
            int others = 0;
            const char *cite = acc_case_at(r->s, first)->source;
            for (int i = first + 1; i < r->n; i++) {
                const acc_case *c = acc_case_at(r->s, i);
                if (strcmp(c->source_id, id) || !strcmp(c->source, cite))
                    continue;
                int dup = 0;
                for (int k = first + 1; k < i && !dup; k++)
                    dup = !strcmp(acc_case_at(r->s, k)->source_id, id) && !strcmp(acc_case_at(r->s, k)->source, c->source);
                others += !dup;
            }
            md_cell(f, cite);
            if (others)
                fprintf(f, " (and %d other location%s: see the case files)", others, others == 1 ? "" : "s");
            fputs(" |\n", f);
        }
        fputs("\n## Every case\n\nTokens/s per GPU; error in %.\n\n| case | source | framework | layout | GPUs | measured |", f);
        for (int k = 0; k < r->n_eng; k++)
            fprintf(f, " %s | err %% |", pred_engine_name(r->eng[k]));
        fputs(" status |\n|---|---|---|---|---:|---:|", f);
        for (int k = 0; k < r->n_eng; k++)
            fputs("---:|---:|", f);
        fputs("---|\n", f);
        for (int i = 0; i < r->n; i++) {
            const acc_case *c = acc_case_at(r->s, i);
            fputs("| ", f);
            if (c->file[0] != '/') { /* a link from docs/ to the case file */
                fputs("[", f);
                md_cell(f, c->name);
                fprintf(f, "](../%s)", c->file);
            } else {
                md_cell(f, c->name);
            }
            fputs(" | ", f);
            md_cell(f, c->source_id);
            fprintf(f, " | %s | `", c->framework);
            md_cell(f, c->layout_str);
            fprintf(f, "` | %d | %.1f |", c->gpus, c->measured_tps);
            for (int k = 0; k < r->n_eng; k++) {
                const acc_outcome *o = acc_outcome_at(r->s, i, r->eng[k]);
                int ok = o->status == ACC_OK;
                fprintf(f, " %s | %s |", fmt_num(b1, sizeof b1, 0, 1, ok ? o->predicted_tps : NAN),
                        fmt_num(b2, sizeof b2, 1, 1, ok ? 100 * o->error : NAN));
            }
            status_text(r, i, st, sizeof st);
            fputs(" ", f);
            md_cell(f, st);
            fputs(" |\n", f);
        }
        const acc_summary *s0 = &r->sum[0];
        fputs("\n## Layout order\n\nPairs of layouts measured at the same point (a case's `compare_group`): the "
              "ratio of their tokens/s per GPU, measured and predicted, and whether the predicted order is the "
              "measured one.\n\n",
              f);
        if (!s0->n_pairs) {
            fputs("No compare groups yet.\n", f);
        } else {
            fputs("| group | a | b | measured a/b |", f);
            for (int k = 0; k < r->n_eng; k++)
                fprintf(f, " %s a/b | order |", pred_engine_name(r->eng[k]));
            fputs("\n|---|---|---|---:|", f);
            for (int k = 0; k < r->n_eng; k++)
                fputs("---:|---|", f);
            fputs("\n", f);
            for (int p = 0; p < s0->n_pairs; p++) {
                const acc_case *a = acc_case_at(r->s, s0->pairs[p].a), *b = acc_case_at(r->s, s0->pairs[p].b);
                fputs("| ", f);
                md_cell(f, a->compare_group);
                fputs(" | `", f);
                md_cell(f, a->layout_str);
                fputs("` | `", f);
                md_cell(f, b->layout_str);
                fprintf(f, "` | %.3f |", s0->pairs[p].measured_ratio);
                for (int k = 0; k < r->n_eng; k++) {
                    const acc_pair *q = &r->sum[k].pairs[p];
                    fprintf(f, " %s | %s |", fmt_num(b1, sizeof b1, 0, 3, q->predicted_ratio), pair_word(q->state));
                }
                fputs("\n", f);
            }
        }
    }
    fputs("\n## Caveats\n\n"
          "- A case is only as good as its source: read its `confidence` and `note`. Values read off a chart\n"
          "  carry a few percent of error of their own; unstated micro-batches, sequence lengths or settings are\n"
          "  assumptions, named in the case.\n"
          "- TFLOPS and MFU are converted with the source's own FLOP convention; a wrong convention is a\n"
          "  systematic error of the measured side, not of the prediction.\n"
          "- Cases that cannot be predicted are counted, not dropped: a layout (pipeline parallelism, for\n"
          "  one) or FP8 training shardcast does not model yet (`unsupported`), a node count or tensor split\n"
          "  the cluster or model does not allow (`impossible`),\n"
          "  or a run the memory model says cannot fit although it ran (`oom`: an error of the memory model).\n"
          "  They are left out of MAPE and bias, so a source's MAPE covers only its predicted cases.\n"
          "- A case on a cluster without a shipped calibration (a derived cluster file under\n"
          "  `validation/clusters/` with a name of its own) is predicted with the built-in defaults; the\n"
          "  JSON output names the calibration of every case.\n"
          "- The sources are not a random sample of training runs: published numbers favour tuned setups and\n"
          "  the systems their authors propose. Spearman needs at least 3 cases of a source.\n"
          "- Nothing here was used to set a calibration parameter. A cost-model change is justified by the\n"
          "  physics it models and by microbenchmarks, then checked here.\n",
          f);
    char dc[1024];
    if (default_calibs(r, dc, sizeof dc))
        fprintf(f, "- In this run the built-in defaults stand in for a calibration for: %s.\n", dc);
    return at_commit(af, AT_CHECK_NONE, err);
}

/* ---- figures --------------------------------------------------------------------------------- */

static int write_figures(const run *r, const char *path, sc_err *err)
{
    const acc_summary *sums[PRED_N_ENGINES];
    for (int k = 0; k < r->n_eng; k++)
        sums[k] = &r->sum[k];
    char *text = acc_figures_dump(r->eng, sums, r->n_eng);
    if (!text)
        return sc_err_set(err, SC_ERUNTIME, path, "", "out of memory");
    size_t len = strlen(text);
    char *withnl = realloc(text, len + 2);
    if (!withnl) {
        free(text);
        return sc_err_set(err, SC_ERUNTIME, path, "", "out of memory");
    }
    withnl[len] = '\n';
    withnl[len + 1] = '\0';
    int rc = cli_write_atomic(path, withnl, len + 1, err);
    free(withnl);
    return rc;
}

/* 0 ok, 1 worse, or an exit status for bad input. */
static int check_figures(const run *r, const char *path)
{
    int checked = 0, worse_all = 0;
    sc_err err;
    for (int k = 0; k < r->n_eng; k++) {
        char report[4096];
        int worse;
        int rc = acc_figures_check(path, r->eng[k], &r->sum[k], CHECK_TOL_PTS, report, sizeof report, &worse, &err);
        char at[64];
        snprintf(at, sizeof at, "$.engines.%s", pred_engine_name(r->eng[k]));
        if (rc && r->n_eng > 1 && !strcmp(err.path, at) && !strncmp(err.text, "missing", 7))
            continue; /* --engine both against figures of one engine: check the one there */
        if (rc)
            return cli_fail(&err, rc);
        checked++;
        worse_all += worse;
        for (char *l = strtok(report, "\n"); l; l = strtok(NULL, "\n"))
            fprintf(stderr, "shardcast accuracy: %s: %s: %s\n", path, pred_engine_name(r->eng[k]), l);
        if (!worse) {
            char b[64];
            fprintf(stderr, "accuracy check: %s: no source worse than %s by more than %.1f points (overall MAPE %s%%)\n",
                    pred_engine_name(r->eng[k]), path, CHECK_TOL_PTS,
                    fmt_num(b, sizeof b, 0, 2, r->sum[k].overall.mape_pct));
        }
    }
    if (!checked) {
        sc_err_set(&err, SC_EINPUT, path, "$.engines", "expected figures of an engine that was run");
        return cli_fail(&err, SC_EINPUT);
    }
    return worse_all ? 1 : 0;
}

/* ---- the command ------------------------------------------------------------------------------ */

static int default_dir(const char *argv0, char *out, size_t n)
{
    struct stat st;
    const char *env = getenv("SHARDCAST_VALIDATION"); /* as SHARDCAST_CONFIGS for the configs */
    if (env && *env) {
        snprintf(out, n, "%s", env);
        return stat(out, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
    }
    char bin[4096];
    proc_self_dir(argv0, bin, sizeof bin);
    const char *rel[2] = {"validation", "../share/shardcast/validation"};
    for (int i = 0; i < 2; i++) {
        snprintf(out, n, "%.4000s/%s", bin, rel[i]);
        if (stat(out, &st) == 0 && S_ISDIR(st.st_mode))
            return 0;
    }
    return -1;
}

int cmd_accuracy(int argc, char **argv)
{
    static const struct option lopts[] = {
        {"engine", required_argument, 0, 'e'},  {"json", no_argument, 0, 'j'},
        {"out", required_argument, 0, 'o'},     {"check", required_argument, 0, 'c'},
        {"write-figures", required_argument, 0, 'w'}, {"markdown", required_argument, 0, 'm'},
        {"plot-data", required_argument, 0, 'p'}, {"progress", no_argument, 0, 'P'},
        {"source", required_argument, 0, 's'},
        {"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
    opts o;
    memset(&o, 0, sizeof o);
    o.engines[PRED_MODEL] = o.engines[PRED_SIM] = 1;
    sc_err err;
    optind = 1;
    opterr = 0;
    for (;;) {
        int opt = getopt_long(argc, argv, ":ho:", lopts, NULL);
        if (opt == -1)
            break;
        char what[200];
        switch (opt) {
        case 'h': fputs(HELP, stdout); return 0;
        case 'e':
            if (!strcmp(optarg, "both")) {
                o.engines[PRED_MODEL] = o.engines[PRED_SIM] = 1;
            } else {
                pred_engine e;
                if (pred_engine_parse(optarg, &e)) {
                    sc_err_set(&err, SC_EINPUT, "--engine", "", "expected model, sim or both, got \"%s\"", optarg);
                    return cli_fail(&err, SC_EINPUT);
                }
                o.engines[PRED_MODEL] = o.engines[PRED_SIM] = 0;
                o.engines[e] = 1;
            }
            break;
        case 'j': o.json = 1; break;
        case 'o': o.csv = optarg; break;
        case 'c': o.check = optarg; break;
        case 'w': o.figures = optarg; break;
        case 'm': o.markdown = optarg; break;
        case 'p': o.plot_data = optarg; break;
        case 'P': o.progress = 1; break;
        case 's': o.source = optarg; break;
        case ':':
            snprintf(what, sizeof what, "option '%.150s' needs a value", argv[optind - 1]);
            return cli_usage_error("accuracy", what);
        default:
            snprintf(what, sizeof what, "unknown option '%.150s'", argv[optind - 1]);
            return cli_usage_error("accuracy", what);
        }
    }
    if (optind < argc)
        o.dir = argv[optind++];
    if (optind < argc) {
        char what[200];
        snprintf(what, sizeof what, "unexpected argument '%.150s' (one directory)", argv[optind]);
        return cli_usage_error("accuracy", what);
    }

    if (o.source && (o.check || o.figures)) {
        sc_err_set(&err, SC_EINPUT, "--source", "", "expected without --check and --write-figures (they cover every source)");
        return cli_fail(&err, SC_EINPUT);
    }
    run r;
    memset(&r, 0, sizeof r);
    r.o = &o;
    if (o.dir) {
        snprintf(r.dir, sizeof r.dir, "%s", o.dir);
    } else if (default_dir(argv[0], r.dir, sizeof r.dir)) {
        sc_err_set(&err, SC_EINPUT, "accuracy", "", "no validation/ directory beside the binary (or $SHARDCAST_VALIDATION): name one (shardcast accuracy DIR)");
        return cli_fail(&err, SC_EINPUT);
    }
    size_t dl = strlen(r.dir);
    while (dl > 1 && r.dir[dl - 1] == '/')
        r.dir[--dl] = '\0';
    cli_setup s;
    cli_setup_init(&s, argv[0]);
    const char *roots[2] = {s.config_roots[0], s.config_roots[1]};
    acc_paths paths = {r.dir, roots, 2, o.source};
    int rc = acc_load_dir(&paths, &r.s, &err);
    if (rc)
        return cli_fail(&err, rc);
    r.n = acc_n_cases(r.s);
    for (int e = 0; e < PRED_N_ENGINES; e++)
        if (o.engines[e])
            r.eng[r.n_eng++] = (pred_engine)e;

    int show = o.progress || isatty(2);
    int status = 0;
    for (int k = 0; k < r.n_eng && !status; k++) {
        acc_run(r.s, r.eng[k], show && r.n ? progress : NULL, (void *)pred_engine_name(r.eng[k]));
        r.rows[k] = malloc(sizeof(acc_row) * (size_t)(r.n ? r.n : 1));
        if (!r.rows[k]) {
            sc_err_set(&err, SC_ERUNTIME, "accuracy", "", "out of memory");
            status = cli_fail(&err, SC_ERUNTIME);
            break;
        }
        acc_suite_rows(r.s, r.eng[k], r.rows[k]);
        if ((rc = acc_summarize(r.rows[k], r.n, &r.sum[k], &err)))
            status = cli_fail(&err, rc);
    }
    if (!status) {
        if (!r.n)
            fprintf(stderr, "shardcast accuracy: no cases under %s yet (%s/<source_id>/*.json)%s\n", r.dir, r.dir,
                    o.check ? "; nothing to check" : "");
        if (o.json)
            status = print_json(&r);
        else if (r.n)
            print_text(&r);
    }
    /* files: each whole or absent */
    struct {
        const char *path;
        int (*write)(const run *, const char *, sc_err *);
    } outs[] = {{o.csv, write_csv}, {o.markdown, write_markdown}, {o.plot_data, write_plot_data},
                {o.figures, write_figures}};
    for (size_t i = 0; i < sizeof outs / sizeof outs[0] && !status; i++)
        if (outs[i].path && (rc = outs[i].write(&r, outs[i].path, &err)))
            status = cli_fail(&err, rc);
    /* a case the engine could not evaluate is a bug: name it, exit 1 */
    for (int k = 0; k < r.n_eng && !status; k++)
        for (int i = 0; i < r.n; i++) {
            const acc_outcome *oc = acc_outcome_at(r.s, i, r.eng[k]);
            if (oc->status == ACC_ERROR) {
                fprintf(stderr, "shardcast accuracy: %s: %s\n", acc_case_at(r.s, i)->file, oc->why);
                status = 1;
            }
        }
    if (!status && o.check && r.n)
        status = check_figures(&r, o.check);
    for (int k = 0; k < r.n_eng; k++) {
        acc_summary_free(&r.sum[k]);
        free(r.rows[k]);
    }
    acc_suite_free(r.s);
    return status;
}
