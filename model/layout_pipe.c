/* layout_pipe.c — Megatron-LM 3D with pipeline stages (megatron:t=T,p=P[,vp=V]) and torchtitan's
 * FSDP2 with them (fsdp2:dp=D[,cp=C],t=T,p=P[,schedule=S], below): the split of
 * the layers into (virtual) stages, the schedules (GPipe, 1F1B, interleaved 1F1B) as per-stage op
 * orders, and the op graph of one micro-batch through one virtual stage. Both engines run the
 * same schedule over the same per-stage graphs (model/analytic_pipe.c as a max-plus recurrence,
 * sim/pipe.c with the point-to-point sends and the data-parallel boundary as flows).
 * Sources: Narayanan et al. SC'21 §2.2 (1F1B, interleaved schedule, bubble), Megatron-LM
 * core/pipeline_parallel/schedules.py (warm-up counts, micro-batch groups of p), Korthikanti et
 * al. 2022 (sequence-parallel sends: the hidden states between stages are [s / t, b, h]).
 * Not here: time (engines), memory (memory_pipe.c). */
#include <stdlib.h>
#include <string.h>

#include "cp.h"
#include "layout_ops.h"
#include "layout_pipe.h"
#include "memory_pipe.h"
#include "layout_row.h"
#include "layout_tensor.h"

static int megatron_replicas(const spec_layout *l);

/* ---- FSDP2 with pipeline stages (torchtitan, fsdp2:dp=D,t=T,p=P[,schedule=S]) ---------------
 * torchtitan's pipeline_llama_manual_split (pytorch/torchtitan@9dec370ad26b5f8e9a7333a0e36165018262644b
 * torchtitan/parallelisms/pipeline_llama.py L67-116) cuts the model at generate_split_points
 * (pipelining_utils.py L18-57: layers / stages each, one more to the middle stages while a
 * remainder lasts: layout_pipe_split's split), the embedding on the first stage and the norm and
 * output on the last (L75-92), stages per rank 1, or 2 for the looped (interleaved) schedules
 * (L22-27), looped over the ranks (stage_ids_this_rank style "loop": stage pp_rank + s x pp,
 * L102-111: virtual stage c p + s, as Megatron numbers them); micro-batches
 * pipeline_parallel_microbatches or the pp degree (pipelining_utils.py L79-81; here grad_accum,
 * micro_batch being one micro-batch). Schedule1F1B / ScheduleInterleaved1F1B / ScheduleGPipe of
 * torch.distributed.pipelining run the op orders of layout_pipe_order: 1F1B warms up with
 * min(m, p - s) forwards, then backward and forward alternately (Schedule1F1B._step_microbatches,
 * pytorch/pytorch@00722e648b740f91d0e71494baa17891749fd291 torch/distributed/pipelining/
 * schedules.py), the op sequence of Megatron's p - s - 1 warm-up + 1F1B; the interleaved warm-up
 * is (v - 1) x (micro-batches per round, p at m = p) + 2 (p - 1 - s), rounds of p micro-batches
 * chunk by chunk (ScheduleInterleaved1F1B._calculate_single_rank_operations, same file). Read at
 * that later commit: the cases' torch 1963fc83 (Dec 2024) is not stored to read. apply_fsdp
 * with pp: reshard_after_forward=False for every block and the root (parallelize_llama.py
 * L326-339 at 9dec370: "avoid per-microbatch all-gathers"); the stage turns FSDP's gradient sync
 * and resharding off for every micro-batch's backward (_PipelineStageBase.
 * backward_maybe_with_nosync, pytorch/pytorch@0138610331c90b8053a0bfc6df0175b200a1cad2
 * torch/distributed/pipelining/stage.py) and calls FSDP's post-backward (each unit's
 * reduce-scatter, "Manually call post backward for FSDP": _post_backward, same file) after the
 * stage's backwards. The engines start each virtual stage's reduce once its own last backward
 * has ended (megatron's rule); where a torch release calls it after all of a rank's chunks, the
 * interleaved schedule's first chunk's reduce is exposed instead (one chunk's reduce-scatter,
 * ~1 % of the 405B cases' step). So per step and virtual stage: its parameters all-gathered once over dp before its
 * first forward, held gathered through every micro-batch, its gradients accumulated unsharded
 * and reduce-scattered over dp (reduce_dtype) after its last backward,
 * Adam on the 1 / dp shard: the engines' distributed-optimizer boundary (zero1 = 1,
 * analytic_pipe.c, sim/pipe.c; the all-gather hidden by the stage's first op:
 * fw_param_gather_overlap), each of its collectives one call per FSDP unit (fsdp2_chunk_units),
 * not the 25 MB buckets fw_dp_bucket_bytes gives other frameworks. Per micro-batch a stage runs its layers with torchtitan's TP
 * collectives (lo_fsdp2_tp_item: sequence parallel, async TP, float8 all-gathers) and sends
 * [micro_batch, seq / t, hidden] (the blocks' Shard(1) outputs) with batched isend / irecv
 * (_batch_p2p) whose works the receiving op's stream waits on; the sender's compute runs on (not
 * blocking: fw_mg_p2p_blocking is Megatron's host synchronize). Not modelled: Schedule1F1B's wait
 * on the previous forward's send before the next send, and its fusing of the last warm-up send
 * with the first backward's receive (schedules.py above): a stage's stream then also waits for
 * its own send, which costs nothing while a send (134 MB at 50 GB/s: ~3 ms for the 405B cases)
 * is shorter than the op it follows (0.5-2 s there); also not modelled: FSDP2's per-unit copy-in
 * / copy-out and hooks (once per step), the forward's first all-gathers issued one unit ahead
 * rather than hidden whole by the first op. */
