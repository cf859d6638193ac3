/* pbskel.c - protobuf wire-format skeleton builder (see pbskel.h).
 *
 * The walk works on absolute positions in a source that is either a memory buffer or a file
 * read through a small pread() window; payloads to strip are skipped by position only. */
#include "pbskel.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

G_DEFINE_QUARK(fp-pbskel-error-quark, fp_pbskel_error);

#define WINDOW (64 * 1024)
/* The first read after a jump (a skipped payload) is this small, and each read that continues the
 * window doubles it up to WINDOW: a tensor header between two payloads costs one page, not 64 KiB
 * of the payload that follows it, while long runs of metadata still stream in WINDOW reads. A jump
 * over at most WINDOW_MIN bytes (a small initializer's payload) continues the window: a graph of
 * many small tensors streams too instead of reading a page per tensor. */
#define WINDOW_MIN (4 * 1024)

/* The skeleton being written: a growable buffer. Up to OUT_MAP_FROM bytes it is g_malloc'd; past
 * that it moves once to a mapping sized for the whole input (a skeleton is never longer than its
 * input), so that growing never copies it again and only the pages written become resident. */
#define OUT_MAP_FROM ((size_t)4 << 20)

typedef struct {
    uint8_t *data;
    guint len;
    size_t cap;
    void *map; /* data is this mapping of map_len bytes, else g_malloc'd */
    size_t map_len;
    uint64_t hint; /* the input's size */
} outbuf;

/* Room for `more` bytes past out->len (not counted in len); aborts on out-of-memory. */
static void out_reserve(outbuf *out, size_t more)
{
    size_t need = (size_t)out->len + more;
    if (need <= out->cap)
        return;
    size_t cap = MAX(need, 2 * out->cap);
    if (cap >= OUT_MAP_FROM) {
        if (!out->map && out->hint + 64 > cap && out->hint < SIZE_MAX / 2)
            cap = (size_t)out->hint + 64;
        const size_t huge = (size_t)2 << 20;
        size_t len = (cap + huge - 1) & ~(huge - 1);
        void *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (map != MAP_FAILED) {
#ifdef MADV_HUGEPAGE
            /* past the first OUT_MAP_FROM bytes: a skeleton that big is written whole */
            uintptr_t from = ((uintptr_t)map + OUT_MAP_FROM + huge - 1) & ~(uintptr_t)(huge - 1);
            if (from < (uintptr_t)map + len)
                (void)madvise((void *)from, (uintptr_t)map + len - from, MADV_HUGEPAGE);
#endif
            if (out->len)
                memcpy(map, out->data, out->len);
            if (out->map)
                munmap(out->map, out->map_len);
            else
                g_free(out->data);
            out->data = map;
            out->map = map;
            out->map_len = len;
            out->cap = len;
            return;
        }
    }
    if (out->map) { /* mmap failed: back to the heap */
        uint8_t *d = g_malloc(cap);
        memcpy(d, out->data, out->len);
        munmap(out->map, out->map_len);
        out->map = NULL;
        out->data = d;
    } else {
        out->data = g_realloc(out->data, cap);
    }
    out->cap = cap;
}

static inline void out_append(outbuf *out, const void *p, size_t n)
{
    out_reserve(out, n);
    memcpy(out->data + out->len, p, n);
    out->len += (guint)n;
}

static void out_set_size(outbuf *out, guint len)
{
    if (len > out->len)
        out_reserve(out, len - out->len);
    out->len = len;
}

static void out_unmap(gpointer p)
{
    outbuf *out = p;
    munmap(out->map, out->map_len);
    g_free(out);
}

/* The written bytes as GBytes; out is emptied. */
static GBytes *out_steal(outbuf *out)
{
    GBytes *b;
    if (out->map) {
        outbuf *keep = g_memdup2(out, sizeof *out);
        b = g_bytes_new_with_free_func(out->data, out->len, out_unmap, keep);
    } else {
        b = g_bytes_new_take(out->data, out->len);
    }
    *out = (outbuf){0};
    return b;
}

