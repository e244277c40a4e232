/* import.c — nccl-tests logs to shardcast-measurements/1 (see import.h). The table nccl-tests
 * prints (src/common.cu): "#  size count type redop root | time algbw busbw #wrong | time algbw
 * busbw #wrong" (out-of-place, then in-place; times in us, bandwidths in GB/s); the header lists
 * "#  Rank R Group G Pid P on HOST device D [...] NAME", one line per rank. Logs from before the
 * root column (nccl-tests of 2020: "size count type redop | time ...", "Rank R Pid P on HOST")
 * are read too, told apart by the column header. */
#include "import.h"

#include "../base/jsonrd.h"
#include "../base/str.h"
#include "measure.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *kind_of(const char *s)
{
    if (strstr(s, "all_reduce") || strstr(s, "allreduce"))
        return "all-reduce";
    if (strstr(s, "all_gather") || strstr(s, "allgather"))
        return "all-gather";
    if (strstr(s, "reduce_scatter") || strstr(s, "reducescatter"))
        return "reduce-scatter";
    return NULL;
}

static const char *algo_of(const char *s)
{
    static const char *const names[][2] = {{"nvlstree", "nvls-tree"}, {"nvls_tree", "nvls-tree"}, {"nvls", "nvls"},
                                           {"ring", "ring"},         {"tree", "tree"},           {"pat", "pat"}};
    char low[32];
    size_t i = 0;
    for (; s[i] && i < sizeof low - 1 && !isspace((unsigned char)s[i]) && s[i] != ','; i++)
        low[i] = (char)tolower((unsigned char)s[i]);
    low[i] = 0;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (!strcmp(low, names[k][0]))
            return names[k][1];
    return NULL;
}

#define MAX_HOSTS 4096

/* A data row's numbers as the measurement loader takes them: bytes and time positive and plausible
 * (jr_plausible: 1e-9 to 1e15), the bandwidths finite and not negative. */
static int row_check(const char *path, const char *where, double size, double t_us, double algbw, double busbw,
                     sc_err *err)
{
    if (!(size > 0) || !jr_plausible(size))
        return sc_err_set(err, SC_EINPUT, path, where, "size: expected a positive number of bytes up to 1e15, got %g",
                          size);
    if (!(t_us > 0) || !jr_plausible(t_us))
        return sc_err_set(err, SC_EINPUT, path, where, "time: expected a positive number of us from 1e-9 to 1e15, got %g",
                          t_us);
    if (!(algbw >= 0) || !(busbw >= 0) || !jr_plausible(algbw + busbw + 1))
        return sc_err_set(err, SC_EINPUT, path, where,
                          "algbw, busbw: expected GB/s from 0 to 1e15, got %g and %g", algbw, busbw);
    return 0;
}

/* The #wrong column: a count, or N/A when the run did not check (-c 0). */
static int wrong_count(const char *path, const char *where, const char *w, int *out, sc_err *err)
{
    char *end;
    long v = strtol(w, &end, 10);
    if (!strcmp(w, "N/A"))
        v = 0, end = (char *)w + 3;
    if (end == w || *end || v < 0 || v > (1L << 30))
        return sc_err_set(err, SC_EINPUT, path, where, "#wrong: expected a count of wrong results or N/A, got \"%.31s\"",
                          w);
    *out = (int)v;
    return 0;
}

