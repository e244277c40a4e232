/* test_net.c — topology (paths, link names, capacities) on the shipped p4d and p3dn clusters and
 * max-min fair rates on hand-solvable cases; incremental solving checked against a full solve.
 * Every expected number is derived in the comment above its assertion. */
#include <check.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/err.h"
#include "../model/spec.h"
#include "../model/cost.h"
#include "../sim/coll.h"
#include "../sim/idpool.h"
#include "../sim/net.h"

static const net_params EFF08 = {0.8, 0.8, 0.8};
static const net_params EFF1 = {1.0, 1.0, 1.0};

static spec_cluster load(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "configs/clusters/%s.json", name);
    spec_cluster c;
    sc_err err;
    int rc = spec_load_cluster(path, &c, &err);
    ck_assert_msg(rc == 0, "%s: %s", path, err.text);
    return c;
}

static net_t *build(const spec_cluster *c, int nodes, const net_params *p)
{
    net_t *net = NULL;
    sc_err err;
    int rc = net_build(c, nodes, p, &net, &err);
    ck_assert_msg(rc == 0, "net_build: %s", err.text);
    return net;
}

/* A hand-made cluster: PCIe fabric, g GPUs and 1 NIC per node, all bandwidths 1e9 B/s. */
static spec_cluster toy(int g, int nodes_per_leaf, double oversub)
{
    spec_cluster c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "toy");
    c.gpus_per_node = g;
    c.fabric.kind = FABRIC_PCIE;
    c.pcie_bw_Bps = 1e9;
    c.nics_per_node = 1;
    c.nic_bw_Bps = 1e9;
    c.oversubscription = oversub;
    c.switch_latency_s = 1e-6;
    c.nodes_per_leaf = nodes_per_leaf;
    return c;
}

static void rel_eq(double got, double want, double tol)
{
    ck_assert_msg(fabs(got - want) <= tol * fabs(want), "got %.17g, want %.17g", got, want);
}

static void check_path(const net_t *net, int src, int dst, int ch, int n, const char *const *names)
{
    int l[NET_PATH_MAX];
    ck_assert_int_eq(net_path(net, src, dst, ch, l, NET_PATH_MAX), n);
    for (int i = 0; i < n; i++)
        ck_assert_str_eq(net_link_name(net, l[i]), names[i]);
}

START_TEST(test_paths_p4d)
{
    /* p4d: 8 GPUs on NVSwitch (12 x 25 GB/s), 4 NICs x 100 Gbps = 12.5e9 B/s, 16 nodes per
     * leaf. 40 nodes -> 3 leaves. Links: 40 x (2 x 8 + 2 x 4) + 2 x 3 = 966, then each GPU's
     * PCIe link to host memory, both ways: + 2 x 320 = 1606, then each node's NVMe read and
     * write links (ZeRO-Infinity): + 2 x 40 = 1686. */
    spec_cluster c = load("p4d.24xlarge");
    net_t *net = build(&c, 40, &EFF08);
    ck_assert_int_eq(net_n_gpus(net), 320);
    ck_assert_int_eq(net_n_links(net), 966 + 2 * 320 + 2 * 40);
    /* Intra node: GPU 0 -> GPU 1 over the switch, 2 links of 12 * 25e9 * 0.8 = 240e9 B/s,
     * latency 0 (the collective layer adds calibrated per-step latency). */
    check_path(net, 0, 1, 3, 2, (const char *const[]){"n0.gpu0>nvs", "n0.nvs>gpu1"});
    int l[NET_PATH_MAX];
    net_path(net, 0, 1, 0, l, NET_PATH_MAX);
    rel_eq(net_link_capacity(net, l[0]), 240e9, 1e-15);
    rel_eq(net_link_capacity(net, l[1]), 240e9, 1e-15);
    ck_assert_double_eq(net_link_latency(net, l[0]), 0.0);
    /* Node 3 GPU 2 (g = 26) -> node 3 GPU 5 (g = 29). */
    check_path(net, 26, 29, 0, 2, (const char *const[]){"n3.gpu2>nvs", "n3.nvs>gpu5"});
    /* Same leaf: node 0 GPU 0 -> node 1 GPU 0 (g = 8), channel 5 -> NIC 5 % 4 = 1; NIC links
     * 12.5e9 * 0.8 = 10e9 B/s; the up link enters the leaf switch: 1 us. */
    check_path(net, 0, 8, 5, 2, (const char *const[]){"n0.nic1>leaf", "n1.leaf>nic1"});
    net_path(net, 0, 8, 5, l, NET_PATH_MAX);
    rel_eq(net_link_capacity(net, l[0]), 10e9, 1e-15);
    rel_eq(net_link_latency(net, l[0]), 1e-6, 1e-15);
    ck_assert_double_eq(net_link_latency(net, l[1]), 0.0);
    /* Different leaves: node 0 (leaf 0) -> node 16 (leaf 1, g = 128), channel 2: 4 links;
     * leaf links 16 nodes x 4 NICs x 12.5e9 x 0.8 / oversubscription 1 = 640e9 B/s. Switches
     * traversed: leaf, spine, leaf = 3 us in total. */
    check_path(net, 3, 128 + 6, 2, 4,
               (const char *const[]){"n0.nic2>leaf", "leaf0>spine", "spine>leaf1",
                                     "n16.leaf>nic2"});
    net_path(net, 3, 134, 2, l, NET_PATH_MAX);
    rel_eq(net_link_capacity(net, l[1]), 640e9, 1e-15);
    rel_eq(net_link_capacity(net, l[2]), 640e9, 1e-15);
    double lat = 0;
    for (int i = 0; i < 4; i++)
        lat += net_link_latency(net, l[i]);
    rel_eq(lat, 3e-6, 1e-12);
    /* Last, partial leaf (nodes 32..39): node 39 GPU 7 (g = 319) -> node 0 GPU 0, channel 7. */
    check_path(net, 319, 0, 7, 4,
               (const char *const[]){"n39.nic3>leaf", "leaf2>spine", "spine>leaf0",
                                     "n0.leaf>nic3"});
    /* Edge cases: same GPU = 0 links; bad GPU, negative channel, too small a buffer. */
    ck_assert_int_eq(net_path(net, 5, 5, 0, l, NET_PATH_MAX), 0);
    ck_assert_int_eq(net_path(net, 0, 320, 0, l, NET_PATH_MAX), SC_EINPUT);
    ck_assert_int_eq(net_path(net, -1, 3, 0, l, NET_PATH_MAX), SC_EINPUT);
    ck_assert_int_eq(net_path(net, 0, 8, -1, l, NET_PATH_MAX), SC_EINPUT);
    ck_assert_int_eq(net_path(net, 0, 128, 0, l, 3), SC_EINPUT);
    net_free(net);
    /* One node: a single leaf, so no leaf/spine links: 16 + 8 = 24, + 2 x 8 GPU-host links = 40,
     * + the node's NVMe read and write links = 42. */
    net = build(&c, 1, &EFF08);
    ck_assert_int_eq(net_n_links(net), 24 + 16 + 2);
    net_free(net);
}
END_TEST

