/* layout_offload.c — op graphs of the layouts that move model states off the GPUs:
 * zero2-offload (ZeRO-2 with DeepSpeed's offload_optimizer: ZeRO-Offload as its paper and tutorial
 * ran it, on ZeRO-2's graph from layout_dp.c),
 * zero3-offload (ZeRO-3 with DeepSpeed's offload_optimizer: ZeRO-Offload, Ren et al. 2021 §4;
 * with offload_param and NVMe: ZeRO-Infinity, Rajbhandari et al. SC'21 §5-6) and luwu (LuWu, arXiv 2409.00918: parameters and
 * optimizer on an in-network node, collectives by SmartNIC/SmartSwitch, not NCCL kernels).
 * Also their memory off the GPUs (host, NVMe, the in-network node), plan's candidates and reasons.
 * Not here: their costs (model/cost.c transports) or the memory every kind shares (model/memory.c). */
#include <string.h>

#include "ds_coordinator.h"
#include "layout.h" /* layout_offload_traffic is declared there */
#include "layout_offload.h"
#include "layout_ops.h"
#include "layout_row.h"
#include "memory_states.h"

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

/* v0.15.4 (ff1c5435, PR #6670, "fix memcpy issue on backward for zero-infinity"): the gradient
 * partition's copy to the host's fp32 gradients became non-blocking through a pinned buffer; its
 * message: before, "the D2H memcpy will be the bottleneck during the final backward pass of each
 * iteration for ZeRO-Infinity(offload)". */
#define OFFLOAD_DS_ASYNC_GRAD 1504

/* One layer copy's collectives. zero3-offload: ZeRO-3's all-gather before forward and backward
 * and reduce-scatter after backward (NCCL on the GPUs), then the rank's gradient shard (S/N)
 * copied to host memory every micro-step (DeepSpeed accumulates it there in fp32). With
 * param=cpu|nvme (ZeRO-Infinity's bandwidth-centric partitioning, §6.1) each rank first copies
 * its own shard (S/N) from host memory, or from NVMe through a pinned host buffer, to the GPU
 * over its PCIe link, then the shards are all-gathered as in ZeRO-3. luwu: the
 * full layer fetched from the optimizer node (multicast) before forward and backward, its
 * gradient pushed to it (aggregated in the switch) after backward; on the last micro-step
 * the node runs the layer's update as its gradient arrives (GRP_INNET_UPD).
 * Under framework deepspeed (offload_ds below) the world collectives go in DeepSpeed's pieces
 * and a checkpointed block's backward gathers what the recompute released: R more elements. */
static void item_colls(const lo_graph *g, int last, lo_item *it, double S, double R, int pieces[2])
{
    const int N = g->n_ranks;
    if (g->layout.kind == LAYOUT_ZERO3_OFFLOAD) {
        const double Sg = S + R; /* bytes gathered for this pass */
        if (g->layout.off_param != OFF_GPU) {
            lo_coll f = offloaded(COLL_ALLGATHER, g->layout.off_param == OFF_NVME ? GRP_NVME : GRP_HOST, Sg / N);
            f.stream = FETCH_STREAM;
            it->gather[it->n_gather++] = f;
        }
        it->gather[it->n_gather++] = lo_coll_make(COLL_ALLGATHER, GRP_WORLD, Sg, pieces[0]);
        if (it->pass == LO_BWD) {
            it->reduce[it->n_reduce++] = lo_coll_make(COLL_REDUCESCATTER, GRP_WORLD, S, pieces[1]);
            it->reduce[it->n_reduce++] = offloaded(COLL_REDUCESCATTER, GRP_HOST, S / N);
        }
        return;
    }
    it->gather[it->n_gather++] = offloaded(COLL_ALLGATHER, GRP_INNET, S);
    if (it->pass == LO_BWD)
        it->reduce[it->n_reduce++] = offloaded(COLL_REDUCESCATTER, last ? GRP_INNET_UPD : GRP_INNET, S);
}

