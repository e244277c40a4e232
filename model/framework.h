/* framework.h — how each framework schedules a layout: which layouts it runs, how finely it
 * gathers (DeepSpeed ZeRO-3: per sub-module; FSDP: per FlatParameter / wrapped block), how far
 * it prefetches, whether ZeRO-1/2 gradients are all-reduced or reduce-scattered and whether the
 * compute waits for them, which communication stream each collective runs on, and where the
 * MiCS/HSDP replica all-reduce goes. The layout builders (layout.c) read a fw_sched; the
 * engines read the per-framework overheads from the calibration (cost.h).
 * Not here: the op graph itself (layout.c) or any time (cost.c, the engines).
 * Sources (read, not copied): DeepSpeed deepspeed/runtime/zero/stage_1_and_2.py (reduce_ipg_grads,
 * average_tensor: use_multi_rank_bucket_allreduce all-reduces each bucket; reduction_stream only
 * with overlap_comm), config.py (overlap_comm defaults on for stage 3 only), stage3.py
 * (__allgather_stream / reduce_and_partition_stream, prefetch_bucket_size 5e7, max_live 1e9),
 * mics.py (allreduce_mics_shard_grads inside partition_grads, on the reduce stream, at the
 * accumulation boundary); PyTorch torch/distributed/fsdp/_runtime_utils.py (unshard stream,
 * post-backward reduce-scatter stream, all-reduce stream for HYBRID_SHARD, limit_all_gathers),
 * FSDP2 _fully_shard (_fsdp_collectives.py: copy-in / copy-out around the collectives);
 * Megatron-LM distributed optimizer (--overlap-grad-reduce off by default). */
#ifndef SC_FRAMEWORK_H
#define SC_FRAMEWORK_H

#include "spec.h"
#include "workload.h"

#define FW_STREAMS 3 /* communication streams per rank the engines keep */

typedef struct fw_sched {
    spec_framework fw;
    int prefetch;          /* layers gathered ahead                                          */
    int bwd_prefetch_p1;   /* 0: the same in the backward; else the backward's depth + 1 (FSDP
                              BACKWARD_POST / none: 0, the gather issued when the layer is
                              reached, after the previous layer's backward)                  */
    int gather_stream;     /* stream of parameter all-gathers                                */
    int reduce_stream;     /* stream of gradient reductions                                  */
    int replica_stream;    /* stream of the replica (MiCS / HSDP) all-reduce                 */
    int grad_allreduce;    /* ZeRO-1/2: gradient buckets all-reduced (DeepSpeed), not reduce-scattered */
    int overlap;           /* gradient reduction overlaps the backward (else: DeepSpeed stage 2
                              waits for each bucket; stage 0/1 and Megatron reduce after it) */
    int replica_in_bwd;    /* MiCS / HSDP sync=boundary: replica all-reduce per layer inside the
                              last micro-step's backward (else a boundary op after all compute) */
    int submodule;         /* gathers per sub-module (DeepSpeed ZeRO-3), else per layer      */
    int copy_in_out;       /* FSDP2: copy-in / copy-out kernels around each collective      */
    double allgather_bucket_bytes; /* ZeRO-1/2 post-step parameter all-gather bucket         */
    double reduce_bucket_bytes;    /* gradient reduction bucket (DeepSpeed: reduce_bucket_size,
                                      a ZeRO-3 layer above it is reduce-scattered in pieces)  */
    double reduce_elem_bytes;      /* bytes of one gradient element in its reductions
                                      (fw_reduce_elem_bytes)                                 */
    int grad_path;                 /* FSDP / FSDP2: the per-micro-step gradient kernels on the
                                      post-backward stream (wl_grad_path_bytes_per_param)     */
    int opt_impl;                  /* spec_opt_impl of the AdamW step (fw_opt_impl)          */
    double opt_scale;              /* its HBM bytes / fused Adam's (wl_opt_bytes_per_param):
                                      the engines scale the GPU optimizer's time by it        */
    int opt_launches;              /* for-loop: kernel launches beyond the passes (per
                                      parameter tensor: fw_opt_tensor_launches), cost_calib.
                                      kern.launch_s each; a pipeline's stages count their own */
    int version;           /* the framework release modelled (spec_training.framework_version) */
    int sync_fetch;        /* DeepSpeed < 0.6 ZeRO-3: every fetch synchronous (a device sync
                              before it: one stream, depth 0)                                   */
    double fetch_host_s;   /* host time per fetch while the GPU idles, beyond the hook (s)   */
    int owner_reduce;      /* DeepSpeed < 0.12.4 ZeRO-1/2: each bucket slice reduced to its
                              owner (dist.reduce), not all-reduced                             */
    int ds_contig;         /* DeepSpeed stage2.py ZeRO-1/2 with contiguous_gradients (read at
                              v0.3.0 and v0.5.7: applied before v0.6.0): gradients copied into
                              the ipg buffer, divided in place, the own slice copied out
                              (model/layout_dp.c; dsv37)                                       */
    double step_syncs;     /* DeepSpeed 16-bit ZeRO-1/2 < 0.13.3: host round trips before the
                              optimizer, each after two kernel launches (fw_ds_step_checks;
                              set by the layout builder, which knows the ranks)               */
    double step_hbm_bytes; /* their casts' and reductions' HBM bytes per rank, and < 0.12.4
                              the all-gather's list copy-out (fw_ds_step_checks)              */
} fw_sched;