START_TEST(test_paths_p3dn_mesh)
{
    /* p3dn hybrid cube mesh (configs/clusters/p3dn.24xlarge.json): 16 GPU pairs -> 32 directed
     * links, + 2 NIC links = 34 for one node, + 2 x 8 GPU-host PCIe links = 50. */
    spec_cluster c = load("p3dn.24xlarge");
    net_t *net = build(&c, 2, &EFF08);
    ck_assert_int_eq(net_n_links(net), 2 * (34 + 16));
    /* 0 -> 3 has 2 NVLinks: one link of 2 * 25e9 * 0.8 = 40e9 B/s. */
    check_path(net, 0, 3, 0, 1, (const char *const[]){"n0.gpu0>gpu3"});
    int l[NET_PATH_MAX];
    net_path(net, 0, 3, 0, l, NET_PATH_MAX);
    rel_eq(net_link_capacity(net, l[0]), 40e9, 1e-15);
    /* 0 -> 1 has 1 NVLink: 20e9 B/s. */
    net_path(net, 0, 1, 0, l, NET_PATH_MAX);
    rel_eq(net_link_capacity(net, l[0]), 20e9, 1e-15);
    /* 3 -> 4 has no link. Neighbours of 3: 0 (2 links), 1 (1), 2 (2), 7 (1); of 4: 0 (2),
     * 5 (1), 6 (1), 7 (2). Via 0: min(2, 2) = 2; via 7: min(1, 2) = 1 -> via GPU 0, 2 hops of
     * 40e9 B/s each. */
    check_path(net, 3, 4, 0, 2, (const char *const[]){"n0.gpu3>gpu0", "n0.gpu0>gpu4"});
    net_path(net, 3, 4, 0, l, NET_PATH_MAX);
    rel_eq(net_link_capacity(net, l[0]), 40e9, 1e-15);
    rel_eq(net_link_capacity(net, l[1]), 40e9, 1e-15);
    /* 1 -> 4: via 0 min(1, 2) = 1, via 5 min(2, 1) = 1: a tie, the lowest k (0) wins. On
     * node 1 (GPUs 8..15) the same route with node prefix n1. */
    check_path(net, 1, 4, 0, 2, (const char *const[]){"n0.gpu1>gpu0", "n0.gpu0>gpu4"});
    check_path(net, 9, 12, 0, 2, (const char *const[]){"n1.gpu1>gpu0", "n1.gpu0>gpu4"});
    /* One NIC: every channel uses nic0. Both nodes under one leaf (32 per leaf): 2 links. */
    check_path(net, 3, 12, 3, 2, (const char *const[]){"n0.nic0>leaf", "n1.leaf>nic0"});
    net_free(net);

    /* A chain mesh 0-1-2-3 needs three hops from 0 to 3: rejected, naming the fabric. */
    spec_cluster m = toy(4, 1, 1.0);
    m.fabric.kind = FABRIC_NVLINK_MESH;
    m.fabric.link_bw_Bps = 25e9;
    m.fabric.links[0][1] = m.fabric.links[1][0] = 1;
    m.fabric.links[1][2] = m.fabric.links[2][1] = 1;
    m.fabric.links[2][3] = m.fabric.links[3][2] = 1;
    sc_err err;
    net = NULL;
    ck_assert_int_eq(net_build(&m, 1, &EFF1, &net, &err), SC_EINPUT);
    ck_assert_ptr_null(net);
    ck_assert_str_eq(err.path, "$.node.fabric.links");
    ck_assert_ptr_nonnull(strstr(err.text, "GPU 0 cannot reach GPU 3"));
    /* Efficiency outside (0, 1]. */
    net_params bad = {0.8, 0.8, 1.5};
    ck_assert_int_eq(net_build(&c, 1, &bad, &net, &err), SC_EINPUT);
    ck_assert_int_eq(net_build(&c, 0, &EFF1, &net, &err), SC_EINPUT);
}
END_TEST

START_TEST(test_paths_pcie)
{
    /* h100-workstation: 1 GPU on PCIe 63 GB/s x eff 0.8 = 50.4e9 B/s; 2 PCIe + 2 NIC links. */
    spec_cluster c = load("h100-workstation");
    net_t *net = build(&c, 1, &EFF08);
    ck_assert_int_eq(net_n_links(net), 4);
    ck_assert_str_eq(net_link_name(net, 0), "n0.gpu0>host");
    ck_assert_str_eq(net_link_name(net, 1), "n0.host>gpu0");
    rel_eq(net_link_capacity(net, 0), 50.4e9, 1e-15);
    net_free(net);
    /* Toy PCIe box with 2 GPUs: GPU 0 -> 1 goes up to the host bridge and down. */
    spec_cluster t = toy(2, 1, 1.0);
    net = build(&t, 1, &EFF1);
    check_path(net, 0, 1, 0, 2, (const char *const[]){"n0.gpu0>host", "n0.host>gpu1"});
    net_free(net);
}
END_TEST

START_TEST(test_two_flows_share)
{
    /* p4d node: GPU 0 -> 1 and GPU 0 -> 2 both use n0.gpu0>nvs (240e9 B/s); their downlinks
     * are separate. Max-min: 240e9 / 2 = 120e9 each. Removing one gives the other 240e9. */
    spec_cluster c = load("p4d.24xlarge");
    net_t *net = build(&c, 1, &EFF08);
    int a, b;
    ck_assert_int_eq(net_flow_add(net, 0.0, 0, 1, 0, 1e9, 11, &a), 0);
    rel_eq(net_flow_rate(net, a), 240e9, 1e-15);
    ck_assert_int_eq(net_flow_add(net, 0.0, 0, 2, 0, 1e9, 12, &b), 0);
    rel_eq(net_flow_rate(net, a), 120e9, 1e-15);
    rel_eq(net_flow_rate(net, b), 120e9, 1e-15);
    ck_assert_uint_eq(net_flow_tag(net, b), 12);
    const int *ids;
    int n;
    net_changed(net, &ids, &n);
    ck_assert_int_eq(n, 2); /* a slowed down, b started */
    ck_assert_int_eq(net_n_flows(net), 2);
    ck_assert_int_eq(net_flow_remove(net, 0.0, b), 0);
    rel_eq(net_flow_rate(net, a), 240e9, 1e-15);
    net_changed(net, &ids, &n);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(ids[0], a);
    /* A flow on an unrelated path (GPU 3 -> 4) changes nothing else: changed = {itself}. */
    int d;
    ck_assert_int_eq(net_flow_add(net, 0.0, 3, 4, 0, 1e9, 13, &d), 0);
    net_changed(net, &ids, &n);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(ids[0], d);
    net_free(net);
}
END_TEST

