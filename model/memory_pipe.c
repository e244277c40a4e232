/* memory_pipe.c — memory per GPU of megatron:t=T,p=P[,vp=V] and of fsdp2:dp=D,t=T,p=P
 * (memory_pipe.h; FSDP2's gradients in reduce_dtype, below): each stage's model
 * states (its layers' parameters / t; Adam states also / dp under the distributed optimizer,
 * Megatron-LM's ZeRO-1), and its activations with the micro-batches in flight that the schedule
 * keeps (1F1B: min(p - s, m) on stage s, so p on the first; interleaved: (p - s - 1) x 2 +
 * (v - 1) x p + 1 chunks on stage s; GPipe: all m), found by walking the stage's op order:
 * a forward stores its chunk's activations, the backward frees them. Per-block activations
 * (workload_megatron.c) follow Korthikanti et al. 2022 Table 2, sequence parallel or not.
 * The plan reports the stage that needs the most. Not here: time. Calls nothing of memory.h. */
#include "memory_pipe.h"

#include <stdlib.h>
#include <string.h>

#include "cp.h"
#include "layout.h"
#include "layout_kind.h"

/* Activations stored by one forward of virtual stage k (one micro-batch). */
static double chunk_act(const lo_pipe *pp, const wl *lw, int ckpt, int k, double loss_kept)
{
    double a = 0;
    for (int i = 0; i < lw->n_layers; i++) {
        const wl_layer *L = &lw->layer[i];
        if (L->kind == WL_BLOCK) /* what each block keeps under the policy, as memory.c
                                    (memory_states.h: selective keeps all but attention's core) */
            a += pp->blocks[k] * mem_block_kept(L, ckpt);
        else if (L->kind == WL_HEAD && k == pp->n_vstages - 1)
            a += L->act_bytes + loss_kept; /* the loss's kept bytes (memory_states.h) */
    }
    return a;
}

/* The most activation bytes stage s holds at once over its schedule, or < 0 out of memory, with
 * the transients of each backward: a backward of the last virtual stage opens with the loss's
 * backward (its peak, kept included, in place of its kept bytes), then the blocks' recompute
 * with the ring after the loss has freed them (memory.c: the larger of the two); any other
 * backward adds the recompute with the ring (rec) to what the stage holds. Taken at every
 * backward, not at the walk's peak alone: interleaved, the walk may peak before a backward of
 * another chunk (uneven splits, split=embed+loss), whose recompute comes on top of it while no
 * loss is held (the loss's kept bytes are not freed there). The most before a backward is the
 * walk's peak (only forwards add), so where every backward is the last chunk's (1F1B, GPipe)
 * this is the walk's peak - kept + max(loss peak, rec), and on the other stages its peak + rec,
 * the same bits.
 * 1F1B and interleaved: after the warm-up each stage alternates a forward and a backward whose
 * chunks repeat with every group of q micro-batches (q = p interleaved, else 1), adding and
 * freeing the same bytes, and the cool-down only frees; so the peak is reached within the
 * warm-up and the first group of the steady phase, and the walk stops at the smallest m' >= 4p
 * congruent to m mod q (the same op prefix, so the same sums in the same order: issue 32,
 * tests/test_pipe.c test_stage_peak_cut checks it equal to the whole walk). GPipe: all m. */
static double stage_peak(const lo_pipe *full, const wl *lw, int ckpt, int s, const mem_loss *loss, double rec)
{
    const double last_bwd = loss->peak > rec ? loss->peak : rec; /* the loss's backward, then the recompute */
    lo_pipe cut = *full;
    const lo_pipe *pp = full;
    const int q = full->v > 1 ? full->p : 1, m1 = 4 * full->p + ((full->m - 4 * full->p) % q + q) % q;
    if (full->sched != PIPE_GPIPE && m1 < full->m) {
        cut.m = m1;
        pp = &cut;
    }
    int n = 2 * pp->m * pp->v;
    lo_pipe_op *ops = malloc(sizeof *ops * (size_t)n);
    if (!ops)
        return -1;
    n = layout_pipe_order(pp, s, ops);
    double cur = 0, peak = 0;
    for (int i = 0; i < n; i++) {
        const int k = layout_pipe_vstage(pp, s, ops[i].chunk);
        double a = chunk_act(pp, lw, ckpt, k, loss->kept);
        if (ops[i].bwd) {
            double at = k == pp->n_vstages - 1 ? cur - loss->kept + last_bwd : cur + rec;
            if (at > peak)
                peak = at;
        }
        cur += ops[i].bwd ? -a : a;
    }
    free(ops);
    return peak;
}

