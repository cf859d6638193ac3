/* output.c - writing a report to the file the user named (output.h): whole, or in pieces; and the
 * thread's standard output and error, which the C library captures. */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

/* Writes all of data to the open descriptor fd; false with errno set on failure. */
static bool write_all(int fd, const char *data, size_t len)
{
    while (len) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return false;
        data += n;
        len -= (size_t)n;
    }
    return true;
}

/* error set for path from errno value e; false. */
static bool io_error(GError **error, const char *path, int e)
{
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "cannot write %s: %s", path, g_strerror(e));
    return false;
}

bool fp_output_write(const char *path, const void *data, gssize len, GError **error)
{
    size_t n = len < 0 ? strlen(data) : (size_t)len;
    struct stat st;
    if (stat(path, &st) != 0 || S_ISREG(st.st_mode))
        return g_file_set_contents(path, data, (gssize)n, error);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || !write_all(fd, data, n)) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return io_error(error, path, e);
    }
    return close(fd) == 0 || io_error(error, path, errno);
}

struct fp_output_stream {
    char *path;   /* the file named */
    char *tmp;    /* the new file beside it, NULL when path is written in place */
    bool existed; /* path was a regular file: the new file is synced before it replaces it */
    int fd;
};

fp_output_stream *fp_output_stream_open(const char *path, GError **error)
{
    fp_output_stream *s = g_new0(fp_output_stream, 1);
    s->path = g_strdup(path);
    struct stat st;
    bool exists = stat(path, &st) == 0;
    if (!exists || S_ISREG(st.st_mode)) {
        s->existed = exists;
        s->tmp = g_strdup_printf("%s.XXXXXX", path);
        s->fd = g_mkstemp_full(s->tmp, O_WRONLY | O_CLOEXEC, 0666);
    } else {
        s->fd = open(path, O_WRONLY | O_CLOEXEC);
    }
    if (s->fd < 0) {
        io_error(error, path, errno);
        g_free(s->tmp);
        g_free(s->path);
        g_free(s);
        return NULL;
    }
    return s;
}

bool fp_output_stream_write(fp_output_stream *s, const void *data, size_t len, GError **error)
{
    return write_all(s->fd, data, len) || io_error(error, s->path, errno);
}

bool fp_output_stream_close(fp_output_stream *s, bool commit, GError **error)
{
    bool ok = true;
    if (commit && s->tmp && s->existed && fsync(s->fd) != 0)
        ok = io_error(error, s->path, errno);
    if (close(s->fd) != 0 && ok && commit)
        ok = io_error(error, s->path, errno);
    if (s->tmp) {
        if (ok && commit && g_rename(s->tmp, s->path) != 0)
            ok = io_error(error, s->path, errno);
        if (!ok || !commit)
            g_unlink(s->tmp);
    }
    g_free(s->tmp);
    g_free(s->path);
    g_free(s);
    return ok && commit;
}

/* This thread's capture (fp_output_capture): a stream for standard output and a buffer for the
 * lines of standard error; NULL, the process's own. */
static _Thread_local FILE *captured_out;
static _Thread_local GString *captured_err;

FILE *fp_output_stdout(void) { return captured_out ? captured_out : stdout; }

bool fp_output_captured(void) { return captured_out != NULL; }

void fp_output_error_line(const char *line)
{
    if (captured_out) {
        g_string_append(captured_err, line);
        g_string_append_c(captured_err, '\n');
        return;
    }
    fflush(stdout);
    fprintf(stderr, "%s\n", line);
}

void fp_output_capture(FILE *out, GString *err)
{
    g_assert(!out == !err);
    captured_out = out;
    captured_err = err;
}
