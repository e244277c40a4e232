/* bench_gpu.cu — the harness backend for NVIDIA GPUs: NCCL collectives on communicators from
 * ncclCommSplit, cuBLAS GEMMs (cublasGemmEx, bf16 in, fp32 accumulate: tensor cores), a device
 * copy kernel for memory bandwidth, every operation timed with CUDA events on one stream; for
 * interference, GEMMs on that stream beside NCCL all-reduces or copies on a second one.
 * Ranks: built with -DSC_WITH_MPI, one process per GPU under mpirun (the NCCL unique id is
 * broadcast with MPI, host reductions use MPI); without it, one process and one rank
 * (ncclCommInitAll on device 0). Not here: what is measured (driver.c). */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>
#ifdef SC_WITH_MPI
#define OMPI_SKIP_MPICXX 1 /* the C API only: no C++ bindings compiled into this file */
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"

struct bench_comm {
    ncclComm_t c;
    int rank, size;
};

static bench_comm g_world;
static char g_err[512];
static cudaStream_t g_stream;
static cublasHandle_t g_blas;
static cudaEvent_t g_ev0, g_ev1;
/* interference: a second stream for the concurrent traffic, events around it and the GEMMs */
static cudaStream_t g_side;
static cudaEvent_t g_tr0, g_tr1, g_gm0, g_gm1;
static int g_sms = 1;
static int g_ready;

#define CUDA_OK(call, what)                                                                            \
    do {                                                                                               \
        cudaError_t e_ = (call);                                                                       \
        if (e_ != cudaSuccess) {                                                                       \
            snprintf(g_err, sizeof g_err, "%s: %s", what, cudaGetErrorString(e_));                     \
            return SC_ERUNTIME;                                                                        \
        }                                                                                              \
    } while (0)
#define NCCL_OK(call, what)                                                                            \
    do {                                                                                               \
        ncclResult_t r_ = (call);                                                                      \
        if (r_ != ncclSuccess) {                                                                       \
            snprintf(g_err, sizeof g_err, "%s: %s", what, ncclGetErrorString(r_));                     \
            return SC_ERUNTIME;                                                                        \
        }                                                                                              \
    } while (0)
#define BLAS_OK(call, what)                                                                            \
    do {                                                                                               \
        cublasStatus_t s_ = (call);                                                                    \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                             \
            snprintf(g_err, sizeof g_err, "%s: %s", what, cublasGetStatusString(s_));                  \
            return SC_ERUNTIME;                                                                        \
        }                                                                                              \
    } while (0)

static const char *gpu_error(void) { return g_err; }

#ifndef SC_WITH_MPI
/* Ranks the launcher started (mpirun, srun), 1 when run by hand. */
static int launched_ranks(void)
{
    const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_NTASKS"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && atoi(v) > 0)
            return atoi(v);
    }
    return 1;
}
#endif

/* Elapsed time between the two events around an operation just enqueued. */
static int event_time(double *t_s)
{
    CUDA_OK(cudaEventRecord(g_ev1, g_stream), "cudaEventRecord");
    CUDA_OK(cudaEventSynchronize(g_ev1), "cudaEventSynchronize");
    float ms = 0;
    CUDA_OK(cudaEventElapsedTime(&ms, g_ev0, g_ev1), "cudaEventElapsedTime");
    *t_s = ms * 1e-3;
    return 0;
}