/* torch.optim.SGD without momentum (training key optimizer_type sgd): p.add_(grad, alpha=-lr) on
 * the parameters in their own dtype (torch/optim/sgd.py, momentum 0: no buffer) reads p and its
 * gradient and writes p: 3 e bytes per parameter of e-byte elements, one pass (fw_schedule on
 * the GPU, layout_offload.c on FSDP1 CPUOffload's host). */
#define FW_SGD_BYTES_PER_PARAM(e) (3 * (e))
/* DeepSpeed releases whose schedule changed (spec_training.framework_version encoding). */
/* Megatron-FSDP's default all-gather prefetch, elements: suggested_communication_unit_size // 2
 * with its 1e9 default (NVIDIA/Megatron-LM@23e00ed0963c35382dfe8a5a94fb3cda4d21e133
 * megatron/core/distributed/fsdp/src/megatron_fsdp/megatron_fsdp.py L356-380; fw_prefetch) */
#define MG_FSDP_PREFETCH_ELEMS 5e8
/* its reduce-scatter queue, elements of unsharded gradient buckets before the oldest is waited
 * for: suggested_RS_queue_capacity = the same 1e9 (megatron_fsdp.py L379; layout_dp.c) */
#define MG_FSDP_RS_QUEUE_ELEMS 1e9
#define FW_DS_COALESCED 505 /* v0.5.5, c0eeb69d (PR #1188): one coalesced all-gather per
                               sub-module, no norm() debug sync, no explicit copy            */
#define FW_DS_OVERLAP 600   /* v0.6.0, a32e9b33: all-gather stream, prefetch buckets         */
#define FW_DS_BUCKET_AR 1204 /* v0.12.4, 2afa1c7f: use_multi_rank_bucket_allreduce           */
#define FW_DS_Z1_REFRESH 400 /* v0.4.0, cfa63f5d (#1042, "ZeRO stage 1 refresh"): stage 1 runs
                               stage2.py's optimizer (partition_grads off); before, stage1.py  */
#define FW_DS_NORM_DEVICE 1302 /* v0.13.2, 61daaa1e (#4974): ZeRO-1/2 gradient norm summed on
                                 the device, no .item() per gradient                          */
#define FW_DS_BF16_NO_OVF 1102 /* v0.11.2, 244040c18 (#4512, "Don't check overflow for bf16
                                 data type"): bf16 ZeRO-1/2 no longer walks the overflow loop  */
#define FW_DS_OVF_DEVICE 1303  /* v0.13.3, 1c9e5ef2 (#5115): overflow counted on the device,
                                 no host sync per gradient                                    */
/* One host round trip of a .item() / float() on a CUDA scalar beyond its kernels' launches, s:
 * half of (synchronous - asynchronous fetch) of the repository's H100 fetch loop, two
 * torch.cuda.synchronize() apart (bench/gpu-results/2026-11-27-h100-sxm/fetch_loop.json: 38.89 -
 * 24.65 = 14.2 us at 1024 elements, 38.86 - 21.47 = 17.4 us at 4M; mean 7.9 us each). A lower
 * bound for a 2020-22 host (torch 2.11 on a 2026 host). */
