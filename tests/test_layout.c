/* test_layout.c — layout strings: every accepted form with its fields and canonical string,
 * every rejected form with its message, the checks against a cluster and node count
 * (p divides the GPU count and aligns with nodes, MiCS §3.2), node counts and shard sizes.
 * Not here: what a layout costs in memory (test_memory.c). */
#include "suites.h"
#include "support.h"

#include "../model/framework.h"
#include "../model/layout.h"
#include "../model/layout_kind.h"
#include "../model/layout_ops.h"
#include "../model/workload.h"
#include "../model/spec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A cluster of 8-GPU nodes, at most 4 of them; only the fields the checks read. */
static spec_cluster cluster8(void)
{
    spec_cluster c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "eight");
    c.gpus_per_node = 8;
    c.max_nodes = 4;
    return c;
}

typedef struct accept_case {
    const char *in;
    spec_layout_kind kind;
    int p, hier, sync_boundary;
    const char *canon; /* spec_layout_str of the result */
} accept_case;

/* Fields from the grammar in spec.h: p = 0 for the ZeRO stages (all ranks), hier defaults to 1,
 * sync defaults to micro (0); the canonical string leaves defaults out. */
static const accept_case ACCEPT[] = {
    {"ddp", LAYOUT_DDP, 0, 1, 0, "ddp"},
    {"zero1", LAYOUT_ZERO1, 0, 1, 0, "zero1"},
    {"zero2", LAYOUT_ZERO2, 0, 1, 0, "zero2"},
    {"zero3", LAYOUT_ZERO3, 0, 1, 0, "zero3"},
    {"mics:p=8", LAYOUT_MICS, 8, 1, 0, "mics:p=8"},
    {"mics:p=16,hier=0", LAYOUT_MICS, 16, 0, 0, "mics:p=16,hier=0"},
    {"mics:p=16,hier=1", LAYOUT_MICS, 16, 1, 0, "mics:p=16"},
    {"mics:hier=0,p=32", LAYOUT_MICS, 32, 0, 0, "mics:p=32,hier=0"},
    {"hsdp:p=8", LAYOUT_HSDP, 8, 1, 0, "hsdp:p=8"},
    {"hsdp:p=8,sync=boundary", LAYOUT_HSDP, 8, 1, 1, "hsdp:p=8,sync=boundary"},
    {"hsdp:p=8,sync=micro", LAYOUT_HSDP, 8, 1, 0, "hsdp:p=8"},
    {"zeropp:hpz=8", LAYOUT_ZEROPP, 8, 1, 0, "zeropp:hpz=8"},
    /* issue 17: partition-group ZeRO-1/2, ZeRO++ without hpZ, FSDP's SHARD_GRAD_OP layouts */
    {"zero1:p=8", LAYOUT_ZERO1, 8, 1, 0, "zero1:p=8"},
    {"zero2:p=16", LAYOUT_ZERO2, 16, 1, 0, "zero2:p=16"},
    {"zeropp", LAYOUT_ZEROPP, 0, 1, 0, "zeropp"},
    {"zeropp:qgz=1,hpz=8,qwz=1", LAYOUT_ZEROPP, 8, 1, 0, "zeropp:hpz=8,qwz=1,qgz=1"},
    {"zeropp:qwz=1", LAYOUT_ZEROPP, 0, 1, 0, "zeropp:qwz=1"},
    {"zeropp:qgz=1,qwz=0", LAYOUT_ZEROPP, 0, 1, 0, "zeropp:qgz=1"},
    {"shard_grad_op", LAYOUT_SHARD_GRAD_OP, 0, 1, 0, "shard_grad_op"},
    {"hybrid_shard_zero2:p=8", LAYOUT_HSDP_ZERO2, 8, 1, 0, "hybrid_shard_zero2:p=8"},
    /* issue 26: FSDP2's reshard_after_forward=False is SHARD_GRAD_OP (parameters kept gathered
     * from forward to backward, no backward all-gather); raf=1 is FULL_SHARD, zero3 */
    {"zero3:raf=0", LAYOUT_SHARD_GRAD_OP, 0, 1, 0, "shard_grad_op"},
    {"zero3:raf=1", LAYOUT_ZERO3, 0, 1, 0, "zero3"},
    /* FSDP2's reshard_after_forward=8: its own kind, p the group resharded to */
    {"raf:p=8", LAYOUT_RAF, 8, 1, 0, "raf:p=8"},
};
#define N_ACCEPT (int)(sizeof ACCEPT / sizeof ACCEPT[0])

