/* layout_tensor.c — the op graphs of the tensor-parallel layouts (rules in layout.h; GEMM shapes
 * per rank in wl_localize_tp, wl_localize_axonn). Sources: Megatron-LM (Shoeybi et al. 2019 §3: f/g operators, two
 * all-reduces per block forward and two backward; the asynchronous input-gradient all-reduce
 * beside the weight-gradient GEMMs of the column-parallel layers, Narayanan et al. SC'21 §4.2),
 * AxoNN (Singh et al., "A 4D hybrid algorithm to scale parallel training to thousands of GPUs",
 * 2024: 3D products after Agarwal et al. 1995, data parallelism over Gdata, overlapped
 * all-gather (OAG), reduce-scatter (ORS) and all-reduce (OAR)).
 *
 * Per GEMM O = I W of an AxoNN layer with row axis R and column axis C (the other of x, y), on a
 * rank of the X x Y x Z grid: W's [k/R, n/C] block is sharded again over Z and all-gathered
 * along Z before use (forward and backward); the partial outputs [m/Z, n/C] are all-reduced
 * along R (forward, blocking); the input gradients [m/Z, k/R] along C (backward, beside the
 * weight-gradient GEMM when overlapped); the weight gradients [k/R, n/C] reduce-scattered along
 * Z; the gradient shards all-reduced along D at the accumulation boundary's micro-step. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "cp.h"
#include "layout.h"
#include "layout_ops.h"
#include "layout_row.h"
#include "layout_tensor.h"

enum { AX_X, AX_Y, AX_Z, AX_D };

static lo_coll add_bytes(lo_coll c, double bytes, int chunks)
{
    c.bytes += bytes;
    c.chunks += chunks;
    return c;
}

/* Fraction of an item's compute that can run beside its inline collectives: the
 * weight-gradient GEMMs (half the backward GEMM FLOPs) of the layers listed, over all the
 * item's FLOPs (recompute included). */
static double dw_fraction(const wl_layer *L, int recompute, int column_only)
{
    double dw = 0;
    for (int i = 0; i < L->n_gemm; i++) {
        const wl_gemm *q = &L->gemm[i];
        if (wl_role_core(q->role))
            continue;
        if (column_only && wl_role_row(q->role))
            continue;
        dw += 2.0 * q->m * q->n * q->k * q->batch;
    }
    double total = L->bwd_flops + (recompute ? L->fwd_flops : 0);
    return total > 0 ? dw / total : 0;
}

/* Put a collective where the layout's overlap switch says: in `async` (reduces: overlapped
 * with later compute) or, with overlap off, inline (the compute waits for it). */
static void place(lo_item *it, int overlap, lo_coll c)
{
    if (overlap) {
        it->reduce[it->n_reduce++] = c;
        return;
    }
    /* never full: overlap 0 is tp's key (tp_item's all-reduce before it: 1), megatron has none
     * (lo_graph.h's count) */
    assert(it->n_inline < LO_MAX_INLINE);
    it->inl[it->n_inline++] = c;
}

/* ---- Megatron-LM tensor parallelism ----------------------------------------------------- */
/* Megatron --tp-comm-overlap: Transformer Engine's userbuffers attach each sequence-parallel
 * collective of a block to one GEMM (NVIDIA/TransformerEngine@fecb10bdf13c26a2
 * transformer_engine/pytorch/module/base.py initialize_ub L96-103: the reduce-scatter
 * overlaps proj_fprop, fc2_fprop, qkv_wgrad, fc1_wgrad, the rest all-gathers; the default
 * methods below; add_ub's defaults num_sm = 16, use_ce = True, num_splits = 4 for pipeline):
 *   ring_exchange (AG + GEMM): qkv_fprop, fc1_fprop, proj_dgrad, fc2_dgrad. split_overlap_ag
 *     (TransformerEngine@00671635 transformer_engine/pytorch/csrc/comm_gemm_overlap.h, the
 *     UbufP2PCommOverlap branch without aggregate): t steps; step i runs GEMM chunk i (m / t)
 *     and, for i < t - 1, sends / receives the next chunk on the send / recv streams, which
 *     the next step's GEMM waits for. So the t - 1 transfers run beside t - 1 of the t chunks,
 *     the last chunk alone: a pair of (t chunks, 1 bare). Point-to-point over the copy engines
 *     (use_ce), hence `offload` (no SM interference);
 *   pipeline (GEMM + RS, num_splits = 4): proj_fprop, fc2_fprop; each chunk's reduce-scatter
 *     beside the next chunk's GEMM, the first chunk's GEMM alone (4 chunks, 1 bare), the last
 *     chunk's reduce-scatter after the GEMM: exposed (a tail, lo_item.inline_tail). An
 *     NCCL-like kernel on 16 SMs: the calibrated interference applies;
 *   bulk (the whole collective beside one whole GEMM, 16 SMs): qkv_wgrad / fc1_wgrad (the
 *     reduce-scatter of qkv's / fc1's data gradient beside that layer's weight-gradient GEMM: a
 *     pair of (1 chunk, 0 bare)) and qkv_dgrad / fc1_dgrad (the re-gather of the saved
 *     sequence-parallel input for the weight gradient, BULK_OVERLAP_AG beside that layer's
 *     data-gradient GEMM, TransformerEngine@fecb10bd layernorm_linear.py L413-418, L467-468,
 *     L554-555: a pair of (1 chunk, 0 bare) too; sp_item below for why it exists).
 * Megatron-Core asks for all of these by default (NVIDIA/Megatron-LM@02aa3ee4
 * megatron/core/model_parallel_config.py ModelParallelConfig: tp_comm_overlap_ag / _rs,
 * tp_comm_bulk_wgrad / _dgrad True, tp_comm_overlap_rs_dgrad False) and allows it only with
 * sequence parallelism (NVIDIA/Megatron-LM@307dcf37 megatron/training/arguments.py). Each
 * copy hides behind its own GEMM only, pair by pair (lo_pair, analytic.c pair_hidden: exposed = max(0, copy - (chunks - bare) / chunks GEMM), the
 * rule async TP uses; tpo2, issue 27 item 8: before, the block's copies were summed against
 * all its linear GEMMs, which let proj's reduce-scatter hide behind fc1's and fc2's GEMMs).
 * Not modelled: the output layer and embedding collectives (Megatron's own, not TE modules:
 * exposed as before); the local copy of a ring's input into its userbuffer. */
enum { TPO_SPLITS = WL_UB_SPLITS }; /* num_splits of the pipeline method, TE base.py above (workload.h) */

/* --tp-comm-overlap in force: asked for, and acting on this layout (lo_tp_comm_overlap_acts) */
static int tpo_on(const spec_layout *l, const spec_training *t)
{
    return lo_tp_comm_overlap_acts(l) && t->tp_comm_overlap > 0;
}

/* The MLP's column-parallel GEMM: SwiGLU's fused gate / up projections, else fc1. */
static wl_gemm_role mlp_col_role(const wl_layer *L)
{
    for (int i = 0; i < L->n_gemm; i++)
        if (L->gemm[i].role == WL_G_GATE_UP)
            return WL_G_GATE_UP;
    return WL_G_FC1;
}

/* Pair inline collective `coll` with both column-parallel GEMMs of a block (qkv, then the MLP's
 * `mlp`), or both row-parallel ones (proj, then fc2), in that order (lo_item_pair). */
