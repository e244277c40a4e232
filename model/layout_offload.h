/* layout_offload.h — the offloaded-optimizer builder (layout_offload.c), called by layout.c.
 * Not for engines. */
#ifndef SC_LAYOUT_OFFLOAD_H
#define SC_LAYOUT_OFFLOAD_H

#include "lo_graph.h"

/* zero3-offload and luwu: fills groups, micro, last, boundary. */
void lo_build_offload(lo_graph *g, const wl *w, const spec_training *t, const spec_cluster *c);

/* DeepSpeed ZeRO-3: elements of a checkpointed block's sub-modules (sz, forward order, k of them)
 * gathered again for its backward under stage3_max_reuse_distance `reuse`; *n how many. */
double offload_regather(const double *sz, int k, double reuse, int *n);

#endif
