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
#include "spec.h"

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
                                       "zero_optimization", "optimizer", NULL};
static const char *const TOP_QUIET[] = {"scheduler", "gradient_clipping", "steps_per_print", "wall_clock_breakdown",
                                        "tensorboard", "wandb", "csv_monitor", "comet", "comms_logger",
                                        "flops_profiler", "zero_allow_untested_optimizer", "zero_force_ds_cpu_optimizer",
                                        "dump_state", "checkpoint", "memory_breakdown", "prescale_gradients",
                                        "gradient_predivide_factor", "seed", NULL};
static const char *const Z_READ[] = {"stage", "mics_shard_size", "mics_hierarchical_params_gather",
                                     "zero_hpz_partition_size", "reduce_bucket_size", "allgather_bucket_size",
                                     "overlap_comm", "stage3_prefetch_bucket_size", "stage3_max_live_parameters",
                                     "offload_optimizer", "offload_param", "zero_quantized_weights",
                                     "zero_quantized_gradients", "reduce_scatter", "allgather_partitions", NULL};
/* checkpoint-time only, or no effect on a step */
static const char *const Z_QUIET[] = {"stage3_gather_16bit_weights_on_model_save", "stage3_gather_fp16_weights_on_model_save",
                                      "elastic_checkpoint", "load_from_fp32_weights", "ignore_unused_parameters",
                                      "legacy_stage1", NULL};

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
 * DeepSpeed requires). pin_memory false (pageable copies) is not modelled: pinned assumed. */
static int ds_offload(jr *r, json_t *z, int stage, spec_layout *l, spec_ds_report *rep)
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
    if ((dev || pdev) && stage == 3 && l->kind == LAYOUT_ZERO3) {
        l->kind = LAYOUT_ZERO3_OFFLOAD;
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
    } else if (dev || pdev) {
        spec_ds_note(rep, dev ? "$.zero_optimization.offload_optimizer" : "$.zero_optimization.offload_param",
             stage == 3 ? "offload with MiCS or ZeRO++ is not modelled"
                        : dev ? "ZeRO-Offload with stage 1/2 is not modelled (only zero3-offload)"
                              : "offload_param needs stage 3");
    }
    return 0;
}

static int ds_zero(jr *r, json_t *z, spec_training *t, spec_layout *l, spec_ds_report *rep)
{
    const char *B = "$.zero_optimization";
    int rc, stage = 0, shard = 0, hpz = 1, hier = 0; /* DeepSpeed: mics_hierarchical_params_gather defaults to false */
    int qw = 0, qg = 0, overlap = -1, rs = 1, agp = 1, auto_b = 0, auto_p = 0;
    double bucket = 0, agb = 0, pre = 0, live = 0;
    if ((rc = jr_int(r, z, B, "stage", 0, 3, 0, &stage)) || (rc = jr_int(r, z, B, "mics_shard_size", -1, 1 << 20, 0, &shard)) ||
        (rc = jr_bool(r, z, B, "mics_hierarchical_params_gather", &hier)) ||
        (rc = jr_int(r, z, B, "zero_hpz_partition_size", 1, 1 << 20, 0, &hpz)) ||
        (rc = num_or_auto(r, z, B, "reduce_bucket_size", &bucket, &auto_b)) ||
        (rc = jr_min(r, z, B, "allgather_bucket_size", 0.0, 0, &agb)) || (rc = jr_bool(r, z, B, "overlap_comm", &overlap)) ||
        (rc = num_or_auto(r, z, B, "stage3_prefetch_bucket_size", &pre, &auto_p)) ||
        (rc = jr_min(r, z, B, "stage3_max_live_parameters", 0.0, 0, &live)) ||
        (rc = jr_bool(r, z, B, "zero_quantized_weights", &qw)) || (rc = jr_bool(r, z, B, "zero_quantized_gradients", &qg)) ||
        (rc = jr_bool(r, z, B, "reduce_scatter", &rs)) || (rc = jr_bool(r, z, B, "allgather_partitions", &agp)))
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
    if (overlap >= 0)
        t->overlap_comm = overlap;
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
    l->kind = stage == 0 ? LAYOUT_DDP : stage == 1 ? LAYOUT_ZERO1 : stage == 2 ? LAYOUT_ZERO2 : LAYOUT_ZERO3;
    if (shard > 0) {
        if (stage != 3)
            return sc_err_set(r->err, SC_EINPUT, r->src, "$.zero_optimization.mics_shard_size",
                              "expected only with stage 3 (MiCS builds on ZeRO-3), got stage %d", stage);
        l->kind = LAYOUT_MICS;
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
        l->kind = LAYOUT_ZEROPP;
        l->p = hpz;
        l->qwz = qw;
        l->qgz = qg;
    }
    if ((rc = ds_offload(r, z, stage, l, rep)))
        return rc;
    const char *k;
    json_t *v;
    json_object_foreach(z, k, v) {
        if (in_list(k, Z_READ) || in_list(k, Z_QUIET))
            continue;
        char p[96];
        snprintf(p, sizeof p, "%s.%.60s", B, k);
        spec_ds_note(rep, p, "not modelled");
    }
    return 0;
}

static int ds_from(jr *r, json_t *root, spec_training *t, spec_layout *l, spec_ds_report *rep)
{
    int rc, amb = 0, aga = 0, atb = 0, tb = 0, ga = 0;
    memset(l, 0, sizeof *l);
    l->kind = LAYOUT_DDP;
    l->hier = 1;
    l->zero1 = 1;
    l->overlap = 1;
    t->framework = FW_DEEPSPEED; /* a ds_config names its framework */
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
    json_t *ac = json_object_get(root, "activation_checkpointing");
    if (ac) {
        if (!json_is_object(ac))
            return jr_bad(r, "$.activation_checkpointing", "an object", ac);
        t->act_ckpt = 1;
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
    const char *k;
    json_t *v;
    json_object_foreach(root, k, v) {
        if (in_list(k, TOP_READ) || in_list(k, TOP_QUIET))
            continue;
        char p[96];
        snprintf(p, sizeof p, "$.%.80s", k);
        spec_ds_note(rep, p, "not modelled");
    }
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