static void tp_pair_cols(lo_item *it, int coll, wl_gemm_role mlp, int pass, int share, int chunks, int bare)
{
    lo_item_pair(it, coll, WL_G_QKV, pass, share, chunks, bare);
    lo_item_pair(it, coll, mlp, pass, share, chunks, bare);
}

static void tp_pair_rows(lo_item *it, int coll, int pass, int share, int chunks, int bare)
{
    lo_item_pair(it, coll, WL_G_PROJ, pass, share, chunks, bare);
    lo_item_pair(it, coll, WL_G_FC2, pass, share, chunks, bare);
}

/* The block's collectives under --tp-comm-overlap (above), each paired with its GEMM: the
 * all-gathers (ring exchange) before qkv and fc1 in the forward (fwd_pass) or recompute (rec),
 * before proj's and fc2's data gradients in the backward (bwd); the forward's reduce-scatters
 * (pipeline) after proj and fc2, 3/4 of their bytes beside the GEMMs and the last chunks as a
 * tail; the backward's (bulk) beside qkv's and fc1's weight gradients; the backward's bulk
 * re-gathers of qkv's and fc1's saved inputs beside their data gradients (a userbuffers kernel
 * on SMs, as the bulk reduce-scatters). Shares count act / 4. */
static void tpo_block(const wl_layer *L, double act, int t, int fwd_pass, int rec, int bwd, lo_item *it)
{
    lo_coll ag = lo_coll_make(COLL_ALLGATHER, GRP_AX0, 0, 0), rs = lo_coll_make(COLL_REDUCESCATTER, GRP_AX0, 0, 0);
    ag.chunks = rs.chunks = 0;
    lo_coll tail = rs, bag = ag;
    ag.offload = 1; /* ring_exchange over the copy engines */
    const int fwd = fwd_pass || rec, n = fwd + bwd, fp = rec ? LO_PAIR_REC : LO_PAIR_FWD, S = TPO_SPLITS;
    const wl_gemm_role mlp = mlp_col_role(L);
    ag = add_bytes(ag, 2 * act * n, 2 * n);
    if (fwd)
        tp_pair_cols(it, it->n_inline, mlp, fp, 1, t, 1);
    if (bwd)
        tp_pair_rows(it, it->n_inline, LO_PAIR_DGRAD, 1, t, 1);
    it->inl[it->n_inline++] = ag;
    if (bwd) {
        tp_pair_cols(it, it->n_inline, mlp, LO_PAIR_DGRAD, 1, 1, 0);
        it->inl[it->n_inline++] = add_bytes(bag, 2 * act, 2);
    }
    rs = add_bytes(rs, 2 * act * ((double)fwd * (S - 1) / S + bwd), 2 * n);
    if (fwd)
        tp_pair_rows(it, it->n_inline, fp, S - 1, S, 1);
    if (bwd)
        tp_pair_cols(it, it->n_inline, mlp, LO_PAIR_WGRAD, S, 1, 0);
    it->inl[it->n_inline++] = rs;
    if (fwd) {
        tail = add_bytes(tail, 2 * act / S, 2);
        it->inline_tail |= 1u << it->n_inline;
        it->inl[it->n_inline++] = tail;
    }
}

/* megatron with sequence parallelism (Korthikanti et al. 2022 §4.2.2): each all-reduce of a
 * [tokens, hidden] tensor becomes a reduce-scatter into the sequence-split norm / dropout region
 * and an all-gather out of it, the same ring bytes: forward g-bar (all-gather) before QKV and fc1,
 * g (reduce-scatter) after proj and fc2; backward the reverse; the embedding's output
 * reduce-scattered, the head's input all-gathered.
 * regather (Megatron's column-parallel linears): each saves its input sequence-split and
 * all-gathers it again in the backward for its weight gradient (Korthikanti et al. 2022 §4.2.2:
 * the extra all-gather overlapped with the input-gradient computation). Megatron-Core
 * NVIDIA/Megatron-LM@d98e8a64 megatron/core/tensor_parallel/layers.py
 * LinearWithGradAccumulationAndAsyncCommunication: forward L604 save_for_backward(input, weight)
 * of the shard, L623-628 the all-gather into a global buffer it does not save; backward L667-683
 * the re-gather async_op=True issued before the data-gradient matmul, L685-687 waited on before
 * the weight gradient (so beside that GEMM whatever the overlap switch); Transformer Engine's
 * LayerNormLinear (Megatron-Core's qkv and fc1 under the TE spec) the same:
 * TransformerEngine@fecb10bd transformer_engine/pytorch/module/layernorm_linear.py L157 gathers
 * ln_out_total, L308-316 saves ln_out (the shard), L436-447 the async re-gather, L559-560 its
 * wait after the dgrad GEMM. Per block backward two all-gathers of act (qkv's and fc1's /
 * gate_up's inputs), each paired with that layer's whole data gradient (1 chunk, 0 bare); the
 * head (a ColumnParallelLinear, Megatron-LM@d98e8a64 gpt_model.py L272-277) one of its input,
 * beside its data gradient. Not under torchtitan (lo_fsdp2_tp_item, regather 0): there the
 * all-gather is PrepareModuleInput's redistribute Shard(1) -> Replicate, an autograd op of its own
 * whose output is the linear's input, and autograd saves a matmul's left operand for the weight
 * gradient (pytorch/pytorch@d327a787 tools/autograd/derivatives.yaml, the mm entry: "mat2:
 * mm_mat2_backward(grad, self, ...)"), i.e. the gathered tensor: no re-gather. */
static void sp_item(const wl_layer *L, double act, int rec, int regather, lo_item *it)
{
    lo_coll ag = lo_coll_make(COLL_ALLGATHER, GRP_AX0, 0, 0), rs = lo_coll_make(COLL_REDUCESCATTER, GRP_AX0, 0, 0);
    ag.chunks = rs.chunks = 0;
    lo_coll rg = ag;
    const int fwd = it->pass == LO_FWD || rec, bwd = it->pass == LO_BWD;
    if (L->kind == WL_BLOCK) {
        if (fwd) {
            ag = add_bytes(ag, 2 * act, 2);
            rs = add_bytes(rs, 2 * act, 2);
        }
        if (bwd) {
            ag = add_bytes(ag, 2 * act, 2);
            rs = add_bytes(rs, 2 * act, 2);
            rg = add_bytes(rg, 2 * act, 2);
        }
    } else if (L->kind == WL_EMBED && it->pass == LO_FWD) {
        rs = add_bytes(rs, act, 1);
    } else if (L->kind == WL_HEAD) {
        if (fwd)
            ag = add_bytes(ag, act, 1);
        if (bwd) {
            rs = add_bytes(rs, act, 1);
            rg = add_bytes(rg, act, 1);
        }
    }
    if (ag.chunks)
        it->inl[it->n_inline++] = ag;
    if (regather && rg.chunks) { /* issued before the data gradients' reduce-scatters */
        if (L->kind == WL_HEAD)
            lo_item_pair(it, it->n_inline, WL_G_HEAD, LO_PAIR_DGRAD, 1, 1, 0);
        else
            tp_pair_cols(it, it->n_inline, mlp_col_role(L), LO_PAIR_DGRAD, 1, 1, 0);
        it->inl[it->n_inline++] = rg;
    }
    if (rs.chunks)
        it->inl[it->n_inline++] = rs;
}

