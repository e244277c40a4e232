/* workload.c — parameters, FLOPs and activation bytes of a transformer from its shape.
 * Sources: parameters and FLOPs, Narayanan et al. SC'21 §5.1 (P = 12 l h^2 (1 + 13/(12h) + ...),
 * F = 72 B s l h^2 (1 + s/(6h) + V/(16 l h))); activations, Korthikanti et al. 2022 eq. 1
 * (s b h (34 + 5 a s / h) bytes per layer, 16-bit). Generalised here to any ffn, SwiGLU and GQA. */
#include "workload.h"

#include "kernels.h"

#include <stdio.h>
#include <math.h>
#include <string.h>

/* each name in a field of the GEMM's name size: add_gemm copies it whole (a fixed-size copy,
 * not snprintf of a string of unknown length: wl_build runs once per estimate in a sweep) */
static const char ROLE_NAMES[WL_G_N][sizeof ((wl_gemm *)0)->name] = {
    [WL_G_OTHER] = "",    [WL_G_QKV] = "qkv", [WL_G_SCORES] = "scores",   [WL_G_CONTEXT] = "context",
    [WL_G_PROJ] = "proj", [WL_G_FC1] = "fc1", [WL_G_GATE_UP] = "gate_up", [WL_G_FC2] = "fc2",
    [WL_G_HEAD] = "lm_head"};

const char *wl_gemm_role_name(wl_gemm_role r) { return r >= WL_G_OTHER && r < WL_G_N ? ROLE_NAMES[r] : ""; }

static void add_gemm(wl_layer *l, wl_gemm_role role, double m, double n, double k, double batch)
{
    wl_gemm *g = &l->gemm[l->n_gemm++];
    g->role = role;
    memcpy(g->name, ROLE_NAMES[role], sizeof g->name);
    g->m = m;
    g->n = n;
    g->k = k;
    g->batch = batch;
    l->fwd_flops += 2.0 * m * n * k * batch;
}

/* The eager element-wise flags of a training (spec.h): -1 is each one's default. Compiled
 * execution (torch.compile / fused kernels) keeps fp32 math in registers: the upcasts cost
 * nothing there, repeat_kv's copies stay (they feed the attention kernel through HBM). */
static int flag_on(int v, int dflt) { return v < 0 ? dflt : v; }

/* Extra bytes per token of one block's eager kernels (fwd, bwd) that implementation flags add,
 * e-byte elements, fp32 4 bytes. Counted from pytorch/torchtitan@9dec370 (norms.py RMSNorm,
 * model.py apply_rotary_emb / repeat_kv / Attention.forward / FeedForward), one HBM read or
 * write per tensor argument or output of each eager op:
 *  norm_fp32, RMSNorm: x.float() (e+4), pow (8), mean (4), x * rsqrt (8), type_as (4+e),
 *    * weight (2e): 28+4e per h, 8 kernels, against the fused norm's 2e; backward (autograd of
 *    the same chain: weight mul 2e + its gradient 2e, type_as e+4, mul 8 + 8, mean 4, pow 12,
 *    the two paths summed 12, float e+4): 52+6e against 3e. LayerNorm: x.float(), layer_norm,
 *    type_as: 16+2e, 3 kernels; backward 20+2e.
 *  rope_fp32, complex rotary on q and k: float (e+4), complex multiply (8), type_as (4+e) per
 *    element, both passes: 16+2e against 2e, 3 kernels each of q and k instead of one.
 *  rope_unfused (when rope_fp32 is off), rotary as e-byte tensor arithmetic, Hugging Face
 *    apply_rotary_pos_emb (huggingface/transformers@002272831fba modeling_llama.py: q * cos +
 *    rotate_half(q) * sin, rotate_half = cat(-x2, x1) of the two halves), per q or k element
 *    (cos and sin are per token, broadcast over heads: left out): forward mul 2e, neg of the
 *    half e, cat 2e, mul 2e, add 3e = 10e against 2e, 5 kernels instead of one; backward (the
 *    add passes the gradient on): mul by cos 2e, by sin 2e, neg e, each half's slice_backward
 *    (zeros then copy into the slice: e + e) 4e, the three gradients of q summed by two adds
 *    6e = 15e against 2e, 9 kernels instead of one.
 *  repeat_kv (and SDPA's head-major layout): K and V expanded to all heads (read kv e, write
 *    h e each; backward the sum back: the same bytes), only when kv < h; the attention output
 *    transposed back by a copy (2he, backward 2he).
 *  swiglu_unfused, SwiGLU as silu then mul (2fe + 3fe against the fused 3fe; backward mul 5fe
 *    + silu 3fe against 5fe): +2fe, +3fe, one kernel more each way. */
static void ew_impl_extra(const spec_model *m, const spec_training *t, double e, double *fw, double *bw, int *kf,
                          int *kb)
{
    const double h = m->hidden, f = m->ffn, kv = (double)m->kv_heads * (m->hidden / m->heads);
    const int comp = t->execution == EXEC_COMPILED, rot = !m->learned_positions;
    *fw = *bw = 0;
    *kf = *kb = 0;
    if (!comp && rot && flag_on(t->rope_fp32, 0)) {
        *fw += 16 * (h + kv), *bw += 16 * (h + kv);
        *kf += 5, *kb += 5;
    } else if (!comp && rot && flag_on(t->rope_unfused, 0)) {
        *fw += 8 * e * (h + kv), *bw += 13 * e * (h + kv);
        *kf += 9, *kb += 17;
    }
    if (flag_on(t->repeat_kv, 0)) {
        double rk = kv < h ? 2 * (kv + h) * e : 0;
        *fw += rk + 2 * h * e, *bw += rk + 2 * h * e;
        *kf += (kv < h ? 2 : 0) + 1, *kb += (kv < h ? 2 : 0) + 1;
    }
    if (!comp && m->swiglu && flag_on(t->swiglu_unfused, 0)) {
        *fw += 2 * f * e, *bw += 3 * f * e;
        *kf += 1, *kb += 1;
    }
    if (!comp && !m->swiglu && flag_on(t->gelu_unfused, 0)) { /* gelu_unfused (below): 18e / 28e against 2e / 3e */
        *fw += 16 * f * e, *bw += 25 * f * e;
        *kf += 7, *kb += 10;
    }
}

/* norm_fp32's extra bytes (above): over the whole hidden vector, so replicated on every
 * tensor-parallel rank without sequence parallelism, unlike the rest of ew_impl_extra, which
 * runs over heads (rotary, repeat_kv) or FFN columns (the activation) and is the rank's 1/t
 * (workload_local.c split_ew; flag35: it used to be counted whole on every rank). */
static void ew_norm_extra(const spec_model *m, const spec_training *t, double e, double *fw, double *bw, int *kf,
                          int *kb)
{
    *fw = *bw = 0;
    *kf = *kb = 0;
    if (t->execution != EXEC_COMPILED && flag_on(t->norm_fp32, 0)) {
        double nf = m->rmsnorm ? 28 + 4 * e : 16 + 2 * e, nb = m->rmsnorm ? 52 + 6 * e : 20 + 2 * e;
        int k = m->rmsnorm ? 8 : 3;
        *fw = 2 * (nf - 2 * e) * m->hidden, *bw = 2 * (nb - 3 * e) * m->hidden;
        *kf = 2 * (k - 1), *kb = 2 * (k + 1);
    }
}

