/* workload_local.c — the layers as one rank of a tensor-parallel group computes them
 * (wl_localize_tp, wl_localize_axonn; wl_localize_megatron: the megatron layout, whose micro-batch is the
 * replica's; see workload.h). Sources: Shoeybi et al. 2019 §3 (column / row parallel GEMMs, heads / t,
 * vocabulary-parallel embedding and head), Korthikanti et al. 2022 (arXiv 2205.05198) Table 2
 * (activation memory per layer: no parallelism sbh(34 + 5as/h); tensor parallel
 * sbh(10 + 24/t + 5as/(ht)); tensor + sequence parallel sbh(34/t + 5as/(ht))). Not here: the
 * pipeline split of the layers (layout_pipe.c). */
#include "workload.h"


#include "cp.h"
#include "kernels.h"

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

/* fsdp2:dp=D,t=T[,cp=C]: what a block saves per rank under torchtitan's DTensor tensor parallelism
 * with sequence parallelism (pytorch/torchtitan@9dec370ad26b5f8e9a7333a0e36165018262644b
 * torchtitan/parallelisms/parallelize_llama.py apply_tp L117-191, _save_list L213-223,
 * _apply_ac_to_transformer_block L226-285; torchtitan/models/llama/model.py L189, L253, L323-324,
 * L444-445). The norms run SequenceParallel on [b, s/t, h]; attention's and feed_forward's inputs
 * are redistributed Shard(1) -> Replicate (PrepareModuleInput's all-gather) and fed to wq / wk / wv,
 * resp. w1 / w3 (ColwiseParallel), and autograd's mm saves its left operand for the weight gradient
 * (pytorch/pytorch@d327a787 tools/autograd/derivatives.yaml, mm: "mat2: mm_mat2_backward(grad,
 * self, ...)"): the three (two) linears view one tensor, so one gathered [b, s, h] per module, two
 * per block, where Megatron's split (wl_localize_megatron, sp) keeps each one's sequence shard and
 * re-gathers it in backward. Under Float8 the gathered tensor is float8 (PrepareFloat8ModuleInput
 * casts before the all-gather: layout_tensor.c fp8_tp_gathers) and Float8Linear saves its input as
 * given (pytorch/ao@7ca1bfbefda3f448c0570f62227107ef0e40847f torchao/float8/float8_linear.py
 * matmul_with_hp_or_float8_args.forward: ctx.save_for_backward(input_hp, ...)): 1 B an element.
 * The output layer (ColwiseParallel from Shard(1), not a Float8Linear) saves its gathered input.
 * By checkpointing mode:
 *  none, selective (the core recomputed): act_bytes, with the two gathered inputs;
 *  full (checkpoint_wrapper on each TransformerBlock): the block's input only, a Shard(1) DTensor
 *    [b, s/t, h] (ckpt_bytes / t as Megatron's); the gathered inputs are in the recomputed stash
 *    of the block in backward (act_bytes);
 *  op (_save_list: aten.mm's outputs but every second, SDPA's, _c10d_functional.
 *    reduce_scatter_tensor's; the all-gather is not in it, so it is recomputed): mm 1 wq and 3 wv
 *    [tokens, n / t], SDPA's output [tokens, h / t], mm 5 w1 [tokens, f / t], mm 7 w2: the
 *    row-parallel partial sum [tokens, h], whole on every rank, and the two reduce-scatters'
 *    outputs after wo and w2, [tokens / t, h].
 * All per the rank's tokens / cp under context parallelism (cp_localize ran before). */
static void dtensor_saved(wl *o, const wl *w, double t, double cp)
{
    const double e = w->elem_bytes, th = w->tokens * w->model.hidden / cp; /* [b, s / cp, h] */
    for (int i = 0; i < o->n_layers; i++) {
        wl_layer *L = &o->layer[i];
        if (L->kind == WL_HEAD)
            L->act_bytes *= t; /* its gathered input, e th: Megatron's split kept th / t */
        if (L->kind != WL_BLOCK)
            continue;
        const double g = L->gemm_dtype == KD_FP8 ? 1 : e; /* the gathered element */
        L->act_bytes += 2 * (g - e / t) * th;            /* two gathered inputs, not two shards */
        if (w->act_ckpt == CKPT_OP) {
            const double w2 = w->model.swiglu ? e * th : 0; /* w2's partial sum, saved whole */
            L->op_act_bytes = (L->op_act_bytes - w2) / t + w2 + 2 * e * th / t;
        } else { /* MaxText's policies' names: the same tensors, split over the rank's columns */
            L->op_act_bytes /= t;
        }
    }
}

const wl *wl_localize_dtensor(const wl *w, const spec_layout *l, wl *out)
{
    spec_layout ml = *l;
    ml.sp = 1;
    wl_localize_megatron(w, &ml, out); /* the same linears, norms and vocabulary split (apply_tp);
                                          with cp: the rank's s / cp tokens too (cp_localize) */
    dtensor_saved(out, w, l->t, l->cp > 1 ? l->cp : 1);
    cp_torch_ring_tp(out, l->cp, l->t); /* PyTorch's ring on the rank's heads / t (cp.h) */
    return out;
}