START_TEST(test_parse_accepts)
{
    const accept_case *k = &ACCEPT[_i];
    spec_layout l, l2;
    sc_err err;
    char buf[64];
    ck_assert_msg(spec_layout_parse(k->in, &l, &err) == 0, "%s: %s", k->in, err.text);
    ck_assert_int_eq(l.kind, k->kind);
    ck_assert_int_eq(l.p, k->p);
    ck_assert_int_eq(l.hier, k->hier);
    ck_assert_int_eq(l.sync_boundary, k->sync_boundary);
    ck_assert_str_eq(spec_layout_str(&l, buf, sizeof buf), k->canon);
    /* the canonical string parses back to the same layout */
    ck_assert_int_eq(spec_layout_parse(buf, &l2, &err), 0);
    ck_assert_int_eq(l2.kind, l.kind);
    ck_assert_int_eq(l2.p, l.p);
    ck_assert_int_eq(l2.hier, l.hier);
    ck_assert_int_eq(l2.sync_boundary, l.sync_boundary);
}
END_TEST

typedef struct reject_case {
    const char *in;
    const char *text; /* exact message */
} reject_case;

/* every kind's hint in the kinds table's order, then torchtitan's fsdp2 spelling (left15: it did
 * not fit sc_err's 256-byte text before SC_ERR_TEXT) */
#define HINT                                                                                    \
    "ddp, zero1[:p=P], zero2[:p=P], zero3[:cp=C|raf=0], mics:p=P, hsdp:p=P, zeropp[:hpz=P], tp:t=T, " \
    "axonn:x=X,y=Y,z=Z, zero3-offload[:param=cpu|nvme], luwu, shard_grad_op, hybrid_shard_zero2:p=P, megatron:t=T,p=P, " \
    "raf:p=P, zero2-offload, fsdp2:dp=D[,cp=C][,t=T][,p=P][,schedule=S]"
static const reject_case REJECT[] = {
    {"mics", "\"mics\" needs its group size, e.g. \"mics:p=8\""},
    {"raf", "\"raf\" needs its group size, e.g. \"raf:p=8\""},
    {"raf:p=8,hpz=8", "in \"raf:p=8,hpz=8\": unknown option \"hpz\" (expected p)"},
    {"hsdp", "\"hsdp\" needs its group size, e.g. \"hsdp:p=8\""},
    {"hybrid_shard_zero2", "\"hybrid_shard_zero2\" needs its group size, e.g. \"hybrid_shard_zero2:p=8\""},
    {"zeropp:qwz=2", "in \"zeropp:qwz=2\": expected qwz=0 or qwz=1, got \"2\""},
    {"shard_grad_op:p=8", "\"shard_grad_op\" takes no options, got \"shard_grad_op:p=8\""},
    {"mics:p=0", "in \"mics:p=0\": expected p to be a positive integer, got \"0\""},
    {"mics:p=-8", "in \"mics:p=-8\": expected p to be a positive integer, got \"-8\""},
    {"mics:p=x", "in \"mics:p=x\": expected p to be a positive integer, got \"x\""},
    {"mics:p=8x", "in \"mics:p=8x\": expected p to be a positive integer, got \"8x\""},
    {"mics:p=", "in \"mics:p=\": expected p to be a positive integer, got \"\""},
    {"mics:q=2", "in \"mics:q=2\": unknown option \"q\" (expected p, hier)"},
    {"hsdp:p=8,hier=0", "in \"hsdp:p=8,hier=0\": unknown option \"hier\" (expected p, sync)"},
    {"zeropp:p=8", "in \"zeropp:p=8\": unknown option \"p\" (expected hpz, qwz, qgz)"},
    {"mics:p8", "in \"mics:p8\": expected key=value, got \"p8\""},
    {"mics:", "in \"mics:\": missing p=P (e.g. \"mics:p=8\")"},
    {"mics:hier=0", "in \"mics:hier=0\": missing p=P (e.g. \"mics:p=8\")"},
    {"zero3:p=2", "in \"zero3:p=2\": unknown option \"p\" (expected raf, cp)"},
    {"zero3:raf=0,cp=2", "in \"zero3:raf=0,cp=2\": context parallelism (cp) with raf=0 is not modelled; drop one of them"},
    {"zero3:raf=2", "in \"zero3:raf=2\": expected raf=0 or raf=1, got \"2\""},
    {"zero3:raf=0,raf=1", "in \"zero3:raf=0,raf=1\": option \"raf\" given twice"},
    {"ddp:", "\"ddp\" takes no options, got \"ddp:\""},
    /* issue 31 item 8: an empty option list after ':' was taken as no options */
    {"zero3-offload:", "in \"zero3-offload:\": expected key=value options after ':' (e.g. \"zero3-offload:param=nvme,opt=nvme\") or no ':'"},
    {"foo", "expected one of " HINT ", got \"foo\""},
    {"ZERO3", "expected one of " HINT ", got \"ZERO3\""},
    {"", "expected one of " HINT ", got \"\""},
    {"mics:p=8,hier=2", "in \"mics:p=8,hier=2\": expected hier=0 or hier=1, got \"2\""},
    {"hsdp:p=8,sync=never", "in \"hsdp:p=8,sync=never\": expected sync=micro or sync=boundary, got \"never\""},
};
#define N_REJECT (int)(sizeof REJECT / sizeof REJECT[0])

