/* accuracy_field.c — the field's view in `shardcast accuracy` output (see accuracy_int.h): the bias
 * per framework and per stack macro-averaged over sources, the error by sequence length, what the
 * cases ran, and pick/best per compare group; as text, JSON and Markdown. Not here: the figures
 * (predict/accuracy_field.c computes them) or the rest of the report (accuracy.c,
 * accuracy_report.c). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "accuracy_int.h"

static json_t *jnum(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/* The row of a macro table, as text ("| " separators when md). */
static void macro_row(FILE *f, int md, int w, const acc_macro *m)
{
    char b1[64], b2[64], b3[64];
    cli_acc_fmt_num(b1, sizeof b1, 1, 1, m->bias_macro_pct);
    cli_acc_fmt_num(b2, sizeof b2, 0, 1, m->mape_macro_pct);
    cli_acc_fmt_num(b3, sizeof b3, 1, 1, m->bias_pooled_pct);
    if (md)
        fprintf(f, "| %s | %d | %d | %d | %s | %s | %s |\n", m->key, m->n_sources, m->n, m->n_not_run, b1, b2, b3);
    else
        fprintf(f, "%-*s %8d %5d %8d %14s %14s %13s\n", w, m->key, m->n_sources, m->n, m->n_not_run, b1, b2, b3);
}

static void macro_table(FILE *f, int md, const char *what, const acc_macro *m, int k)
{
    int w = 10;
    for (int i = 0; i < k; i++)
        w = (int)strlen(m[i].key) > w ? (int)strlen(m[i].key) : w;
    if (md)
        fprintf(f, "| %s | sources | n | not run | bias %% (macro) | MAPE %% (macro) | bias %% (pooled) |\n"
                   "|---|---:|---:|---:|---:|---:|---:|\n", what);
    else
        fprintf(f, "%-*s %8s %5s %8s %14s %14s %13s\n", w, what, "sources", "n", "not run", "bias % (macro)",
                "MAPE % (macro)", "bias % (pool)");
    for (int i = 0; i < k; i++)
        macro_row(f, md, w, &m[i]);
}

static void bands_table(FILE *f, int md, const acc_seqband *b)
{
    char b1[64], b2[64];
    if (md)
        fputs("| sequence length | sources | n | median error % | MAPE % |\n|---|---:|---:|---:|---:|\n", f);
    else
        fprintf(f, "%-12s %8s %5s %15s %8s\n", "seq length", "sources", "n", "median error %", "MAPE %");
    for (int i = 0; i < ACC_N_SEQ_BANDS; i++) {
        cli_acc_fmt_num(b1, sizeof b1, 1, 1, b[i].median_pct);
        cli_acc_fmt_num(b2, sizeof b2, 0, 1, b[i].mape_pct);
        if (md)
            fprintf(f, "| %s | %d | %d | %s | %s |\n", b[i].label, b[i].n_sources, b[i].n, b1, b2);
        else
            fprintf(f, "%-12s %8d %5d %15s %8s\n", b[i].label, b[i].n_sources, b[i].n, b1, b2);
    }
}

/* Per engine: the macro tables and the sequence bands. */
static void field_engine(FILE *f, int md, const cli_acc_run *r, int k)
{
    const acc_summary *s = &r->sum[k];
    if (md)
        fprintf(f, "### %s\n\n", cli_acc_engine_long(r->eng[k]));
    else
        fprintf(f, "\nengine %s: bias by framework and by stack (macro: each source one vote)\n",
                pred_engine_name(r->eng[k]));
    macro_table(f, md, "framework", s->by_framework, s->n_by_framework);
    fputs("\n", f);
    macro_table(f, md, "stack", s->by_stack, s->n_by_stack);
    fputs("\n", f);
    bands_table(f, md, s->seq_bands);
    if (md)
        fputs("\n", f);
}

/* One compare group's line: group, source, cases run of n, picked and best layouts, pick/best
 * per engine. */
static void group_row(FILE *f, int md, const cli_acc_run *r, int g, int wg)
{
    const acc_decision *d0 = &r->sum[0].decisions.groups[g];
    char pb[64];
    const char *pick = d0->pick >= 0 ? acc_case_at(r->s, d0->pick)->layout_str : "-";
    const char *best = d0->best >= 0 ? acc_case_at(r->s, d0->best)->layout_str : "-";
    if (md)
        fprintf(f, "| %s | %s | %d of %d | `%s` | `%s` |", d0->group, d0->source_id, d0->n_run, d0->n, pick, best);
    else
        fprintf(f, "%-*s %5d/%-3d %-28s %-28s", wg, d0->group, d0->n_run, d0->n, pick, best);
    for (int k = 0; k < r->n_eng; k++) {
        cli_acc_fmt_num(pb, sizeof pb, 0, 3, r->sum[k].decisions.groups[g].pick_best);
        fprintf(f, md ? " %s |" : " %10s", pb);
    }
    fputs("\n", f);
}

