/* workload_megatron.c — the layers as one rank of a Megatron-LM tensor-parallel group computes
 * them when the micro-batch is the replica's (megatron layout; see wl_localize_megatron in
 * workload.h). Sources: Shoeybi et al. 2019 §3 (column / row parallel GEMMs, heads / t,
 * vocabulary-parallel embedding and head), Korthikanti et al. 2022 (arXiv 2205.05198) Table 2
 * (activation memory per layer: no parallelism sbh(34 + 5as/h); tensor parallel
 * sbh(10 + 24/t + 5as/(ht)); tensor + sequence parallel sbh(34/t + 5as/(ht))). Not here: the
 * pipeline split of the layers (layout_pipe.c). */
#include "workload.h"

#include <string.h>

const wl *wl_localize_megatron(const wl *w, const spec_layout *l, wl *out)
{
    *out = *w;
    const double t = l->t > 0 ? l->t : 1;
    const double rep = wl_tp_replicated_act(w);
    for (int i = 0; i < out->n_layers; i++) {
        wl_layer *L = &out->layer[i];
        L->params /= t;
        L->fwd_flops = 0;
        for (int j = 0; j < L->n_gemm; j++) {
            wl_gemm *g = &L->gemm[j];
            const char *n = g->name;
            if (!strcmp(n, "scores") || !strcmp(n, "context"))
                g->batch /= t; /* heads / t */
            else if (!strcmp(n, "proj") || !strcmp(n, "fc2"))
                g->k /= t; /* row parallel: the contraction split */
            else /* qkv, fc1, gate_up, lm_head: column parallel */
                g->n /= t;
            L->fwd_flops += 2.0 * g->m * g->n * g->k * g->batch;
        }
        L->bwd_flops = 2 * L->fwd_flops;
        if (L->kind == WL_BLOCK) {
            /* Table 2: sp splits everything; without it the norms', inputs' and dropout
             * masks' 10 sbh stay whole */
            L->act_bytes = l->sp ? L->act_bytes / t : rep + (L->act_bytes - rep) / t;
            if (l->sp)
                L->ckpt_bytes /= t; /* the layer input is stored sequence-split */
        } else if (L->kind == WL_HEAD && l->sp) {
            L->act_bytes /= t; /* its input, sequence-split (re-gathered for the weight gradient) */
            L->ckpt_bytes /= t;
        }
    }
    out->logits_bytes = w->logits_bytes / t; /* [tokens, vocab / t] fp32 */
    /* the model's FLOPs of one micro-batch, and what one rank runs of them */
    out->model_flops = w->model_flops;
    out->hw_flops = 0;
    for (int i = 0; i < out->n_layers; i++) {
        const wl_layer *L = &out->layer[i];
        out->hw_flops += (L->fwd_flops + L->bwd_flops + (w->act_ckpt && L->kind == WL_BLOCK ? L->fwd_flops : 0)) * L->count;
    }
    return out;
}
