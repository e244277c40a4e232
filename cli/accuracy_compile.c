/* accuracy_compile.c — `shardcast accuracy`'s torch.compile section: every eager / compiled pair
 * one source measured (predict/accuracy_compile.h), its measured and predicted gain, as text and
 * Markdown, and the --check guard (a pair predicted more than 5 points off). Not here: pairing
 * (predict/), the other tables (cli/accuracy_field.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../predict/accuracy_compile.h"
#include "accuracy_int.h"

/* Engine k's pairs, malloc'd into *out (NULL when none or out of memory); the count. */
static int pairs_of(const cli_acc_run *r, int k, acc_compile_pair **out)
{
    *out = NULL;
    const acc_case **cs = malloc((size_t)(r->n ? r->n : 1) * sizeof *cs);
    acc_compile_pair *p = malloc((size_t)(r->n ? r->n : 1) * sizeof *p);
    int n = 0;
    if (cs && p) {
        for (int i = 0; i < r->n; i++)
            cs[i] = acc_case_at(r->s, i);
        n = acc_compile_pairs(cs, r->rows[k], r->n, p, r->n);
    }
    free(cs);
    if (!n || !p) {
        free(p);
        return 0;
    }
    *out = p;
    return n < r->n ? n : r->n;
}

static void pair_row(FILE *f, int md, const cli_acc_run *r, acc_compile_pair *const *per, int i)
{
    const acc_compile_pair *p0 = &per[0][i];
    const acc_case *e = acc_case_at(r->s, p0->eager), *c = acc_case_at(r->s, p0->compiled);
    char b[64];
    if (md)
        fprintf(f, "| %s | %s | %s | %s |", e->source_id, e->name, c->name,
                cli_acc_fmt_num(b, sizeof b, 1, 1, p0->measured_gain_pct));
    else
        fprintf(f, "%-26s %-44s %8s", e->source_id, e->name, cli_acc_fmt_num(b, sizeof b, 1, 1, p0->measured_gain_pct));
    for (int k = 0; k < r->n_eng; k++) {
        char d[64];
        cli_acc_fmt_num(b, sizeof b, 1, 1, per[k][i].predicted_gain_pct);
        cli_acc_fmt_num(d, sizeof d, 1, 1, per[k][i].diff_pts);
        fprintf(f, md ? " %s | %s |" : " %10s %8s", b, d);
    }
    fputs("\n", f);
}

static void section(FILE *f, int md, const cli_acc_run *r)
{
    acc_compile_pair *per[PRED_N_ENGINES] = {0};
    int n = pairs_of(r, 0, &per[0]), ok = n > 0;
    for (int k = 1; k < r->n_eng; k++)
        ok = ok && pairs_of(r, k, &per[k]) == n;
    if (md)
        fputs("## The torch.compile gain\n\n"
              "Every pair of cases in which one source measured the same job eager and compiled (same cluster,\n"
              "model, sequence, GPUs, layout, batch, precision, checkpointing and attention kernel): the\n"
              "measured gain (compiled tokens/s over eager, - 1) and the predicted one, and the difference in\n"
              "points (predicted - measured). `make check` fails when a pair's difference exceeds 5 points.\n\n",
              f);
    else
        fputs("\ntorch.compile gain: eager / compiled pairs of one source (gain %; diff = predicted - measured, points)\n", f);
    if (!ok) {
        fputs(n ? "(out of memory)\n\n" : "No source measured the same job eager and compiled.\n\n", f);
    } else {
        if (md) {
            cli_acc_md_engine_head(f, r, "| source | eager case | compiled case | measured gain % |", "|---|---|---|---:|",
                                   "gain %", "diff pts");
        } else {
            fprintf(f, "%-26s %-44s %8s", "source", "eager case", "measured");
            for (int k = 0; k < r->n_eng; k++)
                fprintf(f, " %10s %8s", pred_engine_name(r->eng[k]), "diff");
            fputs("\n", f);
        }
        for (int i = 0; i < n; i++)
            pair_row(f, md, r, per, i);
        fputs("\n", f);
    }
    for (int k = 0; k < r->n_eng; k++)
        free(per[k]);
}

void cli_acc_print_compile(const cli_acc_run *r) { section(stdout, 0, r); }
void cli_acc_markdown_compile(const cli_acc_run *r, FILE *f) { section(f, 1, r); }

int cli_acc_check_compile(const cli_acc_run *r, const char *path)
{
    int worse = 0;
    for (int k = 0; k < r->n_eng; k++) {
        acc_compile_pair *p;
        int n = pairs_of(r, k, &p);
        for (int i = 0; i < n; i++)
            if (fabs(p[i].diff_pts) > ACC_COMPILE_TOL_PTS) { /* a pair not predicted (NAN) is not judged */
                fprintf(stderr, "shardcast accuracy: %s: %s: torch.compile gain of %s over %s predicted %+.1f %%, measured "
                                "%+.1f %%: %+.1f points, more than %.0f\n",
                        path, pred_engine_name(r->eng[k]), acc_case_at(r->s, p[i].compiled)->name,
                        acc_case_at(r->s, p[i].eager)->name, p[i].predicted_gain_pct, p[i].measured_gain_pct,
                        p[i].diff_pts, ACC_COMPILE_TOL_PTS);
                worse++;
            }
        free(p);
    }
    return worse;
}