/* ---- FSDP2 composed with DTensor tensor parallelism (torchtitan, fsdp2:dp=D,t=T) ------------ */
/* torchtitan's apply_tp (pytorch/torchtitan@d4c86e3758a84cf23e2e879ab3c995cba9d5e410 and
 * @3faaa1a0dee68ce028400e3dafd1735d152cb4f8, torchtitan/parallelisms/parallelize_llama.py): the
 * embedding RowwiseParallel with Shard(1) output, every norm SequenceParallel, attention and
 * feed_forward inputs redistributed Shard(1) -> Replicate (PrepareModuleInput), wq / wk / wv and
 * w1 / w3 ColwiseParallel, wo and w2 RowwiseParallel with Shard(1) output, the output layer
 * ColwiseParallel from Shard(1) with loss parallelism (vocabulary-sharded logits): Megatron's
 * sequence parallelism collective for collective (sp_item: per block two all-gathers and two
 * reduce-scatters of the replica's [tokens, hidden] each way), run eagerly by DTensor, the
 * compute waiting on each (no overlap: the backward's reduce-scatter follows the summed input
 * gradients of the three / two column-parallel linears, after their weight gradients).
 *
 * Async TP (asynctp=1: torch._inductor.config._micro_pipeline_tp with symmetric memory on the TP
 * group, torchtitan's maybe_enable_async_tp; it needs torch.compile), priced as the code runs:
 *  - What is fused (pytorch/pytorch torch/_inductor/fx_passes/micro_pipeline_tp.py, read at
 *    00122fb1c8e5cc0f and at 5f65158aefc31977): an all-gather whose result is the left operand of
 *    matmuls (_find_consumer_matmuls) becomes fused_all_gather_matmul; a reduce-scatter whose input
 *    is one matmul's output with no other user (fuse_matmul_reduce_scatter, _find_producer_matmul:
 *    mm / _scaled_mm or reshape-mm-reshape, else "no producer matmul found ... skipping") becomes
 *    fused_matmul_reduce_scatter (pytorch/pytorch#149946, the pass's author, 2025-03-28: only
 *    forward matmul-reduce-scatters match, "in the backward graph, the reduce-scatters are
 *    receiving as input the addition of various scaled_mms"). So: forward (and its recompute) both
 *    all-gathers (into wq / wk / wv and w1 / w3) and both reduce-scatters (after wo and w2);
 *    backward the all-gathers of wo's and w2's output gradients, fused with their data-gradient
 *    GEMMs (the weight gradient reads the gathered tensor through a transpose, not as a left
 *    operand: whole, after). The backward's two reduce-scatters are NOT fused: their input is the
 *    sum of the three (two) column-parallel data gradients (an add, not a matmul), so they stay
 *    NCCL reduce-scatters the compute waits for, as in eager (sp_item): priced as inline tails
 *    (issued when the item's compute ends, fully exposed, on the SMs).
 *  - How a fused op runs (torch/distributed/_symmetric_memory/__init__.py read at
 *    0e9ed9cf06a092ed60ec2d66a5a78d03322b5d7a, lines counted in the stored text; the same at
 *    006b161f8e5a26c8): each GEMM in t chunks of m / t, one per rank.
 *    _pipelined_multi_all_gather_and_consume (L139-282) copies the local shard into its p2p buffer
 *    and barriers before the first chunk ("giving up the chance to overlap mv and b with the first
 *    shard_consumer", L247-253): exposed, a copy of act / t read and written (hbm_bytes); then the
 *    own chunk's GEMM, then t - 1 steps of (peer copy, GEMM) alternating two streams (L260-269):
 *    the copies run beside the GEMMs of all chunks but the last. _pipelined_produce_and_all2all
 *    (L314-414): t - 1 steps of (GEMM, barrier, the peer's pull, barrier), then the own chunk's
 *    GEMM last: the copies run beside all chunks but the first; then reduce_partials sums the t
 *    partials (read t x act / t, write act / t: act (1 + 1/t) HBM bytes). The copies are
 *    Tensor.copy_ of same-dtype contiguous tensors (copy_device_to_device's memcpy path:
 *    cudaMemcpyAsync), the copy engines, hence `offload` (no SM interference).
 *  - So each fused op's copies run beside (t - 1) / t of its own GEMM (chunk steps of
 *    max(copy, GEMM chunk)), exposed by their excess over it: max(0, copy - (t - 1) / t GEMM),
 *    pair by pair (lo_pair; atp2, issue 27 item 8: before, the block's copies were summed against
 *    the sum of its fused GEMMs, which let the small wo GEMM's reduce-scatter hide behind
 *    w1 / w3). The GEMMs split in t chunks (lo_tp_ub_mark: ub_atp; the measured chunk factor,
 *    cost.c lin_gemm_t), each timed by cost_layer_gemm_time. Not modelled: the barriers (3 per
 *    all-gather, 2 t per reduce-scatter: no public measurement of their cost), the all-gather's
 *    second local copy (into its output, beside the last GEMM), the embedding's backward
 *    all-gather (as sp_item).
 *    Float8 (torchao): the forward's GEMMs are _scaled_mm; the stored 2024 pass
 *    (00122fb1) matched aten.mm only, the 2025 one (5f65158a) _scaled_mm too: taken as fused,
 *    the torch commit of the cases' runs not read. */
/* The block's TP collectives under async TP (above): fused all-gathers (forward two, backward
 * two) and the forward's fused reduce-scatters over the copy engines, the backward's
 * reduce-scatters as exposed tails; the local copies and partial sums as HBM bytes. Each fused
 * op's copies are paired with its own GEMM (lo_pair; each op is self-contained: it opens and
 * closes with a barrier on the group's one workspace and joins the one backend stream before
 * it returns, _symmetric_memory/__init__.py at 0e9ed9cf L86-136, L281-282, L412-414, so no
 * copy of one op runs beside another op's GEMM or beside the attention core or norms):
 * forward (fwd_pass) or recompute (rec): all-gather -> wq / wk / wv (fused, WL_G_QKV) and
 * -> w1 / w3 (WL_G_GATE_UP, fc1 without SwiGLU), wo -> reduce-scatter and w2 ->
 * reduce-scatter; backward: all-gather -> wo's and w2's data gradients. ag_share: the forward
 * all-gathers' bytes relative to the backward's (2 in bf16, 1 when float8 halves them,
 * fp8_tp_gathers). */