static void pickbest_summary(FILE *f, int md, const cli_acc_run *r)
{
    const acc_decisions *d0 = &r->sum[0].decisions;
    char b1[64], b2[64];
    if (md) {
        cli_acc_md_engine_head(f, r, "| source | groups |", "|---|---:|", "median", "min");
    } else {
        fprintf(f, "\npick/best per source\n%-28s %6s\n", "source", "groups");
    }
    for (int j = 0; j <= d0->n_sources; j++) {
        const acc_pickbest *x0 = j < d0->n_sources ? &d0->sources[j] : &d0->overall;
        const char *id = j < d0->n_sources ? x0->source_id : "overall";
        if (md)
            fprintf(f, j < d0->n_sources ? "| %s | %d |" : "| **%s** | %d |", id, x0->groups);
        else
            fprintf(f, "%-28s %6d", id, x0->groups);
        for (int k = 0; k < r->n_eng; k++) {
            const acc_decisions *d = &r->sum[k].decisions;
            const acc_pickbest *x = j < d->n_sources ? &d->sources[j] : &d->overall;
            cli_acc_fmt_num(b1, sizeof b1, 0, 3, x->median);
            cli_acc_fmt_num(b2, sizeof b2, 0, 3, x->min);
            if (md)
                fprintf(f, " %s | %s |", b1, b2);
            else
                fprintf(f, "  %s median %s min %s", pred_engine_name(r->eng[k]), b1, b2);
        }
        fputs("\n", f);
    }
}

static void decisions_block(FILE *f, int md, const cli_acc_run *r)
{
    const acc_decisions *d0 = &r->sum[0].decisions;
    int wg = 5;
    for (int g = 0; g < d0->n_groups; g++)
        wg = (int)strlen(d0->groups[g].group) > wg ? (int)strlen(d0->groups[g].group) : wg;
    if (md) {
        fputs("| group | source | predicted | picked (fastest predicted) | measured best |", f);
        for (int k = 0; k < r->n_eng; k++)
            fprintf(f, " %s pick/best |", pred_engine_name(r->eng[k]));
        fputs("\n|---|---|---:|---|---|", f);
        for (int k = 0; k < r->n_eng; k++)
            fputs("---:|", f);
        fputs("\n", f);
    } else {
        fprintf(f, "\ndecision quality: per compare group, measured tokens/s of the fastest-predicted layout / the "
                   "measured best (%s engine's pick shown)\n%-*s %9s %-28s %-28s",
                pred_engine_name(r->eng[0]), wg, "group", "run/n", "picked", "measured best");
        for (int k = 0; k < r->n_eng; k++)
            fprintf(f, " %10s", pred_engine_name(r->eng[k]));
        fputs("\n", f);
    }
    for (int g = 0; g < d0->n_groups; g++)
        group_row(f, md, r, g, wg);
    if (md)
        fputs("\n", f);
    pickbest_summary(f, md, r);
}

void cli_acc_print_field(const cli_acc_run *r)
{
    for (int k = 0; k < r->n_eng; k++)
        field_engine(stdout, 0, r, k);
    cli_acc_print_compile(r);
    if (r->sum[0].decisions.n_groups)
        decisions_block(stdout, 0, r);
}

/* What the cases ran: how many cases record it, and the counts of each attention kernel. */
static void ran_census(FILE *f, const cli_acc_run *r)
{
    int given = 0;
    for (int i = 0; i < r->n; i++)
        given += acc_case_at(r->s, i)->ran.given;
    fprintf(f, "%d of %d cases record what their source ran (`ran`: stack, framework version, attention kernel, "
               "reduce dtype, checkpointing; `validation/README.md`).",
            given, r->n);
    fputs(" Attention kernels among them:", f);
    int first = 1;
    for (int a = 0; ACC_ATTENTION_KERNELS[a]; a++) {
        int k = 0;
        for (int i = 0; i < r->n; i++)
            k += acc_case_at(r->s, i)->ran.given && !strcmp(acc_case_at(r->s, i)->ran.attention_kernel, ACC_ATTENTION_KERNELS[a]);
        if (k) {
            fprintf(f, "%s %s %d", first ? "" : ",", ACC_ATTENTION_KERNELS[a], k);
            first = 0;
        }
    }
    fputs(first ? " none.\n\n" : ".\n\n", f);
}

