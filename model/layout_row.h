/* layout_row.h — one layout kind's row: what its family file (layout_dp.c, layout_tensor.c,
 * layout_pipe.c, layout_offload.c) says about it, dispatched by the table in layout_kind.c (as
 * nccl-tests gives each collective one testColl). Types only. Not here: the grammar (names,
 * keys, canonical string: spec_layout.c) or the op graph's types (layout.h). */
#ifndef SC_LAYOUT_ROW_H
#define SC_LAYOUT_ROW_H

#include "lo_graph.h"
#include "spec.h"

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
} layout_kind_row;

/* The family files' rows, one per kind (layout_kind.c indexes them by spec_layout_kind). */
extern const layout_kind_row layout_row_ddp, layout_row_zero1, layout_row_zero2, layout_row_zero3, layout_row_mics,
    layout_row_hsdp, layout_row_zeropp, layout_row_shard_grad_op, layout_row_hsdp_zero2; /* layout_dp.c */
extern const layout_kind_row layout_row_tp, layout_row_axonn;                            /* layout_tensor.c */
extern const layout_kind_row layout_row_megatron;                                       /* layout_pipe.c */
extern const layout_kind_row layout_row_zero3_offload, layout_row_luwu;                 /* layout_offload.c */

/* The attention heads and key/value heads split `split` ways (tensor and pipeline families). */
static inline int layout_row_check_heads(const spec_model *m, const char *name, int split, sc_err *err)
{
    if (m->heads % split || m->kv_heads % split)
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: splits the attention heads %d ways; %s has %d heads and %d "
                          "key/value heads", name, split, m->name, m->heads, m->kv_heads);
    return 0;
}

#endif
