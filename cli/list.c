/* list.c — `shardcast list [clusters|models|scenarios|calibrations|training|stacks]`: the shipped configs, with
 * each file's name, so users know what --cluster/--model accept. */
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/str.h"
#include "commands.h"
#include "common.h"

static const char HELP[] = "usage: shardcast list [clusters|models|scenarios|calibrations|training|stacks] [--json]\n\n"
                           "Lists shipped configs ($SHARDCAST_CONFIGS first, then configs/ beside the binary).\n"
                           "  --json   {\"clusters\": {\"dir\": ..., \"names\": [...]}, ...} on stdout\n";

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The names of one kind, sorted, printed or added to json (an object per kind). */
static int list_kind(const cli_setup *s, const char *kind, json_t *json)
{
    const char *env = getenv("SHARDCAST_CONFIGS");
    const char *roots[3] = {env && *env ? env : NULL, s->config_roots[0], s->config_roots[1]};
    for (int r = 0; r < 3; r++) {
        if (!roots[r])
            continue;
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/%s", roots[r], kind);
        DIR *d = opendir(dir);
        if (!d)
            continue;
        char *names[512];
        int n = 0;
        struct dirent *e;
        while ((e = readdir(d)) && n < 512) {
            size_t l = strlen(e->d_name);
            if (l > 5 && !strcmp(e->d_name + l - 5, ".json"))
                names[n++] = strndup(e->d_name, l - 5);
        }
        closedir(d);
        qsort(names, (size_t)n, sizeof names[0], cmp);
        json_t *arr = json ? json_array() : NULL;
        if (!json)
            printf("%s (%s):\n", kind, dir);
        for (int i = 0; i < n; i++) {
            if (arr)
                json_array_append_new(arr, json_string(names[i] ? names[i] : ""));
            else
                printf("  %s\n", names[i]);
            free(names[i]);
        }
        if (json)
            json_object_set_new(json, kind, json_pack("{s:s, s:o}", "dir", dir, "names", arr));
        return 0;
    }
    if (json)
        json_object_set_new(json, kind, json_pack("{s:n, s:[]}", "dir", "names"));
    else
        printf("%s: none found%s\n", kind,
               !strcmp(kind, "training") ? " (none is shipped: a training spec is a file you write, given with "
                                           "--training FILE; configs/README.md has its keys)" : "");
    return 0;
}

int cmd_list(int argc, char **argv)
{
    cli_setup s;
    cli_setup_init(&s, argv[0]);
    static const char *const kinds[] = {"clusters", "models", "scenarios", "calibrations", "training", "stacks", NULL};
    const char *which = NULL;
    int as_json = 0;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h")) {
            fputs(HELP, stdout);
            return 0;
        }
        if (!strcmp(argv[a], "--json")) {
            as_json = 1;
            continue;
        }
        if (argv[a][0] == '-') {
            char what[200];
            snprintf(what, sizeof what, "unknown option '%.150s'", argv[a]);
            return cli_usage_error("list", what);
        }
        if (which)
            return cli_usage_error("list", "expected at most one kind");
        which = argv[a];
    }
    if (which) {
        int known = 0;
        for (int k = 0; k < 6; k++)
            known |= !strcmp(which, kinds[k]);
        if (!known) { /* what was given, and the kind it is a typo of */
            char what[300], near[100];
            int nn = str_nearest_all(which, kinds, near, sizeof near);
            snprintf(what, sizeof what, "expected clusters, models, scenarios, calibrations, training or stacks, got '%.60s'%s%s%s",
                     which, nn ? "; did you mean " : "", near, nn ? "?" : "");
            return cli_usage_error("list", what);
        }
    }
    json_t *json = as_json ? json_object() : NULL;
    for (int i = 0; i < 6; i++)
        if (!which || !strcmp(which, kinds[i]))
            list_kind(&s, kinds[i], json);
    return json ? cli_print_json(json) : 0;
}
