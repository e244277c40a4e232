/* layout_tensor.h — the tensor-parallel layout builders (layout_tensor.c), called by layout.c; the
 * tp item is also one stage's item of a megatron pipeline (layout_pipe.c). Not for engines. */
#ifndef SC_LAYOUT_TENSOR_H
#define SC_LAYOUT_TENSOR_H

#include "lo_graph.h"

/* tp and axonn layouts: fills groups, lw, micro, last, boundary, prefetch. */
void lo_build_tensor(lo_graph *g, const wl *w, const spec_training *t, const spec_cluster *c);
/* One item of Megatron-LM tensor parallelism (tp, and megatron's stages). */
void lo_tp_item(const lo_graph *g, const wl *w, const spec_training *t, int last, lo_item *it);
/* FSDP2 + TP (torchtitan's fsdp2:dp=D,t=T, zero3 with t > 1; layout_dp.c calls it after an
 * item's FSDP collectives): the item's sequence-parallel TP collectives over GRP_AX0, eager or,
 * with asynctp=1, micro-pipelined beside the linear layers' GEMMs. Nothing when t <= 1. */
void lo_fsdp2_tp_item(const lo_graph *g, const wl *lw, const spec_training *t, lo_item *it);
/* Where the two Megatron overlap options act (one home: lo_tp_item and the CLI's note on an option
 * nothing acts on ask these): --tp-comm-overlap on megatron layouts with sequence parallelism and
 * t > 1; --overlap-param-gather on the distributed optimizer (megatron or tp with zero1) under
 * --framework megatron. */
int lo_tp_comm_overlap_acts(const spec_layout *l);
int lo_param_gather_acts(const spec_training *t, const spec_layout *l);
/* Where --tp-comm-overlap is in force (lo_tp_item's rule), mark the n local layers' blocks as
 * running Transformer Engine's chunked GEMMs (wl_layer.ub_tp = t, workload.h wl_ub_chunks);
 * under async TP (fsdp2:dp=D,t=T,asynctp=1) as running PyTorch's micro-pipelined ones (ub_tp = t,
 * ub_atp = 1); elsewhere clear the marks. Every builder of a megatron graph's local layers and
 * of an fsdp2 TP one calls it, so both engines time the same chunks (cost.c). */
void lo_tp_ub_mark(const spec_layout *l, const spec_training *t, wl_layer *lw, int n);

#endif
