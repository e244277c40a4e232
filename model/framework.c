/* framework.c — per-framework schedule parameters (see framework.h for what and sources). */
#include "framework.h"
#include "ds_coordinator.h"
#include "layout_kind.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The ZeRO-3 family: parameters gathered layer by layer (the kind's row, layout_row.h). */
static int zero3_family(spec_layout_kind k)
{
    const layout_kind_row *r = layout_kind_row_of(k);
    return r && r->gathers_params;
}

/* Whether layout l is DeepSpeed's ZeRO stage 3: parameters partitioned, ZeRO-3's kinds (the
 * kinds table's gathers_params) and zero3-offload (stage 3 with offload_param / offload_optimizer) */
static int ds_stage3(const spec_layout *l)
{
    return zero3_family(l->kind) || l->kind == LAYOUT_ZERO3_OFFLOAD;
}

/* The kind's row, or an empty one (nothing said) for a kind outside the table. */
static const layout_kind_row *row_of(const spec_layout *l)
{
    static const layout_kind_row none = {0};
    const layout_kind_row *r = layout_kind_row_of(l->kind);
    return r ? r : &none;
}

int fw_submodules(const wl_layer *L)
{
    if (L->kind != WL_BLOCK)
        return 1;
    int n = 2; /* the two norms */
    for (int i = 0; i < L->n_gemm; i++)
        if (!wl_role_core(L->gemm[i].role))
            n++;
    return n;
}

int fw_ds_before(const spec_training *t, int v)
{
    return t->framework == FW_DEEPSPEED && t->framework_version > 0 && t->framework_version < v;
}

double fw_model_tensors(const wl *w)
{
    double n = 0;
    for (int i = 0; i < w->n_layers; i++)
        n += (double)fw_param_tensors(w, &w->layer[i]) * w->layer[i].count;
    return n;
}

/* DeepSpeed's fp16 (and bf16: below) ZeRO-1/2 step, before the optimizer, walks the gradients one tensor at a
 * time twice (overflow check, then the norm for clipping), each tensor a cast, a reduction
 * and a host round trip (float() / .item()), so each waits for the GPU:
 *  - ZeRO-1 before v0.4.0 (stage1.py at v0.3.0 L616, L636 -> runtime/utils.py L91-124
 *    CheckOverflow.has_overflow_serial: float(x.float().sum()); L154-195 get_grad_norm:
 *    p.grad.float().norm().item()): every tensor of the model, 2 + 4 + 4 = 10 B per element
 *    each (read fp16, write fp32, read fp32); and reduce_scatter_gradients (L530-610) copies
 *    the gradients into per-rank flat sub-partitions, flattens that list for dist.reduce_scatter
 *    and scales every partition by 1/n: three read + write passes, 12 B per element;
 *  - stage2.py (ZeRO-2 from v0.3.0; ZeRO-1 too from v0.4.0, partition_grads off): over the
 *    rank's own partition: has_overflow_partitioned_grads_serial (v0.3.0 L1521; 9caa74e5
 *    (0.5.7) L1798, step's check_overflow() defaults to it) float(x.float().sum()), 10 B per
 *    element; get_grad_norm_direct (v0.3.0 L1250; 9caa74e5 L1506) g.double().norm(2).item(),
 *    2 + 8 + 8 = 18 B per element; tensors in a partition: T / n + 1 (one split at its edge;
 *    T on one rank, where the loops run as well).
 * The norm's loop left the host with v0.13.2 (61daaa1e), the overflow's with v0.13.3
 * (1c9e5ef2). bf16 runs stage_1_and_2.py as well (engine.py v0.11.1 L1151-1153: BF16_Optimizer,
 * not read, only for ZeRO-1 with grad_accum_dtype fp32, which is not its default under ZeRO,
 * get_data_types L873-877; no shardcast key says it): its step checked overflow for every dtype
 * until v0.11.2 (244040c18, #4512: `if self.dtype == torch.float16`), the norm as fp16's.
 * Any 16-bit precision before v0.12.4: the updated parameters are all-gathered into a list of
 * per-rank shards (stage1.py v0.3.0 L696-700; stage2.py 9caa74e5 L1716-1748; utils.py
 * all_gather_dp_groups from 56c52238, v0.6.2), which torch's NCCL process group gathers into a
 * flat buffer and copies out (read + write 2e per parameter), "additional ... D2D operations"
 * that fd0a52c1 (#4705, v0.12.4) removed with all_gather_into_tensor. */
void fw_ds_step_checks(const spec_training *t, const spec_layout *l, const wl *w, int n, double *syncs, double *bytes)
{
    *syncs = *bytes = 0;
    const int z1 = l->kind == LAYOUT_ZERO1, z2 = l->kind == LAYOUT_ZERO2;
    if (!(z1 || z2) || n < 1 || SPEC_PREC_IS_FP32(t->precision))
        return;
    const double T = fw_model_tensors(w), psi = w->params;
    if (n > 1 && fw_ds_before(t, FW_DS_BUCKET_AR)) /* one rank: no all-gather (layout_dp.c) */
        *bytes += 2 * w->elem_bytes * psi; /* the gathered list copied out */
    const int fp16 = t->precision == PREC_FP16, bf16 = t->precision == PREC_BF16;
    const int ovf = fw_ds_before(t, fp16 ? FW_DS_OVF_DEVICE : FW_DS_BF16_NO_OVF);
    const int norm = fw_ds_before(t, FW_DS_NORM_DEVICE);
    if (!(fp16 || bf16) || !(ovf || norm))
        return;
    if (z1 && fw_ds_before(t, FW_DS_Z1_REFRESH)) {
        if (!fp16) /* stage1.py: no bf16 */
            return;
        *syncs = 2 * T;
        *bytes += (10 + 10 + 12) * psi;
        return;
    }
    const double part = l->p ? l->p : n; /* the optimizer's partition */
    *syncs = (ovf + norm) * (T / part + (part > 1)); /* the loops run on one rank too */
    *bytes += (10 * ovf + 18 * norm) * psi / part;
}

