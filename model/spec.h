/* spec.h — the validated input of every prediction: cluster, model, training, layout and
 * scenario specs, loaded from JSON (Jansson) or a DeepSpeed ds_config.json and checked once.
 * After a spec_* loader returns 0 the rest of shardcast may trust every field here.
 * Not here: anything derived (parameters, FLOPs: model/workload; bytes per GPU: model/memory).
 * Internal units are SI (s, B, B/s, FLOP/s); JSON keys carry theirs (see configs/README.md). */
#ifndef SC_SPEC_H
#define SC_SPEC_H

#include "../base/err.h"
#include <stddef.h>

#define SPEC_NAME_MAX 64
#define SPEC_SOURCE_MAX 512
#define SPEC_MAX_GPUS_PER_NODE 64

/* ---- cluster ------------------------------------------------------------------------- */
typedef enum {
    FABRIC_NVSWITCH,    /* every GPU has links_per_gpu links into a non-blocking switch   */
    FABRIC_NVLINK_MESH, /* explicit GPU-GPU links (V100 hybrid cube mesh, Perlmutter 4x)   */
    FABRIC_PCIE         /* no NVLink: GPU-GPU traffic crosses PCIe (workstations)         */
} spec_fabric_kind;

typedef struct spec_gpu {
    char name[SPEC_NAME_MAX]; /* "A100-SXM4-40GB"                                      */
    char arch[16];            /* "volta" | "ampere" | "hopper" | "ada" | "blackwell" | "cpu" */
    double peak_flops;        /* dense FP16/BF16 tensor-core peak, FLOP/s              */
    double hbm_bytes;         /* device memory, bytes                                  */
    double hbm_bw_Bps;        /* device memory bandwidth, B/s                          */
    int sms;                  /* streaming multiprocessors (0 = not given: the arch's)  */
    /* peak dense FLOP/s by math where the file gives it (0 = the arch's datasheet ratio
     * to peak_flops, model/kernels.c): FP32 (no tensor cores), TF32, FP8                  */
    double peak_fp32_flops, peak_tf32_flops, peak_fp8_flops;
    double clock_ratio;       /* sustained / datasheet boost clock under the power cap
                                 (1 = as in the published microbenchmarks)              */
    int clock_ratio_given;    /* the file set clock_ratio (absent: 1, said by the CLI)  */
} spec_gpu;

typedef struct spec_fabric {
    spec_fabric_kind kind;
    double link_bw_Bps; /* one NVLink, one direction, B/s (datasheet line rate)            */
    int links_per_gpu;  /* NVSwitch: links from each GPU to the switch plane               */
    /* NVLINK_MESH: links[i][j] = number of links from GPU i to GPU j (symmetric, 0 = none) */
    unsigned char links[SPEC_MAX_GPUS_PER_NODE][SPEC_MAX_GPUS_PER_NODE];
} spec_fabric;

typedef enum { NET_FAT_TREE, NET_RAIL, NET_DRAGONFLY } spec_net_topology;

/* An in-network optimizer node (LuWu, arXiv 2409.00918): holds the parameters and optimizer
 * states, attached to the top switch of the network (the leaf with one leaf, else the spine). */
typedef struct spec_innet {
    int present;             /* 0 = the cluster has none                                  */
    double port_bw_Bps;      /* its switch port, one direction, B/s                      */
    double mem_bytes;        /* memory for parameters + optimizer states, bytes          */
    int aggregation;         /* the switch sums gradients on their way (else N copies in) */
    int multicast;           /* the switch replicates parameters (else N copies out)      */
    double opt_params_per_s; /* Adam update throughput, parameters/s                     */
} spec_innet;

/* CPU Adam default, parameters/s per node: ZeRO-Offload (Ren et al., USENIX ATC 2021) Table 2
 * [recall]: CPU-Adam updates 1e9 parameters in about 1.2 s on a DGX-2 host (2x Xeon 8168). */
#define SPEC_CPU_ADAM_DEFAULT 0.8e9

/* CPU Adam scaled by the host's DRAM bandwidth, where a cluster gives $.node.host_memory_bandwidth_GBps
 * and no cpu_adam_Gparams_per_s (DeepSpeedCPUAdam streams fp32 master, grad, m, v in and master, m,
 * v out, 28 B per parameter, a few flops each: bandwidth-bound [assumption: the rate scales with the
 * host's peak DRAM bandwidth]). Reference: deepspeedai/DeepSpeed PR #735 (2021-02-08, R. Yazdani
 * Aminabadi): DeepSpeed CPU-Adam "reduces the optimizer time from 56 seconds to 8.2 seconds" for an
 * 11.6B-parameter GPT-2 = 1.41e9 parameters/s, on the ZeRO-Offload authors' DGX-2 host
 * (2x Xeon Platinum 8168, ZeRO-Offload s6.1), 6 channels of DDR4-2666 per socket [Intel ark]:
 * 2 x 6 x 2666e6 x 8 B = 255.9 GB/s peak. */
#define SPEC_CPU_ADAM_REF_RATE (11.6e9 / 8.2)
#define SPEC_CPU_ADAM_REF_BW (2 * 6 * 2666e6 * 8)

