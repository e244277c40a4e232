/* backend.h — what the calibration harness needs from a machine, as a small table of functions:
 * start and stop, communicators split by color/key, device memory, the three collectives, a GEMM,
 * a memory-bandwidth copy, optionally GEMMs beside concurrent traffic (interference), a clock,
 * and host-side reductions over all ranks. Two implementations:
 * cpu.c (MPI + CBLAS) and bench_gpu.cu (CUDA + NCCL + cuBLAS). Not here: what to measure, in
 * what order, or statistics and output (driver.c decides all of that, the same for both). */
#ifndef SC_BENCH_BACKEND_H
#define SC_BENCH_BACKEND_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "../../base/err.h"

typedef enum { BENCH_F32, BENCH_BF16 } bench_dtype;
typedef enum { BENCH_ALLGATHER, BENCH_REDUCESCATTER, BENCH_ALLREDUCE, BENCH_N_COLLS } bench_coll;

/* A communicator of the backend (an MPI_Comm or an ncclComm_t); opaque to the driver. */
typedef struct bench_comm bench_comm;

/* Communication-like traffic run beside GEMMs to measure interference (see interfere below). */
typedef enum {
    BENCH_TRAFFIC_NONE,      /* the GEMMs alone                                                  */
    BENCH_TRAFFIC_ALLREDUCE, /* NCCL all-reduces of the buffer on the communicator               */
    BENCH_TRAFFIC_COPY       /* device-to-device copies of the buffer by a kernel of a few CTAs,
                                standing in for a collective where one rank has nothing to send  */
} bench_traffic;

/* Facts about this rank and the machine, filled by init. Strings are "" when not known. */
typedef struct bench_host {
    int rank, ranks;        /* this process in the world, and the world size                 */
    int local_rank;         /* index among the ranks of this node                             */
    int ranks_per_node;     /* ranks on rank 0's node (uneven_nodes says whether all agree)   */
    int node, nodes;        /* this rank's node index (by lowest world rank), node count      */
    int uneven_nodes;       /* 1: nodes hold different rank counts                            */
    int cores;              /* online CPU cores of this host                                  */
    int blas_threads;       /* CPU backend: BLAS threads per rank                             */
    char device[160];       /* GPU name, or CPU model                                         */
    char driver[64], cuda[64], nccl[64], mpi[128], blas[128];
    char hostname[128];
} bench_host;

typedef struct bench_backend {
    const char *name;     /* "cpu" | "gpu": the JSON host.backend                                 */
    bench_dtype dtype;    /* of GEMMs and of the sharded step: fp32 on the CPU, bf16 on GPUs      */
    /* Default sizes where the user gives none (a CPU cannot do what a GPU does in a minute).     */
    size_t default_max_bytes, default_membw_bytes;
    int default_gemm_max;                   /* square GEMM grid: 128 .. this                       */
    int default_hidden, default_seq, default_layers;

    /* Start: MPI/NCCL/devices. 0 ok; <0 with err filled (the caller prints it and exits 1). */
    int (*init)(int *argc, char ***argv, bench_host *host, sc_err *err) SC_MUST_CHECK;
    void (*finalize)(void);
    /* End every rank now (after a failure on one of them), with this exit status. */
    void (*abort)(int status);
    /* Text of the last failure of any function below. */
    const char *(*error)(void);

    /* Communicators. split is collective over the parent, like MPI_Comm_split / ncclCommSplit:
     * ranks with the same color form one communicator, ordered by key. */
    bench_comm *(*world)(void);
    int (*split)(bench_comm *parent, int color, int key, bench_comm **out) SC_MUST_CHECK;
    void (*comm_free)(bench_comm *c);
    int (*comm_rank)(const bench_comm *c);
    int (*comm_size)(const bench_comm *c);

    /* Device memory (host memory for the CPU backend). The driver never dereferences it; it only
     * offsets pointers and moves bytes with upload/download. */
    void *(*alloc)(size_t bytes);
    void (*release)(void *p);
    int (*upload)(void *dst, const void *src_host, size_t bytes) SC_MUST_CHECK;
    int (*download)(void *dst_host, const void *src, size_t bytes) SC_MUST_CHECK;

    /* Operations. Each blocks until done and returns its own duration in *t_s (CUDA events on
     * the GPU, MPI_Wtime on the CPU). Collectives are out-of-place sums; count is, as in NCCL:
     * all-gather: elements each rank sends (receives count x n); reduce-scatter: elements each
     * rank receives (sends count x n); all-reduce: elements of the buffer. */
    int (*coll)(bench_comm *c, bench_coll kind, bench_dtype dt, const void *send, void *recv, size_t count,
                double *t_s) SC_MUST_CHECK;
    /* Row-major C[m x n] = op(A)[m x k] op(B)[k x n], packed operands (A is k x m when ta), batch
     * copies at strides m k, k n, m n. reps >= 1: that many such GEMMs back to back, *t_s the time
     * of one, the span over reps with no host launch inside it (gpu: enqueued behind a held stream;
     * cpu: one call after another): how a training step's stream runs its GEMMs, and what the model
     * prices (model/kernels.c launch_s: the gap of a kernel on a busy stream). reps = 0: one call
     * timed in isolation, the host's launch inside the time (the step measurement's own GEMMs). */
    int (*gemm)(bench_dtype dt, int ta, int tb, int m, int n, int k, int batch, int reps, const void *A, const void *B,
                void *C, double *t_s) SC_MUST_CHECK;
    /* Copy `bytes` from src to dst through the memory system (reads + writes = 2 x bytes). */
    int (*membw)(void *dst, const void *src, size_t bytes, double *t_s) SC_MUST_CHECK;
    /* Interference of communication with computation. Optional: NULL = not supported (cpu.c).
     * Enqueues `traffic_ops` operations of `traffic` over `bytes` (all-reduce: src -> dst on c,
     * count = bytes / element size; copy: src -> dst) on a second stream, then, starting no earlier
     * than the traffic, `gemms` GEMMs as gemm() (batch 1, no transposes) back to back on the compute
     * stream, and blocks until both are done. traffic = BENCH_TRAFFIC_NONE or traffic_ops = 0: the
     * GEMMs alone; gemms = 0: the traffic alone. Returns the span of the GEMMs in *t_gemm_s (0 when
     * none), of the traffic in *t_traffic_s (0 when none), and in *covered_s the part of the GEMM
     * span during which the traffic was still running (0 when either is absent). */
    int (*interfere)(bench_comm *c, bench_traffic traffic, bench_dtype dt, int m, int n, int k, int gemms,
                     const void *A, const void *B, void *C, const void *src, void *dst, size_t bytes,
                     int traffic_ops, double *t_gemm_s, double *t_traffic_s, double *covered_s) SC_MUST_CHECK;

    /* Host side, over all ranks of the world. */
    double (*now)(void); /* seconds, monotonic                                                */
    int (*barrier)(void) SC_MUST_CHECK;
    int (*host_allreduce)(double *v, int n, int max) SC_MUST_CHECK; /* in place: max (max = 1) or sum */
    /* Rank 0 receives every rank's `bytes` in rank order into recv (ignored elsewhere). */
    int (*host_gather)(const void *send, size_t bytes, void *recv) SC_MUST_CHECK;
} bench_backend;

/* The backend this binary was built with (cpu.c or bench_gpu.cu). */
const bench_backend *bench_backend_get(void);

#ifdef __cplusplus
}
#endif

#endif
