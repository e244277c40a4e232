/* cp.c — context parallelism's two hooks (cp.h): one rank's share of the workload and the
 * ring exchange of K and V. Source: Transformer Engine's P2P context parallelism, as
 * Megatron-Core calls it for --context-parallel-size (cp_comm_type "p2p", the default),
 * NVIDIA/TransformerEngine@015d22571b332bc0c50890f8f7be9ee896336f05
 * transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py,
 * AttnFuncWithCPAndKVP2P:
 *   - the sequence is cut into 2 cp chunks, rank i holding chunks i and 2 cp - 1 - i (causal
 *     load balancing: every rank then has the same causal work; the forward asserts the local
 *     sequence is divisible by 2);
 *   - forward: cp steps; at step i the rank computes attention of its queries against the K/V
 *     it holds while it sends them to rank + 1 and receives the next from rank - 1 (isend /
 *     irecv on the cp group, the KV of one rank concatenated in one buffer): cp - 1 transfers of
 *     the local K and V, each overlapped with the previous step's attention; step 0 is the
 *     diagonal (causal over the local 2 chunks), the others non-causal over half the queries or
 *     half the keys, each the work of a causal attention of the local length;
 *   - backward: the same ring carrying K/V and, one step behind, the partial dK/dV (twice the
 *     forward's bytes), overlapped with the backward attention steps.
 * zero3:cp=C (torchtitan's fsdp2:dp=D,cp=C): PyTorch's context_parallel with torchtitan's default
 * rotate method "allgather" (pytorch/torchtitan@9dec370 torchtitan/config_manager.py,
 * --experimental.context_parallel_rotate_method, default 'allgather': the K / V shards
 * all-gathered after the first sub-SDPA), its SDPA backends limited to flash and
 * memory-efficient (torchtitan/utils.py get_train_context: sdpa_kernel([FLASH_ATTENTION,
 * EFFICIENT_ATTENTION]), cuDNN left as a to-do), so FA2 as the stack says: K / V at the width
 * SDPA gets them (torchtitan repeats GQA's to all heads), all-gathered beside the first step
 * only, forward and backward; the backward's dK / dV on a second ring in fp32, each transfer
 * beside the next step, the last exposed (torch_ring_item gives the code read). The same load balancing (round-robin
 * 2 cp chunks). zero3 also pays PyTorch's element-wise work around the steps (cp_torch_ring: fp32
 * output merges forward, fp32 dQ / dK / dV accumulation backward, the K / V and dK / dV
 * concatenations, the K / V contiguous() copies). The per-step attention calls are priced as
 * cp causal problems of the local length (cp_localize): so are their FLOPs (step 0 causal over
 * the local 2 chunks, the others non-causal over half the queries or half the keys, each the
 * work of a causal call of the local length), and so is their rate at these shapes: SDPA flash
 * on the lent H200, fwd + bwd d128, causal 32k 324 TFLOP/s against non-causal 16k 318
 * (bench/gpu-results/2026-11-27-h200/attention.json), within 2 %: no per-step kernel term.
 * The memory the rings hold while a block's attention runs: cp_*_ring_peak_bytes (below), which
 * model/memory adds once per rank.
 * Everything outside attention (QKV, projection, MLP, norms, the head) runs on the rank's
 * s / cp tokens with no communication of its own. Not modelled: the all-to-all (Ulysses) and
 * all-gather variants of cp_comm_type, hierarchical a2a+p2p, and the first step's diagonal
 * chunk running without a transfer beside it (the whole exchange is set beside the whole core). */
#include "cp.h"

#include <assert.h>

#include "layout_ops.h"

int cp_check_megatron(const spec_layout *l, int n, int g, const char *name, sc_err *err)
{
    if (l->cp <= 1)
        return 0;
    int pp = l->pp > 0 ? l->pp : 1, tc = l->t * l->cp;
    if (n % (tc * pp))
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: expected t*p*cp = %d to divide the %d GPUs", name, tc * pp, n);
    if (!(g % tc == 0 || tc % g == 0))
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "%s: a context-parallel group spans t*cp = %d ranks; expected a divisor or multiple of the %d "
                          "GPUs per node", name, tc, g);
    return 0;
}