/* DeepSpeed's ZeRO-3 with offload_optimizer, as zero3's graph has it (layout_dp.c dp_item):
 * one fetch per partitioned sub-module (fw_fetches), the gradients reduce-scattered as DeepSpeed's
 * ipg bucket flushes them (ds_coordinator.c dsc_layer_reduces), a hook per sub-module; a
 * checkpointed block's sub-modules that the recompute released gathered again (ds_coordinator.c). Before v0.15.4, on the last micro-step
 * (the accumulation boundary) every gradient partition is copied into the host's fp32
 * gradients by a blocking copy_ on the reduce stream (v0.6.2 stage3.py __partition_grads
 * L1702-1706: fp32_grad_tensor.copy_(grad_buffer), no non_blocking), after the partition went
 * to the pinned fp16 buffer on the host and back to the GPU (L1657-1661: copy_, then .to(device))
 * and its norm (L1691-1692): the host waits for the reduce-scatter and the copies before it runs
 * the rest of the backward, so the compute stream waits for them: the reduce-scatter and the
 * copies run inline, after the block's compute (fp16 out, fp16 back, fp32 out: 4 x S/N bytes).
 * With opt=nvme the gradients go to the swapper instead (L1694-1699): not this path. */
static void offload_ds(const lo_graph *g, const wl *w, const spec_training *t, int last, lo_item *it)
{
    const wl_layer *L = &w->layer[it->layer];
    const double e = g->elem_bytes, S = L->params * e;
    double sz[WL_MAX_GEMMS + 2];
    const int k = fw_fetches(t, w, L, sz);
    int nre = 0;
    const double R = dsc_backward_regather(t, sz, k, it->recompute, &nre) * e;
    const double bucket = g->sched.reduce_bucket_bytes / e;
    int pieces[2] = {k + (it->pass == LO_BWD ? nre : 0), dsc_layer_reduces(t, w, L, bucket)};
    if (k == 0) /* nothing partitioned (a tied head): nothing gathered */
        pieces[0] = 0;
    item_colls(g, last, it, S, it->pass == LO_BWD ? R : 0, pieces);
    if (k == 0)
        it->n_gather = 0;
    it->hooks = fw_submodules(L);
    if (last && it->pass == LO_BWD && g->layout.off_opt != OFF_NVME &&
        fw_ds_before(t, OFFLOAD_DS_ASYNC_GRAD)) {
        lo_coll host = offloaded(COLL_REDUCESCATTER, GRP_HOST, 4 * S / g->n_ranks);
        it->inl[it->n_inline++] = it->reduce[0];
        it->inl[it->n_inline++] = host;
        it->inline_overlap = 0;
        it->n_reduce = 0;
    }
}

static void offload_item(const lo_graph *g, const wl *w, const spec_training *t, int last, lo_item *it)
{
    if (g->layout.kind == LAYOUT_ZERO3_OFFLOAD && g->framework == FW_DEEPSPEED) {
        offload_ds(g, w, t, last, it);
        return;
    }
    int one[2] = {1, 1};
    item_colls(g, last, it, w->layer[it->layer].params * g->elem_bytes, 0, one);
}

/* ---- zero3-offload under framework fsdp: FSDP1's CPUOffload(offload_params=True) ----------
 * A different mechanism from DeepSpeed's, read in PyTorch's FSDP as the post's code imported it
 * (torch.distributed._fsdp, pytorch/pytorch@00318e079014eedc8d15ff8841973c203b91b816
 * torch/distributed/_fsdp/fully_sharded_data_parallel.py; v1.11.0's fsdp/ module keeps these
 * paths; the stored copy gives no line numbers, so functions are named):
 *  - __init__ (_offload_to_cpu) and _init_param_attributes: each unit's flat-parameter shard
 *    lives in pinned host memory, with a pinned host gradient shard (_cpu_grad) of its size;
 *  - _rebuild_full_params (the pre-forward and pre-backward hooks): on the all_gather stream,
 *    p.data.to(compute_device, non_blocking=True) copies the shard host-to-device, then
 *    _all_gather_base gathers the unit: one stream, the copy and then the all-gather, in order
 *    (not ZeRO-Infinity's separate fetch stream);
 *  - _post_backward_hook: on the post_backward stream, the reduce-scatter into the gradient
 *    shard, then param._cpu_grad.copy_(param.grad, non_blocking=True): device-to-host, in the
 *    parameters' dtype, every backward;
 *  - _wait_for_post_backward: the host synchronizes before the optimizer;
 *  - the optimizer is the trainer's torch.optim over the host shards (no DeepSpeedCPUAdam), and
 *    updates them in place: nothing is copied back (the next forward's copy brings it).
 * So: zero3's FSDP graph (layout_dp.c) with a host copy in front of every all-gather and behind
 * every reduce-scatter, and the step on the host at torch's rate (OPT_HOST_TORCH, cost.h), each
 * rank's own optimizer beside the node's other G - 1 on one CPU. */
