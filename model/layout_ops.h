/* layout_ops.h — the op graph's building blocks (layout_ops.c), shared by the layout builders
 * (layout.c, layout_tensor.c, layout_pipe.c, layout_offload.c); not for engines. */
#ifndef SC_LAYOUT_OPS_H
#define SC_LAYOUT_OPS_H

#include "lo_graph.h"

/* A collective of `chunks` (at least 1) back-to-back pieces on stream 0. Inline: the builders
 * call it per item, and the value built in place avoids the stalls of a 32-byte struct returned
 * through memory and reloaded (perf: dp_item's hottest instructions). */
static inline lo_coll lo_coll_make(cost_coll kind, lo_group_kind grp, double bytes, int chunks)
{
    return (lo_coll){kind, grp, bytes, chunks < 1 ? 1 : chunks, 0, 0};
}
/* Buckets of `bucket` bytes needed for `bytes` (at least 1). */
int lo_buckets(double bytes, double bucket);
/* Geometry of every communicator of g (ax_stride / ax_size set first for GRP_AX*). */
void lo_make_groups(lo_graph *g, const spec_cluster *c);
/* Fills one item's collectives (its pass, layer, count and recompute are set). */
/* The stream of activation_offload's copies: torch's save_on_cpu copies on the compute stream
 * (pack: copy_ into pinned memory, the host waiting; unpack: .to(device, non_blocking)), so they
 * wait for no collective: a stream no layout queues a collective on ahead of them (FSDP and
 * DeepSpeed use 0 and 1; the last is the ideal offload's fetch stream and HSDP's replica
 * all-reduce, which an offloaded activation copy does not wait for in the code either). */
#define LO_ACT_STREAM (FW_STREAMS - 1)
typedef void (*lo_item_fn)(const lo_graph *g, const wl *w, const spec_training *t, int last, lo_item *it);
/* One micro-step (last = 1: the accumulation-boundary one): forward over the layers, backward in
 * reverse, each item filled by `fill`, then stripped of trivial collectives. With
 * activation_offload (memory_states.h mem_act_offloaded) each block copy without inline
 * collectives of its own gets its checkpointed input's copy as one: device-to-host in the
 * forward, host-to-device in the backward (before its recompute), on LO_ACT_STREAM, where
 * lo_act_offload_priced(l). */
/* Whether layout l's graph prices activation_offload's copies: not under pipelines (megatron,
 * fsdp2 with p), whose memory plans (memory_pipe.c) keep the inputs on the GPU, nor with tensor
 * or context parallelism (tp, megatron, axonn, fsdp2 with t, zero3 with cp), whose blocks carry
 * inline collectives the copies' serial time is not modelled beside (spec_layout_check_training
 * refuses them). */
int lo_act_offload_priced(const spec_layout *l);
void lo_build_micro(lo_graph *g, const wl *w, const spec_training *t, int last, lo_micro *mi, lo_item_fn fill);
/* Whether the item being filled is the last micro-step's, asked through lo_last_is so that the
 * builder knows whether the answer was used: an item filled without asking is the same bytes in
 * both micro-steps (fill is a function of its arguments alone). */
typedef struct lo_last {
    int last, read;
} lo_last;
static inline int lo_last_is(lo_last *l)
{
    l->read = 1;
    return l->last;
}
typedef void (*lo_item_fn_lazy)(const lo_graph *g, const wl *w, const spec_training *t, lo_last *last, lo_item *it);
/* Both micro-steps (g->micro, then g->last as lo_build_micro builds them): each item filled once
 * for the regular micro-step, and again for the last only where fill asked lo_last_is (else
 * copied: the same bytes as filling it again). */
void lo_build_micro_pair(lo_graph *g, const wl *w, const spec_training *t, lo_item_fn_lazy fill);
/* Drop an item's collectives over one rank or of no bytes. */
void lo_item_drop_trivial(const lo_graph *g, lo_item *it);
/* Pair the copies of inline collective `coll` (share of its bytes) with one GEMM of `role` (the
 * attention core: WL_G_SCORES, fused or its two GEMMs) of `pass`, run in `chunks` (clamped to
 * 255: t > 255 hides 254/255 for 255/256) of which `bare` (at most chunks - 1) have no copy
 * beside them (lo_pair). The tensor-parallel pairs (layout_tensor.c) and context parallelism's
 * ring (cp.c) both make them here. */
void lo_item_pair(lo_item *it, int coll, wl_gemm_role role, int pass, int share, int chunks, int bare);
/* Whether a backward item re-runs its layer's forward collectives (the tensor-parallel ones
 * inside the linear layers: Megatron's f / g, AxoNN's forward all-reduces) before its own: the
 * one rule for every tensor-parallel builder (layout_tensor.c, layout_pipe.c through it). */
int lo_fwd_comm_rerun(const spec_training *t, const lo_item *it);

#endif