typedef struct spec_cluster {
    char name[SPEC_NAME_MAX];
    char source[SPEC_SOURCE_MAX];
    spec_gpu gpu;
    int gpus_per_node;
    spec_fabric fabric;
    double pcie_bw_Bps;       /* GPU <-> host (and NIC) PCIe, one direction, B/s         */
    int nics_per_node;
    double nic_bw_Bps;        /* one NIC, one direction, B/s                             */
    double host_mem_bytes;    /* host DRAM per node, bytes (0 = not given)               */
    double cpu_adam_params_per_s; /* host CPU Adam throughput per node, parameters/s      */
    double host_mem_bw_Bps;   /* host DRAM peak bandwidth per node, B/s (0 = not given)  */
    /* local NVMe of a node (ZeRO-Infinity offload; 0 = none given): sustained sequential
     * throughput of all its drives together, as DeepSpeed's async I/O reaches it, B/s, and
     * their capacity, B                                                                    */
    double nvme_read_Bps, nvme_write_Bps, nvme_bytes;
    /* The network between nodes (sim/net.c builds it, cost_group_spread costs it):
     * fat-tree: leaves of nodes_per_leaf nodes (all their NICs), uplinks to a spine;
     * rail: pods of nodes_per_leaf nodes, one leaf per (pod, NIC index) ("rail"), a spine;
     * dragonfly: groups of nodes_per_leaf nodes (non-blocking inside), global links. */
    spec_net_topology topology;
    double oversubscription;  /* leaf uplink (dragonfly: global link) oversubscription (1 =
                                 non-blocking)                                           */
    double switch_latency_s;  /* one switch hop, s                                       */
    int nodes_per_leaf;       /* nodes under one leaf switch / in one rail pod / dragonfly group */
    char net_source[SPEC_SOURCE_MAX]; /* $.network.source: where the topology comes from ("" = none) */
    int max_nodes;            /* largest node count that can be ordered (0 = unbounded)  */
    double price_usd_per_hour;/* per node, on-demand                                     */
    spec_innet innet;         /* optional in-network optimizer node                      */
} spec_cluster;

/* ---- model --------------------------------------------------------------------------- */
typedef struct spec_model {
    char name[SPEC_NAME_MAX];
    char source[SPEC_SOURCE_MAX];
    int encoder;          /* 1 = BERT-style bidirectional encoder, 0 = decoder          */
    int layers, hidden, heads, kv_heads, ffn, seq_len, vocab;
    int swiglu;           /* 1 = gate/up/down MLP (3 matrices), 0 = 2-matrix GeLU MLP    */
    int rmsnorm;          /* 1 = RMSNorm (weight only), 0 = LayerNorm (weight + bias)    */
    int bias;             /* linear layers carry biases                                  */
    int tied_embeddings;  /* LM head shares the token embedding                          */
    int learned_positions;/* learned position embedding (seq_len x hidden)               */
    double published_params; /* the total the source quotes, for `describe` (0 = none)   */
} spec_model;

/* ---- training ------------------------------------------------------------------------ */
/* fp32: FP32 math (no TF32); tf32: fp32 storage, TF32 tensor-core matmuls; fp8: bf16 mixed
 * precision with FP8 GEMMs (Transformer Engine style, Hopper+). */
typedef enum { PREC_BF16, PREC_FP16, PREC_FP32, PREC_TF32, PREC_FP8 } spec_precision;
/* FP8 scaling recipes (training key fp8_recipe, Transformer Engine's DelayedScaling and
 * Float8CurrentScaling). */
typedef enum { FP8_DELAYED = 0, FP8_CURRENT = 1 } spec_fp8_recipe;
/* 4-byte training (fp32, tf32) vs 16-bit mixed precision (bf16, fp16, fp8). */
#define SPEC_PREC_IS_FP32(p) ((p) == PREC_FP32 || (p) == PREC_TF32)

/* op: torchtitan's operator-level selective checkpointing (every second matmul and every
 * non-matmul op recomputed; model/workload.c wl_op_recompute_frac); save_dot_except_mlpwi and
 * save_qkv_proj: MaxText's remat policies of those names (q, k, v, out_proj and the MLP's output
 * projection saved; q, k, v only; everything else recomputed: model/workload.c maxtext_sac).
 * CKPT_IS_OPLIKE: the ones whose saved stash and recomputed share per GEMM are the block's
 * op_act_bytes and op_rec. */
typedef enum {
    CKPT_NONE = 0,
    CKPT_FULL = 1,
    CKPT_SELECTIVE = 2,
    CKPT_OP = 3,
    CKPT_MT_DOTS = 4,
    CKPT_MT_QKV = 5
} spec_ckpt;
#define CKPT_IS_OPLIKE(c) ((c) == CKPT_OP || (c) == CKPT_MT_DOTS || (c) == CKPT_MT_QKV)
/* Gradient reduction dtype (FSDP MixedPrecision.reduce_dtype / FSDP2 MixedPrecisionPolicy):
 * the framework's default (model/framework.c fw_reduce_elem_bytes), the 16-bit parameter dtype,
 * or fp32. */
typedef enum { REDUCE_DEFAULT = 0, REDUCE_PARAM = 1, REDUCE_FP32 = 2 } spec_reduce_dtype;
/* AdamW implementation (torch.optim.AdamW fused= / foreach=): the framework's default
 * (fw_opt_impl), one fused kernel, foreach (multi-tensor) passes, or a per-parameter loop. */
/* spec_training.grad_clip's foreach form: torch.nn.utils.clip_grad_norm_(..., foreach=True)
 * (model/framework.c fw_trainer_step_shard). */
#define SPEC_CLIP_FOREACH 2

typedef enum { OPT_IMPL_DEFAULT = 0, OPT_IMPL_FUSED = 1, OPT_IMPL_FOREACH = 2, OPT_IMPL_FORLOOP = 3 } spec_opt_impl;
typedef enum { EXEC_EAGER = 0, EXEC_COMPILED = 1 } spec_exec;

/* Attention kernel (training "attention_kernel", --attention-kernel; model/kernels.c times each
 * from published kernel benchmarks). AK_DEFAULT: the arch's (FlashAttention-2 on Ampere and
 * Hopper, xformers' memory-efficient kernel on Volta). */