static void out_clear(outbuf *out)
{
    if (out->map)
        munmap(out->map, out->map_len);
    else
        g_free(out->data);
    *out = (outbuf){0};
}

typedef struct {
    /* source: mem != NULL, or fd with a window buf[0..buf_len) holding bytes from buf_off */
    const uint8_t *mem;
    int fd;
    uint64_t size;
    uint8_t *buf;
    uint64_t buf_off;
    size_t buf_len;
    size_t win; /* size of the next read: WINDOW_MIN..WINDOW (see WINDOW_MIN) */
    fp_pbskel_strip_fn strip;
    outbuf out; /* the skeleton; sub-messages are written in place (see walk) */
    GError **error;
    /* FP_PBSKEL_FAST: every non-message field reachable from the root (pairs of descriptors), and
     * what `strip` answered so far: a sub-message of at most keep_max bytes holds nothing to strip,
     * one of at least strip_min bytes may */
    bool fast;
    GPtrArray *probe;
    uint64_t keep_max, strip_min;
    /* fp_pbskel_reader_build: the fields of the message walked at depth skip_depth are shown to
     * `skip`, and left out of the skeleton when it says so */
    fp_pbskel_skip_fn skip;
    void *skip_data;
    unsigned skip_depth;
} skel;

/* Pointer to bytes [pos, pos+n) of the source; n <= WINDOW and pos+n <= size. NULL on I/O error. */
static const uint8_t *src_at(skel *s, uint64_t pos, size_t n)
{
    if (s->mem)
        return s->mem + pos;
    if (pos >= s->buf_off && pos + n <= s->buf_off + s->buf_len)
        return s->buf + (pos - s->buf_off);
    bool continues = s->buf_len && pos >= s->buf_off && pos <= s->buf_off + s->buf_len + WINDOW_MIN;
    s->win = continues ? MIN(2 * MAX(s->win, (size_t)WINDOW_MIN), (size_t)WINDOW) : WINDOW_MIN;
    size_t want = (size_t)MIN((uint64_t)MAX(s->win, n), s->size - pos);
    size_t got = 0;
    while (got < want) {
        ssize_t r = pread(s->fd, s->buf + got, want - got, (off_t)(pos + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            g_set_error(s->error, FP_PBSKEL_ERROR, FP_PBSKEL_ERROR_IO, "read failed at byte %" G_GUINT64_FORMAT ": %s",
                        pos + got, r < 0 ? g_strerror(errno) : "file shrank while reading");
            return NULL;
        }
        got += (size_t)r;
    }
    s->buf_off = pos;
    s->buf_len = got;
    return s->buf;
}

/* Appends source bytes [pos, pos+n) to out. */
static bool src_copy(skel *s, uint64_t pos, uint64_t n, outbuf *out)
{
    while (n > 0) {
        size_t chunk = (size_t)MIN(n, (uint64_t)WINDOW);
        const uint8_t *p = src_at(s, pos, chunk);
        if (!p)
            return false;
        out_append(out, p, chunk);
        pos += chunk;
        n -= chunk;
    }
    return true;
}

/* Decodes a varint at *pos (before end). 0 ok, 1 truncated/overlong, -1 I/O error. */
static int src_varint(skel *s, uint64_t *pos, uint64_t end, uint64_t *v)
{
    size_t avail = (size_t)MIN(end - *pos, (uint64_t)10);
    const uint8_t *p = src_at(s, *pos, avail), *q = p;
    if (!p)
        return -1;
    if (!fp_pbskel_varint_inline(&q, p + avail, v))
        return 1;
    *pos += (uint64_t)(q - p);
    return 0;
}

static void put_varint(outbuf *out, uint64_t v)
{
    uint8_t buf[10];
    out_append(out, buf, fp_pbskel_put_varint(buf, v));
}

static bool fail(skel *s, uint64_t at, const ProtobufCMessageDescriptor *d, const char *field, const char *what)
{
    if (s->error && *s->error) /* an I/O error is already set */
        return false;
    g_set_error(s->error, FP_PBSKEL_ERROR, FP_PBSKEL_ERROR_MALFORMED, "%s at byte %" G_GUINT64_FORMAT " (in %s%s%s)",
                what, at, d->name, field ? "." : "", field ? field : "");
    return false;
}

/* Collects into s->probe every (message, non-message field) pair reachable from d. */
static void collect_fields(skel *s, const ProtobufCMessageDescriptor *d, GHashTable *seen)
{
    if (!g_hash_table_add(seen, (gpointer)d))
        return;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
            collect_fields(s, f->descriptor, seen);
        } else {
            g_ptr_array_add(s->probe, (gpointer)d);
            g_ptr_array_add(s->probe, (gpointer)f);
        }
    }
}