START_TEST(test_three_flow_maxmin)
{
    /* Toy cluster: 2 GPUs and 1 NIC (1e9 B/s) per node, 2 nodes per leaf, oversubscription 4:
     * leaf links 2 x 1 x 1e9 / 4 = 0.5e9 B/s. Classic max-min example (Bertsekas & Gallager
     * §6.5.2): f1 = node 0 -> node 2 and f2 = node 1 -> node 3 cross leaf0>spine (0.5e9);
     * f1 and f3 = node 0 -> node 1 share n0.nic0>leaf (1e9). leaf0>spine saturates first at
     * 0.5e9 / 2 = 0.25e9 for f1 and f2; f3 gets the rest of the NIC: 1e9 - 0.25e9 = 0.75e9. */
    spec_cluster c = toy(2, 2, 4.0);
    net_t *net = build(&c, 4, &EFF1);
    int f1, f2, f3;
    ck_assert_int_eq(net_flow_add(net, 0.0, 0, 4, 0, 1e9, 1, &f1), 0);
    ck_assert_int_eq(net_flow_add(net, 0.0, 2, 6, 0, 1e9, 2, &f2), 0);
    ck_assert_int_eq(net_flow_add(net, 0.0, 1, 2, 0, 1e9, 3, &f3), 0);
    ck_assert_double_eq(net_flow_rate(net, f1), 0.25e9);
    ck_assert_double_eq(net_flow_rate(net, f2), 0.25e9);
    ck_assert_double_eq(net_flow_rate(net, f3), 0.75e9);
    /* Without f2, f1 gets the whole leaf link (0.5e9) and f3 the other 0.5e9 of the NIC. */
    ck_assert_int_eq(net_flow_remove(net, 0.0, f2), 0);
    ck_assert_double_eq(net_flow_rate(net, f1), 0.5e9);
    ck_assert_double_eq(net_flow_rate(net, f3), 0.5e9);
    net_free(net);
}
END_TEST

START_TEST(test_oversubscription_cap)
{
    /* Toy: 1 node per leaf, 1 NIC of 1e9 B/s, oversubscription 4: leaf0>spine = 1e9 / 4 =
     * 0.25e9 B/s, so a lone flow node 0 -> node 1 is capped there, not at the NIC. */
    spec_cluster t = toy(1, 1, 4.0);
    net_t *net = build(&t, 2, &EFF1);
    int f;
    ck_assert_int_eq(net_flow_add(net, 0.0, 0, 1, 0, 1e9, 0, &f), 0);
    ck_assert_double_eq(net_flow_rate(net, f), 0.25e9);
    net_free(net);

    /* p4d, 40 nodes, oversubscription 4: leaf links 16 x 4 x 12.5e9 x 0.8 / 4 = 160e9 B/s. All
     * 64 NICs of leaf 0 (nodes 0..15, channel = NIC) send to node 16 + i of leaf 1: each NIC
     * alone would give 10e9, but 64 flows share leaf0>spine: 160e9 / 64 = 2.5e9 each. With
     * oversubscription 1 (640e9 / 64 = 10e9) the NIC and the leaf saturate together: 10e9. */
    spec_cluster c = load("p4d.24xlarge");
    for (int pass = 0; pass < 2; pass++) {
        c.oversubscription = pass == 0 ? 4.0 : 1.0;
        double want = pass == 0 ? 2.5e9 : 10e9;
        net = build(&c, 40, &EFF08);
        int ids[64];
        for (int node = 0; node < 16; node++)
            for (int k = 0; k < 4; k++)
                ck_assert_int_eq(net_flow_add(net, 0.0, node * 8 + k, (16 + node) * 8 + k, k,
                                              1e9, 0, &ids[node * 4 + k]),
                                 0);
        for (int i = 0; i < 64; i++)
            rel_eq(net_flow_rate(net, ids[i]), want, 1e-12);
        net_free(net);
    }
}
END_TEST

START_TEST(test_finish_times)
{
    /* Toy PCIe box, 2 GPUs, 1e9 B/s links. A = 1e9 B alone: 1e9 B/s, finishes at 1.0 s.
     * B (1e9 B) starts at 0.5 s on the same path: both 0.5e9 B/s. A has 1e9 - 0.5 x 1e9 = 0.5e9
     * left -> finishes at 0.5 + 0.5e9 / 0.5e9 = 1.5 s exactly; B at 0.5 + 1e9 / 0.5e9 = 2.5 s.
     * A removed at 1.5: B has 1e9 - 1.0 x 0.5e9 = 0.5e9 left at 1e9 B/s -> 2.0 s. The up link
     * carried 0.5e9 + 1.0 x 1e9 + 0.5 x 1e9 = 2e9 B by 2.0 s. */
    spec_cluster t = toy(2, 1, 1.0);
    net_t *net = build(&t, 1, &EFF1);
    int a, b;
    ck_assert_int_eq(net_flow_add(net, 0.0, 0, 1, 0, 1e9, 1, &a), 0);
    ck_assert_double_eq(net_flow_rate(net, a), 1e9);
    ck_assert_double_eq(net_flow_finish_time(net, a), 1.0);
    uint32_t va = net_flow_version(net, a);
    ck_assert_int_eq(net_flow_add(net, 0.5, 0, 1, 0, 1e9, 2, &b), 0);
    ck_assert_double_eq(net_flow_rate(net, a), 0.5e9);
    ck_assert_double_eq(net_flow_finish_time(net, a), 1.5);
    ck_assert_double_eq(net_flow_finish_time(net, b), 2.5);
    ck_assert_uint_eq(net_flow_version(net, a), va + 1);
    const int *ids;
    int n;
    net_changed(net, &ids, &n);
    ck_assert_int_eq(n, 2);
    /* Remaining of A at 1.0 s: 0.5e9 - 0.5 x 0.5e9 = 0.25e9. */
    ck_assert_double_eq(net_flow_remaining(net, a, 1.0), 0.25e9);
    ck_assert_double_eq(net_link_bytes(net, 0, 1.0), 1e9); /* 0.5e9 + 0.5 x 1e9 */
    ck_assert_int_eq(net_flow_remove(net, 1.5, a), 0);
    ck_assert_double_eq(net_flow_rate(net, b), 1e9);
    ck_assert_double_eq(net_flow_finish_time(net, b), 2.0);
    ck_assert_double_eq(net_link_bytes(net, 0, 2.0), 2e9);
    /* Time may not run backwards; a removed id is gone. */
    ck_assert_int_eq(net_flow_add(net, 1.0, 0, 1, 0, 1e9, 3, &a), SC_EINPUT);
    ck_assert_int_eq(net_flow_remove(net, 1.5, a), SC_EINPUT);
    ck_assert(!net_flow_live(net, a));
    net_free(net);
}
END_TEST

