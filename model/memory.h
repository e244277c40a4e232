/* memory.h — bytes per GPU of one layout: model states sharded as the ZeRO paper says
 * (Rajbhandari et al. 2020 §3, Fig. 1; MiCS/HSDP replace N with the group size p), activations,
 * gathered-parameter and prefetch buffers, communication buckets and a reserve.
 * Not here: how long anything takes. Pipelines (megatron) are memory_pipe.c, which mem_plan
 * calls; the breakdown type and the bytes per parameter are memory_states.h, below both. */
#ifndef SC_MEMORY_H
#define SC_MEMORY_H

#include "memory_states.h"
#include "spec.h"
#include "workload.h"

/* Where a plan does not fit: "GPU", "host", "NVMe", "in-network node", or NULL when it fits. */
const char *mem_short_where(const mem_breakdown *m, double *short_by, double *need, double *cap);

/* Memory per GPU of layout l on n_ranks GPUs of cluster c. */
void mem_plan(const wl *w, const spec_training *t, const spec_layout *l, int n_ranks, const spec_cluster *c,
              mem_breakdown *out);
/* Whether mem_plan's result for l may depend on the training's grad_accum: only through a kind's
 * own plan or pipeline stages (memory_pipe.c: pp.m, the micro-batches in flight). The plan in
 * memory.c and what it calls (the rows' mem_states and mem_gathered, framework.h's depths and
 * buckets, memory_states.c) read no grad_accum: the sweep memo keeps it across grad_accum
 * (model/analytic.c, memo32). */
int mem_plan_by_accum(const spec_layout *l);

/* MiCS: the smallest valid partition size p (dividing n_ranks, aligned to nodes) whose plan
 * fits; 0 when none does (or n_ranks is not a whole number of nodes). hier is passed through to the layout. */
int mem_smallest_mics_p(const wl *w, const spec_training *t, int n_ranks, const spec_cluster *c, int hier);

#endif
