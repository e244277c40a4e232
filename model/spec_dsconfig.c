/* spec_dsconfig.c — read a DeepSpeed ds_config.json into a training spec and the layout it
 * implies, losing nothing silently: every key that changes time or memory is honoured, resolved
 * ("auto", as the Hugging Face integration resolves it) or reported as not modelled, and keys
 * with no effect on either (learning rate, logging) are accepted quietly.
 * Not here: printing the report (cli/common.c) or what the layout does (model/layout*.c).
 * Defaults and meanings: DeepSpeed deepspeed/runtime/zero/config.py (reduce_bucket_size 5e8,
 * allgather_bucket_size 5e8, stage3_prefetch_bucket_size 5e7, stage3_max_live_parameters 1e9,
 * overlap_comm on for stage 3 only); Hugging Face transformers integrations/deepspeed.py
 * (HfTrainerDeepSpeedConfig.trainer_config_process / trainer_config_finalize) for "auto". */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../base/jsonrd.h"
#include "../base/str.h"
#include "spec.h"
#include "spec_hf.h"

void spec_ds_note(spec_ds_report *rep, const char *path, const char *why)
{
    if (!rep || rep->n >= SPEC_DS_MAX_NOTES)
        return;
    snprintf(rep->path[rep->n], sizeof rep->path[0], "%s", path);
    snprintf(rep->why[rep->n], sizeof rep->why[0], "%s", why);
    rep->n++;
}

static int is_auto(const json_t *v) { return json_is_string(v) && !strcmp(json_string_value(v), "auto"); }

/* An integer key that may be "auto": *automatic = 1 then, *out untouched. */
static int int_or_auto(jr *r, const json_t *o, const char *base, const char *key, long lo, long hi, int *out,
                       int *automatic)
{
    const json_t *v = json_object_get(o, key);
    if (v && is_auto(v)) {
        *automatic = 1;
        return 0;
    }
    return jr_int(r, o, base, key, lo, hi, 0, out);
}

/* A size in elements (DeepSpeed writes 5e8 or 500000000) that may be "auto". */
static int num_or_auto(jr *r, const json_t *o, const char *base, const char *key, double *out, int *automatic)
{
    const json_t *v = json_object_get(o, key);
    if (v && is_auto(v)) {
        *automatic = 1;
        return 0;
    }
    return jr_min(r, o, base, key, 0.0, 0, out);
}

/* A boolean that may be "auto" (fp16/bf16.enabled: Hugging Face's --fp16 / --bf16). */
static int bool_or_auto(jr *r, const json_t *o, const char *base, const char *key, int *out, int *automatic)
{
    const json_t *v = json_object_get(o, key);
    if (v && is_auto(v)) {
        *automatic = 1;
        return 0;
    }
    return jr_bool(r, o, base, key, out);
}

static int in_list(const char *k, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(k, list[i]))
            return 1;
    return 0;
}

/* Keys read below, keys with no effect on time or memory (quiet), and the rest (reported). */
static const char *const TOP_READ[] = {"train_micro_batch_size_per_gpu", "gradient_accumulation_steps",
                                       "train_batch_size", "fp16", "bf16", "activation_checkpointing",
                                       "zero_optimization", "optimizer", "communication_data_type", NULL};
static const char *const TOP_QUIET[] = {"scheduler", "gradient_clipping", "steps_per_print", "wall_clock_breakdown",
                                        "tensorboard", "wandb", "csv_monitor", "comet", "comms_logger",
                                        "flops_profiler", "zero_allow_untested_optimizer", "zero_force_ds_cpu_optimizer",
                                        "dump_state", "checkpoint", "memory_breakdown", "prescale_gradients",
                                        "gradient_predivide_factor", "seed", NULL};
/* contiguous_gradients first: stage 3 passes Z_READ + 1 (ds_zero_keys), so there it is noted */
static const char *const Z_READ[] = {"contiguous_gradients", "stage", "mics_shard_size", "mics_hierarchical_params_gather",
                                     "zero_hpz_partition_size", "reduce_bucket_size", "allgather_bucket_size",
                                     "overlap_comm", "stage3_prefetch_bucket_size", "stage3_max_live_parameters",
                                     "offload_optimizer", "offload_param", "zero_quantized_weights",
                                     "zero_quantized_gradients", "reduce_scatter", "allgather_partitions",
                                     "stage3_max_reuse_distance", "cpu_offload", NULL};
