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

/* v0.6.0 (a32e9b33): a flushed ipg bucket's gradients reduce-scattered in one coalesced call
 * (stage3.py L25, __avg_scatter_grads L1877: reduce_scatter_coalesced); before, with
 * contiguous_gradients, one reduce-scatter per gradient tensor (dsc_layer_reduces). */
#define DSC_COALESCED 600
/* Gradient tensors of one layer (dsc_grad_tensors): norms' weights and biases, linears' weights
 * and biases; a block has at most 18. */
#define DSC_MAX_GRADS 24

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
 * the ipg bucket buffer); -1 for any other framework (memory.c's whole layers then). The
 * signature is layout_row.h's mem_gathered, so zero3's and zero3-offload's rows point at it (l
 * unused: the bound is the same for both). */
double dsc_gathered(const wl *w, const spec_training *t, const spec_layout *l);

/* Reduce-scatters DeepSpeed ZeRO-3 issues for gradients of sz[0..k-1] elements (forward order;
 * the backward reduces them last first) under reduce_bucket_size `bucket` elements: the ipg
 * bucket is flushed when the next gradient would overflow it, and at the end (ds_coordinator.c). */
int dsc_reduce_calls(const double *sz, int k, double bucket);

/* A layer's gradient tensors in forward order, elements (every parameter's: DeepSpeed hooks each
 * one, persistent or not); returns how many (<= DSC_MAX_GRADS). */
int dsc_grad_tensors(const spec_training *t, const wl *w, const wl_layer *L, double *g);

/* Reduce-scatter calls per copy of layer L under DeepSpeed ZeRO-3 (zero3, zero3-offload, MiCS,
 * ZeRO++ without qgZ) at `bucket` elements, at t's release; at least 1. */
int dsc_layer_reduces(const spec_training *t, const wl *w, const wl_layer *L, double bucket);

#endif
