/* accuracy_fmt.c — how the accuracy command's cells read (engine names, numbers, a case's
 * status, a pair's verdict, the default calibrations), shared by its printing (accuracy.c) and
 * its report files (accuracy_report.c), below both (cli/accuracy_int.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "accuracy_int.h"

const char *cli_acc_engine_long(pred_engine e) { return e == PRED_SIM ? "simulator" : "analytical model"; }

/* "-" for an undefined number, else v with `dec` decimals ("%+.1f" when sign). */
const char *cli_acc_fmt_num(char *buf, size_t n, int sign, int dec, double v)
{
    if (!isfinite(v))
        snprintf(buf, n, "-");
    else if (sign)
        snprintf(buf, n, "%+.*f", dec, v);
    else
        snprintf(buf, n, "%.*f", dec, v);
    return buf;
}

/* The status column of a case: "ok", or the reason; per engine when they differ. */
void cli_acc_status_text(const cli_acc_run *r, int i, char *buf, size_t n)
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

void cli_acc_md_engine_head(FILE *f, const cli_acc_run *r, const char *lead, const char *align, const char *a,
                            const char *b)
{
    fputs(lead, f);
    for (int k = 0; k < r->n_eng; k++)
        fprintf(f, " %s %s | %s %s |", pred_engine_name(r->eng[k]), a, pred_engine_name(r->eng[k]), b);
    fprintf(f, "\n%s", align);
    for (int k = 0; k < r->n_eng; k++)
        fputs("---:|---:|", f);
    fputs("\n", f);
}

const char *cli_acc_pair_word(acc_pair_state s)
{
    return s == ACC_PAIR_RIGHT ? "right" : s == ACC_PAIR_WRONG ? "WRONG" : s == ACC_PAIR_TIE ? "tie" : "not run";
}

/* The clusters predicted with built-in default calibrations (no calibrations/<name>.json), as
 * "a, b (k cases)" into buf; 0 when none. */
int cli_acc_default_calibs(const cli_acc_run *r, char *buf, size_t n)
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

/* ---- what the sources ran, written into training (predict/accuracy_ran.h) ------------------ */

/* The distinct unmapped ran values of key k with their counts, "sdpa 29, te-cudnn 3", into buf. */
static void unmapped_list(const cli_acc_run *r, acc_ran_key k, char *buf, size_t n)
{
    buf[0] = 0;
    for (int i = 0; i < r->n; i++) {
        const acc_ran_applied *a = &acc_case_at(r->s, i)->ran_applied;
        int seen = 0, count = 0;
        if (a->fate[k] != ACC_RAN_UNMAPPED)
            continue;
        for (int j = 0; j < r->n; j++) {
            const acc_ran_applied *b = &acc_case_at(r->s, j)->ran_applied;
            int same = b->fate[k] == ACC_RAN_UNMAPPED && !strcmp(a->value[k], b->value[k]);
            seen |= same && j < i;
            count += same;
        }
        size_t l = strlen(buf);
        if (!seen && l < n)
            snprintf(buf + l, n - l, "%s%s %d", l ? ", " : "", a->value[k], count);
    }
}

void cli_acc_print_ran(const cli_acc_run *r)
{
    acc_ran_counts c;
    memset(&c, 0, sizeof c);
    for (int i = 0; i < r->n; i++)
        acc_ran_count(&acc_case_at(r->s, i)->ran_applied, &c);
    printf("\nwhat the sources ran (\"ran\"), written into each case's training where it does not say otherwise\n");
    printf("%-18s %7s %7s %7s %9s  %s\n", "key", "mapped", "agrees", "kept", "unmapped", "unmapped names");
    for (int k = 0; k < ACC_RAN_N_KEYS; k++) {
        char names[512];
        unmapped_list(r, (acc_ran_key)k, names, sizeof names);
        printf("%-18s %7d %7d %7d %9d  %s\n", acc_ran_key_name((acc_ran_key)k), c.n[k][ACC_RAN_MAPPED],
               c.n[k][ACC_RAN_AGREES], c.n[k][ACC_RAN_KEPT], c.n[k][ACC_RAN_UNMAPPED], names[0] ? names : "-");
    }
}

json_t *cli_acc_ran_json(const acc_ran_applied *a)
{
    json_t *o = json_object();
    for (int k = 0; o && k < ACC_RAN_N_KEYS; k++)
        if (a->fate[k] != ACC_RAN_NONE)
            json_object_set_new(o, acc_ran_key_name((acc_ran_key)k),
                                json_pack("{s:s, s:s}", "fate", acc_ran_fate_name(a->fate[k]), "value", a->value[k]));
    return o;
}

void cli_acc_markdown_ran(const cli_acc_run *r, FILE *f)
{
    acc_ran_counts c;
    memset(&c, 0, sizeof c);
    for (int i = 0; i < r->n; i++)
        acc_ran_count(&acc_case_at(r->s, i)->ran_applied, &c);
    fputs("## What the sources ran, as predicted\n\n"
          "A case's `ran` (what its source ran: attention kernel, gradient reduce dtype, checkpointing,\n"
          "DeepSpeed release, stack) is written into its training where the training object does not\n"
          "already say otherwise, through one table of names (`predict/accuracy_ran.c`): *mapped* cases\n"
          "are predicted as their source ran them; *agrees*: the training object said the same already;\n"
          "*kept*: it says otherwise and wins; *unmapped*: the engine has no such name (or no\n"
          "`configs/stacks/` bundle of that stack, by name or as a family's release), so the case\n"
          "keeps the engine's default.\n\n"
          "| key | mapped | agrees | kept | unmapped | unmapped names (cases) |\n|---|---:|---:|---:|---:|---|\n",
          f);
    for (int k = 0; k < ACC_RAN_N_KEYS; k++) {
        char names[512];
        unmapped_list(r, (acc_ran_key)k, names, sizeof names);
        fprintf(f, "| %s | %d | %d | %d | %d | %s |\n", acc_ran_key_name((acc_ran_key)k), c.n[k][ACC_RAN_MAPPED],
                c.n[k][ACC_RAN_AGREES], c.n[k][ACC_RAN_KEPT], c.n[k][ACC_RAN_UNMAPPED], names[0] ? names : "-");
    }
    fputs("\n", f);
}