/* checkpoint-time only, or no effect on a step */
static const char *const Z_QUIET[] = {"stage3_gather_16bit_weights_on_model_save", "stage3_gather_fp16_weights_on_model_save",
                                      "elastic_checkpoint", "load_from_fp32_weights", "ignore_unused_parameters",
                                      "legacy_stage1", NULL};

/* ---- which keys DeepSpeed knows ---------------------------------------------------------------
 * A key DeepSpeed does not know is a typo that would silently change the job (mics_shard_sise
 * would turn MiCS into ZeRO-3): an error with the nearest known key. A key DeepSpeed knows and
 * shardcast does not model is a note (--strict: an error). The lists are DeepSpeed's at commit
 * edaa7221267243c7be7fb49c5d5f5c4fb97b4641 (2025-08): top level from deepspeed/runtime/config.py
 * and constants.py (and the sections other modules read: activation_checkpointing,
 * flops_profiler, monitor, comms_logger, aio, elasticity, autotuning, ...); zero_optimization
 * from deepspeed/runtime/zero/config.py (DeepSpeedZeroConfig: extra="forbid", names and their
 * aliases); offload_* from deepspeed/runtime/zero/offload_config.py. docs/DS_CONFIG_KEYS.md
 * lists them with what shardcast does with each. */
static const char *const DS_TOP_KNOWN[] = {
    "train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "optimizer", "scheduler",
    "fp16", "bf16", "bfloat16", "amp", "torch_autocast", "zero_optimization", "activation_checkpointing",
    "gradient_clipping", "prescale_gradients", "gradient_predivide_factor", "gradient_allreduce_op",
    "communication_data_type", "seq_parallel_communication_data_type", "sparse_gradients", "sparse_attention",
    "steps_per_print", "wall_clock_breakdown", "memory_breakdown", "dump_state", "flops_profiler", "tensorboard",
    "wandb", "csv_monitor", "comet", "comms_logger", "zero_allow_untested_optimizer", "zero_force_ds_cpu_optimizer",
    "disable_allgather", "eigenvalue", "progressive_layer_drop", "checkpoint", "data_types", "dataloader_drop_last",
    "use_data_before_expert_parallelism", "log_level", "graph_harvesting", "managed_gradient_accumulation",
    "legacy_fusion", "elasticity", "aio", "autotuning", "nebula", "compression_training", "data_efficiency",
    "curriculum_learning", "weight_quantization", "tensor_parallel", "expert_parallel", "sequence_parallel_size",
    "hybrid_engine", "pipeline", "compile", "timers", "seed", NULL};
static const char *const DS_ZERO_KNOWN[] = {
    "stage", "contiguous_gradients", "reduce_scatter", "reduce_bucket_size", "use_multi_rank_bucket_allreduce",
    "allgather_partitions", "allgather_bucket_size", "overlap_comm", "load_from_fp32_weights", "elastic_checkpoint",
    "offload_param", "offload_optimizer", "zenflow", "sub_group_size", "cpu_offload_param",
    "cpu_offload_use_pin_memory", "cpu_offload", "prefetch_bucket_size", "stage3_prefetch_bucket_size",
    "param_persistence_threshold", "stage3_param_persistence_threshold", "model_persistence_threshold",
    "stage3_model_persistence_threshold", "max_live_parameters", "stage3_max_live_parameters", "max_reuse_distance",
    "stage3_max_reuse_distance", "gather_16bit_weights_on_model_save", "stage3_gather_16bit_weights_on_model_save",
    "module_granularity_threshold", "stage3_module_granularity_threshold", "use_all_reduce_for_fetch_params",
    "stage3_use_all_reduce_for_fetch_params", "allgather_sequential", "stage3_allgather_sequential",
    "stage3_gather_fp16_weights_on_model_save", "ignore_unused_parameters", "legacy_stage1", "round_robin_gradients",
    "zero_hpz_partition_size", "zero_quantized_weights", "zero_quantized_nontrainable_weights",
    "zero_quantized_gradients", "zeropp_loco_param", "mics_shard_size", "mics_hierarchical_params_gather",
    "memory_efficient_linear", "pipeline_loading_checkpoint", "override_module_apply", "log_trace_cache_warnings",
    "enable_sanity_checks", "save_muon_momentum_buffer_in_memory", "leaf_module", NULL};
