/* test_infinity.c — ZeRO-Infinity (zero3-offload:param=cpu|nvme,opt=cpu|nvme): layout strings,
 * bytes per step over PCIe and to / from NVMe (parameters and optimizer), memory on GPU, host
 * and NVMe, the NVMe transport's cost and flows, and the engines agreeing without contention.
 * Expected values are derived in comments. */
#include "suites.h"
#include "support.h"

#include "../model/analytic.h"
#include "../model/layout.h"
#include "../model/memory.h"
#include "../model/spec.h"
#include "../predict/eval.h"
#include "../sim/exec.h"
#include "../sim/net.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* duo cluster (2 GPUs per node, PCIe 1e10 B/s each) with NVMe: 8e9 B/s read, 4e9 B/s write,
 * 1e12 B per node; CPU Adam 1e9 parameters/s; 1e12 B host memory. */
static spec_cluster nvme_cluster(void)
{
    spec_cluster c = test_duo_cluster("duo-nvme", 5e10, 1e10);
    c.cpu_adam_params_per_s = 1e9;
    c.host_mem_bytes = 1e12;
    c.nvme_read_Bps = 8e9;
    c.nvme_write_Bps = 4e9;
    c.nvme_bytes = 1e12;
    return c;
}

typedef struct run {
    spec_training tr;
    wl w;
    lo_graph g;
    an_timed t;
    spec_layout l;
} run;

static void prepare(run *x, const spec_cluster *c, const cost_calib *k, const char *layout, int nodes, int layers,
                    int ga, int pf)
{
    sc_err err;
    ck_assert_msg(spec_layout_parse(layout, &x->l, &err) == 0, "%s", err.text);
    ck_assert_msg(spec_layout_check(&x->l, c, nodes, &err) == 0, "%s", err.text);
    spec_training_defaults(&x->tr);
    x->tr.grad_accum = ga;
    x->tr.prefetch_layers = pf;
    spec_model m = test_tiny_model(layers);
    wl_build(&m, &x->tr, &x->w);
    layout_build(&x->w, &x->tr, &x->l, c, nodes, &x->g);
    an_time(&x->g, &x->w, k, c, &x->t);
}

START_TEST(test_strings)
{
    /* parse, canonical print, round trip; defaults print as the bare name */
    const char *in[] = {"zero3-offload", "zero3-offload:opt=cpu", "zero3-offload:param=gpu", "zero3-offload:param=cpu",
                        "zero3-offload:opt=nvme", "zero3-offload:opt=nvme,param=nvme", "zero3-offload:param=cpu,opt=nvme"};
    const char *out[] = {"zero3-offload", "zero3-offload", "zero3-offload", "zero3-offload:param=cpu",
                         "zero3-offload:opt=nvme", "zero3-offload:param=nvme,opt=nvme", "zero3-offload:param=cpu,opt=nvme"};
    for (int i = 0; i < 7; i++) {
        spec_layout l, l2;
        sc_err err;
        char buf[64], buf2[64];
        ck_assert_msg(spec_layout_parse(in[i], &l, &err) == 0, "%s: %s", in[i], err.text);
        ck_assert_str_eq(spec_layout_str(&l, buf, sizeof buf), out[i]);
        ck_assert_int_eq(spec_layout_parse(buf, &l2, &err), 0);
        ck_assert_str_eq(spec_layout_str(&l2, buf2, sizeof buf2), buf);
    }
    spec_layout l;
    sc_err err;
    ck_assert_int_eq(spec_layout_parse("zero3-offload:param=disk", &l, &err), SC_EINPUT);
    ck_assert_str_eq(err.text, "in \"zero3-offload:param=disk\": expected param=gpu, cpu or nvme, got \"disk\"");
    ck_assert_int_eq(spec_layout_parse("zero3-offload:opt=gpu", &l, &err), SC_EINPUT);
    ck_assert_str_eq(err.text, "in \"zero3-offload:opt=gpu\": expected opt=cpu or nvme, got \"gpu\"");
    /* NVMe needs a cluster with NVMe */
    spec_cluster c = test_duo_cluster("duo", 5e10, 1e10);
    ck_assert_int_eq(spec_layout_parse("zero3-offload:param=nvme", &l, &err), 0);
    ck_assert_int_eq(spec_layout_check(&l, &c, 2, &err), SC_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.text, "expected a cluster with local NVMe"));
    ck_assert_int_eq(spec_layout_parse("zero3-offload:param=cpu", &l, &err), 0);
    ck_assert_int_eq(spec_layout_check(&l, &c, 2, &err), 0);
}
END_TEST

