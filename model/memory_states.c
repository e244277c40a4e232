/* memory_states.c — bytes per parameter of each model state (memory_states.h). */
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