START_TEST(test_degenerate_flows)
{
    /* src == dst and 0-byte flows have no links: rate INFINITY, finish at `now`, reported as
     * changed, and they leave other flows alone. A reused slot gets a higher version. */
    spec_cluster c = load("p4d.24xlarge");
    net_t *net = build(&c, 2, &EFF08);
    int a, self, empty;
    ck_assert_int_eq(net_flow_add(net, 0.0, 0, 9, 0, 1e9, 1, &a), 0);
    double ra = net_flow_rate(net, a);
    uint32_t va = net_flow_version(net, a);
    ck_assert_int_eq(net_flow_add(net, 0.25, 9, 9, 0, 1e6, 2, &self), 0);
    ck_assert(isinf(net_flow_rate(net, self)));
    ck_assert_double_eq(net_flow_finish_time(net, self), 0.25);
    ck_assert_double_eq(net_flow_remaining(net, self, 0.25), 0.0);
    const int *ids;
    int n;
    net_changed(net, &ids, &n);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(ids[0], self);
    ck_assert_int_eq(net_flow_add(net, 0.25, 0, 9, 0, 0.0, 3, &empty), 0);
    ck_assert(isinf(net_flow_rate(net, empty)));
    ck_assert_double_eq(net_flow_rate(net, a), ra);
    ck_assert_uint_eq(net_flow_version(net, a), va);
    uint32_t vs = net_flow_version(net, self);
    ck_assert_int_eq(net_flow_remove(net, 0.25, self), 0);
    net_changed(net, &ids, &n);
    ck_assert_int_eq(n, 0);
    int again;
    ck_assert_int_eq(net_flow_add(net, 0.3, 0, 9, 1, 1e9, 4, &again), 0); /* NIC 1: a different path */
    ck_assert_int_eq(again, self);                                        /* slot reused (free list) */
    ck_assert_uint_gt(net_flow_version(net, again), vs);
    ck_assert_int_eq(net_n_flows(net), 3);
    net_free(net);
}
END_TEST

/* ---- incremental vs full ------------------------------------------------------------- */
typedef struct tflow {
    int id, src, dst, ch;
} tflow;

/* Max-min fairness by definition (Bertsekas & Gallager §6.5.2): no link is over capacity and
 * every flow crosses a saturated link on which no flow is faster. */
static void check_maxmin(const net_t *net, const tflow *f, int nf)
{
    int nl = net_n_links(net);
    double *load = calloc((size_t)nl, sizeof *load), *fmax = calloc((size_t)nl, sizeof *fmax);
    int path[NET_PATH_MAX];
    for (int i = 0; i < nf; i++) {
        double r = net_flow_rate(net, f[i].id);
        int n = net_path(net, f[i].src, f[i].dst, f[i].ch, path, NET_PATH_MAX);
        for (int k = 0; k < n; k++) {
            load[path[k]] += r;
            if (r > fmax[path[k]])
                fmax[path[k]] = r;
        }
    }
    for (int l = 0; l < nl; l++)
        ck_assert(load[l] <= net_link_capacity(net, l) * (1 + 1e-12));
    for (int i = 0; i < nf; i++) {
        double r = net_flow_rate(net, f[i].id);
        int n = net_path(net, f[i].src, f[i].dst, f[i].ch, path, NET_PATH_MAX), ok = n == 0;
        for (int k = 0; k < n && !ok; k++)
            ok = load[path[k]] >= net_link_capacity(net, path[k]) * (1 - 1e-12) &&
                 r >= fmax[path[k]] * (1 - 1e-12);
        ck_assert_msg(ok, "flow %d (%d -> %d) has no bottleneck", f[i].id, f[i].src, f[i].dst);
    }
    free(load);
    free(fmax);
}

static void random_ops(spec_cluster *c, unsigned long seed)
{
    /* 500 random adds (60 %) and removes on 16 p4d nodes; after each, every live rate must
     * equal a from-scratch solve to 1e-12 relative and be max-min fair by definition. */
    net_t *net = build(c, 16, &EFF08);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, seed);
    tflow live[512];
    double rate[512];
    int nf = 0, n_gpus = net_n_gpus(net);
    double now = 0;
    for (int op = 0; op < 500; op++) {
        now += gsl_rng_uniform(r) * 1e-3;
        if (nf == 0 || (gsl_rng_uniform(r) < 0.6 && nf < 512)) {
            tflow t = {-1, (int)gsl_rng_uniform_int(r, (unsigned long)n_gpus),
                       (int)gsl_rng_uniform_int(r, (unsigned long)n_gpus),
                       (int)gsl_rng_uniform_int(r, 8)};
            double bytes = 1e6 + gsl_rng_uniform(r) * 1e9;
            ck_assert_int_eq(
                net_flow_add(net, now, t.src, t.dst, t.ch, bytes, (uint64_t)op, &t.id), 0);
            live[nf++] = t;
        } else {
            int k = (int)gsl_rng_uniform_int(r, (unsigned long)nf);
            ck_assert_int_eq(net_flow_remove(net, now, live[k].id), 0);
            live[k] = live[--nf];
        }
        for (int i = 0; i < nf; i++)
            rate[i] = net_flow_rate(net, live[i].id);
        net_solve_full(net);
        for (int i = 0; i < nf; i++) {
            if (isinf(rate[i]))
                ck_assert(isinf(net_flow_rate(net, live[i].id)));
            else
                rel_eq(net_flow_rate(net, live[i].id), rate[i], 1e-12);
        }
        check_maxmin(net, live, nf);
    }
    ck_assert_int_eq(net_n_flows(net), nf);
    gsl_rng_free(r);
    net_free(net);
}

START_TEST(test_incremental_equals_full)
{
    spec_cluster c = load("p4d.24xlarge");
    random_ops(&c, 1); /* shipped: 16 nodes under one leaf */
    /* Leaves of 4 nodes with oversubscription 3: the spine links come into play. */
    c.nodes_per_leaf = 4;
    c.oversubscription = 3.0;
    random_ops(&c, 2);
}
END_TEST

/* Issue 32: a component of one flow is solved without the heap (flow.c waterfill_alone). A flow
 * alone on its path gets its narrowest link's capacity, the key water-filling pops first
 * (cap / 1 = cap exactly), so bit for bit: compared with the minimum over its path computed here
 * and with the general filling (net_solve_full: both flows at once, nf = 2), with ==. Cases: an
 * inter-node flow (GPU, NIC, leaf links of unequal capacity) and an NVSwitch flow beside it. */
START_TEST(test_alone_equals_filling)
{
    spec_cluster c = load("p4d.24xlarge");
    net_t *net = build(&c, 2, &EFF08);
    const int src[2] = {0, 1}, dst[2] = {8, 2};
    int id[2];
    double alone[2];
    for (int f = 0; f < 2; f++) {
        ck_assert_int_eq(net_flow_add(net, 0.0, src[f], dst[f], 0, 1e9, (uint64_t)f, &id[f]), 0);
        alone[f] = net_flow_rate(net, id[f]);
        int path[NET_PATH_MAX], n = net_path(net, src[f], dst[f], 0, path, NET_PATH_MAX);
        ck_assert_int_gt(n, 1);
        double least = INFINITY;
        for (int k = 0; k < n; k++)
            least = net_link_capacity(net, path[k]) < least ? net_link_capacity(net, path[k]) : least;
        ck_assert_msg(alone[f] == least, "flow %d: %.17g, narrowest link %.17g", f, alone[f], least);
    }
    ck_assert_msg(alone[0] != alone[1], "the two flows' bottlenecks differ (%.17g)", alone[0]);
    net_solve_full(net);
    for (int f = 0; f < 2; f++)
        ck_assert_msg(net_flow_rate(net, id[f]) == alone[f], "flow %d: full %.17g, alone %.17g", f,
                      net_flow_rate(net, id[f]), alone[f]);
    net_free(net);
}
END_TEST