/* bias_unfused (dsv36): eager torch before pytorch/pytorch#72148 (2022), which first routed
 * addmm through cuBLASLt (whose epilogue adds the bias), ran a biased projection's bias as kernels
 * of its own. CUDA addmm (aten/src/ATen/native/cuda/Blas.cpp addmm_out_cuda_impl) copies the
 * expanded bias into the output (`at::native::copy_(result, *self_)`, kept today only where the
 * Lt path does not apply), then runs a beta = 1 GEMM; Hugging Face GPT-2's Conv1D is
 * `torch.addmm(self.bias, x.view(-1, nx), self.weight)` (transformers modeling_utils / pytorch_utils
 * Conv1D, every 4.x release). Backward, the gradient of the expanded bias is reduced over the
 * tokens by a separate kernel (autograd's sum_to to the bias's shape). Per token, e-byte
 * elements, for each biased projection of output width n: forward the copy writes n e (its
 * n-wide bias read is left out, as is the GEMM's read of C, inside a compute-bound GEMM),
 * backward the reduction reads n e; one kernel each way per projection. The projections: qkv
 * (h + 2 kv) and the first MLP GEMM (f, or 2f for a gated one), split over tensor ranks with
 * their columns; the attention output projection and the second MLP GEMM (h each), whole on
 * every rank. Eager only, models with biases only. */
static void ew_bias_unfused(const spec_model *m, const spec_training *t, double e, double *split, double *whole,
                            int *k)
{
    const double h = m->hidden, f = m->ffn, kv = (double)m->kv_heads * (m->hidden / m->heads);
    *split = *whole = 0;
    *k = 0;
    if (!m->bias || t->execution == EXEC_COMPILED || !flag_on(t->bias_unfused, 0))
        return;
    *split = (h + 2 * kv + (m->swiglu ? 2 * f : f)) * e;
    *whole = 2 * h * e;
    *k = 4;
}

/* gelu_unfused: the tanh-approximation GELU written as tensor arithmetic, each operator one
 * eager kernel (huggingface/transformers activations.py gelu_new / NewGELUActivation, GPT-2's
 * default activation_function "gelu_new", unchanged from v4.12.0 to today:
 * 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * pow(x, 3))))). Per element, e bytes each,
 * one read or write per tensor argument or output:
 *   forward, 8 kernels: 0.5*x (2e), pow (2e), 0.044715*() (2e), x + () (3e), c*() (2e),
 *     tanh (2e), 1 + () (2e), product (3e): 18e against the fused kernel's 2e;
 *   backward (autograd of that chain), 11 kernels: the product's two gradients (3e + 3e),
 *     tanh_backward (3e), the two scalar muls (2e + 2e), pow_backward (x.pow(2), * 3,
 *     * grad: 2e + 2e + 3e), 0.5*x's (2e), x's three gradient contributions summed (3e + 3e);
 *     the two adds pass the gradient through: 28e against 3e.
 * Saved for backward besides the fc1 output: 0.5*x, 1 + tanh and tanh's result (3 f e per
 * token; wl_build). */


/* autocast (torch.cuda.amp, pytorch/pytorch v1.10 aten/src/ATen/autocast_mode.cpp): softmax is
 * on the fp32_set_opt_dtype list (computed from the 16-bit scores with dtype=float32, no cast
 * kernel), bmm on the lower-precision list (its fp32 input cast to 16 bits). For the eager
 * unfused core of a 16-bit (e = 2) training, per s x s element: softmax writes fp32 (+2),
 * dropout runs on fp32 (4 + 4 + 1 against 2e + 1: +4), the cast before the context bmm (4 + 2:
 * +6), one kernel more; backward the cast's backward to fp32 (2 + 4: +6), dropout's on fp32
 * (+4), softmax's backward reads fp32 output and gradient and writes the 16-bit input's
 * gradient (4 + 4 + 2 against 3e: +4), one kernel more. Softmax's saved output is fp32: +2 B
 * of activations per element. The fp32 weights are cast once per forward (read 4, write 2)
 * and their 16-bit gradients cast back (read 2, write 4): 6 B per parameter each way
 * (amp_weight_bytes). The residual stream and LayerNorm's fp32 path are left out (h terms:
 * < 10 % of the core's at s >= h). Eager only: compiled or 32-bit training has none of it. */
static int amp_core(const spec_training *t)
{
    return t->execution != EXEC_COMPILED && !SPEC_PREC_IS_FP32(t->precision) && flag_on(t->autocast, 0);
}

/* Hugging Face GPT-2's eager attention core under autocast, per s x s element (dsv36), read op by
 * op at v4.12 (transformers PR #13573, merged before 2021-10-11 and so in v4.12.0 of
 * 2021-10-28, downcasts the probabilities to V's dtype after the softmax; read in
 * VasudevGupta7/huggingface-transformers@9ded9cd5 models/gpt2/modeling_gpt2.py _attn), with the
 * padding mask in the parameters' dtype, fp32 under amp (GPT2Model.forward
 * `attention_mask.to(dtype=self.dtype)`), so the mask add promotes the fp16 scores to fp32:
 * forward / sqrt(d) and where in e bytes (2e + 2e), + mask (e + 4), softmax fp32 in and out (8),
 * .type(value.dtype) (4 + e), dropout in e bytes (2e + 1): 33 B at e = 2; backward dropout
 * (2e + 1), the cast's backward (e + 4), softmax backward in fp32 (12), the add's fp32 gradient
 * cast to the e-byte branch (4 + e), where and the division (2e + 2e): 37 B; 5 kernels each
 * way + dropout's. (The generic autocast terms in ew_block, for a model without this mask chain,
 * give 33 and 33.) */
static void amp_mask_chain(double e, int adrop, double *cf, double *cb)
{
    double drop = adrop ? 2 * e + 1 : 0;
    *cf = 4 * e + (e + 4) + 8 + (4 + e) + drop;
    *cb = drop + (e + 4) + 12 + (4 + e) + 4 * e;
}

