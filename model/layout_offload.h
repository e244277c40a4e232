/* layout_offload.h — the offloaded-optimizer builder (layout_offload.c), called by layout.c.
 * Not for engines. */
#ifndef SC_LAYOUT_OFFLOAD_H
#define SC_LAYOUT_OFFLOAD_H

#include "lo_graph.h"

/* zero3-offload and luwu: fills groups, micro, last, boundary (zero2-offload's builder is its row's,
 * in layout_offload.c). */
void lo_build_offload(lo_graph *g, const wl *w, const spec_training *t, const spec_cluster *c);

#endif
