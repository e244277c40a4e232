/* cpu.c — the harness backend for any machine: MPI collectives (MPI_Allgather,
 * MPI_Reduce_scatter_block, MPI_Allreduce) on float buffers over communicators from
 * MPI_Comm_split, cblas_sgemm GEMMs, a memcpy bandwidth loop, MPI_Wtime. Ranks sharing a host
 * share its cores, so BLAS gets cores / ranks-per-node threads unless OPENBLAS_NUM_THREADS is set.
 * Not here: what is measured (driver.c). */
#include <cblas.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"

struct bench_comm {
    MPI_Comm c;
    int rank, size;
};

static bench_comm g_world;
static char g_err[512];

static int mpi_fail(int rc, const char *what)
{
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;
    MPI_Error_string(rc, s, &n);
    snprintf(g_err, sizeof g_err, "%s: %s", what, s);
    return SC_ERUNTIME;
}

static const char *cpu_error(void) { return g_err; }

static void cpu_model(char *out, size_t n, int cores)
{
    char line[512], model[256] = "";
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10)) {
            const char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ' || *c == '\t')
                    c++;
                snprintf(model, sizeof model, "%s", c);
                model[strcspn(model, "\n")] = '\0';
            }
            break;
        }
    if (f)
        fclose(f);
    snprintf(out, n, "%.120s (%d cores)", *model ? model : "unknown CPU", cores);
}

static int cpu_init(int *argc, char ***argv, bench_host *h, sc_err *err)
{
    if (MPI_Init(argc, argv) != MPI_SUCCESS)
        return sc_err_set(err, SC_ERUNTIME, "MPI_Init", "", "failed");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    g_world.c = MPI_COMM_WORLD;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_world.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_world.size);
    h->rank = g_world.rank;
    h->ranks = g_world.size;

    /* node = ranks that share memory; its index = order of the node's lowest world rank */
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_world.rank, MPI_INFO_NULL, &local);
    int lsize;
    MPI_Comm_rank(local, &h->local_rank);
    MPI_Comm_size(local, &lsize);
    MPI_Comm leaders;
    MPI_Comm_split(MPI_COMM_WORLD, h->local_rank == 0 ? 0 : MPI_UNDEFINED, g_world.rank, &leaders);
    int node = 0;
    if (leaders != MPI_COMM_NULL) {
        MPI_Comm_rank(leaders, &node);
        MPI_Comm_free(&leaders);
    }
    MPI_Bcast(&node, 1, MPI_INT, 0, local);
    h->node = node;
    int is_leader = h->local_rank == 0, nodes = 0;
    MPI_Allreduce(&is_leader, &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    h->nodes = nodes;
    int mn, mx;
    MPI_Allreduce(&lsize, &mn, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&lsize, &mx, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    h->uneven_nodes = mn != mx;
    h->ranks_per_node = lsize;
    MPI_Bcast(&h->ranks_per_node, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Comm_free(&local);

    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    h->cores = cores > 0 ? (int)cores : 1;
    if (!getenv("OPENBLAS_NUM_THREADS") && !getenv("OMP_NUM_THREADS")) {
        int t = h->cores / (lsize > 0 ? lsize : 1);
        openblas_set_num_threads(t > 0 ? t : 1);
    }
    h->blas_threads = openblas_get_num_threads();
    cpu_model(h->device, sizeof h->device, h->cores);

    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, ",\n")] = '\0'; /* "Open MPI v4.1.4, package: ..." -> "Open MPI v4.1.4" */
    snprintf(h->mpi, sizeof h->mpi, "%.120s", lib);
    const char *cfg = openblas_get_config();
    char blas[128];
    snprintf(blas, sizeof blas, "%s", cfg ? cfg : "OpenBLAS");
    /* "OpenBLAS 0.3.21 DYNAMIC_ARCH ... Haswell MAX_THREADS=64": name, version and core */
    char *sp = strchr(blas, ' ');
    sp = sp ? strchr(sp + 1, ' ') : NULL;
    if (sp)
        *sp = '\0';
    snprintf(h->blas, sizeof h->blas, "%s", blas);
    char host[128] = "";
    gethostname(host, sizeof host - 1);
    snprintf(h->hostname, sizeof h->hostname, "%s", host);
    MPI_Bcast(h->hostname, (int)sizeof h->hostname, MPI_CHAR, 0, MPI_COMM_WORLD);
    return 0;
}

static void cpu_finalize(void) { MPI_Finalize(); }

static void cpu_abort(int status) { MPI_Abort(MPI_COMM_WORLD, status); }

static bench_comm *cpu_world(void) { return &g_world; }

static int cpu_split(bench_comm *parent, int color, int key, bench_comm **out)
{
    bench_comm *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(g_err, sizeof g_err, "out of memory");
        return SC_ERUNTIME;
    }
    int rc = MPI_Comm_split(parent->c, color, key, &c->c);
    if (rc != MPI_SUCCESS) {
        free(c);
        return mpi_fail(rc, "MPI_Comm_split");
    }
    MPI_Comm_set_errhandler(c->c, MPI_ERRORS_RETURN);
    MPI_Comm_rank(c->c, &c->rank);
    MPI_Comm_size(c->c, &c->size);
    *out = c;
    return 0;
}