static lo_coll on_stream(lo_coll c, int stream)
{
    c.stream = stream;
    return c;
}

/* fsdp_wrap module (framework.h fw_fsdp_units): a checkpointed block's units are FSDP modules
 * inside the checkpoint, so its recompute runs their forward hooks again: zero3's FSDP graph
 * (layout_dp.c dp_item) all-gathers each unit a second time before its backward's own, and each
 * of those gathers copies the unit's shard in first: the backward's copy twice the shard. */
static void fsdp_offload_items(const lo_graph *g, const wl *w, const spec_training *t, lo_micro *m)
{
    const double N = g->n_ranks, e = g->elem_bytes;
    for (int i = 0; i < m->n_items; i++) {
        lo_item *it = &m->item[i];
        double part = w->layer[it->layer].params / N * e; /* the unit's shard, bytes */
        double largest;
        const int k = fw_fsdp_units(t, &w->layer[it->layer], &largest);
        if (k > 1 && it->n_gather == 1 && it->pass == LO_BWD && it->recompute)
            part *= 2;
        if (it->n_gather == 1) { /* the H2D copy first, then the all-gather, on its stream */
            it->gather[1] = it->gather[0];
            it->gather[0] = on_stream(offloaded(COLL_ALLGATHER, GRP_HOST, part), it->gather[1].stream);
            it->n_gather = 2;
        }
        if (it->pass == LO_BWD && it->n_reduce > 0 && it->n_reduce < 3) { /* D2H after its reduce-scatter */
            const int st = it->reduce[it->n_reduce - 1].stream;
            it->reduce[it->n_reduce++] =
                on_stream(offloaded(COLL_REDUCESCATTER, GRP_HOST, w->layer[it->layer].params / N * e), st);
        }
    }
}

static void lo_build_fsdp_offload(lo_graph *g, const wl *w, const spec_training *t, const spec_cluster *c)
{
    spec_layout z3 = g->layout;
    z3.kind = LAYOUT_ZERO3;
    z3.off_param = OFF_GPU; /* zero3's own graph, then the offload's copies */
    fw_schedule(t, &z3, w, &g->sched);
    g->layout = z3;
    layout_row_zero3.build(g, w, t, c);
    g->layout.kind = LAYOUT_ZERO3_OFFLOAD;
    g->layout.off_param = OFF_CPU;
    fsdp_offload_items(g, w, t, &g->micro);
    fsdp_offload_items(g, w, t, &g->last);
    /* the step on the host: no GPU kernels for the optimizer or the trainer's step passes over
     * the gradients (they are host tensors now) */
    g->sched.opt_launches = 0;
    g->sched.step_hbm_bytes = 0;
    /* OPT_HOST_TORCH is torch's CPU Adam (cost.h); optimizer_type sgd there: its bytes per
     * parameter over Adam's, FW_SGD_BYTES_PER_PARAM's 3 e over the 80 B of torch's
     * single-tensor for-loop Adam, the CPU default of 2022 (wl_opt_bytes_per_param), assuming
     * both bound by the host's memory bandwidth [assumption] */
    g->sched.opt_scale =
        t->opt_sgd > 0 ? FW_SGD_BYTES_PER_PARAM(g->elem_bytes) / wl_opt_bytes_per_param(OPT_IMPL_FORLOOP) : 1;
    for (int i = 0; i < g->n_boundary; i++)
        if (g->boundary[i].is_optimizer) {
            g->boundary[i].opt_where = OPT_HOST_TORCH;
            g->boundary[i].opt_params = w->params / g->n_ranks * g->gpus_per_node; /* the node's CPU */
        }
}

