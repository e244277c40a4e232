/* layout_tensor.h — the tensor-parallel layout builders (layout_tensor.c), called by layout.c; the
 * tp item is also one stage's item of a megatron pipeline (layout_pipe.c). Not for engines. */
#ifndef SC_LAYOUT_TENSOR_H
#define SC_LAYOUT_TENSOR_H

#include "lo_graph.h"

/* tp and axonn layouts: fills groups, lw, micro, last, boundary, prefetch. */
void lo_build_tensor(lo_graph *g, const wl *w, const spec_training *t, const spec_cluster *c);
/* One item of Megatron-LM tensor parallelism (tp, and megatron's stages). */
void lo_tp_item(const lo_graph *g, const wl *w, const spec_training *t, int last, lo_item *it);

#endif
