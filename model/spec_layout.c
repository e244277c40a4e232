/* spec_layout.c — layout strings ("mics:p=16,hier=0"), their checks against a cluster and node
 * count, and the resolution of config names to files. Not here: what a layout does per step
 * (model/layout.c) or how much memory it needs (model/memory.c). */
#include "spec.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <ctype.h>

static const char *const KIND_NAMES[] = {"ddp", "zero1", "zero2", "zero3", "mics", "hsdp", "zeropp"};
#define N_KINDS (int)(sizeof KIND_NAMES / sizeof KIND_NAMES[0])
#define LAYOUT_HINT "ddp, zero1, zero2, zero3, mics:p=P[,hier=0|1], hsdp:p=P[,sync=micro|boundary], zeropp:hpz=P"

static int is_readable_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, R_OK) == 0;
}

static int parse_pos_int(const char *v, int *out)
{
    if (!isdigit((unsigned char)v[0]))
        return -1;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < 1 || x > INT_MAX / 2)
        return -1;
    *out = (int)x;
    return 0;
}

int spec_layout_parse(const char *s, spec_layout *out, sc_err *err)
{
    char buf[128];
    memset(out, 0, sizeof *out);
    out->hier = 1;
    if (!s || !*s || strlen(s) >= sizeof buf)
        return sc_err_set(err, SC_EINPUT, "layout", "", "expected one of %s, got \"%.60s\"", LAYOUT_HINT, s ? s : "");
    snprintf(buf, sizeof buf, "%s", s);
    char *colon = strchr(buf, ':');
    if (colon)
        *colon = '\0';
    int kind = -1;
    for (int i = 0; i < N_KINDS; i++)
        if (!strcmp(buf, KIND_NAMES[i]))
            kind = i;
    if (kind < 0)
        return sc_err_set(err, SC_EINPUT, "layout", "", "expected one of %s, got \"%s\"", LAYOUT_HINT, s);
    out->kind = (spec_layout_kind)kind;
    int needs_p = kind == LAYOUT_MICS || kind == LAYOUT_HSDP || kind == LAYOUT_ZEROPP;
    if (!colon) {
        if (needs_p)
            return sc_err_set(err, SC_EINPUT, "layout", "", "\"%s\" needs its group size, e.g. \"%s\"", s,
                              kind == LAYOUT_ZEROPP ? "zeropp:hpz=8" : kind == LAYOUT_MICS ? "mics:p=8" : "hsdp:p=8");
        return 0;
    }
    if (!needs_p)
        return sc_err_set(err, SC_EINPUT, "layout", "", "\"%s\" takes no options, got \"%s\"", KIND_NAMES[kind], s);
    char *save = NULL;
    int seen_p = 0, seen_opt = 0;
    for (char *opt = strtok_r(colon + 1, ",", &save); opt; opt = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(opt, '=');
        if (!eq)
            return sc_err_set(err, SC_EINPUT, "layout", "", "in \"%s\": expected key=value, got \"%s\"", s, opt);
        *eq = '\0';
        const char *key = opt, *val = eq + 1;
        const char *pkey = kind == LAYOUT_ZEROPP ? "hpz" : "p";
        int *seen = !strcmp(key, pkey) ? &seen_p : &seen_opt;
        if (*seen)
            return sc_err_set(err, SC_EINPUT, "layout", "", "in \"%s\": option \"%s\" given twice", s, key);
        *seen = 1;
        if (!strcmp(key, pkey)) {
            if (parse_pos_int(val, &out->p))
                return sc_err_set(err, SC_EINPUT, "layout", "", "in \"%s\": expected %s to be a positive integer, got \"%s\"",
                                  s, pkey, val);
        } else if (kind == LAYOUT_MICS && !strcmp(key, "hier")) {
            if (strcmp(val, "0") && strcmp(val, "1"))
                return sc_err_set(err, SC_EINPUT, "layout", "", "in \"%s\": expected hier=0 or hier=1, got \"%s\"", s, val);
            out->hier = val[0] == '1';
        } else if (kind == LAYOUT_HSDP && !strcmp(key, "sync")) {
            if (strcmp(val, "micro") && strcmp(val, "boundary"))
                return sc_err_set(err, SC_EINPUT, "layout", "", "in \"%s\": expected sync=micro or sync=boundary, got \"%s\"",
                                  s, val);
            out->sync_boundary = !strcmp(val, "boundary");
        } else {
            return sc_err_set(err, SC_EINPUT, "layout", "", "in \"%s\": unknown option \"%s\" (expected %s)", s, key,
                              kind == LAYOUT_MICS ? "p, hier" : kind == LAYOUT_HSDP ? "p, sync" : "hpz");
        }
    }
    if (!out->p)
        return sc_err_set(err, SC_EINPUT, "layout", "", "in \"%s\": missing %s=P", s,
                          kind == LAYOUT_ZEROPP ? "hpz" : "p");
    return 0;
}