START_TEST(test_traffic)
{
    /* N = 4 ranks (2 nodes x 2), grad_accum 2, e = 2 B, Ψ the model's parameters.
     * param=nvme,opt=nvme: every layer's shard (e Ψ / N = Ψ / 2 B over the step's layers) is
     * fetched NVMe -> host -> GPU before its forward and before its backward: 2 x Ψ/2 per
     * micro-step, x 2 micro-steps = 2 Ψ B over PCIe, all of it read from NVMe. Gradient shards
     * to host once per micro-step: 2 x Ψ/2 = Ψ B. Optimizer: 16 B/param read and 16 B written
     * for the rank's Ψ/4 parameters: 4 Ψ B each; updated 16-bit shard to NVMe: e Ψ/4 = Ψ/2. */
    spec_cluster c = nvme_cluster();
    cost_calib k = test_tiny_calib();
    run *x = malloc(sizeof *x);
    lo_offload_traffic o;
    prepare(x, &c, &k, "zero3-offload:param=nvme,opt=nvme", 2, 1, 2, 1);
    double psi = x->w.params;
    layout_offload_traffic(&x->g, &o);
    ck_assert_double_eq_tol(o.param_h2d, 2 * psi, 1e-6);
    ck_assert_double_eq_tol(o.param_nvme_read, 2 * psi, 1e-6);
    ck_assert_double_eq_tol(o.grad_d2h, psi, 1e-6);
    ck_assert_double_eq(o.update_h2d, 0);
    ck_assert_double_eq_tol(o.opt_nvme_read, 4 * psi, 1e-6);
    ck_assert_double_eq_tol(o.opt_nvme_write, 4 * psi, 1e-6);
    ck_assert_double_eq_tol(o.param_nvme_write, psi / 2, 1e-6);
    /* the boundary: CPU Adam with states on NVMe over the node's 2 shards (Ψ/2 params), then
     * the NVMe write of the shard */
    ck_assert_int_eq(x->g.n_boundary, 2);
    ck_assert_int_eq(x->g.boundary[0].opt_where, OPT_HOST_NVME);
    ck_assert_double_eq_tol(x->g.boundary[0].opt_params, psi / 2, 1e-9);
    ck_assert_int_eq(x->g.boundary[1].coll.group, GRP_NVME_HOST);

    /* param=cpu (opt=cpu): the same 2 Ψ over PCIe, none from NVMe; the CPU updates the host
     * copy in place: nothing back to the GPU, no NVMe at all */
    prepare(x, &c, &k, "zero3-offload:param=cpu", 2, 1, 2, 1);
    layout_offload_traffic(&x->g, &o);
    ck_assert_double_eq_tol(o.param_h2d, 2 * psi, 1e-6);
    ck_assert_double_eq(o.param_nvme_read, 0);
    ck_assert_double_eq_tol(o.grad_d2h, psi, 1e-6);
    ck_assert_double_eq(o.update_h2d + o.opt_nvme_read + o.opt_nvme_write + o.param_nvme_write, 0);
    ck_assert_int_eq(x->g.n_boundary, 1);
    ck_assert_int_eq(x->g.boundary[0].opt_where, OPT_HOST);

    /* ZeRO-Offload (parameters on the GPU): no parameter fetch; the updated shard, e Ψ/4 = Ψ/2,
     * back to the GPU; opt=nvme adds the optimizer's 4 Ψ each way */
    prepare(x, &c, &k, "zero3-offload:opt=nvme", 2, 1, 2, 1);
    layout_offload_traffic(&x->g, &o);
    ck_assert_double_eq(o.param_h2d, 0);
    ck_assert_double_eq_tol(o.update_h2d, psi / 2, 1e-6);
    ck_assert_double_eq_tol(o.opt_nvme_read, 4 * psi, 1e-6);
    ck_assert_double_eq(o.param_nvme_write, 0);
    free(x);
}
END_TEST