static void atp_block(const wl_layer *L, double act, double t, int fwd_pass, int rec, int bwd, int ag_share,
                      lo_item *it)
{
    lo_coll ag = lo_coll_make(COLL_ALLGATHER, GRP_AX0, 0, 0), rs = lo_coll_make(COLL_REDUCESCATTER, GRP_AX0, 0, 0);
    ag.chunks = rs.chunks = 0;
    lo_coll tail = rs;
    ag.offload = rs.offload = 1; /* peer-to-peer copies over the copy engines */
    const int fwd = fwd_pass || rec, n = fwd + bwd, fp = rec ? LO_PAIR_REC : LO_PAIR_FWD;
    const wl_gemm_role mlp = mlp_col_role(L);
    const int tc = (int)t; /* the copies beside all chunks but one of each fused GEMM (above) */
    ag = add_bytes(ag, 2 * act * n, 2 * n);
    if (fwd)
        tp_pair_cols(it, it->n_inline, mlp, fp, ag_share, tc, 1);
    if (bwd)
        tp_pair_rows(it, it->n_inline, LO_PAIR_DGRAD, 2, tc, 1);
    it->inl[it->n_inline++] = ag;
    if (fwd) {
        rs = add_bytes(rs, 2 * act, 2);
        tp_pair_rows(it, it->n_inline, fp, 1, tc, 1);
        it->inl[it->n_inline++] = rs;
    }
    if (bwd) { /* not fused: NCCL, after the compute */
        tail = add_bytes(tail, 2 * act, 2);
        it->inline_tail |= 1u << it->n_inline;
        it->inl[it->n_inline++] = tail;
    }
    /* each fused all-gather's local shard copied (read + write act / t) before its first chunk;
     * each fused reduce-scatter's reduce_partials */
    it->hbm_bytes += 2 * n * (2 * act / t) + 2 * fwd * act * (1 + 1 / t);
}

/* Float8 linears (precision fp8): torchtitan's apply_tp swaps in torchao's Float8ColwiseParallel /
 * Float8RowwiseParallel / PrepareFloat8ModuleInput (parallelize_llama.py at 004b3148a92b565e,
 * as at the cases' commits), which cast a block's sequence-parallel input to float8 before its
 * all-gather (torchtitan docs/float8.md: "float8 all-gather ... for TP (by default for
 * Float8Linear)"): the forward's (and recompute's) two all-gathers move 1-byte elements, half of
 * sp_item's 2-byte bytes. The output layer stays bf16 (not a Float8Linear); the reduce-scatters
 * (bf16 outputs and input gradients) and the backward's all-gathers are left at 2 bytes. */
static void fp8_tp_gathers(const wl_layer *L, int fwd, double act, lo_item *it)
{
    if (L->kind != WL_BLOCK || !fwd)
        return;
    for (int i = 0; i < it->n_inline; i++)
        if (it->inl[i].kind == COLL_ALLGATHER && it->inl[i].group == GRP_AX0) {
            it->inl[i].bytes -= act; /* 2 x act / 2 */
            return;
        }
}

void lo_fsdp2_tp_item(const lo_graph *g, const wl *lw, const spec_training *t, lo_item *it)
{
    const spec_layout *l = &g->layout;
    const wl_layer *L = &lw->layer[it->layer];
    const int rec = lo_fwd_comm_rerun(t, it), fwd = it->pass == LO_FWD || rec;
    const double act = lw->tokens * lw->model.hidden * g->elem_bytes; /* the replica's [tokens, hidden] */
    if (l->t <= 1)
        return;
    if (l->atp && L->kind == WL_BLOCK) {
        /* the copies beside their own GEMMs (lo_pair), nothing else beside them */
        atp_block(L, act, l->t, it->pass == LO_FWD, rec, it->pass == LO_BWD, t->precision == PREC_FP8 ? 1 : 2, it);
        it->inline_overlap = 0;
    } else {
        sp_item(L, act, rec, 0, it); /* the gathered input saved: no re-gather */
    }
    if (t->precision == PREC_FP8)
        fp8_tp_gathers(L, fwd, act, it);
}

/* megatron zero2=1: PaddleNLP's sharding stage 2 beside tensor parallelism. PaddleNLP's Trainer
 * wraps the model in TensorParallel, then group_sharded_parallel(level="os_g") over the sharding
 * group (paddlenlp/trainer/trainer.py _wrap_model, the v2.6 form: "Only support tensor parallel +
 * sharding stage1/stage2 hybrid parallel now"), and under hybrid parallelism never enters no_sync
 * ("stage2 and stage3 should not no_sync, because the is no DDP wrapper"): the gradients are
 * reduced in every micro-step's backward. Paddle's GroupShardedStage2
 * (PaddlePaddle/Paddle@03eadcf30eb862f2483ba887caf546a0791ee59e
 * python/paddle/distributed/fleet/meta_parallel/sharding/group_sharded_stage2.py, the stored
 * version, read by function, not by line): each parameter's backward hook (_setup_backward_hooks)
 * sends its gradient to the rank that owns it with dist.reduce (_get_reduce_fn; parameters beyond
 * a GradStorage of buffer_max_size = 2**23 elements per owner, which a 7B model's 8-way-or-fewer
 * shards exceed almost whole, are reduced one by one: a call per parameter tensor), with
 * sync_op = not _reduce_overlap and _reduce_overlap False unless the user calls
 * _set_reduce_overlap (__init__), so on the compute stream: the backward waits; the non-owners
 * then clear the gradient (cleanup), each rank keeping its shard. A ring Reduce moves the whole
 * buffer S per rank (layout_dp.c's owner_reduce convention): costed as a reduce-scatter of
 * S n / (n - 1) over the data-parallel group (n its size), inline. */
static void stage2_reduce(const lo_graph *g, const wl *lw, const wl_layer *L, lo_item *it)
{
    const double n = g->ax_size[AX_D];
    if (n <= 1)
        return;
    const double S = L->params * g->sched.reduce_elem_bytes; /* this rank's slice, as reduced */
    /* synchronous: a tail, exposed whole, not in the window the tensor-parallel all-reduce of
     * the same copy overlaps the weight-gradient GEMMs with (lo_item.inline_tail); never full:
     * zero2=1 has no cp (spec_layout.c), so tp_item adds at most 5 before it (lo_graph.h) */
    assert(it->n_inline < LO_MAX_INLINE);
    it->inline_tail |= 1u << it->n_inline;
    it->inl[it->n_inline++] = lo_coll_make(COLL_REDUCESCATTER, GRP_AX3, S * n / (n - 1), fw_param_tensors(lw, L));
}

/* The input-gradient all-reduces of a block's backward (the f operators, Shoeybi et al. 2019
 * s3): Megatron fuses q, k, v into one column-parallel layer and the MLP's first matrices into
 * another, so two, the async one beside the weight-gradient GEMMs (overlap: dw_fraction).
 * training.atorch_tp (ATorch's manual TP, the DS 3D Llama example's TPInfo):
 * intelligent-machine-learning/dlrover@11bf2fbfa2e9625073a4bcb6d2dea3c5e0ce1d44
 * atorch/examples/llama2/ds_3d_llama2.py L63-69 shards q_proj, k_proj, v_proj, gate_proj and
 * up_proj each as its own ColumnParallelLinear (TPInfo.shard_col, no kwargs); in
 * atorch/atorch/modules/distributed_modules/layers.py L425 async_grad_allreduce defaults to
 * False, so forward L533-536 wraps each layer's input in copy_to_group, whose backward
 * (mappings.py L318-334 _CopyToGroup, L23-39 _reduce) is a blocking torch.distributed.all_reduce
 * of that layer's [tokens, hidden] input gradient: one per column-parallel linear (3 in
 * attention, 2 in a SwiGLU MLP, 1 in a GELU one), none of them beside a GEMM. The row-parallel
 * g operators (o_proj, down_proj: RowParallelLinear forward, reduce_from_group L388) are
 * Megatron's two. Returns the number of all-reduces; *sync = 1 when none may overlap. */