static void fsdp2_pipe_item(const lo_graph *g, const wl *lw, const spec_training *t, int last, lo_item *it)
{
    lo_fsdp2_tp_item(g, lw, t, it);
    cp_item(g, lw, it, 1); /* cp > 1: PyTorch's K/V all-gather rotation beside the first step (cp.h) */
    const wl_layer *L = &lw->layer[it->layer];
    if (it->pass == LO_BWD && last && L->params > 0) { /* the unit's reduce-scatter (volumes, describe) */
        lo_coll c = lo_coll_make(COLL_REDUCESCATTER, GRP_AX3, L->params * g->sched.reduce_elem_bytes, 1);
        c.stream = g->sched.reduce_stream;
        it->reduce[it->n_reduce++] = c;
    }
}

/* FSDP2's units of virtual stage k (0 for megatron: its boundary runs in buckets). torchtitan's
 * apply_fsdp (pytorch/torchtitan@9dec370ad26b5f8e9a7333a0e36165018262644b
 * torchtitan/parallelisms/parallelize_llama.py L325-339) calls fully_shard on every transformer
 * block and then on the model chunk (train.py L158-163: each model part, i.e. each virtual stage,
 * parallelized on its own); the chunk's root unit holds what is left, the embedding on the first
 * chunk and the norm and output on the last (pipeline_llama.py L75-92 set them None elsewhere),
 * and a root with no parameters gets no FSDPParamGroup, so no collectives ("if params:" in
 * fully_shard, pytorch/pytorch@012c62d62004bbd4896475c11315199d43b037ef
 * torch/distributed/_composable/fsdp/fully_shard.py). Each group is all-gathered in one
 * all-gather (its copy-in buffer) and reduce-scattered in one reduce-scatter (foreach_reduce,
 * _fsdp_collectives.py), so the boundary issues one collective per unit, not 25 MB buckets; the
 * engines price them as equal parts of the chunk's bytes (the root unit: 263 M of a 405B block's
 * 403 M parameters at t = 8, the same NCCL regime). */