/* Whether a sub-message of len bytes may hold a field to strip: none of its fields is longer, and
 * `strip` is monotonic in the length, so asking about every reachable field at len bytes decides. */
static bool may_strip(skel *s, uint64_t len)
{
    if (len <= s->keep_max)
        return false;
    if (len >= s->strip_min)
        return true;
    for (guint i = 0; i + 1 < s->probe->len; i += 2)
        if (s->strip(s->probe->pdata[i], s->probe->pdata[i + 1], (size_t)MIN(len, (uint64_t)SIZE_MAX), NULL)) {
            s->strip_min = len;
            return true;
        }
    s->keep_max = len;
    return false;
}

/* Bytes of the varint encoding of v. */
static unsigned varint_size(uint64_t v)
{
    unsigned n = 1;
    while (v > 0x7f) {
        v >>= 7;
        n++;
    }
    return n;
}

/* The usual field of a message whose fields s->skip is shown: a length-delimited one, decoded from
 * the window in one go. 1: s->skip left it out (*p moved past it); 2: it is to be kept, s->skip was
 * asked; 0: something else (a field of another wire type, an odd or a truncated one), nothing
 * done: walk decodes it the slow way, with its errors; -1: an I/O error. */
static int skip_fast(skel *s, uint64_t *p, uint64_t end)
{
    size_t avail = (size_t)MIN(end - *p, (uint64_t)20); /* a tag and a length */
    const uint8_t *q0 = src_at(s, *p, avail), *q = q0;
    fp_pbskel_field f;
    if (!q0)
        return -1;
    if (!fp_pbskel_next_field_head(&q, q0 + avail, &f) || f.wire != 2)
        return 0;
    uint64_t payload = *p + (uint64_t)(q - q0);
    if (f.len > end - payload)
        return 0;
    if (!s->skip(s->skip_data, f.number, 2, *p, payload, f.len))
        return 2;
    *p = payload + f.len;
    return 1;
}

/* The field walk is at: the message it is in, its descriptor (NULL when unknown to d) and the
 * offset of its tag. */
typedef struct {
    const ProtobufCMessageDescriptor *d;
    const ProtobufCFieldDescriptor *f;
    uint64_t start, tag, num;
    uint32_t wire;
} field_at;

static bool walk(skel *s, const ProtobufCMessageDescriptor *d, uint64_t p, uint64_t end, unsigned depth);

static bool fail_at(skel *s, const field_at *fa, const char *what)
{
    return fail(s, fa->start, fa->d, fa->f ? fa->f->name : NULL, what);
}

/* Moves *p past the varint (wire 0, noted in seen[]), fixed64 or fixed32 value of field fa and
 * shows it to s->skip when the message's fields are shown (`showing`). */
static bool walk_scalar(skel *s, const field_at *fa, uint64_t *p, uint64_t end, uint64_t *seen, bool showing)
{
    if (fa->wire == 0) {
        uint64_t v;
        if (src_varint(s, p, end, &v))
            return fail_at(s, fa, "truncated varint");
        if (fa->num < FP_PBSKEL_SEEN)
            seen[fa->num] = v;
    } else {
        uint64_t w = fa->wire == 1 ? 8 : 4;
        if (end - *p < w)
            return fail_at(s, fa, fa->wire == 1 ? "truncated fixed64" : "truncated fixed32");
        *p += w;
    }
    if (showing)
        (void)s->skip(s->skip_data, (uint32_t)fa->num, fa->wire, fa->start, 0, 0);
    return true;
}