/* the union of DeepSpeedZeroOffloadParamConfig's and DeepSpeedZeroOffloadOptimizerConfig's fields */
static const char *const DS_OFFLOAD_KNOWN[] = {"device", "nvme_path", "buffer_count", "buffer_size", "max_in_cpu",
                                               "pin_memory", "pipeline_read", "pipeline_write", "fast_init", "ratio",
                                               "super_offload", "cpuadam_cores_perc", NULL};
/* the fields of offload_param (the rest of DS_OFFLOAD_KNOWN is offload_optimizer's) */
static const char *const DS_OFFLOAD_PARAM_KNOWN[] = {"device", "nvme_path", "buffer_count", "buffer_size",
                                                     "max_in_cpu", "pin_memory", NULL};
/* names DeepSpeed takes beside their stage3_ aliases (populate_by_name): read as the alias */
static const char *const DS_ZERO_ALIAS[][2] = {{"prefetch_bucket_size", "stage3_prefetch_bucket_size"},
                                               {"max_live_parameters", "stage3_max_live_parameters"},
                                               {"max_reuse_distance", "stage3_max_reuse_distance"},
                                               {"gather_16bit_weights_on_model_save",
                                                "stage3_gather_16bit_weights_on_model_save"}};

/* Every key of o (at JSON path base) against the lists: read or quiet keys pass; a key
 * DeepSpeed knows is noted as not modelled; any other key is an error naming the nearest. */
static int ds_keys(jr *r, const json_t *o, const char *base, const char *const *read, const char *const *quiet,
                   const char *const *known, spec_ds_report *rep)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v) {
        if (in_list(k, read) || (quiet && in_list(k, quiet)))
            continue;
        char p[96];
        snprintf(p, sizeof p, "%.40s.%.50s", base, k);
        if (in_list(k, known)) {
            spec_ds_note(rep, p, "not modelled");
            continue;
        }
        const char *near = str_nearest(k, known);
        if (near)
            return sc_err_set(r->err, SC_EINPUT, r->src, p, "not a DeepSpeed key; did you mean \"%s\"?", near);
        return sc_err_set(r->err, SC_EINPUT, r->src, p,
                          "not a DeepSpeed key, and none is near it (DeepSpeed's keys: docs/DS_CONFIG_KEYS.md)");
    }
    return 0;
}

/* A file that is not a ds_config at all: a Hugging Face model config (model_type, architectures)
 * or nothing DeepSpeed knows. */
static int ds_is_ds_config(jr *r, const json_t *root)
{
    const json_t *mt = json_object_get(root, "model_type");
    if (mt || json_object_get(root, "architectures"))
        return sc_err_set(r->err, SC_EINPUT, r->src, "$",
                          "a Hugging Face model config (model_type \"%s\"), not a DeepSpeed ds_config: give it to "
                          "--model " SPEC_HF_PREFIX "FILE",
                          json_is_string(mt) ? json_string_value(mt) : "?");
    return 0;
}

/* stage3_ aliases: the plain name, when given alone, read as its alias (DeepSpeed takes both). */
static void ds_zero_aliases(json_t *z)
{
    for (size_t i = 0; i < sizeof DS_ZERO_ALIAS / sizeof DS_ZERO_ALIAS[0]; i++) {
        json_t *v = json_object_get(z, DS_ZERO_ALIAS[i][0]);
        if (v && !json_object_get(z, DS_ZERO_ALIAS[i][1])) {
            json_object_set(z, DS_ZERO_ALIAS[i][1], v);
            json_object_del(z, DS_ZERO_ALIAS[i][0]);
        }
    }
}

