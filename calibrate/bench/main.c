/* main.c — `shardcast-bench` / `shardcast-bench-gpu`: options, then backend start, the driver,
 * backend stop. The backend is the one the binary was linked with (cpu.c or bench_gpu.cu);
 * options are parsed before MPI or CUDA start, so a bad option exits 2 at once on every rank.
 * Not here: what is measured or how (driver.c), MPI/CUDA (backend.h). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../base/proc.h"
#include "../../model/spec.h"
#include "../../model/workload.h"
#include "backend.h"
#include "driver.h"

static const char HELP[] =
    "usage: mpirun -np N %s [options] -o measurements.json\n\n"
    "Calibration harness of shardcast (one rank per %s): collectives over the world, partition,\n"
    "replica, rail and intra-node communicators across message sizes, GEMMs, memory bandwidth, (GPU)\n"
    "the slowdown of GEMMs beside communication, and a real sharded training step, written as\n"
    "measurements.json (schema shardcast-measurements/1, see calibrate/README.md) for\n"
    "`shardcast calibrate fit`. Every time is per operation after a world\n"
    "barrier (max over ranks; mean, min and p95 over iterations).\n\n"
    "  --backend cpu|gpu      must match this binary (%s); shardcast-bench is cpu, shardcast-bench-gpu gpu\n"
    "  --min BYTES            smallest collective size S (nccl-tests S; K, M, G suffixes; default 1K)\n"
    "  --max BYTES            largest, doubling from --min (default %s)\n"
    "  --iters N              timed iterations of every measurement (default 20)\n"
    "  --warmup N             untimed iterations before them (default 5)\n"
    "  --groups SPEC          communicators: p=P[,P...] partition sizes (each with its partition, replica,\n"
    "                         rail and intra-node groups), or world (default: every p dividing the ranks\n"
    "                         that divides or is a multiple of the ranks per node)\n"
    "  --skip LIST            leave out some of: collectives,gemm,membw,interference\n"
    "  --gemm-max N           square GEMM grid 128, 256, ... N (0 = none; default %d)\n"
    "  --gemm-model NAME|FILE also the GEMM shapes of that model's transformer layer (configs/models)\n"
    "  --gemm-warm-s S        run each GEMM shape back to back S seconds before timing it, so the clock is\n"
    "                         the one a sustained load settles at (default %g; 0 = only --warmup calls)\n"
    "  --membw-max BYTES      largest memory copy (1M, 4M, ... up to it; 0 = none; default %s)\n"
    "  --interference-bytes B interference (GPU): 4096^3 and 8192^3 GEMMs alone, then while all-reduces of\n"
    "                         B bytes (with one rank: device copies of B bytes) run on another stream\n"
    "                         (0 = none; default 256M)\n"
    "  --step LIST            the real sharded step under these layouts: zero3, mics:p=P[,hier=0]\n"
    "                         (e.g. zero3,mics:p=2); parameters sharded over the partition group,\n"
    "                         all-gathered before forward and backward, GEMMs, gradients\n"
    "                         reduce-scattered, MiCS replicas all-reduced at the end of the step\n"
    "  --layers L             step: transformer layers (default %d)\n"
    "  --hidden H             step: hidden size (default %d)\n"
    "  --ffn F                step: MLP size (default 4 x hidden)\n"
    "  --seq S                step: sequence length (default %d)\n"
    "  --micro-batch B        step: sequences per rank per micro-step (default 1)\n"
    "  --grad-accum A         step: micro-steps per step (default 1)\n"
    "  --steps N              step: measured steps (default 5, after --warmup of at least 1)\n"
    "  --trace FILE           Chrome trace of the last measured step (rank 0 gathers every rank's spans;\n"
    "                         one process per node, thread local_rank*8 + 0 compute / + 1 comm; with\n"
    "                         several --step layouts the others go to FILE with .<layout> before .json)\n"
    "  --note TEXT            appended to host.note (e.g. the emulated network rate)\n"
    "  -o, --out FILE         measurements.json (default measurements.json; written to a temporary\n"
    "                         file beside it, then renamed: whole or absent)\n"
    "  --quiet                no tables on stdout\n"
    "  --dry-run              check the options and exit\n"
    "  -h, --help             this help\n";

static const char *prog = "shardcast-bench";

/* Print once under mpirun (rank 0 of the launch, or a plain run). */
static int first_rank(void)
{
    const char *v = getenv("OMPI_COMM_WORLD_RANK");
    if (!v)
        v = getenv("PMI_RANK");
    return !v || !strcmp(v, "0");
}