#define FW_DS_SYNC_S 7.9e-6
/* DeepSpeed stage3_param_persistence_threshold default, elements (constants.py L112 at bc7778ea;
 * config.py L221 at edaa7221): smaller parameters stay whole on every rank, never gathered */
#define FW_DS_PERSIST 1e5

/* Whether t is DeepSpeed at a release before v (a release given and older). */
int fw_ds_before(const spec_training *t, int v);
/* The per-step work of DeepSpeed's ZeRO-1/2 optimizer that later releases removed, on n ranks
 * (fw_ds_step_checks in framework.c: which loops and copies, with sources): fp16's per-tensor
 * gradient checks before v0.13.2/3 (bf16's before v0.11.2 / v0.13.2), host round trips (each after two kernels: a cast and a
 * reduction) into *syncs, and their HBM bytes plus, before v0.12.4, the copy out of the
 * list-output parameter all-gather into *bytes, per rank per step; zeros for any other
 * framework, release, layout or precision. */
void fw_ds_step_checks(const spec_training *t, const spec_layout *l, const wl *w, int n, double *syncs, double *bytes);
/* The trainer's step work outside DeepSpeed (fw_trainer_step in framework.c, with sources): amp
 * fp16's GradScaler unscale pass and its found_inf round trip; with t->grad_clip, torch's
 * per-parameter clip_grad_norm_ loop; with t->ddp_bucket_copy, torch DDP's copies of every
 * gradient into its bucket and back (layout l DDP on n > 1 ranks). Per rank over the gradients
 * of psi / shard parameters: host round trips into *syncs, HBM bytes into *bytes, kernel
 * launches into *launches. */
void fw_trainer_step(const spec_training *t, const spec_layout *l, const wl *w, int n, double shard, double *syncs,
                     double *bytes, double *launches);
/* The part of fw_trainer_step on the gradients one rank holds: psi parameters in `tensors`
 * tensors of elem_bytes (a pipeline stage's shard: analytic_pipe.c stage_opt_s), and Megatron's own step work (fp16's
 * unscale and found_inf round trip, the clip's l2 norm and its round trip: mg_step_shard in
 * framework.c, with sources). Zeros under DeepSpeed (fw_ds_step_checks). */
void fw_trainer_step_shard(const spec_training *t, double elem_bytes, double psi, double tensors, double *syncs,
                           double *bytes, double *launches);
/* The GPU time of a step's checks (fw_sched.step_syncs, step_hbm_bytes): each host round trip
 * after two kernel launches of launch_s and FW_DS_SYNC_S, the bytes at hbm_Bps (the effective
 * HBM bandwidth). */
static inline double fw_step_work_s(double syncs, double bytes, double launch_s, double hbm_Bps)
{
    return syncs * (2 * launch_s + FW_DS_SYNC_S) + bytes / hbm_Bps;
}
/* Partitioned sub-modules of one copy of a layer that DeepSpeed ZeRO-3 gathers: those whose
 * parameters reach t's persist_threshold (FW_DS_PERSIST by default) (a block's q, k, v, o and MLP linears; not its norms; an
 * embedding; a head with an untied projection); their parameters, in order, into sizes[]
 * (at most WL_MAX_GEMMS + 2). */
int fw_fetches(const spec_training *t, const wl *w, const wl_layer *L, double *sizes);
/* One line naming the DeepSpeed release modelled and the overlap_comm / bucket sizes it
 * assumes, or Megatron-FSDP's schedule (zero3 under megatron), for a prediction's header (buf;
 * empty for other frameworks and layouts). */
const char *fw_describe(const spec_training *t, const spec_layout *l, const wl *w, char *buf, size_t n);