static int ds_precision(jr *r, json_t *root, spec_training *t, spec_ds_report *rep)
{
    int rc, fp16_on = 0, bf16_on = 0, fp16_auto = 0, bf16_auto = 0;
    json_t *fp16 = json_object_get(root, "fp16"), *bf16 = json_object_get(root, "bf16");
    if (fp16) {
        if (!json_is_object(fp16))
            return jr_bad(r, "$.fp16", "an object", fp16);
        if ((rc = bool_or_auto(r, fp16, "$.fp16", "enabled", &fp16_on, &fp16_auto)))
            return rc;
    }
    if (bf16) {
        if (!json_is_object(bf16))
            return jr_bad(r, "$.bf16", "an object", bf16);
        if ((rc = bool_or_auto(r, bf16, "$.bf16", "enabled", &bf16_on, &bf16_auto)))
            return rc;
    }
    if (fp16_on && bf16_on)
        return sc_err_set(r->err, SC_EINPUT, r->src, "$.bf16.enabled",
                          "expected at most one of fp16 and bf16 enabled, got both");
    if (fp16_auto || bf16_auto) /* Hugging Face: --fp16 / --bf16; shardcast's --precision stands */
        return 0;
    (void)rep;
    t->precision = fp16_on ? PREC_FP16 : bf16_on ? PREC_BF16 : PREC_FP32;
    t->precision_given = 1;
    return 0;
}

/* offload_optimizer / offload_param (DeepSpeed ZeRO-Offload and ZeRO-Infinity): with stage 3
 * the zero3-offload layout, its optimizer states on the host or NVMe (device), its parameter
 * shards on the GPU, the host or NVMe (offload_param.device; needs offload_optimizer, as
 * DeepSpeed requires); with stage 2 and the optimizer on the CPU zero2-offload (ZeRO-Offload),
 * also from the deprecated "cpu_offload": true (v0.3.0's key, constants.py L63; today's
 * config.py maps it to offload_optimizer device cpu, v0.19.5 L202-210). pin_memory false
 * (pageable copies) is not modelled: pinned assumed. */
static int ds_offload(jr *r, json_t *z, int stage, int plain, spec_layout *l, spec_ds_report *rep)
{
    static const char *const devices[] = {"none", "cpu", "nvme", NULL};
    json_t *oo = json_object_get(z, "offload_optimizer"), *op = json_object_get(z, "offload_param");
    int dev = 0, pdev = 0, rc;
    if (oo) {
        if (!json_is_object(oo))
            return jr_bad(r, "$.zero_optimization.offload_optimizer", "an object", oo);
        if ((rc = jr_enum(r, oo, "$.zero_optimization.offload_optimizer", "device", devices, 0, &dev)))
            return rc;
    }
    if (op) {
        if (!json_is_object(op))
            return jr_bad(r, "$.zero_optimization.offload_param", "an object", op);
        if ((rc = jr_enum(r, op, "$.zero_optimization.offload_param", "device", devices, 0, &pdev)))
            return rc;
    }
    if (!oo && json_is_true(json_object_get(z, "cpu_offload")))
        dev = 1;
    const int z2 = dev == 1 && !pdev && stage == 2;
    if (z2 || ((dev || pdev) && plain)) { /* plain: stage 3 without MiCS or ZeRO++ */
        if ((rc = spec_layout_make(z2 ? "zero2-offload" : "zero3-offload", l, r->err)))
            return rc;
        l->off_opt = dev == 2 ? OFF_NVME : OFF_CPU;
        l->off_param = pdev == 2 ? OFF_NVME : pdev == 1 ? OFF_CPU : OFF_GPU;
        if (pdev && !dev)
            spec_ds_note(rep, "$.zero_optimization.offload_param",
                 "parameter offload without offload_optimizer: modelled with the optimizer on the host CPU");
        if (oo && json_is_false(json_object_get(oo, "pin_memory")))
            spec_ds_note(rep, "$.zero_optimization.offload_optimizer.pin_memory",
                 "false: pageable host copies are not modelled (pinned buffers assumed)");
        if (op && json_is_false(json_object_get(op, "pin_memory")))
            spec_ds_note(rep, "$.zero_optimization.offload_param.pin_memory",
                 "false: pageable host copies are not modelled (pinned buffers assumed)");
    } else if (dev || pdev) { /* the note at the key that asked for it (v0.3's cpu_offload too) */
        const char *at = pdev && (stage != 3 || !dev) ? "$.zero_optimization.offload_param"
                         : oo                         ? "$.zero_optimization.offload_optimizer"
                                                      : "$.zero_optimization.cpu_offload";
        spec_ds_note(rep, at,
             stage == 3 ? "offload with MiCS or ZeRO++ is not modelled"
                        : pdev ? "offload_param needs stage 3"
                        : dev == 1 ? "ZeRO-Offload with stage 0/1 is not modelled (zero2-offload: stage 2)"
                                   : "offload_optimizer to NVMe needs stage 3");
    }
    return 0;
}