static int tp_block_bwd(const wl *lw, const spec_training *t, int *sync)
{
    *sync = t->atorch_tp > 0;
    return *sync ? 3 + (lw->model.swiglu ? 2 : 1) : 2;
}

/* Transformer Engine's sequence-parallel all-gathers under FP8 (Megatron's TE modules, precision
 * fp8): every all-gather of a block moves the fp8 (1-byte) tensor, both recipes, with NCCL or
 * userbuffers, so each gathered element is 1 B where sp_item / tpo_block price act's elem_bytes:
 *  - forward, the norm output (qkv's and fc1's input, TELayerNormColumnParallelLinear): TE 1.x
 *    writes it in uint8 and gathers that (NVIDIA/TransformerEngine@5b90b7f5ed67b373 (v1.3)
 *    transformer_engine/pytorch/module/layernorm_linear.py L117-118, L152; @3ec998e96c82bc30
 *    (v1.8) L126-127, L157; layernorm_mlp.py L151, L182 the same); TE 2.x quantizes it (in the
 *    norm kernel or before the gather) and gathers with the quantizer (@40c69e751a47ec87 (v2.8)
 *    layernorm_linear.py L198-204, L248-266; @fedd9ddc739a4f28 (v2.7) L193, L240-258), whose
 *    _all_gather_fp8 moves the uint8 _data for Float8Quantizer (delayed) and
 *    Float8CurrentScalingQuantizer (current) alike (v2.8 distributed.py L1636-1640, L967-969;
 *    v2.7 L1397-1400, L964-967); v1.9 (@e79d915aa0ae1bfc) as v1.8 (L137, L170, L454; base.py
 *    L761-773);
 *  - backward, the row-parallel linears' (proj's, fc2's) output gradient: cast on the rank's
 *    shard, then gathered (v1.3 base.py grad_output_preprocess L664-673; v1.8 L677-689; v2.8
 *    L1188-1191 with the quantizer, v2.7 L1126);
 *  - backward, the saved fp8 norm output re-gathered for the weight gradient (v1.3
 *    layernorm_linear.py L339, L360; v1.8 L421, L444; v2.8 L654-675);
 *  - under --tp-comm-overlap the same fp8 tensors go through userbuffers whose all-gather
 *    buffers (qkv_fprop, qkv_dgrad, proj_dgrad, fc1_fprop, fc1_dgrad, fc2_dgrad) are uint8
 *    when FP8 is on (v1.3 base.py L127-129, L154; v1.8 L88-95, L165; v2.8 L290-299, L344,
 *    L414-418; v2.8 fill_userbuffers_buffer_for_all_gather L543-555 copies the fp8 _data).
 * The reduce-scatters (bf16 GEMM outputs and input gradients) stay at elem_bytes; the output
 * layer and the embedding are Megatron's own (not TE) modules: left as they are. */
static void te_fp8_gathers(const lo_graph *g, const wl_layer *L, const spec_training *t, lo_item *it, int from)
{
    if (t->precision != PREC_FP8 || L->kind != WL_BLOCK || g->elem_bytes <= 1)
        return;
    for (int i = from; i < it->n_inline; i++)
        if (it->inl[i].kind == COLL_ALLGATHER && it->inl[i].group == GRP_AX0)
            it->inl[i].bytes /= g->elem_bytes; /* 1 B an element, not elem_bytes */
}

/* Transformer Engine's per-tensor current scaling under sequence parallelism (fp8_recipe
 * current, workload.c fp8_casts): the amax of a column-parallel linear's input (qkv's, fc1's)
 * and of a row-parallel one's output gradient (proj's, fc2's) is all-reduced (MAX, one fp32)
 * over the tensor group before the cast (NVIDIA/TransformerEngine@3ec878759cc601d088dfa5c0
 * a4772acf4317b190 transformer_engine/pytorch/module/layernorm_linear.py
 * _customize_quantizers_float8_current_scaling: with_amax_reduction where sequence_parallel,
 * column on the input, row on the output gradient; layernorm_mlp.py and linear.py the same),
 * synchronously (normalization.cpp at 01a4d046: process_group->allreduce(...)->wait()): two a
 * pass per block, two more where the forward reruns; latency-bound and exposed (a tail). */
static void fp8_amax_reduce(const lo_graph *g, const wl_layer *L, const spec_training *t, int rec, lo_item *it)
{
    const spec_layout *l = &g->layout;
    if (!spec_fp8_current(t) || l->kind != LAYOUT_MEGATRON || !l->sp || l->t <= 1 || L->kind != WL_BLOCK)
        return;
    /* never full: tp_item adds at most 5 before it (tpo_block 4, cp_item 1; lo_graph.h's 6) */
    assert(it->n_inline < LO_MAX_INLINE);
    const int n = 2 * ((it->pass == LO_FWD) + (it->pass == LO_BWD) + (it->pass == LO_BWD && rec));
    it->inline_tail |= 1u << it->n_inline;
    it->inl[it->n_inline++] = lo_coll_make(COLL_ALLREDUCE, GRP_AX0, 4.0 * n, n);
}

/* lo_tp_item with the micro-step asked lazily (lo_last_is: only where it matters, so that
 * lo_build_micro_pair copies the other items; an32b) */