/* What one log gave, as the loader will need it: a collective, rows, a ranks-over-nodes shape. */
static int file_check(const char *path, const char *kind, int rows, int n, int k, sc_err *err)
{
    if (!kind)
        return sc_err_set(err, SC_EINPUT, path, "", "which collective? no 'Collective test starting: X_perf' line and "
                                                     "no all_reduce/all_gather/reduce_scatter in the name: give --kind");
    if (!rows)
        return sc_err_set(err, SC_EINPUT, path, "", "no nccl-tests data rows (size count type redop root time ...)");
    if (n < 1 || k < 1)
        return sc_err_set(err, SC_EINPUT, path, "", "no '#  Rank N ... on HOST' lines: give --ranks and --nodes");
    if (n % k)
        return sc_err_set(err, SC_EINPUT, path, "", "expected ranks divisible by nodes, got %d ranks on %d nodes", n, k);
    if (n > (1 << 24) || k > (1 << 20) || n / k > (1 << 10))
        return sc_err_set(err, SC_EINPUT, path, "",
                          "expected at most 16777216 ranks, 1048576 nodes and 1024 ranks per node (the measurement "
                          "loader's limits), got %d ranks on %d nodes",
                          n, k);
    return 0;
}

static int one_file(const char *path, const cal_import_opts *o, json_t *colls, int *ranks_out, int *nodes_out,
                    sc_err *err)
{
    /* read once, whole (a regular file or a pipe, at most JR_MAX_FILE; /dev/zero never ended) */
    char *text;
    size_t text_len;
    int src = jr_slurp(path, JR_MAX_FILE, &text, &text_len, err);
    if (src)
        return src;
    if (str_blank(text, text_len)) { /* said as such, not "which collective?" */
        free(text);
        return sc_err_empty(err, path, "an nccl-tests log");
    }
    FILE *f = fmemopen(text, text_len, "r");
    if (!f) {
        free(text);
        return sc_err_set(err, SC_ERUNTIME, path, "", "out of memory");
    }
    char line[4096];
    const char *kind = o->kind ? o->kind : kind_of(path);
    const char *algo = o->algorithm;
    int ranks = 0, lineno = 0, rows = 0, nhosts = 0, rc = 0, no_root = 0;
    char(*hosts)[64] = malloc(sizeof *hosts * MAX_HOSTS);
    json_t *pending = json_array();
    if (!hosts || !pending) {
        free(hosts);
        json_decref(pending);
        fclose(f);
        free(text);
        return sc_err_set(err, SC_ERUNTIME, path, "", "out of memory");
    }
    while (!rc && fgets(line, sizeof line, f)) {
        lineno++;
        if (line[0] == '#') {
            const char *k;
            if (!o->kind && strstr(line, "test starting") && (k = kind_of(line)))
                kind = k;
            const char *a = strstr(line, "NCCL_ALGO=");
            if (!o->algorithm && a && algo_of(a + 10))
                algo = algo_of(a + 10);
            /* nccl-tests before the root column (2020 and earlier, e.g. the p3dn-2020 logs): its
             * column header names redop but no root, and its rank lines have no Group */
            if (strstr(line, "redop") && !strstr(line, "root"))
                no_root = 1;
            int r;
            char host[64];
            if (sscanf(line, "# Rank %d Group %*d Pid %*d on %63s", &r, host) == 2 ||
                sscanf(line, "#  Rank %d Group %*d Pid %*d on %63s", &r, host) == 2 ||
                sscanf(line, "# Rank %d Pid %*d on %63s", &r, host) == 2) {
                ranks++;
                int seen = 0;
                for (int h = 0; h < nhosts && !seen; h++)
                    seen = !strcmp(hosts[h], host);
                if (!seen && nhosts < MAX_HOSTS)
                    snprintf(hosts[nhosts++], sizeof hosts[0], "%s", host);
            }
            continue;
        }
        if (!strncmp(line, "NCCL_ALGO=", 10) && !o->algorithm && algo_of(line + 10))
            algo = algo_of(line + 10);
        double size, count, t[2], algbw[2], busbw[2];
        char type[32], redop[32];
        long root;
        int wrong = 0;
        char w0[32], w1[32];
        int got = no_root ? 1 + sscanf(line, "%lf %lf %31s %31s %lf %lf %lf %31s %lf %lf %lf %31s", &size, &count, type,
                                       redop, &t[0], &algbw[0], &busbw[0], w0, &t[1], &algbw[1], &busbw[1], w1)
                          : sscanf(line, "%lf %lf %31s %31s %ld %lf %lf %lf %31s %lf %lf %lf %31s", &size, &count, type,
                                   redop, &root, &t[0], &algbw[0], &busbw[0], w0, &t[1], &algbw[1], &busbw[1], w1);
        if (got < 9)
            continue; /* not a data row (NCCL INFO lines, blank lines) */
        int ip = o->in_place && got >= 13;
        if (size == 0)
            continue; /* nccl-tests -b 0: a zero-byte call, nothing for a bandwidth fit */
        char where[32];
        snprintf(where, sizeof where, "line %d", lineno);
        /* the measurement loader's rules, here with the log's line (it refused what this wrote:
         * errors -1, 1e308 us; NaN rows were dropped without a word) */
        if ((rc = row_check(path, where, size, t[ip], algbw[ip], busbw[ip], err)) ||
            (rc = wrong_count(path, where, ip ? w1 : w0, &wrong, err)))
            break;
        json_t *row = json_pack("{s:f, s:f, s:f, s:f, s:i}", "bytes", size, "time_us", t[ip], "algbw_GBps", algbw[ip],
                                "busbw_GBps", busbw[ip], "errors", wrong);
        if (!row || json_array_append_new(pending, row)) {
            rc = sc_err_set(err, SC_ERUNTIME, path, "", "out of memory");
            break;
        }
        rows++;
    }
    fclose(f);
    free(text);
    free(hosts);
    int n = o->ranks ? o->ranks : ranks, k = o->nodes ? o->nodes : nhosts;
    if (!rc)
        rc = file_check(path, kind, rows, n, k, err);
    if (rc) {
        json_decref(pending);
        return rc;
    }
    size_t i;
    json_t *e;
    json_array_foreach(pending, i, e) {
        json_object_set_new(e, "kind", json_string(kind));
        json_object_set_new(e, "group", json_string("world"));
        json_object_set_new(e, "n", json_integer(n));
        json_object_set_new(e, "k", json_integer(k));
        json_object_set_new(e, "m", json_integer(n / k));
        if (algo)
            json_object_set_new(e, "algorithm", json_string(algo));
        json_array_append(colls, e);
    }
    json_decref(pending);
    *ranks_out = n;
    *nodes_out = k;
    return 0;
}

