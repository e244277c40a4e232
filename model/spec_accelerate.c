/* spec_accelerate.c — read a Hugging Face accelerate FSDP config (the YAML `accelerate config`
 * writes) into the training spec and layout, as the ds_config reader does: honoured keys set
 * fields, the rest are reported. The YAML is parsed by libyaml (block or flow style, quoting,
 * comments, anchors); shardcast then reads a mapping of scalars whose fsdp_config is a mapping of
 * scalars, and refuses anything else with the line it is on (a list where a value is expected,
 * a duplicate key, a syntax error). Not here: printing the report (cli/common.c).
 * Keys and values: accelerate's FullyShardedDataParallelPlugin (fsdp_sharding_strategy
 * FULL_SHARD | SHARD_GRAD_OP | NO_SHARD | HYBRID_SHARD | HYBRID_SHARD_ZERO2 or 1-5,
 * fsdp_backward_prefetch BACKWARD_PRE | BACKWARD_POST | NO_PREFETCH, fsdp_version 1 | 2,
 * fsdp_reshard_after_forward for FSDP2). HYBRID_SHARD's shard group is one node (the default
 * device mesh of accelerate: num_processes / num_machines GPUs). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "../base/jsonrd.h"
#include "../base/str.h"
#include "spec.h"

#define ACC_MAX_FILE ((size_t)1 << 20) /* an accelerate config is a few hundred bytes */

/* One read: the document, where it came from, and what the keys set. */
typedef struct acc {
    yaml_document_t *doc;
    const char *path;
    spec_training *t;
    spec_ds_report *rep;
    sc_err *err;
    int fsdp, strategy, reshard, version;
    int rep_processes, rep_machines; /* num_processes, num_machines (0: absent or not a count) */
} acc;

static int is_true(const char *v) { return !strcmp(v, "true") || !strcmp(v, "True"); }
static int is_bool(const char *v)
{
    return is_true(v) || !strcmp(v, "false") || !strcmp(v, "False");
}

static int line_of(const yaml_node_t *n) { return (int)n->start_mark.line + 1; }

static const char *kind_of(const yaml_node_t *n)
{
    return n->type == YAML_SEQUENCE_NODE ? "a list" : n->type == YAML_MAPPING_NODE ? "a mapping" : "a value";
}

/* A scalar's text into *out (NUL-terminated by libyaml); a list, a mapping or a scalar holding a
 * NUL is an error at path naming its line. A null (`key:`, `~`, `null`) is the empty string. */
static int scalar(acc *a, const yaml_node_t *n, const char *path, const char **out)
{
    if (n->type != YAML_SCALAR_NODE)
        return sc_err_set(a->err, SC_EINPUT, a->path, path, "expected a single value, got %s (line %d)", kind_of(n),
                          line_of(n));
    const char *v = (const char *)n->data.scalar.value;
    if (strlen(v) != n->data.scalar.length)
        return sc_err_set(a->err, SC_EINPUT, a->path, path, "expected text without NUL characters (line %d)",
                          line_of(n));
    if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
        (!strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") || !strcmp(v, "NULL")))
        v = "";
    *out = v;
    return 0;
}

/* A mapping's pairs, each key a scalar seen once; calls fn(a, key, value node, path). */
typedef int (*acc_fn)(acc *a, const char *key, yaml_node_t *v, const char *path);
static int each_pair(acc *a, const yaml_node_t *map, const char *base, acc_fn fn)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(a->doc, p->key), *v = yaml_document_get_node(a->doc, p->value);
        const char *key;
        int rc;
        if (!k || !v)
            return sc_err_set(a->err, SC_EINPUT, a->path, base, "invalid YAML document");
        if ((rc = scalar(a, k, base, &key)))
            return rc;
        for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
            yaml_node_t *k2 = yaml_document_get_node(a->doc, q->key);
            if (k2 && k2->type == YAML_SCALAR_NODE && !strcmp((const char *)k2->data.scalar.value, key))
                return sc_err_set(a->err, SC_EINPUT, a->path, base, "duplicate key \"%.60s\" (lines %d and %d)", key,
                                  line_of(k2), line_of(k));
        }
        char path[128];
        snprintf(path, sizeof path, "%s.%.60s", base, key);
        if ((rc = fn(a, key, v, path)))
            return rc;
    }
    return 0;
}

static int in_list(const char *key, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(key, *list))
            return 1;
    return 0;
}

/* Keys of an unread section: each reported. */
static int note_key(acc *a, const char *key, yaml_node_t *v, const char *path)
{
    (void)key, (void)v;
    spec_ds_note(a->rep, path, "not modelled");
    return 0;
}