static void tp_item(const lo_graph *g, const wl *lw, const spec_training *t, lo_last *last, lo_item *it)
{
    const spec_layout *l = &g->layout;
    const wl_layer *L = &lw->layer[it->layer];
    const int rec = lo_fwd_comm_rerun(t, it); /* layout_ops.c: one rule for every builder */
    /* tp: the replica runs t x the micro-batch; megatron: the micro-batch is the replica's */
    const double e = g->elem_bytes, T = (l->kind == LAYOUT_MEGATRON ? 1 : l->t) * lw->tokens, h = lw->model.hidden;
    const double act = T * h * e; /* one [tokens, hidden] activation of the replica */
    lo_coll ar = lo_coll_make(COLL_ALLREDUCE, GRP_AX0, 0, 0);
    ar.chunks = 0;
    if (tpo_on(l, t) && L->kind == WL_BLOCK) {
        const int from = it->n_inline;
        tpo_block(L, act, l->t, it->pass == LO_FWD, rec, it->pass == LO_BWD, it);
        te_fp8_gathers(g, L, t, it, from);
        it->inline_overlap = 0; /* the copies beside their own GEMMs (lo_pair) only */
        goto dp;
    }
    if (l->kind == LAYOUT_MEGATRON && l->sp && l->t > 1) {
        const int from = it->n_inline;
        sp_item(L, act, rec, 1, it);
        te_fp8_gathers(g, L, t, it, from);
        if (it->pass == LO_BWD)
            it->inline_overlap = l->overlap ? dw_fraction(L, rec, 1) : 0;
        goto dp;
    }
    if (it->pass == LO_FWD) {
        if (L->kind == WL_BLOCK)
            ar = add_bytes(ar, 2 * act, 2); /* g after attention and after the MLP */
        else if (L->kind == WL_EMBED)
            ar = add_bytes(ar, act, 1); /* vocabulary-parallel embedding */
    } else {
        int sync, nf = tp_block_bwd(lw, t, &sync);
        if (L->kind == WL_BLOCK)
            ar = add_bytes(ar, nf * act, nf); /* f before attention and before the MLP */
        else if (L->kind == WL_HEAD)
            ar = add_bytes(ar, act, 1); /* input gradient of the column-parallel head */
        if (rec)
            ar = add_bytes(ar, 2 * act, 2);
        /* beside the weight-gradient GEMMs where the framework issues it asynchronously */
        it->inline_overlap = l->overlap && !sync && fw_mg_tp_ar_async(t) ? dw_fraction(L, rec, 1) : 0;
    }
    if (ar.chunks)
        it->inl[it->n_inline++] = ar;
dp:
    cp_item(g, lw, it, 0); /* context parallelism's ring (cp.h), beside every step; nothing when cp = 1 */
    fp8_amax_reduce(g, L, t, rec, it);
    if (it->pass == LO_BWD && l->kind == LAYOUT_MEGATRON && l->zero2) {
        stage2_reduce(g, lw, L, it); /* every micro-step, the last one too */
    } else if (it->pass == LO_BWD && lo_last_is(last)) {
        /* this rank's slice of the layer's gradients, in the dtype they are reduced in
         * (reduce_dtype; Megatron's buckets count elements, so the same number of buckets) */
        const double er = g->sched.reduce_elem_bytes;
        double S = L->params * er;
        cost_coll k = l->zero1 ? COLL_REDUCESCATTER : COLL_ALLREDUCE;
        double B = fw_dp_bucket_bytes(t, g->ax_size[AX_D], l->overlap, er); /* framework.h */
        lo_coll c = lo_coll_make(k, GRP_AX3, S, lo_buckets(S, B));
        c.stream = g->sched.reduce_stream; /* framework megatron: the data-parallel communicator's
                                              own stream, not the tensor-parallel one's */
        place(it, l->overlap, c);
    }
    /* --overlap-param-gather: the slice's updated parameters gathered before the layer's first
     * forward (here the last micro-step's, the same compute to hide behind), one layer ahead */
    if (it->pass == LO_FWD && l->pp <= 1 && fw_param_gather_overlap(t, l, g->ax_size[AX_D]) && lo_last_is(last)) {
        double S = L->params * e;
        lo_coll c = lo_coll_make(COLL_ALLGATHER, GRP_AX3, S, lo_buckets(S, fw_dp_bucket_bytes(t, g->ax_size[AX_D], 1, e)));
        c.stream = g->sched.reduce_stream;
        it->gather[it->n_gather++] = c;
    }
}

void lo_tp_item(const lo_graph *g, const wl *lw, const spec_training *t, int last, lo_item *it)
{
    lo_last ls = {last, 0};
    tp_item(g, lw, t, &ls, it);
}

/* ---- AxoNN -------------------------------------------------------------------------------- */
static void axonn_item(const lo_graph *g, const wl *lw, const spec_training *t, lo_last *last, lo_item *it)
{
    const spec_layout *l = &g->layout;
    const wl_layer *L = &lw->layer[it->layer];
    const double e = g->elem_bytes, X = l->grid[0], Y = l->grid[1], Z = l->grid[2];
    const double T = lw->tokens, h = lw->model.hidden, f = lw->model.ffn, V = lw->model.vocab;
    const spec_model *m = &lw->model;
    const double nq = h + 2.0 * m->kv_heads * (h / m->heads); /* QKV output width */
    const double mlp_in = m->swiglu ? 2 * f : f;                /* fc1 / gate_up output width */
    const double W = L->params * Z * e;                         /* the gathered [k/R, n/C] blocks */
    int gemms = L->kind == WL_BLOCK ? 4 : 1;
    /* all-reduces along x and along y; a layer's tokens on one rank are XY x T (T per GPU) */
    lo_coll arx = lo_coll_make(COLL_ALLREDUCE, GRP_AX0, 0, 0), ary = lo_coll_make(COLL_ALLREDUCE, GRP_AX1, 0, 0);
    arx.chunks = ary.chunks = 0;
    it->gather[it->n_gather++] = lo_coll_make(COLL_ALLGATHER, GRP_AX2, W, gemms);
    const int rec = lo_fwd_comm_rerun(t, it); /* layout_ops.c: selective re-runs none of them */
    int fwd_ar = it->pass == LO_FWD || rec;
    if (fwd_ar && L->kind == WL_BLOCK) {
        arx = add_bytes(arx, X * T * (nq + mlp_in) * e, 2); /* qkv, fc1: [m/Z, n/Y] along x */
        ary = add_bytes(ary, Y * T * 2 * h * e, 2);         /* proj, fc2: [m/Z, h/X] along y */
    } else if (fwd_ar && L->kind == WL_HEAD) {
        arx = add_bytes(arx, X * T * V * e, 1);
    }
    if (it->pass == LO_BWD) {
        if (L->kind == WL_BLOCK) {
            ary = add_bytes(ary, Y * T * 2 * h * e, 2); /* qkv, fc1 input gradients [m/Z, h/X] */
            arx = add_bytes(arx, X * T * (h + f) * e, 2); /* proj, fc2 input gradients [m/Z, k/Y] */
        } else if (L->kind == WL_HEAD) {
            ary = add_bytes(ary, Y * T * h * e, 1);
        }
        it->inline_overlap = l->overlap ? dw_fraction(L, rec, 0) : 0;
    }
    if (arx.chunks)
        it->inl[it->n_inline++] = arx;
    if (ary.chunks)
        it->inl[it->n_inline++] = ary;
    if (it->pass == LO_BWD) {
        place(it, l->overlap, lo_coll_make(COLL_REDUCESCATTER, GRP_AX2, W, gemms));
        if (lo_last_is(last)) {
            double S = L->params * e; /* the rank's gradient shard */
            place(it, l->overlap, lo_coll_make(COLL_ALLREDUCE, GRP_AX3, S, lo_buckets(S, t->bucket_bytes)));
        }
    }
}

static void tensor_item(const lo_graph *g, const wl *lw, const spec_training *t, lo_last *last, lo_item *it)
{
    if (g->layout.kind == LAYOUT_TP || g->layout.kind == LAYOUT_MEGATRON)
        tp_item(g, lw, t, last, it);
    else
        axonn_item(g, lw, t, last, it);
}

/* The layers as one rank of the tensor-parallel group runs them (workload_local.c): tp's and
 * axonn's rows, and megatron's without a pipeline (lo_build_tensor). */
static const wl *tensor_localize(const wl *w, const spec_layout *l, int n_ranks, wl *out)
{
    (void)n_ranks;
    switch (l->kind) {
    case LAYOUT_TP: return wl_localize_tp(w, l->t, out);
    case LAYOUT_AXONN: return wl_localize_axonn(w, l->grid, out);
    case LAYOUT_MEGATRON: return wl_localize_megatron(w, l, out);
    default: return w;
    }
}

/* The trainer's step work on the gradients the optimizer's shard covers (the boundary's
 * opt_params of the `local` parameters the rank holds): fw_trainer_step_shard (Megatron's unscale
 * and clip norm, with sources), as layout_dp.c and the pipeline's stages (analytic_pipe.c) add it. */
static void tensor_step_work(lo_graph *g, const wl *lw, const spec_training *t, double local)
{
    double psi = local;
    for (int i = 0; i < g->n_boundary; i++)
        if (g->boundary[i].is_optimizer)
            psi = g->boundary[i].opt_params;
    const double part = psi > 0 && local > psi ? local / psi : 1;
    const double tensors = fw_model_tensors(lw);
    double syncs, bytes, launches;
    fw_trainer_step_shard(t, g->elem_bytes, psi, tensors / part + (part > 1), &syncs, &bytes, &launches);
    g->sched.step_syncs += syncs;
    g->sched.step_hbm_bytes += bytes;
    g->sched.opt_launches += (int)launches;
}