/* Issue 22 item 2: batches keep their seed links in a sparse set (struck out as their component
 * is solved) and components by index instead of marks. Property: after every batch of 1-12
 * random adds and removes at one instant (flows of the batch among them), every live rate equals
 * a from-scratch solve to 1e-12 relative and is max-min fair; an instant with no change is a
 * no-op batch. 300 batches on 16 p4d nodes, leaves of 4 (the spine shared). */
START_TEST(test_batches_equal_full)
{
    spec_cluster c = load("p4d.24xlarge");
    c.nodes_per_leaf = 4;
    c.oversubscription = 3.0;
    net_t *net = build(&c, 16, &EFF08);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 3);
    tflow live[512];
    double rate[512];
    int nf = 0, n_gpus = net_n_gpus(net);
    double now = 0;
    for (int b = 0; b < 300; b++) {
        now += gsl_rng_uniform(r) * 1e-3;
        net_batch_begin(net);
        int ops = (int)gsl_rng_uniform_int(r, 13);
        for (int op = 0; op < ops; op++) {
            if (nf == 0 || (gsl_rng_uniform(r) < 0.6 && nf < 512)) {
                tflow t = {-1, (int)gsl_rng_uniform_int(r, (unsigned long)n_gpus),
                           (int)gsl_rng_uniform_int(r, (unsigned long)n_gpus),
                           (int)gsl_rng_uniform_int(r, 8)};
                ck_assert_int_eq(net_flow_add(net, now, t.src, t.dst, t.ch, 1e6 + gsl_rng_uniform(r) * 1e9,
                                              (uint64_t)op, &t.id),
                                 0);
                live[nf++] = t;
            } else {
                int k = (int)gsl_rng_uniform_int(r, (unsigned long)nf);
                ck_assert_int_eq(net_flow_remove(net, now, live[k].id), 0);
                live[k] = live[--nf];
            }
        }
        ck_assert_int_eq(net_batch_end(net, now), 0);
        for (int i = 0; i < nf; i++)
            rate[i] = net_flow_rate(net, live[i].id);
        net_solve_full(net);
        for (int i = 0; i < nf; i++) {
            ck_assert_msg(!isnan(rate[i]), "flow %d left unsolved by its batch", live[i].id);
            if (isinf(rate[i]))
                ck_assert(isinf(net_flow_rate(net, live[i].id)));
            else
                rel_eq(net_flow_rate(net, live[i].id), rate[i], 1e-12);
        }
        check_maxmin(net, live, nf);
    }
    ck_assert_int_eq(net_n_flows(net), nf);
    gsl_rng_free(r);
    net_free(net);
}
END_TEST

/* Issue 32 item 1: a link that loses its last flow in a batch is settled at once (its bytes
 * accounted, load 0) and keeps its place among the batch's seeds, so a flow added to it later in
 * the batch is solved where the link was first deferred. p4d, 3 nodes under one leaf, EFF08:
 * A = GPU 0 -> GPU 8 on NIC 0 (links n0.nic0>leaf, n1.leaf>nic0), alone from t = 0 at the NIC's
 * X = 100 Gbps x 0.8 = 1e10 B/s. At t = 1 one batch removes A (both its links emptied), adds
 * B = GPU 0 -> GPU 1 (NVSwitch, unrelated), then C = GPU 16 -> GPU 8 on NIC 0 (n2.nic0>leaf and
 * A's n1.leaf>nic0). Seeds in first-deferred order: A's two links, B's, C's first: so C's
 * component is solved before B's and the changed flows are C, B (appended on refill, it would
 * be B, C). Bytes: n0.nic0>leaf carried X x 1 s and nothing after; n1.leaf>nic0 X x 1 s, then C
 * at X for 1 s: 2X at t = 2, exactly. */
START_TEST(test_batch_emptied_link_keeps_place)
{
    spec_cluster c = load("p4d.24xlarge");
    net_t *net = build(&c, 3, &EFF08);
    int a, b, cc, la[NET_PATH_MAX];
    ck_assert_int_eq(net_path(net, 0, 8, 0, la, NET_PATH_MAX), 2);
    ck_assert_int_eq(net_flow_add(net, 0.0, 0, 8, 0, 1e12, 1, &a), 0);
    double x = net_flow_rate(net, a);
    ck_assert_msg(x == 1e10, "A alone at the NIC's 1e10 B/s, got %.17g", x);
    net_batch_begin(net);
    ck_assert_int_eq(net_flow_remove(net, 1.0, a), 0);
    ck_assert_msg(net_link_bytes(net, la[0], 1.0) == x, "%.17g", net_link_bytes(net, la[0], 1.0));
    ck_assert_int_eq(net_flow_add(net, 1.0, 0, 1, 0, 1e12, 2, &b), 0);
    ck_assert_int_eq(net_flow_add(net, 1.0, 16, 8, 0, 1e12, 3, &cc), 0);
    ck_assert_int_eq(net_batch_end(net, 1.0), 0);
    const int *ids;
    int n;
    net_changed(net, &ids, &n);
    ck_assert_int_eq(n, 2);
    ck_assert_msg(ids[0] == cc && ids[1] == b, "changed %d, %d: expected C %d then B %d", ids[0], ids[1], cc, b);
    ck_assert_msg(net_flow_rate(net, cc) == x, "C %.17g", net_flow_rate(net, cc));
    ck_assert_msg(net_link_bytes(net, la[0], 2.0) == x, "emptied link %.17g", net_link_bytes(net, la[0], 2.0));
    ck_assert_msg(net_link_bytes(net, la[1], 2.0) == 2 * x, "refilled link %.17g", net_link_bytes(net, la[1], 2.0));
    net_free(net);
}
END_TEST

/* ---- issue 15 item 4: the network the rings run on ------------------------------------- */

/* A tiny NVSwitch cluster: 2 GPUs per node (links 1e10 B/s), 2 NICs of 1e9 B/s, pods of
 * nodes_per_leaf nodes, the given topology. */
static spec_cluster tiny2(spec_net_topology t, int npl, double oversub)
{
    spec_cluster c = toy(2, npl, oversub);
    c.fabric.kind = FABRIC_NVSWITCH;
    c.fabric.links_per_gpu = 1;
    c.fabric.link_bw_Bps = 1e10;
    c.nics_per_node = 2;
    c.topology = t;
    return c;
}