/* FP8 training's casts around the linear layers' GEMMs (precision fp8), HBM bytes per block
 * and micro-step, one element of the named tensor each (T tokens; a linear's input X is
 * T x k, its output gradient G T x n, its weight W n x k). The GEMMs themselves run at the
 * FP8 rate (kernels.c); this is the memory-bound work around them. The recipe is the
 * framework's:
 *  torch-native (fsdp, fsdp2): torchao Float8Linear, dynamic tensorwise scaling for input,
 *    weight and output gradient, all three GEMMs in fp8 (allenai/OLMo-core@1f96d559
 *    src/olmo_core/float8.py Float8Config defaults: dynamic x3, enable_fsdp_float8_all_gather,
 *    precompute_float8_dynamic_scale_for_fsdp; pytorch/ao@7ca1bfbe torchao/float8/
 *    float8_linear.py matmul_with_hp_or_float8_args). Forward: X's amax (read 2) and cast
 *    (read 2, write 1): 5 B. Backward: G cast likewise (5; its dim0 and dim1 casts are one
 *    computation, counted once as compiled), G^T made row-major for the wgrad GEMM (an fp8
 *    copy, read 1 write 1: 2), X re-cast from the saved bf16 input (5) and made column-major
 *    (2), the fp8 weight (cast on the shard before FSDP's all-gather: 3/p B per parameter and
 *    pass, left out) copied to the layout dgrad needs (2 B per parameter): 5 T k forward,
 *    7 T k + 7 T n + 2 n k backward. Counted as compiled (torchtitan docs/float8.md: compile
 *    fuses the amax and scaling kernels); eager runs more kernels: a lower bound there.
 *  otherwise (Megatron-Core with Transformer Engine, the default of FP8 in spec.h), by the
 *    training key fp8_recipe (spec.h; unset: delayed, Megatron-LM's --fp8-recipe default,
 *    NVIDIA/Megatron-LM@307dcf37f03d44da131ba21999278abe4112d2ad megatron/training/
 *    arguments.py). The linears' inputs come from three producers: the norm (qkv's and fc1's,
 *    2h: LayerNormLinear / LayerNormMLP), the activation (fc2's, f) and attention (proj's, h:
 *    te.Linear); the output gradients all from separate kernels:
 *    delayed (DelayedScaling, the scale from the amax history, the new amax taken inside the
 *      kernel): the norm writes its output in fp8 itself ("Always used fused kernel for FP8
 *      delayed scaling": NVIDIA/TransformerEngine@01a4d046939c8505b5b0aeb70322f8c88c89262a
 *      transformer_engine/pytorch/csrc/extensions/normalization.cpp layernorm_fwd /
 *      rmsnorm_fwd), as does the activation (@012983d84dca0e58e17eaa1dc7572ee35e238300
 *      .../extensions/activation.cpp activation_helper, its last branch): 1 B in place of the
 *      16-bit output already priced (2 B), and the transpose for the weight gradient by a
 *      kernel of its own (read 1, write 1: @49faa734906df88d6729578394acc97e507f8f52
 *      transformer_engine/common/normalization/layernorm/ln_api.cpp layernorm_fwd "Compute
 *      FP8 transpose if required", nvte_transpose; TE 1.x transposes the saved fp8 output in
 *      backward, tex.fp8_transpose, the same bytes): +1 B, one kernel; proj's input and
 *      every output gradient by cast_transpose (read 2, write fp8 and its transpose: 4 B,
 *      one kernel);
 *    current (Float8CurrentScaling): every quantized 16-bit tensor is written in 16 bits by
 *      its producer, its amax taken in a pass of its own (nvte_compute_amax, read 2 B: the
 *      normalization.cpp unfused branch, activation.cpp's current-scaling branch), then cast
 *      and transposed (4 B): 6 B and two kernels for each of the four inputs and four
 *      output gradients; under sequence parallelism the amax of qkv's and fc1's input and of
 *      proj's and fc2's output gradient is all-reduced over the tensor group first
 *      (layout_tensor.c fp8_amax_reduce).
 *    The weights' cast_transpose runs once per step and is cached over the micro-steps
 *    (Megatron-LM core/extensions/transformer_engine.py is_first_microbatch): left out, as is
 *    the per-step amax history update (a few KiB).
 * Tensor parallelism: a column-parallel linear's (qkv, fc1) input is h wide on every rank and
 * its output gradient split; a row-parallel one's (proj, fc2) input split, its output gradient
 * h wide on every rank, also under sequence parallelism (gathered before the cast:
 * fp8_rep_bwd_bytes); the column inputs are cast on the rank's sequence shard there. */
static void fp8_casts(const spec_model *m, const spec_training *t, double T, wl_layer *B)
{
    const double h = m->hidden, f = m->ffn, kv = (double)m->kv_heads * (m->hidden / m->heads);
    const double nq = h + 2 * kv, nf = m->swiglu ? 2 * f : f;
    const double in_rep = 2 * h, in_tp = h + f, g_rep = 2 * h, g_tp = nq + nf;
    const double w = h * nq + h * h + h * nf + f * h;
    const int ao = t->framework == FW_FSDP || t->framework == FW_FSDP2, cur = !ao && spec_fp8_current(t);
    /* xn: per element of the norm's and activation's outputs (qkv, fc1: 2h; fc2: f); xp: of
     * proj's input (h); gb: of an output gradient */
    const double xn = ao ? 5 : cur ? 6 : 1, xp = ao ? 5 : cur ? 6 : 4;
    const double xb = ao ? 7 : 0, gb = ao ? 7 : cur ? 6 : 4, wb = ao ? 2 : 0;
    B->ew_fwd_bytes += (xn * (in_rep + f) + xp * h) * T;
    B->ew_bwd_bytes += (xb * (in_rep + in_tp) + gb * (g_rep + g_tp)) * T + wb * w;
    B->ew_tp_fwd_bytes += (xn * f + xp * h) * T;
    B->ew_tp_bwd_bytes += (xb * in_tp + gb * g_tp) * T + wb * w;
    B->fp8_rep_bwd_bytes = gb * g_rep * T;
    B->fp8_param_bwd_bytes = wb * w; /* per parameter: every context-parallel rank copies it */
    /* per linear: torchao amax + cast; TE delayed a transpose or cast_transpose, current amax + cast */
    B->ew_fwd_kernels += ao ? 8 : cur ? 8 : 4;
    /* per linear: torchao X and G amax + cast + copy, W copy; TE G's (amax +) cast_transpose */
    B->ew_bwd_kernels += ao ? 28 : cur ? 8 : 4;
}

/* Dropout defaults (knobs35), where the training key is not given:
 *  framework megatron: 0.1 hidden, 0.1 attention for every model: Megatron-LM
 *    --hidden-dropout / --attention-dropout default 0.1 (NVIDIA/Megatron-LM@e9b61f78
 *    megatron/arguments.py L733-736; core_v0.6.0 and @f2e5db402c44ae309aa6448bcb4ae87e8ae0f5f4
 *    megatron/training/arguments.py L947-950), Megatron-Core TransformerConfig hidden_dropout /
 *    attention_dropout = 0.1 (@f2e5db40 megatron/core/transformer/transformer_config.py
 *    L43-46); NeMo 2.0's GPTConfig inherits them (GPTConfig175B keeps 0.1 / 0.1), its Llama
 *    configs set 0 / 0: a recipe that sets them says so in the case or spec;
 *  otherwise the model family's released config: a GELU MLP 0.1 / 0.1 (transformers
 *    GPT2Config resid_pdrop / attn_pdrop = 0.1; BertConfig hidden_dropout_prob /
 *    attention_probs_dropout_prob = 0.1; GPT-3 as Megatron-DeepSpeed's arguments.py, the
 *    same 0.1), SwiGLU 0 / 0 (LlamaConfig attention_dropout = 0.0, no hidden dropout in
 *    LlamaDecoderLayer). Families that break the rule (Falcon, MPT, GPT-NeoX: GELU, 0 / 0)
 *    get theirs from the Hugging Face reader (spec_hf.c) or the key. DeepSpeed and FSDP have
 *    no dropout setting of their own: the model's. */
double wl_dropout(const spec_model *m, const spec_training *t, int attention)
{
    double p = attention ? t->attention_dropout : t->hidden_dropout;
    if (p >= 0)
        return p;
    if (t->framework == FW_MEGATRON)
        return 0.1;
    return m->swiglu ? 0 : 0.1;
}

