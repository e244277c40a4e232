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

static int calibrate_run(int argc, char **argv)
{
    const char *backend = "cpu", *mpirun = NULL;
    int np = 0, oversub = 0;
    char **fwd = calloc((size_t)argc + 1, sizeof(char *)), **mpi_args = calloc((size_t)argc + 1, sizeof(char *));
    if (!fwd || !mpi_args) {
        free(fwd), free(mpi_args);
        fprintf(stderr, "shardcast calibrate run: out of memory\n");
        return 1;
    }
    int n_fwd = 0, n_mpi = 0, rc = 0;
    for (int i = 1; i < argc && !rc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = !strcmp(a, "--backend") || !strcmp(a, "-np") || !strcmp(a, "--np") || !strcmp(a, "-n") ||
                    !strcmp(a, "--mpi-arg") || !strcmp(a, "--mpirun");
        if (takes && !val) {
            char what[160];
            snprintf(what, sizeof what, "option '%.100s' needs a value", a);
            rc = cli_usage_error("calibrate run", what);
            break;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(HELP, stdout);
            free(fwd), free(mpi_args);
            return 0;
        } else if (!strcmp(a, "--backend")) {
            if (strcmp(val, "cpu") && strcmp(val, "gpu")) {
                fprintf(stderr, "shardcast: --backend: expected cpu or gpu, got \"%s\"\n", val);
                rc = 2;
            }
            backend = val, i++;
        } else if (!strcmp(a, "-np") || !strcmp(a, "--np") || !strcmp(a, "-n")) {
            char *end;
            errno = 0;
            long v = strtol(val, &end, 10);
            if (errno || end == val || *end || v < 1 || v > 1000000) {
                fprintf(stderr, "shardcast: -np: expected an integer from 1 to 1000000, got \"%s\"\n", val);
                rc = 2;
            }
            np = (int)v, i++;
        } else if (!strcmp(a, "--oversubscribe")) {
            oversub = 1;
        } else if (!strcmp(a, "--mpi-arg")) {
            mpi_args[n_mpi++] = argv[++i];
        } else if (!strcmp(a, "--mpirun")) {
            mpirun = argv[++i];
        } else {
            fwd[n_fwd++] = argv[i];
        }
    }
    if (rc) {
        free(fwd), free(mpi_args);
        return rc;
    }
    int gpu = !strcmp(backend, "gpu");
    if (!np)
        np = gpu ? 1 : 2;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores > 0 && np > cores)
        oversub = 1;

    char dir[4096], bench[4200], mpipath[4096];
    proc_self_dir(NULL, dir, sizeof dir);
    snprintf(bench, sizeof bench, "%s/%s", dir, gpu ? "shardcast-bench-gpu" : "shardcast-bench");
    if (access(bench, X_OK)) {
        fprintf(stderr, "shardcast calibrate run: %s not found (build it with %s)\n", bench,
                gpu ? "'make bench-gpu', which needs nvcc and NCCL" : "'make', which needs mpicc and OpenBLAS");
        free(fwd), free(mpi_args);
        return 1;
    }
    if (mpirun) {
        snprintf(mpipath, sizeof mpipath, "%s", mpirun);
        if (access(mpipath, X_OK)) {
            fprintf(stderr, "shardcast calibrate run: --mpirun %s: not an executable\n", mpipath);
            free(fwd), free(mpi_args);
            return 1;
        }
    } else if (proc_find_on_path("mpirun", mpipath, sizeof mpipath)) {
        fprintf(stderr, "shardcast calibrate run: mpirun not found on PATH (install OpenMPI: apt-get install "
                        "openmpi-bin, or give --mpirun PATH)\n");
        free(fwd), free(mpi_args);
        return 1;
    }

    /* let the harness check its options first: a typo should not cost an MPI launch */
    char **chk = calloc((size_t)n_fwd + 3, sizeof(char *));
    if (!chk) {
        free(fwd), free(mpi_args);
        return 1;
    }
    chk[0] = bench;
    for (int i = 0; i < n_fwd; i++)
        chk[i + 1] = fwd[i];
    chk[n_fwd + 1] = "--dry-run";
    rc = proc_run(chk);
    free(chk);
    if (rc) {
        free(fwd), free(mpi_args);
        return rc == 127 ? 1 : rc;
    }

    char np_s[16];
    snprintf(np_s, sizeof np_s, "%d", np);
    char **av = calloc((size_t)(n_fwd + n_mpi) + 8, sizeof(char *));
    if (!av) {
        free(fwd), free(mpi_args);
        return 1;
    }
    int k = 0;
    av[k++] = mpipath;
    av[k++] = "--allow-run-as-root";
    if (oversub)
        av[k++] = "--oversubscribe";
    av[k++] = "-np";
    av[k++] = np_s;
    for (int i = 0; i < n_mpi; i++)
        av[k++] = mpi_args[i];
    av[k++] = bench;
    for (int i = 0; i < n_fwd; i++)
        av[k++] = fwd[i];
    av[k] = NULL;
    fprintf(stderr, "shardcast calibrate run:");
    for (int i = 0; i < k; i++)
        fprintf(stderr, " %s", av[i]);
    fprintf(stderr, "\n");
    fflush(NULL);
    execv(mpipath, av);
    fprintf(stderr, "shardcast calibrate run: cannot run %s: %s\n", mpipath, strerror(errno));
    free(av), free(fwd), free(mpi_args);
    return 1;
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
    char what[160];
    snprintf(what, sizeof what, "unknown subcommand '%.100s' (expected run, fit, import or anchor)", sub);
    return cli_usage_error("calibrate", what);
}