/* The trainer's own step work outside DeepSpeed (whose engine unscales and clips itself; Hugging
 * Face's Trainer skips its clip under DeepSpeed), per rank, on the gradients it holds (psi / shard):
 *  - torch.cuda.amp fp16 (autocast): GradScaler.unscale_ walks every gradient once with
 *    torch._amp_foreach_non_finite_check_and_unscale_ (read + write the fp32 gradient, 8 B per
 *    element), and GradScaler.step reads found_inf on the host (`sum(v.item() for v in
 *    optimizer_state["found_inf_per_device"].values())`): one round trip (pytorch/pytorch v1.10.0
 *    torch/cuda/amp/grad_scaler.py, _unscale_grads_ and _maybe_opt_step); transformers v4.12.0
 *    Trainer.train calls scaler.unscale_ before clipping under amp;
 *  - grad_clip: torch's clip_grad_norm_ before 2.0 (v1.10.0 torch/nn/utils/clip_grad.py: one
 *    torch.norm per gradient, torch.stack and the norm of the norms, clamp, then one mul_ per
 *    gradient; the foreach path came with v2.0): 2 launches per tensor + 3, and a read (norm)
 *    plus a read + write (mul_) of each gradient, 3 x its bytes per element (4 under amp, whose
 *    parameters and so gradients are fp32). transformers v4.12.0 TrainingArguments.max_grad_norm
 *    defaults to 1.0: its Trainer clips every step unless DeepSpeed runs. Its foreach form
 *    (SPEC_CLIP_FOREACH: clip_grad_norm_(..., foreach=True), torchtitan@157a12c train.py L295-296,
 *    @d4c86e3 torchtitan/utils.py L354-412 via get_total_norm / clip_grads_with_norm_) reads and
 *    writes the same bytes in two multi_tensor_apply passes (_foreach_norm, _foreach_mul_), each
 *    launching once per 320 blocks of 65536-element chunks (at least one chunk per tensor) or 110
 *    tensors, whichever fills first, plus
 *    stack, vector_norm, add, div and clamp: 5 (pytorch/pytorch@008356ca aten/src/ATen/native/
 *    cuda/MultiTensorApply.cuh kChunkSize, depth_to_max_blocks / _tensors of the 4 KB-argument form; CUDA >=
 *    12.1 with a driver >= 530 takes the 32 KB form, 2240 blocks: 7x fewer launches);
 *  - ddp_bucket_copy: torch DistributedDataParallel with gradient_as_bucket_view false (its
 *    default, torch/nn/parallel/distributed.py, v1.10.0 to today) copies each gradient into its
 *    bucket, scaled by 1/world on the way (Reducer::mark_variable_ready_dense: at::mul_out(
 *    bucket_view, grad, 1/div_factor)), and after the all-reduce copies the bucket back into the
 *    gradient (finalize_bucket_dense -> copy_bucket_to_grad): a read and a write each way, 4 x the
 *    gradient's bytes per element (torch/csrc/distributed/c10d/reducer.cpp, BucketReplica form of
 *    v1.9/v1.10 and pytorch/pytorch@ad78a7b3 alike). Once per step under the Hugging Face
 *    Trainer, whose no_sync skips the hooks on the micro-steps before the boundary. Only the
 *    plain-PyTorch DDP layout (framework ideal) on more than one rank: fsdp's ddp is FSDP
 *    NO_SHARD (its own gradient path), DeepSpeed and Megatron reduce from their own buffers.
 * The syncs go into *syncs, HBM bytes into *bytes, launches into *launches (added to the step's). */
void fw_trainer_step(const spec_training *t, const spec_layout *l, const wl *w, int n, double shard, double *syncs,
                     double *bytes, double *launches)
{
    *syncs = *bytes = *launches = 0;
    if (t->framework == FW_DEEPSPEED) /* (fp32 / tf32: no GradScaler below, the clip on 4 B) */
        return;
    const int amp = t->autocast > 0;
    if (t->ddp_bucket_copy > 0 && l->kind == LAYOUT_DDP && n > 1 && t->framework == FW_IDEAL)
        *bytes += 4 * (amp ? 4.0 : w->elem_bytes) * w->params;
    const double part = shard > 1 ? shard : 1;
    double s, b, k;
    fw_trainer_step_shard(t, w->elem_bytes, w->params / part, fw_model_tensors(w) / part + (part > 1), &s, &b, &k);
    *syncs += s, *bytes += b, *launches += k; /* (one split at a shard's edge above) */
}

