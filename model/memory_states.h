/* memory_states.h — what a memory plan fills (mem_breakdown) and the bytes per parameter of each
 * model state: the pieces below both memory.c and memory_pipe.c (which plan layouts) and the
 * engines that report a plan. Not here: any layout's plan (memory.h). */
#ifndef SC_MEMORY_STATES_H
#define SC_MEMORY_STATES_H

#include "spec.h"
#include "workload.h"

typedef struct mem_breakdown {
    double params;      /* parameter shard (+ ZeRO++ secondary copy), B                   */
    double grads;       /* gradient shard, B                                              */
    double optim;       /* optimizer state shard (fp32 master, momentum, variance), B     */
    double activations; /* kept for backward, one micro-batch, plus the larger of the loss at
                           its peak (mem_loss_bytes) and one block's recompute with context
                           parallelism's ring buffers of the attention in flight (cp.h), B */
    double gathered;    /* full layers live at once: current + prefetched params, and one
                           layer's full gradient before its reduce-scatter, B             */
    double buckets;     /* gradient reduce / all-gather buckets, B                       */
    double reserve;     /* CUDA context, NCCL buffers, allocator slack, B                 */
    double total;       /* sum of the above, B                                            */
    double hbm;         /* device memory, B                                               */
    int fits;           /* total <= hbm, and host and in-network memory fit too           */
    double short_by;    /* total - hbm when it does not fit on the GPU, else 0, B         */
    /* Offloaded states (0 where the layout keeps none there). */
    double host;        /* per node host DRAM for offloaded states (zero3-offload: fp32
                           master + Adam m, v + fp32 gradient of its GPUs' shards), B        */
    double host_cap;    /* the cluster's host memory per node (0 = not given: unchecked), B */
    double host_short_by; /* host - host_cap when it does not fit, else 0, B               */
    double innet;       /* the in-network optimizer node's memory (luwu: all parameters,
                           gradients and optimizer states, 16 B/param mixed precision), B    */
    double innet_cap;   /* its capacity, B                                                */
    double innet_short_by; /* innet - innet_cap when it does not fit, else 0, B           */
    double nvme;        /* per node NVMe for offloaded states (zero3-offload opt=nvme: fp32
                           master, m, v, fp32 gradient; param=nvme: the 16-bit shards), B    */
    double nvme_cap;    /* the cluster's NVMe per node (0 = none), B                     */
    double nvme_short_by; /* nvme - nvme_cap when it does not fit, else 0, B               */
} mem_breakdown;

/* Bytes per parameter of each model state under mixed-precision Adam (ZeRO §3: 2 + 2 + 12 = 16);
 * fp32 training: 4 + 4 + 8 (momentum, variance) = 16. */
void mem_state_bytes(spec_precision p, double *param, double *grad, double *optim);

/* Optimizer-state bytes per parameter of training t: 0 under optimizer_type sgd (SGD without
 * momentum on the parameters themselves: no master copy, no state), mem_state_bytes's, or with
 * opt_state_bf16 in 16-bit training Adam's m and v in bf16 and no fp32 master: 2 + 2 = 4
 * (Apex DistributedFusedAdam's state in its dtype; NeMo@8e3d65dc megatron_base_model.py
 * L791-807 passes optim dtype bf16 and, equal to the bf16 model's, store_params False). */
double mem_optim_bytes(const spec_training *t);

/* Whether training t moves its checkpointed block inputs to host memory (activation_offload
 * under full checkpointing: torch checkpoint_wrapper(offload_to_cpu=True) saves the block's
 * input through save_on_cpu; other policies save more than the input: not modelled). */
int mem_act_offloaded(const spec_training *t);

/* Bytes block b keeps for its backward, per micro-batch, under checkpointing policy ckpt
 * (spec.h CKPT_*): none its whole stash (act_bytes); full its input (ckpt_bytes); the op-like
 * policies (torchtitan's op SAC, MaxText's) the input and the saved matmul / attention outputs
 * (workload.c op_sac, maxtext_sac); selective everything but attention's core, the s x s scores,
 * softmax and dropout mask (act_core_bytes, 0 under FlashAttention) that Megatron recomputes
 * (Korthikanti et al. 2022 s5, Table 2's 34 sbh + 5 a s^2 b less the 5 a s^2 b). The plans of
 * memory.c and memory_pipe.c both take a block's kept bytes here. */
double mem_block_kept(const wl_layer *b, int ckpt);

/* The bytes recomputed and live at once while one checkpointed block runs its backward: the
 * whole stash under full and op-like checkpointing, the attention core under selective, 0
 * without checkpointing. */
double mem_block_recompute(const wl_layer *b, int ckpt);

/* The loss over the vocabulary on the rank that computes it, as training t's implementation
 * runs it: the implementation the step time prices too (model/workload.c wl_loss_impl_of, the
 * one home of the choice; its per-entry bytes, time beside memory, in wl_loss_costs).
 * kept, the bytes held from the loss's forward to its backward (per micro-batch in flight
 * under pipelining); peak, the most the loss holds at once, kept included (its forward's end
 * or its backward's start, whichever is larger). E = the rank's logits entries (tokens x
 * vocabulary / t / cp: w->logits_bytes / 4), e = the logits' element bytes (4 in fp32
 * training, else 2: FP8 recipes keep the output layer in bf16), per entry:
 *   Megatron's vocab_parallel_cross_entropy, fused or not (megatron_ce, loss_fp32 not off; an
 *     outside logits.float() is the copy it makes anyway): kept 4, peak 4 + e;
 *   loss_fp32, F.cross_entropy on pred.float() (torchtitan, Hugging Face, PaddleNLP without
 *     tensor parallelism): kept 4 (log_softmax's fp32 output), peak 12 (backward: the saved
 *     output, nll_loss's dense gradient, log_softmax's backward output); the forward's
 *     e + 4 + 4 is smaller;
 *   the same under torchtitan's loss_parallel (fsdp2 with t > 1): kept 4, peak 16;
 *     torchtitan pipelined (fsdp2 with p > 1): held, every micro-batch's output (the e-byte
 *     logits) on the last stage to the step's end, m e E, and at the step's end their
 *     concatenation beside them (output_chunks, _merge_outputs);
 *   fused otherwise: kept = peak = 4 (the fp32 logits; no stack names the code);
 *   loss_fp32 off, eager: kept e, peak 3e;
 *   the default: kept = peak = 4; Liger's fused linear cross-entropy (w->fused_ce):
 *     wl_logits_bytes, kept = peak.
 * Sources beside each case in workload.c wl_loss_costs (the pipelined hold in memory_states.c). */
typedef struct mem_loss {
    double kept; /* from the loss's forward to its backward, B  */
    double peak; /* the most at once, kept included, B          */
    double held; /* on the last pipeline stage, every micro-batch's output to the step's
                    end (torchtitan's pipelining; else 0), B */
} mem_loss;
void mem_loss_bytes(const wl *w, const spec_training *t, const spec_layout *l, mem_loss *o);

#endif
