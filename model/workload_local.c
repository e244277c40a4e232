/* workload_local.c — the layers as one rank of a tensor-parallel group computes them
 * (wl_localize_tp, wl_localize_axonn; wl_localize_megatron: the megatron layout, whose micro-batch is the
 * replica's; see workload.h). Sources: Shoeybi et al. 2019 §3 (column / row parallel GEMMs, heads / t,
 * vocabulary-parallel embedding and head), Korthikanti et al. 2022 (arXiv 2205.05198) Table 2
 * (activation memory per layer: no parallelism sbh(34 + 5as/h); tensor parallel
 * sbh(10 + 24/t + 5as/(ht)); tensor + sequence parallel sbh(34/t + 5as/(ht))). Not here: the
 * pipeline split of the layers (layout_pipe.c). */
#include "workload.h"


#include "cp.h"

/* Activations replicated across tensor-parallel ranks in Megatron-LM without sequence
 * parallelism (Korthikanti et al. 2022 §4.2.2: 10 sbh of the 34): the two norms' inputs (4 sbh),
 * the attention and MLP inputs (4 sbh) in 16-bit, and the two dropout masks (2 sbh, 1 byte). */
double wl_tp_replicated_act(const wl *w)
{
    const spec_model *m = &w->model;
    double sbh = (double)m->seq_len * w->micro_batch * m->hidden, half = w->elem_bytes / 2.0;
    return half * 8 * sbh + (w->hidden_dropout > 0 ? 2 : 0) * sbh; /* the masks where it runs (wl_dropout) */
}

static void scale_gemm(wl_gemm *g, double fm, double fn, double fk, double fb)
{
    g->m *= fm;
    g->n *= fn;
    g->k *= fk;
    g->batch *= fb;
}

static void refresh_flops(wl_layer *L)
{
    L->fwd_flops = 0;
    for (int i = 0; i < L->n_gemm; i++) {
        const wl_gemm *g = &L->gemm[i];
        L->fwd_flops += 2.0 * g->m * g->n * g->k * g->batch;
    }
    L->bwd_flops = 2 * L->fwd_flops;
}

/* Element-wise traffic follows the activations a rank holds (replicated norms and residuals
 * grow, split projections shrink); the s x s core is split over heads like the core GEMMs. */
static void scale_ew(wl_layer *L, double f)
{
    double cf = L->core_ew_fwd_bytes;
    L->ew_fwd_bytes = (L->ew_fwd_bytes - cf) * f + cf;
    L->ew_bwd_bytes *= f;
    L->core_fwd_flops = 0;
    for (int i = 0; i < L->n_gemm; i++)
        if (wl_role_core(L->gemm[i].role))
            L->core_fwd_flops += 2.0 * L->gemm[i].m * L->gemm[i].n * L->gemm[i].k * L->gemm[i].batch;
}

static void localize_tp(wl *o, const wl *w, double t)
{
    double rep = wl_tp_replicated_act(w);
    for (int i = 0; i < o->n_layers; i++) {
        wl_layer *L = &o->layer[i];
        L->params /= t;
        for (int j = 0; j < L->n_gemm; j++) {
            wl_gemm *g = &L->gemm[j];
            if (wl_role_core(g->role))
                scale_gemm(g, 1, 1, 1, 1); /* t x the sequences, 1/t of the heads */
            else if (wl_role_row(g->role))
                scale_gemm(g, t, 1, 1 / t, 1);
            else /* qkv, fc1, gate_up, lm_head */
                scale_gemm(g, t, 1 / t, 1, 1);
        }
        refresh_flops(L);
        double act0 = L->act_bytes;
        if (L->kind == WL_BLOCK) {
            L->act_bytes = t * rep + (L->act_bytes - rep);
            L->ckpt_bytes *= t;
        } else {
            L->act_bytes *= t; /* the head's input, replicated */
            L->ckpt_bytes *= t;
        }
        if (L->kind == WL_EMBED)
            L->fwd_hbm_bytes *= t; /* every rank writes the whole (partial) output */
        scale_ew(L, act0 > 0 ? L->act_bytes / act0 : 1);
        L->op_act_bytes *= act0 > 0 ? L->act_bytes / act0 : 1;
    }
}