static int fsdp2_chunk_units(const spec_layout *l, const lo_pipe *pp, int k)
{
    if (l->kind == LAYOUT_MEGATRON)
        return 0;
    return pp->blocks[k] + (k == 0 || k == pp->n_vstages - 1);
}

/* A pipelined kind's per-micro-batch items and its localized layers: megatron's, or FSDP2's
 * (zero3 with p > 1: torchtitan's TP plan over the row's localize, layout_dp.c). */
static lo_item_fn pipe_item_fn(const spec_layout *l) { return l->kind == LAYOUT_MEGATRON ? lo_tp_item : fsdp2_pipe_item; }

static const wl *pipe_localize(const wl *w, const spec_layout *l, int n_ranks, wl *out)
{
    return l->kind == LAYOUT_MEGATRON ? wl_localize_megatron(w, l, out) : layout_row_zero3.localize(w, l, n_ranks, out);
}

int layout_pipe_calls(double bytes, double bucket, int units)
{
    return units > 0 ? units : lo_buckets(bytes, bucket);
}

void layout_pipe_split(int layers, int p, int v, int *blocks)
{
    int V = p * v, base = layers / V, extra = layers % V;
    for (int k = 0; k < V; k++)
        blocks[k] = base;
    for (int k = 1; k < V && extra > 0; k++, extra--)
        blocks[k]++;
    if (extra > 0) /* only when V == 1 */
        blocks[0] += extra;
}

/* Megatron-Core's uneven splits (NVIDIA/Megatron-LM@d98e8a64ddf34856e74b24714e3bedb2f5a39553
 * megatron/core/transformer/transformer_block.py get_num_layers_to_build, L76-203): with
 * first / last (num_layers_in_first / last_pipeline_stage) the first / last stage holds that many
 * layers and the other stages (layers - first - last) / (p - given) each (L103-146), every
 * stage's layers in vp equal chunks (L161-183); with split=embed / loss the embedding / the
 * loss count as one layer each: (layers + e + l) / (p vp) per virtual stage (L147-159, L161-183),
 * one fewer on the first virtual stage of the first stage / the last of the last (L188-201).
 * Layouts megatron_check_split accepts; none given: layout_pipe_split. */
void layout_pipe_split_layout(const spec_layout *l, int layers, int *blocks)
{
    int p = l->pp > 0 ? l->pp : 1, v = l->vp > 1 ? l->vp : 1, V = p * v;
    if (l->first > 0 || l->last > 0) {
        int given = (l->first > 0) + (l->last > 0);
        int per = p > given ? (layers - l->first - l->last) / (p - given) : 0;
        for (int s = 0; s < p; s++) {
            int n = s == 0 && l->first > 0 ? l->first : s == p - 1 && l->last > 0 ? l->last : per;
            for (int c = 0; c < v; c++)
                blocks[c * p + s] = n / v;
        }
    } else if (l->split_embed || l->split_loss) {
        int per = (layers + l->split_embed + l->split_loss) / V;
        for (int k = 0; k < V; k++)
            blocks[k] = per;
        blocks[0] -= l->split_embed;
        blocks[V - 1] -= l->split_loss;
    } else {
        layout_pipe_split(layers, p, v, blocks);
    }
}

/* 1 where l asks for one of Megatron-Core's uneven splits (split=, first=, last=) */
static int pipe_uneven(const spec_layout *l)
{
    return l->split_embed || l->split_loss || l->first > 0 || l->last > 0;
}

int layout_pipe_vstage(const lo_pipe *pp, int s, int c) { return c * pp->p + s; }

double layout_pipe_bubble(int p, int v, int m)
{
    if (v < 1)
        v = 1;
    return (double)(p - 1) / ((double)v * m + p - 1);
}

