/* atomic.c — whole-or-absent file output (see atomic.h). The list of live temporary files is the
 * one piece of process-wide state in shardcast: a signal handler can only reach it that way. */
#include "atomic.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- live temporaries, removed by the signal handler ---------------------------------------- */

#define AT_SLOTS 16
#define AT_PATH 4096
static char live_path[AT_SLOTS][AT_PATH];
static volatile sig_atomic_t live_used[AT_SLOTS];

static int live_add(const char *path)
{
    for (int i = 0; i < AT_SLOTS; i++)
        if (!live_used[i]) {
            snprintf(live_path[i], AT_PATH, "%s", path);
            live_used[i] = 1;
            return i;
        }
    return -1; /* still removed on every error path; only a signal would leave it */
}

static void live_del(const char *path)
{
    for (int i = 0; i < AT_SLOTS; i++)
        if (live_used[i] && !strcmp(live_path[i], path))
            live_used[i] = 0;
}

static void on_signal(int sig)
{
    for (int i = 0; i < AT_SLOTS; i++)
        if (live_used[i])
            unlink(live_path[i]); /* async-signal-safe */
    signal(sig, SIG_DFL);
    raise(sig);
}

void at_install_signal_cleanup(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa, old;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue; /* nohup: keep ignoring */
        sigaction(sigs[i], &sa, NULL);
    }
}

/* ---- names ------------------------------------------------------------------------------------ */

/* dir and base of path ("a/b.csv" -> "a", "b.csv"; "b.csv" -> ".", "b.csv"). */
static int split(const char *path, char *dir, size_t dn, char *base, size_t bn, sc_err *err)
{
    const char *slash = strrchr(path, '/');
    const char *b = slash ? slash + 1 : path;
    if (!*path || !*b || !strcmp(b, ".") || !strcmp(b, ".."))
        return sc_err_set(err, SC_EINPUT, path, "", "expected a file name, got a directory");
    if (strlen(path) + 32 >= AT_PATH)
        return sc_err_set(err, SC_EINPUT, path, "", "expected a path shorter than %d bytes", AT_PATH - 32);
    if (!slash)
        snprintf(dir, dn, ".");
    else if (slash == path)
        snprintf(dir, dn, "/");
    else
        snprintf(dir, dn, "%.*s", (int)(slash - path), path);
    snprintf(base, bn, "%s", b);
    return 0;
}

int at_sweep_stale(const char *dir, const char *stem)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int fd = dirfd(d), removed = 0;
    size_t sl = strlen(stem);
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *n = e->d_name;
        if (strncmp(n, stem, sl) || strncmp(n + sl, ".sc", 3))
            continue;
        char *end;
        long pid = strtol(n + sl + 3, &end, 10);
        if (end == n + sl + 3 || *end != '.' || strlen(end + 1) != 6 || pid <= 0)
            continue;
        if (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue; /* alive (or not ours to judge) */
        struct stat st;
        if (fstatat(fd, n, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
            unlinkat(fd, n, 0) == 0)
            removed++;
    }
    closedir(d);
    return removed;
}

static int make_temp(const char *dir, const char *stem, char *out, size_t n, sc_err *err, const char *what)
{
    at_sweep_stale(dir, stem);
    int w = snprintf(out, n, "%s/%s.sc%ld.XXXXXX", dir, stem, (long)getpid());
    if (w < 0 || (size_t)w >= n)
        return sc_err_set(err, SC_EINPUT, what, "", "expected a shorter path");
    int fd = mkostemp(out, O_CLOEXEC); /* O_CREAT|O_EXCL: never opens through a link */
    if (fd < 0)
        return sc_err_set(err, SC_ERUNTIME, what, "", "cannot write: %s", strerror(errno));
    live_add(out);
    return fd;
}

static int sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    if (rc && (errno == EINVAL || errno == EROFS))
        rc = 0; /* the file system cannot sync directories: nothing more to do */
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

/* ---- streaming ------------------------------------------------------------------------------- */

struct at_file {
    FILE *fp;
    char path[AT_PATH], tmp[AT_PATH], dir[AT_PATH];
};