START_TEST(test_paths_rail)
{
    /* Rail, 2 GPUs x 2 NICs per node, pods of 2 nodes, 4 nodes (2 pods): rail leaves
     * (pod, NIC) = 2 x 2 = 4, each with a spine link up and down. Links: 4 nodes x (2 x 2
     * NVSwitch + 2 x 2 NIC) = 32, + 2 x 4 rail leaf = 40, + 2 x 8 GPUs to host memory = 56.
     * A rail leaf holds NIC K of each node of its pod: 2 x 1e9 down, / oversubscription 2 =
     * 1e9 up. */
    spec_cluster c = tiny2(NET_RAIL, 2, 2);
    net_t *net = build(&c, 4, &EFF1);
    ck_assert_int_eq(net_n_links(net), 56);
    /* same rail, same pod: NIC 0 up into rail leaf 0 of pod 0, down to node 1's NIC 0 */
    const char *const same[] = {"n0.nic0>leaf", "n1.leaf>nic0"};
    check_path(net, 0, 2, 0, 2, same);
    /* same rail, other pod: up rail 1's leaf of pod 0, over the spine, down pod 1's */
    const char *const pods[] = {"n0.nic1>leaf", "rail1.0>spine", "spine>rail1.1", "n2.leaf>nic1"};
    check_path(net, 0, 4, 1, 4, pods);
    /* cross-rail, same pod (NIC 0 -> NIC 1): rail leaves 0 and 1 meet only at the spine */
    const char *const xr[] = {"n0.nic0>leaf", "rail0.0>spine", "spine>rail1.0", "n1.leaf>nic1"};
    check_path(net, 0, 3, NET_CH_XNIC(0, 1), 4, xr);
    int l[NET_PATH_MAX];
    ck_assert_int_eq(net_path(net, 0, 3, NET_CH_XNIC(0, 1), l, NET_PATH_MAX), 4);
    rel_eq(net_link_capacity(net, l[1]), 1e9, 1e-15);
    rel_eq(net_link_capacity(net, l[0]), 1e9, 1e-15);
    net_free(net);

    /* The same nodes as a fat-tree (leaves of 2 nodes, all NICs): the cross-NIC pair shares
     * leaf 0, no spine; its uplink is 2 nodes x 2 NICs x 1e9 / 2 = 2e9. */
    c = tiny2(NET_FAT_TREE, 2, 2);
    net = build(&c, 4, &EFF1);
    ck_assert_int_eq(net_n_links(net), 32 + 2 * 2 + 16);
    const char *const ft[] = {"n0.nic0>leaf", "n1.leaf>nic1"};
    check_path(net, 0, 3, NET_CH_XNIC(0, 1), 2, ft);
    const char *const ftp[] = {"n0.nic1>leaf", "leaf0>spine", "spine>leaf1", "n2.leaf>nic1"};
    check_path(net, 0, 4, 1, 4, ftp);
    ck_assert_int_eq(net_path(net, 0, 4, 1, l, NET_PATH_MAX), 4);
    rel_eq(net_link_capacity(net, l[1]), 2e9, 1e-15);
    net_free(net);
}
END_TEST

START_TEST(test_paths_dragonfly)
{
    /* Dragonfly, groups of 2 nodes, 6 nodes = 3 groups, 1:1, a machine of many groups
     * (max_nodes 0): each group's global links carry 2 nodes x 2 NICs x 1e9 x 1/2 (adaptive
     * routing sends a ring's traffic through an intermediate group: two global hops per byte,
     * cost_net_global_frac) = 2e9. With max_nodes = 4 (two groups: all global links join them)
     * 4e9. */
    spec_cluster c = tiny2(NET_DRAGONFLY, 2, 1);
    rel_eq(cost_net_global_frac(&c), 0.5, 0);
    net_t *net = build(&c, 6, &EFF1);
    const char *const p[] = {"n1.nic0>leaf", "group0>global", "global>group1", "n2.leaf>nic0"};
    check_path(net, 2, 4, 0, 4, p);
    int l[NET_PATH_MAX];
    net_path(net, 2, 4, 0, l, NET_PATH_MAX);
    rel_eq(net_link_capacity(net, l[1]), 2e9, 1e-15);
    net_free(net);
    c.max_nodes = 4;
    rel_eq(cost_net_global_frac(&c), 1, 0);
    net = build(&c, 4, &EFF1);
    ck_assert_int_eq(net_path(net, 4, 0, 0, l, NET_PATH_MAX), 4);
    rel_eq(net_link_capacity(net, l[1]), 4e9, 1e-15);
    net_free(net);
}
END_TEST

typedef struct flow_log {
    net_t *net;
    int n;
    int src[8], dst[8], ch[8];
} flow_log;

static void log_flow(void *ctx, int src, int dst, int ch, double bytes)
{
    flow_log *f = ctx;
    int id;
    ck_assert_int_eq(net_flow_add(f->net, 0.0, src, dst, ch, bytes, (uint64_t)f->n, &id), 0);
    f->src[f->n] = src;
    f->dst[f->n] = dst;
    f->ch[f->n] = ch;
    f->n++;
}

/* Run every flow to its end (removing the first to finish, re-sharing, and so on); returns the
 * time the last one ended. */
static double drain(net_t *net)
{
    double now = 0;
    while (net_n_flows(net) > 0) {
        int first = -1;
        double t = INFINITY;
        for (int id = 0; id < 64; id++)
            if (net_flow_live(net, id) && net_flow_finish_time(net, id) < t)
                t = net_flow_finish_time(net, id), first = id;
        ck_assert_int_ge(first, 0);
        now = t;
        ck_assert_int_eq(net_flow_remove(net, now, first), 0);
    }
    return now;
}

/* Bytes each named link has carried once every flow has finished. */
static double bytes_on(net_t *net, const char *name)
{
    double end = drain(net);
    for (int i = 0; i < net_n_links(net); i++)
        if (!strcmp(net_link_name(net, i), name))
            return net_link_bytes(net, i, end);
    ck_abort_msg("no link %s", name);
    return 0;
}