/* The schedule of layout l under t's framework for workload w. */
void fw_schedule(const spec_training *t, const spec_layout *l, const wl *w, fw_sched *out);
/* Prefetch depth the framework uses for sharded layouts (fw_schedule; fw_depth for any layout). */
int fw_prefetch(const spec_training *t, const spec_layout *l, const wl *w);
/* The prefetch bound, the one home of the depth of gathers in flight: how many layers' gathers
 * are issued ahead of the layer computing (layout.h's execution rules).
 * fw_depth: the forward's depth of layout l, as its op graph's builder sets lo_graph.prefetch:
 * the framework's (fw_prefetch); none for the tensor-parallel layouts with overlap=0 (AxoNN's
 * and tp's gathers run inline) or for pipelines (megatron or fsdp2 with p > 1). Also the layers memory
 * keeps gathered ahead (mem_plan).
 * fw_depth_pass: the depth of one pass (bwd 0 forward, 1 backward) of a graph or schedule whose
 * forward depth is d and whose bwd_prefetch_p1 is p1 (0: the backward's is d too; else the
 * backward's + 1: FSDP BACKWARD_POST / NO_PREFETCH). The analytical engine (an_time) and the
 * simulator's executor ask it per copy. */
int fw_depth(const spec_training *t, const spec_layout *l, const wl *w);
int fw_depth_pass(int d, int p1, int bwd);
/* Gradient bucket of the framework, bytes (DeepSpeed's 5e8 elements unless the ds_config set
 * reduce_bucket_size; others the training's bucket_MB, DDP's 25 MB by default). */
double fw_reduce_bucket(const spec_training *t, const wl *w);
/* Parameter-holding sub-modules of one copy of a layer (DeepSpeed ZeRO-3 fetch granularity:
 * a block's linear layers and its two norms; an embedding or head: one). */
int fw_submodules(const wl_layer *L);
/* FSDP1 units of one copy of a layer and, into *largest, the parameters of its largest: one unit
 * (the layer) unless t is fsdp with fsdp_wrap "module", where a block's attention (its q, k, v
 * and output projections), each MLP linear and each norm are units of their own, as
 * FSDP(checkpoint_wrapper(Block)) with FSDP-wrapped children (mrshenli/ptd_benchmark@62f8c89
 * models.py ShardedGPT / Block: ln1, ln2, attn and the two MLP Linears each wrap()ped). Biases
 * are left out of *largest (h elements beside h^2). */
int fw_fsdp_units(const spec_training *t, const wl_layer *L, double *largest);
/* Parameter tensors of one copy of a layer (FSDP1 use_orig_params views: its per-parameter
 * unshard / reshard bookkeeping): a block's linear weights (and biases) and its norms' weights
 * (and LayerNorm biases); an embedding its table(s); a head its final norm and, untied, its
 * projection. */
int fw_param_tensors(const wl *w, const wl_layer *L);
/* Parameter tensors of the whole model (fw_param_tensors over every layer copy). */
double fw_model_tensors(const wl *w);
/* Element size of the gradient reductions: reduce_dtype fp32 4 B, param the training's
 * element size; default the framework's: FSDP1 MixedPrecision(reduce_dtype=None) and FSDP2
 * MixedPrecisionPolicy(reduce_dtype=None) reduce in param_dtype; DeepSpeed and the ideal
 * schedule in the 16-bit gradients (ZeRO §3). Megatron's bf16 default (fp32 gradient
 * accumulation and all-reduce) is not applied here (its layouts reduce in layout_tensor.c). */
double fw_reduce_elem_bytes(const spec_training *t, const wl *w);
/* The AdamW implementation: the training's, or the framework's default: FSDP / FSDP2 train
 * with torch.optim.AdamW, which defaults to foreach on CUDA tensors (pytorch/pytorch@002d2f0b
 * torch/optim/adamw.py adamw(): "we default to foreach and pass False to use_fused");
 * DeepSpeed (FusedAdam), Megatron (apex / TE FusedAdam) and the ideal schedule fused. */
int fw_opt_impl(const spec_training *t);
/* Kernel launches of the GPU optimizer step per parameter tensor it updates, beyond fused's one
 * kernel: for-loop AdamW its passes (wl_opt_passes, 8), for-loop SGD (optimizer_type sgd) its
 * one; fused and foreach (one launch per tensor list and pass, counted as none) 0. fw_schedule's
 * opt_launches is this times the model's tensors; a pipeline stage's, times its own
 * (lo_pipe.stage_tensors, analytic_pipe.c). */
