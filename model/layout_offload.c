/* layout_offload.c — op graphs of the layouts that move the optimizer off the GPUs:
 * zero3-offload (ZeRO-3 with DeepSpeed's offload_optimizer: ZeRO-Offload, Ren et al. 2021 §4;
 * ZeRO-Infinity, Rajbhandari et al. 2021) and luwu (LuWu, arXiv 2409.00918: parameters and
 * optimizer on an in-network node, collectives by SmartNIC/SmartSwitch, not NCCL kernels).
 * Not here: their costs (model/cost.c transports) or memory (model/memory.c). */
#include <string.h>

#include "layout_ops.h"

/* DeepSpeed ZeRO-3 runs the CPU optimizer sub-group by sub-group (sub_group_size, default 1e9
 * parameters [recall: DeepSpeed config docs]) and copies each updated sub-group back to the GPU
 * while the CPU moves on to the next: only the last sub-group's copy is exposed. */
#define OFFLOAD_SUBGROUP_PARAMS 1e9

static lo_coll offloaded(cost_coll kind, lo_group_kind grp, double bytes)
{
    lo_coll c = lo_coll_make(kind, grp, bytes, 1);
    c.offload = 1; /* DMA copy engines / SmartNIC-SmartSwitch: no NCCL kernel on the GPU */
    return c;
}

/* One layer copy's collectives. zero3-offload: ZeRO-3's all-gather before forward and backward
 * and reduce-scatter after backward (NCCL on the GPUs), then the rank's gradient shard (S/N)
 * copied to host memory every micro-step (DeepSpeed accumulates it there in fp32). luwu: the
 * full layer fetched from the optimizer node (multicast) before forward and backward, its
 * gradient pushed to it (aggregated in the switch) after backward; on the last micro-step
 * the node runs the layer's update as its gradient arrives (GRP_INNET_UPD). */
static void item_colls(const lo_graph *g, int last, lo_item *it, double S)
{
    const int N = g->n_ranks;
    if (g->layout.kind == LAYOUT_ZERO3_OFFLOAD) {
        it->gather[it->n_gather++] = lo_coll_make(COLL_ALLGATHER, GRP_WORLD, S, 1);
        if (it->pass == LO_BWD) {
            it->reduce[it->n_reduce++] = lo_coll_make(COLL_REDUCESCATTER, GRP_WORLD, S, 1);
            it->reduce[it->n_reduce++] = offloaded(COLL_REDUCESCATTER, GRP_HOST, S / N);
        }
        return;
    }
    it->gather[it->n_gather++] = offloaded(COLL_ALLGATHER, GRP_INNET, S);
    if (it->pass == LO_BWD)
        it->reduce[it->n_reduce++] = offloaded(COLL_REDUCESCATTER, last ? GRP_INNET_UPD : GRP_INNET, S);
}

static void offload_item(const lo_graph *g, const wl *w, const spec_training *t, int last, lo_item *it)
{
    (void)t;
    item_colls(g, last, it, w->layer[it->layer].params * g->elem_bytes);
}

void lo_build_offload(lo_graph *g, const wl *w, const spec_training *t, const spec_cluster *c)
{
    lo_make_groups(g, c);
    lo_build_micro(g, w, t, 0, &g->micro, offload_item);
    lo_build_micro(g, w, t, 1, &g->last, offload_item);
    if (g->layout.kind == LAYOUT_LUWU)
        return; /* the update ran on the node as the last gradients arrived: no boundary op */
    /* zero3-offload: CPU Adam over the node's G shards (its CPU serves all its GPUs), then the
     * updated 16-bit parameter shard back to the GPU, the last sub-group's copy exposed. */
    const int N = g->n_ranks;
    const double shard = w->params / N;
    lo_bop opt = {1, shard * g->gpus_per_node, {0}, OPT_HOST};
    g->boundary[g->n_boundary++] = opt;
    double back = shard < OFFLOAD_SUBGROUP_PARAMS ? shard : OFFLOAD_SUBGROUP_PARAMS;
    lo_bop copy = {0, 0, offloaded(COLL_ALLGATHER, GRP_HOST, back * g->elem_bytes), OPT_GPU};
    g->boundary[g->n_boundary++] = copy;
}
