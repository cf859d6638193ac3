/* output.c - writing a finished report to the file the user named (output.h). */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "cannot write %s: %s", path, g_strerror(e));
        return false;
    }
    if (close(fd) != 0) {
        int e = errno;
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "cannot write %s: %s", path, g_strerror(e));
        return false;
    }
    return true;
}