/* "unknown option '--x'", "option '--min' needs a value": one line, exit status 2. */
static int usage_error(const char *what, const char *arg)
{
    if (first_rank())
        fprintf(stderr, "%s: %s '%s'%s (try '%s --help')\n", prog, what, arg,
                !strcmp(what, "option") ? " needs a value" : "", prog);
    return 2;
}

static int bad_value(const char *opt, const char *expected, const char *got)
{
    if (first_rank())
        fprintf(stderr, "%s: %s: expected %s, got \"%s\"\n", prog, opt, expected, got);
    return 2;
}

static int parse_long(const char *arg, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (errno || end == arg || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int parse_int(const char *arg, int lo, int hi, int *out)
{
    long v;
    if (parse_long(arg, lo, hi, &v))
        return -1;
    *out = (int)v;
    return 0;
}

/* "65536", "64K", "1M", "2G" (binary multiples, as nccl-tests) */
static int parse_bytes(const char *arg, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(arg, &end, 10);
    if (errno || end == arg || arg[0] == '-')
        return -1;
    unsigned long long mul = 1;
    if (*end == 'K' || *end == 'k')
        mul = 1ull << 10, end++;
    else if (*end == 'M' || *end == 'm')
        mul = 1ull << 20, end++;
    else if (*end == 'G' || *end == 'g')
        mul = 1ull << 30, end++;
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end || v > (1ull << 40) / mul)
        return -1;
    *out = (size_t)(v * mul);
    return 0;
}

static void bytes_str(size_t b, char *out, size_t n)
{
    if (b >= (1u << 30) && b % (1u << 30) == 0)
        snprintf(out, n, "%zuG", b >> 30);
    else if (b >= (1u << 20) && b % (1u << 20) == 0)
        snprintf(out, n, "%zuM", b >> 20);
    else if (b >= 1024 && b % 1024 == 0)
        snprintf(out, n, "%zuK", b >> 10);
    else
        snprintf(out, n, "%zu", b);
}

static int parse_groups(const char *arg, bench_opts *o)
{
    if (!strcmp(arg, "world")) {
        o->world_only = 1;
        return 0;
    }
    if (strncmp(arg, "p=", 2))
        return -1;
    char buf[256];
    if (strlen(arg + 2) >= sizeof buf)
        return -1;
    snprintf(buf, sizeof buf, "%s", arg + 2);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (o->n_p >= BENCH_MAX_P || parse_int(t, 1, 1 << 20, &o->p[o->n_p]))
            return -1;
        o->n_p++;
    }
    return o->n_p ? 0 : -1;
}

static int parse_skip(const char *arg, bench_opts *o)
{
    char buf[256];
    if (strlen(arg) >= sizeof buf)
        return -1;
    snprintf(buf, sizeof buf, "%s", arg);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (!strcmp(t, "collectives"))
            o->skip_coll = 1;
        else if (!strcmp(t, "gemm") || !strcmp(t, "gemms"))
            o->skip_gemm = 1;
        else if (!strcmp(t, "membw"))
            o->skip_membw = 1;
        else if (!strcmp(t, "interference"))
            o->skip_interf = 1;
        else
            return -1;
    }
    return 0;
}

/* "zero3,mics:p=2,mics:p=16,hier=0": split at commas, but "hier=0" belongs to the layout before. */
static int parse_steps(const char *arg, bench_opts *o, char *bad, size_t n_bad)
{
    char buf[512];
    snprintf(bad, n_bad, "%.150s", arg);
    if (strlen(arg) >= sizeof buf)
        return -1;
    snprintf(buf, sizeof buf, "%s", arg);
    char items[BENCH_MAX_STEPS][128];
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int joins = n > 0 && strchr(t, '=') && !strchr(t, ':');
        if (joins) {
            size_t l = strlen(items[n - 1]);
            snprintf(items[n - 1] + l, sizeof items[0] - l, ",%s", t);
            continue;
        }
        if (n + o->n_steps >= BENCH_MAX_STEPS)
            return -1;
        snprintf(items[n++], sizeof items[0], "%s", t);
    }
    for (int i = 0; i < n; i++) {
        spec_layout l;
        sc_err err;
        if (spec_layout_parse(items[i], &l, &err) || (l.kind != LAYOUT_ZERO3 && l.kind != LAYOUT_MICS)) {
            snprintf(bad, n_bad, "%.120s", items[i]);
            return -1;
        }
        o->step[o->n_steps++] = l;
    }
    return n ? 0 : -1;
}