START_TEST(test_parse_rejects)
{
    const reject_case *k = &REJECT[_i];
    spec_layout l;
    sc_err err;
    sc_err_clear(&err);
    ck_assert_int_eq(spec_layout_parse(k->in, &l, &err), SC_EINPUT);
    ck_assert_str_eq(err.source, "layout");
    ck_assert_str_eq(err.path, "");
    ck_assert_str_eq(err.text, k->text);
}
END_TEST

START_TEST(test_parse_null_and_long)
{
    spec_layout l;
    sc_err err;
    ck_assert_int_eq(spec_layout_parse(NULL, &l, &err), SC_EINPUT);
    ck_assert_str_eq(err.text, "expected one of " HINT ", got \"\"");
    /* longer than the 127-character parse buffer: rejected, message quotes 60 characters */
    char big[200];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    ck_assert_int_eq(spec_layout_parse(big, &l, &err), SC_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.text, "got \"aaaaaaaaaa"));
    /* the longest name taken (127 letters, no kind near it): the whole list and the whole name
     * fit, the message ends with its closing quote (it was cut inside the list before) */
    char name[128];
    memset(name, 'q', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    ck_assert_int_eq(spec_layout_parse(name, &l, &err), SC_EINPUT);
    char want[SC_ERR_TEXT];
    snprintf(want, sizeof want, "expected one of %s, got \"%s\"", HINT, name);
    ck_assert_str_eq(err.text, want);
    /* a NULL err is allowed */
    ck_assert_int_eq(spec_layout_parse("foo", &l, NULL), SC_EINPUT);
}
END_TEST

static int check(const char *s, int nodes, sc_err *err)
{
    spec_layout l;
    spec_cluster c = cluster8();
    ck_assert_int_eq(spec_layout_parse(s, &l, err), 0);
    sc_err_clear(err);
    return spec_layout_check(&l, &c, nodes, err);
}

START_TEST(test_check_not_dividing)
{
    sc_err err;
    /* 2 nodes x 8 = 16 GPUs; 16 % 6 = 4 */
    ck_assert_int_eq(check("mics:p=6", 2, &err), SC_EINPUT);
    ck_assert_str_eq(err.source, "layout");
    ck_assert_str_eq(err.path, "");
    ck_assert_str_eq(err.text, "mics:p=6: expected a group size dividing the 16 GPUs (2 nodes x 8), got 6");
    /* 3 nodes = 24 GPUs; 24 % 16 = 8 */
    ck_assert_int_eq(check("hsdp:p=16,sync=boundary", 3, &err), SC_EINPUT);
    ck_assert_str_eq(err.text,
                     "hsdp:p=16,sync=boundary: expected a group size dividing the 24 GPUs (3 nodes x 8), got 16");
}
END_TEST

START_TEST(test_check_not_aligned)
{
    sc_err err;
    /* 3 nodes = 24 GPUs: p=3 divides 24, but 8 % 3 != 0 and 3 % 8 != 0, so a group of 3 would
     * straddle node boundaries unevenly */
    ck_assert_int_eq(check("mics:p=3", 3, &err), SC_EINPUT);
    ck_assert_str_eq(err.text, "mics:p=3: expected a group size that divides or is a multiple of 8 GPUs per node, got 3");
    /* p=12 divides 24 but is neither a divisor nor a multiple of 8 */
    ck_assert_int_eq(check("zeropp:hpz=12", 3, &err), SC_EINPUT);
    ck_assert_str_eq(err.text,
                     "zeropp:hpz=12: expected a group size that divides or is a multiple of 8 GPUs per node, got 12");
    ck_assert_int_eq(check("raf:p=12", 3, &err), SC_EINPUT);
    ck_assert_str_eq(err.text, "raf:p=12: expected a group size that divides or is a multiple of 8 GPUs per node, got 12");
}
END_TEST

