/* workload.c — parameters, FLOPs and activation bytes of a transformer from its shape.
 * Sources: parameters and FLOPs, Narayanan et al. SC'21 §5.1 (P = 12 l h^2 (1 + 13/(12h) + ...),
 * F = 72 B s l h^2 (1 + s/(6h) + V/(16 l h))); activations, Korthikanti et al. 2022 eq. 1
 * (s b h (34 + 5 a s / h) bytes per layer, 16-bit). Generalised here to any ffn, SwiGLU and GQA. */
#include "workload.h"

#include "kernels.h"

#include <stdio.h>
#include <string.h>

static void add_gemm(wl_layer *l, const char *name, double m, double n, double k, double batch)
{
    wl_gemm *g = &l->gemm[l->n_gemm++];
    snprintf(g->name, sizeof g->name, "%s", name);
    g->m = m;
    g->n = n;
    g->k = k;
    g->batch = batch;
    l->fwd_flops += 2.0 * m * n * k * batch;
}

void wl_build(const spec_model *m, const spec_training *t, wl *w)
{
    memset(w, 0, sizeof *w);
    w->model = *m;
    w->micro_batch = t->micro_batch;
    w->elem_bytes = SPEC_PREC_IS_FP32(t->precision) ? 4.0 : 2.0;
    w->act_ckpt = t->act_ckpt;
    const double h = m->hidden, f = m->ffn, s = m->seq_len, V = m->vocab, b = t->micro_batch;
    const double a = m->heads, d = h / a, kv = m->kv_heads * d; /* K and V width under GQA */
    const double T = b * s, e = w->elem_bytes;
    const double ln = m->rmsnorm ? h : 2 * h; /* one norm's parameters */
    w->tokens = T;

    /* Embedding: token table (+ learned positions); a lookup, no GEMM. */
    wl_layer *E = &w->layer[w->n_layers++];
    E->kind = WL_EMBED;
    snprintf(E->name, sizeof E->name, "embedding");
    E->count = 1;
    E->params = V * h + (m->learned_positions ? s * h : 0);
    E->fwd_hbm_bytes = 2 * T * h * e; /* rows read, output written */
    E->ckpt_bytes = E->act_bytes = 0;

    /* Transformer block: QKV, attention, projection, MLP, two norms. */
    wl_layer *B = &w->layer[w->n_layers++];
    B->kind = WL_BLOCK;
    snprintf(B->name, sizeof B->name, "block");
    B->count = m->layers;
    double attn_w = h * h + 2 * h * kv + h * h; /* Q, K, V, output projection */
    double mlp_w = (m->swiglu ? 3 : 2) * h * f;
    double biases = m->bias ? (h + 2 * kv) + h + (m->swiglu ? 2 * f : f) + h : 0;
    B->params = attn_w + mlp_w + biases + 2 * ln;
    add_gemm(B, "qkv", T, h + 2 * kv, h, 1);
    add_gemm(B, "scores", s, s, d, b * a); /* Q K^T per head */
    add_gemm(B, "context", s, d, s, b * a); /* softmax(QK^T) V */
    add_gemm(B, "proj", T, h, h, 1);
    if (m->swiglu) {
        add_gemm(B, "gate_up", T, 2 * f, h, 1);
    } else {
        add_gemm(B, "fc1", T, f, h, 1);
    }
    add_gemm(B, "fc2", T, h, f, 1);
    B->bwd_flops = 2 * B->fwd_flops;
    /* Activations (Korthikanti eq. 1, by part, in units of s*b*h*2 bytes for 16-bit):
     * attention 11 sbh = QKV input 2 + Q 2 + K 2 + V 2 + proj input 2 + dropout mask 1,
     *   + 5 a s^2 b for scores, softmax and its dropout (dropped with a fused kernel);
     * MLP 19 sbh for ffn = 4h = input 2 + fc1 out 2f/h + GeLU out 2f/h + dropout mask 1;
     *   SwiGLU: input 2 + gate 2f/h + up 2f/h + product 2f/h;
     * norms 4 sbh. Element size scales the 16-bit terms; masks stay 1 byte. */
    double sb = s * b, half = e / 2.0;
    double attn_act = half * (2 * sb * h + 2 * sb * h + 2 * sb * kv + 2 * sb * kv + 2 * sb * h) + sb * h;
    if (!t->flash_attention || SPEC_PREC_IS_FP32(t->precision)) /* scores 2, softmax 2 (scaled),
                                                    dropout mask 1 byte: a s^2 b each */
        attn_act += (4 * half + 1) * a * s * s * b;
    double mlp_act = m->swiglu ? half * (2 * sb * h + 6 * sb * f) : half * (2 * sb * h + 4 * sb * f) + sb * h;
    double norm_act = half * 4 * sb * h;
    /* (FlashAttention also keeps the softmax log-sum-exp, 4 a s b bytes: < 1% of a block's
     * stash at head dim 64 and up, left out) */
    /* FlashAttention runs 16-bit only: fp32 / tf32 training takes the unfused path */
    const int fused = t->flash_attention && !SPEC_PREC_IS_FP32(t->precision);
    if (!fused)
        B->act_core_bytes = (4 * half + 1) * a * s * s * b;
    B->act_bytes = attn_act + mlp_act + norm_act;
    B->ckpt_bytes = 2 * sb * h * half;
    B->fwd_hbm_bytes = B->params * e + 2 * B->act_bytes; /* weights once, activations written and read */
    B->core_fwd_flops = 2.0 * (2.0 * s * s * d * b * a);
    {
        /* Memory-bound kernels of a block, bytes read + written per token (e-byte elements;
         * dropout masks 1 byte), forward and backward:
         *  eager: norm x2 (2he; bwd reads x, dy, writes dx: 3he), rotary on q and k
         *  (2(h+kv)e both ways), dropout x2 (h(2e+1)), residual add x2 (3he; bwd: gradient
         *  sum 3he), activation (GELU 2fe, bwd 3fe; SwiGLU reads gate and up, writes 1: 3fe,
         *  bwd 5fe); bias adds fused in the GEMM epilogue (cuBLASLt);
         *  compiled (torch.compile / fused kernels): dropout + residual + next norm as one
         *  kernel (reads x and the branch, writes the sum and the normed: 4he (+h mask);
         *  bwd 4he (+h)), x2 per block, rotary and the activation as above.
         * Dropout where the model is GPT/BERT-style (GELU MLP); LLaMA-style (SwiGLU) trains
         * without. Unfused attention (no FlashAttention) adds per head s^2 elements: scale +
         * mask 2e, softmax 2e, dropout 2e+1 (eager) or one fused softmax 2e (+1) (compiled,
         * Megatron's fused scale-mask-softmax); bwd softmax 3e (+ dropout 2e+1). */
        int drop = !m->swiglu, rot = !m->learned_positions, comp = t->execution == EXEC_COMPILED;
        double act_f = m->swiglu ? 3 * f * e : 2 * f * e, act_b = m->swiglu ? 5 * f * e : 3 * f * e;
        double rotb = rot ? 2 * (h + kv) * e : 0, dmask = drop ? h : 0;
        double fw, bw;
        int kf, kb;
        if (comp) {
            fw = rotb + 2 * (4 * h * e + dmask) + act_f;
            bw = rotb + 2 * (4 * h * e + dmask) + act_b;
            kf = kb = 3 + rot;
        } else {
            fw = 2 * 2 * h * e + rotb + (drop ? 2 * h * (2 * e + 1) : 0) + 2 * 3 * h * e + act_f;
            bw = 2 * 3 * h * e + rotb + (drop ? 2 * h * (2 * e + 1) : 0) + 2 * 3 * h * e + act_b;
            kf = kb = 5 + rot + 2 * drop;
        }
        B->ew_fwd_bytes = fw * T;
        B->ew_bwd_bytes = bw * T;
        B->ew_fwd_kernels = kf;
        B->ew_bwd_kernels = kb;
        if (!t->flash_attention || SPEC_PREC_IS_FP32(t->precision)) {
            double ss = a * s * s * b;
            double cf = comp ? 2 * e + drop : 2 * e + 2 * e + (drop ? 2 * e + 1 : 0);
            double cb = 3 * e + (drop ? 2 * e + 1 : 0);
            int nk = comp ? 1 : 2 + drop;
            B->core_ew_fwd_bytes = cf * ss;
            B->core_ew_fwd_kernels = nk;
            B->ew_fwd_bytes += cf * ss;
            B->ew_bwd_bytes += cb * ss;
            B->ew_fwd_kernels += nk;
            B->ew_bwd_kernels += 1 + drop;
        }
    }

    /* Head: final norm + projection to the vocabulary (weights shared when tied). */
    wl_layer *H = &w->layer[w->n_layers++];
    H->kind = WL_HEAD;
    snprintf(H->name, sizeof H->name, "head");
    H->count = 1;
    H->params = ln + (m->tied_embeddings ? 0 : V * h);
    add_gemm(H, "lm_head", T, V, h, 1);
    H->bwd_flops = 2 * H->fwd_flops;
    H->act_bytes = H->ckpt_bytes = 2 * T * h * half; /* its input */
    H->fwd_hbm_bytes = V * h * e + T * V * e + T * h * e;
    w->logits_bytes = 4 * T * V; /* fp32 logits for the cross-entropy (as Megatron/DeepSpeed do) */
    /* Final norm (2he / 3he) and the loss: eager upcasts the logits to fp32 (read e, write 4)
     * and reads them for the log-softmax (4), backward reads them (4) and writes the gradient
     * (e); compiled (fused cross-entropy) reads the e-byte logits once and writes the
     * gradient in place (2e backward). */
    if (t->execution == EXEC_COMPILED) {
        H->ew_fwd_bytes = T * (2 * h * e) + T * V * e;
        H->ew_bwd_bytes = T * (3 * h * e) + T * V * 2 * e;
        H->ew_fwd_kernels = H->ew_bwd_kernels = 2;
    } else {
        H->ew_fwd_bytes = T * (2 * h * e) + T * V * (e + 8);
        H->ew_bwd_bytes = T * (3 * h * e) + T * V * (4 + e);
        H->ew_fwd_kernels = 3;
        H->ew_bwd_kernels = 3;
    }

    for (int i = 0; i < w->n_layers; i++) {
        wl_layer *l = &w->layer[i];
        l->flash = t->flash_attention && !SPEC_PREC_IS_FP32(t->precision) ? (t->flash_version == 3 ? 3 : 2) : 0;
        l->attn_kernel = t->attn_kernel;
        l->causal = !m->encoder;
        l->ckpt = t->act_ckpt;
        l->gemm_dtype = (int)kern_gemm_dtype(t->precision);
        w->params += l->params * l->count;
        w->model_flops += (l->fwd_flops + l->bwd_flops) * l->count;
    }
    w->hw_flops = w->model_flops + wl_recompute_flops(B) * B->count;
}

double wl_recompute_flops(const wl_layer *l)
{
    if (l->kind != WL_BLOCK || l->ckpt == CKPT_NONE)
        return 0;
    if (l->ckpt == CKPT_FULL)
        return l->fwd_flops;
    /* selective (Korthikanti et al. 2022 s5): attention's core only; fused attention keeps
     * nothing of it and recomputes inside its own backward (counted there), so nothing more */
    return l->flash ? 0 : l->core_fwd_flops;
}

double wl_max_layer_params(const wl *w)
{
    double mx = 0;
    for (int i = 0; i < w->n_layers; i++)
        if (w->layer[i].params > mx)
            mx = w->layer[i].params;
    return mx;
}