typedef enum {
    AK_DEFAULT = 0,
    AK_FA1,            /* CUDA FlashAttention-1 (flash-attn 0.x/1.x)                     */
    AK_TRITON2022,     /* the 2022 Triton FlashAttention (flash_attn_triton.py)          */
    AK_XFORMERS,       /* xformers' CUTLASS memory-efficient attention                   */
    AK_FA2,            /* FlashAttention-2                                               */
    AK_FA3,            /* FlashAttention-3 (Hopper)                                      */
    AK_SDPA_FLASH,     /* PyTorch SDPA, flash backend (FA2 kernels from PyTorch 2.2)     */
    AK_SDPA_CUDNN,     /* PyTorch SDPA, cuDNN backend                                    */
    AK_SDPA_EFFICIENT, /* PyTorch SDPA, memory-efficient backend (xformers' kernel)      */
    AK_UNFUSED,        /* two batched GEMMs + softmax through HBM (= flash_attention off) */
    AK_N
} spec_attn_kernel;
const char *spec_attn_kernel_str(int ak);
/* Training keys set explicitly (a file's key or an option), bits of spec_training.given: a named
 * stack (model/stack.h) sets only the others. */
enum { SPEC_GIVEN_AK = 1, SPEC_GIVEN_FW = 2, SPEC_GIVEN_EXEC = 4, SPEC_GIVEN_CKPT = 8, SPEC_GIVEN_RD = 16, SPEC_GIVEN_OPT = 32,
       /* the eager element-wise flags, in the order norm_fp32, rope_fp32, repeat_kv, loss_fp32, swiglu_unfused */
       SPEC_GIVEN_NORM = 64, SPEC_GIVEN_ROPE = 128, SPEC_GIVEN_RKV = 256, SPEC_GIVEN_LOSS = 512, SPEC_GIVEN_SWIGLU = 1024,
       SPEC_GIVEN_TPO = 2048 /* tp_comm_overlap */, SPEC_GIVEN_GELU = 4096 /* gelu_unfused */,
       SPEC_GIVEN_MASK = 8192 /* mask_unfused */, SPEC_GIVEN_AMP = 16384 /* autocast */,
       SPEC_GIVEN_OPG = 32768 /* overlap_param_gather */, SPEC_GIVEN_BUCKET = 65536 /* bucket_MB */,
       SPEC_GIVEN_FLCE = 131072 /* fused_linear_ce */, SPEC_GIVEN_ROPEU = 262144 /* rope_unfused */,
       SPEC_GIVEN_LOSSF = 524288 /* loss_fusion */, SPEC_GIVEN_MCE = 1048576 /* megatron_ce */,
       SPEC_GIVEN_ATP = 2097152 /* atorch_tp */, SPEC_GIVEN_CLIP = 4194304 /* grad_clip */ };
int spec_attn_kernel_parse(const char *s); /* -1: not a kernel name */

/* Who runs the layout (model/framework.h): the papers' schedule ("ideal", the default when no
 * framework is named: today's op graphs), DeepSpeed, PyTorch FSDP (FSDP1), FSDP2
 * (fully_shard) or Megatron-LM. Each schedules the same layout differently. */
typedef enum { FW_IDEAL, FW_DEEPSPEED, FW_FSDP, FW_FSDP2, FW_MEGATRON, N_FRAMEWORKS } spec_framework;

