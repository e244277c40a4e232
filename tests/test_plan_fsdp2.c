/* test_plan_fsdp2.c — plan's torchtitan N-D FSDP2 families (predict/search.c ps_fsdp2_layouts,
 * predict/plan.c): the family names and bits, the candidates counted by hand on one p4d node for
 * Llama-3-8B, the divisibility every candidate keeps (t | GPUs per node, p | layers, 2p | layers
 * for interleaved, dp x t x p = GPUs, async TP only compiled), the micro-batch rule (m >= p x
 * stages per rank, interleaved m a multiple of p), when plan searches them, and a plan on the
 * duo cluster under fsdp2 that ranks them. */
#include <check.h>
#include <string.h>

#include "../predict/plan.h"
#include "../predict/search.h"
#include "suites.h"
#include "support.h"



START_TEST(test_fsdp2_family_names)
{
    const int nk = spec_layout_n_kinds(); /* the kinds' bits come first (ps_family_mask) */
    ck_assert_uint_eq(ps_fsdp2_bit(PS_FSDP2_TP), 1u << nk);
    ck_assert_uint_eq(ps_fsdp2_bit(PS_FSDP2_PP), 1u << (nk + 1));
    ck_assert_uint_eq(ps_family_mask("fsdp2-tp"), 1u << nk);
    ck_assert_uint_eq(ps_family_mask("fsdp2-pp,zero3"), (1u << (nk + 1)) | (1u << LAYOUT_ZERO3));
    ck_assert_uint_eq(ps_fsdp2_families(), (1u << nk) | (1u << (nk + 1)));
    ck_assert_str_eq(ps_family_name(nk), "fsdp2-tp");
    ck_assert_str_eq(ps_family_name(nk + 1), "fsdp2-pp");
    ck_assert_int_eq(ps_n_families(), nk + 2);
    /* N-D: zero3 with t > 1 or p > 1; plain zero3 and zero3:cp are not */
    ck_assert(ps_is_fsdp2_nd(&(spec_layout){.kind = LAYOUT_ZERO3, .t = 2, .pp = 1}));
    ck_assert(ps_is_fsdp2_nd(&(spec_layout){.kind = LAYOUT_ZERO3, .t = 1, .pp = 2}));
    ck_assert(!ps_is_fsdp2_nd(&(spec_layout){.kind = LAYOUT_ZERO3, .cp = 2, .pp = 1}));
    ck_assert(!ps_is_fsdp2_nd(&(spec_layout){.kind = LAYOUT_MEGATRON, .t = 2, .pp = 2}));
}
END_TEST

/* One p4d node (8 GPUs), Llama-3-8B (32 layers, 32 heads, 8 key/value heads, hidden 4096, ffn
 * 14336: t = 2, 4, 8 split them all). By hand, eager: fsdp2-tp t = 2, 4, 8 (dp 4, 2, 1): 3.
 * fsdp2-pp: t = 1: p in {2, 4, 8} (dividing 32 and 8), each 1f1b and interleaved (2p = 4, 8, 16
 * divide 32): 6; t = 2: p in {2, 4} (dividing 32 and 4): 4; t = 4: p = 2: 2; t = 8: no p (N / t
 * = 1): 0. 15 in all. Compiled: every t > 1 layout twice (asynctp=1): 3 x 2 + 6 + 2 x (4 + 2) =
 * 24. */
START_TEST(test_fsdp2_counts_by_hand)
{
    spec_cluster c;
    spec_model m;
    test_p4d_llama3_8b(&c, &m, NULL);
    spec_layout out[64];
    const unsigned tp = ps_fsdp2_bit(PS_FSDP2_TP), pp = ps_fsdp2_bit(PS_FSDP2_PP);
    ck_assert_int_eq(ps_fsdp2_layouts(&c, &m, 1, tp, 0, out, 0, 64), 3);
    ck_assert_int_eq(ps_fsdp2_layouts(&c, &m, 1, pp, 0, out, 0, 64), 12);
    ck_assert_int_eq(ps_fsdp2_layouts(&c, &m, 1, tp | pp, 0, out, 0, 64), 15);
    ck_assert_int_eq(ps_fsdp2_layouts(&c, &m, 1, tp | pp, 1, out, 0, 64), 24);
    /* no family bit: nothing; appending after n and stopping at max */
    ck_assert_int_eq(ps_fsdp2_layouts(&c, &m, 1, PS_FAM(LAYOUT_ZERO3), 1, out, 0, 64), 0);
    ck_assert_int_eq(ps_fsdp2_layouts(&c, &m, 1, tp, 0, out, 5, 64), 8);
    ck_assert_int_eq(ps_fsdp2_layouts(&c, &m, 1, tp | pp, 0, out, 0, 7), 7);
    /* the first is fsdp2:dp=4,t=2 as the grammar spells it */
    char s[96];
    ps_fsdp2_layouts(&c, &m, 1, tp, 0, out, 0, 64);
    ck_assert_str_eq(spec_layout_str(&out[0], s, sizeof s), "fsdp2:dp=4,t=2");
}
END_TEST