/* Megatron's optimizer step before the update, per rank over the fp32 main gradients it holds
 * (the rank's shard under the distributed optimizer, else its stage's t-th):
 *  - fp16 loss scaling: MixedPrecisionOptimizer._unscale_main_grads_and_check_for_nan runs
 *    torch._amp_foreach_non_finite_check_and_unscale_ over the main grads (read + write fp32,
 *    8 B per element), all-reduces found_inf over the model-parallel group and reads it on the
 *    host (`self.found_inf.item() > 0`): one round trip (NVIDIA/Megatron-LM@71371b4e14975a62cd58
 *    4dd79920f9426cc93c18 megatron/core/optimizer/optimizer.py; megatron/optimizer/optimizer.py
 *    of 2021 the same); bf16 and fp32 run no grad scaler (grad_scaler None);
 *  - the gradient clip, on by default (megatron/training/arguments.py --clip-grad default 1.0,
 *    NVIDIA/Megatron-LM@307dcf37f03d44da131ba21999278abe4112d2ad; -1 here, unset, is that
 *    default; the sc21 scripts pass --clip-grad 1.0): get_grad_norm_fp32 (NVIDIA/Megatron-LM@
 *    0293807e53192713996ca335c74025d6d298b01a megatron/core/optimizer/clip_grads.py L55) reads
 *    every main grad once with multi_tensor_l2norm (4 B per element), all-reduces the norm over
 *    the grad-stats group (model parallel, the whole world under the distributed optimizer) and,
 *    with apex's multi_tensor_scale, reads it on the host (`total_norm.item()`): one round trip.
 *    clip_grad_by_total_norm_fp32's multi_tensor_scale runs only when the norm exceeds max_norm
 *    (`elif clip_coeff < 1.0`): data-dependent, not counted. The one-float all-reduces' network
 *    latency is not counted either (only the round trip that waits for them). */
static void mg_step_shard(const spec_training *t, double psi, double *syncs, double *bytes)
{
    if (t->precision == PREC_FP16) {
        *bytes += 8 * psi;
        *syncs += 1;
    }
    if (t->grad_clip != 0) {
        *bytes += 4 * psi;
        *syncs += 1;
    }
}

void fw_trainer_step_shard(const spec_training *t, double elem_bytes, double psi, double tensors, double *syncs,
                           double *bytes, double *launches)
{
    *syncs = *bytes = *launches = 0;
    if (t->framework == FW_DEEPSPEED)
        return;
    if (t->framework == FW_MEGATRON) {
        mg_step_shard(t, psi, syncs, bytes);
        return;
    }
    const int amp = t->autocast > 0;
    if (amp && t->precision == PREC_FP16) {
        *bytes += 8 * psi;
        *syncs += 1;
    }
    if (t->grad_clip > 0) /* the same three passes over the gradient, loop or foreach */
        *bytes += 3 * (amp ? 4.0 : elem_bytes) * psi;
    if (t->grad_clip == SPEC_CLIP_FOREACH)
        *launches += 2 * fmax(ceil((psi / 65536 + tensors) / 320), ceil(tensors / 110)) + 5;
    else if (t->grad_clip > 0)
        *launches += 2 * tensors + 3;
}

/* Adds a parameter of n elements to sizes[*k] when DeepSpeed partitions it (>= the threshold). */
static void fetch_add(double n, double thr, double *sizes, int *k)
{
    if (n >= thr)
        sizes[(*k)++] = n;
}

/* The linear layers' weights are the block's partitioned parameters: q, k, v as separate
 * nn.Linear modules (BERT, LLaMA, OPT in Hugging Face; a fused qkv GEMM here), o, the MLP's
 * (gate and up separate under SwiGLU); norms (2h) and biases (<= f) stay below 1e5 elements at
 * every shape shardcast ships (h, f < 1e5). Megatron-DeepSpeed (training.ds_mpu) builds q, k
 * and v as one ColumnParallelLinear, query_key_value: one fetch (deepspeedai/Megatron-DeepSpeed
 * @f4157bea megatron/model/transformer.py L580; dense L632, dense_h_to_4h L117, dense_4h_to_h
 * L151: four fetches per block). */
int fw_fetches(const spec_training *t, const wl *w, const wl_layer *L, double *sizes)
{
    const double thr = t->persist_threshold > 0 ? t->persist_threshold : FW_DS_PERSIST;
    const spec_model *m = &w->model;
    const double h = m->hidden, kv = m->heads > 0 ? m->kv_heads * (h / m->heads) : h;
    int k = 0;
    switch (L->kind) {
    case WL_EMBED:
        fetch_add(m->vocab * h, thr, sizes, &k);
        if (m->learned_positions)
            fetch_add(m->seq_len * h, thr, sizes, &k);
        return k;
    case WL_HEAD:
        if (!m->tied_embeddings)
            fetch_add(m->vocab * h, thr, sizes, &k);
        return k;
    default: break;
    }
    for (int i = 0; i < L->n_gemm; i++) {
        const wl_gemm *g = &L->gemm[i];
        if (g->role == WL_G_QKV && t->ds_mpu > 0) {
            fetch_add(h * h + 2 * h * kv, thr, sizes, &k);
        } else if (g->role == WL_G_QKV) {
            fetch_add(h * h, thr, sizes, &k);
            fetch_add(h * kv, thr, sizes, &k);
            fetch_add(h * kv, thr, sizes, &k);
        } else if (g->role == WL_G_GATE_UP) {
            fetch_add(g->n * g->k / 2, thr, sizes, &k);
            fetch_add(g->n * g->k / 2, thr, sizes, &k);
        } else if (!wl_role_core(g->role)) {
            fetch_add(g->n * g->k, thr, sizes, &k);
        }
    }
    return k;
}

static int ds_one_group(const spec_training *t, const spec_layout *l);

