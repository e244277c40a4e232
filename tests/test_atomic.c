/* test_atomic.c — whole-or-absent output (base/atomic.h): the bytes arrive, a link where the old
 * fixed temporary name was is never followed, an aborted or failed write leaves the old file and
 * no temporary, what a killed run left behind is removed by the next run, a PNG is checked for
 * its IEND chunk. Not here: what the writers write (their own suites, golden tests). */
#include "suites.h"

#include "../base/atomic.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

static void mkdir_tmp(void)
{
    snprintf(dir, sizeof dir, "/tmp/sc-atomic-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void rm_tmp(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static size_t slurp(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return (size_t)-1;
    size_t k = fread(buf, 1, n - 1, f);
    buf[k] = '\0';
    fclose(f);
    return k;
}

/* Entries in dir other than . and .. */
static int entries(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

START_TEST(write_whole)
{
    mkdir_tmp();
    char path[300], buf[64];
    snprintf(path, sizeof path, "%s/out.csv", dir);
    sc_err err;
    ck_assert_int_eq(at_write(path, "a,b\n1,2\n", 8, &err), 0);
    ck_assert_int_eq(slurp(path, buf, sizeof buf), 8);
    ck_assert_str_eq(buf, "a,b\n1,2\n");
    ck_assert_int_eq(entries(), 1); /* no temporary left */
    rm_tmp();
}
END_TEST

/* Before: out.csv.tmp was opened with truncation, so a link there overwrote its target. */
START_TEST(link_not_followed)
{
    mkdir_tmp();
    char path[300], link[300], victim[300], buf[64];
    snprintf(path, sizeof path, "%s/out.csv", dir);
    snprintf(link, sizeof link, "%s/out.csv.tmp", dir);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    FILE *v = fopen(victim, "w");
    fputs("keep", v);
    fclose(v);
    ck_assert_int_eq(symlink(victim, link), 0);
    sc_err err;
    ck_assert_int_eq(at_write(path, "new", 3, &err), 0);
    slurp(victim, buf, sizeof buf);
    ck_assert_str_eq(buf, "keep");
    slurp(path, buf, sizeof buf);
    ck_assert_str_eq(buf, "new");
    rm_tmp();
}
END_TEST

START_TEST(abort_keeps_old)
{
    mkdir_tmp();
    char path[300], buf[64];
    snprintf(path, sizeof path, "%s/t.json", dir);
    sc_err err;
    ck_assert_int_eq(at_write(path, "old", 3, &err), 0);
    at_file *f;
    ck_assert_int_eq(at_begin(path, &f, &err), 0);
    fputs("half", at_stream(f));
    at_abort(f);
    slurp(path, buf, sizeof buf);
    ck_assert_str_eq(buf, "old");
    ck_assert_int_eq(entries(), 1);
    /* a failed check removes the temporary as well, and the old file stays */
    ck_assert_int_eq(at_begin(path, &f, &err), 0);
    fputs("not a png", at_stream(f));
    ck_assert_int_ne(at_commit(f, AT_CHECK_PNG, &err), 0);
    ck_assert_ptr_nonnull(strstr(err.text, "IEND"));
    slurp(path, buf, sizeof buf);
    ck_assert_str_eq(buf, "old");
    ck_assert_int_eq(entries(), 1);
    rm_tmp();
}
END_TEST

/* A truncated PNG (a full disk under gnuplot) fails the check; the whole one passes. */
START_TEST(png_check)
{
    mkdir_tmp();
    static const unsigned char png[] = {
        0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R', 0, 0, 0, 1, 0, 0, 0, 1, 8, 0,
        0, 0, 0, 0x3a, 0x7e, 0x9b, 0x55, 0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
    char path[300];
    snprintf(path, sizeof path, "%s/p.png", dir);
    sc_err err;
    at_file *f;
    ck_assert_int_eq(at_begin(path, &f, &err), 0);
    fwrite(png, 1, sizeof png - 4, at_stream(f)); /* cut short */
    ck_assert_int_ne(at_commit(f, AT_CHECK_PNG, &err), 0);
    ck_assert_int_eq(access(path, F_OK), -1);
    ck_assert_int_eq(at_begin(path, &f, &err), 0);
    fwrite(png, 1, sizeof png, at_stream(f));
    ck_assert_int_eq(at_commit(f, AT_CHECK_PNG, &err), 0);
    ck_assert_int_eq(access(path, F_OK), 0);
    rm_tmp();
}
END_TEST

/* What a kill -9 leaves (a temporary of a dead process) is removed by the next writer of that
 * target; a live process's temporary is not touched. */
START_TEST(stale_removed)
{
    mkdir_tmp();
    char path[300], stale[300], live[300];
    snprintf(path, sizeof path, "%s/o.csv", dir);
    snprintf(stale, sizeof stale, "%s/.o.csv.sc%d.abcdef", dir, 2147483646); /* no such pid */
    snprintf(live, sizeof live, "%s/.o.csv.sc%d.ghijkl", dir, (int)getppid());
    fclose(fopen(stale, "w"));
    fclose(fopen(live, "w"));
    sc_err err;
    ck_assert_int_eq(at_write(path, "x", 1, &err), 0);
    ck_assert_int_eq(access(stale, F_OK), -1);
    ck_assert_int_eq(access(live, F_OK), 0);
    rm_tmp();
}
END_TEST

START_TEST(errors_name_the_target)
{
    mkdir_tmp();
    char path[300];
    sc_err err;
    snprintf(path, sizeof path, "%s/missing/o.csv", dir);
    ck_assert_int_ne(at_write(path, "x", 1, &err), 0);
    ck_assert_str_eq(err.source, path);
    ck_assert_int_ne(at_write(dir, "x", 1, &err), 0); /* a directory */
    ck_assert_ptr_nonnull(strstr(err.text, "directory"));
    rm_tmp();
}
END_TEST

Suite *atomic_suite(void)
{
    Suite *s = suite_create("atomic");
    TCase *t = tcase_create("atomic");
    tcase_add_test(t, write_whole);
    tcase_add_test(t, link_not_followed);
    tcase_add_test(t, abort_keeps_old);
    tcase_add_test(t, png_check);
    tcase_add_test(t, stale_removed);
    tcase_add_test(t, errors_name_the_target);
    suite_add_tcase(s, t);
    return s;
}