/* Writes sub-message field fa, payload [payload, pend), walked: its tag, then the walk in place
 * after room for its original length, then its (possibly smaller) length in front, moving the
 * content only when the length got shorter to encode: no per-level copy of large messages. */
static bool walk_sub(skel *s, const field_at *fa, uint64_t payload, uint64_t pend, unsigned depth)
{
    outbuf *out = &s->out;
    unsigned room = varint_size(pend - payload);
    if (out->len > G_MAXUINT - 2 * 10) /* the tag and the length: 10 bytes each at most */
        return fail_at(s, fa, "message too large");
    put_varint(out, fa->tag);
    guint at = out->len;
    out_set_size(out, at + room);
    if (!walk(s, fa->f->descriptor, payload, pend, depth + 1))
        return false;
    guint clen = out->len - (at + room);
    unsigned k = varint_size(clen);
    if (k < room) {
        memmove(out->data + at + k, out->data + at + room, clen);
        out_set_size(out, at + k + clen);
    }
    fp_pbskel_put_varint(out->data + at, clen); /* k bytes */
    return true;
}

/* Writes the marker of stripped field number num, payload [payload, payload+len) of the input. */
static void put_marker(outbuf *out, uint64_t num, uint64_t payload, uint64_t len)
{
    uint8_t m[4 + 8 + 8];
    fp_pbskel_put_le(m, num, 4);
    fp_pbskel_put_le(m + 4, payload, 8);
    fp_pbskel_put_le(m + 12, len, 8);
    put_varint(out, ((uint64_t)FP_PBSKEL_MARKER_FIELD << 3) | 2);
    put_varint(out, sizeof m);
    out_append(out, m, sizeof m);
}

/* Walks length-delimited field fa, its length at *p, and moves *p past its payload. `show`: the
 * field is still to be shown to s->skip. 1: written (walked, stripped) or left out; 0: to be
 * copied as it is; -1: an error. */
static int walk_delimited(skel *s, const field_at *fa, uint64_t *p, uint64_t end, unsigned depth, const uint64_t *seen,
                          bool show)
{
    uint64_t len;
    const char *bad = src_varint(s, p, end, &len) ? "truncated length"
                      : len > end - *p            ? "length runs past the end of the data"
                                                  : NULL;
    if (bad) {
        fail_at(s, fa, bad);
        return -1;
    }
    uint64_t payload = *p;
    *p += len;
    if (show && s->skip(s->skip_data, (uint32_t)fa->num, fa->wire, fa->start, payload, len))
        return 1;
    const ProtobufCFieldDescriptor *f = fa->f;
    if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
        /* FP_PBSKEL_FAST: a sub-message that can neither hold a field to strip nor reach the depth
         * limit (each level takes at least 2 bytes) is copied as it is */
        if (s->fast && depth + 1 + len / 2 < FP_PBSKEL_MAX_DEPTH && !may_strip(s, len))
            return 0;
        return walk_sub(s, fa, payload, *p, depth) ? 1 : -1;
    }
    if (f && s->strip && s->strip(fa->d, f, (size_t)MIN(len, (uint64_t)SIZE_MAX), seen)) {
        put_marker(&s->out, fa->num, payload, len);
        return 1;
    }
    return 0;
}

/* Appends message `d` in [p, end) to s->out, stripping the fields s->strip names and walking the
 * sub-messages (walk_sub); the fields of the message at depth s->skip_depth are shown to s->skip,
 * which may leave them out. */
