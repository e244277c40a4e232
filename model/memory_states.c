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
    return t->opt_state_bf16 && !SPEC_PREC_IS_FP32(t->precision) ? 4 : o;
}
