/* ge_load.c - GE containers: text dumps, binary ModelDef, offline models (.om), atc JSON.
 *
 * Text and JSON are parsed whole (dumps are small and carry no weights). Binary ModelDefs go
 * through the weight-free skeleton reader; for an .om only the MODEL_DEF partition is read
 * (pread), and Const payloads are recorded as file ranges, never read.
 */
#include "ge_internal.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "frontends/pbtxt/pbtxt.h"
#include "frontends/readers.h"

#define OM_MAGIC "IMOD"
#define OM_HEADER 256u
#define OM_MAX_PARTITIONS 64u
enum { OM_MODEL_DEF = 0, OM_WEIGHTS = 1 };

/* ---------------------------------------------------------------- detection */

/* Text: decides GE vs. ONNX from the first fields (both have a top-level `graph`). */
typedef struct {
    int verdict; /* 1 GE, -1 not GE, 0 undecided */
    bool in_graph;
} text_sniff;

static bool in_list(const char *name, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(name, *list) == 0)
            return true;
    return false;
}

static bool sniff_field(unsigned depth, const char *name, bool message, void *user)
{
    static const char *const ge_model[] = {"name", "version", "custom_version", "attr", "attr_groups", NULL};
    static const char *const ge_graph[] = {"op", "attr", "attr_groups", NULL};
    static const char *const onnx_graph[] = {"node",           "initializer", "sparse_initializer",
                                             "doc_string",     "value_info",  "quantization_annotation",
                                             "metadata_props", NULL};
    text_sniff *s = user;
    if (depth == 0) {
        s->in_graph = strcmp(name, "graph") == 0;
        if (!s->in_graph)
            s->verdict = in_list(name, ge_model) ? 1 : -1;
    } else if (depth == 1 && s->in_graph) {
        if (in_list(name, ge_graph))
            s->verdict = 1;
        else if (in_list(name, onnx_graph))
            s->verdict = -1;
        else if (strcmp(name, "input") == 0 || strcmp(name, "output") == 0)
            s->verdict = message ? -1 : 1; /* ONNX: ValueInfoProto messages; GE: "op:0" strings */
    }
    return s->verdict == 0;
}

/* Binary: the first field of the ModelDef, and for `graph` the first field inside it. */
static bool sniff_binary(const uint8_t *h, size_t len)
{
    if (len < 2)
        return false;
    switch (h[0]) {
    case 0x0a: /* 1: name (ONNX field 1 is a varint) */
    case 0x10: /* 2: version (ONNX field 2 is a string) */
    case 0x5a: /* 11: attr */
        return true;
    case 0x3a: { /* 7: graph, in both; GE GraphDef.name is a string, ONNX GraphProto.node a message */
        size_t i = 1;
        while (i < len && (h[i] & 0x80))
            i++;
        if (++i + 2 > len)
            return false;
        uint8_t tag = h[i];
        if (tag == 0x22 || tag == 0x32) /* GE input (4) or op (6) */
            return true;
        if (tag != 0x0a)
            return false;
        /* field 1: GE name (text) or ONNX node (a NodeProto starts with a tag 0x0a..0x3a) */
        size_t j = i + 1;
        while (j < len && (h[j] & 0x80))
            j++;
        return ++j < len && h[j] >= 0x40;
    }
    default:
        return false;
    }
}

fp_ge_kind fp_ge_sniff(const uint8_t *head, size_t len)
{
    if (len >= 4 && memcmp(head, OM_MAGIC, 4) == 0)
        return FP_GE_OM;
    size_t i = 0;
    while (i < len && g_ascii_isspace(head[i]))
        i++;
    if (i < len && head[i] == '{')
        return FP_GE_JSON;
    text_sniff ts = {0};
    fp_pbtxt_peek((const char *)head, len, sniff_field, &ts);
    if (ts.verdict == 1)
        return FP_GE_TEXT;
    if (ts.verdict == 0 && sniff_binary(head, len))
        return FP_GE_BINARY;
    return FP_GE_NONE;
}

/* ---------------------------------------------------------------- readers */

/* TensorDef.data over FP_INLINE_MAX: recorded by position, never copied (its dtype is in a
 * sub-message, TensorDescriptor: ge_import keeps floating-point data up to fp_inline_max). */
static bool strip_payload(const ProtobufCMessageDescriptor *d, const ProtobufCFieldDescriptor *f, size_t len,
                          const uint64_t *seen)
{
    (void)seen;
    return d == &ge__proto__tensor_def__descriptor && f->id == 2 && len > FP_INLINE_MAX;
}

static fp_model *from_text(const char *path, const char *text, size_t len, GError **error)
{
    /* GE adds fields from release to release: skip what the schema does not know (as protobuf
     * does for binary files) rather than refuse the dump */
    Ge__Proto__ModelDef *md = (Ge__Proto__ModelDef *)fp_pbtxt_parse(&ge__proto__model_def__descriptor, text, len,
                                                                    FP_PBTXT_SKIP_UNKNOWN, NULL, error);
    if (!md)
        return NULL;
    fp_model *m = fp_ge_from_model_def(path, "ge-text", md, len, NULL, error);
    ge__proto__model_def__free_unpacked(md, NULL);
    return m;
}

