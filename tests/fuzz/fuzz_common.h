/* fuzz_common.h — what the libFuzzer targets share: the input as a string or as a file (one memfd
 * rewritten per input, read through /proc/self/fd), shipped specs loaded once to check parsed
 * layouts against, and the rule every target enforces: a parser returns 0 or SC_EINPUT, never
 * anything else, never crashes (ASan + UBSan with -fno-sanitize-recover=all). Not a test of
 * answers: the Check suites say what those must be. */
#ifndef SC_FUZZ_COMMON_H
#define SC_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../base/err.h"
#include "../../model/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A parser's status must be 0 or SC_EINPUT. */
#define FZ_EXPECT(rc)                                                                              \
    do {                                                                                           \
        int fz_rc_ = (rc);                                                                         \
        if (fz_rc_ != 0 && fz_rc_ != SC_EINPUT) {                                                  \
            fprintf(stderr, "fuzz: status %d at %s:%d\n", fz_rc_, __FILE__, __LINE__);             \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* data as a NUL-terminated string (caller frees). */
static inline char *fz_str(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (s) {
        memcpy(s, data, size);
        s[size] = '\0';
    }
    return s;
}

/* data as a file; returns its path (valid until the next call). */
static inline const char *fz_file(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("fuzz-input", 0);
        if (fd < 0)
            abort();
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
        abort();
    return path;
}

/* The repository's configs (the fuzzer runs from the repository root). */
static inline const char *fz_configs(void)
{
    const char *e = getenv("SHARDCAST_CONFIGS");
    return e && *e ? e : "configs";
}

/* A shipped cluster, loaded once per process (NULL if it cannot be read). */
static inline const spec_cluster *fz_cluster(int i)
{
    static const char *const names[] = {"p4d.24xlarge", "p3dn.24xlarge", "luwu-8x100g"};
    static spec_cluster c[3];
    static int state[3];
    if (!state[i]) {
        char path[512];
        sc_err err;
        snprintf(path, sizeof path, "%s/clusters/%s.json", fz_configs(), names[i]);
        state[i] = spec_load_cluster(path, &c[i], &err) ? -1 : 1;
        if (state[i] < 0)
            fprintf(stderr, "fuzz: cannot load %s: %s\n", path, err.text);
    }
    return state[i] > 0 ? &c[i] : NULL;
}

static inline const spec_model *fz_model(void)
{
    static spec_model m;
    static int state;
    if (!state) {
        char path[512];
        sc_err err;
        snprintf(path, sizeof path, "%s/models/gpt3-13b.json", fz_configs());
        state = spec_load_model(path, &m, &err) ? -1 : 1;
    }
    return state > 0 ? &m : NULL;
}

/* Every check a parsed layout meets before the engines see it, on a few clusters and node counts:
 * they must answer, not crash (the AxoNN grid once overflowed int here). */
static inline void fz_check_layout(const spec_layout *l, unsigned salt)
{
    static const int nodes[] = {1, 2, 3, 16, 512, 1 << 20};
    sc_err err;
    for (int ci = 0; ci < 3; ci++) {
        const spec_cluster *c = fz_cluster(ci);
        if (!c)
            continue;
        for (size_t k = 0; k < sizeof nodes / sizeof nodes[0]; k++) {
            int n = nodes[(k + salt) % (sizeof nodes / sizeof nodes[0])];
            if (spec_nodes_check(c, n, "--nodes", &err))
                continue;
            if (spec_layout_check(l, c, n, &err) == 0) {
                int size[SPEC_AXES], stride[SPEC_AXES];
                (void)spec_layout_axes(l, n * c->gpus_per_node, size, stride);
                (void)spec_layout_shard(l, n * c->gpus_per_node);
            }
        }
    }
    if (fz_model())
        FZ_EXPECT(spec_layout_check_model(l, fz_model(), &err));
}

#endif