void cli_acc_markdown_field(const cli_acc_run *r, FILE *f)
{
    fputs("## By framework, by stack and by sequence length\n\n"
          "Bias per framework and per software stack, **macro-averaged**: each source's median signed\n"
          "error counts once, however many cases it has, so one large source cannot dominate; the pooled\n"
          "median over all cases is beside it for contrast. The stack is the one the case records in its\n"
          "`ran` object (\"unrecorded\" when it has none). The error by sequence length is the median signed\n"
          "error and MAPE of the predicted cases in each band.\n\n",
          f);
    ran_census(f, r);
    for (int k = 0; k < r->n_eng; k++)
        field_engine(f, 1, r, k);
    cli_acc_markdown_compile(r, f); /* stack27d: the torch.compile gain, cli/accuracy_compile.c */
    fputs("## Decision quality: pick / best\n\n"
          "For every compare group (several layouts of one model on one cluster, measured by one source):\n"
          "the measured tokens/s of the layout shardcast predicts fastest, over the measured best, among\n"
          "the group's cases that shardcast predicts (1.000: it picks the measured best). `make check`\n"
          "fails when the median or the minimum, overall or of a source, falls by more than 0.005 below\n"
          "the committed figures, or fewer groups are judged; and, against the floor in\n"
          "[`validation/decision-floor.json`](../validation/decision-floor.json) (`--floor`), when a\n"
          "group's pick/best is under 0.9 and the file does not list it with why, when a listed group is\n"
          "back at 0.9 or above (the list only shrinks), or when the overall median is under 0.98.\n\n",
          f);
    if (!r->sum[0].decisions.n_groups)
        fputs("No compare groups yet.\n\n", f);
    else
        decisions_block(f, 1, r);
    fputs("\n", f);
}

static json_t *macro_json(const acc_macro *m, int k)
{
    json_t *a = json_array();
    for (int i = 0; a && i < k; i++)
        json_array_append_new(a, json_pack("{s:s, s:i, s:i, s:i, s:o, s:o, s:o}", "key", m[i].key, "sources",
                                           m[i].n_sources, "n", m[i].n, "cases_not_run", m[i].n_not_run, "bias_macro_pct",
                                           jnum(m[i].bias_macro_pct), "mape_macro_pct", jnum(m[i].mape_macro_pct),
                                           "bias_pooled_pct", jnum(m[i].bias_pooled_pct)));
    return a;
}

json_t *cli_acc_field_json(const cli_acc_run *r, int k)
{
    const acc_summary *s = &r->sum[k];
    json_t *bands = json_array(), *groups = json_array();
    for (int b = 0; bands && b < ACC_N_SEQ_BANDS; b++)
        json_array_append_new(bands, json_pack("{s:s, s:i, s:i, s:o, s:o}", "band", s->seq_bands[b].label, "sources",
                                               s->seq_bands[b].n_sources, "n", s->seq_bands[b].n, "median_error_pct",
                                               jnum(s->seq_bands[b].median_pct), "mape_pct", jnum(s->seq_bands[b].mape_pct)));
    for (int g = 0; groups && g < s->decisions.n_groups; g++) {
        const acc_decision *d = &s->decisions.groups[g];
        json_array_append_new(groups, json_pack("{s:s, s:s, s:i, s:i, s:o, s:o, s:o}", "group", d->group, "source_id",
                                                d->source_id, "n", d->n, "run", d->n_run, "picked",
                                                d->pick >= 0 ? json_string(acc_case_at(r->s, d->pick)->name) : json_null(),
                                                "best",
                                                d->best >= 0 ? json_string(acc_case_at(r->s, d->best)->name) : json_null(),
                                                "pick_best", jnum(d->pick_best)));
    }
    json_t *dec = acc_decisions_json(&s->decisions);
    if (dec)
        json_object_set_new(dec, "groups", groups);
    else
        json_decref(groups);
    return json_pack("{s:o, s:o, s:o, s:o*}", "by_framework", macro_json(s->by_framework, s->n_by_framework), "by_stack",
                     macro_json(s->by_stack, s->n_by_stack), "by_seq_len", bands, "decisions", dec);
}