/* Memory-bound kernels of a block, bytes read + written per token (e-byte elements; dropout
 * masks 1 byte), forward and backward:
 *  eager: norm x2 (2he; bwd reads x, dy, writes dx: 3he), rotary on q and k (2(h+kv)e both
 *  ways), dropout x2 (h(2e+1)), residual add x2 (3he; bwd: gradient sum 3he), activation
 *  (GELU 2fe, bwd 3fe; SwiGLU reads gate and up, writes 1: 3fe, bwd 5fe); bias adds fused in
 *  the GEMM epilogue (cuBLASLt);
 *  compiled (torch.compile / fused kernels): dropout + residual + next norm as one kernel
 *  (reads x and the branch, writes the sum and the normed: 4he (+h mask); bwd 4he (+h)), x2
 *  per block, rotary and the activation as above.
 * Hidden dropout x2 where its probability (wl_dropout) is > 0, none at 0; the probability
 * changes no byte (the whole mask is drawn and applied). Attention-probability dropout: in the
 * unfused path below where its probability is > 0; inside FlashAttention (FA2 dropout_p > 0:
 * Philox per s x s element, forward and again in backward) it has a cost no public A100 / H100
 * measurement gives (docs/COMPUTE.md): not priced, the kernel's no-dropout rate stands.
 * Unfused attention (no FlashAttention) adds per head s^2 elements: scale + mask 2e, softmax
 * 2e, dropout 2e+1 (eager) or one fused softmax 2e (+1) (compiled, Megatron's fused
 * scale-mask-softmax); bwd softmax 3e (+ dropout 2e+1). The implementation's own kernels
 * (fp32 upcasts, repeat_kv, unfused SwiGLU) on top: ew_impl_extra. */
static void ew_block(const spec_model *m, const spec_training *t, double e, double b, wl_layer *B)
{
    const double h = m->hidden, f = m->ffn, s = m->seq_len, a = m->heads;
    const double kv = (double)m->kv_heads * (m->hidden / m->heads), T = b * s;
    int drop = wl_dropout(m, t, 0) > 0, adrop = wl_dropout(m, t, 1) > 0;
    int rot = !m->learned_positions, comp = t->execution == EXEC_COMPILED;
    double act_f = m->swiglu ? 3 * f * e : 2 * f * e, act_b = m->swiglu ? 5 * f * e : 3 * f * e;
    double rotb = rot ? 2 * (h + kv) * e : 0, dmask = drop ? h : 0;
    double fw, bw, xf, xb;
    int kf, kb, xkf, xkb;
    if (comp) {
        fw = rotb + 2 * (4 * h * e + dmask) + act_f;
        bw = rotb + 2 * (4 * h * e + dmask) + act_b;
        kf = kb = 3 + rot;
    } else {
        fw = 2 * 2 * h * e + rotb + (drop ? 2 * h * (2 * e + 1) : 0) + 2 * 3 * h * e + act_f;
        bw = 2 * 3 * h * e + rotb + (drop ? 2 * h * (2 * e + 1) : 0) + 2 * 3 * h * e + act_b;
        kf = kb = 5 + rot + 2 * drop;
    }
    double nf, nb;
    int nkf, nkb;
    double bs, bwh;
    int bk;
    ew_impl_extra(m, t, e, &xf, &xb, &xkf, &xkb);
    ew_norm_extra(m, t, e, &nf, &nb, &nkf, &nkb);
    ew_bias_unfused(m, t, e, &bs, &bwh, &bk);
    B->ew_fwd_bytes = (fw + nf + xf + bs + bwh) * T;
    B->ew_bwd_bytes = (bw + nb + xb + bs + bwh) * T;
    B->ew_fwd_kernels = kf + nkf + xkf + bk;
    B->ew_bwd_kernels = kb + nkb + xkb + bk;
    B->ew_tp_fwd_bytes = (rotb + act_f + xf + bs) * T; /* per head / per FFN column (Shoeybi et al. 2019 s3) */
    B->ew_tp_bwd_bytes = (rotb + act_b + xb + bs) * T;
    if (!t->flash_attention || SPEC_PREC_IS_FP32(t->precision)) {
        double ss = a * s * s * b;
        /* mask_unfused, eager (huggingface/transformers v4.12.0 models/gpt2/modeling_gpt2.py
         * GPT2Attention._attn): attn_weights / sqrt(d), torch.where(causal_mask, w, masked_bias),
         * + attention_mask (the Trainer passes one) as three kernels: 6e instead of 2e forward
         * (the s x s bool mask and the (b, 1, 1, s) padding mask are broadcast: not counted);
         * backward where's (2e) and the division's (2e); the add passes the gradient through.
         * Baichuan2's eager path has the same three (FlagOpen/FlagPerf@b3382b9b
         * training/benchmarks/baichuan2_13b/deepspeed/model/modeling_baichuan.py: / sqrt(d),
         * + the ALiBi mask, torch.max(finfo.min); its per-head mask read is left out) */
        int mk = !comp && flag_on(t->mask_unfused, 0), amp = amp_core(t);
        double cf = comp ? 2 * e + adrop : 2 * e + 2 * e + (adrop ? 2 * e + 1 : 0) + (mk ? 4 * e : 0);
        double cb = 3 * e + (adrop ? 2 * e + 1 : 0) + (mk ? 4 * e : 0);
        int nk = comp ? 1 : 2 + adrop + (mk ? 2 : 0) + amp, core_kb = 1 + adrop + (mk ? 2 : 0) + amp;
        if (amp && mk) /* amp_mask_chain (below): the v4.12 chain as it runs under autocast */
            amp_mask_chain(e, adrop, &cf, &cb), core_kb = 5 + adrop;
        else if (amp)
            cf += 2 + (adrop ? 4 : 0) + 6, cb += 6 + (adrop ? 4 : 0) + 4;
        B->core_ew_fwd_bytes = cf * ss;
        B->core_ew_fwd_kernels = nk;
        B->ew_fwd_bytes += cf * ss;
        B->ew_bwd_bytes += cb * ss;
        B->ew_tp_fwd_bytes += cf * ss, B->ew_tp_bwd_bytes += cb * ss;
        B->ew_fwd_kernels += nk;
        B->ew_bwd_kernels += core_kb;
    }
}

/* The loss's costs per vocabulary entry of a token, time beside memory, per implementation.
 *
 * Memory: F.cross_entropy = log_softmax then nll_loss (pytorch/pytorch@d327a787
 * tools/autograd/derivatives.yaml: _log_softmax saves its result, nll_loss_forward its input,
 * the same tensor; nll_loss_backward allocates a zero-filled gradient of the input's shape and
 * scatters into it, log_softmax's backward writes a new tensor; .float()'s backward (_to_copy)
 * saves nothing) over an x-byte input made from e-byte logits: its forward holds the logits,
 * their x-byte copy when x != e, and the output; its backward opens with the saved output, the
 * dense gradient and log_softmax's backward output, three x-byte tensors. */
static void torch_ce_mem(double e, double x, wl_loss_cost *o)
{
    o->kept = x;
    o->mem_fwd = e + (x != e ? x : 0) + x;
    o->mem_bwd = 3 * x;
}