/* The block's GEMM shapes of a model, at this micro-batch. */
static int load_gemm_model(const char *name, bench_opts *o, const bench_backend *be)
{
    char exe[4096], roots[2][4200], path[4200];
    proc_self_dir(NULL, exe, sizeof exe);
    snprintf(roots[0], sizeof roots[0], "%s/configs", exe);
    snprintf(roots[1], sizeof roots[1], "%s/../share/shardcast/configs", exe);
    const char *const r[2] = {roots[0], roots[1]};
    sc_err err;
    spec_model m;
    if (spec_resolve("models", name, r, 2, path, sizeof path, &err) || spec_load_model(path, &m, &err)) {
        if (first_rank()) {
            char buf[1024];
            fprintf(stderr, "%s: --gemm-model: %s\n", prog, sc_err_str(&err, buf, sizeof buf));
        }
        return 2;
    }
    spec_training t;
    spec_training_defaults(&t);
    t.micro_batch = o->shape.micro_batch;
    t.precision = be->dtype == BENCH_BF16 ? PREC_BF16 : PREC_FP32;
    wl w;
    wl_build(&m, &t, &w);
    for (int i = 0; i < w.n_layers; i++)
        if (w.layer[i].kind == WL_BLOCK) {
            o->n_model_gemms = w.layer[i].n_gemm;
            memcpy(o->model_gemm, w.layer[i].gemm, sizeof(wl_gemm) * (size_t)w.layer[i].n_gemm);
        }
    snprintf(o->gemm_model, sizeof o->gemm_model, "%s", m.name);
    return 0;
}

enum {
    O_BACKEND = 1000, O_MIN, O_MAX, O_ITERS, O_WARMUP, O_GROUPS, O_SKIP, O_GEMM_MAX, O_GEMM_WARM, O_GEMM_MODEL, O_MEMBW, O_INTERF, O_STEP,
    O_LAYERS, O_HIDDEN, O_FFN, O_SEQ, O_MB, O_GA, O_STEPS, O_TRACE, O_NOTE, O_QUIET, O_DRY
};

/* The harness's defaults: the backend's sizes and shape, 20 timed iterations after 5 warm-up. */
static void bench_defaults(bench_opts *o, const bench_backend *be, int gpu)
{
    memset(o, 0, sizeof *o);
    o->min_bytes = 1024;
    o->max_bytes = be->default_max_bytes;
    o->iters = 20;
    o->warmup = 5;
    o->gemm_max = be->default_gemm_max;
    o->gemm_warm_s = gpu ? 1.0 : 0.0; /* GPUs: the power-limited clock (bench/gpu/README.md); CPUs: none */
    o->membw_bytes = be->default_membw_bytes;
    o->interf_bytes = (size_t)256 << 20;
    o->shape.layers = be->default_layers;
    o->shape.hidden = be->default_hidden;
    o->shape.seq_len = be->default_seq;
    o->shape.micro_batch = 1;
    o->shape.grad_accum = 1;
    o->timed_steps = 5;
    o->out = "measurements.json";
}

/* One option that sets a number, a size or a list of o from its value a; 0, or the exit status of
 * a bad value; -1: not one of them. */