typedef struct spec_training {
    int micro_batch;        /* sequences per GPU per micro-step                          */
    int grad_accum;         /* micro-steps per optimizer step                            */
    spec_precision precision;
    int act_ckpt;           /* spec_ckpt: none, full (recompute the block's forward), or
                               selective (recompute attention's core only, Megatron)      */
    int execution;          /* spec_exec: eager kernels, or compiled (fused element-wise) */
    int precision_given;    /* precision came from a file or option (else the default,
                               which a GPU without bf16 runs as fp16)                     */
    int flash_attention;    /* fused attention: no s x s scores stored                   */
    int flash_version;      /* fused kernel: 2 = FlashAttention-2 (default), 3 = FA-3 (Hopper) */
    int attn_kernel;        /* spec_attn_kernel (AK_DEFAULT: the arch's)                      */
    char stack[64];         /* named software stack (configs/stacks; "" = none, model/stack.h) */
    unsigned given;         /* SPEC_GIVEN_* keys set explicitly: a stack does not override them */
    int prefetch_layers;    /* sharded layouts: layers all-gathered ahead of use         */
    double bucket_bytes;    /* gradient / all-gather bucket, bytes                       */
    double reserve_bytes;   /* CUDA context, NCCL buffers, allocator slack, bytes        */
    /* framework and its schedule knobs (model/framework.c reads them; 0 / -1 = its default) */
    spec_framework framework;
    int overlap_comm;       /* DeepSpeed overlap_comm: -1 = its default (stage 3 on, else off) */
    double allgather_bucket_bytes; /* DeepSpeed ZeRO-1/2 post-step all-gather bucket (0 = 5e8 elements) */
    double reduce_bucket_bytes;    /* DeepSpeed reduce_bucket_size, bytes (0 = 5e8 elements)   */
    double prefetch_bucket_bytes;  /* DeepSpeed ZeRO-3 stage3_prefetch_bucket_size, bytes (0 = 5e7 elements) */
    double max_live_params;        /* DeepSpeed ZeRO-3 stage3_max_live_parameters (0 = 1e9)   */
    int limit_all_gathers;  /* FSDP1: at most two all-gathers in flight (-1 = default on)     */
    int backward_prefetch;  /* FSDP: 0 BACKWARD_PRE (default), 1 BACKWARD_POST, 2 none        */
    int train_batch;        /* ds_config train_batch_size to check against micro x accum x dp (0 = none) */
    int ga_from_batch;      /* 1: grad_accum was not given: derived from train_batch_size      */
    /* issue 27 (model/workload.c, model/framework.c): 0 / -1 = the default named there */
    int reduce_dtype;       /* spec_reduce_dtype of the gradient reductions                    */
    int opt_impl;           /* spec_opt_impl of the AdamW step                                 */
    /* eager element-wise implementation (model/workload.c ew_block): -1 = default (off; loss:
     * on in eager, as Megatron / DeepSpeed upcast the logits); compiled execution fuses the
     * upcasts (norm, rope, loss) but still materialises repeat_kv                          */
    int norm_fp32;          /* RMSNorm / LayerNorm computed in fp32 by separate kernels       */
    int rope_fp32;          /* rotary embedding through complex fp32 (view_as_complex)        */
    int rope_unfused;       /* rotary embedding as 16-bit eager tensor arithmetic (Hugging Face
                               apply_rotary_pos_emb: mul, neg, cat, mul, add); rope_fp32 wins */
    int repeat_kv;          /* GQA K and V repeated to all heads in HBM before attention      */
    int loss_fp32;          /* logits upcast to fp32 before the cross-entropy                 */
    int swiglu_unfused;     /* SwiGLU as separate silu and mul kernels                        */
    int gelu_unfused;       /* tanh-approximation GELU as eight eager kernels (Hugging Face
                               gelu_new / NewGELUActivation)                                   */
    int mask_unfused;       /* unfused attention: scale, causal mask and padding-mask add as
                               three kernels instead of one (Hugging Face GPT-2 _attn)         */
    int autocast;           /* torch.cuda.amp: fp32 parameters cast per forward, the unfused
                               softmax and its dropout in fp32 (model/workload.c)              */
    int grad_clip;          /* the trainer clips the gradient norm with torch's per-parameter
                               clip_grad_norm_ loop (1, torch < 2.0; fw_trainer_step), or its
                               foreach form (SPEC_CLIP_FOREACH, a stack's "foreach"); -1 = off
                               (framework megatron: -1 = on, its own clip, fw_trainer_step_shard) */
    int ddp_bucket_copy;    /* torch DDP with gradient_as_bucket_view off (its default): each
                               gradient copied into its bucket and back (fw_trainer_step); -1 = off */
    int bias_unfused;       /* eager torch before the cuBLASLt bias epilogue of addmm: each biased
                               projection's bias copied into its output before the GEMM, and its
                               gradient summed over the tokens by a separate kernel
                               (model/workload.c ew_bias_unfused); -1 = off                     */
    int tc_align8;          /* cuBLAS before 11.0 (CUDA 10.x): a 16-bit GEMM takes the tensor cores
                               only when m, n and k are multiples of 8, else it runs FP32 math
                               (model/cost.c gemm_math; dsv37); -1 = off                       */
    int contiguous_gradients; /* DeepSpeed ZeRO-1/2 contiguous_gradients: each gradient copied into
                               the ipg bucket buffer (model/framework.c ds_era, dsv37); -1 = the
                               release's default (on from v0.4.3)                              */
    int tp_comm_overlap;    /* Megatron --tp-comm-overlap (Transformer Engine userbuffers): the
                               sequence-parallel all-gathers / reduce-scatters run beside their
                               GEMMs (model/layout_tensor.c); -1 = default (off)              */
    int overlap_param_gather; /* Megatron-Core --overlap-param-gather (distributed optimizer): the
                               updated parameters' all-gather runs beside the next forward,
                               layer by layer, not after the optimizer; -1 = default (off)    */
    int fused_linear_ce;    /* the head's projection fused with the cross-entropy in token chunks
                               (Liger-Kernel LigerFusedLinearCrossEntropy): no whole fp32 logits
                               tensor (model/workload.c wl_logits_bytes); -1 = default (off)  */
    int loss_fusion;        /* the cross-entropy as one fused kernel (Megatron
                               --cross-entropy-loss-fusion): 1 fused, 0 the framework's unfused
                               kernels (model/workload.c ew_head); -1 = the execution's (fused
                               when compiled)                                                   */
    int framework_version;  /* the framework's release, major * 10000 + minor * 100 + patch
                               (0.5 -> 500, 0.12.4 -> 1204; parts not given are 0); 0 = today's */
    int reduce_scatter;     /* DeepSpeed ZeRO-1/2 reduce_scatter (-1 = default true; 0: all-reduce) */
    int ds_mpu;             /* Megatron-DeepSpeed's model code, which hands DeepSpeed its mpu
                               (--no-pipeline-parallel): ZeRO-3's all-gathers and reduce-scatters
                               on its one data-parallel process group, so one NCCL stream, and
                               q, k, v one Linear, one fetch (model/framework.c); -1 = off */
    int megatron_ce;        /* the loss is Megatron's tensor_parallel vocab_parallel_cross_entropy
                               over output.float() (Megatron-DeepSpeed's and DeepSpeedExamples'
                               Megatron model code too): its unfused kernels when the loss is not
                               fused, unless loss_fp32 is off (model/workload.c wl_loss_impl_of,
                               for the step time and the memory plan); -1 = framework megatron's */
    int atorch_tp;          /* ATorch's manual tensor parallelism (TPInfo shard_col / shard_row):
                               q, k, v, gate and up each their own ColumnParallelLinear, each
                               all-reducing its input gradient in backward, synchronously
                               (model/layout_tensor.c tp_block_bwd); -1 = off (Megatron's)      */
    int opt_state_bf16;     /* Adam's state in bf16 and no fp32 master copy (training key
                               optimizer_state_dtype bf16; model/memory_states.c mem_optim_bytes):
                               NeMo's Apex distributed_fused_adam with optim dtype bf16 on a bf16
                               model; 0 = fp32 master + m + v (ZeRO's 12 B/param)              */
    int opt_sgd;            /* training key optimizer_type "sgd": torch.optim.SGD without momentum
                               stepping the parameters in the training's precision, no master
                               copy and no state (a model cast whole to 16 bits, as the PyTorch
                               FSDP 1T post's trainer: model/memory_states.c, framework.c);
                               0 = AdamW (the default)                                        */
    int fsdp_wrap_module;   /* training key fsdp_wrap "module" (framework fsdp): each block's
                               attention, MLP linears and norms FSDP units of their own inside
                               the block's checkpoint (the PyTorch FSDP 1T post's trainer);
                               0 = "block", one unit per block (model/framework.c fw_fsdp_units) */
    int fp8_recipe;         /* training key fp8_recipe (spec_fp8_recipe), precision fp8 under
                               Transformer Engine (framework megatron): delayed (the amax history's
                               scale, the amax taken inside the cast) or current (per-tensor
                               current scaling: a separate amax pass, and under sequence
                               parallelism an amax all-reduce over the tensor group); -1 =
                               delayed, Megatron-LM's --fp8-recipe default (workload.c fp8_casts) */
    int act_offload;        /* training key activation_offload: checkpointing's saved block
                               inputs moved to pinned host memory in the forward and back in the
                               backward (torch checkpoint_wrapper(offload_to_cpu=True), i.e.
                               autograd save_on_cpu(pin_memory=True); model/layout_ops.c,
                               memory.c); -1 = off                                              */
    double persist_threshold; /* DeepSpeed stage3_param_persistence_threshold, elements (0 = 1e5) */
    double max_reuse_params;  /* DeepSpeed stage3_max_reuse_distance, elements (0 = 1e9): a sub-module's
                                 parameters are released unless the trace uses them again within
                                 it (model/ds_coordinator.c dsc_regather)                        */
    /* dropout probabilities, 0 to < 1 (knobs35; model/workload.c wl_dropout: their kernels and
     * masks when > 0, none at 0; the probability itself changes no byte); -1 = the default of
     * the framework / model family (wl_dropout). A config reader that states them sets them. */
    double hidden_dropout;    /* after attention's projection and after the MLP (Megatron
                                 --hidden-dropout, HF resid_pdrop / hidden_dropout)             */
    double attention_dropout; /* on the attention probabilities (Megatron --attention-dropout,
                                 HF attn_pdrop / attention_dropout)                             */
    /* packed sequences attended per document (issue 27: Megatron-Core PackedSeqParams,
     * qkv_format thd, cu_seqlens into the fused kernel): the documents' length-weighted mean
     * length E[l^2] / E[l] in tokens, so that a sequence of s tokens holds s / attn_doc_len
     * documents' worth of attention, sum l_i^2 = s x attn_doc_len (model/workload.c
     * wl_attn_doc); 0 = one document per sequence (the whole s x s)                     */
    double attn_doc_len;
} spec_training;

