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

void mem_loss_bytes(const wl *w, const spec_training *t, const spec_layout *l, mem_loss *o)
{
    o->held = 0; /* before Liger's return: mem_plan_megatron reads it on every last stage */
    if (w->fused_ce) { /* Liger: its chunk, the gradients it keeps (workload.c wl_logits_bytes) */
        o->kept = o->peak = w->logits_bytes;
        return;
    }
    const double E = w->logits_bytes / 4, e = SPEC_PREC_IS_FP32(t->precision) ? 4 : 2;
    wl_loss_cost c; /* the implementation the step time prices too (workload.c wl_loss_costs) */
    wl_loss_costs(wl_loss_impl_of(t, l), e, &c);
    const double kept = c.kept, fwd = c.mem_fwd, bwd = c.mem_bwd;
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