int cp_check_zero3(const spec_layout *l, const spec_cluster *c, int n, int g, const char *name, sc_err *err)
{
    (void)c;
    /* cp ranks adjacent (torchtitan's mesh: cp inside dp_shard): a group inside a node or
     * spanning whole ones */
    if (l->dp && (long long)l->dp * l->cp != n)
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: expected dp x cp = %d GPUs, got %d x %d", name, n, l->dp,
                          l->cp);
    if (l->cp > 1 && (n % l->cp || !(g % l->cp == 0 || l->cp % g == 0)))
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "%s: expected cp dividing the %d GPUs and dividing or a multiple of the %d GPUs per node, "
                          "got %d", name, n, g, l->cp);
    return 0;
}

int cp_check_model(const spec_layout *l, const spec_model *m, const char *name, sc_err *err)
{
    if (l->cp > 1 && m->seq_len % (2 * l->cp))
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "%s: context parallelism cuts the sequence into 2 x cp = %d chunks; %s's sequence %d is not "
                          "divisible by it", name, 2 * l->cp, m->name, m->seq_len);
    return 0;
}

int cp_replicas(const spec_layout *l) { return l->cp > 1 ? l->cp : 1; }

static int is_core(const wl_gemm *g) { return wl_role_core(g->role); }

static void refresh_flops(wl_layer *L)
{
    L->fwd_flops = 0;
    for (int j = 0; j < L->n_gemm; j++) {
        const wl_gemm *g = &L->gemm[j];
        L->fwd_flops += 2.0 * g->m * g->n * g->k * g->batch;
    }
    L->bwd_flops = 2 * L->fwd_flops;
}

/* One layer's GEMMs on s / cp tokens: linear layers' rows / cp; attention's core as cp
 * problems of length s / cp (scores [s/cp x s/cp] x cp, context likewise): 1 / cp of the
 * sequence's s^2 work, the causal mask halving each as it halves the whole. */
static void split_gemms(wl_layer *L, double c)
{
    for (int j = 0; j < L->n_gemm; j++) {
        wl_gemm *g = &L->gemm[j];
        if (g->role == WL_G_SCORES) { /* [s x d] x [d x s] per head */
            g->m /= c;
            g->n /= c;
            g->batch *= c;
        } else if (g->role == WL_G_CONTEXT) { /* [s x s] x [s x d] per head */
            g->m /= c;
            g->k /= c;
            g->batch *= c;
        } else { /* qkv, proj, fc1 / gate_up, fc2, lm_head: one row per token */
            g->m /= c;
        }
    }
    refresh_flops(L);
}

void cp_localize(wl *w, int cp)
{
    if (cp <= 1)
        return;
    const double c = cp, e = w->elem_bytes, h = w->model.hidden, V = w->model.vocab;
    for (int i = 0; i < w->n_layers; i++) {
        wl_layer *L = &w->layer[i];
        double act0 = L->act_bytes;
        split_gemms(L, c);
        L->core_fwd_flops /= c;
        /* every kept tensor is per token, the unfused core's s^2 ones per (s/cp) x s */
        L->act_bytes /= c;
        L->ckpt_bytes /= c;
        L->op_act_bytes /= c;
        L->act_core_bytes /= c;
        /* per token, but for the per-parameter weight casts (autocast) and FP8's weight copy
         * (backward): every cp rank casts the same weights */
        const double pb = L->ew_param_bytes + L->fp8_param_bwd_bytes;
        L->ew_fwd_bytes = (L->ew_fwd_bytes - L->ew_param_bytes) / c + L->ew_param_bytes;
        L->ew_bwd_bytes = (L->ew_bwd_bytes - pb) / c + pb;
        L->core_ew_fwd_bytes /= c;
        if (L->kind == WL_EMBED) /* rows read, output written: per token */
            L->fwd_hbm_bytes /= c;
        else if (L->kind == WL_BLOCK) /* weights once, activations written and read (wl_build) */
            L->fwd_hbm_bytes -= 2 * (act0 - L->act_bytes);
        else /* head: its weights, then logits and input per token */
            L->fwd_hbm_bytes = V * h * e + (L->fwd_hbm_bytes - V * h * e) / c;
    }
    /* the unfused loss's fp32 logits are per token; Liger's fused loss keeps the head's whole
     * gradient [V, h] however few tokens a rank has (wl_logits_bytes): its chunk and per-token
     * parts follow the rank's s / cp tokens (a Megatron rank's vocabulary share kept as the
     * ratio) */
    if (w->fused_ce && w->tokens > 0)
        w->logits_bytes *= wl_logits_bytes(w->tokens / c, V, h, e, 1) / wl_logits_bytes(w->tokens, V, h, e, 1);
    else
        w->logits_bytes /= c;
    w->tokens /= c;
    w->hw_flops = 0; /* what one rank runs; model_flops stays the replica's */
    for (int i = 0; i < w->n_layers; i++) {
        const wl_layer *L = &w->layer[i];
        w->hw_flops += (L->fwd_flops + L->bwd_flops + wl_recompute_flops(L)) * L->count;
    }
}