const char *fw_describe(const spec_training *t, const spec_layout *l, const wl *w, char *buf, size_t n)
{
    buf[0] = 0;
    fw_sched f;
    if (t->framework == FW_MEGATRON && zero3_family(l->kind)) {
        fw_schedule(t, l, w, &f);
        snprintf(buf, n,
                 "Megatron-FSDP (optim_grads_params): gradients reduce-scattered every micro-step on a side "
                 "stream, all-gathers prefetched %d block(s) ahead (%.0fe8 elements)",
                 f.prefetch, MG_FSDP_PREFETCH_ELEMS / 1e8);
        return buf;
    }
    if (t->framework != FW_DEEPSPEED)
        return buf;
    fw_schedule(t, l, w, &f);
    char ver[24], num[16];
    if (t->framework_version)
        snprintf(ver, sizeof ver, "v%s", spec_version_str(t->framework_version, num, sizeof num));
    else
        snprintf(ver, sizeof ver, "today's");
    const double e = w->elem_bytes;
    const layout_kind_row *r = row_of(l);
    /* a prefetch depth only where parameters are sharded and gathered before use (ZeRO-3's
     * kinds, zero3-offload: the kinds table's sharded); ZeRO-1/2 and zero2-offload keep every
     * parameter on every GPU, nothing to prefetch (zero3-offload is stage 3, not "ZeRO-1/2") */
    spec_layout_states st;
    spec_layout_states_of(l, 1, &st);
    char pf[40] = "";
    if (st.sharded)
        snprintf(pf, sizeof pf, ", prefetch depth %d layer(s)", f.prefetch);
    snprintf(buf, n,
             "DeepSpeed %s: %s, overlap_comm %s%s, reduce_bucket_size %.3g, allgather_bucket_size %.3g elements%s%s",
             ver,
             f.sync_fetch ? "synchronous per-parameter fetch"
             : r->ds_since && fw_ds_before(t, r->ds_since) ? r->ds_paper
             : zero3_family(l->kind)    ? "overlapped fetch"
             : st.sharded               ? "ZeRO-3 with offload"
             : l->kind == LAYOUT_DDP    ? "ZeRO stage 0 (plain data parallel)"
                                        : "ZeRO-1/2",
             f.overlap ? "on" : "off", t->overlap_comm < 0 ? " (its default)" : "", f.reduce_bucket_bytes / e,
             f.allgather_bucket_bytes / e, pf,
             f.owner_reduce ? ", gradients reduced to owners"
             : ds_one_group(t, l) ? ", gathers and reductions on one process group (mpu)"
                                  : "");
    return buf;
}

/* DeepSpeed's reduce_bucket_size: the ds_config's, else a training's explicit bucket_MB (a
 * case or spec that states the run's reduce_bucket_size without a ds_config), else its default
 * 5e8 elements (deepspeed/runtime/zero/config.py). Other frameworks: the training's bucket. */
double fw_reduce_bucket(const spec_training *t, const wl *w)
{
    if (t->framework != FW_DEEPSPEED)
        return t->bucket_bytes;
    if (t->reduce_bucket_bytes > 0)
        return t->reduce_bucket_bytes;
    return (t->given & SPEC_GIVEN_BUCKET) ? t->bucket_bytes : 5e8 * w->elem_bytes;
}

/* Megatron-Core's data-parallel buckets (NVIDIA/Megatron-LM@d98e8a64ddf34856e74b24714e3bedb2f5a39553
 * megatron/core/distributed/distributed_data_parallel.py L133-137, distributed_data_parallel_config.py
 * bucket_size): max(40e6, 1e6 x dp) parameters per bucket ("larger DP sizes need larger buckets to
 * ensure collectives do not become latency-bound"), one bucket for everything without
 * --overlap-grad-reduce. Other frameworks, or an explicit bucket_MB: the training's bucket
 * (FSDP2 under pipeline stages issues one call per FSDP unit instead: layout_pipe.c
 * fsdp2_chunk_units, whatever this returns). */
double fw_dp_bucket_bytes(const spec_training *t, int dp, int overlap_grad_reduce, double elem_bytes)
{
    if (t->framework != FW_MEGATRON || (t->given & SPEC_GIVEN_BUCKET))
        return t->bucket_bytes;
    if (!overlap_grad_reduce)
        return 1e30; /* bucket_size None: the whole buffer in one collective */
    double n = 1e6 * dp;
    return (n > 4e7 ? n : 4e7) * elem_bytes;
}

int fw_param_gather_overlap(const spec_training *t, const spec_layout *l, int dp)
{
    /* FSDP2 under pipeline stages: each unit's all-gather issued by its pre-forward hook in the
     * stage's first forward, one unit ahead (layout_pipe.c fsdp2_pipe_item's note) */
    if (t->framework == FW_FSDP2 && l->kind == LAYOUT_ZERO3 && l->pp > 1)
        return dp > 1;
    return t->framework == FW_MEGATRON && t->overlap_param_gather > 0 && l->zero1 && dp > 1;
}

int fw_fsdp_units(const spec_training *t, const wl_layer *L, double *largest)
{
    *largest = L->params;
    if (t->framework != FW_FSDP || t->fsdp_wrap_module <= 0 || L->kind != WL_BLOCK)
        return 1;
    double attn = 0, best = 0;
    int lin = 0;
    for (int i = 0; i < L->n_gemm; i++) {
        const wl_gemm *g = &L->gemm[i];
        const double wgt = g->n * g->k; /* the linear's weight, n x k */
        if (g->role == WL_G_QKV || g->role == WL_G_PROJ)
            attn += wgt;
        else if (g->role == WL_G_FC1 || g->role == WL_G_GATE_UP || g->role == WL_G_FC2) {
            best = wgt > best ? wgt : best;
            lin++;
        }
    }
    *largest = attn > best ? attn : best;
    return 1 + lin + 2; /* attention, the MLP's linears, two norms */
}

int fw_param_tensors(const wl *w, const wl_layer *L)
{
    const spec_model *m = &w->model;
    int norm = m->rmsnorm ? 1 : 2;
    switch (L->kind) {
    case WL_EMBED: return 1 + m->learned_positions;
    case WL_HEAD: return norm + !m->tied_embeddings;
    default: {
        int lin = fw_submodules(L) - 2;
        return lin * (m->bias ? 2 : 1) + 2 * norm;
    }
    }
}