static int gpu_setup(int device, bench_host *h)
{
    CUDA_OK(cudaSetDevice(device), "cudaSetDevice");
    cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    g_sms = prop.multiProcessorCount > 0 ? prop.multiProcessorCount : 1;
    snprintf(h->device, sizeof h->device, "%.150s", prop.name);
    int v = 0;
    if (cudaDriverGetVersion(&v) == cudaSuccess)
        snprintf(h->driver, sizeof h->driver, "CUDA driver API %d.%d", v / 1000, (v % 1000) / 10);
    if (cudaRuntimeGetVersion(&v) == cudaSuccess)
        snprintf(h->cuda, sizeof h->cuda, "%d.%d", v / 1000, (v % 1000) / 10);
    if (ncclGetVersion(&v) == ncclSuccess)
        snprintf(h->nccl, sizeof h->nccl, "%d.%d.%d", v / 10000, (v % 10000) / 100, v % 100);
    /* a blocking stream: ordered with the synchronous cudaMemset/cudaMemcpy of alloc/upload */
    CUDA_OK(cudaStreamCreate(&g_stream), "cudaStreamCreate");
    CUDA_OK(cudaEventCreate(&g_ev0), "cudaEventCreate");
    CUDA_OK(cudaEventCreate(&g_ev1), "cudaEventCreate");
    CUDA_OK(cudaStreamCreate(&g_side), "cudaStreamCreate");
    cudaEvent_t *evs[] = {&g_tr0, &g_tr1, &g_gm0, &g_gm1};
    for (int i = 0; i < 4; i++)
        CUDA_OK(cudaEventCreate(evs[i]), "cudaEventCreate");
    BLAS_OK(cublasCreate(&g_blas), "cublasCreate");
    BLAS_OK(cublasSetStream(g_blas, g_stream), "cublasSetStream");
    if (cublasGetVersion(g_blas, &v) == CUBLAS_STATUS_SUCCESS)
        snprintf(h->blas, sizeof h->blas, "cuBLAS %d.%d.%d", v / 10000, (v % 10000) / 100, v % 100);
    return 0;
}

static int gpu_init(int *argc, char ***argv, bench_host *h, sc_err *err)
{
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev < 1)
        return sc_err_set(err, SC_ERUNTIME, "", "", "no CUDA device found (%s)",
                          e != cudaSuccess ? cudaGetErrorString(e) : "the driver reports 0 devices");
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    h->cores = cores > 0 ? (int)cores : 1;
    char host[128] = "";
    gethostname(host, sizeof host - 1);
    snprintf(h->hostname, sizeof h->hostname, "%s", host);
#ifdef SC_WITH_MPI
    if (MPI_Init(argc, argv) != MPI_SUCCESS)
        return sc_err_set(err, SC_ERUNTIME, "MPI_Init", "", "failed");
    MPI_Comm_rank(MPI_COMM_WORLD, &h->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &h->ranks);
    MPI_Comm local, leaders;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, h->rank, MPI_INFO_NULL, &local);
    int lsize = 1, node = 0, is_leader, nodes = 0, mn, mx;
    MPI_Comm_rank(local, &h->local_rank);
    MPI_Comm_size(local, &lsize);
    MPI_Comm_split(MPI_COMM_WORLD, h->local_rank == 0 ? 0 : MPI_UNDEFINED, h->rank, &leaders);
    if (leaders != MPI_COMM_NULL) {
        MPI_Comm_rank(leaders, &node);
        MPI_Comm_free(&leaders);
    }
    MPI_Bcast(&node, 1, MPI_INT, 0, local);
    MPI_Comm_free(&local);
    h->node = node;
    is_leader = h->local_rank == 0;
    MPI_Allreduce(&is_leader, &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&lsize, &mn, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&lsize, &mx, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    h->nodes = nodes;
    h->uneven_nodes = mn != mx;
    h->ranks_per_node = lsize;
    MPI_Bcast(&h->ranks_per_node, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(h->hostname, (int)sizeof h->hostname, MPI_CHAR, 0, MPI_COMM_WORLD);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, ",\n")] = '\0';
    snprintf(h->mpi, sizeof h->mpi, "%.120s", lib);
    if (lsize > ndev && h->rank == 0)
        fprintf(stderr, "shardcast-bench-gpu: warning: %d ranks per node share %d GPUs\n", lsize, ndev);
    if (gpu_setup(h->local_rank % ndev, h))
        return sc_err_set(err, SC_ERUNTIME, "", "", "%s", g_err);
    ncclUniqueId id;
    if (h->rank == 0 && ncclGetUniqueId(&id) != ncclSuccess)
        memset(&id, 0, sizeof id);
    MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclResult_t r = ncclCommInitRank(&g_world.c, h->ranks, id, h->rank);
    if (r != ncclSuccess)
        return sc_err_set(err, SC_ERUNTIME, "ncclCommInitRank", "", "%s", ncclGetErrorString(r));
