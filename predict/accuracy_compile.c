/* accuracy_compile.c — eager / compiled pairs of one source and their gains (see
 * accuracy_compile.h). Plain comparisons of loaded cases; no statistics beyond the ratio. */
#include "accuracy_compile.h"

#include <math.h>
#include <string.h>

/* The same job but for training.execution. */
static int same_job(const acc_case *a, const acc_case *b)
{
    const spec_training *s = &a->training, *t = &b->training;
    return !strcmp(a->source_id, b->source_id) && !strcmp(a->cluster_ref, b->cluster_ref) &&
           !strcmp(a->calib_ref, b->calib_ref) && !strcmp(a->model_ref, b->model_ref) &&
           a->model.seq_len == b->model.seq_len && a->nodes == b->nodes && !strcmp(a->layout_str, b->layout_str) &&
           s->micro_batch == t->micro_batch && s->grad_accum == t->grad_accum && s->precision == t->precision &&
           s->act_ckpt == t->act_ckpt && s->attn_kernel == t->attn_kernel;
}

static double gain_pct(double compiled, double eager) { return 100 * (compiled / eager - 1); }

int acc_compile_pairs(const acc_case *const *cases, const acc_row *rows, int n, acc_compile_pair *out, int max)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (cases[i]->training.execution != EXEC_EAGER)
            continue;
        for (int j = 0; j < n; j++) {
            if (cases[j]->training.execution != EXEC_COMPILED || !same_job(cases[i], cases[j]))
                continue;
            if (k < max) {
                acc_compile_pair *p = &out[k];
                p->eager = i, p->compiled = j;
                p->measured_gain_pct = gain_pct(rows[j].measured, rows[i].measured);
                int ok = rows[i].ok && rows[j].ok;
                p->predicted_gain_pct = ok ? gain_pct(rows[j].predicted, rows[i].predicted) : NAN;
                p->diff_pts = ok ? p->predicted_gain_pct - p->measured_gain_pct : NAN;
            }
            k++;
        }
    }
    return k;
}