/* The forward (bwd = 0) or backward order of (micro-batch, chunk) pairs of one stage. */
static void chunk_order(const lo_pipe *pp, int bwd, lo_pipe_op *out)
{
    int n = 0, p = pp->p, v = pp->v, m = pp->m;
    if (v == 1) {
        for (int i = 0; i < m; i++)
            out[n++] = (lo_pipe_op){bwd, i, 0};
        return;
    }
    for (int g0 = 0; g0 < m; g0 += p)
        for (int cc = 0; cc < v; cc++)
            for (int i = g0; i < g0 + p && i < m; i++)
                out[n++] = (lo_pipe_op){bwd, i, bwd ? v - 1 - cc : cc};
}

int layout_pipe_warmup(const lo_pipe *pp, int s)
{
    int M = pp->m * pp->v;
    if (pp->sched == PIPE_GPIPE)
        return M;
    int warm = pp->v == 1 ? pp->p - s - 1 : (pp->p - s - 1) * 2 + (pp->v - 1) * pp->p;
    return warm < M ? warm : M;
}

int layout_pipe_order(const lo_pipe *pp, int s, lo_pipe_op *out)
{
    int M = pp->m * pp->v, n = 0;
    lo_pipe_op *f = malloc(sizeof *f * (size_t)M * 2);
    if (!f)
        return -1;
    lo_pipe_op *b = f + M;
    chunk_order(pp, 0, f);
    chunk_order(pp, 1, b);
    int warm = layout_pipe_warmup(pp, s);
    for (int i = 0; i < warm; i++)
        out[n++] = f[i];
    for (int j = 0; j < M - warm; j++) {
        out[n++] = f[warm + j];
        out[n++] = b[j];
    }
    for (int j = M - warm; j < M; j++)
        out[n++] = b[j];
    free(f);
    return n;
}

/* The layers of virtual stage k from the replica's (localized) layers: embedding on the first,
 * head on the last, blocks[k] blocks. */
static void stage_layers(const lo_pipe *pp, const wl *lw, int k, int embed_only_first, wl *out)
{
    *out = *lw;
    out->n_layers = 0;
    for (int i = 0; i < lw->n_layers; i++) {
        const wl_layer *L = &lw->layer[i];
        if (L->kind == WL_EMBED && k != 0 && embed_only_first)
            continue;
        if (L->kind == WL_HEAD && k != pp->n_vstages - 1)
            continue;
        if (L->kind == WL_BLOCK && pp->blocks[k] == 0)
            continue;
        out->layer[out->n_layers] = *L;
        if (L->kind == WL_BLOCK)
            out->layer[out->n_layers].count = pp->blocks[k];
        out->n_layers++;
    }
}

void layout_pipe_stage(const lo_graph *g, const wl *w, const spec_training *t, int k, lo_graph *out, wl *lw_out)
{
    wl buf;
    const wl *lw = pipe_localize(w, &g->layout, g->n_ranks, &buf);
    stage_layers(&g->pipe, lw, k, 1, lw_out);
    *out = *g;
    out->pipelined = 0;
    out->local_layers = 1;
    out->prefetch = 0;
    out->grad_accum = 1;
    out->n_boundary = 0;
    memset(out->lw, 0, sizeof out->lw);
    memcpy(out->lw, lw_out->layer, sizeof(wl_layer) * (size_t)lw_out->n_layers);
    lo_tp_ub_mark(&g->layout, t, out->lw, lw_out->n_layers); /* TE's chunked GEMMs (layout_tensor.h) */
    lo_build_micro(out, lw_out, t, 0, &out->micro, pipe_item_fn(&g->layout));
    out->last = out->micro;
}