double cp_core_fraction(const wl_layer *L)
{
    double core = 0, lin = 0;
    for (int i = 0; i < L->n_gemm; i++) {
        const wl_gemm *g = &L->gemm[i];
        double f = 2.0 * g->m * g->n * g->k * g->batch;
        if (is_core(g))
            core += L->causal ? f / 2 : f;
        else
            lin += f;
    }
    /* the backward (dgrad + wgrad, the core's four GEMMs) doubles both, the recompute adds one
     * forward of each: the ratio holds for every pass */
    return core + lin > 0 ? core / (core + lin) : 0;
}

/* zero3 / fsdp2 (PyTorch's context_parallel, torchtitan's rotate method "allgather"), read in
 * torch/distributed/tensor/experimental/_attention.py (stored copy pytorch/pytorch@0123248a,
 * 2025; the Dec 2024 torch 1963fc8 the torchtitan rows ran is not stored [assumed the same]):
 *   - the K / V the ring moves are what SDPA is called with: torchtitan repeats GQA's K and V to
 *     all query heads before F.scaled_dot_product_attention (pytorch/torchtitan@9dec370
 *     torchtitan/models/llama/model.py L201-209, repeat_kv then SDPA), so their width is
 *     heads x head dim / t where the workload repeats them (wl.kv_repeat), kv_heads' otherwise;
 *   - forward (and checkpointing's recomputed forward), _templated_ring_attention: the
 *     _AllGatherRotater all-gathers the local K / V once, at step 0 (ft_c.all_gather_tensor, async),
 *     and the first next_buffer() at step 1 waits for it: beside step 0's SDPA only, 1 / cp of
 *     the core;
 *   - backward, _templated_ring_attention_backward: K / V all-gathered again the same way (beside
 *     backward step 0), and dK / dV on a second ring, dkv_rotater = _AllToAllRotater (permute_tensor
 *     to rank + 1) in fp32 (accum_dtype float32: _ContextParallelOptions.convert_to_f32 = True),
 *     cp transfers of the local 2 x T x kv x 4 B: the one sent after step i is waited after step
 *     i + 1's SDPA (next_buffer), so transfers 0..cp-2 run beside backward steps 1..cp-1, and the
 *     last, sent after step cp - 1, is waited right after the loop (dkv_rotater.next_buffer()
 *     .to(key.dtype)) with nothing beside it: a tail (lo_item.inline_tail).
 * As collectives over the cp group: a P2P transfer of B bytes to the next rank is priced as a
 * ring all-gather moving B per rank, i.e. of cp x B / (cp - 1) in all; the cp - 1 overlapped
 * transfers together are one all-gather of cp x B (the dK / dV of the whole sequence in fp32).
 * Each is priced beside the step(s) it runs beside, not in one window per copy (layout.h) that
 * pooled them until cpdead (cp27's known limit: the recompute's all-gather, which its step 1
 * waits for, hid behind the whole backward core; on the 405B 4-D rows ~45 ms against a ~16 ms
 * first step, ~30 ms per layer and micro-batch uncharged): torch_ring_item pairs each with its
 * share of the core (lo_pair), so what step 0 does not hide is exposed, the forward's, the
 * recompute's and the backward's alike. */
/* The cp group's collectives run on its own communicator's stream (ProcessGroupNCCL: a stream
 * per communicator), not behind FSDP2's all-gathers or the tensor-parallel group's tail: stream 2,
 * HSDP's replica stream (framework.c), which no context-parallel layout uses (cp_check_zero3:
 * dp x cp is every GPU, no replica groups). */
