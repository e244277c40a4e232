/* memory_states.c — bytes per parameter of each model state, what a block keeps and recomputes,
 * and what the loss over the vocabulary holds (memory_states.h). */
#include "memory_states.h"

void mem_state_bytes(spec_precision p, double *param, double *grad, double *optim)
{
    if (SPEC_PREC_IS_FP32(p)) {
        *param = 4;
        *grad = 4;
        *optim = 8;
    } else {
        *param = 2;
        *grad = 2;
        *optim = 12;
    }
}

double mem_optim_bytes(const spec_training *t)
{
    double p, g, o;
    mem_state_bytes(t->precision, &p, &g, &o);
    if (t->opt_sgd > 0) /* SGD without momentum on the parameters themselves: no master, no state */
        return 0;
    return t->opt_state_bf16 && !SPEC_PREC_IS_FP32(t->precision) ? 4 : o;
}

int mem_act_offloaded(const spec_training *t)
{
    return t->act_offload > 0 && t->act_ckpt == CKPT_FULL;
}

double mem_block_kept(const wl_layer *b, int ckpt)
{
    if (ckpt == CKPT_NONE)
        return b->act_bytes;
    if (ckpt == CKPT_SELECTIVE)
        return b->act_bytes - b->act_core_bytes;
    return b->ckpt_bytes + (CKPT_IS_OPLIKE(ckpt) ? b->op_act_bytes : 0);
}

double mem_block_recompute(const wl_layer *b, int ckpt)
{
    if (ckpt == CKPT_NONE)
        return 0;
    return ckpt == CKPT_SELECTIVE ? b->act_core_bytes : b->act_bytes;
}

/* F.cross_entropy = log_softmax then nll_loss (pytorch/pytorch@d327a787
 * tools/autograd/derivatives.yaml: _log_softmax saves its result, nll_loss_forward its input,
 * the same tensor; nll_loss_backward allocates a zero-filled gradient of the input's shape and
 * scatters into it, log_softmax's backward writes a new tensor; .float()'s backward (_to_copy)
 * saves nothing) over an x-byte input made from e-byte logits: its forward holds the logits,
 * their x-byte copy when x != e, and the output; its backward opens with the saved output, the
 * dense gradient and log_softmax's backward output, three x-byte tensors. Per entry. */
static void torch_ce(double e, double x, double *kept, double *fwd, double *bwd)
{
    *kept = x;
    *fwd = e + (x != e ? x : 0) + x;
    *bwd = 3 * x;
}

/* kept, forward and backward bytes per entry of the loss training t runs (memory_states.h) */
static void loss_per_entry(const spec_training *t, const spec_layout *l, double e, double *kept, double *fwd,
                           double *bwd)
{
    const int lf = t->loss_fp32, fused = t->loss_fusion >= 0 ? t->loss_fusion : t->execution == EXEC_COMPILED;
    const int mce = t->megatron_ce >= 0 ? t->megatron_ce : t->framework == FW_MEGATRON;
    if (mce && lf != 0) {
        /* Megatron's vocab_parallel_cross_entropy, fused or not (NVIDIA/Megatron-LM@f2e5db40
         * megatron/core/tensor_parallel/cross_entropy.py L27 .float(), L43 -= max, L62-63 exp
         * in place, L77 div_ in place, L185 saves that fp32 softmax; backward L88 grad_input =
         * softmax, L110-113 in place; core/fusions/fused_cross_entropy.py the same tensors,
         * calculate_gradients casting to bf16 beside it; language_module.py L37-40): forward the
         * e-byte logits and their fp32 copy (an outside logits.float(), atorch's ds_3d, is that
         * copy), backward the saved softmax turned gradient and its e-byte cast */
        *kept = 4;
        *fwd = *bwd = 4 + (e != 4 ? e : 0);
    } else if (lf == 1 && t->framework == FW_FSDP2 && l && l->t > 1) {
        /* torchtitan's loss_parallel (pytorch/torchtitan@9dec370 train.py L57, utils.py
         * L196-201, parallelize_llama.py L138-141: Shard(-1) logits) runs the DTensor handlers
         * (pytorch/pytorch@02eef6b8 torch/distributed/tensor/parallel/loss.py _log_softmax:
         * shifted = x - max, exp(shifted) summed, result = shifted - log(sum), fp32, result
         * saved; backward _nll_loss_and_log_softmax_backward: zeros_like(x), exp(x), their sum,
         * times grad_output, beside the saved result): forward e + 4 (the copy) + 4 (shifted)
         * + 4 (exp, then result), backward 4 x 4. torch 1963fc8 (the rows') is not stored. */
        *kept = 4;
        *fwd = e + 12;
        *bwd = 16;
    } else if (lf == 1) /* torchtitan@9dec370 train.py L131-134, L301-307 (del pred before
                           the backward); transformers LlamaForCausalLM logits.float() then
                           CrossEntropyLoss; PaddleNLP astype("float32") (the stack files) */
        torch_ce(e, 4, kept, fwd, bwd);
    else if (lf == 0 && !fused) /* the loss in the logits' dtype, eager */
        torch_ce(e, e, kept, fwd, bwd);
    else /* fused without Megatron's code, or the default: the fp32 logits (no code named) */
        *kept = *fwd = *bwd = 4;
}

void mem_loss_bytes(const wl *w, const spec_training *t, const spec_layout *l, mem_loss *o)
{
    o->held = 0; /* before Liger's return: mem_plan_megatron reads it on every last stage */
    if (w->fused_ce) { /* Liger: its chunk, the gradients it keeps (workload.c wl_logits_bytes) */
        o->kept = o->peak = w->logits_bytes;
        return;
    }
    const double E = w->logits_bytes / 4, e = SPEC_PREC_IS_FP32(t->precision) ? 4 : 2;
    double kept, fwd, bwd;
    loss_per_entry(t, l, e, &kept, &fwd, &bwd);
    if (t->loss_fp32 == 1 && t->framework == FW_FSDP2 && l && l->pp > 1) {
        /* torch.distributed.pipelining (pytorch/pytorch@01386103 torch/distributed/pipelining/
         * stage.py forward_one_chunk): the last stage appends each micro-batch's output, the
         * e-byte logits, to output_chunks (the same tensor fwd_cache holds to its backward), and
         * the schedule's step() returns _merge_outputs(output_chunks) after the last backward
         * (schedules.py; clear_runtime_states at the next step's start): all m held to the
         * step's end, and their concatenation beside them then; no del pred. In the rows'
         * torch (1963fc8, 2024-12-23) too: pytorch/pytorch PR #138504 (2024-10) detaches them
         * "because we return all the output chunks ... after the step is over", issue #159251
         * (2025-07) asks to stop caching them. */
        o->held = e * E * (t->grad_accum > 1 ? t->grad_accum : 1);
    }
    o->kept = kept * E;
    o->peak = (fwd > bwd ? fwd : bwd) * E;
}