/* ---- layout -------------------------------------------------------------------------- */
typedef enum {
    LAYOUT_DDP,
    LAYOUT_ZERO1,  /* p = 0: over all ranks; p > 0: states sharded within p, replicated across */
    LAYOUT_ZERO2,
    LAYOUT_ZERO3,
    LAYOUT_MICS,   /* p = partition group size, hier = hierarchical all-gather          */
    LAYOUT_HSDP,   /* p = shard group size; sync_boundary = all-reduce only at boundary  */
    LAYOUT_ZEROPP, /* p = hpZ secondary partition size                                  */
    LAYOUT_TP,     /* Megatron-LM tensor parallelism over t GPUs of a node, data parallel
                      (zero1 = 1: ZeRO-1) across the N/t replicas                          */
    LAYOUT_AXONN,  /* AxoNN 4D: a Gx x Gy x Gz tensor-parallel grid, Gdata replicas        */
    LAYOUT_ZERO3_OFFLOAD, /* ZeRO-3, optimizer states and update on the host CPU        */
    LAYOUT_LUWU,   /* LuWu: parameters and optimizer on an in-network optimizer node      */
    LAYOUT_SHARD_GRAD_OP, /* FSDP SHARD_GRAD_OP: parameters gathered once per micro-step
                             (forward) and kept until the backward ends; grads reduce-scattered */
    LAYOUT_HSDP_ZERO2,    /* FSDP _HYBRID_SHARD_ZERO2: SHARD_GRAD_OP inside p ranks, replicas
                             all-reduce the gradient shards                                  */
    LAYOUT_MEGATRON, /* Megatron-LM 3D: tensor t x pipeline pp (vp virtual stages per rank) x
                       data parallel over the rest (zero1 = 1: distributed optimizer);
                       micro_batch = Megatron's micro-batch per model replica              */
    LAYOUT_RAF,     /* FSDP2 fully_shard(reshard_after_forward=p): sharded over all ranks,
                       each layer resharded to p consecutive ranks after its forward and
                       all-gathered among those p in the backward (hpZ's schedule)         */
    LAYOUT_ZERO2_OFFLOAD /* ZeRO-2 with DeepSpeed's offload_optimizer (ZeRO-Offload): 16-bit
                            parameters whole on every GPU, gradient partitions copied to the
                            host, CPU Adam there, the updated partition copied back        */
} spec_layout_kind;

typedef enum { PIPE_1F1B, PIPE_GPIPE } spec_pipe_sched;
/* Memory tier of offloaded states (zero3-offload:param=..,opt=..). */
typedef enum { OFF_GPU, OFF_CPU, OFF_NVME } spec_offload;

