/* an_identical.c — every an_result of a wide grid of bare an_predict calls, written byte for byte
 * to one file (and its configuration count and a checksum to stdout), so that two trees' analytical
 * engines can be compared with `cmp`: a performance change of the closed form must leave the file
 * unchanged (the analytical counterpart of bench/sim_identical.sh). Not a test of correctness and
 * not part of `make bench`; bench/an_identical.sh compiles it against each tree's library (the API
 * it uses is main's since d0ad5ef) and runs it in that tree, which reads its own configs.
 *
 *   an_identical OUT.bin
 *
 * Grid: 6 clusters x (built-in default, shipped calibration) x 5 models x 15 layouts (sharded, tp
 * 1/2/8, AxoNN, offload, Megatron pipelines) x every framework x 2 / 16 / 128 nodes x grad-accum 1 / 4
 * / 16 x checkpointing none / full / selective x bf16 / fp32, each configuration the checks accept
 * (the CLI's: layout on cluster, model and training, the framework's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/analytic.h"
#include "model/framework.h"

static const char *const CLUSTERS[] = {"p4d.24xlarge", "p5.48xlarge", "dgx-a100", "p3dn.24xlarge", "perlmutter-gpu",
                                       "dgx-h100"};
static const char *const MODELS[] = {"gpt3-13b", "gpt3-175b", "llama3-8b", "bert-10b", "gpt-axonn-10b"};
static const char *const LAYOUTS[] = {"ddp",          "zero1",     "zero2",        "zero3",
                                      "mics:p=8",     "mics:p=16,hier=0", "hsdp:p=8", "zeropp:hpz=8",
                                      "shard_grad_op", "tp:t=2",   "tp:t=8",       "axonn:x=2,y=2,z=2",
                                      "zero3-offload", "megatron:t=8,p=2", "raf:p=8"};
static const int NODES[] = {2, 16, 128}, ACC[] = {1, 4, 16}, CKPT[] = {CKPT_NONE, CKPT_FULL, CKPT_SELECTIVE};
static const spec_precision PREC[] = {PREC_BF16, PREC_FP32};

/* The training's checks as the CLI runs them; 0 when the configuration is accepted. */
static int accepted(const spec_cluster *c, const spec_model *m, const spec_training *t, const spec_layout *l,
                    int nodes)
{
    sc_err e;
    return !spec_training_check(c, t, "grid", &e) && !spec_layout_check(l, c, nodes, &e) &&
           !spec_layout_check_model(l, m, &e) && !spec_layout_check_training(l, t, &e) && !fw_check(t->framework, l, &e);
}

/* One cluster and calibration over the rest of the grid; returns the configurations written. */
static long run_cluster(FILE *f, const spec_cluster *c, const cost_calib *cal, double *sum)
{
    long n = 0;
    for (size_t mi = 0; mi < sizeof MODELS / sizeof *MODELS; mi++) {
        char path[256];
        spec_model m;
        sc_err e;
        snprintf(path, sizeof path, "configs/models/%s.json", MODELS[mi]);
        if (spec_load_model(path, &m, &e))
            continue;
        for (size_t li = 0; li < sizeof LAYOUTS / sizeof *LAYOUTS; li++) {
            spec_layout l;
            if (spec_layout_parse(LAYOUTS[li], &l, &e))
                continue;
            for (int fw = 0; fw < N_FRAMEWORKS; fw++)
                for (int ck = 0; ck < 3; ck++)
                    for (int pr = 0; pr < 2; pr++) {
                        spec_training t;
                        spec_training_defaults(&t);
                        t.framework = (spec_framework)fw;
                        t.act_ckpt = CKPT[ck];
                        t.precision = PREC[pr];
                        wl w;
                        wl_build(&m, &t, &w);
                        for (int ni = 0; ni < 3; ni++)
                            for (int a = 0; a < 3; a++) {
                                t.grad_accum = ACC[a];
                                if (!accepted(c, &m, &t, &l, NODES[ni]))
                                    continue;
                                an_result r;
                                memset(&r, 0, sizeof r);
                                an_predict(&w, &t, &l, c, NODES[ni], cal, &r);
                                if (fwrite(&r, sizeof r, 1, f) != 1)
                                    return -1;
                                if (r.step_s == r.step_s)
                                    *sum += r.step_s;
                                n++;
                            }
                    }
        }
    }
    return n;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: an_identical OUT.bin\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "wb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    long n = 0;
    double sum = 0;
    for (size_t ci = 0; ci < sizeof CLUSTERS / sizeof *CLUSTERS; ci++)
        for (int k = 0; k < 2; k++) {
            char path[256];
            spec_cluster c;
            cost_calib cal;
            sc_err e;
            snprintf(path, sizeof path, "configs/clusters/%s.json", CLUSTERS[ci]);
            if (spec_load_cluster(path, &c, &e))
                continue;
            snprintf(path, sizeof path, "configs/calibrations/%s.json", CLUSTERS[ci]);
            if (k == 0)
                cost_calib_defaults(&c, &cal);
            else if (cost_calib_load(path, &cal, &e))
                continue;
            long got = run_cluster(f, &c, &cal, &sum);
            if (got < 0) {
                perror(argv[1]);
                return 1;
            }
            n += got;
        }
    if (fclose(f)) {
        perror(argv[1]);
        return 1;
    }
    printf("%ld configurations [checksum %.17g]\n", n, sum);
    return 0;
}