static int bench_value(int opt, const char *a, bench_opts *o)
{
    char bad[160];
    switch (opt) {
    case O_MIN:
        if (parse_bytes(a, &o->min_bytes) || !o->min_bytes)
            return bad_value("--min", "a size in bytes such as 1024 or 64K", a);
        break;
    case O_MAX:
        if (parse_bytes(a, &o->max_bytes) || !o->max_bytes)
            return bad_value("--max", "a size in bytes such as 1M or 1G", a);
        break;
    case O_ITERS:
        if (parse_int(a, 1, 1000000, &o->iters))
            return bad_value("--iters", "an integer from 1 to 1000000", a);
        break;
    case O_WARMUP:
        if (parse_int(a, 0, 1000000, &o->warmup))
            return bad_value("--warmup", "an integer from 0 to 1000000", a);
        break;
    case O_GROUPS:
        if (parse_groups(a, o))
            return bad_value("--groups", "p=P[,P...] or world", a);
        break;
    case O_SKIP:
        if (parse_skip(a, o))
            return bad_value("--skip", "a list of collectives, gemm, membw, interference", a);
        break;
    case O_GEMM_MAX:
        if (parse_int(a, 0, 1 << 17, &o->gemm_max))
            return bad_value("--gemm-max", "an integer from 0 to 131072", a);
        break;
    case O_GEMM_WARM: {
        char *end = NULL;
        errno = 0;
        double v = strtod(a, &end);
        if (errno || end == a || *end || !(v >= 0 && v <= 600))
            return bad_value("--gemm-warm-s", "seconds from 0 to 600", a);
        o->gemm_warm_s = v;
        break;
    }
    case O_MEMBW:
        if (parse_bytes(a, &o->membw_bytes))
            return bad_value("--membw-max", "a size in bytes such as 64M", a);
        break;
    case O_INTERF:
        if (parse_bytes(a, &o->interf_bytes) || (o->interf_bytes && o->interf_bytes < 4096))
            return bad_value("--interference-bytes", "0 or a size of at least 4K such as 256M", a);
        break;
    case O_STEP:
        if (parse_steps(a, o, bad, sizeof bad))
            return bad_value("--step", "zero3 or mics:p=P[,hier=0], at most 8 of them", bad);
        break;
    case O_LAYERS:
        if (parse_int(a, 1, 4096, &o->shape.layers))
            return bad_value("--layers", "an integer from 1 to 4096", a);
        break;
    case O_HIDDEN:
        if (parse_int(a, 1, 1 << 17, &o->shape.hidden))
            return bad_value("--hidden", "an integer from 1 to 131072", a);
        break;
    case O_FFN:
        if (parse_int(a, 1, 1 << 19, &o->shape.ffn))
            return bad_value("--ffn", "an integer from 1 to 524288", a);
        break;
    case O_SEQ:
        if (parse_int(a, 1, 1 << 20, &o->shape.seq_len))
            return bad_value("--seq", "an integer from 1 to 1048576", a);
        break;
    case O_MB:
        if (parse_int(a, 1, 1 << 16, &o->shape.micro_batch))
            return bad_value("--micro-batch", "an integer from 1 to 65536", a);
        break;
    case O_GA:
        if (parse_int(a, 1, 1 << 16, &o->shape.grad_accum))
            return bad_value("--grad-accum", "an integer from 1 to 65536", a);
        break;
    case O_STEPS:
        if (parse_int(a, 1, 100000, &o->timed_steps))
            return bad_value("--steps", "an integer from 1 to 100000", a);
        break;
    default: return -1;
    }
    return 0;
}

/* The values checked together, the FFN width defaulted, the model's GEMMs loaded; 0 or the exit
 * status. */
static int bench_check(bench_opts *o, const bench_backend *be, const char *gemm_model)
{
    if (o->max_bytes < o->min_bytes) {
        char mn[32];
        bytes_str(o->min_bytes, mn, sizeof mn);
        if (first_rank())
            fprintf(stderr, "%s: --max: expected a size >= --min (%s), got %zu\n", prog, mn, o->max_bytes);
        return 2;
    }
    if (!o->shape.ffn)
        o->shape.ffn = 4 * o->shape.hidden;
    if (!*o->out)
        return bad_value("--out", "a file name", o->out);
    /* GEMM dimensions and buffers of the step must fit an int and a size_t comfortably */
    double step_elems = (double)o->shape.seq_len * o->shape.micro_batch * (3.0 * o->shape.hidden + o->shape.ffn);
    if (o->n_steps && step_elems > (double)INT_MAX)
        return bad_value("--seq", "a smaller seq x micro-batch x (3 hidden + ffn)", "too large");
    if (gemm_model) {
        int rc = load_gemm_model(gemm_model, o, be);
        if (rc)
            return rc;
    }
    return 0;
}

/* --help: the text with the backend's defaults. */
static int bench_help(const bench_backend *be, int gpu, const bench_opts *o)
{
    char mx[32], mb[32];
    bytes_str(be->default_max_bytes, mx, sizeof mx);
    bytes_str(be->default_membw_bytes, mb, sizeof mb);
    printf(HELP, prog, gpu ? "GPU" : "process", be->name, mx, be->default_gemm_max, o->gemm_warm_s, mb, be->default_layers,
           be->default_hidden, be->default_seq);
    return 0;
}

