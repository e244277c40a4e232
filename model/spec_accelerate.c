/* spec_accelerate.c — read a Hugging Face accelerate FSDP config (the YAML `accelerate config`
 * writes) into the training spec and layout, as the ds_config reader does: honoured keys set
 * fields, the rest are reported. Only the YAML that file uses is read: `key: value` lines, one
 * level of nesting by indentation (fsdp_config), comments; anything else is an error naming the
 * line. Not here: printing the report (cli/common.c).
 * Keys and values: accelerate's FullyShardedDataParallelPlugin (fsdp_sharding_strategy
 * FULL_SHARD | SHARD_GRAD_OP | NO_SHARD | HYBRID_SHARD | HYBRID_SHARD_ZERO2 or 1-5,
 * fsdp_backward_prefetch BACKWARD_PRE | BACKWARD_POST | NO_PREFETCH, fsdp_version 1 | 2,
 * fsdp_reshard_after_forward for FSDP2). HYBRID_SHARD's shard group is one node (the default
 * device mesh of accelerate: num_processes / num_machines GPUs). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec.h"

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    if ((*s == '"' || *s == '\'') && e - s >= 2 && e[-1] == *s) {
        e[-1] = '\0';
        s++;
    }
    return s;
}

static int is_true(const char *v) { return !strcmp(v, "true") || !strcmp(v, "True"); }
static int is_bool(const char *v)
{
    return is_true(v) || !strcmp(v, "false") || !strcmp(v, "False");
}

int spec_load_accelerate(const char *path, int gpus_per_node, spec_training *t, spec_layout *l, spec_ds_report *rep,
                         sc_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return sc_err_set(err, SC_EINPUT, path, "", "cannot read accelerate config");
    if (rep)
        memset(rep, 0, sizeof *rep);
    memset(l, 0, sizeof *l);
    l->kind = LAYOUT_ZERO3;
    l->hier = l->zero1 = l->overlap = 1;
    t->framework = FW_FSDP;
    char line[512], section[64] = "";
    int lineno = 0, fsdp = 0, strategy = 1, reshard = 1, version = 1, rc = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        int indent = (int)strspn(line, " ");
        char *s = trim(line);
        if (!*s)
            continue;
        char *colon = strchr(s, ':');
        char where[96];
        snprintf(where, sizeof where, "line %d", lineno);
        if (!colon) {
            rc = sc_err_set(err, SC_EINPUT, path, where, "expected \"key: value\", got \"%.60s\"", s);
            break;
        }
        *colon = '\0';
        char *key = trim(s), *val = trim(colon + 1);
        if (!indent)
            section[0] = '\0';
        if (!indent && !*val) { /* a section */
            snprintf(section, sizeof section, "%.60s", key);
            continue;
        }
        char p[136]; /* "$." + a section of up to 60 + "." + a key of up to 60 */
        snprintf(p, sizeof p, "$.%s%s%.60s", section, *section ? "." : "", key);
        if (!*section && !strcmp(key, "distributed_type")) {
            fsdp = !strcmp(val, "FSDP");
            if (!fsdp) {
                rc = sc_err_set(err, SC_EINPUT, path, p, "expected FSDP (shardcast reads accelerate's FSDP configs), got \"%s\"", val);
                break;
            }
        } else if (!*section && !strcmp(key, "mixed_precision")) {
            if (!strcmp(val, "bf16"))
                t->precision = PREC_BF16;
            else if (!strcmp(val, "fp16"))
                t->precision = PREC_FP16;
            else if (!strcmp(val, "no"))
                t->precision = PREC_FP32;
            else {
                rc = sc_err_set(err, SC_EINPUT, path, p, "expected bf16, fp16 or no, got \"%s\"", val);
                break;
            }
        } else if (!strcmp(section, "fsdp_config") && !strcmp(key, "fsdp_sharding_strategy")) {
            static const char *const names[] = {"FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD", "HYBRID_SHARD",
                                                "HYBRID_SHARD_ZERO2"};
            strategy = 0;
            for (int i = 0; i < 5; i++)
                if (!strcmp(val, names[i]) || (val[0] == '1' + i && !val[1]))
                    strategy = i + 1;
            if (!strategy) {
                rc = sc_err_set(err, SC_EINPUT, path, p,
                                "expected FULL_SHARD, SHARD_GRAD_OP, NO_SHARD, HYBRID_SHARD or HYBRID_SHARD_ZERO2, got \"%s\"", val);
                break;
            }
        } else if (!strcmp(section, "fsdp_config") && !strcmp(key, "fsdp_backward_prefetch")) {
            if (!strcmp(val, "BACKWARD_PRE"))
                t->backward_prefetch = 0;
            else if (!strcmp(val, "BACKWARD_POST"))
                t->backward_prefetch = 1;
            else if (!strcmp(val, "NO_PREFETCH"))
                t->backward_prefetch = 2;
            else {
                rc = sc_err_set(err, SC_EINPUT, path, p, "expected BACKWARD_PRE, BACKWARD_POST or NO_PREFETCH, got \"%s\"", val);
                break;
            }
        } else if (!strcmp(section, "fsdp_config") && !strcmp(key, "fsdp_version")) {
            if (strcmp(val, "1") && strcmp(val, "2")) {
                rc = sc_err_set(err, SC_EINPUT, path, p, "expected 1 or 2, got \"%s\"", val);
                break;
            }
            version = val[0] - '0';
        } else if (!strcmp(section, "fsdp_config") &&
                   (!strcmp(key, "fsdp_activation_checkpointing") || !strcmp(key, "fsdp_reshard_after_forward") ||
                    !strcmp(key, "fsdp_offload_params") || !strcmp(key, "fsdp_forward_prefetch") ||
                    !strcmp(key, "fsdp_limit_all_gathers"))) {
            if (!is_bool(val)) {
                rc = sc_err_set(err, SC_EINPUT, path, p, "expected true or false, got \"%s\"", val);
                break;
            }
            int on = is_true(val);
            if (!strcmp(key, "fsdp_activation_checkpointing"))
                t->act_ckpt = on;
            else if (!strcmp(key, "fsdp_reshard_after_forward"))
                reshard = on;
            else if (!strcmp(key, "fsdp_limit_all_gathers"))
                t->limit_all_gathers = on;
            else if (on && !strcmp(key, "fsdp_offload_params"))
                spec_ds_note(rep, p, "parameter offload is not modelled yet: parameters stay in GPU memory");
            else if (on)
                spec_ds_note(rep, p, "forward prefetch beyond the CPU running ahead is not modelled");
        } else if (!*section && (!strcmp(key, "compute_environment") || !strcmp(key, "machine_rank") ||
                                 !strcmp(key, "main_training_function") || !strcmp(key, "rdzv_backend") ||
                                 !strcmp(key, "same_network") || !strcmp(key, "tpu_env") || !strcmp(key, "use_cpu") ||
                                 !strcmp(key, "tpu_use_cluster") || !strcmp(key, "tpu_use_sudo") ||
                                 !strcmp(key, "debug") || !strcmp(key, "downcast_bf16") ||
                                 !strcmp(key, "main_process_ip") || !strcmp(key, "main_process_port") ||
                                 !strcmp(key, "num_machines") || !strcmp(key, "num_processes") ||
                                 !strcmp(key, "enable_cpu_affinity"))) {
            /* launch settings: no effect on a step (node counts come from --nodes) */
        } else if (!strcmp(section, "fsdp_config") &&
                   (!strcmp(key, "fsdp_auto_wrap_policy") || !strcmp(key, "fsdp_transformer_layer_cls_to_wrap") ||
                    !strcmp(key, "fsdp_state_dict_type") || !strcmp(key, "fsdp_sync_module_states") ||
                    !strcmp(key, "fsdp_use_orig_params") || !strcmp(key, "fsdp_cpu_ram_efficient_loading"))) {
            /* wrapping per transformer block is what the op graph assumes; the rest is loading
             * and checkpointing */
        } else {
            spec_ds_note(rep, p, "not modelled");
        }
    }
    fclose(f);
    if (rc)
        return rc;
    if (!fsdp)
        return sc_err_set(err, SC_EINPUT, path, "$.distributed_type", "missing (expected FSDP)");
    if (version == 2)
        t->framework = FW_FSDP2;
    static const spec_layout_kind kinds[] = {LAYOUT_ZERO3, LAYOUT_SHARD_GRAD_OP, LAYOUT_DDP, LAYOUT_HSDP,
                                             LAYOUT_HSDP_ZERO2};
    l->kind = kinds[strategy - 1];
    if (version == 2 && !reshard && l->kind == LAYOUT_ZERO3)
        l->kind = LAYOUT_SHARD_GRAD_OP; /* FSDP2: reshard_after_forward=False */
    if (l->kind == LAYOUT_HSDP || l->kind == LAYOUT_HSDP_ZERO2)
        l->p = gpus_per_node;
    return 0;
}
