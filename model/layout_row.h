/* layout_row.h — one layout kind's row: what its family file (layout_dp.c, layout_tensor.c,
 * layout_pipe.c, layout_offload.c) says about it, dispatched by the table in layout_kind.c (as
 * nccl-tests gives each collective one testColl). Types only. Not here: the grammar (names,
 * keys, canonical string: spec_layout.c) or the op graph's types (layout.h). */
#ifndef SC_LAYOUT_ROW_H
#define SC_LAYOUT_ROW_H

#include <stdio.h>

#include "cost.h"
#include "lo_graph.h"
#include "memory_states.h"
#include "spec.h"

/* What plan's candidates are generated for: the cluster, the model, the node count and an AxoNN
 * placement (NULL: every one that changes a communicator). */
typedef struct layout_cand_in {
    const spec_cluster *c;
    const spec_model *m;
    int nodes;
    const char *placement;
} layout_cand_in;

/* What plan's explanation of a winner is written from: the winner and its numbers, and a
 * comparison its caller makes (the engines are above the model). */
typedef struct layout_explain_in {
    const spec_cluster *c;
    const spec_model *m;
    const cost_calib *cal;
    const spec_layout *l;
    const spec_training *t; /* its micro-batch split                                          */
    int nodes, gpus;
    double mem_total;   /* bytes on its fullest GPU                                           */
    double bubble_frac; /* the pipeline's bubble, a fraction of the step                       */
    int smallest_p;     /* 1: no candidate of its kind on as many nodes has a smaller p         */
    /* "; 1.05x the best <what> (...)" against the best candidate of kind `kind` (-1: any layout
     * without a pipeline) on as many nodes, or "" when there is none */
    void (*vs)(const void *ctx, int kind, const char *what, char *out, size_t len);
    const void *ctx;
} layout_explain_in;

typedef struct layout_kind_row {
    /* the layout on n GPUs, g per node, of cluster c (name: the layout's text, for a message;
     * err may be NULL); NULL: nothing to check */
    int (*check)(const spec_layout *l, const spec_cluster *c, int n, int g, const char *name, sc_err *err);
    /* the model's shapes against the layout's splits; NULL: no split */
    int (*check_model)(const spec_layout *l, const spec_model *m, const char *name, sc_err *err);
    /* the training's micro-batches against the schedule; NULL: any */
    int (*check_training)(const spec_layout *l, const spec_training *t, const char *name, sc_err *err);
    /* the op graph of one step into g (layout_build filled its common fields) */
    void (*build)(lo_graph *g, const wl *w, const spec_training *t, const spec_cluster *c);
    /* GPUs holding one model replica; NULL: 1 (data parallel) */
    int (*replicas)(const spec_layout *l);
    /* the batch rule: 1 when micro_batch counts sequences per replica (Megatron-LM's
     * --micro-batch-size), 0 when per GPU (configs/README.md) */
    int batch_per_replica;
    /* the GPUs the optimizer states are sharded over on n_ranks (memory.c, layout.c); NULL: all */
    int (*shard)(const spec_layout *l, int n_ranks);
    /* plan's candidates of this kind, appended to out[n..max); returns the new count. p == 0:
     * the kind's own; p >= 2: those sharded in groups of p GPUs (layout_candidates calls it for
     * every valid p). NULL: none */
    int (*candidates)(const layout_cand_in *in, int p, spec_layout *out, int n, int max);
    /* the layout in its canonical spelling on N GPUs; NULL: it has one spelling */
    void (*canon)(spec_layout *l, int N);
    /* plan's one-line reason why a winner of this kind wins, into out[0..len); NULL: none */
    void (*explain)(const layout_explain_in *x, char *out, size_t len);
    /* the frameworks that run it, LR_FW(f) per spec_framework (FW_IDEAL runs every kind;
     * framework.c's fw_check) */
    unsigned frameworks;
    /* 1: parameters sharded and gathered layer by layer, the ZeRO-3 family (framework.c's
     * schedule: fetch overlap, prefetch) */
    int gathers_params;
    /* the kind's own memory, for memory.c's mem_plan. mem_plan: the whole per-GPU plan instead of
     * memory.c's (megatron: memory_pipe.c); mem_states: after memory.c put the states on the GPU
     * (16-bit parameters / sp, gradients / sg, optimizer / so, the kinds table's divisors), what
     * the kind moves off it or adds (offloaded states, hpZ's copy); mem_gathered_mult: a gathered
     * layer holds this many of its parameter shards (AxoNN: z). NULL: as memory.c says */
    void (*mem_plan)(const wl *w, const spec_training *t, const spec_layout *l, int n_ranks, const spec_cluster *c,
                     mem_breakdown *o);
    void (*mem_states)(const wl *w, const spec_training *t, const spec_layout *l, int n_ranks, const spec_cluster *c,
                       mem_breakdown *o);
    double (*mem_gathered_mult)(const spec_layout *l);
    /* the gathered parameters and unsharded gradients at their peak, bytes, where the framework
     * bounds them below memory.c's whole layers (zero3 and zero3-offload under DeepSpeed:
     * ds_coordinator.c); < 0 or NULL: memory.c's */
    double (*mem_gathered)(const wl *w, const spec_training *t, const spec_layout *l);
    /* where the optimizer states live and are updated (spec.h's spec_states_at): on the GPUs,
     * on the host CPU (zero3-offload, zero2-offload) or on an in-network optimizer node (luwu) */
    spec_states_at states_at;
    /* 1: a group size p a config reader left 0 is one node (FSDP's HYBRID_SHARD shards inside
     * a node: spec_layout_default_group) */
    int group_of_node;
    /* 1: the kind takes overlap= (tp, axonn, megatron); overlap=0 runs its gathers inline, with
     * no prefetch (framework.c's fw_depth) */
    int overlap_opt;
    /* 1: the kind takes hier= and gathers hierarchically across nodes with it (MiCS §3.3) */
    int hier_gather;
    /* what DeepSpeed's older releases did with the kind (framework.c's ds_era): LR_DS_SYNC_FETCH,
     * LR_DS_OWNER_REDUCE */
    unsigned ds_era;
    /* the DeepSpeed release (framework.h's numbering, 900 = v0.9.0) that shipped the kind, where
     * it came after v0.6; before it the kind runs as its paper's implementation, overlapped,
     * which ds_paper says in fw_describe. 0: DeepSpeed's schedule of its era */
    int ds_since;
    const char *ds_paper;
    /* a framework's own refusal of a layout of a kind it runs (framework.c's fw_check, after
     * `frameworks` says it runs it); NULL: none */
    int (*fw_check)(const spec_layout *l, spec_framework f, sc_err *err);
    /* the layers as one rank runs them (its GEMM shapes, element-wise and activation bytes) into
     * out, or w where they are the model's own; NULL: the model's own (layout_kind_localize) */
    const wl *(*localize)(const wl *w, const spec_layout *l, int n_ranks, wl *out);
} layout_kind_row;