int at_begin(const char *path, at_file **out, sc_err *err)
{
    *out = NULL;
    at_file *f = calloc(1, sizeof *f);
    if (!f)
        return sc_err_set(err, SC_ERUNTIME, path, "", "out of memory");
    char base[AT_PATH], stem[AT_PATH + 1];
    int rc = split(path, f->dir, sizeof f->dir, base, sizeof base, err);
    if (rc) {
        free(f);
        return rc;
    }
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) {
        free(f);
        return sc_err_set(err, SC_EINPUT, path, "", "expected a file name, got a directory");
    }
    snprintf(f->path, sizeof f->path, "%s", path);
    snprintf(stem, sizeof stem, ".%s", base);
    int fd = make_temp(f->dir, stem, f->tmp, sizeof f->tmp, err, path);
    if (fd < 0) {
        free(f);
        return fd;
    }
    /* a file replaced keeps its permission bits (a 0600 file became 0644, readable by all); a new
     * one gets 0666 less the umask, as open(O_CREAT) would */
    mode_t mode;
    if (exists && S_ISREG(st.st_mode)) {
        mode = st.st_mode & 0777;
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    if (fchmod(fd, mode) || !(f->fp = fdopen(fd, "wb"))) {
        int e = errno;
        close(fd);
        unlink(f->tmp);
        live_del(f->tmp);
        free(f);
        return sc_err_set(err, SC_ERUNTIME, path, "", "cannot write: %s", strerror(e));
    }
    *out = f;
    return 0;
}

FILE *at_stream(at_file *f) { return f->fp; }
const char *at_tmp_path(const at_file *f) { return f->tmp; }

void at_abort(at_file *f)
{
    if (!f)
        return;
    if (f->fp)
        fclose(f->fp);
    unlink(f->tmp);
    live_del(f->tmp);
    free(f);
}

int at_check_png_fd(int fd, const char *what, sc_err *err)
{
    static const unsigned char SIG[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    static const unsigned char IEND[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
    struct stat st;
    unsigned char head[8], tail[12];
    if (fstat(fd, &st) || st.st_size < 8 + 25 + 12 || pread(fd, head, 8, 0) != 8 ||
        pread(fd, tail, 12, st.st_size - 12) != 12 || memcmp(head, SIG, 8) || memcmp(tail, IEND, 12))
        return sc_err_set(err, SC_ERUNTIME, what, "", "the image is not a whole PNG (%lld bytes, no IEND chunk at the end)",
                          (long long)(fstat(fd, &st) ? 0 : st.st_size));
    return 0;
}

int at_commit(at_file *f, int check, sc_err *err)
{
    int rc = 0, fd = fileno(f->fp);
    int e = 0;
    if (fflush(f->fp) || ferror(f->fp))
        e = errno ? errno : EIO;
    else if (fsync(fd))
        e = errno;
    if (!e && check == AT_CHECK_NONEMPTY) {
        struct stat st;
        if (fstat(fd, &st) || st.st_size == 0)
            rc = sc_err_set(err, SC_ERUNTIME, f->path, "", "nothing was written");
    } else if (!e && check == AT_CHECK_PNG) {
        rc = at_check_png_fd(fd, f->path, err);
    }
    if (fclose(f->fp) && !e)
        e = errno;
    f->fp = NULL;
    if (!e && !rc && rename(f->tmp, f->path))
        e = errno;
    if (!e && !rc && sync_dir(f->dir))
        e = errno; /* renamed but perhaps not durable: say so */
    if (e && !rc)
        rc = sc_err_set(err, SC_ERUNTIME, f->path, "", "cannot write: %s", strerror(e));
    if (rc)
        unlink(f->tmp);
    live_del(f->tmp);
    free(f);
    return rc;
}

int at_write(const char *path, const void *data, size_t len, sc_err *err)
{
    at_file *f;
    int rc = at_begin(path, &f, err);
    if (rc)
        return rc;
    if (len && fwrite(data, 1, len, at_stream(f)) != len) {
        int e = errno ? errno : EIO;
        at_abort(f);
        return sc_err_set(err, SC_ERUNTIME, path, "", "cannot write: %s", strerror(e));
    }
    return at_commit(f, AT_CHECK_NONE, err);
}

/* ---- scratch files ----------------------------------------------------------------------------- */

int at_scratch(const char *dir, const char *stem, char *path_out, size_t n, sc_err *err)
{
    return make_temp(dir, stem, path_out, n, err, dir);
}

void at_scratch_remove(const char *path)
{
    unlink(path);
    live_del(path);
}