/* raf:p: 1 < p < N (PyTorch reads 1 as reshard_after_forward=False, N as True: shard_grad_op and
 * zero3 here); 2 nodes x 8 = 16 GPUs. */
START_TEST(test_check_raf)
{
    sc_err err;
    ck_assert_int_eq(check("raf:p=8", 2, &err), 0);
    ck_assert_int_eq(check("raf:p=2", 1, &err), 0);
    ck_assert_int_eq(check("raf:p=16", 2, &err), SC_EINPUT);
    ck_assert_str_eq(err.text, "raf:p=16: expected a group size p dividing the 16 GPUs, 1 < p < 16 "
                               "(reshard_after_forward=1 is shard_grad_op, =16 zero3), got 16");
    ck_assert_int_eq(check("raf:p=1", 2, &err), SC_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.text, "got 1"));
    ck_assert_int_eq(check("raf:p=6", 2, &err), SC_EINPUT); /* 16 % 6 = 4 */
    ck_assert_ptr_nonnull(strstr(err.text, "got 6"));
}
END_TEST

START_TEST(test_check_ok)
{
    sc_err err;
    ck_assert_int_eq(check("mics:p=16", 2, &err), 0);  /* 16 = 2 x 8: spans two whole nodes */
    ck_assert_int_eq(check("mics:p=8", 2, &err), 0);   /* one node */
    ck_assert_int_eq(check("mics:p=4", 2, &err), 0);   /* half a node */
    ck_assert_int_eq(check("mics:p=1", 1, &err), 0);   /* 1 divides 8 */
    ck_assert_int_eq(check("hsdp:p=16", 4, &err), 0);  /* 32 % 16 = 0, 16 % 8 = 0 */
    ck_assert_int_eq(check("zeropp:hpz=8", 3, &err), 0);
    ck_assert_int_eq(check("mics:p=24", 3, &err), 0);  /* all 24 GPUs, a multiple of 8 */
    /* layouts without a group size are valid on any cluster */
    ck_assert_int_eq(check("ddp", 1, &err), 0);
    ck_assert_int_eq(check("zero3", 3, &err), 0);
}
END_TEST

START_TEST(test_check_p_exceeds_gpus)
{
    sc_err err;
    /* 2 x 8 = 16 GPUs, p = 32 */
    ck_assert_int_eq(check("mics:p=32", 2, &err), SC_EINPUT);
    ck_assert_str_eq(err.text, "mics:p=32: expected a group size dividing the 16 GPUs (2 nodes x 8), got 32");
}
END_TEST

START_TEST(test_nodes_check)
{
    spec_cluster c = cluster8(); /* max_nodes 4 */
    sc_err err;
    ck_assert_int_eq(spec_nodes_check(&c, 1, "--nodes", &err), 0);
    ck_assert_int_eq(spec_nodes_check(&c, 4, "--nodes", &err), 0);
    ck_assert_int_eq(spec_nodes_check(&c, 5, "--nodes", &err), SC_EINPUT);
    ck_assert_str_eq(err.source, "--nodes");
    ck_assert_str_eq(err.path, "");
    ck_assert_str_eq(err.text, "expected at most 4 nodes of eight, got 5");
    ck_assert_int_eq(spec_nodes_check(&c, 0, "--nodes", &err), SC_EINPUT);
    ck_assert_str_eq(err.text, "expected a node count >= 1, got 0");
    ck_assert_int_eq(spec_nodes_check(&c, -3, "scen.json", &err), SC_EINPUT);
    ck_assert_str_eq(err.source, "scen.json");
    ck_assert_str_eq(err.text, "expected a node count >= 1, got -3");
    c.max_nodes = 0; /* unbounded */
    ck_assert_int_eq(spec_nodes_check(&c, 1000000, "--nodes", &err), 0);
}
END_TEST

START_TEST(test_shard)
{
    spec_layout l;
    sc_err err;
    /* shard group size on 64 ranks: ddp 1, zero1-3 all 64, mics/hsdp p, zeropp all 64
     * (hpZ's secondary copy is a separate partition; the primary shard is over all ranks) */
    const struct {
        const char *s;
        int want;
    } k[] = {{"ddp", 1},       {"zero1", 64},        {"zero2", 64},    {"zero3", 64},
             {"mics:p=8", 8}, {"mics:p=16,hier=0", 16}, {"hsdp:p=32", 32}, {"zeropp:hpz=8", 64},
             {"raf:p=8", 64}};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        ck_assert_int_eq(spec_layout_parse(k[i].s, &l, &err), 0);
        ck_assert_msg(spec_layout_shard(&l, 64) == k[i].want, "%s: %d", k[i].s, spec_layout_shard(&l, 64));
    }
}
END_TEST