START_TEST(test_p2p_rail_pxn)
{
    /* One send of 1e9 B from GPU 0 (node 0, NIC 0's GPU) to GPU 3 (node 1, local 1: NIC 1),
     * 2 GPUs and 2 NICs per node, one pod of 2 nodes.
     *  - rail, PXN off: GPU 0 sends on its own NIC 0 and GPU 3 receives on its NIC 1:
     *    cross-rail, so NIC0 up, rail0 -> spine -> rail1, NIC1 down each carry 1e9 B;
     *  - rail, PXN (NCCL >= 2.12): GPU 0 hands the data over NVLink to GPU 1 (local to NIC 1,
     *    the receiver's rail), which sends it on NIC 1: NVLink gpu0 > nvs > gpu1 1e9 B, NIC 1
     *    up and down 1e9 B, no byte on the spine or on NIC 0;
     *  - fat-tree, PXN off: NIC 0 up and NIC 1 down, through the one leaf: no spine. */
    spec_cluster c = tiny2(NET_RAIL, 2, 1);
    net_t *net = build(&c, 2, &EFF1);
    flow_log f = {net, 0, {0}, {0}, {0}};
    ck_assert_int_eq(coll_p2p_flows(0, 3, 2, 2, 0, 1e9, log_flow, &f), 1);
    ck_assert_int_eq(f.ch[0], NET_CH_XNIC(0, 1));
    rel_eq(bytes_on(net, "n0.nic0>leaf"), 1e9, 1e-12);
    rel_eq(bytes_on(net, "rail0.0>spine"), 1e9, 1e-12);
    rel_eq(bytes_on(net, "spine>rail1.0"), 1e9, 1e-12);
    rel_eq(bytes_on(net, "n1.leaf>nic1"), 1e9, 1e-12);
    rel_eq(bytes_on(net, "n0.nic1>leaf"), 0, 0);
    net_free(net);

    net = build(&c, 2, &EFF1);
    f = (flow_log){net, 0, {0}, {0}, {0}};
    ck_assert_int_eq(coll_p2p_flows(0, 3, 2, 2, 1, 1e9, log_flow, &f), 2);
    ck_assert_int_eq(f.src[0], 0);
    ck_assert_int_eq(f.dst[0], 1); /* the relay */
    ck_assert_int_eq(f.src[1], 1);
    ck_assert_int_eq(f.ch[1], 1);
    rel_eq(bytes_on(net, "n0.gpu0>nvs"), 1e9, 1e-12);
    rel_eq(bytes_on(net, "n0.nvs>gpu1"), 1e9, 1e-12);
    rel_eq(bytes_on(net, "n0.nic1>leaf"), 1e9, 1e-12);
    rel_eq(bytes_on(net, "n1.leaf>nic1"), 1e9, 1e-12);
    rel_eq(bytes_on(net, "rail0.0>spine"), 0, 0);
    rel_eq(bytes_on(net, "rail1.0>spine"), 0, 0);
    rel_eq(bytes_on(net, "n0.nic0>leaf"), 0, 0);
    net_free(net);

    /* a sender already on the receiver's rail: one flow, no relay */
    net = build(&c, 2, &EFF1);
    f = (flow_log){net, 0, {0}, {0}, {0}};
    ck_assert_int_eq(coll_p2p_flows(1, 3, 2, 2, 1, 1e9, log_flow, &f), 1);
    net_free(net);

    c = tiny2(NET_FAT_TREE, 2, 1);
    net = build(&c, 2, &EFF1);
    f = (flow_log){net, 0, {0}, {0}, {0}};
    coll_p2p_flows(0, 3, 2, 2, 0, 1e9, log_flow, &f);
    rel_eq(bytes_on(net, "n0.nic0>leaf"), 1e9, 1e-12);
    rel_eq(bytes_on(net, "n1.leaf>nic1"), 1e9, 1e-12);
    net_free(net);
}
END_TEST

/* Per-flow rate of a ring over one GPU of each of `nodes` nodes on cluster c (all its
 * channels), the slowest flow. */
static double ring_rate(const spec_cluster *c, int nodes, int stride_nodes, int offsets)
{
    net_t *net = build(c, nodes, &EFF1);
    double slow = INFINITY;
    for (int o = 0; o < offsets; o++) {
        int mem[64], n = 0;
        for (int j = o; j < nodes; j += stride_nodes)
            mem[n++] = j * c->gpus_per_node;
        for (int i = 0; i < n; i++)
            for (int ch = 0; ch < c->nics_per_node; ch++) {
                int id;
                ck_assert_int_eq(net_flow_add(net, 0.0, mem[i], mem[(i + 1) % n], ch, 1e9, 0, &id), 0);
            }
    }
    for (int id = 0; id < 4096; id++)
        if (net_flow_live(net, id) && net_flow_rate(net, id) < slow)
            slow = net_flow_rate(net, id);
    net_free(net);
    return slow * c->nics_per_node;
}

START_TEST(test_oversubscribed_ring)
{
    /* 1 GPU per node: a ring over 8 nodes, leaves of 2 nodes, NICs 2 x 1e9.
     *  - fat-tree, 4:1: each leaf's uplink = 2 x 2 x 1e9 / 4 = 1e9 carries one edge (its
     *    2 channels): 1e9 per edge, against the nodes' 2e9 NICs: the factor
     *    npl / oversubscription / min(stride, npl) = 2 / 4 / 1 = 1/2 (cost_group_spread);
     *  - strided, 2 rings at node stride 2 ({0,2,4,6}, {1,3,5,7}): each leaf sends both
     *    nodes' edges up: 1e9 / 2 = 5e8 per edge, factor 2 / 4 / 2 = 1/4;
     *  - rail, same numbers: a rail leaf's uplink 2 x 1e9 / 4 = 5e8 carries one channel per
     *    edge: 5e8 per channel = 1e9 per edge, factor 1/2: a rail network is never slower than
     *    the same fat-tree for rail-aligned rings (here equal);
     *  - oversubscription 1: 2e9 (NIC bound) in all. */
    spec_cluster c = toy(1, 2, 4);
    c.nics_per_node = 2;
    rel_eq(ring_rate(&c, 8, 1, 1), 1e9, 1e-12);
    rel_eq(ring_rate(&c, 8, 2, 2), 5e8, 1e-12);
    cost_group g;
    cost_group_make(&c, 8, (int[]){0}, 1, 1, &g);
    rel_eq(g.leaf_factor, 0.5, 1e-15);
    cost_group_make(&c, 4, (int[]){0}, 1, 1, &g);
    cost_group_spread(&c, 2, &g);
    rel_eq(g.leaf_factor, 0.25, 1e-15);
    spec_cluster r = c;
    r.topology = NET_RAIL;
    rel_eq(ring_rate(&r, 8, 1, 1), 1e9, 1e-12);
    rel_eq(ring_rate(&r, 8, 2, 2), 5e8, 1e-12);
    c.oversubscription = 1;
    r.oversubscription = 1;
    rel_eq(ring_rate(&c, 8, 1, 1), 2e9, 1e-12);
    rel_eq(ring_rate(&r, 8, 2, 2), 2e9, 1e-12);
}
END_TEST

START_TEST(test_spread_properties)
{
    /* Over topologies, leaf sizes, strides, spans and oversubscriptions: the factor lies in
     * (0, 1]; more oversubscription never gives a larger one; rail equals fat-tree (rings stay
     * on their rail); a dragonfly is never faster than the fat-tree of the same groups. */
    spec_cluster c = toy(8, 1, 1);
    c.nics_per_node = 4;
    for (int npl = 1; npl <= 32; npl *= 2)
        for (int s = 1; s <= 64; s *= 2)
            for (int k = 2; k <= 64; k *= 2) {
                double prev[3] = {2, 2, 2};
                for (double o = 1; o <= 16; o *= 1.5) {
                    for (int t = 0; t < 3; t++) {
                        c.topology = (spec_net_topology)t;
                        c.nodes_per_leaf = npl;
                        c.oversubscription = o;
                        cost_group g;
                        cost_group_make(&c, k, (int[]){0}, 1, 8, &g);
                        cost_group_spread(&c, s, &g);
                        ck_assert(g.leaf_factor > 0 && g.leaf_factor <= 1);
                        ck_assert_msg(g.leaf_factor <= prev[t], "npl %d s %d k %d o %g", npl, s, k, o);
                        prev[t] = g.leaf_factor;
                    }
                    ck_assert_double_eq(prev[NET_RAIL], prev[NET_FAT_TREE]);
                    ck_assert(prev[NET_DRAGONFLY] <= prev[NET_FAT_TREE]);
                }
            }
}
END_TEST