#define SPEC_AXES 4 /* AxoNN grid axes x, y, z, d */
/* The most GPUs a study may have (2^22): every product of group sizes and node counts fits an int. */
#define SPEC_MAX_RANKS (1 << 22)

typedef struct spec_layout {
    spec_layout_kind kind;
    int p;             /* shard / partition group size (0 = all ranks, for ZeRO)         */
    int hier;          /* MiCS: hierarchical all-gather across nodes (default 1)         */
    int sync_boundary; /* HSDP: replica all-reduce only at the accumulation boundary    */
    int t;             /* TP: tensor-parallel degree                                     */
    int zero1;         /* TP: optimizer states sharded over the replicas (default 1)     */
    int zero2;         /* megatron (p = 1): gradients reduced to their owners every micro-step,
                          each rank keeping its shard (PaddleNLP sharding stage 2; default 0) */
    int grid[SPEC_AXES]; /* AxoNN: Gx, Gy, Gz, Gdata (Gdata 0 = GPUs / (Gx Gy Gz))        */
    char placement[SPEC_AXES + 1]; /* AxoNN: the axes from the innermost (consecutive ranks,
                                      inside a node) outwards, a permutation of "xyzd"     */
    int overlap;       /* TP/AxoNN: collectives overlap independent compute (default 1)  */
    int qwz, qgz;      /* ZeRO++: quantized weights all-gather (int8), quantized gradients
                          (int4 hierarchical all-to-all) (default 0)                       */
    /* Megatron 3D (layout_pipe.c): pp pipeline stages, vp virtual stages (model chunks) per
     * rank (1: plain 1F1B / GPipe; > 1: interleaved 1F1B), sp sequence parallelism with TP
     * (default 1), cp context parallel size (model/cp.h), the schedule. */
    int pp, vp, sp, cp;
    spec_pipe_sched sched;
    int dp;            /* zero3 spelled fsdp2:dp=D,cp=C (torchtitan): D as given (0: not
                          given); zero3 with cp > 1 shards over all D x cp ranks (cp.h)     */
    int atp;           /* zero3 with t > 1 (fsdp2:dp=D,t=T, layout_dp.c): torchtitan's async
                          TP (asynctp=1), its TP collectives micro-pipelined with the GEMMs */
    /* zero3-offload (ZeRO-Offload / ZeRO-Infinity, layout_infinity.c): where the 16-bit
     * parameter shards live (DeepSpeed offload_param.device) and where the fp32 optimizer
     * states live (offload_optimizer.device; the update always runs on the host CPU) */
    spec_offload off_param; /* OFF_GPU (default: not offloaded), OFF_CPU, OFF_NVME          */
    spec_offload off_opt;   /* OFF_CPU (default; OFF_GPU read as OFF_CPU), OFF_NVME          */
    /* Megatron 3D's uneven pipeline split (layout_pipe.c layout_pipe_split_layout): split_embed /
     * split_loss count the embedding / the loss as one layer each (Megatron-Core
     * account_for_embedding_in_pipeline_split / _loss_), first / last the transformer layers of
     * the first / last stage (num_layers_in_first / last_pipeline_stage; 0: not given) */
    int split_embed, split_loss, first, last;
} spec_layout;

/* ---- scenario ------------------------------------------------------------------------ */
#define SPEC_MAX_LIST 32
typedef struct spec_scenario {
    char name[SPEC_NAME_MAX];
    char source[SPEC_SOURCE_MAX];
    char cluster[256];              /* name or path, resolved like --cluster          */
    char model[256];
    int nodes[SPEC_MAX_LIST];
    int n_nodes;
    char layouts[SPEC_MAX_LIST][64];
    int n_layouts;
    spec_training training;         /* defaults, then the scenario's "training" object */
} spec_scenario;

/* Defaults used when a training spec leaves a key out (documented in configs/README.md). */
void spec_training_defaults(spec_training *t);

/* Loaders: parse + validate a file. Errors name the file and the JSON path. */
int spec_load_cluster(const char *path, spec_cluster *out, sc_err *err) SC_MUST_CHECK;
int spec_load_model(const char *path, spec_model *out, sc_err *err) SC_MUST_CHECK;
/* Applies the keys present in the file on top of *out (call spec_training_defaults first). */
int spec_load_training(const char *path, spec_training *out, sc_err *err) SC_MUST_CHECK;
int spec_load_scenario(const char *path, spec_scenario *out, sc_err *err) SC_MUST_CHECK;
/* DeepSpeed ds_config.json: training fields on top of *t, and the layout it implies. */
int spec_load_ds_config(const char *path, spec_training *t, spec_layout *layout, sc_err *err) SC_MUST_CHECK;

/* The same from a string already in memory (tests, fuzzing); `source` names it in errors. */
int spec_parse_cluster(const char *json, const char *source, spec_cluster *out, sc_err *err) SC_MUST_CHECK;
int spec_parse_model(const char *json, const char *source, spec_model *out, sc_err *err) SC_MUST_CHECK;
int spec_parse_training(const char *json, const char *source, spec_training *out, sc_err *err) SC_MUST_CHECK;

/* The bounds every model meets however it was read (a model spec, a Hugging Face config.json):
 * a non-empty name without control characters, layers 1..SPEC_MODEL_MAX_LAYERS, hidden, heads,
 * ffn, seq_len and vocab 1..SPEC_MODEL_MAX_DIM, heads dividing hidden, kv_heads dividing heads. The loaders report a bad key by its own JSON
 * path first; this is the shared last check (errors name `source` and the spec key). */
#define SPEC_MODEL_MAX_LAYERS 100000
#define SPEC_MODEL_MAX_DIM (1L << 24)
int spec_model_check(const spec_model *m, const char *source, sc_err *err) SC_MUST_CHECK;