int cal_import_nccl_tests(char *const *paths, int n_paths, const cal_import_opts *o, json_t **out, sc_err *err)
{
    json_t *colls = json_array();
    int ranks = 0, nodes = 0;
    for (int i = 0; i < n_paths; i++) {
        int r = 0, k = 0, rc = one_file(paths[i], o, colls, &r, &k, err);
        if (rc) {
            json_decref(colls);
            return rc;
        }
        if (r > ranks) /* the host block names the largest run */
            ranks = r, nodes = k;
    }
    char note[256];
    snprintf(note, sizeof note, "imported from %d nccl-tests log%s by shardcast calibrate import", n_paths,
             n_paths == 1 ? "" : "s");
    *out = json_pack("{s:s, s:{s:s, s:s, s:i, s:i, s:i, s:s}, s:o}", "schema", "shardcast-measurements/1", "host",
                     "backend", "gpu", "device", "nccl-tests", "ranks", ranks, "nodes", nodes, "ranks_per_node",
                     nodes ? ranks / nodes : ranks, "note", note, "collectives", colls);
    if (!*out)
        return sc_err_set(err, SC_ERUNTIME, "import", "", "out of memory");
    /* what is written is what the loader reads: its rules, once more, on the whole document */
    cal_meas *m;
    int rc = cal_meas_from_json(*out, n_paths == 1 ? paths[0] : "import", &m, err);
    if (rc) {
        json_decref(*out);
        *out = NULL;
        return rc;
    }
    cal_meas_free(m);
    return 0;
}