int fw_opt_tensor_launches(const spec_training *t);
/* Whether framework f runs layout l; the error names both and what f runs. */
int fw_check(spec_framework f, const spec_layout *l, sc_err *err) SC_MUST_CHECK;

/* Bytes per data-parallel bucket of elem_bytes elements over dp replicas: Megatron-Core's default
 * max(40e6, 1e6 x dp) parameters (one bucket without --overlap-grad-reduce) unless the training
 * gives bucket_MB; other frameworks: the training's bucket_bytes. */
double fw_dp_bucket_bytes(const spec_training *t, int dp, int overlap_grad_reduce, double elem_bytes);
/* 1 when Megatron-Core's --overlap-param-gather applies: framework megatron, the distributed
 * optimizer (zero1) over dp > 1 replicas, overlap_param_gather on. The updated parameters'
 * all-gather then runs in the next step's first forward, layer by layer, each layer waiting for
 * its own (the forward pre-hook, distributed_data_parallel.py _make_forward_pre_hook). Also 1
 * for FSDP2 with pipeline stages (fsdp2:dp=D,t=T,p=P) over dp > 1: the first forward's unit
 * all-gathers (layout_pipe.c). */
int fw_param_gather_overlap(const spec_training *t, const spec_layout *l, int dp);

/* Megatron-LM's own releases (tags v2.0 .. v2.6, 2021: NVIDIA/Megatron-LM), numbered above
 * Megatron-Core's, which restarted at 0.x: a megatron framework_version >= 2.0 names one of them. */
#define FW_MG_LM2 20000
#define FW_MG_LM25 20500 /* v2.5 (e269e200, 2021-08-10): scatter-gather sends (on by default since
                            72e4230b, 2021-02-16) and p2p_communication.py's synchronize */
/* How Megatron hands a pipeline stage's output on (fw_mg_p2p_blocking in framework.c, with
 * sources): FW_P2P_BLOCK when the sending stage's compute stream and host wait for every send
 * before its next op: Megatron-LM v2.x (framework_version >= 2.0) in every schedule,
 * Megatron-Core (0.x or unversioned) in the non-interleaved 1F1B (vp 1); FW_P2P_BLOCK_EDGES for
 * the interleaved schedule of Megatron-Core (overlap_p2p_comm): its steady phase overlaps its
 * sends, but the stream waits for each send of the warm-up forwards and of the cool-down
 * backwards (and of the last steady backward) before its next op; FW_P2P_OVERLAP for other
 * frameworks and no pipeline. *sync_s: the host round trip after each exchange
 * (torch.cuda.synchronize; 0 for FW_P2P_BLOCK_EDGES); *send_div: the divisor of the activation
 * bytes each rank sends (Megatron-LM >= v2.5's scatter-gather without sequence parallel: t). */
enum { FW_P2P_OVERLAP = 0, FW_P2P_BLOCK = 1, FW_P2P_BLOCK_EDGES = 2 };
int fw_mg_p2p_blocking(const spec_training *t, const spec_layout *l, double *sync_s, int *send_div);

/* Megatron-LM v2.x (framework_version >= 2.0, the 2021 releases; NVIDIA/Megatron-LM tag v2.5 =
 * e269e200, v2.6 = 3860e995): 0 where the tensor-parallel all-reduce of a column-parallel
 * layer's input gradient runs synchronously on the compute stream (mpu/mappings.py
 * _CopyToModelParallelRegion.backward -> _reduce, L88-89 at v2.5; the asynchronous all-reduce
 * beside the weight-gradient GEMM came with 16c90445, 2021-09-02, after v2.6, behind
 * --async-tensor-model-parallel-allreduce); 1 otherwise (Megatron-Core, other frameworks). */
int fw_mg_tp_ar_async(const spec_training *t);
/* 1 where each stage's data-parallel gradient all-reduce starts only after its last backward
 * (the pipeline flush): Megatron-LM v2.x, whose train_step calls forward_backward_func and then
 * each model chunk's allreduce_gradients (training.py L360-370 at v2.5); 0 otherwise (each
 * chunk's reduce beside the later ops, Megatron-Core's --overlap-grad-reduce). */
int fw_mg_reduce_after_flush(const spec_training *t);

#endif
