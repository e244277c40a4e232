/* bench_net.c — flow add/remove throughput of sim/net on 128 p4d.24xlarge nodes (1024 GPUs)
 * under ring-like traffic: bulk start, churn (remove + re-add one flow, as completions do) and
 * bulk end. Not a test; prints ops/s. Usage: bench_net [configs/clusters/p4d.24xlarge.json] */
#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../model/spec.h"
#include "../sim/net.h"

enum { NODES = 128 };

typedef struct pflow {
    int src, dst, ch;
} pflow;

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ring: GPU g -> g + 1 (mod N); a hop to the next node runs on 4 channels (NCCL-style). */
static int pattern_ring(int gpn, int n_gpus, pflow *out)
{
    int n = 0;
    for (int g = 0; g < n_gpus; g++) {
        int d = (g + 1) % n_gpus;
        int chans = g / gpn == d / gpn ? 1 : 4;
        for (int c = 0; c < chans; c++)
            out[n++] = (pflow){g, d, c};
    }
    return n;
}

/* rail: 8 concurrent rings, local GPU l of node i -> local GPU l of node i + 1, channel l
 * (NIC l % 4: two rails per NIC). */
static int pattern_rail(int gpn, int n_gpus, pflow *out)
{
    int n = 0;
    for (int g = 0; g < n_gpus; g++)
        out[n++] = (pflow){g, (g + gpn) % n_gpus, g % gpn};
    return n;
}

typedef struct result {
    double add_ops, churn_ops, remove_ops, mean_changed;
} result;

/* Flows of 1e8 B each; *clock carries simulated time across calls (it may not run backwards). */
static int run(net_t *net, const pflow *p, int n, int reps, gsl_rng *r, double *clock, result *res)
{
    int *id = malloc((size_t)n * sizeof *id);
    if (!id)
        return 1;
    double now = *clock, t_add = 0, t_churn = 0, t_rm = 0;
    long churn_ops = 0, changed = 0;
    int rc = 1;
    for (int rep = 0; rep < reps; rep++) {
        double t0 = seconds();
        for (int i = 0; i < n; i++)
            if (net_flow_add(net, now, p[i].src, p[i].dst, p[i].ch, 1e8, (uint64_t)i, &id[i]))
                goto out;
        double t1 = seconds();
        for (int k = 0; k < 4 * n; k++) {
            int i = (int)gsl_rng_uniform_int(r, (unsigned long)n);
            now += 1e-6;
            const int *ids;
            int nc;
            if (net_flow_remove(net, now, id[i]))
                goto out;
            net_changed(net, &ids, &nc);
            changed += nc;
            if (net_flow_add(net, now, p[i].src, p[i].dst, p[i].ch, 1e8, (uint64_t)i, &id[i]))
                goto out;
            net_changed(net, &ids, &nc);
            changed += nc;
            churn_ops += 2;
        }
        double t2 = seconds();
        for (int i = 0; i < n; i++)
            if (net_flow_remove(net, now, id[i]))
                goto out;
        double t3 = seconds();
        t_add += t1 - t0;
        t_churn += t2 - t1;
        t_rm += t3 - t2;
    }
    res->add_ops = (double)n * reps / t_add;
    res->churn_ops = (double)churn_ops / t_churn;
    res->remove_ops = (double)n * reps / t_rm;
    res->mean_changed = (double)changed / (double)churn_ops;
    rc = 0;
out:
    *clock = now;
    free(id);
    return rc;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "configs/clusters/p4d.24xlarge.json";
    spec_cluster c;
    sc_err err;
    char buf[700];
    if (spec_load_cluster(path, &c, &err)) {
        fprintf(stderr, "%s\n", sc_err_str(&err, buf, sizeof buf));
        return 2;
    }
    net_params eff = {0.8, 0.8, 0.8};
    net_t *net;
    if (net_build(&c, NODES, &eff, &net, &err)) {
        fprintf(stderr, "%s\n", sc_err_str(&err, buf, sizeof buf));
        return 1;
    }
    int n_gpus = net_n_gpus(net), gpn = c.gpus_per_node;
    pflow *p = malloc((size_t)n_gpus * 2 * 4 * sizeof *p);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!p || !r)
        return 1;
    gsl_rng_set(r, 1);
    double now = 0;
    printf("%s, %d nodes, %d GPUs, %d links\n", c.name, NODES, n_gpus, net_n_links(net));
    printf("%-10s %7s %14s %14s %14s %14s\n", "pattern", "flows", "add_ops/s", "churn_ops/s",
           "remove_ops/s", "changed/op");
    for (int k = 0; k < 3; k++) {
        int n = 0;
        const char *name = k == 0 ? "ring" : k == 1 ? "rail" : "ring+rail";
        if (k == 0 || k == 2)
            n += pattern_ring(gpn, n_gpus, p + n);
        if (k == 1 || k == 2)
            n += pattern_rail(gpn, n_gpus, p + n);
        result res;
        if (run(net, p, n, 300, r, &now, &res)) {
            fprintf(stderr, "bench_net: flow operation failed\n");
            return 1;
        }
        printf("%-10s %7d %14.0f %14.0f %14.0f %14.2f\n", name, n, res.add_ops, res.churn_ops,
               res.remove_ops, res.mean_changed);
    }
    gsl_rng_free(r);
    free(p);
    net_free(net);
    return 0;
}