/* The divisibility every candidate keeps, on clusters and models chosen to cut some off: 4 GPUs
 * per node (t = 8 cannot sit inside one), 30 layers (p = 4, 8 do not divide them; with p = 2,
 * 2p = 4 does not either: no interleaving), 1 to 4 nodes (3 nodes: 12 GPUs, p = 3 and 6 too). */
START_TEST(test_fsdp2_divisibility)
{
    spec_cluster c;
    spec_model m;
    test_p4d_llama3_8b(&c, &m, NULL);
    c.gpus_per_node = 4;
    static const int LAYERS[2] = {32, 30};
    for (int li = 0; li < 2; li++)
        for (int nodes = 1; nodes <= 4; nodes++)
            for (int compiled = 0; compiled <= 1; compiled++) {
                m.layers = LAYERS[li];
                spec_layout out[256];
                int n = ps_fsdp2_layouts(&c, &m, nodes, ps_fsdp2_families(), compiled, out, 0, 256);
                ck_assert_int_gt(n, 0);
                for (int i = 0; i < n; i++) {
                    const spec_layout *l = &out[i];
                    int t = l->t > 1 ? l->t : 1, p = l->pp > 1 ? l->pp : 1;
                    ck_assert(ps_is_fsdp2_nd(l));
                    ck_assert_int_eq(c.gpus_per_node % t, 0);
                    ck_assert_int_eq(m.layers % p, 0);
                    ck_assert_int_eq(l->dp * t * p, nodes * c.gpus_per_node);
                    if (l->vp > 1)
                        ck_assert_int_eq(m.layers % (2 * p), 0);
                    ck_assert(!l->atp || (compiled && t > 1));
                    ck_assert(l->sched != PIPE_GPIPE);
                    ck_assert_int_le(t, 4);
                    if (m.layers == 30) /* 4 and 8 do not divide 30; 2p = 4 neither (3 nodes: p = 3, 6 can) */
                        ck_assert(p != 4 && p != 8 && !(p == 2 && l->vp > 1));
                }
            }
}
END_TEST

/* m >= p x stages per rank (torchtitan warns below), interleaved m a multiple of p. */
START_TEST(test_fsdp2_split_rule)
{
    spec_layout f1b = test_parse_layout("fsdp2:dp=1,t=2,p=4,schedule=1f1b");
    spec_layout il = test_parse_layout("fsdp2:dp=1,t=2,p=4,schedule=interleaved-1f1b");
    spec_layout z3 = test_parse_layout("zero3"), tp = test_parse_layout("fsdp2:dp=4,t=2");
    spec_layout meg = test_parse_layout("megatron:t=2,p=4");
    spec_training tr;
    spec_training_defaults(&tr);
    tr.micro_batch = 1;
    tr.grad_accum = 3; /* 3 < 4 stages */
    ck_assert(ps_pipe_split_bad(&f1b, &tr));
    tr.grad_accum = 4;
    ck_assert(!ps_pipe_split_bad(&f1b, &tr));
    ck_assert(ps_pipe_split_bad(&il, &tr)); /* 4 < 4 x 2 stages */
    tr.grad_accum = 8;
    ck_assert(!ps_pipe_split_bad(&il, &tr));
    tr.grad_accum = 10; /* >= 8 but not a multiple of p = 4 */
    ck_assert(ps_pipe_split_bad(&il, &tr));
    ck_assert(!ps_pipe_split_bad(&f1b, &tr));
    tr.grad_accum = 1; /* no pipeline, or not fsdp2's: not this rule's */
    ck_assert(!ps_pipe_split_bad(&z3, &tr));
    ck_assert(!ps_pipe_split_bad(&tp, &tr));
    ck_assert(!ps_pipe_split_bad(&meg, &tr));
}
END_TEST

