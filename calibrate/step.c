/* step.c — the harness's sharded step described once (see step.h). */
#include "step.h"

#include <stdio.h>
#include <string.h>

size_t cal_step_layer(size_t hidden, size_t ffn, cal_step_gemm g[CAL_STEP_GEMMS])
{
    const size_t h = hidden, f = ffn;
    const cal_step_gemm def[CAL_STEP_GEMMS] = {
        {"qkv", 3 * h, h, 0}, {"proj", h, h, 0}, {"fc1", f, h, 0}, {"fc2", h, f, 0}};
    size_t off = 0;
    for (int i = 0; i < CAL_STEP_GEMMS; i++) {
        g[i] = def[i];
        g[i].w_off = off;
        off += g[i].n * g[i].k;
    }
    return off;
}

size_t cal_step_tokens(const cal_step_shape *s) { return (size_t)s->seq_len * (size_t)s->micro_batch; }

void cal_step_workload(const cal_step_shape *s, double elem_bytes, wl *w)
{
    memset(w, 0, sizeof *w);
    cal_step_gemm g[CAL_STEP_GEMMS];
    const double params = (double)cal_step_layer((size_t)s->hidden, (size_t)s->ffn, g);
    const double T = (double)cal_step_tokens(s);
    w->micro_batch = s->micro_batch;
    w->elem_bytes = elem_bytes;
    w->model.seq_len = s->seq_len;
    w->n_layers = 1;
    wl_layer *L = &w->layer[0];
    L->kind = WL_BLOCK;
    snprintf(L->name, sizeof L->name, "block");
    L->count = s->layers;
    L->params = params;
    /* the harness's GEMMs run in the step's dtype (meas_step.c: cuBLAS bf16 with fp32
     * accumulation on the GPU, fp32 on the CPU backend); left 0 the layer read as KD_FP32 and a
     * bf16 step was priced at the fp32 non-tensor rate (15x slow on an H100) */
    L->gemm_dtype = elem_bytes >= 4 ? KD_FP32 : KD_BF16;
    for (int i = 0; i < CAL_STEP_GEMMS; i++) {
        wl_gemm *x = &L->gemm[L->n_gemm++];
        x->role = WL_G_OTHER; /* not g[i].name's role: no tensor-parallel rule applies */
        snprintf(x->name, sizeof x->name, "gemm%d", i);
        x->m = T;
        x->n = (double)g[i].n;
        x->k = (double)g[i].k;
        x->batch = 1;
        L->fwd_flops += 2 * x->m * x->n * x->k;
    }
    L->bwd_flops = 2 * L->fwd_flops; /* input and weight gradients */
    w->params = L->params * L->count;
    w->model_flops = 3 * L->fwd_flops * L->count;
    w->hw_flops = w->model_flops;
    w->tokens = T;
}

int cal_step_graph(const cal_step_shape *s, double elem_bytes, const spec_layout *l, const spec_cluster *c,
                   int nodes, const char *src, wl *w, lo_graph *g, sc_err *err)
{
    cal_step_workload(s, elem_bytes, w);
    spec_training tr;
    spec_training_defaults(&tr);
    tr.micro_batch = s->micro_batch;
    tr.grad_accum = s->grad_accum;
    tr.prefetch_layers = 0;
    tr.act_ckpt = 0;
    tr.precision = elem_bytes == 4 ? PREC_FP32 : PREC_BF16;
    layout_build(w, &tr, l, c, nodes, g);
    if (g->pipelined) /* the harness runs sharded data-parallel steps, not pipelines */
        return sc_err_set(err, SC_EINPUT, src, "$.layout", "pipelined layouts are not measured by the harness");
    /* the harness times forward, backward and gradient sync, not an optimizer */
    int nb = 0;
    for (int b = 0; b < g->n_boundary; b++)
        if (!g->boundary[b].is_optimizer)
            g->boundary[nb++] = g->boundary[b];
    g->n_boundary = nb;
    return 0;
}