/* The command line into o (*gemm_model, *dry); -1 to go on, else the exit status. */
static int bench_args(int argc, char **argv, const bench_backend *be, int gpu, bench_opts *o, const char **gemm_model,
                      int *dry)
{
    static const struct option longopts[] = {
        {"backend", required_argument, 0, O_BACKEND}, {"min", required_argument, 0, O_MIN},
        {"max", required_argument, 0, O_MAX},         {"iters", required_argument, 0, O_ITERS},
        {"warmup", required_argument, 0, O_WARMUP},   {"groups", required_argument, 0, O_GROUPS},
        {"skip", required_argument, 0, O_SKIP},       {"gemm-max", required_argument, 0, O_GEMM_MAX},
        {"gemm-model", required_argument, 0, O_GEMM_MODEL},
        {"gemm-warm-s", required_argument, 0, O_GEMM_WARM}, {"membw-max", required_argument, 0, O_MEMBW},
        {"interference-bytes", required_argument, 0, O_INTERF},
        {"step", required_argument, 0, O_STEP},       {"layers", required_argument, 0, O_LAYERS},
        {"hidden", required_argument, 0, O_HIDDEN},   {"ffn", required_argument, 0, O_FFN},
        {"seq", required_argument, 0, O_SEQ},         {"micro-batch", required_argument, 0, O_MB},
        {"grad-accum", required_argument, 0, O_GA},   {"steps", required_argument, 0, O_STEPS},
        {"trace", required_argument, 0, O_TRACE},     {"note", required_argument, 0, O_NOTE},
        {"out", required_argument, 0, 'o'},           {"quiet", no_argument, 0, O_QUIET},
        {"dry-run", no_argument, 0, O_DRY},           {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    opterr = 0;
    for (;;) {
        int opt = getopt_long(argc, argv, ":ho:", longopts, NULL);
        if (opt == -1)
            break;
        const char *a = optarg;
        int rc = bench_value(opt, a, o);
        if (rc >= 0) {
            if (rc)
                return rc;
            continue;
        }
        switch (opt) {
        case 'h': return bench_help(be, gpu, o);
        case '?': return usage_error("unknown option", argv[optind - 1]);
        case ':': return usage_error("option", argv[optind - 1]);
        case O_BACKEND:
            if (strcmp(a, "cpu") && strcmp(a, "gpu"))
                return bad_value("--backend", "cpu or gpu", a);
            if (strcmp(a, be->name)) {
                if (first_rank())
                    fprintf(stderr, "%s: --backend %s: this binary is the %s harness; use %s\n", prog, a, be->name,
                            gpu ? "shardcast-bench" : "shardcast-bench-gpu (make bench-gpu)");
                return 2;
            }
            break;
        case O_GEMM_MODEL: *gemm_model = a; break;
        case O_TRACE: o->trace = a; break;
        case O_NOTE: o->note = a; break;
        case 'o': o->out = a; break;
        case O_QUIET: o->quiet = 1; break;
        case O_DRY: *dry = 1; break;
        default: return usage_error("unknown option", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return usage_error("unexpected argument", argv[optind]);
    return -1;
}

int main(int argc, char **argv)
{
    const bench_backend *be = bench_backend_get();
    int gpu = !strcmp(be->name, "gpu");
    prog = gpu ? "shardcast-bench-gpu" : "shardcast-bench";
    bench_opts o;
    bench_defaults(&o, be, gpu);
    const char *gemm_model = NULL;
    int dry = 0, rc;
    if ((rc = bench_args(argc, argv, be, gpu, &o, &gemm_model, &dry)) >= 0 || (rc = bench_check(&o, be, gemm_model)))
        return rc;
    if (dry)
        return 0;
    bench_host host;
    memset(&host, 0, sizeof host);
    sc_err err;
    sc_err_clear(&err);
    if (be->init(&argc, &argv, &host, &err)) {
        char buf[1024];
        fprintf(stderr, "%s: %s\n", prog, sc_err_str(&err, buf, sizeof buf));
        return 1;
    }
    rc = bench_run(be, &host, &o, &err);
    if (rc && (host.rank == 0 || rc != SC_EINPUT)) {
        char buf[1024];
        fprintf(stderr, "%s: %s\n", prog, sc_err_str(&err, buf, sizeof buf));
    }
    be->finalize();
    return rc == 0 ? 0 : rc == SC_EINPUT ? 2 : 1;
}