/* zero_optimization's keys and its offload sections' against DeepSpeed's (ds_keys). */
static int ds_zero_keys(jr *r, json_t *z, spec_ds_report *rep)
{
    static const char *const off_read[] = {"device", "pin_memory", NULL};
    static const char *const off_quiet[] = {"nvme_path", NULL}; /* where: the cluster's NVMe is modelled */
    /* contiguous_gradients is priced for stages 1-2 (stage2.py, framework.c ds_era); stage 3's
     * contiguous gradient buffer (stage3.py) is not modelled: noted there */
    const int stage3 = json_integer_value(json_object_get(z, "stage")) == 3;
    int rc = ds_keys(r, z, "$.zero_optimization", Z_READ + stage3, Z_QUIET, DS_ZERO_KNOWN, rep);
    const json_t *oo = json_object_get(z, "offload_optimizer"), *op = json_object_get(z, "offload_param");
    if (!rc && json_is_object(oo))
        rc = ds_keys(r, oo, "$.zero_optimization.offload_optimizer", off_read, off_quiet, DS_OFFLOAD_KNOWN, rep);
    if (!rc && json_is_object(op))
        rc = ds_keys(r, op, "$.zero_optimization.offload_param", off_read, off_quiet, DS_OFFLOAD_PARAM_KNOWN, rep);
    return rc;
}

static int ds_zero(jr *r, json_t *z, spec_training *t, spec_layout *l, spec_ds_report *rep)
{
    const char *B = "$.zero_optimization";
    int rc, stage = 0, shard = 0, hpz = 1, hier = 0; /* DeepSpeed: mics_hierarchical_params_gather defaults to false */
    int qw = 0, qg = 0, overlap = -1, rs = 1, agp = 1, auto_b = 0, auto_p = 0, cg = -1;
    double bucket = 0, agb = 0, pre = 0, live = 0, reuse = 0;
    if ((rc = jr_int(r, z, B, "stage", 0, 3, 0, &stage)) || (rc = jr_int(r, z, B, "mics_shard_size", -1, 1 << 20, 0, &shard)) ||
        (rc = jr_bool(r, z, B, "mics_hierarchical_params_gather", &hier)) ||
        (rc = jr_int(r, z, B, "zero_hpz_partition_size", 1, 1 << 20, 0, &hpz)) ||
        (rc = num_or_auto(r, z, B, "reduce_bucket_size", &bucket, &auto_b)) ||
        (rc = jr_min(r, z, B, "allgather_bucket_size", 0.0, 0, &agb)) || (rc = jr_bool(r, z, B, "overlap_comm", &overlap)) ||
        (rc = num_or_auto(r, z, B, "stage3_prefetch_bucket_size", &pre, &auto_p)) ||
        (rc = jr_min(r, z, B, "stage3_max_live_parameters", 0.0, 0, &live)) ||
        (rc = jr_min(r, z, B, "stage3_max_reuse_distance", 0.0, 0, &reuse)) ||
        (rc = jr_bool(r, z, B, "zero_quantized_weights", &qw)) || (rc = jr_bool(r, z, B, "zero_quantized_gradients", &qg)) ||
        (rc = jr_bool(r, z, B, "reduce_scatter", &rs)) || (rc = jr_bool(r, z, B, "allgather_partitions", &agp)) ||
        (rc = jr_bool(r, z, B, "contiguous_gradients", &cg)))
        return rc;
    const double e = SPEC_PREC_IS_FP32(t->precision) ? 4 : 2; /* DeepSpeed counts buckets in elements */
    if (bucket > 0)
        t->bucket_bytes = t->reduce_bucket_bytes = bucket * e;
    if (agb > 0)
        t->allgather_bucket_bytes = agb * e;
    if (pre > 0)
        t->prefetch_bucket_bytes = pre * e;
    if (live > 0)
        t->max_live_params = live;
    if (reuse > 0)
        t->max_reuse_params = reuse;
    if (overlap >= 0)
        t->overlap_comm = overlap;
    if (cg >= 0 && stage < 3) /* training.contiguous_gradients; stage 3: noted (ds_zero_keys) */
        t->contiguous_gradients = cg;
    if (rep) {
        rep->auto_bucket = auto_b;
        rep->auto_prefetch = auto_p;
    }
    /* stage 1/2 reduce_scatter: false all-reduces each bucket; true (default) reduces each slice
     * to its owner before v0.12.4 (framework.c), all-reduces from it (use_multi_rank_bucket_allreduce) */
    if (json_object_get(z, "reduce_scatter"))
        t->reduce_scatter = rs;
    if (!agp)
        spec_ds_note(rep, "$.zero_optimization.allgather_partitions", "false (broadcast per partition) is not modelled");
    static const char *const STAGE[] = {"ddp", "zero1", "zero2", "zero3"}; /* ZeRO stages 0-3 */
    if ((rc = spec_layout_make(STAGE[stage], l, r->err)))
        return rc;
    if (shard > 0) {
        if (stage != 3)
            return sc_err_set(r->err, SC_EINPUT, r->src, "$.zero_optimization.mics_shard_size",
                              "expected only with stage 3 (MiCS builds on ZeRO-3), got stage %d", stage);
        if ((rc = spec_layout_make("mics", l, r->err)))
            return rc;
        l->p = shard;
        l->hier = hier;
        if (qw || qg || hpz > 1)
            spec_ds_note(rep, B, "ZeRO++ options together with MiCS are not modelled: MiCS only");
    } else if (hpz > 1 || qw || qg) {
        if (stage != 3)
            return sc_err_set(r->err, SC_EINPUT, r->src,
                              hpz > 1 ? "$.zero_optimization.zero_hpz_partition_size"
                                      : qw ? "$.zero_optimization.zero_quantized_weights"
                                           : "$.zero_optimization.zero_quantized_gradients",
                              "expected only with stage 3 (ZeRO++ builds on ZeRO-3), got stage %d", stage);
        if ((rc = spec_layout_make("zeropp", l, r->err)))
            return rc;
        l->p = hpz;
        l->qwz = qw;
        l->qgz = qg;
    }
    if ((rc = ds_offload(r, z, stage, stage == 3 && shard <= 0 && !(hpz > 1 || qw || qg), l, rep)))
        return rc;
    return 0;
}