static int fsdp_key(acc *a, const char *key, yaml_node_t *n, const char *p)
{
    /* wrapping per transformer block is what the op graph assumes; the rest is loading and
     * checkpointing: any value */
    static const char *const LOADING[] = {"fsdp_auto_wrap_policy", "fsdp_transformer_layer_cls_to_wrap",
                                          "fsdp_state_dict_type", "fsdp_sync_module_states", "fsdp_use_orig_params",
                                          "fsdp_cpu_ram_efficient_loading", NULL};
    static const char *const BOOLS[] = {"fsdp_activation_checkpointing", "fsdp_reshard_after_forward",
                                        "fsdp_offload_params", "fsdp_forward_prefetch", "fsdp_limit_all_gathers", NULL};
    static const char *const READ[] = {"fsdp_sharding_strategy", "fsdp_backward_prefetch", "fsdp_version", NULL};
    if (in_list(key, LOADING))
        return 0;
    if (!in_list(key, BOOLS) && !in_list(key, READ)) {
        spec_ds_note(a->rep, p, "not modelled");
        return 0;
    }
    const char *val;
    int rc = scalar(a, n, p, &val);
    if (rc)
        return rc;
    if (!strcmp(key, "fsdp_sharding_strategy")) {
        static const char *const names[] = {"FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD", "HYBRID_SHARD",
                                            "HYBRID_SHARD_ZERO2"};
        a->strategy = 0;
        for (int i = 0; i < 5; i++)
            if (!strcmp(val, names[i]) || (val[0] == '1' + i && !val[1]))
                a->strategy = i + 1;
        if (!a->strategy)
            return sc_err_set(a->err, SC_EINPUT, a->path, p,
                              "expected FULL_SHARD, SHARD_GRAD_OP, NO_SHARD, HYBRID_SHARD or HYBRID_SHARD_ZERO2, got \"%.60s\"",
                              val);
    } else if (!strcmp(key, "fsdp_backward_prefetch")) {
        if (!strcmp(val, "BACKWARD_PRE"))
            a->t->backward_prefetch = 0;
        else if (!strcmp(val, "BACKWARD_POST"))
            a->t->backward_prefetch = 1;
        else if (!strcmp(val, "NO_PREFETCH"))
            a->t->backward_prefetch = 2;
        else
            return sc_err_set(a->err, SC_EINPUT, a->path, p, "expected BACKWARD_PRE, BACKWARD_POST or NO_PREFETCH, got \"%.60s\"",
                              val);
    } else if (!strcmp(key, "fsdp_version")) {
        if (strcmp(val, "1") && strcmp(val, "2"))
            return sc_err_set(a->err, SC_EINPUT, a->path, p, "expected 1 or 2, got \"%.60s\"", val);
        a->version = val[0] - '0';
    } else {
        if (!is_bool(val))
            return sc_err_set(a->err, SC_EINPUT, a->path, p, "expected true or false, got \"%.60s\"", val);
        int on = is_true(val);
        if (!strcmp(key, "fsdp_activation_checkpointing"))
            a->t->act_ckpt = on, a->t->given |= SPEC_GIVEN_CKPT; /* a --stack does not override it */
        else if (!strcmp(key, "fsdp_reshard_after_forward"))
            a->reshard = on;
        else if (!strcmp(key, "fsdp_limit_all_gathers"))
            a->t->limit_all_gathers = on;
        else if (on && !strcmp(key, "fsdp_offload_params"))
            spec_ds_note(a->rep, p, "parameter offload is not modelled yet: parameters stay in GPU memory");
        else if (on)
            spec_ds_note(a->rep, p, "forward prefetch beyond the CPU running ahead is not modelled");
    }
    return 0;
}

static int top_key(acc *a, const char *key, yaml_node_t *n, const char *p)
{
    /* launch settings: no effect on a step (node counts come from --nodes; num_processes and
     * num_machines go to the report, which the CLI compares with them); any value */
    static const char *const LAUNCH[] = {"compute_environment", "machine_rank", "main_training_function",
                                         "rdzv_backend", "same_network", "tpu_env", "use_cpu", "tpu_use_cluster",
                                         "tpu_use_sudo", "debug", "downcast_bf16", "main_process_ip",
                                         "main_process_port", "num_machines", "num_processes", "enable_cpu_affinity",
                                         NULL};
    const char *val;
    int rc;
    int *launch = !strcmp(key, "num_processes") ? &a->rep_processes : !strcmp(key, "num_machines") ? &a->rep_machines : NULL;
    if (launch && n->type == YAML_SCALAR_NODE) { /* kept for the caller to compare with --nodes */
        char *end;
        long v = strtol((const char *)n->data.scalar.value, &end, 10);
        *launch = !*end && v > 0 && v <= 1 << 24 ? (int)v : 0;
    }
    if (in_list(key, LAUNCH))
        return 0;
    if (!strcmp(key, "fsdp_config")) {
        if (n->type == YAML_MAPPING_NODE)
            return each_pair(a, n, p, fsdp_key);
        if ((rc = scalar(a, n, p, &val)))
            return rc;
        return *val ? sc_err_set(a->err, SC_EINPUT, a->path, p, "expected a mapping of fsdp_ keys, got \"%.60s\" (line %d)",
                                 val, line_of(n))
                    : 0; /* fsdp_config: (empty) */
    }
    if (!strcmp(key, "distributed_type")) {
        if ((rc = scalar(a, n, p, &val)))
            return rc;
        a->fsdp = !strcmp(val, "FSDP");
        if (!a->fsdp)
            return sc_err_set(a->err, SC_EINPUT, a->path, p,
                              "expected FSDP (shardcast reads accelerate's FSDP configs), got \"%.60s\"", val);
        return 0;
    }
    if (!strcmp(key, "mixed_precision")) {
        if ((rc = scalar(a, n, p, &val)))
            return rc;
        /* bf16 / fp16: the plugin's MixedPrecision(param_dtype=reduce_dtype=buffer_dtype=that
         * dtype) (huggingface/accelerate src/accelerate/utils/dataclasses.py
         * FullyShardedDataParallelPlugin.set_mixed_precision): gradients reduced in 16 bits */
        if (!strcmp(val, "bf16"))
            a->t->precision = PREC_BF16, a->t->reduce_dtype = REDUCE_PARAM;
        else if (!strcmp(val, "fp16"))
            a->t->precision = PREC_FP16, a->t->reduce_dtype = REDUCE_PARAM;
        else if (!strcmp(val, "no"))
            a->t->precision = PREC_FP32;
        else
            return sc_err_set(a->err, SC_EINPUT, a->path, p, "expected bf16, fp16 or no, got \"%.60s\"", val);
        return 0;
    }
    if (n->type == YAML_MAPPING_NODE) /* another section (deepspeed_config, ...): each key reported */
        return each_pair(a, n, p, note_key);
    spec_ds_note(a->rep, p, "not modelled");
    return 0;
}