static bool walk(skel *s, const ProtobufCMessageDescriptor *d, uint64_t p, uint64_t end, unsigned depth)
{
    if (depth >= FP_PBSKEL_MAX_DEPTH) {
        g_set_error(s->error, FP_PBSKEL_ERROR, FP_PBSKEL_ERROR_DEPTH,
                    "messages nested deeper than %d at byte %" G_GUINT64_FORMAT " (in %s)", FP_PBSKEL_MAX_DEPTH, p,
                    d->name);
        return false;
    }
    uint64_t seen[FP_PBSKEL_SEEN];
    for (unsigned i = 0; i < FP_PBSKEL_SEEN; i++)
        seen[i] = UINT64_MAX;
    bool skipping = s->skip && depth == s->skip_depth;
    while (p < end) {
        field_at fa = {.d = d, .start = p};
        bool asked = false; /* s->skip was shown this field already, and kept it */
        if (skipping) {
            int r = skip_fast(s, &p, end);
            if (r < 0)
                return false;
            if (r == 1)
                continue;
            asked = r == 2;
        }
        if (src_varint(s, &p, end, &fa.tag))
            return fail(s, fa.start, d, NULL, "truncated field tag");
        fa.wire = (uint32_t)(fa.tag & 7);
        fa.num = fa.tag >> 3;
        if (fa.num == 0 || fa.num > 0x1fffffff)
            return fail(s, fa.start, d, NULL, "invalid field number");
        fa.f = protobuf_c_message_descriptor_get_field(d, (unsigned)fa.num);
        if (fa.wire == 0 || fa.wire == 1 || fa.wire == 5) {
            if (!walk_scalar(s, &fa, &p, end, seen, skipping))
                return false;
        } else if (fa.wire == 2) {
            int r = walk_delimited(s, &fa, &p, end, depth, seen, skipping && !asked);
            if (r < 0)
                return false;
            if (r == 1)
                continue;
        } else {
            return fail_at(s, &fa, "unsupported wire type (group or invalid)");
        }
        if (p - fa.start > G_MAXUINT - s->out.len)
            return fail_at(s, &fa, "message too large");
        if (!src_copy(s, fa.start, p - fa.start, &s->out))
            return false;
    }
    return true;
}

/* Prepares s for walks from root message d with `flags`. */
static void begin(skel *s, const ProtobufCMessageDescriptor *d, unsigned flags)
{
    s->fast = (flags & FP_PBSKEL_FAST) && s->strip;
    if (s->fast) {
        g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
        s->probe = g_ptr_array_new();
        s->strip_min = UINT64_MAX;
        collect_fields(s, d, seen);
    }
}

static GBytes *build(skel *s, const ProtobufCMessageDescriptor *d, unsigned flags)
{
    GBytes *result = NULL;
    begin(s, d, flags);
    s->out.hint = s->size;
    out_reserve(&s->out, (size_t)MIN(s->size, (uint64_t)(1u << 20)));
    if (walk(s, d, 0, s->size, 0))
        result = out_steal(&s->out);
    out_clear(&s->out);
    g_free(s->buf);
    if (s->probe)
        g_ptr_array_free(s->probe, TRUE);
    return result;
}

GBytes *fp_pbskel_build_ex(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t len,
                           fp_pbskel_strip_fn strip, unsigned flags, GError **error)
{
    skel s = {.mem = data, .fd = -1, .size = len, .strip = strip, .error = error};
    if (!data)
        s.mem = (const uint8_t *)"";
    return build(&s, d, flags);
}

GBytes *fp_pbskel_build_fd_ex(const ProtobufCMessageDescriptor *d, int fd, uint64_t size, fp_pbskel_strip_fn strip,
                              unsigned flags, GError **error)
{
    skel s = {.fd = fd, .size = size, .strip = strip, .error = error, .buf = g_malloc(WINDOW)};
    return build(&s, d, flags);
}

GBytes *fp_pbskel_build(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t len, fp_pbskel_strip_fn strip,
                        GError **error)
{
    return fp_pbskel_build_ex(d, data, len, strip, 0, error);
}