const char *spec_layout_str(const spec_layout *l, char *buf, unsigned long n)
{
    switch (l->kind) {
    case LAYOUT_MICS:
        snprintf(buf, n, l->hier ? "mics:p=%d" : "mics:p=%d,hier=0", l->p);
        break;
    case LAYOUT_HSDP:
        snprintf(buf, n, l->sync_boundary ? "hsdp:p=%d,sync=boundary" : "hsdp:p=%d", l->p);
        break;
    case LAYOUT_ZEROPP:
        snprintf(buf, n, "zeropp:hpz=%d", l->p);
        break;
    default:
        snprintf(buf, n, "%s", KIND_NAMES[l->kind]);
    }
    return buf;
}

int spec_layout_shard(const spec_layout *l, int n_ranks)
{
    switch (l->kind) {
    case LAYOUT_DDP: return 1;
    case LAYOUT_MICS:
    case LAYOUT_HSDP: return l->p;
    default: return n_ranks;
    }
}

int spec_nodes_check(const spec_cluster *c, int nodes, const char *source, sc_err *err)
{
    if (nodes < 1)
        return sc_err_set(err, SC_EINPUT, source, "", "expected a node count >= 1, got %d", nodes);
    if (c->max_nodes && nodes > c->max_nodes)
        return sc_err_set(err, SC_EINPUT, source, "", "expected at most %d nodes of %s, got %d", c->max_nodes, c->name,
                          nodes);
    return 0;
}

int spec_layout_check(const spec_layout *l, const spec_cluster *c, int nodes, sc_err *err)
{
    if (l->kind != LAYOUT_MICS && l->kind != LAYOUT_HSDP && l->kind != LAYOUT_ZEROPP)
        return 0;
    char name[64];
    spec_layout_str(l, name, sizeof name);
    int n = nodes * c->gpus_per_node, g = c->gpus_per_node, p = l->p;
    if (p > n || n % p)
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: expected a group size dividing the %d GPUs (%d nodes x %d), got %d",
                          name, n, nodes, g, p);
    /* A group either lives inside one node or spans whole nodes, so that groups never share a
     * node unevenly (MiCS paper §3.2; DeepSpeed requires the same of mics_shard_size). */
    if (!(g % p == 0 || p % g == 0))
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "%s: expected a group size that divides or is a multiple of %d GPUs per node, got %d", name, g, p);
    return 0;
}

int spec_resolve(const char *kind, const char *name, const char *const *roots, int n_roots, char *out,
                 unsigned long outlen, sc_err *err)
{
    size_t n = (size_t)outlen;
    if (!name || !*name)
        return sc_err_set(err, SC_EINPUT, kind, "", "expected a name or a path, got nothing");
    if (is_readable_file(name)) {
        snprintf(out, n, "%s", name);
        return 0;
    }
    if (strchr(name, '/') || strstr(name, ".json"))
        return sc_err_set(err, SC_EINPUT, name, "", "cannot read %s file: %s", kind, strerror(errno));
    const char *env = getenv("SHARDCAST_CONFIGS");
    const char *dirs[9];
    int nd = 0;
    const int has_env = env && *env;
    if (has_env)
        dirs[nd++] = env;
    for (int i = 0; i < n_roots && nd < 9; i++)
        if (roots[i])
            dirs[nd++] = roots[i];
    for (int i = 0; i < nd; i++) {
        snprintf(out, n, "%s/%s/%s.json", dirs[i], kind, name);
        if (is_readable_file(out))
            return 0;
    }
    out[0] = '\0';
    return sc_err_set(err, SC_EINPUT, name, "",
                      "no such file, and no shipped %s of that name (looked in %s/%s; `shardcast list %s` shows them)",
                      kind, nd ? dirs[has_env && nd > 1 ? 1 : 0] : "configs", kind, kind);
}