/* The one replica formula (issue 26): GPUs per model replica and GPUs sharing a micro-batch.
 * megatron:t=8,p=4 -> 8 x 4 = 32 both (Megatron-LM's micro-batch is the replica's);
 * megatron cp=2 adds its factor: 8 x 2 x 2 = 32; tp:t=8 -> replica 8, micro-batch per GPU (1);
 * axonn:x=2,y=4,z=2 -> 2 x 4 x 2 = 16, per GPU (1); zero3 / mics:p=8 (data parallel) -> 1, 1. */
START_TEST(test_replicas)
{
    spec_layout l;
    sc_err err;
    const struct {
        const char *s;
        int replicas, share;
    } k[] = {{"megatron:t=8,p=4", 32, 32}, {"megatron:t=8,p=2,cp=2", 32, 32}, {"megatron:t=1,p=1", 1, 1},
             {"tp:t=8", 8, 1}, {"axonn:x=2,y=4,z=2", 16, 1}, {"zero3", 1, 1}, {"mics:p=8", 1, 1}};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        ck_assert_int_eq(spec_layout_parse(k[i].s, &l, &err), 0);
        ck_assert_msg(spec_layout_replicas(&l) == k[i].replicas, "%s: %d", k[i].s, spec_layout_replicas(&l));
        ck_assert_msg(spec_layout_batch_share(&l) == k[i].share, "%s: %d", k[i].s, spec_layout_batch_share(&l));
    }
}
END_TEST

/* Every rank of r's group (layout_group_members) has r's layout_group_index, no other rank has
 * it, and the indices count the groups. */
static void check_groups(const lo_graph *g, lo_group_kind kind, int n_groups)
{
    int N = g->n_ranks, seen[64] = {0}, distinct = 0;
    for (int r = 0; r < N; r++) {
        int m[64], n = layout_group_members(g, kind, r, m), id = layout_group_index(g, kind, r);
        ck_assert_int_ge(id, 0);
        ck_assert_int_lt(id, N);
        for (int q = 0; q < N; q++) {
            int member = 0;
            for (int i = 0; i < n; i++)
                member |= m[i] == q;
            if (member)
                ck_assert_int_eq(layout_group_index(g, kind, q), id);
            else
                ck_assert_int_ne(layout_group_index(g, kind, q), id);
        }
        if (!seen[id]++)
            distinct++;
    }
    ck_assert_int_eq(distinct, n_groups);
}

/* One group membership. 8 ranks, 4 per node, p = 2: world 1 group, partition and secondary 4
 * ({0,1}, ...), replica 2 ({0,2,4,6}, {1,3,5,7}), intra (q = 2) 4, node 2, cross-node rail 4
 * ({0,4}, ...), host 8, a stride-2 size-2 axis 4 ({0,2}, {1,3}, {4,6}, {5,7}). The rail (MiCS's
 * hierarchical all-gather, p > 4 GPUs per node): 16 ranks, p = 8: 8 rails ({0,4}, {1,5}, ...). */
START_TEST(test_group_index_matches_members)
{
    lo_graph *g = calloc(1, sizeof *g);
    ck_assert_ptr_nonnull(g);
    g->n_ranks = 8;
    g->gpus_per_node = 4;
    g->layout.p = 2;
    g->ax_stride[0] = 2;
    g->ax_size[0] = 2;
    const lo_group_kind kinds[] = {GRP_WORLD, GRP_PARTITION, GRP_SECONDARY, GRP_REPLICA, GRP_INTRA,
                                   GRP_NODE, GRP_XRAIL, GRP_HOST, GRP_AX0};
    const int n_groups[] = {1, 4, 4, 2, 4, 2, 4, 8, 4};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        check_groups(g, kinds[k], n_groups[k]);
    g->n_ranks = 16;
    g->layout.p = 8;
    check_groups(g, GRP_RAIL, 8);
    free(g);
}
END_TEST

