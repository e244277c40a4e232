/* memory_pipe.h — memory per GPU of pipelined layouts (megatron, fsdp2 with p); mem_plan
 * (memory.h) calls it. Uses memory_states.h and the layout's split (layout.h) below it. Not here: time (analytic_pipe.h). */
#ifndef SC_MEMORY_PIPE_H
#define SC_MEMORY_PIPE_H

#include "memory_states.h"
#include "spec.h"
#include "workload.h"

/* megatron:t=T,p=P[,vp=V] and fsdp2:dp=D[,cp=C],t=T,p=P: the stage needing the most. */
void mem_plan_megatron(const wl *w, const spec_training *t, const spec_layout *l, int n_ranks,
                       const spec_cluster *c, mem_breakdown *out);

#endif