/* Issue 32 item 1 (perfsim36): a link's flow list lives inline in its record up to NET_FL_SLOT (4)
 * entries, then in its own array; a removal swaps the list's last flow into the removed one's
 * place. The order is observable: an unbatched add or remove on a path whose two links carry the
 * same flows re-rates all of them (cap / n each, exactly: every flow freezes at the first link the
 * filling pops, key cap / n), and net_changed lists them in the first link's list order (collect
 * walks it; apply keeps that order). Reference: an array per path, append on add, last into the
 * hole on remove. Four NVSwitch paths on one p4d node (GPU 2p -> 2p+1) capped at 3, 4, 5 and 9
 * flows: one list always inline, one filling the slot exactly, two leaving it (and shrinking
 * back below it in their own arrays); 3,000 random operations. */
START_TEST(test_link_lists_keep_order)
{
    spec_cluster c = load("p4d.24xlarge");
    net_t *net = build(&c, 1, &EFF08);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 36);
    enum { P = 4, MAXF = 9 };
    const int lim[P] = {3, 4, 5, MAXF};
    int ref[P][MAXF], n[P] = {0};
    double cap[P];
    for (int p = 0; p < P; p++) {
        int path[NET_PATH_MAX];
        ck_assert_int_eq(net_path(net, 2 * p, 2 * p + 1, 0, path, NET_PATH_MAX), 2);
        cap[p] = net_link_capacity(net, path[0]);
        ck_assert(cap[p] == net_link_capacity(net, path[1]));
    }
    double now = 0;
    for (int op = 0; op < 3000; op++) {
        int p = (int)gsl_rng_uniform_int(r, P);
        now += 1e-6;
        if (n[p] == 0 || (n[p] < lim[p] && gsl_rng_uniform(r) < 0.55)) {
            int id;
            ck_assert_int_eq(net_flow_add(net, now, 2 * p, 2 * p + 1, 0, 1e12, (uint64_t)op, &id), 0);
            ref[p][n[p]++] = id;
        } else {
            int k = (int)gsl_rng_uniform_int(r, (unsigned long)n[p]);
            ck_assert_int_eq(net_flow_remove(net, now, ref[p][k]), 0);
            ref[p][k] = ref[p][--n[p]];
        }
        const int *ch;
        int nch;
        net_changed(net, &ch, &nch);
        ck_assert_int_eq(nch, n[p]);
        for (int i = 0; i < n[p]; i++) {
            ck_assert_msg(ch[i] == ref[p][i], "op %d path %d: changed[%d] = %d, list has %d", op, p, i, ch[i],
                          ref[p][i]);
            ck_assert(net_flow_rate(net, ch[i]) == cap[p] / n[p]);
        }
    }
    gsl_rng_free(r);
    net_free(net);
}
END_TEST

/* Issue 32 item 1 (perfsim36): flows and events take the lowest free slot (sim/idpool.h).
 * Against a reference (a flag per id, the lowest set one found by a linear scan): 40,000 random
 * takes and puts in four phases of 10,000 (takes 90 %, 20 %, 90 %, 55 %), so the ids pass 64
 * words (the summary's second word) and the free ones thin out far above the lowest; every take
 * and peek equal to the reference's lowest free id (-1 when none), the count of free ids equal. */
START_TEST(test_idpool_lowest_first)
{
    enum { MAXID = 9000 };
    unsigned char isfree[MAXID] = {0};
    int hw = 0, nfree = 0; /* ids [0, hw) handed out or free, as net_flow_add does */
    idp_pool p = {0};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    const double p_take[4] = {0.9, 0.2, 0.9, 0.55};
    for (int op = 0; op < 40000; op++) {
        int want = -1;
        for (int i = 0; i < hw && want < 0; i++)
            if (isfree[i])
                want = i;
        ck_assert_int_eq(idp_peek(&p), want);
        ck_assert_int_eq(p.n, nfree);
        if (gsl_rng_uniform(r) < p_take[op / 10000] && (want >= 0 || hw < MAXID)) {
            int got = idp_take(&p);
            if (want < 0) { /* none free: a new id, with room made for its bit */
                ck_assert_int_eq(got, -1);
                got = hw++;
                ck_assert_int_eq(idp_reserve(&p, (hw + 63) / 64), 0);
            } else {
                ck_assert_int_eq(got, want);
                isfree[got] = 0;
                nfree--;
            }
        } else {
            int used = hw - nfree;
            if (used == 0)
                continue;
            int k = (int)gsl_rng_uniform_int(r, (unsigned long)used), id = -1;
            for (int i = 0; i < hw; i++) /* the k-th id in use */
                if (!isfree[i] && k-- == 0) {
                    id = i;
                    break;
                }
            idp_put(&p, id);
            isfree[id] = 1;
            nfree++;
        }
    }
    ck_assert_int_gt(hw, 64 * 64); /* the summary's second word was used */
    idp_free_all(&p);
    gsl_rng_free(r);
}
END_TEST

Suite *net_suite(void)
{
    Suite *s = suite_create("net");
    TCase *tc = tcase_create("topology");
    tcase_add_test(tc, test_paths_p4d);
    tcase_add_test(tc, test_paths_p3dn_mesh);
    tcase_add_test(tc, test_paths_pcie);
    tcase_add_test(tc, test_paths_rail);
    tcase_add_test(tc, test_paths_dragonfly);
    tcase_add_test(tc, test_p2p_rail_pxn);
    tcase_add_test(tc, test_oversubscribed_ring);
    tcase_add_test(tc, test_spread_properties);
    suite_add_tcase(s, tc);
    tc = tcase_create("flows");
    tcase_add_test(tc, test_two_flows_share);
    tcase_add_test(tc, test_three_flow_maxmin);
    tcase_add_test(tc, test_oversubscription_cap);
    tcase_add_test(tc, test_finish_times);
    tcase_add_test(tc, test_degenerate_flows);
    tcase_add_test(tc, test_incremental_equals_full);
    tcase_add_test(tc, test_batches_equal_full);
    tcase_add_test(tc, test_batch_emptied_link_keeps_place);
    tcase_add_test(tc, test_alone_equals_filling);
    tcase_add_test(tc, test_link_lists_keep_order);
    tcase_add_test(tc, test_idpool_lowest_first);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}