static int ds_from(jr *r, json_t *root, spec_training *t, spec_layout *l, spec_ds_report *rep)
{
    int rc, amb = 0, aga = 0, atb = 0, tb = 0, ga = 0;
    if ((rc = spec_layout_make("ddp", l, r->err)))
        return rc;
    t->framework = FW_DEEPSPEED; /* a ds_config names its framework */
    json_t *zo = json_object_get(root, "zero_optimization"), *bf = json_object_get(root, "bfloat16");
    if (json_is_object(zo))
        ds_zero_aliases(zo);
    if (bf && !json_object_get(root, "bf16")) { /* DeepSpeed's other name for bf16 (runtime/constants.py) */
        json_object_set(root, "bf16", bf);
        json_object_del(root, "bfloat16");
    }
    if ((rc = ds_is_ds_config(r, root)) || (rc = ds_keys(r, root, "$", TOP_READ, TOP_QUIET, DS_TOP_KNOWN, rep)) ||
        (json_is_object(zo) && (rc = ds_zero_keys(r, zo, rep))))
        return rc;
    if ((rc = int_or_auto(r, root, "$", "train_micro_batch_size_per_gpu", 1, 1 << 20, &t->micro_batch, &amb)) ||
        (rc = int_or_auto(r, root, "$", "gradient_accumulation_steps", 1, 1 << 20, &ga, &aga)) ||
        (rc = int_or_auto(r, root, "$", "train_batch_size", 1, 1 << 30, &tb, &atb)))
        return rc;
    if (ga)
        t->grad_accum = ga;
    t->train_batch = tb;
    t->ga_from_batch = tb && !ga && !aga;
    if (rep) {
        rep->auto_mb = amb;
        rep->auto_ga = aga;
        rep->auto_batch = atb;
        rep->ga_given = ga > 0;
    }
    if ((rc = ds_precision(r, root, t, rep)))
        return rc;
    /* communication_data_type: the dtype gradients are reduced in (DeepSpeed runtime/config.py
     * get_communication_data_type: "fp32", "fp16", "bf16", any case; null or absent: the
     * parameters' dtype), the reduce_dtype of spec.h (REDUCE_PARAM for either 16-bit type) */
    json_t *cdt = json_object_get(root, "communication_data_type");
    if (cdt && !json_is_null(cdt)) {
        const char *v = json_string_value(cdt);
        if (!v || (strcasecmp(v, "fp32") && strcasecmp(v, "fp16") && strcasecmp(v, "bf16")))
            return jr_bad(r, "$.communication_data_type", "\"fp32\", \"fp16\" or \"bf16\"", cdt);
        t->reduce_dtype = strcasecmp(v, "fp32") ? REDUCE_PARAM : REDUCE_FP32;
        t->given |= SPEC_GIVEN_RD;
    }
    json_t *ac = json_object_get(root, "activation_checkpointing");
    if (ac) {
        if (!json_is_object(ac))
            return jr_bad(r, "$.activation_checkpointing", "an object", ac);
        t->act_ckpt = 1;
        t->given |= SPEC_GIVEN_CKPT; /* a --stack does not override it */
        if (json_is_true(json_object_get(ac, "cpu_checkpointing")))
            spec_ds_note(rep, "$.activation_checkpointing.cpu_checkpointing", "checkpoints in host memory are not modelled");
    }
    json_t *opt = json_object_get(root, "optimizer");
    if (opt && json_is_object(opt)) {
        const char *type = json_string_value(json_object_get(opt, "type"));
        if (type && strcasecmp(type, "Adam") && strcasecmp(type, "AdamW") && strcasecmp(type, "FusedAdam"))
            spec_ds_note(rep, "$.optimizer.type", "only Adam's states (12 B/param) are modelled");
    }
    json_t *z;
    if ((rc = jr_obj(r, root, "$", "zero_optimization", 0, &z)))
        return rc;
    if (z && (rc = ds_zero(r, z, t, l, rep)))
        return rc;
    return 0;
}