/* Megatron keeps a copy of the word embeddings on the last stage when the head is tied: Megatron-LM
 * 2021 NVIDIA/Megatron-LM@50a4b5fa megatron/model/module.py initialize_word_embeddings L89-98 (a
 * VocabParallelEmbedding of padded_vocab_size x hidden_size, / t, on the last stage when p > 1),
 * Megatron-Core NVIDIA/Megatron-LM@d98e8a64 megatron/core/models/common/language_module/
 * language_module.py setup_embeddings_and_output_layer L208-314 (the output layer's own weight
 * there, zeroed and marked shared_embedding, L278-290). An ordinary parameter of the last model
 * chunk: in its data-parallel gradient buffer and its optimizer (the distributed optimizer shards
 * it with the rest); its gradient is all-reduced with the first stage's over the embedding group
 * once a step (an_pipe_time_comm). The vocabulary as the model gives it (padded or not, as the
 * first stage's table: one size for both). 0 outside megatron: a tied head on any other
 * pipeline (fsdp2:...,p=P) is refused (layout_kind.c tied_pipe_check). */
double layout_pipe_tied_params(const wl *w, const spec_layout *l)
{
    if (l->kind != LAYOUT_MEGATRON || l->pp <= 1 || !w->model.tied_embeddings)
        return 0;
    return (double)w->model.vocab * w->model.hidden / (l->t > 1 ? l->t : 1);
}

void lo_build_pipe(lo_graph *g, const wl *w, const spec_training *t, const spec_cluster *c)
{
    const spec_layout *l = &g->layout;
    const int N = g->n_ranks;
    wl buf;
    const wl *lw = pipe_localize(w, l, N, &buf);
    g->local_layers = 1;
    memcpy(g->lw, lw->layer, sizeof g->lw);
    lo_tp_ub_mark(l, t, g->lw, lw->n_layers); /* TE's chunked GEMMs (layout_tensor.h) */
    int axes_rc = spec_layout_axes(l, N, g->ax_size, g->ax_stride);
    (void)axes_rc; /* 0: layout_build requires spec_layout_check, which checked these axes */
    g->prefetch = 0;
    lo_make_groups(g, c);

    lo_pipe *pp = &g->pipe;
    g->pipelined = 1;
    pp->p = l->pp;
    pp->v = l->vp > 1 ? l->vp : 1;
    pp->m = t->grad_accum;
    pp->sched = l->sched;
    pp->n_vstages = pp->p * pp->v;
    pp->dp = N / spec_layout_replicas(l) * (l->cp > 1 ? l->cp : 1); /* dp x cp: the gradient group (cp.h) */
    layout_pipe_split_layout(l, w->model.layers, pp->blocks);
    const double e = g->elem_bytes;
    pp->p2p_bytes = (double)w->model.seq_len * w->micro_batch * w->model.hidden * e / (l->sp ? l->t : 1);
    if (l->cp > 1) /* context parallelism: each rank sends its s / cp tokens (cp.h) */
        pp->p2p_bytes /= l->cp;
    for (int s = 0; s < pp->p; s++)
        for (int cc = 0; cc < pp->v; cc++) {
            int k = layout_pipe_vstage(pp, s, cc);
            for (int i = 0; i < lw->n_layers; i++) {
                const wl_layer *L = &lw->layer[i];
                int n = 0; /* copies of L on virtual stage k (stage_layers) */
                if (L->kind == WL_BLOCK)
                    n = pp->blocks[k];
                else if ((L->kind == WL_EMBED && k == 0) || (L->kind == WL_HEAD && k == pp->n_vstages - 1))
                    n = 1;
                pp->vstage_params[k] += L->params * n;
                pp->stage_tensors[s] += (double)fw_param_tensors(lw, L) * n;
            }
            if (k == pp->n_vstages - 1) { /* a tied head's word-embedding copy: one tensor */
                pp->tied_params = layout_pipe_tied_params(w, l);
                pp->vstage_params[k] += pp->tied_params;
                pp->stage_tensors[s] += pp->tied_params > 0;
            }
            pp->stage_params[s] += pp->vstage_params[k];
            pp->vstage_units[k] = fsdp2_chunk_units(l, pp, k);
            pp->stage_units[s] += pp->vstage_units[k];
        }

    /* micro / last: stage 0's layers (embedding + its blocks) of one micro-batch, with the
     * data-parallel reduce on the last; boundary: its optimizer and all-gather. */
    wl s0 = *lw;
    s0.n_layers = 0;
    for (int i = 0; i < lw->n_layers; i++)
        if (lw->layer[i].kind != WL_HEAD) {
            s0.layer[s0.n_layers] = lw->layer[i];
            if (lw->layer[i].kind == WL_BLOCK) {
                int b = 0;
                for (int cc = 0; cc < pp->v; cc++)
                    b += pp->blocks[layout_pipe_vstage(pp, 0, cc)];
                s0.layer[s0.n_layers].count = b > 0 ? b : 1;
            }
            s0.n_layers++;
        }
    lo_build_micro(g, &s0, t, 0, &g->micro, pipe_item_fn(l));
    lo_build_micro(g, &s0, t, 1, &g->last, pipe_item_fn(l));
    double local = pp->stage_params[0];
    if (l->zero1) {
        g->boundary[g->n_boundary++] = (lo_bop){.is_optimizer = 1, .opt_params = local / pp->dp};
        if (pp->dp > 1)
            g->boundary[g->n_boundary++] =
                (lo_bop){.coll = lo_coll_make(COLL_ALLGATHER, GRP_AX3, local * e, layout_pipe_calls(local * e, fw_dp_bucket_bytes(t, pp->dp, l->overlap, e), pp->stage_units[0]))};
    } else {
        g->boundary[g->n_boundary++] = (lo_bop){.is_optimizer = 1, .opt_params = local};
    }
}