/* Megatron's loss, time: tensor_parallel's vocab_parallel_cross_entropy over the 16-bit
 * vocabulary-parallel logits, its own kernels (--cross-entropy-loss-fusion is opt-in,
 * store_true; Megatron's other fusions are the blocks'): NVIDIA/Megatron-LM@f2e5db402c44ae309aa6448bcb4ae87e8ae0f5f4
 * (the README's H100 scaling commit) megatron/core/tensor_parallel/cross_entropy.py and
 * megatron/training/arguments.py L1134. Bytes per vocabulary entry of a token, fp32 after the
 * cast: forward .float() (e + 4), max (4), -= max in place (8), exp out= in place (8), sum (4),
 * div_ by the sum in place (8): e + 36; backward grad_input.mul_ in place (8), then the cast's
 * backward to the 16-bit dtype (4 + e): e + 12. The gathers of the target logit and the mask
 * are per token, not per entry (left out). The legacy GPT model calls the same
 * function on output.float() (megatron/legacy/model/gpt_model.py L36, same commit): same bytes.
 * Megatron-DeepSpeed's model code (framework deepspeed, training.megatron_ce) calls it on
 * output.float() too unless --fp16-lm-cross-entropy, with no loss-fusion flag:
 * microsoft/Megatron-DeepSpeed@1afe3541 (2022-09) megatron/model/gpt_model.py
 * post_language_model_processing and megatron/mpu/cross_entropy.py (sub_ in place: 8),
 * @c74cb684 (2023-06) megatron/core/tensor_parallel/cross_entropy.py (logits - max into a new
 * fp32 tensor: also 8): e + 36 and e + 12 both. The 2020 copy (microsoft/DeepSpeedExamples
 * @b989b41b Megatron-LM/pretrain_gpt2.py L300, mpu/cross_entropy.py) clones the fp32 logits
 * first (8 more) and exps out of place (8, as in place): e + 44 forward; not modelled (the
 * 8 B per entry left out for those cases). An outside logits.float() (ATorch's ds_3d_llama2.py,
 * dlrover@11bf2fbf) is the cast counted here: the function's own .float() of fp32 is a no-op.
 * PaddleNLP's ParallelCrossEntropy (tensor parallel, tensor_parallel_output) on
 * prediction_scores.astype("float32"): c_softmax_with_cross_entropy (PaddlePaddle/Paddle
 * paddle/fluid/operators/collective/c_softmax_with_cross_entropy_op.cu, 2.5-era, public index
 * copy: max (4), softmax = logits - max (8), exp in place (8), sum (4), times 1/sum in place
 * (8); backward the softmax copied to the gradient unless in place, then MaskLabelByIndexGrad
 * in place (8)): the same e + 36 and e + 12, the softmax a tensor beside the fp32 input (4 B
 * per entry more in the forward's memory, and 8 B of copy in the backward if not in place:
 * both left out).
 * Memory (NVIDIA/Megatron-LM@f2e5db40 megatron/core/tensor_parallel/cross_entropy.py L27
 * .float(), L43 -= max, L62-63 exp in place, L77 div_ in place, L185 saves that fp32 softmax;
 * backward L88 grad_input = softmax, L110-113 in place; core/fusions/fused_cross_entropy.py
 * the same tensors, calculate_gradients casting to bf16 beside it; language_module.py
 * L37-40): forward the e-byte logits and their fp32 copy, backward the saved softmax turned
 * gradient and its e-byte cast: kept 4, 4 + e each way (4 in fp32 training). */
enum { MEGATRON_CE_FWD_B = 36, MEGATRON_CE_BWD_B = 12 };

/* The loss's bytes and kernels of implementation impl per vocabulary entry (workload.h). */
const wl_loss_cost *wl_loss_costs(wl_loss_impl impl, double e, wl_loss_cost *o)
{
    switch (impl) {
    case WL_LOSS_TORCH_FP32:
    case WL_LOSS_PARALLEL:
        /* time: logits.float() then F.cross_entropy as separate kernels (torchtitan@9dec370
         * train.py; Hugging Face LlamaForCausalLM; PaddleNLP astype("float32") without tensor
         * parallelism), eager even when compiled (torchtitan@9dec370 apply_compile compiles the
         * transformer blocks only, the loss stays in train.py): cast e+4, log_softmax 16
         * (cunn_SoftMaxForward reads its row three times: max, sum, output, and writes it),
         * nll; backward nll 4 (the zero-filled fp32 gradient), log_softmax 16
         * (cunn_SoftMaxBackward), cast 4+e: e+20 and e+24 per entry, 4 kernels each way.
         * Measured on one H100 (bench/gpu-results/2026-11-27-h100-sxm/eager_block.json, main
         * 10bd884; 8192 tokens x 128256: SoftMaxForward 5.56 ms, SoftMaxBackward 5.73 ms, the
         * fp32 fill 1.27 ms at the 2.84 TB/s copy rate: 15.0, 15.5 and 3.4 B per entry).
         * loss_parallel's time is priced the same (its DTensor kernels not counted apart). */
        o->fwd_b = e + 20, o->bwd_b = e + 24, o->kernels = 4;
        if (impl == WL_LOSS_TORCH_FP32) /* memory: torchtitan@9dec370 train.py L131-134,
                                           L301-307 (del pred before the backward) */
            torch_ce_mem(e, 4, o);
        else /* memory: torchtitan's loss_parallel (pytorch/torchtitan@9dec370 train.py L57,
              * utils.py L196-201, parallelize_llama.py L138-141: Shard(-1) logits) runs the
              * DTensor handlers (pytorch/pytorch@02eef6b8 torch/distributed/tensor/parallel/
              * loss.py _log_softmax: shifted = x - max, exp(shifted) summed, result = shifted -
              * log(sum), fp32, result saved; backward _nll_loss_and_log_softmax_backward:
              * zeros_like(x), exp(x), their sum, times grad_output, beside the saved result):
              * forward e + 4 (the copy) + 4 (shifted) + 4 (exp, then result), backward 4 x 4.
              * torch 1963fc8 (the rows') is not stored. */
            o->kept = 4, o->mem_fwd = e + 12, o->mem_bwd = 16;
        break;
    case WL_LOSS_MEGATRON:
    case WL_LOSS_MEGATRON_FUSED: /* the comment above MEGATRON_CE_FWD_B */
        if (impl == WL_LOSS_MEGATRON)
            o->fwd_b = e + MEGATRON_CE_FWD_B, o->bwd_b = e + MEGATRON_CE_BWD_B, o->kernels = 6;
        else /* time: the fused kernel's, as WL_LOSS_FUSED */
            o->fwd_b = e, o->bwd_b = 2 * e, o->kernels = 2;
        o->kept = 4;
        o->mem_fwd = o->mem_bwd = 4 + (e != 4 ? e : 0);
        break;
    case WL_LOSS_FUSED: /* time: compiled, or loss_fusion true (a fused cross-entropy), reads
                           the e-byte logits once and writes the gradient in place (2e
                           backward); memory: the fp32 logits (no stack names the code) */
        o->fwd_b = e, o->bwd_b = 2 * e, o->kernels = 2;
        o->kept = o->mem_fwd = o->mem_bwd = 4;
        break;
    case WL_LOSS_EAGER16: /* time: a 16-bit loss, log_softmax 2e, backward 4e; memory:
                             F.cross_entropy in the logits' dtype */
        o->fwd_b = 2 * e, o->bwd_b = 4 * e, o->kernels = 3;
        torch_ce_mem(e, e, o);
        break;
    default: /* time: eager upcasts the logits to fp32 inside the loss (read e, write 4, read 4
                for the log-softmax; backward reads them (4) and writes the gradient (e):
                Megatron / DeepSpeed); memory: the fp32 logits (no code named) */
        o->fwd_b = e + 8, o->bwd_b = 4 + e, o->kernels = 3;
        o->kept = o->mem_fwd = o->mem_bwd = 4;
        break;
    }
    return o;
}