/* plan's candidates from the kinds' rows, in plan's order: on 2 nodes of 8 GPUs, zero1 and mics
 * give zero1 over all 16 GPUs first, then for each group size p < 16 that divides 16 and aligns
 * with a node (2, 4, 8: MiCS §3.2) mics:p then zero1:p; mics adds hier=0 only past a node (none
 * here). LuWu alone on a cluster without an in-network node gives none. */
START_TEST(test_candidates_order)
{
    spec_cluster c = cluster8();
    spec_model m;
    memset(&m, 0, sizeof m);
    m.layers = 4, m.heads = m.kv_heads = 8;
    layout_cand_in in = {&c, &m, 2, NULL};
    spec_layout out[16];
    unsigned mask = (1u << LAYOUT_ZERO1) | (1u << LAYOUT_MICS);
    static const char *const want[] = {"zero1", "mics:p=2", "zero1:p=2", "mics:p=4", "zero1:p=4", "mics:p=8",
                                       "zero1:p=8"};
    int n = layout_kind_candidates(&in, mask, out, 16);
    ck_assert_int_eq(n, 7);
    for (int i = 0; i < n; i++) {
        char name[64];
        ck_assert_str_eq(spec_layout_str(&out[i], name, sizeof name), want[i]);
    }
    ck_assert_int_eq(layout_kind_candidates(&in, mask, out, 3), 3); /* at most max */
    ck_assert_int_eq(layout_kind_candidates(&in, 1u << LAYOUT_LUWU, out, 16), 0);
}
END_TEST

/* The comparison plan passes in, stubbed: it names what and the rival's kind. */
static void stub_vs(const void *ctx, int kind, const char *what, char *out, size_t len)
{
    (void)ctx;
    snprintf(out, len, "; vs %s (%d)", what, kind);
}

/* plan's reasons from the kinds' rows, on 2 nodes of 8 NVSwitch GPUs: groups of p <= 8 sit in a
 * node, 16 spans 16 / 8 = 2 nodes; everything but zero3 is compared with zero3 (kind 3); mics
 * says when its p is the smallest that fits; zeropp without hpZ has no secondary partition. */
START_TEST(test_explain_rows)
{
    spec_cluster c = cluster8();
    c.fabric.kind = FABRIC_NVSWITCH;
    spec_training t;
    memset(&t, 0, sizeof t);
    const struct {
        const char *s;
        int smallest;
        const char *want;
    } k[] = {
        {"ddp", 1, "replicated over all 16 GPUs; vs zero3 (3)"},
        {"zero3", 1, "sharded over all 16 GPUs"},
        {"mics:p=8", 1, "smallest p that fits: partition group of 8 inside one node (NVSwitch); vs zero3 (3)"},
        {"mics:p=16", 0, "partition group of 16 spanning 2 nodes; vs zero3 (3)"},
        {"hsdp:p=4", 1, "partition group of 4 inside one node (NVSwitch); vs zero3 (3)"},
        {"zeropp", 1, "sharded over all 16 GPUs (no secondary partition: hpZ off); vs zero3 (3)"},
        {"zeropp:hpz=8", 1, "secondary partition group of 8 inside one node (NVSwitch); vs zero3 (3)"},
        {"luwu", 1, "sharded over all 16 GPUs; vs zero3 (3)"},
        {"zero2-offload", 1,
         "16-bit parameters whole on each of 16 GPUs, gradient partitions and Adam on the host CPU; vs zero3 (3)"},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        spec_layout l;
        sc_err err;
        char out[512];
        ck_assert_int_eq(spec_layout_parse(k[i].s, &l, &err), 0);
        layout_explain_in x = {&c, NULL, NULL, &l, &t, 2, 16, 0, 0, k[i].smallest, stub_vs, NULL};
        layout_kind_explain(&x, out, sizeof out);
        ck_assert_str_eq(out, k[i].want);
    }
}
END_TEST

/* Which framework runs which kind, now the rows' frameworks column: DeepSpeed its ZeRO stages,
 * MiCS, ZeRO++ and ZeRO-Offload; FSDP and FSDP2 their sharding strategies (NO_SHARD = ddp,
 * FULL_SHARD, SHARD_GRAD_OP, HYBRID_SHARD, _HYBRID_SHARD_ZERO2); Megatron-LM DDP, its distributed
 * optimizer (zero1), Megatron-FSDP (zero3), tp and megatron; the ideal schedule every kind. */
