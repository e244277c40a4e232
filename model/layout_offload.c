/* layout_offload.c — op graphs of the layouts that move model states off the GPUs:
 * zero3-offload (ZeRO-3 with DeepSpeed's offload_optimizer: ZeRO-Offload, Ren et al. 2021 §4;
 * with offload_param and NVMe: ZeRO-Infinity, Rajbhandari et al. SC'21 §5-6) and luwu (LuWu, arXiv 2409.00918: parameters and
 * optimizer on an in-network node, collectives by SmartNIC/SmartSwitch, not NCCL kernels).
 * Not here: their costs (model/cost.c transports) or memory (model/memory.c). */
#include <string.h>

#include "layout.h" /* layout_offload_traffic is declared there */
#include "layout_offload.h"
#include "layout_ops.h"
#include "layout_row.h"

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

/* The stream of parameter fetches from host memory or NVMe: apart from the all-gathers, so that
 * layer c+1's shard crosses PCIe (and leaves the drives) while layer c is all-gathered and
 * layer c-1 computes: ZeRO-Infinity's overlap-centric design (§6.2: NVMe->CPU, CPU->GPU,
 * all-gather and compute of successive layers at once). */
#define FETCH_STREAM (FW_STREAMS - 1)

/* One layer copy's collectives. zero3-offload: ZeRO-3's all-gather before forward and backward
 * and reduce-scatter after backward (NCCL on the GPUs), then the rank's gradient shard (S/N)
 * copied to host memory every micro-step (DeepSpeed accumulates it there in fp32). With
 * param=cpu|nvme (ZeRO-Infinity's bandwidth-centric partitioning, §6.1) each rank first copies
 * its own shard (S/N) from host memory, or from NVMe through a pinned host buffer, to the GPU
 * over its PCIe link, then the shards are all-gathered as in ZeRO-3. luwu: the
 * full layer fetched from the optimizer node (multicast) before forward and backward, its
 * gradient pushed to it (aggregated in the switch) after backward; on the last micro-step
 * the node runs the layer's update as its gradient arrives (GRP_INNET_UPD). */
static void item_colls(const lo_graph *g, int last, lo_item *it, double S)
{
    const int N = g->n_ranks;
    if (g->layout.kind == LAYOUT_ZERO3_OFFLOAD) {
        if (g->layout.off_param != OFF_GPU) {
            lo_coll f = offloaded(COLL_ALLGATHER, g->layout.off_param == OFF_NVME ? GRP_NVME : GRP_HOST, S / N);
            f.stream = FETCH_STREAM;
            it->gather[it->n_gather++] = f;
        }
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
    /* zero3-offload: CPU Adam over the node's G shards (its CPU serves all its GPUs), its states
     * in host memory or on NVMe (cost_optimizer_nvme_time: sub-groups streamed through), then
     * the updated 16-bit parameter shard where the parameters live: back to the GPU (the last
     * sub-group's copy exposed), left in host memory (param=cpu: the CPU writes it in place),
     * or written to NVMe (param=nvme: the whole shard, after the update). */
    const int N = g->n_ranks;
    const double shard = w->params / N;
    lo_bop opt = {1, shard * g->gpus_per_node, {0}, g->layout.off_opt == OFF_NVME ? OPT_HOST_NVME : OPT_HOST};
    g->boundary[g->n_boundary++] = opt;
    double back = shard < OFFLOAD_SUBGROUP_PARAMS ? shard : OFFLOAD_SUBGROUP_PARAMS;
    if (g->layout.off_param == OFF_GPU) {
        lo_bop copy = {0, 0, offloaded(COLL_ALLGATHER, GRP_HOST, back * g->elem_bytes), OPT_GPU};
        g->boundary[g->n_boundary++] = copy;
    } else if (g->layout.off_param == OFF_NVME) {
        lo_bop wr = {0, 0, offloaded(COLL_REDUCESCATTER, GRP_NVME_HOST, shard * g->elem_bytes), OPT_GPU};
        g->boundary[g->n_boundary++] = wr;
    }
}

void layout_offload_traffic(const lo_graph *g, lo_offload_traffic *o)
{
    memset(o, 0, sizeof *o);
    for (int last = 0; last < 2; last++) {
        const lo_micro *m = last ? &g->last : &g->micro;
        double times = last ? 1 : g->grad_accum - 1;
        for (int i = 0; i < m->n_items && times > 0; i++) {
            const lo_item *it = &m->item[i];
            for (int j = 0; j < it->n_gather; j++) {
                const lo_coll *c = &it->gather[j];
                if (c->group == GRP_HOST || c->group == GRP_NVME)
                    o->param_h2d += times * it->count * c->bytes;
                if (c->group == GRP_NVME)
                    o->param_nvme_read += times * it->count * c->bytes;
            }
            for (int j = 0; j < it->n_reduce; j++)
                if (it->reduce[j].group == GRP_HOST)
                    o->grad_d2h += times * it->count * it->reduce[j].bytes;
        }
    }
    double per_rank = 0; /* parameters of the rank's shard (the optimizer op comes first) */
    for (int i = 0; i < g->n_boundary; i++) {
        const lo_bop *b = &g->boundary[i];
        if (b->is_optimizer)
            per_rank = b->opt_params / g->gpus_per_node;
        if (b->is_optimizer && b->opt_where == OPT_HOST_NVME) {
            o->opt_nvme_read += COST_NVME_OPT_READ_B * per_rank;
            o->opt_nvme_write += COST_NVME_OPT_WRITE_B * per_rank;
        } else if (!b->is_optimizer && b->coll.group == GRP_HOST) {
            o->update_h2d += per_rank * g->elem_bytes; /* all of it crosses; the op times the last piece */
        } else if (!b->is_optimizer && b->coll.group == GRP_NVME_HOST) {
            o->param_nvme_write += b->coll.bytes;
        }
    }
}

/* The rows of zero3-offload and luwu (layout_row.h): what the cluster must have. */

static int offload_check(const spec_layout *l, const spec_cluster *c, int n, int g, const char *name, sc_err *err)
{
    (void)n, (void)g;
    if ((l->off_param == OFF_NVME || l->off_opt == OFF_NVME) && !(c->nvme_read_Bps > 0))
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "%s: expected a cluster with local NVMe ($.node.nvme_read_GBps, nvme_write_GBps, "
                          "nvme_capacity_GB), got %s without", name, c->name);
    return 0;
}

static int luwu_check(const spec_layout *l, const spec_cluster *c, int n, int g, const char *name, sc_err *err)
{
    (void)l, (void)n, (void)g;
    if (!c->innet.present)
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "%s: expected a cluster with an in_network_optimizer (LuWu keeps the model on it), "
                          "got %s without one", name, c->name);
    return 0;
}

const layout_kind_row layout_row_zero3_offload = {.check = offload_check, .build = lo_build_offload};
const layout_kind_row layout_row_luwu = {.check = luwu_check, .build = lo_build_offload};
