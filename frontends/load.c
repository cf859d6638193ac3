/* load.c - format detection and the one entry point every subcommand uses to read a model. */
#include "load.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "frontends/ge/ge.h"
#include "frontends/onnx/onnx.h"
#include "frontends/onnx/onnx_text.h"

G_DEFINE_QUARK(fp-load-error-quark, fp_load_error);

/* Reads up to n leading bytes of path into buf; returns how many, or -1 with errno. */
static gssize read_head(const char *path, uint8_t *buf, size_t n, GError **error)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "cannot open: %s", g_strerror(errno));
        return -1;
    }
    size_t got = fread(buf, 1, n, f);
    fclose(f);
    return (gssize)got;
}

/* Largest decompressed size of a gzip-compressed model (graph dumps compress 10-30x, a crafted
 * file 1000x): the text readers need several times the text's size, within 1 GiB in all. */
#define GZIP_MAX (128u * 1024u * 1024u)

/* Inflates a gzip file (one or more members) into memory with zlib; NULL with an error when it
 * cannot be read, is corrupt or truncated, or inflates to more than GZIP_MAX. */
static GBytes *gunzip(const char *path, GError **error)
{
    int fd = g_open(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) {
        int e = errno;
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "cannot open: %s", g_strerror(e));
        return NULL;
    }
    gzFile z = gzdopen(fd, "rb"); /* owns fd from here */
    if (!z) {
        close(fd);
        g_set_error(error, FP_LOAD_ERROR, FP_LOAD_ERROR_FORMAT, "gzip: out of memory");
        return NULL;
    }
    gzbuffer(z, 128 * 1024);
    GByteArray *buf = g_byte_array_new();
    guint8 chunk[64 * 1024];
    bool ok = true;
    for (;;) {
        int n = gzread(z, chunk, sizeof chunk);
        int zerr = Z_OK;
        const char *msg = gzerror(z, &zerr);
        if (n < 0 || zerr != Z_OK) {
            /* Z_BUF_ERROR at the end: the file stops inside the compressed stream */
            g_set_error(error, FP_LOAD_ERROR, FP_LOAD_ERROR_FORMAT, "gzip: %s",
                        zerr == Z_BUF_ERROR ? "truncated (unexpected end of file)"
                        : zerr == Z_ERRNO   ? g_strerror(errno)
                                            : msg);
            ok = false;
            break;
        }
        if (buf->len + (guint64)n > GZIP_MAX) {
            g_set_error(error, FP_LOAD_ERROR, FP_LOAD_ERROR_FORMAT, "gzip content larger than %u MiB", GZIP_MAX >> 20);
            ok = false;
            break;
        }
        if (n == 0)
            break;
        g_byte_array_append(buf, chunk, (guint)n);
    }
    gzclose_r(z);
    if (!ok) {
        g_byte_array_free(buf, TRUE);
        return NULL;
    }
    return g_byte_array_free_to_bytes(buf);
}

static fp_model *unrecognized(const uint8_t *head, GError **error)
{
    g_set_error(error, FP_LOAD_ERROR, FP_LOAD_ERROR_FORMAT,
                "unrecognized format (first byte 0x%02x): expected ONNX (binary or text) or an Ascend GE graph (text "
                "dump, binary, .om or JSON), possibly gzip-compressed",
                head[0]);
    return NULL;
}

/* Detects the format of an in-memory model (a decompressed file) and imports it. */
static fp_model *load_buffer(const char *path, const uint8_t *data, size_t len, GError **error)
{
    fp_ge_kind ge = fp_ge_sniff(data, MIN(len, 4096));
    if (len == 0) {
        g_set_error(error, FP_LOAD_ERROR, FP_LOAD_ERROR_FORMAT, "empty file");
        return NULL;
    }
    if (ge != FP_GE_NONE)
        return fp_ge_load_buffer(path, ge, data, len, error);
    if (fp_onnx_sniff(data, len))
        return fp_onnx_load_buffer(path, data, len, error);
    if (fp_onnx_text_sniff(data, MIN(len, 4096)))
        return fp_onnx_text_load_buffer(path, (const char *)data, len, error);
    return unrecognized(data, error);
}