int fw_prefetch(const spec_training *t, const spec_layout *l, const wl *w)
{
    switch (t->framework) {
    case FW_DEEPSPEED: {
        if (!zero3_family(l->kind))
            return t->prefetch_layers;
        /* before v0.6 (partition_parameters.py L882, L984 at 3293cf72): a prefetch only when
         * nothing is in flight, and every fetch waits for all in flight: depth 0. DeepSpeed had
         * no MiCS then; mics runs as its paper's implementation, overlapped (below: a kind
         * DeepSpeed shipped later, its row's ds_since). */
        if (fw_ds_before(t, FW_DS_OVERLAP) && !row_of(l)->ds_since)
            return 0;
        /* stage3_prefetch_bucket_size: parameters fetched ahead of use, here in whole layers
         * (at least one: below a layer DeepSpeed still prefetches the next sub-modules);
         * stage3_max_live_parameters: the current and prefetched layers must fit under it. */
        const double e = w->elem_bytes, layer = wl_max_layer_params(w);
        double bucket = t->prefetch_bucket_bytes > 0 ? t->prefetch_bucket_bytes / e : DSC_PREFETCH_DEFAULT;
        double live = t->max_live_params > 0 ? t->max_live_params : DSC_LIVE_DEFAULT;
        int d = layer > 0 ? (int)floor(bucket / layer) : 1;
        if (d < 1)
            d = 1;
        if (d > 64)
            d = 64;
        while (d > 0 && (d + 1) * layer > live)
            d--;
        return d;
    }
    case FW_FSDP: /* limit_all_gathers (default on): at most two all-gathers in flight */
        return t->limit_all_gathers != 0 ? (t->prefetch_layers < 1 ? t->prefetch_layers : 1) : t->prefetch_layers;
    case FW_FSDP2: /* implicit prefetch of the next module's all-gather, forward and backward */
        return 1;
    case FW_MEGATRON: {
        if (!zero3_family(l->kind))
            return t->prefetch_layers;
        /* Megatron-FSDP (zero3): each unit's pre-forward / pre-backward hook all-gathers its
         * bucket and prefetches the next ones, in pass order, until the prefetched buckets hold
         * at least suggested_AG_prefetch_size elements: suggested_communication_unit_size // 2,
         * which is 1e9 // 2 unless set (`... or 1_000_000_000`, so the per-unit estimate below
         * it never runs; NVIDIA/Megatron-LM@23e00ed0963c35382dfe8a5a94fb3cda4d21e133 (core_v0.14.0)
         * megatron/core/distributed/fsdp/src/megatron_fsdp/megatron_fsdp.py L356-380;
         * param_and_grad_buffer.py L3187-3213 all_gather_params: a bucket is added while the
         * prefetched size is below it). Megatron-Bridge sets it only for Llama3-70B
         * (NVIDIA-NeMo/Megatron-Bridge@fa0315ae2684693a666be9d247adf9baf1e30028
         * scripts/performance/run_script.py L166-170). At 92c8482e6dcd11c3666c61bb8d1f7e8d0730ed13
         * (Megatron-Bridge 25.11's Megatron-LM submodule) the estimate, twice a unit's elements,
         * runs but max(1e9, it) keeps 1e9 below 5e8-element units (L358-383): the same depth
         * (a block above 5e8 elements: one block ahead under both). So the depth is the fewest whole blocks
         * holding 5e8 elements (Llama3-8B's 218.1M-parameter blocks: 3) */
        double layer = 0; /* a transformer block, the unit the steady prefetch runs over */
        for (int i = 0; i < w->n_layers; i++)
            if (w->layer[i].kind == WL_BLOCK && w->layer[i].params > layer)
                layer = w->layer[i].params;
        int d = layer > 0 ? (int)ceil(MG_FSDP_PREFETCH_ELEMS / layer) : 1;
        return d < 1 ? 1 : d > 64 ? 64 : d;
    }
    default: return t->prefetch_layers;
    }
}

int fw_depth(const spec_training *t, const spec_layout *l, const wl *w)
{
    if (l->pp > 1)
        return 0; /* pipelines (megatron, fsdp2 with p): no per-layer gathers (layout_pipe.c) */
    if (row_of(l)->overlap_opt && !l->overlap)
        return 0; /* overlap=0: the gathers run inline (layout_tensor.c) */
    return fw_prefetch(t, l, w);
}

int fw_depth_pass(int d, int p1, int bwd)
{
    return bwd && p1 ? p1 - 1 : d;
}

double fw_reduce_elem_bytes(const spec_training *t, const wl *w)
{
    return t->reduce_dtype == REDUCE_FP32 ? 4.0 : w->elem_bytes;
}

int fw_opt_impl(const spec_training *t)
{
    if (t->opt_impl != OPT_IMPL_DEFAULT)
        return t->opt_impl;
    return t->framework == FW_FSDP || t->framework == FW_FSDP2 ? OPT_IMPL_FOREACH : OPT_IMPL_FUSED;
}

int fw_opt_tensor_launches(const spec_training *t)
{
    const int impl = fw_opt_impl(t);
    if (t->opt_sgd > 0) /* one pass: foreach one launch per tensor list, for-loop one per tensor */
        return impl == OPT_IMPL_FORLOOP;
    return wl_opt_passes(impl);
}

