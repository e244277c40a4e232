/* sweep.c — `shardcast sweep`: predict over nodes x layouts x micro-batch and write one CSV row
 * per point (every output column, units in the header), atomically. Progress on stderr.
 * Not here: plotting (cli/plot.c) or recommendation (cli/plan.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "eval.h"
#include "../base/pace.h"
#include "../predict/engine.h"

static const char HELP[] =
    "usage: shardcast sweep --cluster C --model M --nodes LIST --layout L [--layout ...] -o out.csv\n\n"
    "Predicts every point of nodes x layouts x micro-batches and writes a CSV (written to\n"
    "a temporary file beside it, then renamed: an interrupted sweep leaves no half-written file). Without -o\n"
    "the CSV goes to stdout. Columns carry units (step_s, mem_total_GiB, comm_GB_per_rank...).\n"
    "weak_scaling_eff is per-GPU throughput relative to the smallest node count (under strong\n"
    "scaling: speed-up over node-count ratio). Under OpenMPI, `mpirun -np K shardcast sweep ...`\n"
    "(as root: mpirun --allow-run-as-root -np K ...) splits the grid across the ranks and rank 0\n"
    "writes the same CSV as a serial run. A point that cannot be predicted (a layout that does not\n"
    "fit that node count, a strong-scaling batch that does not split) is written as a row with its\n"
    "reason in the last column, error, and reported on stderr; the exit status is then 1.\n\n" CLI_SHAPE_HELP
    "  --micro-batches LIST   micro-batch sizes to sweep, e.g. 1,2,4 (default: --micro-batch; not both)\n"
    "  --calibration F|NAME   cost-model parameters (default: configs/calibrations/<cluster>.json;\n"
    "                         defaults: the built-in values, no file)\n"
    "  --engine model|sim|both  engine (default model; both: a row for each)\n"
    "  --scaling weak|strong  weak (default): the per-GPU batch stays; strong: the global batch of the\n"
    "                         smallest node count is split over more GPUs (accumulation first)\n"
    "  -o, --out FILE         CSV output\n"
    "  --sim-limit-s S        refuse simulations estimated over S seconds in all, or over the\n"
    "                         memory this process may use, before starting (default 3600; 0: none)\n"
    "  --progress             progress on stderr even when it is not a terminal (a line every 2 s\n"
    "                         of wall time, and the last)\n";

/* ---- optional MPI: split the grid, gather the points on rank 0 ------------------------- */
#ifdef SC_WITH_MPI
#include <mpi.h>
/* Returns 1 when it started MPI (and sweep_mpi_finish must end it). */
static int sweep_mpi_init(int *rank, int *size)
{
    *rank = 0;
    *size = 1;
    if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMI_SIZE") && !getenv("PMIX_RANK"))
        return 0; /* not under mpirun: serial */
    MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    return 1;
}
/* Every rank computed points i = rank, rank + size, ...: gather them on rank 0 in grid order.
 * Returns the exit status agreed by all ranks (the worst). */