void lo_build_tensor(lo_graph *g, const wl *w, const spec_training *t, const spec_cluster *c)
{
    const spec_layout *l = &g->layout;
    const int N = g->n_ranks;
    wl buf;
    const wl *lw = tensor_localize(w, l, N, &buf);
    memcpy(g->lw, lw->layer, sizeof g->lw);
    lo_tp_ub_mark(l, t, g->lw, lw->n_layers); /* TE's chunked GEMMs where --tp-comm-overlap acts */
    g->local_layers = 1;
    int axes_rc = spec_layout_axes(l, N, g->ax_size, g->ax_stride);
    (void)axes_rc; /* 0: layout_build requires spec_layout_check, which checked these axes */
    g->prefetch = l->overlap ? t->prefetch_layers : 0;
    lo_make_groups(g, c);
    lo_build_micro_pair(g, lw, t, tensor_item); /* the last micro-step's items again only where they ask */

    double local = 0; /* parameters this rank holds */
    for (int i = 0; i < lw->n_layers; i++)
        local += lw->layer[i].params * lw->layer[i].count;
    const double e = g->elem_bytes;
    if ((l->kind == LAYOUT_TP || l->kind == LAYOUT_MEGATRON) && l->zero1) {
        /* ZeRO-1 over the replicas: Adam on 1/dp of the slice, then the slice all-gathered */
        int dp = g->ax_size[AX_D];
        g->boundary[g->n_boundary++] = (lo_bop){.is_optimizer = 1, .opt_params = local / dp};
        if (dp > 1 && !fw_param_gather_overlap(t, l, dp)) /* else in the forward (lo_tp_item) */
            g->boundary[g->n_boundary++] = (lo_bop){
                .coll = lo_coll_make(COLL_ALLGATHER, GRP_AX3, local * e,
                                     lo_buckets(local * e, fw_dp_bucket_bytes(t, dp, l->overlap, e)))};
    } else {
        g->boundary[g->n_boundary++] = (lo_bop){.is_optimizer = 1, .opt_params = local};
    }
    tensor_step_work(g, lw, t, local);
}

/* The rows of tp and axonn (layout_row.h): checks, replica and optimizer shard. */

/* tp: inside a node (t divides its GPUs), or across nodes (t a multiple of them, dividing the
 * GPUs): its all-reduces then ride the NICs, priced like any group spanning nodes (the CLI
 * warns, spec_layout_tp_across) */
static int tp_check(const spec_layout *l, const spec_cluster *c, int n, int g, const char *name, sc_err *err)
{
    (void)c;
    if (g % l->t && (l->t % g || n % l->t))
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "%s: expected t dividing %d GPUs per node, or a multiple of it dividing the %d GPUs, "
                          "got %d",
                          name, g, n, l->t);
    return 0;
}

/* Cumulative products of the AxoNN axes in placement order must each divide the node's GPUs or
 * be a multiple of them: every communicator then lies inside one node or spans whole nodes with
 * the same members on each (the placement rule of the AxoNN paper, §V). */
static int axonn_check(const spec_layout *l, const spec_cluster *c, int n, int g, const char *name, sc_err *err)
{
    (void)c;
    long long big = 1;
    for (int i = 0; i < SPEC_AXES - 1; i++)
        big *= l->grid[i] > 0 ? l->grid[i] : 0;
    if (big < 1 || big > n) /* also keeps the products below in int */
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: expected x*y*z = %lld to divide the %d GPUs", name, big, n);
    int prod = (int)big;
    if (n % prod)
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: expected x*y*z = %d to divide the %d GPUs", name, prod, n);
    if (l->grid[3] && prod * l->grid[3] != n)
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: expected x*y*z*d to equal the %d GPUs, got %d", name, n,
                          prod * l->grid[3]);
    int size[SPEC_AXES], stride[SPEC_AXES];
    const char *pl = l->placement[0] ? l->placement : "xyzd";
    if (spec_layout_axes(l, n, size, stride))
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: placement \"%s\" is not a permutation of xyzd", name, pl);
    for (int i = 0; i < SPEC_AXES; i++) { /* the ranks of the axes up to the i-th innermost */
        int a = (int)(strchr("xyzd", pl[i]) - "xyzd"), cum = stride[a] * size[a];
        if (!(g % cum == 0 || cum % g == 0))
            return sc_err_set(err, SC_EINPUT, "layout", "",
                              "%s: placement %s puts %d ranks in the innermost axes; expected a divisor or multiple of "
                              "the %d GPUs per node",
                              name, pl, cum, g);
    }
    return 0;
}

static int tp_check_model(const spec_layout *l, const spec_model *m, const char *name, sc_err *err)
{
    if (m->ffn % l->t || m->hidden % l->t)
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: splits hidden %d and ffn %d of %s %d ways", name, m->hidden,
                          m->ffn, m->name, l->t);
    return layout_row_check_heads(m, name, l->t, err);
}

static int axonn_check_model(const spec_layout *l, const spec_model *m, const char *name, sc_err *err)
{
    int rc = layout_row_check_heads(m, name, l->grid[1], err);
    if (rc)
        return rc;
    for (int a = 0; a < 2; a++)
        if (m->hidden % l->grid[a] || m->ffn % l->grid[a])
            return sc_err_set(err, SC_EINPUT, "layout", "", "%s: splits hidden %d and ffn %d of %s %d ways (%c)", name,
                              m->hidden, m->ffn, m->name, l->grid[a], "xy"[a]);
    return 0;
}

static int tp_replicas(const spec_layout *l) { return l->t > 0 ? l->t : 1; }

static int axonn_replicas(const spec_layout *l)
{
    int xyz = 1;
    for (int a = 0; a < SPEC_AXES - 1; a++)
        xyz *= l->grid[a] > 0 ? l->grid[a] : 1;
    return xyz;
}

/* optimizer states: t-way TP x replicas, or ZeRO-1 over every GPU */
static int tp_shard(const spec_layout *l, int n_ranks) { return l->zero1 ? n_ranks : l->t; }

static int axonn_shard(const spec_layout *l, int n_ranks)
{
    (void)n_ranks;
    return axonn_replicas(l);
}

/* ---- plan's candidates (layout_row.h) ----------------------------------------------------- */

/* Megatron tensor parallelism: inside a node, and across nodes (t a multiple of G: over the
 * NICs), with and without the distributed optimizer. */
static int tp_cands(const layout_cand_in *in, int p, spec_layout *out, int n, int max)
{
    if (p)
        return n;
    int G = in->c->gpus_per_node, N = in->nodes * G;
    for (int t = 2; t <= N; t = t < G ? t + 1 : t + G)
        for (int z1 = 1; z1 >= 0; z1--) {
            spec_layout l = {.kind = LAYOUT_TP, .t = t, .zero1 = z1, .overlap = 1, .hier = 1};
            if (!spec_layout_check(&l, in->c, in->nodes, NULL) && !spec_layout_check_model(&l, in->m, NULL))
                n = layout_row_push(out, n, max, l);
        }
    return n;
}