/* The DeepSpeed release's changes to today's schedule (f already holds today's). Sources:
 * v0.5.4 (bc7778ea) partition_parameters.py L662-686, L835-882 (a torch.cuda.synchronize()
 * before each parameter's all-gather), stage3.py L349-361, L397-458 (fetch_sub_module waits
 * for all in flight; param.norm() in a debug string, a device->host sync, L452-457), L533-545;
 * v0.5.8 (9aa288d7) L919-984 (coalesced, still synchronous); v0.6.0 (a32e9b33) stage3.py
 * L172-435 (today's overlapped design); stage2.py L860-946 at bc7778ea (dist.reduce of each
 * bucket slice to its owner) until 2afa1c7f (v0.12.4). Per-fetch host time while the GPU idles
 * (beyond the hook cost that every release pays):
 *  - v0.5.5 .. v0.5.10: 38 us, measured: a synchronous fetch (torch.cuda.synchronize() before
 *    and after an all-gather launched from a forward pre-hook) on the lent H100
 *    (bench/gpu-results/2026-11-27-h100-sxm/fetch_loop.json, "sync": 37.9-38.9 us, torch 2.11);
 *  - before v0.5.5: 186 us [derived]: those 38 us plus the 148 us per fetch that c0eeb69d
 *    (PR #1188) removed: the norm() debug sync and the explicit copy, 170 ms of a 980 ms step
 *    per its commit message (shared/reference/fidelity-deepspeed.md item 2), over the ~1,150
 *    fetches of that 64-layer 5.1B BERT with checkpointing (64 x 6 x 3).
 * Both are lower bounds for the DeepSpeed of 2021: the bare hook has none of its Python
 * bookkeeping, and a 2026 host runs Python faster. (The same loop with the 0.5-era norm().item(),
 * torch.zeros and list-output gather measures 108-128 us on that host: the part c0eeb69d removed
 * is 70-90 us there, against 148 us on the 2021 p4d host.) */
static void ds_era(const spec_training *t, const spec_layout *l, fw_sched *f)
{
    f->version = t->framework_version;
    const unsigned era = row_of(l)->ds_era;
    if (fw_ds_before(t, FW_DS_OVERLAP) && (era & LR_DS_SYNC_FETCH)) {
        f->sync_fetch = 1;
        f->reduce_stream = f->gather_stream; /* the device sync before each fetch waits for the
                                                reduce-scatters in flight too: one stream */
        f->fetch_host_s = fw_ds_before(t, FW_DS_COALESCED) ? 186e-6 : 38e-6;
    }
    if (fw_ds_before(t, FW_DS_BUCKET_AR) && (era & LR_DS_OWNER_REDUCE) && t->reduce_scatter != 0)
        f->owner_reduce = 1;
    /* ZeRO-1 before v0.4.0 (stage1.py at v0.3.0 L530-590; the engine asserts reduce_scatter,
     * engine.py L758-763): dist.reduce_scatter of the flat gradients in reduce_bucket_size
     * intervals, after the backward */
    if (l->kind == LAYOUT_ZERO1 && fw_ds_before(t, FW_DS_Z1_REFRESH) && f->owner_reduce) {
        f->owner_reduce = 0;
        f->grad_allreduce = 0;
    }
    if (t->reduce_scatter == 0) /* reduce_scatter false: a plain all-reduce of each bucket */
        f->grad_allreduce = 1;
    /* stage2.py's contiguous-gradient path (ZeRO-2, and ZeRO-1 from v0.4.0 when stage 1 runs
     * through stage2.py): read at v0.3.0 (2dea61f2's tag; L640-646, L733, L945) and v0.5.7
     * (L815-821, L935, L1174), so applied before v0.6.0 only; contiguous_gradients defaults off
     * before v0.4.3 (constants.py L52 at v0.3.0) and on from it (DSC_CONTIGUOUS) */
    int contig = t->contiguous_gradients >= 0 ? t->contiguous_gradients : !fw_ds_before(t, DSC_CONTIGUOUS);
    if (contig && fw_ds_before(t, FW_DS_OVERLAP) &&
        (l->kind == LAYOUT_ZERO2 || (l->kind == LAYOUT_ZERO1 && !fw_ds_before(t, FW_DS_Z1_REFRESH))))
        f->ds_contig = 1;
}

/* Whether DeepSpeed ZeRO-3's parameter all-gathers and gradient reduce-scatters run on one
 * process group, and so in issue order on one CUDA stream: PyTorch's ProcessGroupNCCL launches
 * every collective of a group on that group's own NCCL stream, one per device, whatever stream
 * the caller is on (pytorch/pytorch@0007e752d518810f0f8942a830dbbbfc69f34577
 * torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp: ncclStreams_, "The CUDA streams used by NCCL
 * kernels", keyed by the devices; the class comment: each call on a stream other than the
 * caller's). DeepSpeed's __allgather_stream and reduce_and_partition_stream only order the
 * copies around them. Which groups: the all-gathers use zero.Init's data_parallel_group, else the
 * world group (deepspeedai/DeepSpeed v0.10.0 partition_parameters.py L805-808, L961; v0.6.2
 * L675-678, L797); the reduce-scatters the engine's data-parallel group (stage3.py L206, L1195
 * at v0.10.0; L350, L1561 at v0.6.2), which is the mpu's when one is given and otherwise a clone
 * of the world group, a second communicator (utils/groups.py L353-360 at v0.10.0). Megatron-
 * DeepSpeed passes the mpu's group to both (deepspeedai/Megatron-DeepSpeed@4efb479d pretrain_gpt.py
 * L46, megatron/training.py L542 with --no-pipeline-parallel, which its ZeRO-3 recipes set:
 * examples_deepspeed/azure/run-175b.sh L103): training.ds_mpu. ZeRO++'s qgZ all-to-alls and hpZ's
 * secondary gathers use groups of their own, so only zeropp without both shares it. (zero3-offload's
 * graph, layout_offload.c, keeps every collective on one stream already.) */
