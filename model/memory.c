/* memory.c — per-GPU memory of a layout. Formulas in memory.h; each component is kept apart so
 * that `shardcast memory` can show where the bytes go. A kind's own parts are its row's
 * (layout_row.h: mem_plan, mem_states, mem_gathered_mult, in the family files). */
#include "memory.h"

#include <string.h>

#include "cp.h"
#include "framework.h"
#include "layout_kind.h"
#include "memory_pipe.h"

int mem_plan_by_accum(const spec_layout *l)
{
    const layout_kind_row *r = layout_kind_row_of(l->kind);
    return (r && r->mem_plan) || l->pp > 1; /* mem_plan's two branches below */
}

void mem_plan(const wl *w, const spec_training *t, const spec_layout *l, int n_ranks, const spec_cluster *c,
              mem_breakdown *o)
{
    const layout_kind_row *r = layout_kind_row_of(l->kind);
    if (r && r->mem_plan) { /* the kind's own plan (megatron: memory_pipe.c) */
        r->mem_plan(w, t, l, n_ranks, c, o);
        return;
    }
    if (l->pp > 1) { /* fsdp2 with pipeline stages: memory_pipe.c's stages (layout_pipe.c's note) */
        mem_plan_megatron(w, t, l, n_ranks, c, o);
        return;
    }
    memset(o, 0, sizeof *o);
    double bp, bg, bo;
    mem_state_bytes(t->precision, &bp, &bg, &bo);
    const double psi = w->params;
    /* the divisor of each state and how parameters are used: the kinds table's memory columns
     * (model/spec_layout.c); below, what is code: offloaded states, hpZ's copy, AxoNN's block */
    spec_layout_states st;
    spec_layout_states_of(l, n_ranks, &st);
    const double sp = st.div[0], sg = st.div[1], so = st.div[2];
    const int sharded_params = st.sharded, keep_full = st.keep_full; /* keep_full: every layer stays
                                   gathered from its forward to its backward (SHARD_GRAD_OP) */
    o->params = bp * psi / sp;
    o->grads = bg * psi / sg;
    bo = mem_optim_bytes(t);
    o->optim = bo * psi / so;
    o->host_cap = c->host_mem_bytes;
    o->innet_cap = c->innet.present ? c->innet.mem_bytes : 0;
    o->nvme_cap = c->nvme_bytes;
    if (r && r->mem_states) /* what the kind moves off the GPU or adds (layout_offload.c, layout_dp.c) */
        r->mem_states(w, t, l, n_ranks, c, o);

    wl lw; /* the layers as one rank computes them (tensor-parallel layouts: the kind's row) */
    w = layout_kind_localize(w, l, n_ranks, &lw);
    /* Activations of one micro-batch: what every block keeps under the checkpointing policy and
     * the head's input, plus the larger of two transients not live at once: the loss at its peak
     * (its forward's end or its backward's start, memory_states.h), and one block's recomputed
     * bytes during its backward with context parallelism's ring buffers (model/cp.h), which come
     * after the loss's backward has freed its tensors (autograd releases a node's saved tensors
     * once it has run; its e-byte gradient is the output layer's, consumed before any block). */
    const wl_layer *blk = NULL, *head = NULL;
    for (int i = 0; i < w->n_layers; i++) {
        if (w->layer[i].kind == WL_BLOCK)
            blk = &w->layer[i];
        if (w->layer[i].kind == WL_HEAD)
            head = &w->layer[i];
    }
    mem_loss loss;
    mem_loss_bytes(w, t, l, &loss);
    double act = head ? head->act_bytes : 0, rec = cp_ring_mem_bytes(w, l);
    if (blk) { /* every block's kept bytes, one block's recomputed during its backward */
        act += blk->count * mem_block_kept(blk, t->act_ckpt);
        rec += mem_block_recompute(blk, t->act_ckpt);
    }
    if (blk && mem_act_offloaded(t)) {
        /* activation_offload (torch checkpoint_wrapper(offload_to_cpu=True)): every block's
         * checkpointed input in pinned host memory from its forward to its backward, each of
         * the node's G ranks its own; the GPU holds one block's at a time, in its recompute */
        const double kept = blk->count * mem_block_kept(blk, t->act_ckpt);
        act -= kept;
        o->host += kept * c->gpus_per_node;
    }
    o->activations = act + (loss.peak > rec ? loss.peak : rec);

    if (sharded_params) {
        /* the gathered block of a layer: its parameters over the axes not gathered (AxoNN:
         * X Y of the X Y Z shards; ZeRO-3 / MiCS: the whole layer) */
        double gz = r && r->mem_gathered_mult ? r->mem_gathered_mult(l) : 1;
        double big = wl_max_layer_params(w) * gz;
        if (t->framework == FW_FSDP && t->fsdp_wrap_module > 0) { /* fsdp_wrap module: the largest unit */
            big = 0;
            for (int i = 0; i < w->n_layers; i++) {
                double u;
                fw_fsdp_units(t, &w->layer[i], &u);
                big = u > big ? u : big;
            }
        }
        int ahead = fw_depth(t, l, w); /* the prefetch bound (framework.h) */
        o->gathered = (1 + ahead) * big * bp + big * bg;
        /* a reduce_dtype wider than the gradients: the layer's cast copy beside them (FSDP
         * _post_backward_hook's flat_param.grad.to(reduce_dtype); FSDP2's reduce-scatter input) */
        double rb = fw_reduce_elem_bytes(t, w);
        if (rb > bg)
            o->gathered += big * rb;
        if (keep_full) /* the whole model gathered at the end of the forward, minus its own shard */
            o->gathered = bp * psi * (1 - 1 / sp) + big * bg;
        double own = r && r->mem_gathered ? r->mem_gathered(w, t, l) : -1;
        if (own >= 0) /* the framework's own bound (layout_row.h) */
            o->gathered = own;
    } else {
        o->buckets = 2 * fw_reduce_bucket(t, w); /* one reducing, one filling (DDP; ZeRO-1/2 reduce +
                                                    gather; DeepSpeed's two ipg buffers)   */
    }
    o->reserve = t->reserve_bytes;
    o->total = o->params + o->grads + o->optim + o->activations + o->gathered + o->buckets + o->reserve;
    o->hbm = c->gpu.hbm_bytes;
    o->fits = o->total <= o->hbm;
    o->short_by = o->fits ? 0 : o->total - o->hbm;
    o->host_short_by = o->host_cap > 0 && o->host > o->host_cap ? o->host - o->host_cap : 0;
    o->innet_short_by = o->innet > o->innet_cap ? o->innet - o->innet_cap : 0;
    o->nvme_short_by = o->nvme > o->nvme_cap ? o->nvme - o->nvme_cap : 0;
    if (o->host_short_by > 0 || o->innet_short_by > 0 || o->nvme_short_by > 0)
        o->fits = 0;
}