static lo_coll on_cp_stream(lo_coll c)
{
    c.stream = 2;
    return c;
}

/* The width of the K / V SDPA is called with on a tensor-parallel rank (t ranks): all query heads
 * where the workload repeats GQA's (wl.kv_repeat, torchtitan), kv_heads' otherwise, x head dim. */
static double sdpa_kv_width(const wl *w, double t)
{
    const spec_model *m = &w->model;
    return (w->kv_repeat ? m->heads : m->kv_heads) * ((double)m->hidden / m->heads) / t;
}

/* Pair inline collective `coll` (its `share` of it, relative to the item's other pairs of it)
 * with attention's core: beside (chunks - bare) / chunks of the pass's core time (lo_pair;
 * analytic.c pair_hidden, cost_layer_core_time), its excess exposed. */

/* Each collective of the ring beside the step(s) the code gives it (cp.c's read above), by a
 * pair with the core (lo_item_pair, role WL_G_SCORES: the core's, fused or its two GEMMs): the all-gathers beside step 0 of their pass only (1 / cp of
 * its core: chunks cp, cp - 1 bare), the part of each that step 0 does not hide exposed before
 * step 1 (the forward's, the recompute's and the backward's alike); the cp - 1 overlapped dK /
 * dV transfers beside backward steps 1..cp-1 ((cp - 1) / cp of the backward core: 1 bare).
 * The three of a backward share one inline collective (LO_MAX_INLINE: beside async TP's
 * three), split by bytes: K / V in e-byte elements, dK / dV in fp32 (shares e : e : 4). */
/* Whether checkpointing's recompute calls the ring again: where it runs attention's core again
 * (wl_recompute_flops' rule: full checkpointing; op-like: the core's op_rec, 0 where the fused
 * call is saved, as torchtitan's op SAC saves SDPA; selective: the unfused core only). */
static int core_rerun(const wl_layer *L)
{
    if (CKPT_IS_OPLIKE(L->ckpt)) {
        for (int i = 0; i < L->n_gemm; i++)
            if (L->gemm[i].role == WL_G_SCORES)
                return L->op_rec[i] > 0;
        return 0;
    }
    return L->ckpt == CKPT_FULL || (L->ckpt != CKPT_NONE && !L->flash);
}

static void torch_ring_item(const lo_graph *g, const wl *lw, const wl_layer *L, lo_item *it)
{
    const spec_layout *l = &g->layout;
    const double t = l->t > 0 ? l->t : 1, cp = l->cp;
    const double kv = sdpa_kv_width(lw, t);
    const double S = 2.0 * lw->tokens * cp * kv * g->elem_bytes; /* K / V all-gather's output */
    const int c = l->cp, k = it->n_inline, e = g->elem_bytes >= 1 ? (int)g->elem_bytes : 1;
    if (it->pass == LO_FWD) {
        it->inl[it->n_inline++] = on_cp_stream(lo_coll_make(COLL_ALLGATHER, GRP_AX1, S, 1));
        lo_item_pair(it, k, WL_G_SCORES, LO_PAIR_FWD, 1, c, c - 1);
        return;
    }
    const int rec = it->recompute && core_rerun(L) ? 1 : 0;
    const double D = 2.0 * lw->tokens * cp * kv * 4.0; /* dK / dV of the sequence, fp32 */
    const double last = D / (cp - 1);                  /* one transfer of the local share */
    /* two slots: cp_item asserted them */
    it->inl[it->n_inline++] = on_cp_stream(lo_coll_make(COLL_ALLGATHER, GRP_AX1, S * (1 + rec) + D, c + rec));
    if (rec)
        lo_item_pair(it, k, WL_G_SCORES, LO_PAIR_REC, e, c, c - 1);
    lo_item_pair(it, k, WL_G_SCORES, LO_PAIR_DGRAD, e, c, c - 1);
    lo_item_pair(it, k, WL_G_SCORES, LO_PAIR_DGRAD, 4, c, 1);
    /* the last transfer, waited after the loop with nothing beside it */
    it->inline_tail |= 1u << it->n_inline;
    it->inl[it->n_inline++] = on_cp_stream(lo_coll_make(COLL_ALLGATHER, GRP_AX1, last, 1));
}