static int ds_one_group(const spec_training *t, const spec_layout *l)
{
    if (t->ds_mpu <= 0 || fw_ds_before(t, FW_DS_OVERLAP))
        return 0;
    return l->kind == LAYOUT_ZERO3 || (l->kind == LAYOUT_ZEROPP && !l->qgz && l->p <= 1);
}

void fw_schedule(const spec_training *t, const spec_layout *l, const wl *w, fw_sched *f)
{
    memset(f, 0, sizeof *f);
    f->fw = t->framework;
    f->reduce_elem_bytes = fw_reduce_elem_bytes(t, w);
    f->opt_impl = fw_opt_impl(t);
    f->opt_scale = wl_opt_bytes_per_param(f->opt_impl) / wl_opt_bytes_per_param(OPT_IMPL_FUSED);
    if (t->opt_sgd > 0) /* optimizer_type sgd (FW_SGD_BYTES_PER_PARAM) */
        f->opt_scale = FW_SGD_BYTES_PER_PARAM(w->elem_bytes) / wl_opt_bytes_per_param(OPT_IMPL_FUSED);
    const int per_tensor = fw_opt_tensor_launches(t);
    for (int i = 0; i < w->n_layers && per_tensor; i++)
        f->opt_launches += per_tensor * fw_param_tensors(w, &w->layer[i]) * w->layer[i].count;
    f->prefetch = fw_prefetch(t, l, w);
    f->overlap = 1;
    f->allgather_bucket_bytes = t->bucket_bytes;
    f->reduce_bucket_bytes = fw_reduce_bucket(t, w);
    switch (t->framework) {
    case FW_IDEAL: break; /* one stream, reduce-scatter, replica all-reduce at the boundary */
    case FW_DEEPSPEED:
        f->reduce_stream = f->replica_stream = 1; /* reduce_and_partition_stream / reduction_stream */
        f->grad_allreduce = 1;
        /* overlap_comm's default: on for stage 3, zero3-offload's too (deepspeedai/DeepSpeed@1b88ac366fc922254d56abda5cf6b1f266556d19
         * deepspeed/runtime/zero/config.py overlap_comm_valid: None -> stage == ZeroStageEnum.weights),
         * off for stages 1 and 2 (zero2-offload's included) */
        f->overlap = t->overlap_comm >= 0 ? t->overlap_comm : ds_stage3(l);
        f->replica_in_bwd = 1;
        f->submodule = 1;
        f->allgather_bucket_bytes = t->allgather_bucket_bytes > 0 ? t->allgather_bucket_bytes : 5e8 * w->elem_bytes;
        /* ZeRO-1/2 hand the client optimizer one flat fp32 partition per parameter group
         * (stage2.py 9caa74e5 L326-337: param_group['params'] = [single_partition_of_fp32_groups[i]];
         * stage_1_and_2.py the same today): a for-loop / foreach AdamW launches per group, not per
         * tensor; two groups, weight decay and none (transformers v4.12 Trainer.create_optimizer,
         * Megatron's get_params_for_weight_decay_optimization); optimizer_type sgd's one pass
         * per group (fw_opt_tensor_launches), not AdamW's eight */
        if (l->kind == LAYOUT_ZERO1 || l->kind == LAYOUT_ZERO2)
            f->opt_launches = per_tensor * 2;
        ds_era(t, l, f);
        if (ds_one_group(t, l))
            f->reduce_stream = f->gather_stream;
        break;
    case FW_FSDP:
    case FW_FSDP2:
        f->reduce_stream = 1; /* post-backward (reduce-scatter) stream */
        f->replica_stream = 2; /* HYBRID_SHARD all-reduce stream */
        f->replica_in_bwd = 1;
        f->copy_in_out = t->framework == FW_FSDP2;
        f->grad_path = 1;
        /* BACKWARD_POST issues the next all-gather after the current layer's gradients, NONE
         * at the next layer's pre-backward hook: at layer granularity both are depth 0 */
        if (t->backward_prefetch && f->prefetch > 0)
            f->bwd_prefetch_p1 = 1;
        break;
    case FW_MEGATRON: /* distributed optimizer: --overlap-grad-reduce is opt-in */
        f->reduce_stream = f->replica_stream = 1;
        f->overlap = t->overlap_comm > 0;
        /* Megatron-FSDP (zero3, optim_grads_params): every unit's post-backward hook
         * reduce-scatters its gradients asynchronously on a side stream in every micro-step
         * (megatron_fsdp.py L544-588 at core_v0.14.0 23e00ed0: grad_reduce_every_bprop;
         * side_stream_for_buffer_copy_and_grad_accum, L342-347), the all-gathers on another
         * (side_stream_for_param_gather, L343, L352); Megatron-Bridge turns on
         * gradient_accumulation_fusion with it (scripts/performance/utils/helpers.py L76-77 at
         * fa0315ae), so TE's weight-gradient GEMMs accumulate into the sharded main_grad bucket
         * in place and _grad_acc copies nothing (L510-528: only where param.grad is set): no
         * FSDP-style gradient path (grad_path 0) */
        if (zero3_family(l->kind))
            f->overlap = 1;
        break;
    default: break;
    }
}

/* Whether framework f runs kind k: the kind's row says (layout_row.h's frameworks); the ideal
 * schedule runs every kind. */