const char *mem_short_where(const mem_breakdown *m, double *short_by, double *need, double *cap)
{
    if (m->short_by > 0) {
        *short_by = m->short_by, *need = m->total, *cap = m->hbm;
        return "GPU";
    }
    if (m->host_short_by > 0) {
        *short_by = m->host_short_by, *need = m->host, *cap = m->host_cap;
        return "host";
    }
    if (m->nvme_short_by > 0) {
        *short_by = m->nvme_short_by, *need = m->nvme, *cap = m->nvme_cap;
        return "NVMe";
    }
    if (m->innet_short_by > 0) {
        *short_by = m->innet_short_by, *need = m->innet, *cap = m->innet_cap;
        return "in-network node";
    }
    *short_by = *need = *cap = 0;
    return NULL;
}

int mem_smallest_mics_p(const wl *w, const spec_training *t, int n_ranks, const spec_cluster *c, int hier)
{
    /* n_ranks is a whole number of nodes (callers pass nodes x gpus_per_node) */
    int nodes = n_ranks / c->gpus_per_node;
    if (nodes < 1 || nodes * c->gpus_per_node != n_ranks)
        return 0;
    spec_layout l;
    if (spec_layout_make("mics", &l, NULL))
        return 0;
    l.hier = hier;
    for (int p = 1; p <= n_ranks; p++) {
        l.p = p;
        if (spec_layout_check(&l, c, nodes, NULL))
            continue;
        mem_breakdown m;
        mem_plan(w, t, &l, n_ranks, c, &m);
        if (m.fits)
            return p;
    }
    return 0;
}