/* The megatron row (layout_row.h): checks, replica, batch rule and optimizer shard. */

/* Megatron-LM 3D: tensor parallelism inside a node, t x pp dividing the GPUs, the t x dp ranks
 * of one stage a divisor or a multiple of a node (stage neighbours then pair up rank by rank
 * across nodes, or inside one); cp ranks at stride t (cp_check_megatron). */
static int megatron_check(const spec_layout *l, const spec_cluster *c, int n, int g, const char *name, sc_err *err)
{
    (void)c;
    int pp = l->pp > 0 ? l->pp : 1;
    if (g % l->t)
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "%s: tensor parallelism stays inside a node: expected t dividing %d GPUs per node, got %d",
                          name, g, l->t);
    if (n % (l->t * pp))
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: expected t*p = %d to divide the %d GPUs", name, l->t * pp, n);
    int stage = n / pp; /* ranks of one pipeline stage: t x dp */
    if (!(g % stage == 0 || stage % g == 0))
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "%s: a pipeline stage holds %d GPUs; expected a divisor or multiple of the %d GPUs per node",
                          name, stage, g);
    int rc = cp_check_megatron(l, n, g, name, err);
    if (rc)
        return rc;
    if (l->vp > 1 && l->sched == PIPE_GPIPE)
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "%s: virtual stages (vp) need the interleaved 1F1B schedule; drop sched=gpipe or vp", name);
    if (l->vp > 1 && pp < 2)
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: virtual stages (vp=%d) need p >= 2", name, l->vp);
    if (pipe_uneven(l) && pp < 2)
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: an uneven pipeline split (split, first, last) needs p >= 2",
                          name);
    /* Megatron-Core transformer_config.py (d98e8a64, L2229-2239) refuses both at once */
    if ((l->split_embed || l->split_loss) && (l->first > 0 || l->last > 0))
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: expected split=... or first=/last=, not both", name);
    return 0;
}

/* first / last: Megatron-Core transformer_config.py __post_init__'s uneven checks (d98e8a64,
 * L2294-2364): each given stage's layers in vp chunks, the rest over the middle stages evenly. */