START_TEST(test_costs)
{
    /* A shard of S = 1e8 B from NVMe to the GPU: both GPUs of the node read at once, each gets
     * 8e9 / 2 = 4e9 B/s of the drives, less than its PCIe 1e10: 1e8 / 4e9 = 25 ms (tiny calib:
     * no latency, efficiency 1). From host memory: PCIe, 1e8 / 1e10 = 10 ms. Host -> NVMe write:
     * 4e9 / 2 = 2e9 B/s: 50 ms. */
    spec_cluster c = nvme_cluster();
    cost_calib k = test_tiny_calib();
    cost_group nv, nh, h;
    cost_group_nvme(&c, 1, &nv);
    cost_group_nvme(&c, 0, &nh);
    cost_group_host(&c, &h);
    ck_assert_double_eq_tol(cost_coll_time(&k, COLL_ALLGATHER, ALGO_RING, 1e8, 1, &nv), 0.025, 1e-12);
    ck_assert_double_eq_tol(cost_coll_time(&k, COLL_ALLGATHER, ALGO_RING, 1e8, 1, &h), 0.010, 1e-12);
    ck_assert_double_eq_tol(cost_coll_time(&k, COLL_REDUCESCATTER, ALGO_RING, 1e8, 1, &nh), 0.050, 1e-12);
    /* a faster drive array: PCIe binds the GPU-ending fetch, not the host-only one */
    c.nvme_read_Bps = 1e11;
    cost_group_nvme(&c, 1, &nv);
    cost_group_nvme(&c, 0, &nh);
    ck_assert_double_eq_tol(cost_coll_time(&k, COLL_ALLGATHER, ALGO_RING, 1e8, 1, &nv), 0.010, 1e-12);
    ck_assert_double_eq_tol(cost_coll_time(&k, COLL_ALLGATHER, ALGO_RING, 1e8, 1, &nh), 1e8 / 5e10, 1e-12);
    /* CPU Adam with states on NVMe, 4e9 parameters on a node of 2 GPUs (2e9 per rank): compute
     * 4e9 / 1e9 = 4 s; I/O 16 x 4e9 / 8e9 + 16 x 4e9 / 4e9 = 8 + 16 = 24 s; sub-groups of 1e9 per
     * rank (2e9 per node) pipelined: max(4, 24) + (2e9 / 4e9) x 24 = 36 s. One sub-group (1e9
     * parameters on the node): nothing to overlap: 1 + (2 + 4) = 7 s. */
    c.nvme_read_Bps = 8e9;
    ck_assert_double_eq_tol(cost_optimizer_nvme_time(&c, 4e9, 1e9), 36.0, 1e-9);
    ck_assert_double_eq_tol(cost_optimizer_nvme_time(&c, 1e9, 1e9), 7.0, 1e-9);
    ck_assert_double_eq_tol(cost_optimizer_time_at(&k, &c, OPT_HOST_NVME, 4e9), 36.0, 1e-9);
}
END_TEST