void cp_item(const lo_graph *g, const wl *lw, lo_item *it, int first_step)
{
    const spec_layout *l = &g->layout;
    const wl_layer *L = &lw->layer[it->layer];
    if (l->cp <= 1 || L->kind != WL_BLOCK) /* cp: megatron's and zero3's key */
        return;
    /* room for the ring (torch_ring_item: 2): the TP items before it add at most 4 (tpo_block)
     * or 3 (atp_block) of LO_MAX_INLINE's 6 (lo_graph.h) */
    assert(it->n_inline + 2 <= LO_MAX_INLINE);
    if (first_step) {
        torch_ring_item(g, lw, L, it);
        return;
    }
    const spec_model *m = &lw->model;
    const double t = l->t > 0 ? l->t : 1;
    /* K and V of the whole sequence for this rank's key/value heads (kv_heads / t): the
     * all-gather's output; its ring moves (cp - 1) / cp of it, the cp - 1 transfers of the
     * local K and V that the P2P ring makes */
    const double kv = (double)m->kv_heads * (m->hidden / m->heads) / t;
    const double S = 2.0 * lw->tokens * l->cp * kv * g->elem_bytes;
    /* forward: K/V once; backward: K/V and dK/dV; a recomputed forward: K/V again */
    int n = it->pass == LO_FWD ? 1 : 2 + (it->recompute ? 1 : 0);
    lo_coll ring = lo_coll_make(COLL_ALLGATHER, GRP_AX1, S * n, n);
    it->inl[it->n_inline++] = ring;
    /* beside attention's core (cp.h): Transformer Engine's P2P ring beside every step; the
     * tensor-parallel collectives of the same copy keep their own share, the two added
     * (optimistic where the ring is shorter than the core and the tensor-parallel ones are
     * exposed: the core's rest then hides them too) */
    double f = it->inline_overlap + cp_core_fraction(L);
    it->inline_overlap = f < 1 ? f : 1;
}

/* PyTorch's ring attention, torch/distributed/tensor/experimental/_attention.py (stored copy at
 * pytorch/pytorch@0123248a, 2025; the Dec 2024 file torchtitan's rows ran is not stored [assumed
 * the same]): _ContextParallelOptions convert_to_f32 = True, enable_load_balance = True.
 * Forward (_templated_ring_attention), per step i of cp: _SDPAMerger.step casts the step's output
 * to fp32 (read e, write 4 per element); from step 1, _merge_one's out - sigmoid(lse' - lse) *
 * (out - block_out) is three fp32 element-wise kernels (12 + 8 + 12 = 32 B per element); with
 * load balancing, steps i > rank run half the queries (partial: the three kernels over half,
 * then _partial_update's torch.cat rewrites the whole output, 8 B per element): on average over
 * the ranks half the steps from 1 on are partial, (32 + (16 + 8)) / 2 = 28 B and a cast of
 * (e + 4) * 3/4; results() casts back (4 + e); steps 0..cp-2 concatenate K and V for the
 * rotation (torch.cat of both flattened: read + write e each). Backward
 * (_templated_ring_attention_backward): fp32 zeros for dQ, dK, dV; dQ += the step's (read 4 + e,
 * write 4) or, on partial steps, the add over half and the cat of the whole (8 + e) / 2 + 8;
 * dK and dV the same from step 1 on with partial on steps i <= rank (step 0 a plain add); every
 * step concatenates dK and dV in fp32 for the next rank (read + write 4 each); steps 0..cp-2 the
 * K / V cat as forward; at the end dQ and the received dK / dV cast to e bytes. Both directions
 * open with key.contiguous() and value.contiguous() (kept there for the loss curve's sake, its
 * comment says): torchtitan hands SDPA K and V as transposed views of
 * [batch, seq, heads, head dim] (pytorch/torchtitan@9dec370 torchtitan/models/llama/model.py
 * L204-206), so each is copied (read + write e): with the K / V cats, cp copies of both per call
 * (n + 1 below), two more launches. The log-sum-exp terms (one value per row) are left out. */
double cp_torch_ring_fwd_bytes(double T, double q, double kv, double e, int cp)
{
    if (cp <= 1)
        return 0;
    const double n = cp - 1, acc = 4.0 + e;
    return T * q * (acc + n * (0.75 * acc + 28.0) + acc) + (n + 1) * 4.0 * e * T * kv;
}