/* AxoNN: every grid X x Y x Z x D = N and every placement that changes which ranks share a
 * communicator (axes of size 1 can sit anywhere: one placement each). */
static const char *const PERMS[24] = {"xyzd", "xydz", "xzyd", "xzdy", "xdyz", "xdzy", "yxzd", "yxdz",
                                     "yzxd", "yzdx", "ydxz", "ydzx", "zxyd", "zxdy", "zyxd", "zydx",
                                     "zdxy", "zdyx", "dxyz", "dxzy", "dyxz", "dyzx", "dzxy", "dzyx"};

/* Strides of l's axes of size > 1 on N GPUs (0 for size-1 axes): equal signatures place every
 * communicator identically. */
static void stride_sig(const spec_layout *l, int N, int st[4])
{
    int size[4];
    if (spec_layout_axes(l, N, size, st)) { /* no grid on N GPUs: a signature no valid layout has */
        for (int a = 0; a < 4; a++)
            st[a] = -1;
        return;
    }
    for (int a = 0; a < 4; a++)
        if (size[a] == 1)
            st[a] = 0;
}

/* An AxoNN layout in its canonical spelling on N GPUs: d left implicit, and the first placement
 * (in PERMS order) with the same communicators. */
static void axonn_canon(spec_layout *l, int N)
{
    int xyz = l->grid[0] * l->grid[1] * l->grid[2];
    if (xyz <= 0 || N % xyz)
        return;
    int want[4], st[4];
    l->grid[3] = 0;
    stride_sig(l, N, want);
    spec_layout q = *l;
    for (int pi = 0; pi < 24; pi++) {
        memcpy(q.placement, PERMS[pi], 5);
        stride_sig(&q, N, st);
        if (!memcmp(st, want, sizeof st)) {
            memcpy(l->placement, PERMS[pi], 5);
            return;
        }
    }
}

static int axonn_cands(const layout_cand_in *in, int p, spec_layout *out, int n, int max)
{
    if (p)
        return n;
    const char *only = in->placement;
    int N = in->nodes * in->c->gpus_per_node;
    for (int x = 1; x <= N; x++)
        for (int y = 1; x * y <= N; y++)
            for (int z = 1; x * y * z <= N; z++) {
                if (N % (x * y * z))
                    continue;
                int seen[24][4], n_seen = 0;
                for (int pi = 0; pi < 24; pi++) {
                    if (only && strcmp(only, PERMS[pi]))
                        continue;
                    spec_layout l = {.kind = LAYOUT_AXONN, .grid = {x, y, z, 0}, .overlap = 1, .zero1 = 1};
                    memcpy(l.placement, PERMS[pi], 5);
                    if (spec_layout_check(&l, in->c, in->nodes, NULL) || spec_layout_check_model(&l, in->m, NULL))
                        continue;
                    int st[4], dup = 0;
                    stride_sig(&l, N, st);
                    for (int j = 0; j < n_seen && !dup; j++)
                        dup = !memcmp(seen[j], st, sizeof st);
                    if (dup)
                        continue;
                    memcpy(seen[n_seen++], st, sizeof st);
                    n = layout_row_push(out, n, max, l);
                }
            }
    return n;
}

/* plan's reason for a tensor-parallel winner: the bytes per rank on each axis (and the link it
 * rides), the GEMMs' fraction of peak at the shapes one rank computes, and the memory. */
static void tensor_explain(const layout_explain_in *x, char *out, size_t len)
{
    wl w;
    wl_build(x->m, x->t, &w);
    lo_graph *g = malloc(sizeof *g);
    if (!g) {
        snprintf(out, len, "(out of memory)");
        return;
    }
    layout_build(&w, x->t, x->l, x->c, x->nodes, g);
    double by[N_GROUPS];
    layout_comm_bytes_by_group(g, by);
    static const char *const names[4] = {"x", "y", "z", "data"};
    const char *tp_names[4] = {"tensor", "", "", "data"};
    size_t o = (size_t)snprintf(out, len, "per step and GPU");
    const char *sep = ": ";
    for (int a = 0; a < 4 && o < len; a++) {
        const cost_group *q = &g->group[GRP_AX0 + a];
        if (q->n < 2)
            continue;
        o += (size_t)snprintf(out + o, len - o, "%s%s %.2f GB (%d ranks, %s)", sep,
                              x->l->kind == LAYOUT_TP ? tp_names[a] : names[a], by[GRP_AX0 + a] / 1e9, q->n,
                              q->k > 1 ? "network" : x->c->fabric.kind == FABRIC_PCIE ? "PCIe" : "NVLink");
        sep = ", ";
    }
    double flops = 0, t = 0;
    for (int i = 0; i < w.n_layers; i++) { /* the GEMMs as one rank runs them */
        const wl_layer *L = layout_layer(g, &w, i);
        for (int j = 0; j < L->n_gemm; j++) {
            const wl_gemm *q = &L->gemm[j];
            flops += L->count * 2 * q->m * q->n * q->k * q->batch;
            t += L->count * cost_gemm_time(x->cal, x->c, q, w.elem_bytes);
        }
    }
    if (o < len && t > 0)
        snprintf(out + o, len - o, "; GEMMs at %.0f%% of peak; %.1f GiB per GPU", 100 * flops / t / x->c->gpu.peak_flops,
                 x->mem_total / 1073741824.0);
    free(g);
}

/* AxoNN's gathered layer: its parameters over the X Y of the X Y Z shards (memory.c). */
static double axonn_gathered_mult(const spec_layout *l) { return l->grid[2]; }

/* Megatron-LM runs tp (--tensor-model-parallel-size); AxoNN only the ideal schedule (framework.c). */
const layout_kind_row layout_row_tp = {.check = tp_check, .check_model = tp_check_model, .build = lo_build_tensor,
                                       .replicas = tp_replicas, .shard = tp_shard, .candidates = tp_cands,
                                       .explain = tensor_explain, .frameworks = LR_FW(FW_MEGATRON), .overlap_opt = 1,
                                       .localize = tensor_localize};
const layout_kind_row layout_row_axonn = {.check = axonn_check, .check_model = axonn_check_model,
                                          .build = lo_build_tensor, .replicas = axonn_replicas, .shard = axonn_shard,
                                          .candidates = axonn_cands, .canon = axonn_canon, .explain = tensor_explain,
                                          .mem_gathered_mult = axonn_gathered_mult, .overlap_opt = 1,
                                          .localize = tensor_localize};

int lo_tp_comm_overlap_acts(const spec_layout *l) { return l->kind == LAYOUT_MEGATRON && l->sp && l->t > 1; }

void lo_tp_ub_mark(const spec_layout *l, const spec_training *t, wl_layer *lw, int n)
{
    const int atp = l->kind == LAYOUT_ZERO3 && l->atp && l->t > 1; /* async TP (atp_block) */
    const int on = tpo_on(l, t) || atp;
    for (int i = 0; i < n; i++) {
        lw[i].ub_tp = on && lw[i].kind == WL_BLOCK ? l->t : 0;
        lw[i].ub_atp = lw[i].ub_tp ? atp : 0;
    }
}

int lo_param_gather_acts(const spec_training *t, const spec_layout *l)
{
    return t->framework == FW_MEGATRON && (l->kind == LAYOUT_MEGATRON || l->kind == LAYOUT_TP) && l->zero1;
}