START_TEST(test_paths)
{
    /* the NVMe endpoints: read = the node's drives then the GPU's host->GPU PCIe link; write the
     * other way; host-only: the drives' link alone */
    spec_cluster c = nvme_cluster();
    net_params p = {1, 1, 1};
    net_t *net;
    sc_err err;
    ck_assert_int_eq(net_build(&c, 2, &p, &net, &err), 0);
    int lk[NET_PATH_MAX];
    ck_assert_int_eq(net_path(net, NET_EP_NVME, 3, 0, lk, NET_PATH_MAX), 2);
    ck_assert_str_eq(net_link_name(net, lk[0]), "n1.nvme>cpu");
    ck_assert_str_eq(net_link_name(net, lk[1]), "n1.cpu>gpu1");
    ck_assert_double_eq(net_link_capacity(net, lk[0]), 8e9);
    ck_assert_int_eq(net_path(net, 0, NET_EP_NVME, 0, lk, NET_PATH_MAX), 2);
    ck_assert_str_eq(net_link_name(net, lk[0]), "n0.gpu0>cpu");
    ck_assert_str_eq(net_link_name(net, lk[1]), "n0.cpu>nvme");
    ck_assert_int_eq(net_path(net, 2, NET_EP_NVME_HOST, 0, lk, NET_PATH_MAX), 1);
    ck_assert_str_eq(net_link_name(net, lk[0]), "n1.cpu>nvme");
    ck_assert_double_eq(net_link_capacity(net, lk[0]), 4e9);
    net_free(net);
    /* without NVMe: refused */
    spec_cluster d = test_duo_cluster("duo", 5e10, 1e10);
    ck_assert_int_eq(net_build(&d, 1, &p, &net, &err), 0);
    ck_assert_int_lt(net_path(net, NET_EP_NVME, 0, 0, lk, NET_PATH_MAX), 0);
    net_free(net);
}
END_TEST

START_TEST(test_memory)
{
    /* N = 4, G = 2, shard Ψ/4 (< 1e9: one sub-group), bf16 (e = 2).
     * param=nvme,opt=nvme: GPU parameter shard 0; host per node 2 x (4 Ψ/4 fp32 grads + 2 x 16
     * x Ψ/4 swap buffers + 5 x 1e8 x 2 B fetch buffers) = 18 Ψ + 2e9; NVMe per node 2 x (16 +
     * 2) x Ψ/4 = 9 Ψ. param=cpu (opt=cpu): host 2 x (16 + 2) x Ψ/4 = 9 Ψ, no NVMe.
     * zero3-offload (ZeRO-Offload): host 2 x 16 x Ψ/4 = 8 Ψ, GPU shard 2 Ψ/4. */
    spec_cluster c = nvme_cluster();
    cost_calib k = test_tiny_calib();
    run *x = malloc(sizeof *x);
    mem_breakdown m;
    prepare(x, &c, &k, "zero3-offload:param=nvme,opt=nvme", 2, 1, 1, 1);
    double psi = x->w.params;
    mem_plan(&x->w, &x->tr, &x->l, 4, &c, &m);
    ck_assert_double_eq(m.params, 0);
    ck_assert_double_eq(m.grads + m.optim, 0);
    ck_assert_double_eq_tol(m.host, 18 * psi + 2e9, 1e-3);
    ck_assert_double_eq_tol(m.nvme, 9 * psi, 1e-6);
    ck_assert_double_eq(m.nvme_cap, 1e12);
    ck_assert_int_eq(m.fits, 1);
    prepare(x, &c, &k, "zero3-offload:param=cpu", 2, 1, 1, 1);
    mem_plan(&x->w, &x->tr, &x->l, 4, &c, &m);
    ck_assert_double_eq(m.params, 0);
    ck_assert_double_eq_tol(m.host, 9 * psi, 1e-6);
    ck_assert_double_eq(m.nvme, 0);
    prepare(x, &c, &k, "zero3-offload", 2, 1, 1, 1);
    mem_plan(&x->w, &x->tr, &x->l, 4, &c, &m);
    ck_assert_double_eq_tol(m.params, 2 * psi / 4, 1e-6);
    ck_assert_double_eq_tol(m.host, 8 * psi, 1e-6);
    /* drives too small: does not fit, and says where */
    c.nvme_bytes = 4 * psi;
    prepare(x, &c, &k, "zero3-offload:opt=nvme", 2, 1, 1, 1);
    mem_plan(&x->w, &x->tr, &x->l, 4, &c, &m);
    ck_assert_int_eq(m.fits, 0);
    double sb, need, cap;
    ck_assert_str_eq(mem_short_where(&m, &sb, &need, &cap), "NVMe");
    ck_assert_double_eq_tol(sb, 8 * psi - 4 * psi, 1e-6); /* 2 x 16 x Ψ/4 = 8 Ψ on the drives */
    free(x);
}
END_TEST

