/* ds_coordinator.h — DeepSpeed ZeRO-3's PartitionedParameterCoordinator as the op graphs and the
 * memory rows see it: which of a checkpointed block's sub-modules its backward gathers a second
 * time (stage3_max_reuse_distance) and the gathered parameters at their peak
 * (stage3_max_live_parameters, stage3_prefetch_bucket_size). One home for zero3 (layout_dp.c)
 * and zero3-offload (layout_offload.c) under framework deepspeed. Not here: the fetches' timing
 * or prefetch depth (framework.c, the engines), or the fetch pieces themselves (fw_fetches). */
#ifndef SC_DS_COORDINATOR_H
#define SC_DS_COORDINATOR_H

#include "spec.h"
#include "workload.h"

/* Defaults of stage3_max_reuse_distance and stage3_max_live_parameters, elements, the same in
 * every release since ZeRO-3 arrived (deepspeedai/DeepSpeed v0.3.12, 35fd7ccd,
 * runtime/zero/constants.py L86-91; v0.6.2, 32d97976, L102-103) and
 * stage3_prefetch_bucket_size's (v0.3.12 L93-94: 5e7). */
#define DSC_REUSE_DEFAULT 1e9
#define DSC_LIVE_DEFAULT 1e9
#define DSC_PREFETCH_DEFAULT 5e7
/* v0.4.3 (c9fee821, #1199): contiguous_gradients on by default, and with it the ipg bucket's
 * flat buffer (framework.h's release numbering) */
#define DSC_CONTIGUOUS 403

/* The training's stage3_max_reuse_distance, elements (its default when unset). */
double dsc_reuse(const spec_training *t);

/* Elements of a checkpointed block's partitioned sub-modules (sz, forward order, k of them)
 * gathered again for its backward under reuse distance `reuse`; *n how many (ds_coordinator.c). */
double dsc_regather(const double *sz, int k, double reuse, int *n);

/* The same for one item of an op graph: 0 (and *n 0) unless t is DeepSpeed with full
 * checkpointing and `recompute` says the item recomputes a block's forward first. */
double dsc_backward_regather(const spec_training *t, const double *sz, int k, int recompute, int *n);

/* The coordinator's peak of gathered elements over a block's recompute and backward, then the
 * previous block's: sz as dsc_regather's, live and bucket the limits in elements. */
double dsc_live_peak(const double *sz, int k, double live, double reuse, double bucket);

/* Bytes of gathered parameters and unsharded gradients at their peak on one GPU under DeepSpeed
 * ZeRO-3 (the largest layer's dsc_live_peak in 16-bit, two adjacent sub-modules' gradients and
 * the ipg bucket buffer); -1 for any other framework (layout_row.h's mem_gathered). */
double dsc_gathered(const wl *w, const spec_training *t);

#endif