static void localize_axonn(wl *o, double X, double Y, double Z)
{
    for (int i = 0; i < o->n_layers; i++) {
        wl_layer *L = &o->layer[i];
        L->params /= X * Y * Z;
        for (int j = 0; j < L->n_gemm; j++) {
            wl_gemm *g = &L->gemm[j];
            if (wl_role_core(g->role))
                scale_gemm(g, 1, 1, 1, X); /* XYZ x the sequences / Z, heads / Y */
            else if (wl_role_row(g->role))
                scale_gemm(g, X * Y, 1 / X, 1 / Y, 1); /* rows Y, columns X */
            else
                scale_gemm(g, X * Y, 1 / Y, 1 / X, 1); /* rows X, columns Y */
        }
        refresh_flops(L);
        L->act_bytes *= (X + Y) / 2;
        L->op_act_bytes *= (X + Y) / 2;
        scale_ew(L, (X + Y) / 2);
        L->ckpt_bytes *= L->kind == WL_BLOCK ? Y : (X + Y) / 2;
        if (L->kind == WL_EMBED)
            L->fwd_hbm_bytes *= Y; /* tokens / Z of XYZ x, hidden / X */
    }
    o->logits_bytes *= X; /* fp32 logits [tokens / Z, vocab / Y] of XYZ x the tokens */
}

/* The FLOPs of the localized layers (the model's own FLOPs per GPU do not change). */
static const wl *local_flops(const wl *w, wl *out)
{
    out->model_flops = w->model_flops;
    out->hw_flops = 0;
    for (int i = 0; i < out->n_layers; i++) {
        const wl_layer *L = &out->layer[i];
        out->hw_flops += (L->fwd_flops + L->bwd_flops + wl_recompute_flops(L)) * L->count;
    }
    return out;
}

const wl *wl_localize_tp(const wl *w, int t, wl *out)
{
    if (t <= 1)
        return w;
    *out = *w;
    localize_tp(out, w, t);
    return local_flops(w, out);
}

const wl *wl_localize_axonn(const wl *w, const int grid[3], wl *out)
{
    *out = *w;
    localize_axonn(out, grid[0], grid[1], grid[2]);
    return local_flops(w, out);
}

/* Megatron tensor parallelism's element-wise traffic per rank: the part over heads, FFN columns
 * and the vocabulary (ew_tp: rotary, the activation, the unfused softmax, the loss) is the
 * rank's 1/t (Shoeybi et al. 2019 s3: GeLU on the column-parallel partition, attention heads
 * split); the norms, residual adds and hidden dropout run on the whole [s, h] activation on
 * every rank, unless sequence parallelism splits them too (Korthikanti et al. 2022 s4.2.2).
 * Kernel launches do not change. */
static void split_ew(wl_layer *L, double t, int sp)
{
    double f = sp ? L->ew_fwd_bytes : L->ew_tp_fwd_bytes;
    double b = sp ? L->ew_bwd_bytes - L->fp8_rep_bwd_bytes : L->ew_tp_bwd_bytes; /* fp8: gathered, then cast */
    L->ew_fwd_bytes -= f * (1 - 1 / t);
    L->ew_bwd_bytes -= b * (1 - 1 / t);
    L->ew_tp_fwd_bytes /= t;
    L->ew_tp_bwd_bytes /= t;
    L->ew_param_bytes /= t;
    L->fp8_param_bwd_bytes /= t;
    L->core_ew_fwd_bytes /= t;
}

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
            if (wl_role_core(g->role))
                g->batch /= t; /* heads / t */
            else if (wl_role_row(g->role))
                g->k /= t; /* row parallel: the contraction split */
            else /* qkv, fc1, gate_up, lm_head: column parallel */
                g->n /= t;
            L->fwd_flops += 2.0 * g->m * g->n * g->k * g->batch;
        }
        L->bwd_flops = 2 * L->fwd_flops;
        split_ew(L, t, l->sp);
        if (L->kind == WL_BLOCK) {
            /* Table 2: sp splits everything; without it the norms', inputs' and dropout
             * masks' 10 sbh stay whole */
            L->act_bytes = l->sp ? L->act_bytes / t : rep + (L->act_bytes - rep) / t;
            L->act_core_bytes /= t; /* of it, the s x s core: heads / t either way (Table 2's
                                       5as/(ht); selective keeps act_bytes less this) */
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
    cp_localize(out, l->cp); /* context parallelism: the sequence / cp (cp.h) */
    return out;
}