static int runs(spec_framework f, spec_layout_kind k)
{
    const layout_kind_row *r = layout_kind_row_of(k);
    return f == FW_IDEAL || (r && (r->frameworks & LR_FW(f)));
}
/* "ddp, zero3, ...": the kinds framework f runs, in the grammar's order, from the rows (a new
 * kind's row is the only place that says which frameworks run it). */
static void runs_text(spec_framework f, char *out, size_t len)
{
    size_t n = 0;
    out[0] = 0;
    const char *name;
    for (int k = 0; (name = spec_layout_kind_name((spec_layout_kind)k)) != NULL && n < len; k++)
        if (runs(f, (spec_layout_kind)k))
            n += (size_t)snprintf(out + n, len - n, "%s%s", n ? ", " : "", name);
}

int fw_check(spec_framework f, const spec_layout *l, sc_err *err)
{
    if (runs(f, l->kind)) {
        const layout_kind_row *r = row_of(l);
        return r->fw_check ? r->fw_check(l, f, err) : 0;
    }
    char name[64], kinds[160];
    runs_text(f, kinds, sizeof kinds);
    return sc_err_set(err, SC_EINPUT, "--framework", "", "%s does not run layout %s (it runs %s)",
                      spec_framework_str(f), spec_layout_str(l, name, sizeof name), kinds);
}

/* Megatron-LM's own 2.x releases (framework_version >= 2.0; Megatron-Core's are 0.x): the rules
 * of fw_mg_p2p_blocking, fw_mg_tp_ar_async and fw_mg_reduce_after_flush (framework.h). */
static int fw_mg_lm2(const spec_training *t)
{
    return t->framework == FW_MEGATRON && t->framework_version >= FW_MG_LM2;
}

/* Megatron exchanges a stage's activations and gradients in blocking calls, one per micro-batch
 * and direction, between its ops: Megatron-LM v2.0 (be473a5b) megatron/training.py L347-349,
 * v2.5 / v2.6 (e269e200 / 3860e995, as at 50a4b5fa, the SC'21 README commit)
 * megatron/p2p_communication.py `_communicate` L108-112 (L126-130 at v2.6):
 * torch.distributed.batch_isend_irecv, req.wait() on every request, then
 * torch.cuda.synchronize() "to protect against race condition", in every schedule; so the stage
 * runs its next op only after its own send has completed. With scatter-gather on (the v2.5
 * default, arguments.py L581 at 50a4b5fa: --no-scatter-gather-tensors-in-pipeline), each tensor
 * rank sends 1/t of the s x b x h output (split_tensor_into_1d_equal_chunks). Megatron-Core
 * (versions 0.x, and an unversioned megatron) keeps the wait and the synchronize where
 * batch_p2p_comm is on without overlap_p2p_comm (p2p_communication.py L363-371 at core_v0.8.0,
 * L411-419 at core_v0.19.0; batch_p2p_sync defaults true, model_parallel_config.py): Megatron-LM
 * sets batch_p2p_comm = not overlap_p2p_comm and turns overlap_p2p_comm off without the
 * interleaved schedule (training/arguments.py L271-277 and L621 at core_v0.8.0, L978 at
 * core_v0.19.0), so the non-interleaved 1F1B blocks. The interleaved schedule overlaps its
 * sends (--no-overlap-p2p-communication: on by default; NeMo recipes set it, e.g.
 * dgxc-benchmarking@35a9aecc nemo_megatron/gpt3_175b_hydra.yaml L91-92, with batch_p2p_comm
 * false, which overlap_p2p_comm requires: schedules.py L455-456 at core_v0.7.0, so no
 * synchronize) in its steady phase only, where a forward's send is waited for after the
 * backward that follows it (schedules.py L828-831 / L878-880 at core_v0.7.0, L1218-1219 /
 * L1264-1265 at core_v0.10.0). In the warm-up, each forward's send is waited for before the
 * next forward (core_v0.7.0 L714-718: fwd_wait_handles; core_v0.10.0 L1053-1078: a blocking
 * send_forward_recv_forward, overlap_p2p_comm_warmup_flush off: its default,
 * model_parallel_config.py L284 at core_v0.10.0, L422-425 at d98e8a64, set by none of the
 * recipes cited), and in the cool-down each backward's (core_v0.7.0 L1010-1015, core_v0.10.0
 * L1437-1439: a blocking send_backward_recv_backward), the last steady backward's before the
 * first cool-down backward (core_v0.7.0 L994-996, core_v0.10.0 L1346-1348): FW_P2P_BLOCK_EDGES.
 * The wait (torch Work.wait on an NCCL request) holds the compute stream, not the host:
 * pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp WorkNCCL::wait -> synchronizeStream
 * ("Block the current stream on the NCCL stream"; the host waits only with
 * TORCH_NCCL_BLOCKING_WAIT). */
int fw_mg_p2p_blocking(const spec_training *t, const spec_layout *l, double *sync_s, int *send_div)
{
    *sync_s = 0;
    *send_div = 1;
    const int lm2 = fw_mg_lm2(t);
    if (t->framework != FW_MEGATRON || l->pp <= 1)
        return FW_P2P_OVERLAP;
    if (l->vp > 1 && !lm2)
        return FW_P2P_BLOCK_EDGES;
    if (!lm2 || t->framework_version >= FW_MG_LM25)
        *sync_s = FW_DS_SYNC_S; /* one torch.cuda.synchronize(): the calibrated host round trip */
    if (t->framework_version >= FW_MG_LM25 && !l->sp && l->t > 1)
        *send_div = l->t;
    return FW_P2P_BLOCK;
}

int fw_mg_tp_ar_async(const spec_training *t) { return !fw_mg_lm2(t); }

int fw_mg_reduce_after_flush(const spec_training *t) { return fw_mg_lm2(t); }