/* GE JSON is read by the formats module (json-glib), loaded here on first use. */
static fp_model *from_json(const char *path, const char *text, size_t len, GError **error)
{
    const fp_readers *rd = fp_readers_get(error);
    return rd ? rd->ge_json(path, text, len, error) : NULL;
}

/* Unpacks a skeleton built from bytes that start at file offset loc->base. */
static fp_model *from_skeleton(const char *path, const char *format, GBytes *skel, uint64_t file_size,
                               const fp_ge_locator *loc, GError **error)
{
    gsize n = 0;
    const uint8_t *p = g_bytes_get_data(skel, &n);
    bool over = false; /* an empty OpDef is 2 bytes in the file, some 400 unpacked */
    Ge__Proto__ModelDef *md = (Ge__Proto__ModelDef *)fp_pbskel_unpack(&ge__proto__model_def__descriptor, p, n, &over);
    if (!md) {
        if (over)
            g_set_error(error, FP_GE_ERROR, FP_GE_ERROR_LIMIT, "ModelDef takes more than %zu MiB once unpacked",
                        FP_PBSKEL_MAX_UNPACKED >> 20);
        else
            g_set_error(error, FP_GE_ERROR, FP_GE_ERROR_MALFORMED,
                        "not a valid GE ModelDef: a field has the wrong wire type for ge.proto.ModelDef");
        return NULL;
    }
    fp_model *m = fp_ge_from_model_def(path, format, md, file_size, loc, error);
    ge__proto__model_def__free_unpacked(md, NULL);
    return m;
}

static fp_model *skeleton_failed(GError *err, uint64_t base, GError **error)
{
    int code = err->code == FP_PBSKEL_ERROR_IO ? FP_GE_ERROR_IO : FP_GE_ERROR_MALFORMED;
    if (base)
        g_set_error(error, FP_GE_ERROR, code, "MODEL_DEF partition at byte %" G_GUINT64_FORMAT ": %s%s", base,
                    code == FP_GE_ERROR_IO ? "" : "not a valid GE ModelDef: ", err->message);
    else
        g_set_error(error, FP_GE_ERROR, code, "%s%s",
                    code == FP_GE_ERROR_IO ? "" : "not a valid GE ModelDef: ", err->message);
    g_error_free(err);
    return NULL;
}

/* ---------------------------------------------------------------- .om */

typedef struct {
    uint32_t type;
    uint64_t offset, size; /* offset relative to the end of the table */
} om_partition;

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd64(const uint8_t *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

/* Reads the partition table in one layout (wide: 24-byte entries after a padded count; else
 * 12-byte entries). True when it is well formed: contiguous partitions that fit the file. */
static bool om_table(const uint8_t *t, size_t tlen, uint64_t file_size, bool wide, om_partition *parts, uint32_t *count,
                     uint64_t *data_start)
{
    if (tlen < 8)
        return false;
    uint32_t n = rd32(t);
    if (n == 0 || n > OM_MAX_PARTITIONS || (wide && rd32(t + 4) != 0))
        return false;
    size_t head = wide ? 8 : 4, esz = wide ? 24 : 12;
    if (head + (size_t)n * esz > tlen)
        return false;
    uint64_t start = OM_HEADER + head + (uint64_t)n * esz, expect = 0;
    if (start > file_size)
        return false;
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = t + head + i * esz;
        if (wide && rd32(e + 4) != 0)
            return false;
        parts[i].type = rd32(e);
        parts[i].offset = wide ? rd64(e + 8) : rd32(e + 4);
        parts[i].size = wide ? rd64(e + 16) : rd32(e + 8);
        if (parts[i].offset != expect || parts[i].size > file_size - start - expect)
            return false;
        expect += parts[i].size;
    }
    *count = n;
    *data_start = start;
    return true;
}

/* Finds the MODEL_DEF and WEIGHTS partitions of an .om whose first bytes are `head`. */
static bool om_locate(const uint8_t *head, size_t hlen, uint64_t file_size, uint64_t *md_off, uint64_t *md_size,
                      fp_ge_locator *loc, GError **error)
{
    om_partition parts[OM_MAX_PARTITIONS];
    uint32_t n = 0;
    uint64_t start = 0;
    if (hlen < OM_HEADER + 8 || !(om_table(head + OM_HEADER, hlen - OM_HEADER, file_size, true, parts, &n, &start) ||
                                  om_table(head + OM_HEADER, hlen - OM_HEADER, file_size, false, parts, &n, &start))) {
        g_set_error(error, FP_GE_ERROR, FP_GE_ERROR_MALFORMED,
                    "offline model: the partition table at byte %u is not valid in either known layout", OM_HEADER);
        return false;
    }
    bool found = false;
    for (uint32_t i = 0; i < n; i++) {
        if (parts[i].type == OM_MODEL_DEF && !found) {
            found = true;
            *md_off = start + parts[i].offset;
            *md_size = parts[i].size;
        } else if (parts[i].type == OM_WEIGHTS && parts[i].size) {
            loc->weights_base = start + parts[i].offset;
            loc->weights_size = parts[i].size;
        }
    }
    if (!found || *md_size == 0) {
        g_set_error(error, FP_GE_ERROR, FP_GE_ERROR_MALFORMED, "offline model: no MODEL_DEF partition");
        return false;
    }
    loc->base = *md_off;
    return true;
}