wl_loss_impl wl_loss_impl_of(const spec_training *t, const spec_layout *l)
{
    const int lf = flag_on(t->loss_fp32, -1), fused = flag_on(t->loss_fusion, t->execution == EXEC_COMPILED);
    if (flag_on(t->megatron_ce, t->framework == FW_MEGATRON) && lf != 0)
        return fused ? WL_LOSS_MEGATRON_FUSED : WL_LOSS_MEGATRON;
    if (lf == 1)
        return t->framework == FW_FSDP2 && l && l->t > 1 ? WL_LOSS_PARALLEL : WL_LOSS_TORCH_FP32;
    if (fused)
        return WL_LOSS_FUSED;
    return lf == 0 ? WL_LOSS_EAGER16 : WL_LOSS_DEFAULT;
}

/* The head's final norm (2he / 3he) and the loss (wl_loss_impl_of, wl_loss_costs), per token. */
static void ew_head(const spec_model *m, const spec_training *t, double e, wl_layer *H)
{
    const double h = m->hidden, V = m->vocab, T = H->gemm[0].m;
    wl_loss_cost c;
    wl_loss_costs(wl_loss_impl_of(t, NULL), e, &c);
    const double f = c.fwd_b, bk = c.bwd_b;
    H->ew_fwd_bytes = T * (2 * h * e) + T * V * f;
    H->ew_bwd_bytes = T * (3 * h * e) + T * V * bk;
    H->ew_tp_fwd_bytes = T * V * f; /* the loss over vocabulary-parallel logits */
    H->ew_tp_bwd_bytes = T * V * bk;
    H->ew_fwd_kernels = H->ew_bwd_kernels = c.kernels;
    if (t->execution != EXEC_COMPILED && flag_on(t->norm_fp32, 0)) { /* the final norm, as a block's */
        H->ew_fwd_bytes += T * h * (m->rmsnorm ? 28 + 2 * e : 16);
        H->ew_bwd_bytes += T * h * (m->rmsnorm ? 52 + 3 * e : 20 - e);
        H->ew_fwd_kernels += m->rmsnorm ? 7 : 2;
        H->ew_bwd_kernels += m->rmsnorm ? 9 : 4;
    }
}

/* checkpointing op: torchtitan's op-level selective AC (pytorch/torchtitan@9dec370
 * torchtitan/parallelisms/parallelize_llama.py _save_list, _custom_policy): inside a block,
 * the outputs of aten.mm are saved except every second one, SDPA's output saved, every other
 * op recomputed. Its Llama block runs mm wq (1, saved), wk (2), wv (3, saved), wo (4),
 * w1 (5, saved), w3 (6), w2 (7, saved): recomputed wk, wo, w3; a GELU block (separate q, k, v
 * as there) wk, wo, fc2 (6). Shardcast's fused GEMMs take those shares: qkv kv / (h + 2kv),
 * proj 1, gate_up 1/2 (w3), fc1 0, fc2 1 (GELU) or 0 (SwiGLU). Unfused attention's bmm and
 * softmax are not in the save list: recomputed. Stash per block: q, v, attention output,
 * w1 / fc1 output (f), w2 output (SwiGLU), e bytes each; the block input is ckpt_bytes. */
/* checkpointing save_dot_except_mlpwi / save_qkv_proj: MaxText's remat policies
 * (AI-Hypercomputer/maxtext@b5a034417fbfee8cca5beeff35513ae9c69f6d90 MaxText/layers/models.py
 * get_remat_policy: jax.checkpoint_policies.save_only_these_names of "query_proj", "value_proj",
 * "key_proj", "qkv_proj", "out_proj", "mlpwo", resp. of the first four; the names tag the q, k,
 * v projections' and the attention output projection's outputs (attentions.py) and MlpBlock's
 * wo output (linears.py)). Saved per block: q (h), k and v (kv each), and for the first also
 * out_proj (h) and mlpwo (h), e bytes each, beside the block input (ckpt_bytes: the scanned
 * layer's carry). Everything unnamed is recomputed in the backward: the MLP's input projections
 * (and with save_qkv_proj the output projections too), the attention core's forward (its
 * output, "context", is not saved), every element-wise op. */
static void maxtext_sac(const spec_model *m, const spec_training *t, double e, double b, wl_layer *B)
{
    const double h = m->hidden, kv = (double)m->kv_heads * (m->hidden / m->heads);
    const int dots = t->act_ckpt == CKPT_MT_DOTS;
    for (int i = 0; i < B->n_gemm; i++) {
        const wl_gemm_role r = B->gemm[i].role;
        B->op_rec[i] = r != WL_G_QKV && !(dots && wl_role_row(r));
    }
    B->op_act_bytes = b * m->seq_len * e * (h + 2 * kv + (dots ? 2 * h : 0));
}

static void op_sac(const spec_model *m, const spec_training *t, double e, double b, wl_layer *B)
{
    if (t->act_ckpt == CKPT_MT_DOTS || t->act_ckpt == CKPT_MT_QKV) {
        maxtext_sac(m, t, e, b, B);
        return;
    }
    const double h = m->hidden, f = m->ffn, kv = (double)m->kv_heads * (m->hidden / m->heads);
    const int fused = t->flash_attention && !SPEC_PREC_IS_FP32(t->precision);
    for (int i = 0; i < B->n_gemm; i++) {
        const wl_gemm_role r = B->gemm[i].role;
        B->op_rec[i] = r == WL_G_QKV       ? kv / (h + 2 * kv)
                       : r == WL_G_PROJ    ? 1
                       : r == WL_G_GATE_UP ? 0.5
                       : r == WL_G_FC2     ? (m->swiglu ? 0 : 1)
                       : wl_role_core(r)   ? (fused ? 0 : 1)
                                           : 0;
    }
    B->op_act_bytes = b * m->seq_len * e * (h + kv + h + f + (m->swiglu ? h : 0));
}

/* Memory of the loss over T tokens. Unfused: fp32 logits [T, V] (as Megatron / DeepSpeed /
 * Hugging Face upcast them for the cross-entropy). Fused linear cross-entropy (Liger-Kernel,
 * linkedin/Liger-Kernel@e11c2d6c84e16dfebde09bae01983b64399519c1
 * src/liger_kernel/ops/fused_linear_cross_entropy.py, forward): the tokens in chunks of
 * next_pow2(ceil(T / ceil(V / h))) rows (logits of one chunk about the size of the hidden
 * states), each chunk's logits in the parameter dtype and upcast to fp32 (e + 4 B per element),
 * the gradients computed in the forward and kept for the backward: grad_input [T, h] and
 * grad_linear [V, h] in the parameter dtype, plus a fp32 loss per token. */