#define LR_FW(f) (1u << (f))
/* ds_era: before v0.6 (FW_DS_OVERLAP) each parameter fetch synchronous; before v0.12.4
 * (FW_DS_BUCKET_AR) each gradient bucket's slices reduced to their owners (framework.c) */
#define LR_DS_SYNC_FETCH 1u
#define LR_DS_OWNER_REDUCE 2u

/* The family files' rows, one per kind (layout_kind.c indexes them by spec_layout_kind). */
extern const layout_kind_row layout_row_ddp, layout_row_zero1, layout_row_zero2, layout_row_zero3, layout_row_mics,
    layout_row_hsdp, layout_row_zeropp, layout_row_shard_grad_op, layout_row_hsdp_zero2, layout_row_raf; /* layout_dp.c */
extern const layout_kind_row layout_row_tp, layout_row_axonn;                            /* layout_tensor.c */
extern const layout_kind_row layout_row_megatron;                                       /* layout_pipe.c */
extern const layout_kind_row layout_row_zero3_offload, layout_row_zero2_offload, layout_row_luwu; /* layout_offload.c */

/* Append l to out[0..max) holding n; returns the new count (n when full). */
static inline int layout_row_push(spec_layout *out, int n, int max, spec_layout l)
{
    if (n < max)
        out[n++] = l;
    return n;
}

/* A sharded winner's reason: prefix, where its states live, and the ratio to the best zero3
 * (unless it is one). */
static inline void layout_row_say(const layout_explain_in *x, const char *prefix, const char *where, char *out,
                                  size_t len)
{
    char vs[200] = "";
    if (x->l->kind != LAYOUT_ZERO3)
        x->vs(x->ctx, LAYOUT_ZERO3, "zero3", vs, sizeof vs);
    snprintf(out, len, "%s%s%s", prefix, where, vs);
}

/* Where a data-parallel layout's states live across all x->gpus GPUs: "<how> over all N GPUs",
 * or on one GPU "whole on its one GPU" (nothing to shard or replicate; until 2026-11-28 "sharded
 * over all 1 GPUs"). */
static inline const char *layout_row_over_all(const layout_explain_in *x, const char *how, char *buf, size_t len)
{
    if (x->gpus > 1)
        snprintf(buf, len, "%s over all %d GPUs", how, x->gpus);
    else
        snprintf(buf, len, "whole on its one GPU");
    return buf;
}

/* The attention heads and key/value heads split `split` ways (tensor and pipeline families). */
static inline int layout_row_check_heads(const spec_model *m, const char *name, int split, sc_err *err)
{
    if (m->heads % split || m->kv_heads % split)
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: splits the attention heads %d ways; %s has %d heads and %d "
                          "key/value heads", name, split, m->name, m->heads, m->kv_heads);
    return 0;
}

#endif
