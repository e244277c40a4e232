/* layout_pipe.h — the pipeline builder (layout_pipe.c) of megatron and of fsdp2 with p > 1. The
 * schedule's public helpers (layout_pipe_order, _bubble, ...) are in layout.h. Not for engines. */
#ifndef SC_LAYOUT_PIPE_H
#define SC_LAYOUT_PIPE_H

#include "layout.h"

/* megatron, or zero3 (fsdp2) with pipeline stages: fills groups, lw and g->pipe. */
void lo_build_pipe(lo_graph *g, const wl *w, const spec_training *t, const spec_cluster *c);

#endif