/* Largest partition table: header + padded count + 64 wide entries. */
#define OM_HEAD_MAX (OM_HEADER + 8 + OM_MAX_PARTITIONS * 24)

static fp_model *om_from_memory(const char *path, const uint8_t *data, size_t len, GError **error)
{
    fp_ge_locator loc = {0};
    uint64_t off = 0, size = 0;
    if (!om_locate(data, MIN(len, (size_t)OM_HEAD_MAX), len, &off, &size, &loc, error))
        return NULL;
    GError *err = NULL;
    g_autoptr(GBytes)
        skel = fp_pbskel_build(&ge__proto__model_def__descriptor, data + off, (size_t)size, strip_payload, &err);
    if (!skel)
        return skeleton_failed(err, off, error);
    return from_skeleton(path, "ge-om", skel, len, &loc, error);
}

/* pread()s exactly n bytes at off. */
static bool read_at(int fd, void *buf, size_t n, uint64_t off, GError **error)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, (uint8_t *)buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            g_set_error(error, FP_GE_ERROR, FP_GE_ERROR_IO, "read failed at byte %" G_GUINT64_FORMAT ": %s", off + got,
                        r < 0 ? g_strerror(errno) : "file shrank while reading");
            return false;
        }
        got += (size_t)r;
    }
    return true;
}

static fp_model *om_from_fd(const char *path, int fd, uint64_t file_size, GError **error)
{
    uint8_t head[OM_HEAD_MAX];
    size_t hlen = (size_t)MIN(file_size, (uint64_t)sizeof head);
    if (!read_at(fd, head, hlen, 0, error))
        return NULL;
    fp_ge_locator loc = {0};
    uint64_t off = 0, size = 0;
    if (!om_locate(head, hlen, file_size, &off, &size, &loc, error))
        return NULL;
    if (size > G_MAXSIZE / 2) {
        g_set_error(error, FP_GE_ERROR, FP_GE_ERROR_LIMIT, "offline model: MODEL_DEF partition too large");
        return NULL;
    }
    /* only the MODEL_DEF partition is read; the weights partition stays on disk */
    g_autofree uint8_t *buf = g_malloc((size_t)size);
    if (!read_at(fd, buf, (size_t)size, off, error))
        return NULL;
    GError *err = NULL;
    g_autoptr(GBytes) skel = fp_pbskel_build(&ge__proto__model_def__descriptor, buf, (size_t)size, strip_payload, &err);
    if (!skel)
        return skeleton_failed(err, off, error);
    return from_skeleton(path, "ge-om", skel, file_size, &loc, error);
}

/* ---------------------------------------------------------------- entry points */

fp_model *fp_ge_load_buffer(const char *path, fp_ge_kind kind, const uint8_t *data, size_t len, GError **error)
{
    GError *err = NULL;
    switch (kind) {
    case FP_GE_TEXT:
        return from_text(path, (const char *)data, len, error);
    case FP_GE_JSON:
        return from_json(path, (const char *)data, len, error);
    case FP_GE_OM:
        return om_from_memory(path, data, len, error);
    case FP_GE_BINARY: {
        g_autoptr(GBytes) skel = fp_pbskel_build(&ge__proto__model_def__descriptor, data, len, strip_payload, &err);
        if (!skel)
            return skeleton_failed(err, 0, error);
        return from_skeleton(path, "ge-binary", skel, len, NULL, error);
    }
    default:
        g_set_error(error, FP_GE_ERROR, FP_GE_ERROR_MALFORMED, "not a GE file");
        return NULL;
    }
}

fp_model *fp_ge_load(const char *path, fp_ge_kind kind, GError **error)
{
    uint64_t size = 0;
    int fd = fp_pbskel_open(path, FP_GE_ERROR, FP_GE_ERROR_IO, FP_GE_ERROR_MALFORMED, &size, error);
    if (fd < 0)
        return NULL;
    fp_model *m = NULL;
    GError *err = NULL;
    if (kind == FP_GE_OM) {
        m = om_from_fd(path, fd, size, error);
    } else if (kind == FP_GE_BINARY) {
        g_autoptr(GBytes) skel = fp_pbskel_build_fd(&ge__proto__model_def__descriptor, fd, size, strip_payload, &err);
        m = skel ? from_skeleton(path, "ge-binary", skel, size, NULL, error) : skeleton_failed(err, 0, error);
    } else if (size > G_MAXSIZE / 4) {
        g_set_error(error, FP_GE_ERROR, FP_GE_ERROR_LIMIT, "text file too large");
    } else {
        g_autofree char *text = g_malloc((size_t)size);
        if (read_at(fd, text, (size_t)size, 0, error))
            m = fp_ge_load_buffer(path, kind, (const uint8_t *)text, (size_t)size, error);
    }
    close(fd);
    return m;
}