double cp_torch_ring_bwd_bytes(double T, double q, double kv, double e, int cp)
{
    if (cp <= 1)
        return 0;
    const double n = cp - 1, add = 8.0 + e, part = add / 2 + 8.0, avg = (add + part) / 2;
    double dq = 4.0 + add + n * avg + (4.0 + e);               /* zeros, step 0, steps 1.., cast */
    double dkv = 2 * (4.0 + add + n * avg + 8.0 + (4.0 + e)) + /* per tensor, as dq; + its cat */
                 n * 2 * 8.0;                                   /* the remaining cats: 8 each  */
    return T * q * dq + T * kv * dkv + (n + 1) * 4.0 * e * T * kv;
}

void cp_torch_ring(wl *w, int cp) { cp_torch_ring_tp(w, cp, 1); }

void cp_torch_ring_tp(wl *w, int cp, int t)
{
    if (cp <= 1)
        return;
    const spec_model *m = &w->model;
    const double tp = t > 1 ? t : 1; /* a tensor-parallel rank's attention: heads / t (cp_item's kv) */
    const double d = m->hidden / m->heads, q = m->heads * d / tp, e = w->elem_bytes;
    const double kv = sdpa_kv_width(w, tp);
    for (int i = 0; i < w->n_layers; i++) {
        wl_layer *L = &w->layer[i];
        if (L->kind != WL_BLOCK || !L->flash)
            continue;
        /* per step: the cast, the merge's kernels and the cat (forward); the adds and cats
         * (backward): 6 launches each way, and the two contiguous() copies [counted from the
         * code above] */
        L->ew_fwd_bytes += cp_torch_ring_fwd_bytes(w->tokens, q, kv, e, cp);
        L->ew_bwd_bytes += cp_torch_ring_bwd_bytes(w->tokens, q, kv, e, cp);
        L->ew_fwd_kernels += 6 * cp + 2;
        L->ew_bwd_kernels += 6 * cp + 2;
    }
}

/* Memory of the ring beyond a plain attention call (cp.h), per rank, for the attention in
 * flight. The call's own outputs (its output and log-sum-exp, the backward's dQ / dK / dV) and
 * saved inputs are what a plain call has, in the block's stash already (workload.c; repeat_kv's
 * all-head K / V where wl.kv_repeat): counted are the other buffers live at the ring's peak,
 * those every execution of the code must hold at once (a collective's input and output are
 * distinct buffers; an accumulator lives across the steps).
 *
 * PyTorch's context_parallel (the stored _attention.py at pytorch/pytorch@0123248a, cp.c's note
 * above; torch 1963fc8 of the rows not stored [assumed the same]), at the width SDPA gets K / V:
 *   forward, _templated_ring_attention: _AllGatherRotater.exchange_buffers all-gathers the local
 *     K / V once into _aggregated_buffer (cp x the local 2 T kv e: the whole sequence's), which
 *     next_buffer only chunks, so it lives to the loop's end; _SDPAMerger keeps the running
 *     output and log-sum-exp in fp32 (convert_to_f32: 4 T q + 4 T hq);
 *   backward, _templated_ring_attention_backward: the same all-gather again (kv_rotater);
 *     grad_query = zeros_like(query, dtype=float32) (4 T q, accumulated over the steps); dK / dV
 *     in fp32 on the dkv_rotater (_AllToAllRotater: permute_tensor, an all_to_all's input and
 *     output): the torch.cat of grad_key and grad_value sent (2 T kv x 4) and the buffer
 *     received (as many): 16 T kv, beside the gathered K / V while steps remain.
 * The backward's is the larger. Not counted, as what eager execution holds beyond that: the key /
 * value contiguous() copies until step 1, the K / V torch.cat that feeds the all-gather (and its
 * repeats at steps 1..cp-2), the dK / dV accumulated into the received buffer beside the new cat
 * (8 T kv more), _merge_one's fp32 temporaries (out - block_out and the product: 8 T q more),
 * the backward's one-value-a-row log-sum-exp chunk. torchtitan compiles each block whole
 * (pytorch/torchtitan@9dec370 torchtitan/parallelisms/parallelize_llama.py L297-304,
 * torch.compile(transformer_block, fullgraph=True): the ring, called from the block's SDPA, is
 * traced with it), and whether these live then is the compiler's fusion and buffer reuse. */
