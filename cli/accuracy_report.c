/* accuracy_report.c — the report files of `shardcast accuracy` (see accuracy_int.h): every case
 * as CSV (-o), the points for plots/accuracy.gp (--plot-data), the Markdown report
 * docs/ACCURACY.md (--markdown), the committed figures (--write-figures) and their --check. Each
 * file is written whole or not at all (base/atomic). Not here: options or stdout (accuracy.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/atomic.h"
#include "../predict/results.h"
#include "accuracy_int.h"
#include "common.h"

#define CHECK_TOL_PTS 0.5

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

int cli_acc_write_csv(const cli_acc_run *r, const char *path, sc_err *err)
{
    at_file *af; /* written straight into the target's temporary (base/atomic) */
    int rc = at_begin(path, &af, err);
    if (rc)
        return rc;
    FILE *f = at_stream(af);
    fputs("case,source_id,framework,cluster,model,nodes,gpus,layout,compare_group,metric,measured_value,"
          "flop_convention,measured_tokens_per_s_per_gpu,engine,status,predicted_tokens_per_s_per_gpu,error,step_s,"
          "mem_GiB,reason,stack,framework_version,attention_kernel,reduce_dtype,checkpointing\n",
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
            csv_field(f, o->why, 0);
            csv_field(f, c->ran.stack, 0);
            csv_field(f, c->ran.framework_version, 0);
            csv_field(f, c->ran.attention_kernel, 0);
            csv_field(f, c->ran.reduce_dtype, 0);
            csv_field(f, c->ran.checkpointing, 1);
        }
    }
    return at_commit(af, AT_CHECK_NONE, err);
}

/* ---- plot data: one block per source (header line "source"), measured predicted ------------ */

int cli_acc_write_plot_data(const cli_acc_run *r, const char *path, sc_err *err)
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

int cli_acc_write_markdown(const cli_acc_run *r, const char *path, sc_err *err)
{
    at_file *af; /* written straight into the target's temporary (base/atomic) */
    int rc = at_begin(path, &af, err);
    if (rc)
        return rc;
    FILE *f = at_stream(af);
    char b1[64], b2[64], b3[64], st[600];
    fputs("# How accurate is shardcast?\n\n"
          "<!-- Generated by `make accuracy-report` (shardcast accuracy --markdown); edit cli/accuracy_report.c, not this "
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
          "points, when fewer cases run, or when a pick/best median or minimum (decision quality, below)\n"
          "falls by more than 0.005; `make accuracy-report` regenerates this file, the plot and the\n"
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
            fprintf(f, "## Summary: %s\n\n", cli_acc_engine_long(r->eng[k]));
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
                        cli_acc_fmt_num(b1, sizeof b1, 0, 1, x->mape_pct), cli_acc_fmt_num(b2, sizeof b2, 1, 1, x->bias_pct),
                        cli_acc_fmt_num(b3, sizeof b3, 0, 2, x->spearman), pairs);
            }
            fputs("\n", f);
        }
        cli_acc_markdown_field(r, f);
        cli_acc_markdown_ran(r, f);
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
                fprintf(f, " %s | %s |", cli_acc_fmt_num(b1, sizeof b1, 0, 1, ok ? o->predicted_tps : NAN),
                        cli_acc_fmt_num(b2, sizeof b2, 1, 1, ok ? 100 * o->error : NAN));
            }
            cli_acc_status_text(r, i, st, sizeof st);
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
                    fprintf(f, " %s | %s |", cli_acc_fmt_num(b1, sizeof b1, 0, 3, q->predicted_ratio), cli_acc_pair_word(q->state));
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
    if (cli_acc_default_calibs(r, dc, sizeof dc))
        fprintf(f, "- In this run the built-in defaults stand in for a calibration for: %s.\n", dc);
    return at_commit(af, AT_CHECK_NONE, err);
}

/* ---- figures --------------------------------------------------------------------------------- */

int cli_acc_write_figures(const cli_acc_run *r, const char *path, sc_err *err)
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
int cli_acc_check_figures(const cli_acc_run *r, const char *path)
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
                    cli_acc_fmt_num(b, sizeof b, 0, 2, r->sum[k].overall.mape_pct));
        }
    }
    if (!checked) {
        sc_err_set(&err, SC_EINPUT, path, "$.engines", "expected figures of an engine that was run");
        return cli_fail(&err, SC_EINPUT);
    }
    return worse_all ? 1 : 0;
}