double wl_logits_bytes(double T, double V, double h, double e, int fused)
{
    if (!fused || h <= 0)
        return 4 * T * V;
    double inc = ceil(V / h), rows = ceil(T / inc), chunk = 1;
    while (chunk < rows)
        chunk *= 2;
    if (chunk > T)
        chunk = T;
    return chunk * V * (e + 4) + T * h * e + V * h * e + 4 * T;
}

/* The math of a layer's linear GEMMs. FP8 recipes leave the output layer in bf16: OLMo-core
 * converts every linear but lm_head.w_out (allenai/OLMo-core src/olmo_core/train/train_module/
 * transformer, 2025: convert_to_float8_training(..., modules_to_ignore={"lm_head.w_out"})),
 * Megatron-Core's output_layer is a plain ColumnParallelLinear, not a te.Linear (Megatron-LM
 * megatron/core/models/gpt/gpt_model.py). */
static int layer_dtype(const wl_layer *l, const spec_training *t)
{
    if (l->kind == WL_HEAD && t->precision == PREC_FP8)
        return KD_BF16;
    return (int)kern_gemm_dtype(t->precision);
}

/* A block's activations kept for backward (act_bytes, act_core_bytes) and the dropout in effect
 * (w's hidden_dropout, attention_dropout). */
static void block_acts(const spec_model *m, const spec_training *t, double e, double b, wl *w, wl_layer *B)
{
    const double h = m->hidden, f = m->ffn, s = m->seq_len, a = m->heads;
    const double kv = (double)m->kv_heads * (m->hidden / m->heads);
    /* Activations (Korthikanti eq. 1, by part, in units of s*b*h*2 bytes for 16-bit):
     * attention 11 sbh = QKV input 2 + Q 2 + K 2 + V 2 + proj input 2 + dropout mask 1,
     *   + 5 a s^2 b for scores, softmax and its dropout (dropped with a fused kernel);
     * MLP 19 sbh for ffn = 4h = input 2 + fc1 out 2f/h + GeLU out 2f/h + dropout mask 1;
     *   SwiGLU: input 2 + gate 2f/h + up 2f/h + product 2f/h;
     * norms 4 sbh. Element size scales the 16-bit terms; masks stay 1 byte. */
    double sb = s * b, half = e / 2.0;
    /* dropout masks (1 byte per element) only where that dropout runs (wl_dropout > 0): the
     * hidden ones after the projection and after fc2, the attention one per s x s element */
    w->hidden_dropout = wl_dropout(m, t, 0), w->attention_dropout = wl_dropout(m, t, 1);
    const double hmask = w->hidden_dropout > 0 ? sb * h : 0, amask = w->attention_dropout > 0 ? 1 : 0;
    double attn_act = half * (2 * sb * h + 2 * sb * h + 2 * sb * kv + 2 * sb * kv + 2 * sb * h) + hmask;
    /* FlashAttention runs 16-bit only: fp32 / tf32 training takes the unfused path, which keeps
     * scores 2, softmax 2 (scaled), dropout mask 1 byte: a s^2 b each (act_core_bytes) */
    if (!t->flash_attention || SPEC_PREC_IS_FP32(t->precision)) {
        B->act_core_bytes = (4 * half + amask) * a * s * s * b;
        attn_act += B->act_core_bytes;
    }
    double mlp_act = m->swiglu ? half * (2 * sb * h + 6 * sb * f) + hmask : half * (2 * sb * h + 4 * sb * f) + hmask;
    double norm_act = half * 4 * sb * h;
    /* (FlashAttention also keeps the softmax log-sum-exp, 4 a s b bytes: < 1% of a block's
     * stash at head dim 64 and up, left out) */
    B->act_bytes = attn_act + mlp_act + norm_act;
}

/* Packed sequences (issue 27): where training.attn_doc_len is given, NeMo passes the pack's
 * cu_seqlens to Transformer Engine as Megatron-Core PackedSeqParams(qkv_format='thd')
 * (NVIDIA/NeMo@8e3d65dcfe3504689bfc5b6e67d502780aacad41:nemo/collections/nlp/models/
 * language_modeling/megatron_gpt_model.py L1263-1287), and TE's fused varlen kernel computes
 * each document's own causal triangle: sum l_i^2 / 2 score elements per head instead of
 * s^2 / 2. With L = E[l^2] / E[l] (the length-weighted mean), sum l_i^2 = s L for a full
 * pack, the work of s / L sequences of L tokens, priced as that shape. Only a fused kernel
 * skips the masked blocks: the unfused path (no FlashAttention, or fp32) multiplies the whole
 * s x s and masks it, so it keeps s (as a longer L than s would). */
