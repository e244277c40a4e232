/* calibrate.c — `shardcast calibrate run|fit`. run launches the harness beside this binary
 * (shardcast-bench, or shardcast-bench-gpu) under mpirun, after the harness has checked its
 * options; fit is cmd_calibrate_fit (commands.h, in cli/calfit.c). Not here: any measurement
 * (calibrate/bench) or MPI itself: shardcast builds without MPI, the harness is its own program. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../calibrate/import.h"
#include "../base/proc.h"
#include "../base/str.h"
#include "commands.h"
#include "common.h"

static const char HELP[] =
    "usage: shardcast calibrate run [--backend cpu|gpu] [-np N] [--oversubscribe] [bench options] -o measurements.json\n"
    "       shardcast calibrate fit measurements.json --cluster C -o calibration.json\n"
    "       shardcast calibrate import nccl-tests LOG... -o measurements.json\n"
    "       shardcast calibrate anchor RUN.json... [--calibration BASE] -o calibration.json\n\n"
    "run: measure collectives, GEMMs, memory bandwidth and a real sharded step with the harness\n"
    "(shardcast-bench for cpu, shardcast-bench-gpu for gpu, found beside shardcast), launched as\n"
    "  mpirun --allow-run-as-root [--oversubscribe] -np N [mpirun args] <dir>/shardcast-bench [bench options]\n"
    "  --backend cpu|gpu      which harness (default cpu)\n"
    "  -np N, --np N          ranks (default 2 for cpu, 1 for gpu: one per GPU)\n"
    "  --oversubscribe        let mpirun start more ranks than cores (implied when N > online cores)\n"
    "  --mpi-arg ARG          one more mpirun argument, repeatable (e.g. --mpi-arg --host --mpi-arg a:2,b:2)\n"
    "  --mpirun PATH          the mpirun to use (default: mpirun on PATH)\n"
    "  every other option goes to the harness: --min --max --iters --warmup --groups --step --layers\n"
    "  --hidden --seq --gemm-model --trace -o ...  ('shardcast-bench --help' lists them)\n\n"
    "fit: fit the cost model to measurements.json ('shardcast calibrate fit --help').\n"
    "import: nccl-tests logs into measurements.json ('shardcast calibrate import --help').\n"
    "anchor: fit the stack to measured runs of your job ('shardcast calibrate anchor --help').\n";

/* What `calibrate run` was asked for: the harness's backend and launch, and the arguments passed
 * on to mpirun (mpi_args) and to the harness (fwd), each with room for every argument. */
typedef struct crun {
    const char *backend, *mpirun;
    int np, oversub, n_fwd, n_mpi;
    char **fwd, **mpi_args;
} crun;

/* GO: the arguments are read and the command goes on; any other value is the exit status. */
#define CRUN_GO (-1)

/* One argument that takes a value (val, the next one): --backend or -np checked; 0 or 2. */
static int crun_value(crun *c, const char *a, char *val)
{
    if (!strcmp(a, "--backend")) {
        c->backend = val;
        if (strcmp(val, "cpu") && strcmp(val, "gpu")) {
            fprintf(stderr, "shardcast: --backend: expected cpu or gpu, got \"%s\"\n", val);
            return 2;
        }
    } else if (!strcmp(a, "-np") || !strcmp(a, "--np") || !strcmp(a, "-n")) {
        char *end;
        errno = 0;
        long v = strtol(val, &end, 10);
        c->np = (int)v;
        if (errno || end == val || *end || v < 1 || v > 1000000) {
            fprintf(stderr, "shardcast: -np: expected an integer from 1 to 1000000, got \"%s\"\n", val);
            return 2;
        }
    } else if (!strcmp(a, "--mpi-arg")) {
        c->mpi_args[c->n_mpi++] = val;
    } else {
        c->mpirun = val;
    }
    return 0;
}

/* The launch's own arguments into c, the rest forwarded to the harness; CRUN_GO or the exit status. */
static int crun_args(int argc, char **argv, crun *c)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        char *val = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = !strcmp(a, "--backend") || !strcmp(a, "-np") || !strcmp(a, "--np") || !strcmp(a, "-n") ||
                    !strcmp(a, "--mpi-arg") || !strcmp(a, "--mpirun");
        if (takes && !val) {
            char what[160];
            snprintf(what, sizeof what, "option '%.100s' needs a value", a);
            return cli_usage_error("calibrate run", what);
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(HELP, stdout);
            return 0;
        } else if (takes) {
            int rc = crun_value(c, a, val);
            if (rc)
                return rc;
            i++;
        } else if (!strcmp(a, "--oversubscribe")) {
            c->oversub = 1;
        } else {
            c->fwd[c->n_fwd++] = argv[i];
        }
    }
    return CRUN_GO;
}