#else
    (void)argc;
    (void)argv;
    int n = launched_ranks();
    if (n > 1)
        return sc_err_set(err, SC_ERUNTIME, "", "", "launched as %d ranks, but built without MPI: one rank only "
                          "(rebuild where mpicc is found: make bench-gpu)", n);
    h->rank = 0;
    h->ranks = 1;
    h->local_rank = 0;
    h->ranks_per_node = 1;
    h->node = 0;
    h->nodes = 1;
    if (gpu_setup(0, h))
        return sc_err_set(err, SC_ERUNTIME, "", "", "%s", g_err);
    int dev = 0;
    ncclResult_t r = ncclCommInitAll(&g_world.c, 1, &dev);
    if (r != ncclSuccess)
        return sc_err_set(err, SC_ERUNTIME, "ncclCommInitAll", "", "%s", ncclGetErrorString(r));
#endif
    g_world.rank = h->rank;
    g_world.size = h->ranks;
    g_ready = 1;
    return 0;
}

static void gpu_finalize(void)
{
    if (g_ready) {
        cudaStreamSynchronize(g_stream);
        ncclCommDestroy(g_world.c);
        cublasDestroy(g_blas);
        cudaEventDestroy(g_ev0);
        cudaEventDestroy(g_ev1);
        cudaEventDestroy(g_tr0);
        cudaEventDestroy(g_tr1);
        cudaEventDestroy(g_gm0);
        cudaEventDestroy(g_gm1);
        cudaStreamDestroy(g_side);
        cudaStreamDestroy(g_stream);
    }
#ifdef SC_WITH_MPI
    MPI_Finalize();
#endif
}

static void gpu_abort(int status)
{
    if (g_ready)
        ncclCommAbort(g_world.c);
#ifdef SC_WITH_MPI
    MPI_Abort(MPI_COMM_WORLD, status);
#endif
    exit(status);
}

static bench_comm *gpu_world(void) { return &g_world; }

static int gpu_split(bench_comm *parent, int color, int key, bench_comm **out)
{
    bench_comm *c = (bench_comm *)calloc(1, sizeof *c);
    if (!c) {
        snprintf(g_err, sizeof g_err, "out of memory");
        return SC_ERUNTIME;
    }
    ncclResult_t r = ncclCommSplit(parent->c, color, key, &c->c, NULL);
    if (r != ncclSuccess) {
        free(c);
        snprintf(g_err, sizeof g_err, "ncclCommSplit: %s", ncclGetErrorString(r));
        return SC_ERUNTIME;
    }
    if (ncclCommUserRank(c->c, &c->rank) != ncclSuccess || ncclCommCount(c->c, &c->size) != ncclSuccess) {
        ncclCommDestroy(c->c);
        free(c);
        snprintf(g_err, sizeof g_err, "ncclCommUserRank/ncclCommCount failed");
        return SC_ERUNTIME;
    }
    *out = c;
    return 0;
}

static void gpu_comm_free(bench_comm *c)
{
    if (!c || c == &g_world)
        return;
    ncclCommDestroy(c->c);
    free(c);
}

static int gpu_comm_rank(const bench_comm *c) { return c->rank; }
static int gpu_comm_size(const bench_comm *c) { return c->size; }

static void *gpu_alloc(size_t bytes)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 256);
    if (e != cudaSuccess) {
        snprintf(g_err, sizeof g_err, "cudaMalloc(%zu): %s", bytes, cudaGetErrorString(e));
        return NULL;
    }
    if (cudaMemset(p, 0, bytes ? bytes : 256) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) {
        snprintf(g_err, sizeof g_err, "cudaMemset(%zu) failed", bytes);
        cudaFree(p);
        return NULL;
    }
    return p;
}