/* The limits every frontend's model must respect (the ONNX one also checks them while reading);
 * file_bytes: the size of the file on disk (compressed, for gzip). The node limit counts the nodes
 * that are not removed (fp_model_get_stats), which only a model over the limit in all needs: the
 * others are not walked (a million nodes are a million cache misses). */
static bool within_limits(const fp_model *m, uint64_t file_bytes, GError **error)
{
    if (m->graphs->len > FP_MAX_GRAPHS) {
        g_set_error(error, FP_IR_ERROR, FP_IR_ERROR_LIMIT, "%u graphs (subgraphs included), more than the limit of %d",
                    m->graphs->len, FP_MAX_GRAPHS);
        return false;
    }
    uint64_t all = 0;
    for (guint gi = 0; gi < m->graphs->len; gi++)
        all += ((const fp_graph *)m->graphs->pdata[gi])->nodes->len;
    if (all <= fp_max_nodes(file_bytes))
        return true;
    fp_model_stats st;
    fp_model_get_stats(m, &st);
    if (st.nodes <= fp_max_nodes(file_bytes))
        return true;
    g_set_error(error, FP_IR_ERROR, FP_IR_ERROR_LIMIT,
                "%" G_GUINT64_FORMAT " nodes (all graphs), more than the limit of %" G_GUINT64_FORMAT, st.nodes,
                fp_max_nodes(file_bytes));
    return false;
}

/* This thread's model in memory (fp_load_set_memory): its name and bytes; NULL, none. */
static _Thread_local const char *memory_name;
static _Thread_local GBytes *memory_bytes;

void fp_load_set_memory(const char *name, GBytes *bytes)
{
    g_assert(!name == !bytes);
    memory_name = name;
    memory_bytes = bytes;
}

/* m as read from path (file_bytes on disk or in memory), within the limits and verified; NULL with
 * the error (err, or the check's) prefixed with path, m freed, when it is not. */
static fp_model *checked(const char *path, fp_model *m, uint64_t file_bytes, GError *err, GError **error)
{
    if (m && (!within_limits(m, file_bytes, &err) || !fp_model_verify(m, &err))) {
        fp_model_free(m);
        m = NULL;
    }
    if (!m)
        g_propagate_prefixed_error(error, err, "%s: ", path);
    return m;
}

/* The model in bytes held in memory under name, read and checked as a file's would be. */
static fp_model *load_memory(const char *name, GBytes *bytes, GError **error)
{
    gsize len = 0;
    const uint8_t *data = g_bytes_get_data(bytes, &len);
    GError *err = NULL;
    fp_model *m = NULL;
    if (len >= 2 && data[0] == 0x1f && data[1] == 0x8b)
        g_set_error(&err, FP_LOAD_ERROR, FP_LOAD_ERROR_FORMAT, "gzip-compressed bytes: give them decompressed");
    else
        m = load_buffer(name, data, len, &err);
    return checked(name, m, len, err, error);
}

fp_model *fp_load_model(const char *path, GError **error)
{
    if (memory_name && strcmp(path, memory_name) == 0)
        return load_memory(path, memory_bytes, error);
    uint8_t head[4096]; /* text formats are told apart by their first fields */
    g_autoptr(GError) err = NULL;
    gssize got = read_head(path, head, sizeof head, &err);
    fp_model *m = NULL;
    if (got < 0) {
        /* fall through: err already set */
    } else if (got == 0) {
        g_set_error(&err, FP_LOAD_ERROR, FP_LOAD_ERROR_FORMAT, "empty file");
    } else if (got >= 2 && head[0] == 0x1f && head[1] == 0x8b) {
        g_autoptr(GBytes) bytes = gunzip(path, &err);
        gsize len = 0;
        const uint8_t *data = bytes ? g_bytes_get_data(bytes, &len) : NULL;
        if (bytes)
            m = load_buffer(path, data, len, &err);
    } else if (fp_ge_sniff(head, (size_t)got) != FP_GE_NONE) {
        m = fp_ge_load(path, fp_ge_sniff(head, (size_t)got), &err);
    } else if (fp_onnx_sniff(head, (size_t)got)) {
        m = fp_onnx_load(path, &err);
    } else if (fp_onnx_text_sniff(head, (size_t)got)) {
        m = fp_onnx_text_load(path, &err);
    } else {
        unrecognized(head, &err);
    }
    GStatBuf sb;
    return checked(path, m, m && g_stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0, g_steal_pointer(&err), error);
}
