/* err.c — fill and format sc_err values. */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void copy(char *dst, size_t n, const char *src)
{
    if (!src)
        src = "";
    snprintf(dst, n, "%s", src);
}

int sc_err_set(sc_err *err, int code, const char *source, const char *path, const char *fmt, ...)
{
    if (!err)
        return code;
    copy(err->source, sizeof err->source, source);
    copy(err->path, sizeof err->path, path);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->text, sizeof err->text, fmt, ap);
    va_end(ap);
    return code;
}

void sc_err_clear(sc_err *err)
{
    if (err)
        memset(err, 0, sizeof *err);
}

const char *sc_err_str(const sc_err *err, char *buf, unsigned long buflen)
{
    size_t n = (size_t)buflen;
    if (!n)
        return buf;
    buf[0] = '\0';
    size_t used = 0;
    const char *parts[3] = {err->source, err->path, err->text};
    for (int i = 0; i < 3; i++) {
        if (!parts[i][0])
            continue;
        int w = snprintf(buf + used, n - used, "%s%s", used ? ": " : "", parts[i]);
        if (w < 0 || (size_t)w >= n - used)
            break;
        used += (size_t)w;
    }
    return buf;
}

int sc_err_unreadable(sc_err *err, const char *path, const char *why)
{
    return sc_err_set(err, SC_EINPUT, path, "", "cannot read: %s", why);
}

int sc_err_empty(sc_err *err, const char *path, const char *what)
{
    return sc_err_set(err, SC_EINPUT, path, "", "the file is empty, expected %s", what);
}