static int megatron_check_first_last(const spec_layout *l, const spec_model *m, const char *name, sc_err *err)
{
    int p = l->pp, v = l->vp > 1 ? l->vp : 1, given = (l->first > 0) + (l->last > 0);
    for (int i = 0; i < 2; i++) {
        int n = i ? l->last : l->first;
        if (n > 0 && n % v)
            return sc_err_set(err, SC_EINPUT, "layout", "", "%s: expected %s=%d divisible by vp = %d", name,
                              i ? "last" : "first", n, v);
    }
    long long fl = (long long)l->first + l->last, mid = m->layers - fl;
    int stages = p - given;
    if (mid < 0 || (mid > 0) != (stages > 0))
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: first + last = %lld of the %d layers of %s leave %lld for %d middle stages",
                          name, fl, m->layers, m->name, mid, stages);
    if (stages > 0 && (mid % stages || (mid / stages) % v))
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "%s: the %lld middle layers of %s must split evenly over %d middle stages x vp = %d chunks", name,
                          mid, m->name, stages, v);
    return 0;
}

/* split=embed / loss: Megatron-Core transformer_config.py (d98e8a64, L2370-2415): the layers
 * with the embedding / loss counted divisible by p, each stage's by vp. */
static int megatron_check_split(const spec_layout *l, const spec_model *m, const char *name, sc_err *err)
{
    if (l->first > 0 || l->last > 0)
        return megatron_check_first_last(l, m, name, err);
    if (!l->split_embed && !l->split_loss)
        return 0;
    int p = l->pp, v = l->vp > 1 ? l->vp : 1, n = m->layers + l->split_embed + l->split_loss;
    if (n % p || (n / p) % v)
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "%s: the %d layers of %s with the embedding / loss counted (%d) must split evenly over p x vp = %lld",
                          name, m->layers, m->name, n, (long long)p * v);
    return 0;
}

static int megatron_check_model(const spec_layout *l, const spec_model *m, const char *name, sc_err *err)
{
    int v = (l->pp > 0 ? l->pp : 1) * (l->vp > 0 ? l->vp : 1);
    if (m->layers < v)
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: %d pipeline stages x virtual stages, but %s has %d layers",
                          name, v, m->name, m->layers);
    /* Megatron-LM: the interleaved schedule needs layers divisible by p x vp, unless split unevenly */
    if (l->vp > 1 && m->layers % v && !pipe_uneven(l))
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "%s: interleaving needs the %d layers of %s divisible by p x vp = %d (or an uneven split: "
                          "split=embed+loss, first=N, last=N)",
                          name, m->layers, m->name, v);
    int src = megatron_check_split(l, m, name, err);
    if (src)
        return src;
    if (m->ffn % l->t || m->hidden % l->t)
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: splits hidden %d and ffn %d of %s %d ways", name, m->hidden,
                          m->ffn, m->name, l->t);
    int rc = cp_check_model(l, m, name, err);
    return rc ? rc : layout_row_check_heads(m, name, l->t, err);
}

/* Megatron-LM's interleaved schedule runs micro-batches in groups of p (schedules.py) */
static int megatron_check_training(const spec_layout *l, const spec_training *t, const char *name, sc_err *err)
{
    if (l->vp <= 1 || l->pp <= 1 || t->grad_accum % l->pp == 0)
        return 0;
    return sc_err_set(err, SC_EINPUT, "layout", "",
                      "%s: the interleaved schedule needs the micro-batches per step (grad_accum %d) to be a multiple "
                      "of p = %d", name, t->grad_accum, l->pp);
}

/* a model replica: t x p (x cp) GPUs */
static int megatron_replicas(const spec_layout *l)
{
    return (l->t > 0 ? l->t : 1) * (l->pp > 0 ? l->pp : 1) * (l->cp > 1 ? l->cp : 1);
}

/* optimizer states: ZeRO-1 over every GPU (the distributed optimizer), else split t x p ways
 * (the cp ranks of a replica hold the same states: cp.h) */
static int megatron_shard(const spec_layout *l, int n_ranks)
{
    return l->zero1 ? n_ranks : (l->t > 0 ? l->t : 1) * (l->pp > 0 ? l->pp : 1);
}