START_TEST(test_framework_runs)
{
    static const char *const runs[N_FRAMEWORKS] = {
        [FW_DEEPSPEED] = ",ddp,zero1,zero2,zero3,mics,zeropp,zero3-offload,zero2-offload,",
        [FW_FSDP] = ",ddp,zero3,hsdp,shard_grad_op,hybrid_shard_zero2,",
        [FW_FSDP2] = ",ddp,zero3,hsdp,shard_grad_op,hybrid_shard_zero2,raf,",
        [FW_MEGATRON] = ",ddp,zero1,zero3,tp,megatron,"};
    for (int f = 0; f < N_FRAMEWORKS; f++)
        for (int k = 0; k < spec_layout_n_kinds(); k++) {
            spec_layout l;
            memset(&l, 0, sizeof l);
            l.kind = (spec_layout_kind)k;
            char name[40];
            snprintf(name, sizeof name, ",%s,", spec_layout_kind_name(l.kind));
            int want = f == FW_IDEAL || strstr(runs[f], name) != NULL;
            sc_err err;
            ck_assert_msg((fw_check((spec_framework)f, &l, &err) == 0) == want, "framework %d, kind %s", f, name);
        }
}
END_TEST

/* A fill for lo_build_micro_pair: every item gathers (its bytes by layer) and says its place in
 * hbm_bytes without asking which micro-step it is in; the block's backward (layer 1) asks, and
 * reduce-scatters in the last micro-step only. */
static void pair_fill(const lo_graph *g, const wl *w, const spec_training *t, lo_last *last, lo_item *it)
{
    (void)g;
    (void)w;
    (void)t;
    it->hbm_bytes = 10.0 * it->layer + it->pass;
    it->gather[it->n_gather++] = lo_coll_make(COLL_ALLGATHER, GRP_WORLD, 1e6 + it->layer, 1);
    if (it->pass == LO_BWD && it->layer == 1 && lo_last_is(last))
        it->reduce[it->n_reduce++] = lo_coll_make(COLL_REDUCESCATTER, GRP_WORLD, 5e5, 1);
}

/* The same fill told the micro-step outright (lo_build_micro's kind). */
static void pair_fill_int(const lo_graph *g, const wl *w, const spec_training *t, int last, lo_item *it)
{
    lo_last l = {last, 0};
    pair_fill(g, w, t, &l, it);
}

/* lo_build_micro_pair gives both micro-steps byte for byte as two lo_build_micro calls (last =
 * 0, then 1) with the same fill: the items that did not ask are copied, the one that asked
 * (the block's backward) is filled again and holds its reduce-scatter in the last micro-step
 * only. A pair builder that copied every item would leave that reduce out and fail here. */
START_TEST(test_micro_pair_as_two_builds)
{
    spec_model m = test_tiny_model(2);
    spec_training t;
    spec_training_defaults(&t);
    wl w;
    wl_build(&m, &t, &w);
    ck_assert_int_eq(w.n_layers, 3); /* embedding, one block kind, head: items 0-2 forward, 3-5 backward */
    lo_graph *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    a->group[GRP_WORLD].n = b->group[GRP_WORLD].n = 4; /* kept by lo_item_drop_trivial */
    lo_build_micro_pair(a, &w, &t, pair_fill);
    lo_build_micro(b, &w, &t, 0, &b->micro, pair_fill_int);
    lo_build_micro(b, &w, &t, 1, &b->last, pair_fill_int);
    ck_assert_int_eq(a->micro.n_items, 6);
    ck_assert_int_eq(a->last.n_items, 6);
    for (int i = 0; i < 6; i++) {
        ck_assert_int_eq(memcmp(&a->micro.item[i], &b->micro.item[i], sizeof a->micro.item[i]), 0);
        ck_assert_int_eq(memcmp(&a->last.item[i], &b->last.item[i], sizeof a->last.item[i]), 0);
        const int asks = a->last.item[i].pass == LO_BWD && a->last.item[i].layer == 1;
        ck_assert_int_eq(a->micro.item[i].n_reduce, 0);
        ck_assert_int_eq(a->last.item[i].n_reduce, asks);
    }
    free(a);
    free(b);
}
END_TEST

/* The last-micro-step tests' setting: Llama-3-8B on p4d, grad-accum 4 (the graph allocated). */
static lo_graph *llama_accum4(spec_cluster *c, spec_training *t, wl *w)
{
    spec_model m;
    test_p4d_llama3_8b(c, &m, NULL);
    spec_training_defaults(t);
    t->grad_accum = 4;
    wl_build(&m, t, w);
    lo_graph *g = malloc(sizeof *g);
    ck_assert_ptr_nonnull(g);
    return g;
}