void lo_build_offload(lo_graph *g, const wl *w, const spec_training *t, const spec_cluster *c)
{
    if (g->layout.kind == LAYOUT_ZERO3_OFFLOAD && g->framework == FW_FSDP) {
        lo_build_fsdp_offload(g, w, t, c);
        return;
    }
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

/* ---- zero2-offload: ZeRO-2 with DeepSpeed's offload_optimizer (ZeRO-Offload, Ren et al. 2021) -- */

/* DeepSpeed's releases that changed the copy of the updated 16-bit partition back to the GPU. With
 * fp16 and DeepSpeedCPUAdam, before v0.9.0, CPU Adam writes each tile's 16-bit values to the GPU
 * (launch_param_update on the CUDA stream) while it updates the next tile (csrc/adam/cpu_adam.cpp
 * at v0.3.0 4b1df25a L64-109): only the last tile's copy is exposed; TILE is 2^30 elements at
 * v0.3.x (csrc/includes/cpu_adam.h v0.3.0 L23), 2^27 from v0.4.0 (the same line at v0.4.0). From
 * v0.9.0 (4b6d7c15, #3097 "Disable Stage 1&2 CPUAdam pathways"), and for bf16 always (the tiled
 * path required dtype == torch.half), stage_1_and_2.py steps CPU Adam alone, then copies the
 * whole fp32 partition into the GPU's 16-bit partition (step: bit16_partitions[partition_id].data
 * .copy_(...), at v0.19.5 cf443004 L2311-2315 through a pinned 16-bit buffer): all of it exposed,
 * before the all-gather on the same stream. The ideal schedule pipelines it as zero3-offload's
 * sub-groups (OFFLOAD_SUBGROUP_PARAMS). */
#define Z2OFF_DS_TILE_2_27 400
#define Z2OFF_DS_WHOLE_COPY 900
static double z2off_exposed_params(const spec_training *t, double shard)
{
    double piece = OFFLOAD_SUBGROUP_PARAMS;
    if (t->framework == FW_DEEPSPEED) {
        if (t->precision != PREC_FP16 || !fw_ds_before(t, Z2OFF_DS_WHOLE_COPY))
            return shard;
        piece = fw_ds_before(t, Z2OFF_DS_TILE_2_27) ? 1073741824.0 : 134217728.0;
    }
    return shard < piece ? shard : piece;
}

/* A host copy appended to an item's reductions: beside the compute on the reduction stream, or
 * inline where the reduce-scatter is (DeepSpeed without overlap_comm copies on the current
 * stream: stage2.py v0.3.0 L951-954, stage_1_and_2.py v0.19.5 reduce_ipg_grads). */
static void z2off_push(const lo_graph *g, lo_item *it, lo_coll c)
{
    if (it->n_inline > 0) {
        it->inl[it->n_inline++] = c;
        return;
    }
    c.stream = g->sched.reduce_stream;
    it->reduce[it->n_reduce++] = c;
}

/* Each backward item after ZeRO-2's reduce-scatter (DeepSpeed: reduce_ipg_grads, then
 * copy_grads_in_partition for the rank's own gradients, stage2.py v0.3.0 L912-927, v0.19.5 the
 * same function): with accumulation (gradient_accumulation_steps > 1; v0.19.5: micro_step_id > 0
 * or not the boundary) async_accumulate_grad_in_cpu_via_gpu (v0.3.0 L801-824) brings the host's
 * 16-bit sum back (H2D, every micro-step but the first), adds it on the GPU and, off the boundary,
 * copies the sum out (D2H); on the boundary async_inplace_copy_grad_to_fp32_buffer_from_gpu
 * (L869-880) copies the partition as fp32 (.float(), 4 B) into the host's pinned fp32 gradients,
 * non_blocking. Bytes per rank: the layer's gradients / N. The restore's count over the
 * ga - 1 regular micro-steps: ga - 2 of them (the first has nothing to restore). */
static void z2off_items(lo_graph *g, const wl *w, lo_micro *m, int last)
{
    const double N = g->n_ranks, e = g->elem_bytes, ga = g->grad_accum;
    for (int i = 0; i < m->n_items; i++) {
        lo_item *it = &m->item[i];
        if (it->pass != LO_BWD)
            continue;
        const double part = w->layer[it->layer].params / N;
        if (ga > 1 && (last || ga > 2))
            z2off_push(g, it, offloaded(COLL_ALLGATHER, GRP_HOST, part * e * (last ? 1 : (ga - 2) / (ga - 1))));
        z2off_push(g, it, offloaded(COLL_REDUCESCATTER, GRP_HOST, part * (last ? 4 : e)));
    }
}

/* ZeRO-2's graph (layout_dp.c, DeepSpeed's stage-2 schedule: stage2.py / stage_1_and_2.py run
 * cpu_offload inside the same optimizer), with the gradients' host copies and the step moved to
 * the host: CPU Adam (DeepSpeedCPUAdam, the host rate zero3-offload uses) over the node's G
 * partitions, then the updated 16-bit partition copied back (z2off_exposed_params) before
 * ZeRO-2's all-gather. cpu_offload forces contiguous_gradients (stage2.py v0.3.0 L303,
 * stage_1_and_2.py v0.19.5 L259). Not modelled: the fp32 cast on the GPU before the copy (on
 * the reduction stream with overlap_comm) and the unscale / clip on the host fp32 gradients. */
static void lo_build_zero2_offload(lo_graph *g, const wl *w, const spec_training *t, const spec_cluster *c)
{
    spec_layout z2 = g->layout;
    z2.kind = LAYOUT_ZERO2;
    fw_schedule(t, &z2, w, &g->sched);
    if (fw_ds_before(t, FW_DS_OVERLAP))
        g->sched.ds_contig = 1;
    g->layout = z2;
    layout_row_zero2.build(g, w, t, c);
    g->layout.kind = LAYOUT_ZERO2_OFFLOAD;
    z2off_items(g, w, &g->micro, 0);
    z2off_items(g, w, &g->last, 1);
    const double shard = w->params / g->n_ranks;
    for (int i = 0; i < g->n_boundary; i++) {
        lo_bop *b = &g->boundary[i];
        if (!b->is_optimizer)
            continue;
        b->opt_where = OPT_HOST;
        b->opt_params = shard * g->gpus_per_node;
        if (g->n_boundary < (int)(sizeof g->boundary / sizeof g->boundary[0])) {
            memmove(b + 2, b + 1, (size_t)(g->n_boundary - i - 1) * sizeof *b);
            b[1] = (lo_bop){0, 0, offloaded(COLL_ALLGATHER, GRP_HOST, z2off_exposed_params(t, shard) * g->elem_bytes),
                            OPT_GPU};
            g->n_boundary++;
        }
        break;
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
            for (int j = 0; j < it->n_reduce + it->n_inline; j++) {
                const lo_coll *c = j < it->n_reduce ? &it->reduce[j] : &it->inl[j - it->n_reduce];
                if (c->group == GRP_HOST && c->offload == LO_OFFLOAD_ACT)
                    *(c->kind == COLL_ALLGATHER ? &o->act_h2d : &o->act_d2h) += times * it->count * c->bytes;
                else if (c->group == GRP_HOST)
                    *(c->kind == COLL_ALLGATHER ? &o->grad_h2d : &o->grad_d2h) += times * it->count * c->bytes;
            }
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

/* ZeRO-Offload / ZeRO-Infinity candidates: parameters on GPU, host or NVMe x optimizer on host or
 * NVMe, NVMe where the cluster has it. */
static int offload_cands(const layout_cand_in *in, int p, spec_layout *out, int n, int max)
{
    if (p)
        return n;
    for (int prm = OFF_GPU; prm <= OFF_NVME; prm++)
        for (int opt = OFF_CPU; opt <= OFF_NVME; opt++)
            if ((prm != OFF_NVME && opt != OFF_NVME) || in->c->nvme_read_Bps > 0)
                n = layout_row_push(out, n, max, (spec_layout){.kind = LAYOUT_ZERO3_OFFLOAD, .hier = 1,
                                                               .off_param = (spec_offload)prm, .off_opt = (spec_offload)opt});
    return n;
}

/* ZeRO-Offload over all GPUs: one candidate (no tiers to choose). */
static int z2off_cands(const layout_cand_in *in, int p, spec_layout *out, int n, int max)
{
    (void)in;
    return p ? n : layout_row_push(out, n, max, (spec_layout){.kind = LAYOUT_ZERO2_OFFLOAD, .hier = 1});
}

/* LuWu needs the cluster's in-network optimizer node. */
static int luwu_cands(const layout_cand_in *in, int p, spec_layout *out, int n, int max)
{
    if (p || !in->c->innet.present)
        return n;
    return layout_row_push(out, n, max, (spec_layout){.kind = LAYOUT_LUWU, .hier = 1});
}

/* plan's reasons (layout_row.h): ZeRO-Offload / ZeRO-Infinity say where each state lives and how
 * they compare with LuWu; LuWu is sharded over all GPUs. */
static void offload_explain(const layout_explain_in *x, char *out, size_t len)
{
    static const char *const T[] = {"GPU", "host memory", "NVMe"};
    char vl[256], where[512], all[64];
    x->vs(x->ctx, LAYOUT_LUWU, "luwu", vl, sizeof vl);
    if (x->t && x->t->framework == FW_FSDP && x->gpus > 1)
        snprintf(where, sizeof where, "FSDP1 CPUOffload over all %d GPUs: parameter and gradient shards in host "
                 "memory, copied over PCIe around each unit's all-gather and reduce-scatter, torch Adam on the "
                 "host CPU%s", x->gpus, vl);
    else if (x->t && x->t->framework == FW_FSDP) /* one GPU: nothing sharded or gathered */
        snprintf(where, sizeof where, "FSDP1 CPUOffload on one GPU: parameters and gradients in host memory, "
                 "copied over PCIe around each unit's use, torch Adam on the host CPU%s", vl);
    else if (x->gpus > 1)
        snprintf(where, sizeof where, "%s, parameter shards in %s, Adam on the host CPU with "
                 "its states in %s%s", layout_row_over_all(x, "sharded", all, sizeof all), T[x->l->off_param],
                 T[x->l->off_opt == OFF_NVME ? 2 : 1], vl);
    else
        snprintf(where, sizeof where, "one GPU: parameters in %s, Adam on the host CPU with its states in %s%s",
                 T[x->l->off_param], T[x->l->off_opt == OFF_NVME ? 2 : 1], vl);
    layout_row_say(x, "", where, out, len);
}

static void z2off_explain(const layout_explain_in *x, char *out, size_t len)
{
    char where[512];
    if (x->gpus > 1)
        snprintf(where, sizeof where, "16-bit parameters whole on each of %d GPUs, gradient partitions and Adam on "
                 "the host CPU", x->gpus);
    else
        snprintf(where, sizeof where, "16-bit parameters on its one GPU, gradients and Adam on the host CPU");
    layout_row_say(x, "", where, out, len);
}

static void luwu_explain(const layout_explain_in *x, char *out, size_t len)
{
    char where[512];
    layout_row_over_all(x, "sharded", where, sizeof where);
    layout_row_say(x, "", where, out, len);
}

/* ---- memory (layout_row.h's mem_states, after memory.c put every state on the GPU) ---------- */

/* zero3-offload and zero2-offload (ZeRO-Offload §3-4): the host keeps, for each of its G GPUs'
 * shards (psi / N parameters each), the fp32 master weights (the parameters themselves in fp32 training), Adam
 * momentum and variance and an fp32 gradient: 4 x 4 = 16 B/param; no gradients or optimizer
 * states on the GPU, and no parameters when they are offloaded too. */
static void offload_memory(const wl *w, const spec_training *t, const spec_layout *l, int n_ranks,
                           const spec_cluster *c, mem_breakdown *o)
{
    double bp, bg, bo;
    mem_state_bytes(t->precision, &bp, &bg, &bo);
    if (l->off_param != OFF_GPU)
        o->params = 0;
    o->grads = o->optim = 0;
    /* per rank, then times the node's G ranks. ZeRO-Infinity (SC'21 §3, §5; DeepSpeed
     * offload_optimizer / offload_param): optimizer on the host: fp32 master, m, v and the
     * fp32 gradient, 16 B/param, in host memory (opt=cpu); on NVMe (opt=nvme) the 16 B live
     * on the drives and the host keeps the fp32 gradients it accumulates (4 B) plus pinned
     * swap buffers for the sub-groups in flight (read-ahead and write-behind: 2 x 16 B x one
     * sub-group [assumption: DeepSpeed's buffers per swapped tensor]). Parameters on the
     * host: their 16-bit shard (2 B); on NVMe: the shard on the drives and DeepSpeed's
     * pinned fetch buffers (offload_param buffer_count 5 x buffer_size 1e8 elements). */
    const double shard = w->params / n_ranks, G = c->gpus_per_node;
    if (t->framework == FW_FSDP) {
        /* FSDP1 CPUOffload (lo_build_fsdp_offload's reading): the rank's shard of every state
         * lives in host memory, in the bytes mem_plan would have put on the GPU (parameters,
         * their pinned gradient shard _cpu_grad, and the optimizer's states beside the
         * parameters it updates there): bp + bg + bo per parameter; the GPU keeps the gathered
         * units only (memory.c's FSDP bound). */
        o->params = 0;
        o->host = (bp + bg + mem_optim_bytes(t)) * shard * G;
        return;
    }
    double sub = shard < 1e9 ? shard : 1e9;
    double host = l->off_opt == OFF_NVME ? 4.0 * shard + 2 * 16.0 * sub : 16.0 * shard;
    double nvme = l->off_opt == OFF_NVME ? 16.0 * shard : 0;
    if (l->off_param == OFF_CPU)
        host += bp * shard;
    if (l->off_param == OFF_NVME) {
        host += 5 * 1e8 * bp;
        nvme += bp * shard;
    }
    o->host = host * G;
    o->nvme = nvme * G;
}

/* luwu: the optimizer node keeps every parameter, its gradient and the optimizer states: the
 * ZeRO paper's 2 + 2 + 12 = 16 B/param (mem_state_bytes); none of them on the GPUs. */
static void luwu_memory(const wl *w, const spec_training *t, const spec_layout *l, int n_ranks,
                        const spec_cluster *c, mem_breakdown *o)
{
    (void)l, (void)n_ranks, (void)c;
    double bp, bg, bo;
    mem_state_bytes(t->precision, &bp, &bg, &bo);
    o->params = o->grads = o->optim = 0;
    o->innet = (bp + bg + bo) * w->params;
}


/* FSDP1's CPUOffload has one setting, offload_params=True: parameters, gradients and the step on
 * the host together (lo_build_fsdp_offload). Its other tiers are DeepSpeed's. */
static int offload_fw_check(const spec_layout *l, spec_framework f, sc_err *err)
{
    if (f != FW_FSDP || (l->off_param == OFF_CPU && l->off_opt != OFF_NVME))
        return 0;
    return sc_err_set(err, SC_EINPUT, "--framework", "",
                      "fsdp runs zero3-offload as CPUOffload(offload_params=True): parameters, gradients and the "
                      "optimizer on the host; expected zero3-offload:param=cpu, got param=%s, opt=%s",
                      l->off_param == OFF_GPU ? "gpu" : l->off_param == OFF_CPU ? "cpu" : "nvme",
                      l->off_opt == OFF_NVME ? "nvme" : "cpu");
}

/* DeepSpeed runs zero3-offload (offload_optimizer / offload_param), FSDP1 its CPUOffload
 * (param=cpu); LuWu only the ideal schedule. */
const layout_kind_row layout_row_zero3_offload = {.check = offload_check, .build = lo_build_offload,
                                                  .candidates = offload_cands, .explain = offload_explain,
                                                  .frameworks = LR_FW(FW_DEEPSPEED) | LR_FW(FW_FSDP),
                                                  .fw_check = offload_fw_check, .mem_states = offload_memory,
                                                  .mem_gathered = dsc_gathered, /* the coordinator's bound under DeepSpeed */
                                                  .states_at = SPEC_AT_HOST};
/* DeepSpeed runs zero2-offload (stage 2 with offload_optimizer; ZeRO-2's eras, framework.c's
 * ds_era); its memory as zero3-offload's with the parameters on the GPU: ZeRO-2's whole 16-bit
 * parameters and gradient buckets there (the kinds table), the fp32 master, Adam's m and v and
 * the fp32 gradients of the rank's partition on the host (stage2.py v0.3.0 L164: the fp32
 * partition on device 'cpu'; L334-341 and L419-427 the pinned gradient buffers). */
const layout_kind_row layout_row_zero2_offload = {.build = lo_build_zero2_offload, .candidates = z2off_cands,
                                                  .explain = z2off_explain, .frameworks = LR_FW(FW_DEEPSPEED),
                                                  .mem_states = offload_memory, .ds_era = LR_DS_OWNER_REDUCE,
                                                  .states_at = SPEC_AT_HOST};
const layout_kind_row layout_row_luwu = {.check = luwu_check, .build = lo_build_offload, .candidates = luwu_cands,
                                         .explain = luwu_explain, .mem_states = luwu_memory, .states_at = SPEC_AT_INNET};