static void gpu_release(void *p) { cudaFree(p); }

static int gpu_upload(void *dst, const void *src, size_t bytes)
{
    CUDA_OK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to device");
    CUDA_OK(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); /* pageable copies may return early */
    return 0;
}

static int gpu_download(void *dst, const void *src, size_t bytes)
{
    CUDA_OK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy from device");
    return 0;
}

static int gpu_coll(bench_comm *c, bench_coll kind, bench_dtype dt, const void *send, void *recv, size_t count,
                    double *t_s)
{
    ncclDataType_t t = dt == BENCH_BF16 ? ncclBfloat16 : ncclFloat32;
    CUDA_OK(cudaEventRecord(g_ev0, g_stream), "cudaEventRecord");
    switch (kind) {
    case BENCH_ALLGATHER: NCCL_OK(ncclAllGather(send, recv, count, t, c->c, g_stream), "ncclAllGather"); break;
    case BENCH_REDUCESCATTER:
        NCCL_OK(ncclReduceScatter(send, recv, count, t, ncclSum, c->c, g_stream), "ncclReduceScatter");
        break;
    case BENCH_ALLREDUCE: NCCL_OK(ncclAllReduce(send, recv, count, t, ncclSum, c->c, g_stream), "ncclAllReduce"); break;
    default: snprintf(g_err, sizeof g_err, "unknown collective"); return SC_ERUNTIME;
    }
    return event_time(t_s);
}