/* When plan searches them: fsdp2 with "all" (~0u) or any mask naming them; another framework
 * only when they are named; never without their bits. */
START_TEST(test_fsdp2_searched_when)
{
    const unsigned nd = ps_fsdp2_families();
    ck_assert(pl_fsdp2_searched(~0u, FW_FSDP2));
    ck_assert(!pl_fsdp2_searched(~0u, FW_IDEAL));
    ck_assert(!pl_fsdp2_searched(~0u, FW_DEEPSPEED));
    ck_assert(pl_fsdp2_searched(nd, FW_IDEAL));
    ck_assert(pl_fsdp2_searched(ps_fsdp2_bit(PS_FSDP2_PP), FW_FSDP2));
    ck_assert(!pl_fsdp2_searched(~0u & ~nd, FW_FSDP2));
    ck_assert(!pl_fsdp2_searched(PS_FAM(LAYOUT_ZERO3), FW_FSDP2));
}
END_TEST

/* A plan under fsdp2 on 2 duo nodes (4 GPUs, 2 per node) of the tiny model with 4 heads: "all"
 * tries the N-D layouts, "all" under ideal does not (the kinds' list as before), and a plan of
 * the N-D families alone recommends one of them and says why in the mesh's words. */
START_TEST(test_fsdp2_plan_duo)
{
    spec_cluster c = test_duo_cluster("duo", 1e11, 1e10);
    c.price_usd_per_hour = 36;
    spec_model m = test_tiny_model(4);
    m.heads = m.kv_heads = 4;
    cost_calib k = test_tiny_calib();
    spec_training tr;
    spec_training_defaults(&tr);
    tr.micro_batch = 1;
    tr.grad_accum = 4;
    tr.precision = PREC_BF16;
    tr.framework = FW_IDEAL;
    static const int NODES[] = {2};
    pl_request q = {.cluster = &c, .model = &m, .cal = &k, .training = &tr, .nodes = NODES, .n_nodes = 1,
                    .mask = ~0u, .objective = PS_THROUGHPUT, .uncertainty = 0.1, .uncertainty_set = 1, .threads = 1};
    pl_plan *p;
    sc_err err;
    ck_assert_int_eq(pl_run(&q, &p, &err), 0);
    long ideal_tried = pl_stats_of(p)->tried;
    for (size_t i = 0; i < pl_n(p); i++)
        ck_assert(!ps_is_fsdp2_nd(&pl_cand(p, i)->pt.layout));
    pl_free(p);
    tr.framework = FW_FSDP2;
    q.mask = ps_fsdp2_families();
    ck_assert_int_eq(pl_run(&q, &p, &err), 0);
    long nd_tried = pl_stats_of(p)->tried;
    ck_assert_uint_gt(pl_n(p), 0);
    ck_assert(ps_is_fsdp2_nd(&pl_cand(p, 0)->pt.layout));
    ck_assert_ptr_nonnull(strstr(pl_why(p), "FSDP2 over dp "));
    for (size_t i = 0; i < pl_n(p); i++) {
        const ps_cand *cd = pl_cand(p, i);
        int pp = cd->pt.layout.pp > 1 ? cd->pt.layout.pp : 1, vp = cd->pt.layout.vp > 1 ? cd->pt.layout.vp : 1;
        ck_assert_int_ge(cd->pt.training.grad_accum, pp * vp); /* the split rule held in the grid */
    }
    pl_free(p);
    /* fsdp2 with every family: its own kinds and the N-D ones (nd_tried of them at least) */
    q.mask = ~0u;
    ck_assert_int_eq(pl_run(&q, &p, &err), 0);
    ck_assert_int_gt(pl_stats_of(p)->tried, nd_tried);
    ck_assert_int_gt(ideal_tried, 0);
    pl_free(p);
}
END_TEST

Suite *plan_fsdp2_suite(void)
{
    Suite *s = suite_create("plan_fsdp2");
    TCase *t = tcase_create("core");
    tcase_add_test(t, test_fsdp2_family_names);
    tcase_add_test(t, test_fsdp2_counts_by_hand);
    tcase_add_test(t, test_fsdp2_divisibility);
    tcase_add_test(t, test_fsdp2_split_rule);
    tcase_add_test(t, test_fsdp2_searched_when);
    tcase_add_test(t, test_fsdp2_plan_duo);
    suite_add_tcase(s, t);
    return s;
}