/* Layout strings: "ddp", "zero1[:p=P]", "zero2[:p=P]", "zero3[:raf=0]" (raf=0: shard_grad_op),
 * "mics:p=8", "mics:p=16,hier=0",
 * "hsdp:p=8", "hsdp:p=8,sync=boundary", "zeropp[:hpz=8][,qwz=1][,qgz=1]", "shard_grad_op",
 * "hybrid_shard_zero2:p=8", "tp:t=8[,zero1=0|1][,overlap=0|1]",
 * "megatron:t=T,p=P[,...][,zero2=1]" (zero2=1: p = 1 and zero1=1 only),
 * "axonn:x=X,y=Y,z=Z[,d=D][,placement=xyzd][,overlap=0|1]",
 * "zero3-offload[:param=gpu|cpu|nvme][,opt=cpu|nvme]" (ZeRO-Infinity), "luwu", "raf:p=8" (FSDP2's
 * reshard_after_forward=8), "zero2-offload" (ZeRO-Offload: ZeRO-2, optimizer on the host). */
int spec_layout_parse(const char *s, spec_layout *out, sc_err *err) SC_MUST_CHECK;
/* Canonical string of a layout ("mics:p=16,hier=0"), into buf. */
const char *spec_layout_str(const spec_layout *l, char *buf, unsigned long n);
/* The layout kinds, one table (model/spec_layout.c): how many, and each one's name ("mics"),
 * which is also plan's family name; NULL past the last. */
int spec_layout_n_kinds(void);
const char *spec_layout_kind_name(spec_layout_kind k);
/* The kinds table's memory columns for layout l on n_ranks GPUs: the divisor of each model state
 * over the GPUs (div: parameters, gradients, optimizer states; 1 = replicated), whether the
 * parameters are sharded (gathered before use: model/memory counts gathered layers, not
 * buckets) and whether every layer stays gathered from its forward to its backward (keep_full:
 * SHARD_GRAD_OP). What is not a divisor stays in model/memory*.c: offloaded states (zero3-offload,
 * zero2-offload, luwu), ZeRO++'s secondary copy, AxoNN's gathered block, pipelines (megatron). */
typedef struct spec_layout_states {
    double div[3];
    int sharded, keep_full;
} spec_layout_states;
void spec_layout_states_of(const spec_layout *l, int n_ranks, spec_layout_states *out);
/* The layout on this cluster and node count: p divides the GPU count and aligns with nodes.
 * This, spec_layout_check_model, _check_training, _shard, _replicas and _batch_share are
 * defined in model/layout_kind.c: the kinds' dispatch table calls each kind's family file. */
int spec_layout_check(const spec_layout *l, const spec_cluster *c, int nodes, sc_err *err) SC_MUST_CHECK;
/* Nodes one tensor-parallel group spans (tp, megatron): t / gpus_per_node when t is larger (its
 * all-reduces then cross the NICs), else 1. */
int spec_layout_tp_nodes(const spec_layout *l, int gpus_per_node);
/* 1 when p orders the axes x, y, z, d (a permutation of "xyzd"), else 0. */
int spec_placement_valid(const char *p);
/* Size and stride of each grid axis (x, y, z, d) of layout l on n_ranks GPUs: axonn its grid
 * under its placement (innermost axis stride 1; an empty placement is "xyzd"), tp tensor on x
 * and data on d, every other layout one axis of size 1. Returns 0, or -1 when the placement is
 * not a permutation or the grid does not divide n_ranks. */
int spec_layout_axes(const spec_layout *l, int n_ranks, int size[SPEC_AXES], int stride[SPEC_AXES]) SC_MUST_CHECK;
/* The layout on this model: tensor parallelism splits attention heads (tp: t | heads and
 * kv_heads; axonn: y | heads and kv_heads, x and y | hidden and ffn). */
int spec_layout_check_model(const spec_layout *l, const spec_model *m, sc_err *err) SC_MUST_CHECK;
/* The layout with this training: megatron with vp > 1 needs grad_accum a multiple of p. */
int spec_layout_check_training(const spec_layout *l, const spec_training *t, sc_err *err) SC_MUST_CHECK;
/* Node count possible on this cluster (1..max_nodes). `source` names the option/file. */
int spec_nodes_check(const spec_cluster *c, int nodes, const char *source, sc_err *err) SC_MUST_CHECK;
/* Shard group size of a layout on n ranks (ddp: 1, zero1-3: n, zero1/2:p, mics, hsdp,
 * hybrid_shard_zero2: p, zeropp, shard_grad_op, raf: n; tp, axonn, megatron: their rows). */
int spec_layout_shard(const spec_layout *l, int n_ranks);
/* The one replica formula: GPUs holding one model replica (megatron t x p x cp, tp t, axonn
 * x y z, every other kind 1), and the GPUs that share one micro-batch (the replica where the kind
 * counts micro_batch per replica, Megatron-LM's --micro-batch-size; else 1: micro_batch per GPU,
 * configs/README.md). A step is micro_batch x grad_accum x N / spec_layout_batch_share sequences. */
int spec_layout_replicas(const spec_layout *l);
int spec_layout_batch_share(const spec_layout *l);
/* The layout of kind `name` ("hsdp") with every option at spec_layout_parse's default, the
 * kind's required options not given yet (a config reader fills them, then checks the layout):
 * the grammar's constructor beside parse, so that no reader assigns a kind. Unknown name: the
 * parse error. */
