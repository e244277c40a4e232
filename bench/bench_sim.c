/* bench_sim.c — cost of the discrete-event simulator (sim/exec) at scale: GPT-100B on 128 and 512
 * p4d.24xlarge nodes (1024 and 4096 GPUs), ZeRO-3 and MiCS p=8, default calibration: wall time of
 * one exec_run, events dispatched, events/s, the predicted step (with the analytical one beside
 * it) and peak RSS; then grad_accum 4 vs 16 to show what exec_run_steady saves. Each case runs in
 * a forked child so its ru_maxrss is its own. Not a test: prints rates.
 * Per run: events dispatched, ns per event, stale pops (events that no longer applied when popped)
 * and re-timings (events moved or cancelled in the queue instead: each one a stale pop of the
 * lazy queue before issue 22), peak RSS and peak address space.
 * Usage: [BENCH_CALIBRATION=cal.json] [BENCH_SYMMETRY=off] bench_sim [cluster.json [model.json
 * [LAYOUT@NODES ...]]] (jobs given: only those run; BENCH_CALIBRATION: that calibration instead of
 * the defaults; BENCH_SYMMETRY=off: every rank simulated, no exact-symmetric quotient). The
 * column "ranks" is how many ranks ran (fewer than the GPUs: the exact-symmetric quotient). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../model/analytic.h"
#include "../model/memory.h"
#include "../sim/exec.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct job {
    const char *layout;
    int nodes, grad_accum, steady; /* steady: exec_run_steady, else exec_run */
} job;

typedef struct outcome {
    int rc;
    char err[SC_ERR_TEXT]; /* a copy of an sc_err's text */
    double wall_s, step_s, an_step_s, maxrss_MiB;
    unsigned long long events, stale, retimed;
    double vm_MiB;
    long collectives;
    int ranks;
    int fits;
} outcome;

static const spec_cluster *C;
static const spec_model *M;
static const cost_calib *K;

static void run_job(const job *j, outcome *o)
{
    memset(o, 0, sizeof *o);
    sc_err e;
    memset(&e, 0, sizeof e);
    spec_layout l;
    if ((o->rc = spec_layout_parse(j->layout, &l, &e)) || (o->rc = spec_layout_check(&l, C, j->nodes, &e))) {
        snprintf(o->err, sizeof o->err, "%s", e.text);
        return;
    }
    spec_training t;
    spec_training_defaults(&t);
    t.grad_accum = j->grad_accum;
    wl w;
    wl_build(M, &t, &w);
    lo_graph *g = malloc(sizeof *g);
    an_timed *tm = malloc(sizeof *tm);
    if (!g || !tm) {
        o->rc = SC_ERUNTIME;
        snprintf(o->err, sizeof o->err, "out of memory");
        free(g);
        free(tm);
        return;
    }
    layout_build(&w, &t, &l, C, j->nodes, g);
    an_time(g, &w, K, C, tm);
    an_result a;
    memset(&a, 0, sizeof a);
    an_run(tm, &a);
    o->an_step_s = a.step_s;
    mem_breakdown mb;
    mem_plan(&w, &t, &l, g->n_ranks, C, &mb);
    o->fits = mb.fits;
    exec_opts so;
    memset(&so, 0, sizeof so);
    so.seed = 1;
    const char *sym = getenv("BENCH_SYMMETRY");
    so.full = sym && !strcmp(sym, "off");
    exec_result r;
    double t0 = now_s();
    o->rc = j->steady ? exec_run_steady(g, tm, K, C, &so, &r, &e) : exec_run(g, tm, K, C, &so, &r, &e);
    o->wall_s = now_s() - t0;
    if (o->rc)
        snprintf(o->err, sizeof o->err, "%s", e.text);
    o->step_s = r.step_s;
    o->events = (unsigned long long)r.events;
    o->stale = (unsigned long long)r.stale;
    o->retimed = (unsigned long long)r.retimed;
    FILE *st = fopen("/proc/self/status", "r");
    if (st) {
        char line[256];
        while (fgets(line, sizeof line, st))
            if (!strncmp(line, "VmPeak:", 7))
                o->vm_MiB = atof(line + 7) / 1024.0;
        fclose(st);
    }
    o->collectives = r.collectives;
    o->ranks = r.ranks_simulated;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    o->maxrss_MiB = (double)ru.ru_maxrss / 1024.0; /* Linux: KiB */
    free(g);
    free(tm);
}

/* In a child process (its own peak RSS), the result back through a pipe; in-process if fork fails. */
static void run_isolated(const job *j, outcome *o)
{
    int fd[2];
    pid_t pid = -1;
    fflush(stdout);
    if (pipe(fd) == 0 && (pid = fork()) == 0) {
        close(fd[0]);
        outcome mine;
        run_job(j, &mine);
        ssize_t n = write(fd[1], &mine, sizeof mine);
        _exit(n == (ssize_t)sizeof mine ? 0 : 1);
    }
    if (pid < 0) {
        run_job(j, o);
        return;
    }
    close(fd[1]);
    ssize_t n = read(fd[0], o, sizeof *o);
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (n != (ssize_t)sizeof *o) {
        memset(o, 0, sizeof *o);
        o->rc = SC_ERUNTIME;
        snprintf(o->err, sizeof o->err, "child failed (status %d)", status);
    }
}