double cp_torch_ring_peak_bytes(double T, double q, double kv, double hq, double e, int cp)
{
    if (cp <= 1)
        return 0;
    const double gathered = 2.0 * cp * T * kv * e; /* _AllGatherRotater._aggregated_buffer */
    const double fwd = gathered + 4.0 * T * (q + hq); /* _SDPAMerger's fp32 _out, _lse */
    const double bwd = gathered + 4.0 * T * q         /* grad_query, fp32 */
                       + 2 * 2.0 * T * kv * 4.0;      /* dK / dV fp32: sent cat + received */
    return fwd > bwd ? fwd : bwd;
}

/* Transformer Engine's P2P ring, AttnFuncWithCPAndKVP2P
 * (NVIDIA/TransformerEngine@015d22571b332bc0c50890f8f7be9ee896336f05 transformer_engine/pytorch/
 * attention/dot_product_attention/context_parallel.py), 16-bit path, K / V at kv_heads' width:
 *   forward: p2p_comm_buffers[0] = torch.cat of the local k, v (L703-707) and at each step
 *     p2p_comm_buffers[i + 1] = torch.empty_like(...) to receive into (L723): the list keeps all
 *     cp, the whole sequence's K / V (2 cp T kv e), until the forward returns (the last is saved,
 *     L1341, in place of the plain call's k, v); out_per_step and softmax_lse_per_step (L693-694)
 *     keep every step's output and fp32 log-sum-exp to the correction loop after the ring
 *     (L1248-1295), which builds the output (the call's own: flash_attn_fwd_out_correction_init,
 *     L97-107, returns the step's dtype, 16-bit here; fp32 only under FP8) beside softmax_lse
 *     (L1210, a clone); on rank cp - 1 every step is whole (i <= rank): cp e T q and
 *     (cp + 1) x 4 T hq;
 *   backward (not FP8): two double buffers torch.empty((2, *kv.shape)) (L1620-1624), K / V and
 *     dK / dV each, sent and received, of which one dK / dV half ends as the call's dK / dV:
 *     3 x 2 T kv e; each step's dq_, dkv_ (torch.empty_like(q_), (kv), e.g. L1785-1786: e T q +
 *     2 T kv e) live while they are added into dq_buffer (L1619, the call's dQ) and the dK / dV
 *     being passed on: e T q + 8 T kv e.
 * The larger of the two (the backward's at cp = 2 unless q >= 4 kv; the forward's as cp grows). */
double cp_te_ring_peak_bytes(double T, double q, double kv, double hq, double e, int cp)
{
    if (cp <= 1)
        return 0;
    const double fwd = 2.0 * cp * T * kv * e      /* p2p_comm_buffers */
                       + cp * e * T * q           /* out_per_step */
                       + (cp + 1) * 4.0 * T * hq; /* softmax_lse_per_step + softmax_lse */
    const double bwd = e * T * q + 2.0 * T * kv * e /* the step's dq_, dkv_ */
                       + 3 * 2.0 * T * kv * e;      /* p2p_comm_buffers but the final dK / dV */
    return fwd > bwd ? fwd : bwd;
}

double cp_ring_mem_bytes(const wl *lw, const spec_layout *l)
{
    int blocks = 0;
    for (int i = 0; i < lw->n_layers; i++)
        blocks += lw->layer[i].kind == WL_BLOCK;
    if (l->cp <= 1 || !blocks)
        return 0;
    const spec_model *m = &lw->model;
    const double t = l->t > 0 ? l->t : 1, d = (double)m->hidden / m->heads, hq = m->heads / t, q = hq * d;
    if (l->kind == LAYOUT_ZERO3) { /* K / V as SDPA gets them (cp_item's width) */
        const double kv = (lw->kv_repeat ? m->heads : m->kv_heads) * d / t;
        return cp_torch_ring_peak_bytes(lw->tokens, q, kv, hq, lw->elem_bytes, l->cp);
    }
    return cp_te_ring_peak_bytes(lw->tokens, q, m->kv_heads * d / t, hq, lw->elem_bytes, l->cp);
}