typedef struct ds_out {
    spec_training *t;
    spec_layout *l;
    spec_ds_report *rep;
} ds_out;

int spec_load_ds_config_ex(const char *path, spec_training *t, spec_layout *layout, spec_ds_report *rep,
                           sc_err *err)
{
    jr r = {path ? path : "<input>", err};
    json_t *root;
    if (rep)
        memset(rep, 0, sizeof *rep);
    int rc = jr_load_root(&r, NULL, &root);
    if (rc)
        return rc;
    rc = ds_from(&r, root, t, layout, rep);
    json_decref(root);
    return rc;
}

int spec_load_ds_config(const char *path, spec_training *t, spec_layout *layout, sc_err *err)
{
    return spec_load_ds_config_ex(path, t, layout, NULL, err);
}

void spec_ds_resolve_auto(const spec_ds_report *rep, int hidden, spec_training *t)
{
    const double e = SPEC_PREC_IS_FP32(t->precision) ? 4 : 2, h2 = (double)hidden * hidden;
    if (rep->auto_bucket)
        t->bucket_bytes = t->reduce_bucket_bytes = h2 * e;
    if (rep->auto_prefetch)
        t->prefetch_bucket_bytes = 0.9 * h2 * e;
}

int spec_ds_check_batch(spec_training *t, int dp, const char *source, sc_err *err)
{
    if (!t->train_batch)
        return 0;
    long per = (long)t->micro_batch * dp;
    if (t->ga_from_batch) { /* DeepSpeed: gradient_accumulation_steps = batch / (micro x dp) */
        if (t->train_batch % per)
            return sc_err_set(err, SC_EINPUT, source, "$.train_batch_size",
                              "expected a multiple of micro-batch %d x data-parallel size %d = %ld, got %d",
                              t->micro_batch, dp, per, t->train_batch);
        t->grad_accum = (int)(t->train_batch / per);
        return 0;
    }
    if ((long)t->train_batch != per * t->grad_accum)
        return sc_err_set(err, SC_EINPUT, source, "$.train_batch_size",
                          "expected micro-batch %d x gradient accumulation %d x data-parallel size %d = %ld, got %d",
                          t->micro_batch, t->grad_accum, dp, per * t->grad_accum, t->train_batch);
    return 0;
}