int spec_layout_make(const char *name, spec_layout *out, sc_err *err) SC_MUST_CHECK;
/* Where a kind keeps and updates the optimizer states (its row in model/layout_kind.c). */
typedef enum { SPEC_AT_GPU, SPEC_AT_HOST, SPEC_AT_INNET } spec_states_at;
spec_states_at spec_layout_states_at(spec_layout_kind k);
/* The kinds whose states live at `at`, bit k for kind k (plan's family mask). */
unsigned spec_layout_kinds_at(spec_states_at at);
/* A group size p that a config reader left 0 (the cluster unknown then) set to one node where the
 * kind shards inside a node by default (FSDP's HYBRID_SHARD); other layouts left alone. */
void spec_layout_default_group(spec_layout *l, int gpus_per_node);

const char *spec_precision_str(spec_precision p);
const char *spec_ckpt_str(int ckpt);
/* "default" | "param" | "fp32" (spec_reduce_dtype); "default" | "fused" | "foreach" | "forloop"
 * (spec_opt_impl). */
const char *spec_reduce_dtype_str(int r);
const char *spec_opt_impl_str(int o);
/* FP8 training under Transformer Engine's per-tensor current scaling (training key fp8_recipe). */
static inline int spec_fp8_current(const spec_training *t)
{
    return t->precision == PREC_FP8 && t->fp8_recipe == FP8_CURRENT;
}

/* The GPU can run this precision (bf16 needs Ampere+, fp8 Hopper+); else an error naming
 * `source` (the file or option). */
int spec_precision_check(const spec_cluster *c, spec_precision p, const char *source, sc_err *err) SC_MUST_CHECK;
/* The training on this cluster: its precision, and FlashAttention-3 only on Hopper. */
int spec_training_check(const spec_cluster *c, const spec_training *t, const char *source, sc_err *err) SC_MUST_CHECK;
/* "ideal" | "deepspeed" | "fsdp" | "fsdp2" | "megatron"; parse returns -1 for anything else. */
const char *spec_framework_str(spec_framework f);
int spec_framework_parse(const char *s);
/* "name@version" (or a bare name): the framework as spec_framework_parse, and in *version the
 * release (spec_version_parse; 0 without '@'). -1 on a bad name or version. */
int spec_framework_parse_at(const char *s, int *version);
/* A release "M", "M.m" or "M.m.p" (each part 0..99 after the first, major 0..999) into
 * major * 10000 + minor * 100 + patch; -1 if malformed. */
int spec_version_parse(const char *s);
/* Writes version v as "M.m" or "M.m.p" (patch shown when not 0) into buf. */
const char *spec_version_str(int v, char *buf, size_t n);

/* What a ds_config said that shardcast does not model: one line per key (JSON path and why). */
#define SPEC_DS_MAX_NOTES 48
typedef struct spec_ds_report {
    int n;
    char path[SPEC_DS_MAX_NOTES][96];
    char why[SPEC_DS_MAX_NOTES][160];
    int auto_mb, auto_ga, auto_batch; /* "auto" left to shardcast's values                 */
    int auto_bucket, auto_prefetch;   /* "auto" resolved from the model's hidden size        */
    int ga_given;                     /* gradient_accumulation_steps was a number            */
    int acc_processes, acc_machines;  /* accelerate's num_processes / num_machines (0: not a
                                       * positive integer): the launch the file was written for */
} spec_ds_report;
/* spec_load_ds_config with the report of ignored keys (rep may be NULL). */
/* Add one line to a report (its JSON path and why; rep NULL or full: dropped). */
void spec_ds_note(spec_ds_report *rep, const char *path, const char *why);
int spec_load_ds_config_ex(const char *path, spec_training *t, spec_layout *layout, spec_ds_report *rep,
                           sc_err *err) SC_MUST_CHECK;
/* A Hugging Face accelerate FSDP config (YAML): precision, checkpointing, framework (fsdp /
 * fsdp2), backward prefetch, limit_all_gathers and the layout its sharding strategy names
 * (HYBRID_SHARD*: p = gpus_per_node; 0 when not known yet). Unmodelled keys go to rep. */
int spec_load_accelerate(const char *path, int gpus_per_node, spec_training *t, spec_layout *l, spec_ds_report *rep,
                         sc_err *err) SC_MUST_CHECK;
/* Hugging Face's "auto" for the bucket keys: reduce_bucket_size = hidden^2,
 * stage3_prefetch_bucket_size = 0.9 hidden^2 (transformers integrations/deepspeed.py). */
void spec_ds_resolve_auto(const spec_ds_report *rep, int hidden, spec_training *t);
/* train_batch_size against micro-batch x accumulation x data-parallel ranks; when the
 * accumulation was not given, derive it (DeepSpeed's rule). `source` names the file. */
int spec_ds_check_batch(spec_training *t, int dp, const char *source, sc_err *err) SC_MUST_CHECK;
const char *spec_fabric_str(spec_fabric_kind k);

/* Resolve a name ("p4d.24xlarge") or a path to a readable file. kind is "clusters",
 * "models", "calibrations", "scenarios" or "training". Search order: the name as a path;
 * $SHARDCAST_CONFIGS/<kind>/<name>.json; each of roots[]/<kind>/<name>.json. */
int spec_resolve(const char *kind, const char *name, const char *const *roots, int n_roots,
                 char *out, unsigned long outlen, sc_err *err) SC_MUST_CHECK;
/* The shipped names of a kind closest to `name` (edit distance, or `name` a prefix of it: 1;
 * then the fewer edits), if close enough to be a typo: 0 and the name in out (names tied: "a or b",
 * "a, b or c"; the first three in byte order, then "or N more"), else -1. Used for "did you mean ...?". */
int spec_suggest(const char *kind, const char *name, const char *const *dirs, int n_dirs, char *out,
                 unsigned long outlen) SC_MUST_CHECK;

#endif