static void print_row(const job *j, const outcome *o)
{
    if (o->rc) {
        printf("sim: %-9s %4d nodes %5d GPUs ga %2d %-6s  error: %s\n", j->layout, j->nodes,
               j->nodes * C->gpus_per_node, j->grad_accum, j->steady ? "steady" : "run", o->err);
        return;
    }
    printf("sim: %-9s %4d nodes %6d GPUs %6d ranks ga %2d %-6s %8.2f s %11llu ev %8.3f Mev/s %6.0f ns/ev stale %5.1f %% "
           "(retimed %llu)  step %8.4f s (analytic %8.4f, x%.4f)  RSS %6.0f MiB VM %6.0f MiB%s\n",
           j->layout, j->nodes, j->nodes * C->gpus_per_node, o->ranks, j->grad_accum, j->steady ? "steady" : "run", o->wall_s,
           o->events, (double)o->events / o->wall_s / 1e6, 1e9 * o->wall_s / (double)o->events,
           100.0 * (double)o->stale / (double)o->events, o->retimed, o->step_s, o->an_step_s,
           o->step_s / o->an_step_s, o->maxrss_MiB, o->vm_MiB, o->fits ? "" : "  (does not fit in HBM; simulated anyway)");
}

int main(int argc, char **argv)
{
    const char *cpath = argc > 1 ? argv[1] : "configs/clusters/p4d.24xlarge.json";
    const char *mpath = argc > 2 ? argv[2] : "configs/models/gpt-100b.json";
    static spec_cluster c;
    static spec_model m;
    static cost_calib k;
    sc_err e;
    if (spec_load_cluster(cpath, &c, &e) || spec_load_model(mpath, &m, &e)) {
        fprintf(stderr, "bench_sim: %s: %s: %s\n", e.source, e.path, e.text);
        return 1;
    }
    cost_calib_defaults(&c, &k);
    const char *kpath = getenv("BENCH_CALIBRATION"); /* a calibration file instead of the defaults */
    if (kpath && *kpath && cost_calib_load(kpath, &k, &e)) {
        fprintf(stderr, "bench_sim: %s: %s: %s\n", e.source, e.path, e.text);
        return 1;
    }
    C = &c;
    M = &m;
    K = &k;
    printf("sim: %s, %s (%d layers), %s calibration, micro-batch 1, prefetch 1; one exec_run per line,"
           " each in its own process (peak RSS = ru_maxrss)\n",
           c.name, m.name, m.layers, kpath && *kpath ? kpath : "default");
    if (argc > 3) { /* the jobs named on the command line: LAYOUT@NODES */
        for (int i = 3; i < argc; i++) {
            char lay[128];
            snprintf(lay, sizeof lay, "%s", argv[i]);
            char *at = strrchr(lay, '@');
            if (!at) {
                fprintf(stderr, "bench_sim: expected LAYOUT@NODES, got %s\n", argv[i]);
                return 2;
            }
            *at = 0;
            job j = {lay, atoi(at + 1), 1, 0};
            outcome o;
            run_isolated(&j, &o);
            print_row(&j, &o);
        }
        return 0;
    }

    static const job SCALE[] = {
        {"zero3", 128, 1, 0},
        {"mics:p=8", 128, 1, 0},
        {"zero3", 512, 1, 0},
        {"mics:p=8", 512, 1, 0},
    };
    for (size_t i = 0; i < sizeof SCALE / sizeof *SCALE; i++) {
        outcome o;
        run_isolated(&SCALE[i], &o);
        print_row(&SCALE[i], &o);
    }

    /* grad_accum: the full run grows with it; the steady-state run simulates 2, 3 and 4
     * micro-steps (9 in all) whatever grad_accum is, and extrapolates. */
    static const job ACC[] = {
        {"zero3", 128, 4, 0},
        {"zero3", 128, 16, 1},
        {"zero3", 128, 16, 0},
        {"zero3", 128, 64, 1},
    };
    enum { N_ACC = sizeof ACC / sizeof *ACC };
    outcome oa[N_ACC];
    int ok = 1;
    for (int i = 0; i < N_ACC; i++) {
        run_isolated(&ACC[i], &oa[i]);
        print_row(&ACC[i], &oa[i]);
        ok = ok && !oa[i].rc;
    }
    if (ok) {
        printf("sim: steady at grad_accum 16 costs %.2fx a full grad_accum 4 run (%.2fx the events: it always "
               "simulates 2 + 3 + 4 = 9 micro-steps, 9/4 = 2.25x), the full run at 16 %.2fx; steady at 64 %.2fx "
               "(flat in grad_accum)\n",
               oa[1].wall_s / oa[0].wall_s, (double)oa[1].events / (double)oa[0].events, oa[2].wall_s / oa[0].wall_s,
               oa[3].wall_s / oa[0].wall_s);
        printf("sim: steady vs full step at grad_accum 16: %.2g relative difference\n",
               (oa[1].step_s - oa[2].step_s) / oa[2].step_s);
    }
    return 0;
}