/* dp_item through lo_build_micro_pair on Llama-3-8B, 2 p4d nodes, grad-accum 4, the papers'
 * schedule: ddp all-reduces gradients in the last micro-step's backward only (the items asked),
 * so its backward items differ between the micro-steps and its forward items do not; zero3
 * reduce-scatters every micro-step (nothing asked): both micro-steps the same bytes. */
START_TEST(test_dp_last_micro_step)
{
    spec_cluster c;
    spec_training t;
    wl w;
    lo_graph *g = llama_accum4(&c, &t, &w);
    static const char *const L[] = {"ddp", "zero3"};
    for (int k = 0; k < 2; k++) {
        spec_layout l = test_parse_layout(L[k]);
        layout_build(&w, &t, &l, &c, 2, g);
        ck_assert_int_eq(g->micro.n_items, g->last.n_items);
        for (int i = 0; i < g->micro.n_items; i++) {
            const lo_item *a = &g->micro.item[i], *b = &g->last.item[i];
            const int same = !memcmp(a, b, sizeof *a), ddp_bwd = k == 0 && a->pass == LO_BWD && w.layer[a->layer].params > 0;
            ck_assert_msg(same == !ddp_bwd, "%s item %d", L[k], i);
            if (ddp_bwd)
                ck_assert_int_eq(b->n_reduce, a->n_reduce + 1);
        }
    }
    free(g);
}
END_TEST

START_TEST(test_tensor_last_micro_step)
{
    /* The tensor builders (tp, megatron, axonn) build both micro-steps through lo_build_micro_pair
     * (an32b), filling the last one's items again only where they ask lo_last_is. What they
     * must still give: on 2 p4d nodes (data-parallel size 2) with grad_accum 4, every forward
     * item the same bytes in both micro-steps (no parameter gather ahead: off by default), and
     * every backward item of a layer with parameters one collective more in the last (the
     * gradient reduction, as a reduce or beside the compute), the rest of the layers' items the
     * same. Fails if the last micro-step's reduction were lost (an item copied that should
     * have asked). */
    spec_cluster c;
    spec_training t;
    wl w;
    lo_graph *g = llama_accum4(&c, &t, &w);
    static const char *const L[] = {"tp:t=8", "megatron:t=8,p=1", "axonn:x=2,y=2,z=2"};
    for (int k = 0; k < 3; k++) {
        spec_layout l = test_parse_layout(L[k]);
        layout_build(&w, &t, &l, &c, 2, g);
        ck_assert_int_eq(g->micro.n_items, g->last.n_items);
        int nb = 0;
        for (int i = 0; i < g->micro.n_items; i++) {
            const lo_item *a = &g->micro.item[i], *b = &g->last.item[i];
            const int same = !memcmp(a, b, sizeof *a), grad = a->pass == LO_BWD && g->lw[a->layer].params > 0;
            ck_assert_msg(same == !grad, "%s item %d", L[k], i);
            if (grad) {
                ck_assert_int_eq(b->n_reduce + b->n_inline, a->n_reduce + a->n_inline + 1);
                nb++;
            }
        }
        ck_assert_int_gt(nb, 0);
    }
    free(g);
}
END_TEST

Suite *layout_suite(void)
{
    Suite *s = suite_create("layout");
    TCase *parse = tcase_create("parse");
    tcase_add_loop_test(parse, test_parse_accepts, 0, N_ACCEPT);
    tcase_add_loop_test(parse, test_parse_rejects, 0, N_REJECT);
    tcase_add_test(parse, test_parse_null_and_long);
    suite_add_tcase(s, parse);

    TCase *chk = tcase_create("check");
    tcase_add_test(chk, test_check_not_dividing);
    tcase_add_test(chk, test_check_not_aligned);
    tcase_add_test(chk, test_check_raf);
    tcase_add_test(chk, test_check_ok);
    tcase_add_test(chk, test_check_p_exceeds_gpus);
    tcase_add_test(chk, test_nodes_check);
    tcase_add_test(chk, test_shard);
    tcase_add_test(chk, test_replicas);
    tcase_add_test(chk, test_group_index_matches_members);
    tcase_add_test(chk, test_candidates_order);
    tcase_add_test(chk, test_explain_rows);
    tcase_add_test(chk, test_framework_runs);
    suite_add_tcase(s, chk);

    TCase *build = tcase_create("build");
    tcase_add_test(build, test_micro_pair_as_two_builds);
    tcase_add_test(build, test_dp_last_micro_step);
    tcase_add_test(build, test_tensor_last_micro_step);
    suite_add_tcase(s, build);
    return s;
}