/* The harness beside this binary and mpirun (--mpirun or on PATH); 0 or the exit status. */
static int crun_find(const crun *c, int gpu, char *bench, size_t bench_sz, char *mpipath, size_t mpi_sz)
{
    char dir[4096];
    proc_self_dir(NULL, dir, sizeof dir);
    snprintf(bench, bench_sz, "%s/%s", dir, gpu ? "shardcast-bench-gpu" : "shardcast-bench");
    if (access(bench, X_OK)) {
        fprintf(stderr, "shardcast calibrate run: %s not found (build it with %s)\n", bench,
                gpu ? "'make bench-gpu', which needs nvcc and NCCL" : "'make', which needs mpicc and OpenBLAS");
        return 1;
    }
    if (c->mpirun) {
        snprintf(mpipath, mpi_sz, "%s", c->mpirun);
        if (access(mpipath, X_OK)) {
            fprintf(stderr, "shardcast calibrate run: --mpirun %s: not an executable\n", mpipath);
            return 1;
        }
    } else if (proc_find_on_path("mpirun", mpipath, mpi_sz)) {
        fprintf(stderr, "shardcast calibrate run: mpirun not found on PATH (install OpenMPI: apt-get install "
                        "openmpi-bin, or give --mpirun PATH)\n");
        return 1;
    }
    return 0;
}

/* The harness checks its options first (--dry-run): a typo should not cost an MPI launch. */
static int crun_dry_run(const crun *c, char *bench)
{
    char **chk = calloc((size_t)c->n_fwd + 3, sizeof(char *));
    if (!chk)
        return 1;
    chk[0] = bench;
    for (int i = 0; i < c->n_fwd; i++)
        chk[i + 1] = c->fwd[i];
    chk[c->n_fwd + 1] = "--dry-run";
    int rc = proc_run(chk);
    free(chk);
    return rc == 127 ? 1 : rc;
}

/* mpirun [--oversubscribe] -np N [mpi args] bench [bench args], said on stderr, in place of this
 * process; returns 1 only when it could not be started. */
static int crun_exec(const crun *c, char *bench, char *mpipath)
{
    char np_s[16];
    snprintf(np_s, sizeof np_s, "%d", c->np);
    char **av = calloc((size_t)(c->n_fwd + c->n_mpi) + 8, sizeof(char *));
    if (!av)
        return 1;
    int k = 0;
    av[k++] = mpipath;
    av[k++] = "--allow-run-as-root";
    if (c->oversub)
        av[k++] = "--oversubscribe";
    av[k++] = "-np";
    av[k++] = np_s;
    for (int i = 0; i < c->n_mpi; i++)
        av[k++] = c->mpi_args[i];
    av[k++] = bench;
    for (int i = 0; i < c->n_fwd; i++)
        av[k++] = c->fwd[i];
    av[k] = NULL;
    fprintf(stderr, "shardcast calibrate run:");
    for (int i = 0; i < k; i++)
        fprintf(stderr, " %s", av[i]);
    fprintf(stderr, "\n");
    fflush(NULL);
    execv(mpipath, av);
    fprintf(stderr, "shardcast calibrate run: cannot run %s: %s\n", mpipath, strerror(errno));
    free(av);
    return 1;
}

static int calibrate_run(int argc, char **argv)
{
    crun c = {"cpu", NULL, 0, 0, 0, 0, NULL, NULL};
    c.fwd = calloc((size_t)argc + 1, sizeof(char *));
    c.mpi_args = calloc((size_t)argc + 1, sizeof(char *));
    if (!c.fwd || !c.mpi_args) {
        free(c.fwd), free(c.mpi_args);
        fprintf(stderr, "shardcast calibrate run: out of memory\n");
        return 1;
    }
    int rc = crun_args(argc, argv, &c);
    if (rc == CRUN_GO) {
        int gpu = !strcmp(c.backend, "gpu");
        if (!c.np)
            c.np = gpu ? 1 : 2;
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        if (cores > 0 && c.np > cores)
            c.oversub = 1;
        char bench[4200], mpipath[4096];
        if (!(rc = crun_find(&c, gpu, bench, sizeof bench, mpipath, sizeof mpipath)) && !(rc = crun_dry_run(&c, bench)))
            rc = crun_exec(&c, bench, mpipath);
    }
    free(c.fwd), free(c.mpi_args);
    return rc;
}

int cmd_calibrate(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage_error("calibrate", "expected a subcommand: run, fit, import or anchor");
    const char *sub = argv[1];
    if (!strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help")) {
        fputs(HELP, stdout);
        return 0;
    }
    if (!strcmp(sub, "run"))
        return calibrate_run(argc - 1, argv + 1);
    if (!strcmp(sub, "fit"))
        return cmd_calibrate_fit(argc - 1, argv + 1);
    if (!strcmp(sub, "import"))
        return cmd_calibrate_import(argc - 1, argv + 1);
    if (!strcmp(sub, "anchor"))
        return cmd_calibrate_anchor(argc - 1, argv + 1);
    static const char *const SUBS[] = {"run", "fit", "import", "anchor", NULL};
    char what[240], near[64];
    int nn = str_nearest_all(sub, SUBS, near, sizeof near); /* "fitt": fit */
    snprintf(what, sizeof what, "unknown subcommand '%.100s' (expected run, fit, import or anchor)%s%s%s", sub,
             nn ? "; did you mean " : "", nn ? near : "", nn ? "?" : "");
    return cli_usage_error("calibrate", what);
}