/* Every tier, grad_accum 1 and 3, prefetch 0-2, 1 and 2 blocks, two calibrations, on `nodes`
 * nodes of c: the simulated step equals the analytical one (1e-9). */
static void agree_on(const spec_cluster *c, int nodes)
{
    cost_calib kt = test_tiny_calib(), kd;
    cost_calib_defaults(c, &kd);
    const cost_calib *ks[2] = {&kt, &kd};
    const char *lays[] = {"zero3-offload", "zero3-offload:param=cpu", "zero3-offload:param=nvme",
                          "zero3-offload:opt=nvme", "zero3-offload:param=cpu,opt=nvme",
                          "zero3-offload:param=nvme,opt=nvme"};
    run *x = malloc(sizeof *x);
    for (int ki = 0; ki < 2; ki++)
        for (int li = 0; li < 6; li++)
            for (int ga = 1; ga <= 3; ga += 2)
                for (int pf = 0; pf <= 2; pf++)
                    for (int layers = 1; layers <= 2; layers++) {
                        exec_result s;
                        an_result a;
                        exec_opts o;
                        memset(&o, 0, sizeof o);
                        o.seed = 1;
                        sc_err err;
                        prepare(x, c, ks[ki], lays[li], nodes, layers, ga, pf);
                        ck_assert_msg(exec_run(&x->g, &x->t, ks[ki], c, &o, &s, &err) == 0, "%s", err.text);
                        memset(&a, 0, sizeof a);
                        an_run(&x->t, &a);
                        ck_assert_msg(fabs(s.step_s - a.step_s) <= 1e-9 * a.step_s,
                                      "%s G%d k%d ga%d pf%d L%d: %.17g vs %.17g", lays[li], c->gpus_per_node, ki, ga,
                                      pf, layers, s.step_s, a.step_s);
                        ck_assert_double_eq_tol(s.optimizer_s, a.optimizer_s, 1e-9 * a.step_s);
                    }
    free(x);
}

START_TEST(test_agree_no_contention)
{
    /* The duo cluster: the two GPUs of a node read their shards at once, so each gets half the
     * drives in both engines. Then the LuWu testbed's shape: one GPU per node on a PCIe fabric
     * (its host links are the fabric's own). */
    spec_cluster c = nvme_cluster();
    agree_on(&c, 2);
    c.fabric.kind = FABRIC_PCIE;
    c.gpus_per_node = 1;
    agree_on(&c, 4);
}
END_TEST