GBytes *fp_pbskel_build_fd(const ProtobufCMessageDescriptor *d, int fd, uint64_t size, fp_pbskel_strip_fn strip,
                           GError **error)
{
    return fp_pbskel_build_fd_ex(d, fd, size, strip, 0, error);
}

int fp_pbskel_open(const char *path, GQuark domain, int io_code, int malformed_code, uint64_t *size, GError **error)
{
    int fd = g_open(path, O_RDONLY | O_CLOEXEC, 0);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        g_set_error(error, domain, io_code, "cannot read: %s", g_strerror(e));
        return -1;
    }
    if (!S_ISREG(st.st_mode) || st.st_size == 0) {
        close(fd);
        g_set_error_literal(error, domain, malformed_code, S_ISREG(st.st_mode) ? "empty file" : "not a regular file");
        return -1;
    }
    *size = (uint64_t)st.st_size;
    return fd;
}

void fp_pbskel_fail_va(GError **error, GQuark domain, int code, const char *fmt, va_list ap)
{
    if (!error || *error)
        return;
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    g_set_error_literal(error, domain, code, msg);
}

bool fp_pbskel_numbers_valid(const ProtobufCMessage *msg)
{
    for (size_t i = 0; i < msg->n_unknown_fields; i++)
        if (msg->unknown_fields[i].tag > 0x1fffffff)
            return false;
    const ProtobufCMessageDescriptor *d = msg->descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        const char *base = (const char *)msg;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)(base + f->quantifier_offset);
            ProtobufCMessage *const *sub = *(ProtobufCMessage *const *const *)(base + f->offset);
            for (size_t k = 0; k < n; k++)
                if (!fp_pbskel_numbers_valid(sub[k]))
                    return false;
            continue;
        }
        if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) && *(const uint32_t *)(base + f->quantifier_offset) != f->id)
            continue;
        const ProtobufCMessage *sub = *(ProtobufCMessage *const *)(base + f->offset);
        if (sub && !fp_pbskel_numbers_valid(sub))
            return false;
    }
    return true;
}

bool fp_pbskel_varint(const uint8_t **p, const uint8_t *end, uint64_t *v) { return fp_pbskel_varint_inline(p, end, v); }

bool fp_pbskel_next_field(const uint8_t **p, const uint8_t *end, fp_pbskel_field *f)
{
    return fp_pbskel_next_field_inline(p, end, f);
}

unsigned fp_pbskel_markers(const ProtobufCMessage *msg, fp_pbskel_marker *out, unsigned max)
{
    unsigned n = 0;
    for (unsigned i = 0; i < msg->n_unknown_fields && n < max; i++) {
        const ProtobufCMessageUnknownField *u = &msg->unknown_fields[i];
        if (u->tag != FP_PBSKEL_MARKER_FIELD || u->wire_type != PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED)
            continue;
        /* protobuf-c keeps the length prefix in an unknown field's data: 0x14, then 20 bytes */
        if (u->len != 21 || u->data[0] != 20)
            continue;
        const uint8_t *p = u->data + 1;
        out[n].field = (uint32_t)fp_pbskel_le(p, 4);
        out[n].offset = fp_pbskel_le(p + 4, 8);
        out[n].length = fp_pbskel_le(p + 12, 8);
        n++;
    }
    return n;
}

/* protobuf-c allocator counting what it hands out; blocks come from malloc, as with protobuf-c's
 * default allocator, so protobuf_c_message_free_unpacked(msg, NULL) frees them. */
typedef struct {
    size_t used;
    bool over;
} budget;

static void *budget_alloc(void *data, size_t size)
{
    budget *b = data;
    if (size > FP_PBSKEL_MAX_UNPACKED - b->used) {
        b->over = true;
        return NULL; /* protobuf-c frees what it unpacked so far and fails */
    }
    b->used += size;
    return malloc(size);
}

static void budget_free(void *data, void *p)
{
    (void)data;
    free(p);
}