static void cpu_comm_free(bench_comm *c)
{
    if (!c || c == &g_world)
        return;
    MPI_Comm_free(&c->c);
    free(c);
}

static int cpu_comm_rank(const bench_comm *c) { return c->rank; }
static int cpu_comm_size(const bench_comm *c) { return c->size; }

static void *cpu_alloc(size_t bytes)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes ? bytes : 64))
        return NULL;
    memset(p, 0, bytes); /* touch every page now, not inside a timed operation */
    return p;
}

static void cpu_release(void *p) { free(p); }

static int cpu_upload(void *dst, const void *src, size_t bytes)
{
    memcpy(dst, src, bytes);
    return 0;
}

static int cpu_download(void *dst, const void *src, size_t bytes)
{
    memcpy(dst, src, bytes);
    return 0;
}

static int cpu_coll(bench_comm *c, bench_coll kind, bench_dtype dt, const void *send, void *recv, size_t count,
                    double *t_s)
{
    if (dt != BENCH_F32) {
        snprintf(g_err, sizeof g_err, "the cpu backend moves fp32 only");
        return SC_ERUNTIME;
    }
    if (count > INT32_MAX) {
        snprintf(g_err, sizeof g_err, "%zu elements: more than MPI's int count", count);
        return SC_ERUNTIME;
    }
    int n = (int)count, rc;
    double t0 = MPI_Wtime();
    switch (kind) {
    case BENCH_ALLGATHER: rc = MPI_Allgather(send, n, MPI_FLOAT, recv, n, MPI_FLOAT, c->c); break;
    case BENCH_REDUCESCATTER: rc = MPI_Reduce_scatter_block(send, recv, n, MPI_FLOAT, MPI_SUM, c->c); break;
    case BENCH_ALLREDUCE: rc = MPI_Allreduce(send, recv, n, MPI_FLOAT, MPI_SUM, c->c); break;
    default: snprintf(g_err, sizeof g_err, "unknown collective"); return SC_ERUNTIME;
    }
    *t_s = MPI_Wtime() - t0;
    return rc == MPI_SUCCESS ? 0 : mpi_fail(rc, "collective");
}

static int cpu_gemm(bench_dtype dt, int ta, int tb, int m, int n, int k, int batch, int reps, const void *A,
                    const void *B, void *C, double *t_s)
{
    if (dt != BENCH_F32) {
        snprintf(g_err, sizeof g_err, "the cpu backend computes fp32 only");
        return SC_ERUNTIME;
    }
    const float *a = A, *b = B;
    float *c = C;
    if (reps < 1)
        reps = 1; /* a CPU call has no launch to leave out: isolated and back to back are the same */
    double t0 = MPI_Wtime();
    for (int r = 0; r < reps; r++)
        for (int i = 0; i < batch; i++)
            cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0f,
                        a + (size_t)i * m * k, ta ? m : k, b + (size_t)i * k * n, tb ? k : n, 0.0f,
                        c + (size_t)i * m * n, n);
    *t_s = (MPI_Wtime() - t0) / reps;
    return 0;
}

static int cpu_membw(void *dst, const void *src, size_t bytes, double *t_s)
{
    double t0 = MPI_Wtime();
    memcpy(dst, src, bytes);
    *t_s = MPI_Wtime() - t0;
    return 0;
}

static double cpu_now(void) { return MPI_Wtime(); }

static int cpu_barrier(void)
{
    int rc = MPI_Barrier(MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? 0 : mpi_fail(rc, "MPI_Barrier");
}

static int cpu_host_allreduce(double *v, int n, int max)
{
    int rc = MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, max ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? 0 : mpi_fail(rc, "MPI_Allreduce");
}

static int cpu_host_gather(const void *send, size_t bytes, void *recv)
{
    if (bytes > INT32_MAX) {
        snprintf(g_err, sizeof g_err, "gather of %zu bytes per rank: too large", bytes);
        return SC_ERUNTIME;
    }
    int rc = MPI_Gather(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? 0 : mpi_fail(rc, "MPI_Gather");
}

static const bench_backend CPU = {
    .name = "cpu",
    .dtype = BENCH_F32,
    .default_max_bytes = (size_t)16 << 20,
    .default_membw_bytes = (size_t)64 << 20,
    .default_gemm_max = 1024,
    .default_hidden = 256,
    .default_seq = 256,
    .default_layers = 4,
    .init = cpu_init,
    .finalize = cpu_finalize,
    .abort = cpu_abort,
    .error = cpu_error,
    .world = cpu_world,
    .split = cpu_split,
    .comm_free = cpu_comm_free,
    .comm_rank = cpu_comm_rank,
    .comm_size = cpu_comm_size,
    .alloc = cpu_alloc,
    .release = cpu_release,
    .upload = cpu_upload,
    .download = cpu_download,
    .coll = cpu_coll,
    .gemm = cpu_gemm,
    .membw = cpu_membw,
    .interfere = NULL, /* interference is a GPU effect (NCCL kernels take SMs): not measured here */
    .now = cpu_now,
    .barrier = cpu_barrier,
    .host_allreduce = cpu_host_allreduce,
    .host_gather = cpu_host_gather,
};

const bench_backend *bench_backend_get(void) { return &CPU; }