START_TEST(test_finite_check_fields)
{
    /* pred_check_finite (what pred_eval_finite applies to every result): a result whose 15
     * reported fields are all finite passes, -0 and the largest double included; each field set
     * alone to NaN, +Inf or -Inf fails with SC_ERUNTIME naming that field (the names written
     * here by hand from an_result). A check that left a field out fails here. */
    static const char *const names[15] = {"step_s", "compute_s", "optimizer_s", "exposed_allgather_s",
                                           "exposed_reducescatter_s", "exposed_allreduce_s", "idle_s",
                                           "samples_per_s", "tokens_per_s", "model_tflops_per_gpu",
                                           "hw_tflops_per_gpu", "mfu", "comm_bytes", "mem_total", "mem_short_by"};
    spec_cluster c;
    spec_model m;
    memset(&c, 0, sizeof c);
    memset(&m, 0, sizeof m);
    snprintf(c.name, sizeof c.name, "c");
    snprintf(m.name, sizeof m.name, "m");
    pred_input in = {&c, &m, NULL, 1, NULL, NULL, NULL};
    static pred_result base; /* large: not on the stack */
    memset(&base, 0, sizeof base);
    an_result *r = &base.r;
    double *f[15] = {&r->step_s, &r->compute_s, &r->optimizer_s, &r->exposed_s[COLL_ALLGATHER],
                     &r->exposed_s[COLL_REDUCESCATTER], &r->exposed_s[COLL_ALLREDUCE], &r->idle_s,
                     &r->samples_per_s, &r->tokens_per_s, &r->model_tflops_per_gpu, &r->hw_tflops_per_gpu,
                     &r->mfu, &r->comm_bytes, &r->mem.total, &r->mem.short_by};
    for (int i = 0; i < 15; i++)
        *f[i] = i == 3 ? -0.0 : i == 4 ? DBL_MAX : 1.5 * (i + 1);
    sc_err e;
    ck_assert_int_eq(pred_check_finite(&in, &base, &e), 0);
    static const double bad[3] = {NAN, INFINITY, -INFINITY};
    for (int i = 0; i < 15; i++)
        for (int b = 0; b < 3; b++) {
            static pred_result p;
            p = base;
            double *g = (double *)((char *)&p.r + ((char *)f[i] - (char *)r));
            *g = bad[b];
            ck_assert_int_eq(pred_check_finite(&in, &p, &e), SC_ERUNTIME);
            char want[40];
            snprintf(want, sizeof want, "(%s)", names[i]);
            ck_assert_msg(strstr(e.text, want), "field %d: %s", i, e.text);
        }
}
END_TEST

START_TEST(test_spec_keys)
{
    /* the cluster keys: GB/s and GB (1e9), all three or none */
    const char *ok = "{\"name\":\"x\",\"source\":\"s\",\"gpu\":{\"name\":\"g\",\"arch\":\"ampere\",\"peak_tflops\":312,"
                     "\"memory_GiB\":80,\"hbm_bandwidth_GBps\":2039},\"node\":{\"gpus\":8,\"fabric\":{\"kind\":\"pcie\"},"
                     "\"pcie_bandwidth_GBps\":25,\"nics\":1,\"nic_bandwidth_Gbps\":100,\"nvme_read_GBps\":16,"
                     "\"nvme_write_GBps\":8,\"nvme_capacity_GB\":8000},\"network\":{\"topology\":\"fat-tree\","
                     "\"oversubscription\":1,\"switch_latency_us\":1,\"nodes_per_leaf\":16},\"price_usd_per_hour\":1}";
    spec_cluster c;
    sc_err err;
    ck_assert_msg(spec_parse_cluster(ok, "c.json", &c, &err) == 0, "%s: %s", err.path, err.text);
    ck_assert_double_eq(c.nvme_read_Bps, 16e9);
    ck_assert_double_eq(c.nvme_write_Bps, 8e9);
    ck_assert_double_eq(c.nvme_bytes, 8e12);
    char bad[2048];
    snprintf(bad, sizeof bad, "%s", ok);
    char *w = strstr(bad, "\"nvme_write_GBps\":8,");
    memmove(w, w + strlen("\"nvme_write_GBps\":8,"), strlen(w + strlen("\"nvme_write_GBps\":8,")) + 1);
    ck_assert_int_eq(spec_parse_cluster(bad, "c.json", &c, &err), SC_EINPUT);
    ck_assert_str_eq(err.path, "$.node.nvme_read_GBps");
}
END_TEST

Suite *infinity_suite(void)
{
    Suite *s = suite_create("infinity");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, test_strings);
    tcase_add_test(t, test_traffic);
    tcase_add_test(t, test_costs);
    tcase_add_test(t, test_paths);
    tcase_add_test(t, test_memory);
    tcase_add_test(t, test_agree_no_contention);
    tcase_add_test(t, test_spec_keys);
    tcase_add_test(t, test_finite_check_fields);
    suite_add_tcase(s, t);
    return s;
}