void mem_plan_megatron(const wl *w, const spec_training *t, const spec_layout *l, int n_ranks,
                       const spec_cluster *c, mem_breakdown *o)
{
    memset(o, 0, sizeof *o);
    double bp, bg, bo;
    mem_state_bytes(t->precision, &bp, &bg, &bo);
    bo = mem_optim_bytes(t); /* the optimizer state's bytes per parameter (its dtype: memory.c) */
    /* FSDP2 under pipeline stages (fsdp2:dp=D,t=T,p=P, layout_pipe.c): the parameters stay
     * unsharded all step (reshard_after_forward=False) and each micro-batch's gradients accumulate
     * unsharded, upcast to reduce_dtype when it differs from the parameters' (FSDPParam.
     * to_accumulated_grad_if_needed, pytorch/pytorch@010ae4a89516fa3be548ab16dff711414ec12d0b
     * torch/distributed/fsdp/_fully_shard/_fsdp_param.py): reduce_dtype fp32, 4 B a parameter */
    if (l->kind == LAYOUT_ZERO3) {
        double br = fw_reduce_elem_bytes(t, w);
        bg = br > bg ? br : bg;
    }
    lo_pipe pp;
    memset(&pp, 0, sizeof pp);
    pp.p = l->pp > 0 ? l->pp : 1;
    pp.v = l->vp > 1 ? l->vp : 1;
    pp.m = t->grad_accum;
    pp.sched = l->sched;
    pp.n_vstages = pp.p * pp.v;
    /* the distributed optimizer's shard group: the replicas x cp (Megatron-Core's data-parallel
     * group with context parallelism, model/cp.h) */
    int dp = n_ranks / spec_layout_replicas(l) * (l->cp > 1 ? l->cp : 1);
    layout_pipe_split_layout(l, w->model.layers, pp.blocks);
    wl lwb;
    const wl *lw = layout_kind_localize(w, l, n_ranks, &lwb); /* the row's: the engines' layers */
    const wl_layer *blk = NULL;
    for (int i = 0; i < lw->n_layers; i++)
        if (lw->layer[i].kind == WL_BLOCK)
            blk = &lw->layer[i];
    /* context parallelism: the ring's buffers of the attention in flight, once (model/cp.h) */
    const double ring = cp_ring_mem_bytes(lw, l);
    mem_loss loss; /* the loss: kept per micro-batch in flight, its peak once on the last stage */
    mem_loss_bytes(lw, t, l, &loss);
    double best = -1;
    for (int s = 0; s < pp.p; s++) {
        mem_breakdown m;
        memset(&m, 0, sizeof m);
        double P = 0; /* parameters this rank holds */
        for (int cc = 0; cc < pp.v; cc++) {
            int k = cc * pp.p + s;
            for (int i = 0; i < lw->n_layers; i++) {
                const wl_layer *L = &lw->layer[i];
                if (L->kind == WL_BLOCK)
                    P += L->params * pp.blocks[k];
                else if ((L->kind == WL_EMBED && k == 0) || (L->kind == WL_HEAD && k == pp.n_vstages - 1))
                    P += L->params;
            }
            if (k == pp.n_vstages - 1) /* a tied head's word-embedding copy (layout_pipe_tied_params) */
                P += layout_pipe_tied_params(w, l);
        }
        m.params = bp * P;
        m.grads = bg * P / (l->zero2 ? dp : 1); /* zero2=1: each rank keeps its gradient shard (layout_tensor.c) */
        m.optim = bo * P / (l->zero1 ? dp : 1);
        /* with checkpointing, one block's recomputed bytes during its backward (the whole stash,
         * or under selective its attention core: memory_states.h) */
        double rec = (blk ? mem_block_recompute(blk, t->act_ckpt) : 0) + ring;
        /* the walk with each backward's transients: the loss's peak or the recompute on the last
         * virtual stage, the recompute elsewhere (stage_peak) */
        double peak = stage_peak(&pp, lw, t->act_ckpt, s, &loss, rec);
        m.activations = peak < 0 ? rec : peak;
        if (s == pp.p - 1) { /* the last stage: the outputs pipelining holds to the step's end */
            m.activations += loss.held;
            if (2 * loss.held > m.activations) /* the step's end: the outputs and their merge */
                m.activations = 2 * loss.held;
        }
        m.buckets = 2 * t->bucket_bytes;
        m.reserve = t->reserve_bytes;
        m.total = m.params + m.grads + m.optim + m.activations + m.buckets + m.reserve;
        if (m.total > best) {
            best = m.total;
            *o = m;
        }
    }
    o->hbm = c->gpu.hbm_bytes;
    o->fits = o->total <= o->hbm;
    o->short_by = o->fits ? 0 : o->total - o->hbm;
}