/* with pipeline stages: this file's graph; p = 1: tensor parallelism alone (layout_tensor.c) */
static void megatron_build(lo_graph *g, const wl *w, const spec_training *t, const spec_cluster *c)
{
    if (g->layout.pp > 1)
        lo_build_pipe(g, w, t, c);
    else
        lo_build_tensor(g, w, t, c);
}

/* Megatron-LM 3D candidates: every tensor size t dividing a node, pipeline depth p (1: tensor +
 * sequence parallel only) and interleaving vp up to 8 that the cluster and model allow, with
 * sequence parallelism and the distributed optimizer on, as Megatron-LM's recipes run them. */
static int megatron_cands(const layout_cand_in *in, int part, spec_layout *out, int n, int max)
{
    if (part)
        return n;
    const spec_cluster *c = in->c;
    int N = in->nodes * c->gpus_per_node;
    for (int t = 1; t <= c->gpus_per_node; t++)
        for (int pp = 1; pp <= N / t && pp <= in->m->layers; pp++)
            for (int vp = 1; vp <= (pp > 1 ? 8 : 1); vp++) {
                spec_layout l = {.kind = LAYOUT_MEGATRON, .t = t, .pp = pp, .vp = vp, .cp = 1, .sp = 1, .zero1 = 1,
                                 .overlap = 1, .hier = 1, .sched = PIPE_1F1B};
                if (!spec_layout_check(&l, c, in->nodes, NULL) && !spec_layout_check_model(&l, in->m, NULL))
                    n = layout_row_push(out, n, max, l);
            }
    return n;
}

/* plan's reason for a Megatron 3D winner: where its stages and groups sit, the schedule's bubble,
 * the stage memory with the micro-batches in flight, and the best layout without a pipeline. */
static void megatron_explain(const layout_explain_in *x, char *out, size_t len)
{
    const spec_layout *l = x->l;
    int G = x->c->gpus_per_node, pp = l->pp > 0 ? l->pp : 1, dp = x->gpus / spec_layout_replicas(l);
    int stage = x->gpus / pp;
    size_t o = (size_t)snprintf(out, len, "tensor %d%s inside a node, ", l->t, l->sp && l->t > 1 ? " + sequence parallel" : "");
    char chunks[32] = "";
    if (l->vp > 1)
        snprintf(chunks, sizeof chunks, " interleaved x%d", l->vp);
    if (pp > 1)
        o += (size_t)snprintf(out + o, len - o,
                              "%d stages%s (neighbours over %s), %d micro-batches: bubble %.0f%% of the pipeline, ", pp,
                              chunks, stage >= G ? "the NICs" : "NVLink", x->t->grad_accum, 100 * x->bubble_frac);
    if (o < len)
        o += (size_t)snprintf(out + o, len - o, "data %d with the distributed optimizer; %.1f GiB on the fullest stage",
                              dp, x->mem_total / 1073741824.0);
    if (o < len && pp > 1) {
        char vs[256];
        x->vs(x->ctx, -1, "layout without a pipeline", vs, sizeof vs);
        snprintf(out + o, len - o, "%s", vs[0] ? vs : "; nothing without a pipeline fits");
    }
}

/* A stage's rank: t-way split GEMMs, the replica's micro-batch (workload_local.c). */
static const wl *megatron_localize(const wl *w, const spec_layout *l, int n_ranks, wl *out)
{
    (void)n_ranks;
    return wl_localize_megatron(w, l, out);
}

const layout_kind_row layout_row_megatron = {.check = megatron_check, .check_model = megatron_check_model,
                                             .check_training = megatron_check_training, .build = megatron_build,
                                             .replicas = megatron_replicas,
                                             .batch_per_replica = 1, .shard = megatron_shard,
                                             .candidates = megatron_cands, .explain = megatron_explain,
                                             .frameworks = LR_FW(FW_MEGATRON), .mem_plan = mem_plan_megatron,
                                             .overlap_opt = 1, .localize = megatron_localize};