static int sweep_mpi_collect(cli_point *pts, long total, int rank, int size, int code)
{
    if (size == 1)
        return code;
    int worst = code;
    MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (worst)
        return code ? code : worst;
    const int sz = (int)sizeof(cli_point);
    for (long i = 0; i < total; i++) {
        int owner = (int)(i % size);
        if (owner == 0)
            continue;
        if (rank == owner)
            MPI_Send(&pts[i], sz, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        else if (rank == 0)
            MPI_Recv(&pts[i], sz, MPI_BYTE, owner, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    return 0;
}
static void sweep_mpi_finish(int started)
{
    if (started)
        MPI_Finalize();
}
#else
static int sweep_mpi_init(int *rank, int *size)
{
    *rank = 0;
    *size = 1;
    if (getenv("OMPI_COMM_WORLD_SIZE"))
        fprintf(stderr, "shardcast sweep: built without MPI: every rank runs the whole grid\n");
    return 0;
}
static int sweep_mpi_collect(cli_point *pts, long total, int rank, int size, int code)
{
    (void)pts, (void)total, (void)rank, (void)size;
    return code;
}
static void sweep_mpi_finish(int started) { (void)started; }
#endif

/* Progress lines by wall time, not by points: a simulated point can take seconds, a modelled one
 * microseconds (a design choice: often enough to show life, rarely enough not to flood a log). */
#define SWEEP_PACE_S 2.0

static double sweep_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct opts {
    const char *calibration, *out, *mbs;
    cli_engine engine;
    int both, strong, progress;
    double limit_s;
} opts;

static int own(int opt, const char *arg, void *ctx)
{
    opts *o = ctx;
    sc_err err;
    switch (opt) {
    case 2000: o->calibration = arg; return 0;
    case 2001:
        o->both = !strcmp(arg, "both");
        if (o->both || !cli_parse_engine(arg, &o->engine, &err))
            return 0;
        sc_err_set(&err, SC_EINPUT, "--engine", "", "expected model, sim or both, got \"%s\"", arg); /* sweep's three */
        return cli_fail(&err, SC_EINPUT);
    case 2005:
        if (strcmp(arg, "weak") && strcmp(arg, "strong"))
            return cli_fail(&err, sc_err_set(&err, SC_EINPUT, "--scaling", "", "expected weak or strong, got \"%s\"", arg));
        o->strong = !strcmp(arg, "strong");
        return 0;
    case 'o': o->out = arg; return 0;
    case 2003: o->mbs = arg; return 0;
    case 2004: o->progress = 1; return 0;
    case 2006: {
        int v;
        if (cli_parse_int(arg, "--sim-limit-s", 0, 1000000000, &v, &err))
            return cli_fail(&err, SC_EINPUT);
        o->limit_s = v;
        return 0;
    }
    }
    return 0;
}

/* Why point (nodes, layout, micro-batch) cannot be predicted, or NULL when it can: node count
 * beyond the cluster, layout not fitting the GPU count, strong-scaling batch not splitting.
 * Deterministic and cheap, so every MPI rank (and rank 0 when writing) agrees. */
static const char *point_invalid(const cli_setup *s, const opts *o, int nodes, const spec_layout *l, int mb,
                                 spec_training *tr, char *why, size_t n)
{
    sc_err e;
    *tr = s->training;
    tr->micro_batch = mb;
    if (spec_nodes_check(&s->cluster, nodes, "--nodes", &e) || spec_layout_check(l, &s->cluster, nodes, &e)) {
        snprintf(why, n, "%s", e.text);
        return why;
    }
    if (o->strong) {
        /* strong scaling: the global batch of the smallest node count, split over more GPUs */
        long global = (long)mb * s->training.grad_accum * s->nodes[0] * s->cluster.gpus_per_node;
        long gpus = (long)nodes * s->cluster.gpus_per_node;
        if (global % gpus) {
            /* said in the step's sequences: a replica of `share` GPUs runs one micro-batch (spec.h),
             * global and gpus are both share x the step's sequences and its replicas */
            long share = spec_layout_batch_share(l);
            if (share > 1 && global % share == 0 && gpus % share == 0)
                snprintf(why, n, "strong scaling: the global batch of %ld sequences does not split over %ld "
                         "data-parallel replicas (%ld GPUs / %ld)", global / share, gpus / share, gpus, share);
            else
                snprintf(why, n, "strong scaling: the global batch of %ld sequences does not split over %ld GPUs",
                         global, gpus);
            return why;
        }
        long per = global / gpus;
        if (per % tr->micro_batch == 0)
            tr->grad_accum = (int)(per / tr->micro_batch);
        else {
            tr->micro_batch = (int)per;
            tr->grad_accum = 1;
        }
    }
    return NULL;
}

/* A CSV row of p followed by the error column (empty, or the quoted reason). */
static void row_with_error(FILE *out, const cli_setup *s, const cli_point *p, const char *why)
{
    char *line = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&line, &n);
    if (!m)
        return;
    cli_csv_row(m, s, p);
    fclose(m);
    if (n && line[n - 1] == '\n')
        line[--n] = '\0';
    fprintf(out, "%s,", line ? line : "");
    if (why) {
        fputc('"', out);
        for (const char *c = why; *c; c++)
            fputs(*c == '"' ? "\"\"" : (char[2]){*c, 0}, out);
        fputc('"', out);
    }
    fputc('\n', out);
    free(line);
}

/* The grid, in output order: engine x micro-batch x layout x nodes. */
typedef struct sgrid {
    int mbs[CLI_MAX_NODES], n_mb, n_eng;
    cli_engine engines[2];
    long total;
} sgrid;

/* Say before starting when the simulations would not fit --sim-limit-s (0: no limit). */
static int sweep_budget(cli_setup *s, const opts *o, const sgrid *g, sc_err *err)
{
    int rc;
    double all_s = 0;
    for (int ni = 0; ni < s->n_nodes; ni++)
        for (int li = 0; li < s->n_layouts; li++) {
            double t, b;
            if (o->limit_s > 0 && (rc = cli_sim_budget(s, &s->training, s->nodes[ni], &s->layouts[li], NULL, o->limit_s,
                                                       "--sim-limit-s 0", err)))
                return rc;
            cli_sim_estimate(s, &s->training, s->nodes[ni], &s->layouts[li], NULL, &t, &b);
            all_s += t * g->n_mb;
        }
    if (o->limit_s > 0 && all_s > o->limit_s)
        return sc_err_set(err, SC_EINPUT, "budget", "",
                          "the %ld simulations of this sweep would take about %.0f s, over the limit "
                          "of %.0f s; --engine model answers in microseconds, mpirun -np K splits the "
                          "grid, or --sim-limit-s 0 goes on",
                          g->total, all_s, o->limit_s);
    return 0;
}

/* This rank's share of the grid (every size-th point from rank) into pts; a point that is not
 * valid is left for the CSV to mark. */
static int sweep_points(cli_setup *s, const opts *o, const sgrid *g, const cli_calib *cal, int rank, int size,
                        int show, cli_point *pts, sc_err *err)
{
    long done = 0;
    int rc = 0;
    sc_pace pace; /* a line every SWEEP_PACE_S of wall time (base/pace.h), and the last */
    sc_pace_start(&pace, sweep_now_s(), SWEEP_PACE_S);
    an_memo *memo = pred_memo_new(); /* the grid shares layer and collective times (NULL: none) */
    for (long i = rank; i < g->total && !rc; i += size) {
        long q = i;
        int ni = (int)(q % s->n_nodes);
        q /= s->n_nodes;
        int li = (int)(q % s->n_layouts);
        q /= s->n_layouts;
        int mi = (int)(q % g->n_mb);
        int ei = (int)(q / g->n_mb);
        spec_training tr;
        char why[SC_ERR_TEXT]; /* a copy of an sc_err's text */
        if (point_invalid(s, o, s->nodes[ni], &s->layouts[li], g->mbs[mi], &tr, why, sizeof why)) {
            done++;
            continue; /* marked when the CSV is written */
        }
        rc = cli_eval_memo(s, cal, g->engines[ei], NULL, &tr, s->nodes[ni], &s->layouts[li], memo, &pts[i], err);
        done++;
        if (show && sc_pace_due(&pace, sweep_now_s(), done * size >= g->total))
            fprintf(stderr, "\rsweep: %ld/%ld points", done * size < g->total ? done * size : g->total, g->total);
    }
    pred_memo_free(memo);
    return rc;
}

/* The CSV header with the error column. */
static void sweep_header(FILE *mem)
{
    char *hdr = NULL;
    size_t hn = 0;
    FILE *hm = open_memstream(&hdr, &hn);
    if (hm) {
        cli_csv_header(hm);
        fclose(hm);
        if (hn && hdr[hn - 1] == '\n')
            hdr[--hn] = '\0';
        fprintf(mem, "%s,error\n", hdr ? hdr : "");
        free(hdr);
    }
}

/* Every row of the grid to mem, the weak-scaling efficiency against the line's smallest node
 * count, an invalid point with its identity, zeros and why; the number of invalid points. */
static long sweep_rows(FILE *mem, const cli_setup *s, const opts *o, const sgrid *g, cli_point *pts)
{
    long n_invalid = 0;
    char why[SC_ERR_TEXT]; /* a copy of an sc_err's text */
    for (long i = 0; i < g->total; i++) {
        long q = i / s->n_nodes;
        int ni = (int)(i % s->n_nodes), li = (int)(q % s->n_layouts), mi = (int)((q / s->n_layouts) % g->n_mb);
        spec_training tr;
        const char *bad = point_invalid(s, o, s->nodes[ni], &s->layouts[li], g->mbs[mi], &tr, why, sizeof why);
        if (bad) { /* the point's identity, zeros, fits 0, and why in the error column */
            memset(&pts[i], 0, sizeof pts[i]);
            pts[i].layout = s->layouts[li];
            pts[i].nodes = s->nodes[ni];
            pts[i].gpus = s->nodes[ni] * s->cluster.gpus_per_node;
            pts[i].engine = g->engines[q / s->n_layouts / g->n_mb];
            pts[i].training = tr;
            pts[i].weak_eff = NAN;
            n_invalid++;
            char lay[64];
            fprintf(stderr, "sweep: %s on %d node%s, micro-batch %d: skipped: %s\n",
                    spec_layout_str(&s->layouts[li], lay, sizeof lay), s->nodes[ni], s->nodes[ni] == 1 ? "" : "s",
                    g->mbs[mi], bad);
            row_with_error(mem, s, &pts[i], bad);
            continue;
        }
        const cli_point *base = &pts[i - i % s->n_nodes]; /* smallest node count of this line */
        pts[i].weak_eff = base->r.samples_per_s > 0 ? (pts[i].r.samples_per_s / pts[i].gpus) /
                                                          (base->r.samples_per_s / base->gpus)
                                                    : NAN;
        row_with_error(mem, s, &pts[i], NULL);
    }
    return n_invalid;
}

/* The CSV to stdout (-o - or none) or to --out atomically; the exit status. */
static int sweep_write(const opts *o, char *buf, size_t len, long n_invalid, long total)
{
    sc_err err;
    if (!o->out || !strcmp(o->out, "-")) {
        fwrite(buf, 1, len, stdout);
        free(buf);
        if (n_invalid)
            fprintf(stderr, "sweep: %ld of %ld points invalid (rows marked in the error column); exit 1\n", n_invalid,
                    total);
        return n_invalid ? 1 : 0;
    }
    int rc = cli_write_atomic(o->out, buf, len, &err);
    free(buf);
    if (rc)
        return cli_fail(&err, rc);
    fprintf(stderr, "sweep: %ld row%s -> %s\n", total, total == 1 ? "" : "s", o->out);
    if (n_invalid) {
        fprintf(stderr, "sweep: %ld of %ld points invalid (rows marked in the error column); exit 1\n", n_invalid, total);
        return 1;
    }
    return 0;
}

int cmd_sweep(int argc, char **argv)
{
    static const struct option extra[] = {{"calibration", required_argument, 0, 2000},
                                          {"engine", required_argument, 0, 2001},
                                          {"out", required_argument, 0, 'o'},
                                          {"micro-batches", required_argument, 0, 2003},
                                          {"progress", no_argument, 0, 2004},
                                          {"scaling", required_argument, 0, 2005},
                                          {"sim-limit-s", required_argument, 0, 2006}};
    cli_setup s;
    opts o = {0};
    o.limit_s = 3600;
    cli_setup_init(&s, argv[0]);
    int rc;
    if (cli_args(argc, argv, "sweep", HELP, extra, (int)(sizeof extra / sizeof extra[0]), &s, own, &o, 0, NULL, &rc))
        return rc;
    sc_err err;
    if (s.json) /* a shared option: taken and ignored, the CSV would come where JSON was asked for */
        return cli_fail(&err, sc_err_set(&err, SC_EINPUT, "--json", "",
                                         "sweep writes a CSV (-o FILE, or stdout without -o), not JSON; "
                                         "'shardcast predict ... --json' gives predictions as JSON"));
    for (int i = 0; o.mbs && i < s.n_shared_given; i++) /* the axis replaces the one value */
        if (!strcmp(s.shared_given[i], "micro-batch"))
            return cli_fail(&err, sc_err_set(&err, SC_EINPUT, "--micro-batch", "",
                                             "--micro-batches %.100s gives the micro-batch sizes and this option "
                                             "would be ignored: drop one of them", o.mbs));
    cli_calib cal;
    /* nodes x layouts are checked point by point below: an invalid point is a marked row */
    if ((rc = cli_setup_load(&s, NEED_CLUSTER | NEED_MODEL | NEED_LAYOUTS, &err)) ||
        (rc = cli_calib_load(&s, o.calibration, &cal, &err)))
        return cli_fail(&err, rc);
    if (!s.n_nodes)
        return cli_fail(&err, sc_err_set(&err, SC_EINPUT, "--nodes", "", "required (a node count such as 16, or a list 2,4,8)"));
    sgrid g = {.n_mb = 1, .n_eng = o.both ? 2 : 1, .engines = {o.both ? ENGINE_MODEL : o.engine, ENGINE_SIM}};
    g.mbs[0] = s.training.micro_batch;
    if (o.mbs && (rc = cli_parse_int_list(o.mbs, "--micro-batches", g.mbs, CLI_MAX_NODES, &g.n_mb, &err)))
        return cli_fail(&err, rc);
    g.total = (long)g.n_eng * g.n_mb * s.n_layouts * s.n_nodes;
    if ((o.both || o.engine == ENGINE_SIM) && (rc = sweep_budget(&s, &o, &g, &err)))
        return cli_fail(&err, rc);
    cli_point *pts = calloc((size_t)g.total, sizeof *pts);
    if (!pts) {
        fprintf(stderr, "shardcast sweep: out of memory for %ld points\n", g.total);
        return 1;
    }
    int rank = 0, size = 1;
    int mpi = sweep_mpi_init(&rank, &size);
    int show = rank == 0 && (o.progress || isatty(2));
    rc = sweep_points(&s, &o, &g, &cal, rank, size, show, pts, &err);
    int code = rc ? cli_fail(&err, rc) : 0;
    code = sweep_mpi_collect(pts, g.total, rank, size, code);
    if (code || rank != 0) {
        free(pts);
        sweep_mpi_finish(mpi);
        return code;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) {
        free(pts);
        fprintf(stderr, "shardcast sweep: out of memory\n");
        return 1;
    }
    sweep_header(mem);
    long n_invalid = sweep_rows(mem, &s, &o, &g, pts);
    free(pts);
    if (show)
        fprintf(stderr, "\n");
    fclose(mem);
    sweep_mpi_finish(mpi);
    return sweep_write(&o, buf, len, n_invalid, g.total);
}