double wl_attn_doc(const spec_training *t, double s)
{
    const int fused = t->flash_attention && !SPEC_PREC_IS_FP32(t->precision);
    return fused && t->attn_doc_len > 0 && t->attn_doc_len < s ? t->attn_doc_len : s;
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
    add_gemm(B, WL_G_QKV, T, h + 2 * kv, h, 1);
    /* Q K^T and softmax(QK^T) V per head and per document: a packed sequence (attn_doc_len)
     * attends as s / L documents of L tokens each (wl_attn_doc), one document s x s */
    const double L = wl_attn_doc(t, s), nd = s / L;
    add_gemm(B, WL_G_SCORES, L, L, d, b * a * nd);
    add_gemm(B, WL_G_CONTEXT, L, d, L, b * a * nd);
    add_gemm(B, WL_G_PROJ, T, h, h, 1);
    if (m->swiglu) {
        add_gemm(B, WL_G_GATE_UP, T, 2 * f, h, 1);
    } else {
        add_gemm(B, WL_G_FC1, T, f, h, 1);
    }
    add_gemm(B, WL_G_FC2, T, h, f, 1);
    B->bwd_flops = 2 * B->fwd_flops;
    block_acts(m, t, e, b, w, B);
    /* FlashAttention runs 16-bit only: fp32 / tf32 training takes the unfused path */
    const int fused = t->flash_attention && !SPEC_PREC_IS_FP32(t->precision);
    const double sb = s * b, half = e / 2.0;
    B->ckpt_bytes = 2 * sb * h * half;
    B->fwd_hbm_bytes = B->params * e + 2 * B->act_bytes; /* weights once, activations written and read */
    B->core_fwd_flops = 2.0 * (2.0 * L * L * d * b * a * nd);
    ew_block(m, t, e, b, B);
    op_sac(m, t, e, b, B);
    if (t->precision == PREC_FP8)
        fp8_casts(m, t, T, B);
    if (amp_core(t)) { /* the weight casts (amp_core above), per block per micro-step */
        B->ew_fwd_bytes += 6 * B->params, B->ew_bwd_bytes += 6 * B->params;
        B->ew_param_bytes = 6 * B->params; /* a tensor rank casts its 1/t of the weights */
        B->ew_tp_fwd_bytes += 6 * B->params, B->ew_tp_bwd_bytes += 6 * B->params;
        B->ew_fwd_kernels += 1, B->ew_bwd_kernels += 1;
        if (!fused) { /* softmax's fp32 output */
            B->act_bytes += 2 * a * s * s * b;
            B->act_core_bytes += 2 * a * s * s * b;
        }
    }
    /* what the implementation's own kernels keep for backward (autograd's saved tensors):
     * repeat_kv the repeated K and V (h wide instead of kv) that SDPA saves; norm_fp32 each
     * norm's fp32 input (4h, pow and mul save it) in place of its e-byte one (Korthikanti's
     * norm term); swiglu_unfused silu's output too (fe) */
    if (flag_on(t->repeat_kv, 0) && kv < h)
        B->act_bytes += 2 * (h - kv) * e * sb;
    if (t->execution != EXEC_COMPILED && flag_on(t->norm_fp32, 0))
        B->act_bytes += 2 * (4 - e) * h * sb;
    if (t->execution != EXEC_COMPILED && m->swiglu && flag_on(t->swiglu_unfused, 0))
        B->act_bytes += f * e * sb;
    if (t->execution != EXEC_COMPILED && !m->swiglu && flag_on(t->gelu_unfused, 0))
        B->act_bytes += 3 * f * e * sb; /* gelu_unfused: 0.5*x, 1 + tanh, tanh's result */

    /* Head: final norm + projection to the vocabulary (weights shared when tied). */
    wl_layer *H = &w->layer[w->n_layers++];
    H->kind = WL_HEAD;
    snprintf(H->name, sizeof H->name, "head");
    H->count = 1;
    H->params = ln + (m->tied_embeddings ? 0 : V * h);
    add_gemm(H, WL_G_HEAD, T, V, h, 1);
    H->bwd_flops = 2 * H->fwd_flops;
    H->act_bytes = H->ckpt_bytes = 2 * T * h * half; /* its input */
    H->fwd_hbm_bytes = V * h * e + T * V * e + T * h * e;
    w->fused_ce = t->fused_linear_ce > 0;
    w->kv_repeat = flag_on(t->repeat_kv, 0) && m->kv_heads < m->heads;
    w->logits_bytes = wl_logits_bytes(T, V, h, e, w->fused_ce);
    ew_head(m, t, e, H);

    for (int i = 0; i < w->n_layers; i++) {
        wl_layer *l = &w->layer[i];
        l->flash = t->flash_attention && !SPEC_PREC_IS_FP32(t->precision) ? (t->flash_version == 3 ? 3 : 2) : 0;
        l->attn_kernel = t->attn_kernel;
        l->causal = !m->encoder;
        l->ckpt = t->act_ckpt;
        l->gemm_dtype = layer_dtype(l, t);
        l->tc_align8 = flag_on(t->tc_align8, 0);
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
    if (CKPT_IS_OPLIKE(l->ckpt)) {
        double fl = 0;
        for (int i = 0; i < l->n_gemm; i++) {
            const wl_gemm *g = &l->gemm[i];
            fl += l->op_rec[i] * 2.0 * g->m * g->n * g->k * g->batch;
        }
        return fl;
    }
    /* selective (Korthikanti et al. 2022 s5): attention's core only; fused attention keeps
     * nothing of it and recomputes inside its own backward (counted there), so nothing more */
    return l->flash ? 0 : l->core_fwd_flops;
}

/* Rule and sources in workload.h. */
int wl_ub_chunks(const wl_layer *L, const wl_gemm *g, int dgrad)
{
    if (L->ub_tp < 2)
        return 1;
    const int col = wl_role_col(g->role), row = wl_role_row(g->role);
    if (dgrad)
        return row ? L->ub_tp : 1; /* proj_dgrad, fc2_dgrad: ring_exchange; qkv / fc1: bulk */
    return col || (row && L->ub_atp) ? L->ub_tp : row ? WL_UB_SPLITS : 1;
}

double wl_max_layer_params(const wl *w)
{
    double mx = 0;
    for (int i = 0; i < w->n_layers; i++)
        if (w->layer[i].params > mx)
            mx = w->layer[i].params;
    return mx;
}

/* FSDP1 (pytorch/pytorch@00ae0bc9 torch/distributed/fsdp/_runtime_utils.py _post_backward_hook,
 * _reduce_grad, _accumulate_sharded_grad; @07b3040a torch/distributed/algorithms/_comm_hooks/
 * default_hooks.py): per FlatParameter and micro-step, on the post-backward stream,
 *   assembly: autograd writes the views' gradients into the flat gradient (the cat behind
 *     the flat parameter's views: read eb, write eb),
 *   cast to reduce_dtype when it differs (read eb, write rb),
 *   pre-divide in place by the gradient_predivide_factor (read rb, write rb; the factor is > 1
 *     from 2 ranks: _get_gradient_predivide_factor),
 *   (reduce-scatter: a collective, costed as such),
 *   post-divide and accumulation into the sharded gradient (_saved_grad_shard +=): on the
 *     shard, rb + rb and 3 rb per parameter over n (post-divide is 1 from n <= 2, skipped).
 * eb 2, rb 4: 4 + 6 + 8 = 18 (+ 20/n): ~20 B/param at n = 8; eb = rb = 2: 4 + 4 (+10/n) ~ 9.
 * Measured on one H100 (bench/results/fsdp_gradpath-h100.json, a Llama-3-8B block's 218e6
 * parameters, n = 8): 25.4 and 11.1 B/param at the copy rate (the launches and the 9-way cat).
 * FSDP2 (pytorch/pytorch@8fc2039d torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py
 * foreach_reduce, _get_gradient_divide_factors): the
 * copy-in of the gradients into the reduce-scatter input is layout.c's copy_in_out (read eb,
 * write eb, 2 eb); reduce_dtype adds its write width: rb - eb more; the division is NCCL's
 * (ReduceOp.AVG for fp32 and bf16: "to avoid separate div kernels"), the accumulation on
 * the shard: 3 rb / n.
 * Not a framework that has this path (ideal, DeepSpeed, Megatron): 0. */
double wl_grad_path_bytes_per_param(int framework, double eb, double rb, int n)
{
    double shard = n > 0 ? 1.0 / n : 1;
    if (framework == FW_FSDP) {
        double cast = rb != eb ? eb + rb : 0, post = n > 2 ? 2 * rb : 0;
        return 2 * eb + cast + 2 * rb + (post + 3 * rb) * shard;
    }
    if (framework == FW_FSDP2)
        return (rb - eb) + 3 * rb * shard;
    return 0;
}

/* AdamW per local parameter, fp32 states (pytorch/pytorch@002d2f0b torch/optim/adamw.py):
 * fused (_fused_adamw, one kernel): param, grad, exp_avg, exp_avg_sq read, param and both
 * states written: 7 x 4 = 28 B (the calibration's optimizer_bytes_per_param default);
 * foreach (_multi_tensor_adamw) and for-loop (_single_tensor_adamw): the same eight passes,
 * mul_ (8), lerp_ (12), mul_ (8), addcmul_ (12), sqrt (8), div_ (8), add_ (8), addcdiv_ (16):
 * 80 B; the for-loop launches them per tensor. Measured on one H100 (bench/results/
 * fsdp_gradpath-h100.json, 72 tensors of 1.7e9 parameters): 31.7, 90.7 and 82.0 B/param at
 * the copy rate: ratios 2.86 and 2.59 to fused against 80 / 28 = 2.86. */
double wl_opt_bytes_per_param(int opt_impl) { return opt_impl == OPT_IMPL_FOREACH || opt_impl == OPT_IMPL_FORLOOP ? 80 : 28; }
int wl_opt_passes(int opt_impl) { return opt_impl == OPT_IMPL_FORLOOP ? 8 : 0; }