ProtobufCMessage *fp_pbskel_unpack(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t len,
                                   bool *over_budget)
{
    budget b = {0};
    ProtobufCAllocator alloc = {.alloc = budget_alloc, .free = budget_free, .allocator_data = &b};
    ProtobufCMessage *msg = protobuf_c_message_unpack(d, &alloc, len, data);
    if (over_budget)
        *over_budget = b.over;
    return msg;
}

/* ---- readers: skeletons of parts of a source ---- */

struct fp_pbskel_reader {
    skel s;
};

fp_pbskel_reader *fp_pbskel_reader_new(const ProtobufCMessageDescriptor *root, const uint8_t *mem, int fd,
                                       uint64_t size, fp_pbskel_strip_fn strip, unsigned flags)
{
    fp_pbskel_reader *r = g_new0(fp_pbskel_reader, 1);
    r->s = (skel){.mem = mem, .fd = fd, .size = size, .strip = strip};
    if (!mem)
        r->s.buf = g_malloc(WINDOW);
    r->s.out.hint = 0;
    begin(&r->s, root, flags);
    return r;
}

void fp_pbskel_reader_free(fp_pbskel_reader *r)
{
    if (!r)
        return;
    out_clear(&r->s.out);
    g_free(r->s.buf);
    if (r->s.probe)
        g_ptr_array_free(r->s.probe, TRUE);
    g_free(r);
}

bool fp_pbskel_reader_build(fp_pbskel_reader *r, const ProtobufCMessageDescriptor *d, uint64_t offset, uint64_t len,
                            unsigned depth, fp_pbskel_skip_fn skip, void *skip_data, const uint8_t **out,
                            size_t *out_len)
{
    skel *s = &r->s;
    bool ok = false;
    s->out.len = 0;
    s->error = NULL;
    if (offset <= s->size && len <= s->size - offset) {
        if (!skip && s->fast && depth + len / 2 < FP_PBSKEL_MAX_DEPTH && !may_strip(s, len)) {
            /* as the whole walk copies a small sub-message; from the window itself when it fits */
            if (len <= WINDOW) {
                const uint8_t *q = src_at(s, offset, (size_t)len);
                if (q) {
                    *out = len ? q : (const uint8_t *)"";
                    *out_len = (size_t)len;
                }
                return q != NULL;
            }
            ok = src_copy(s, offset, len, &s->out);
        } else {
            s->skip = skip;
            s->skip_data = skip_data;
            s->skip_depth = depth;
            ok = walk(s, d, offset, offset + len, depth);
            s->skip = NULL;
        }
    }
    *out = s->out.data ? s->out.data : (const uint8_t *)"";
    *out_len = s->out.len;
    return ok;
}

const uint8_t *fp_pbskel_reader_peek(const fp_pbskel_reader *r, uint64_t pos, uint64_t len)
{
    const skel *s = &r->s;
    if (pos > s->size || len > s->size - pos)
        return NULL;
    if (s->mem)
        return s->mem + pos;
    if (pos >= s->buf_off && pos - s->buf_off <= s->buf_len && len <= s->buf_len - (pos - s->buf_off))
        return s->buf + (pos - s->buf_off);
    return NULL;
}

bool fp_pbskel_reader_field(fp_pbskel_reader *r, uint64_t *pos, uint64_t end, fp_pbskel_field *f, uint64_t *payload)
{
    skel *s = &r->s;
    s->error = NULL;
    if (end > s->size || *pos >= end)
        return false;
    /* a tag and a varint or a length take at most 20 bytes: decode them from one window */
    size_t avail = (size_t)MIN(end - *pos, (uint64_t)20);
    const uint8_t *q0 = src_at(s, *pos, avail), *q = q0, *qend = q0 + avail;
    if (!q0 || !fp_pbskel_next_field_head(&q, qend, f))
        return false;
    uint64_t p = *pos + (uint64_t)(q - q0);
    *payload = 0;
    if (f->wire == 2) {
        if (f->len > end - p)
            return false;
        *payload = p;
        p += f->len;
    }
    *pos = p;
    return true;
}