/* Enqueue one GEMM on g_stream (through g_blas). */
static int enqueue_gemm(bench_dtype dt, int ta, int tb, int m, int n, int k, int batch, const void *A, const void *B,
                        void *C)
{
    /* Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands. */
    const cudaDataType_t ty = dt == BENCH_BF16 ? CUDA_R_16BF : CUDA_R_32F;
    const float alpha = 1.0f, beta = 0.0f;
    const int lda = ta ? m : k, ldb = tb ? k : n, ldc = n;
    const cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (batch <= 1)
        BLAS_OK(cublasGemmEx(g_blas, opb, opa, n, m, k, &alpha, B, ty, ldb, A, ty, lda, &beta, C, ty, ldc,
                             CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                "cublasGemmEx");
    else
        BLAS_OK(cublasGemmStridedBatchedEx(g_blas, opb, opa, n, m, k, &alpha, B, ty, ldb, (long long)k * n, A, ty, lda,
                                           (long long)m * k, &beta, C, ty, ldc, (long long)m * n, batch,
                                           CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                "cublasGemmStridedBatchedEx");
    return 0;
}

/* Holds the stream for ns nanoseconds of the GPU's global timer (PTX %globaltimer, sm_70 and
 * later): the GEMMs the host enqueues meanwhile are all queued when the timing event after it
 * fires, so their span is the GPU's back-to-back time with no host launch inside (the technique
 * of NVIDIA's nvbench "blocking kernel", github.com/NVIDIA/nvbench nvbench/blocking_kernel.cuh). */
__global__ void sc_hold(unsigned long long ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    while (t - t0 < ns);
}

/* Host time to enqueue one cuBLAS GEMM is a few microseconds; the hold covers 20 us a GEMM (the
 * isolated calls' floor on the lent GPUs was 11-15 us including the event pair:
 * bench/gpu-results/2026-11-27-h200/harness-measurements.json, 128^3 to 1024^3), plus 50 us. */
static int gpu_gemm(bench_dtype dt, int ta, int tb, int m, int n, int k, int batch, int reps, const void *A,
                    const void *B, void *C, double *t_s)
{
    if (reps >= 1) {
        sc_hold<<<1, 1, 0, g_stream>>>(50000ull + 20000ull * (unsigned long long)reps);
        CUDA_OK(cudaGetLastError(), "hold kernel");
    }
    const int calls = reps < 1 ? 1 : reps;
    CUDA_OK(cudaEventRecord(g_ev0, g_stream), "cudaEventRecord");
    for (int i = 0; i < calls; i++) {
        int rc = enqueue_gemm(dt, ta, tb, m, n, k, batch, A, B, C);
        if (rc)
            return rc;
    }
    int rc = event_time(t_s);
    if (!rc) /* on an error *t_s was not written */
        *t_s /= calls;
    return rc;
}

/* Grid-stride 16-byte copy: every byte read once and written once. */
__global__ void sc_copy16(const uint4 *__restrict__ src, uint4 *__restrict__ dst, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = src[i];
}

static int gpu_membw(void *dst, const void *src, size_t bytes, double *t_s)
{
    size_t n16 = bytes / 16, tail = bytes % 16;
    size_t want = (n16 + 255) / 256;
    size_t cap = (size_t)g_sms * 16;
    unsigned blocks = (unsigned)(want < 1 ? 1 : want > cap ? cap : want);
    CUDA_OK(cudaEventRecord(g_ev0, g_stream), "cudaEventRecord");
    if (n16)
        sc_copy16<<<blocks, 256, 0, g_stream>>>((const uint4 *)src, (uint4 *)dst, n16);
    CUDA_OK(cudaGetLastError(), "copy kernel");
    if (tail)
        CUDA_OK(cudaMemcpyAsync((char *)dst + n16 * 16, (const char *)src + n16 * 16, tail, cudaMemcpyDeviceToDevice,
                                g_stream),
                "cudaMemcpyAsync");
    return event_time(t_s);
}

/* Concurrent device copies stand in for a collective's traffic where one rank has nobody to talk
 * to: a copy kernel of as many CTAs as NCCL runs channels, NCCL's Simple-protocol thread count
 * each (NCCL src/device: one CTA per channel, NCCL_SIMPLE_MAX_NTHREADS 512; 16 channels is a
 * typical ring count on NVLink nodes, NCCL_MAX_NCHANNELS is 32). It takes SMs and HBM bandwidth
 * the way NCCL's kernels do, without the links. */
enum { COPY_CTAS = 16, COPY_THREADS = 512 };

static int gpu_interfere(bench_comm *c, bench_traffic traffic, bench_dtype dt, int m, int n, int k, int gemms,
                         const void *A, const void *B, void *C, const void *src, void *dst, size_t bytes,
                         int traffic_ops, double *t_gemm_s, double *t_traffic_s, double *covered_s)
{
    *t_gemm_s = *t_traffic_s = *covered_s = 0;
    const int with_traffic = traffic != BENCH_TRAFFIC_NONE && traffic_ops > 0;
    const size_t esz = dt == BENCH_BF16 ? 2 : 4;
    const ncclDataType_t t = dt == BENCH_BF16 ? ncclBfloat16 : ncclFloat32;
    CUDA_OK(cudaStreamSynchronize(g_stream), "cudaStreamSynchronize");
    CUDA_OK(cudaStreamSynchronize(g_side), "cudaStreamSynchronize");
    if (with_traffic) {
        CUDA_OK(cudaEventRecord(g_tr0, g_side), "cudaEventRecord");
        for (int i = 0; i < traffic_ops; i++) {
            if (traffic == BENCH_TRAFFIC_ALLREDUCE) {
                NCCL_OK(ncclAllReduce(src, dst, bytes / esz, t, ncclSum, c->c, g_side), "ncclAllReduce");
            } else {
                sc_copy16<<<COPY_CTAS, COPY_THREADS, 0, g_side>>>((const uint4 *)src, (uint4 *)dst, bytes / 16);
                CUDA_OK(cudaGetLastError(), "copy kernel");
            }
        }
        CUDA_OK(cudaEventRecord(g_tr1, g_side), "cudaEventRecord");
        /* the GEMMs start once the traffic has started: it spans them from their beginning */
        CUDA_OK(cudaStreamWaitEvent(g_stream, g_tr0, 0), "cudaStreamWaitEvent");
    }
    if (gemms > 0) {
        CUDA_OK(cudaEventRecord(g_gm0, g_stream), "cudaEventRecord");
        for (int i = 0; i < gemms; i++) {
            int rc = enqueue_gemm(dt, 0, 0, m, n, k, 1, A, B, C);
            if (rc)
                return rc;
        }
        CUDA_OK(cudaEventRecord(g_gm1, g_stream), "cudaEventRecord");
    }
    CUDA_OK(cudaStreamSynchronize(g_stream), "cudaStreamSynchronize");
    CUDA_OK(cudaStreamSynchronize(g_side), "cudaStreamSynchronize");
    float gm = 0, tr = 0;
    if (gemms > 0) {
        CUDA_OK(cudaEventElapsedTime(&gm, g_gm0, g_gm1), "cudaEventElapsedTime");
        *t_gemm_s = gm * 1e-3;
    }
    if (with_traffic) {
        CUDA_OK(cudaEventElapsedTime(&tr, g_tr0, g_tr1), "cudaEventElapsedTime");
        *t_traffic_s = tr * 1e-3;
    }
    if (with_traffic && gemms > 0) {
        /* times from the traffic's start: the GEMMs begin at g0 >= 0 (they waited for it) */
        float g0 = 0, g1 = 0;
        CUDA_OK(cudaEventElapsedTime(&g0, g_tr0, g_gm0), "cudaEventElapsedTime");
        CUDA_OK(cudaEventElapsedTime(&g1, g_tr0, g_gm1), "cudaEventElapsedTime");
        double end = g1 < tr ? g1 : tr, cov = (end - g0) * 1e-3;
        *covered_s = cov > 0 ? cov : 0;
    }
    return 0;
}

static double gpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int gpu_barrier(void)
{
    CUDA_OK(cudaStreamSynchronize(g_stream), "cudaStreamSynchronize");
#ifdef SC_WITH_MPI
    if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS) {
        snprintf(g_err, sizeof g_err, "MPI_Barrier failed");
        return SC_ERUNTIME;
    }
#endif
    return 0;
}

static int gpu_host_allreduce(double *v, int n, int max)
{
#ifdef SC_WITH_MPI
    if (MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, max ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS) {
        snprintf(g_err, sizeof g_err, "MPI_Allreduce failed");
        return SC_ERUNTIME;
    }
#else
    (void)v;
    (void)n;
    (void)max;
#endif
    return 0;
}

static int gpu_host_gather(const void *send, size_t bytes, void *recv)
{
#ifdef SC_WITH_MPI
    if (bytes > INT32_MAX ||
        MPI_Gather(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS) {
        snprintf(g_err, sizeof g_err, "MPI_Gather failed");
        return SC_ERUNTIME;
    }
#else
    memcpy(recv, send, bytes);
#endif
    return 0;
}

const bench_backend *bench_backend_get(void)
{
    static bench_backend b;
    if (!b.name) {
        b.name = "gpu";
        b.dtype = BENCH_BF16;
        b.default_max_bytes = (size_t)1 << 30;
        b.default_membw_bytes = (size_t)1 << 30;
        b.default_gemm_max = 8192;
        b.default_hidden = 4096;
        b.default_seq = 2048;
        b.default_layers = 4;
        b.init = gpu_init;
        b.finalize = gpu_finalize;
        b.abort = gpu_abort;
        b.error = gpu_error;
        b.world = gpu_world;
        b.split = gpu_split;
        b.comm_free = gpu_comm_free;
        b.comm_rank = gpu_comm_rank;
        b.comm_size = gpu_comm_size;
        b.alloc = gpu_alloc;
        b.release = gpu_release;
        b.upload = gpu_upload;
        b.download = gpu_download;
        b.coll = gpu_coll;
        b.gemm = gpu_gemm;
        b.membw = gpu_membw;
        b.interfere = gpu_interfere;
        b.now = gpu_now;
        b.barrier = gpu_barrier;
        b.host_allreduce = gpu_host_allreduce;
        b.host_gather = gpu_host_gather;
    }
    return &b;
}
