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

/* MiCS: the smallest valid partition size p (dividing n_ranks, aligned to nodes) whose plan
 * fits; 0 when none does (or n_ranks is not a whole number of nodes). hier is passed through to the layout. */
int mem_smallest_mics_p(const wl *w, const spec_training *t, int n_ranks, const spec_cluster *c, int hier);

#endif