/* The file through libyaml into *doc; a syntax error names its line and column. */
static int load_yaml(const char *path, const char *text, size_t len, yaml_document_t *doc, sc_err *err)
{
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return sc_err_set(err, SC_ERUNTIME, path, "", "out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    int ok = yaml_parser_load(&parser, doc);
    int rc = 0;
    if (!ok) {
        char where[32];
        snprintf(where, sizeof where, "line %d", (int)parser.problem_mark.line + 1);
        rc = parser.error == YAML_MEMORY_ERROR
                 ? sc_err_set(err, SC_ERUNTIME, path, "", "out of memory")
                 : sc_err_set(err, SC_EINPUT, path, where, "invalid YAML: %.120s%s%.80s (column %d)",
                              parser.problem ? parser.problem : "syntax error", parser.context ? ", " : "",
                              parser.context ? parser.context : "", (int)parser.problem_mark.column + 1);
    }
    yaml_parser_delete(&parser);
    return rc;
}

int spec_load_accelerate(const char *path, int gpus_per_node, spec_training *t, spec_layout *l, spec_ds_report *rep,
                         sc_err *err)
{
    /* read once, whole (a regular file or a pipe, at most 1 MiB; /dev/zero never ended) */
    char *text;
    size_t text_len;
    int rc = jr_slurp(path, ACC_MAX_FILE, &text, &text_len, err);
    if (rc)
        return rc;
    if (str_blank(text, text_len)) {
        free(text);
        return sc_err_empty(err, path, "an accelerate config (YAML)");
    }
    yaml_document_t doc;
    rc = load_yaml(path, text, text_len, &doc, err);
    free(text);
    if (rc)
        return rc;
    if (rep)
        memset(rep, 0, sizeof *rep);
    if ((rc = spec_layout_make("zero3", l, err)))
        return rc;
    t->framework = FW_FSDP;
    acc a = {&doc, path, t, rep, err, 0, 1, 1, 1, 0, 0};
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root && root->type == YAML_MAPPING_NODE)
        rc = each_pair(&a, root, "$", top_key);
    else if (root && !(root->type == YAML_SCALAR_NODE && !root->data.scalar.value[0]))
        rc = sc_err_set(err, SC_EINPUT, path, "$", "expected a mapping of accelerate keys, got %s (line %d)",
                        kind_of(root), line_of(root));
    yaml_document_delete(&doc);
    if (rc)
        return rc;
    if (rep)
        rep->acc_processes = a.rep_processes, rep->acc_machines = a.rep_machines;
    int fsdp = a.fsdp, strategy = a.strategy, reshard = a.reshard, version = a.version;
    if (!fsdp)
        return sc_err_set(err, SC_EINPUT, path, "$.distributed_type", "missing (expected FSDP)");
    if (version == 2)
        t->framework = FW_FSDP2;
    /* FSDP's ShardingStrategy 1-5 (FULL_SHARD, SHARD_GRAD_OP, NO_SHARD, HYBRID_SHARD,
     * _HYBRID_SHARD_ZERO2); FSDP2's FULL_SHARD with reshard_after_forward=False: shard_grad_op */
    static const char *const KIND[] = {"zero3", "shard_grad_op", "ddp", "hsdp", "hybrid_shard_zero2"};
    int k = version == 2 && !reshard && strategy == 1 ? 1 : strategy - 1;
    if ((rc = spec_layout_make(KIND[k], l, err)))
        return rc;
    spec_layout_default_group(l, gpus_per_node); /* HYBRID_SHARD: a node (0: the caller's, later) */
    return 0;
}
