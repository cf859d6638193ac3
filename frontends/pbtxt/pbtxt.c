/* pbtxt.c - protobuf text-format reader (see pbtxt.h).
 *
 * A hand-written lexer and recursive-descent parser that writes the wire encoding of what it
 * reads (pbwire.h), field by field, guided by the protobuf-c descriptors; protobuf-c then unpacks
 * the bytes. Without a descriptor (unknown fields being skipped, fp_pbtxt_peek) the same parser
 * walks the text and writes nothing.
 */
#include "pbtxt.h"

#include <math.h>
#include <string.h>

#include "pbwire.h"

G_DEFINE_QUARK(fp-pbtxt-error-quark, fp_pbtxt_error);

typedef enum { T_EOF, T_IDENT, T_NUMBER, T_STRING, T_SYM } tok_kind;

typedef struct {
    tok_kind kind;
    size_t pos, n; /* token text s[pos .. pos+n); for T_STRING the quotes included */
    uint32_t line, col;
    char sym; /* T_SYM */
} tok;

typedef struct {
    const char *s;
    size_t len, pos;
    uint32_t line;
    size_t line_start;
    tok t; /* current token */
    GError **error;
    unsigned flags;
    unsigned skipped;
    fp_pbwire *w;          /* NULL when walking without writing */
    GByteArray *str;       /* scratch for decoded strings */
    fp_pbtxt_peek_fn peek; /* fp_pbtxt_peek's callback, else NULL */
    void *peek_user;
    bool stopped;    /* the peek callback asked to stop */
    size_t messages; /* parsed so far (FP_PBTXT_MAX_MESSAGES) */
} parser;

static bool fail_at(parser *p, uint32_t line, uint32_t col, int code, const char *fmt, ...) G_GNUC_PRINTF(5, 6);
static bool fail_at(parser *p, uint32_t line, uint32_t col, int code, const char *fmt, ...)
{
    if (p->error && *p->error)
        return false;
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(p->error, FP_PBTXT_ERROR, code, "line %u:%u: %s", line, col, msg);
    return false;
}

#define FAIL(p, tk, code, ...) fail_at((p), (tk).line, (tk).col, (code), __VA_ARGS__)

/* ------------------------------------------------------------------------------ lexer */

static bool is_ident_start(char c) { return g_ascii_isalpha(c) || c == '_'; }
static bool is_ident_char(char c) { return g_ascii_isalnum(c) || c == '_'; }

/* Skips blanks and # comments, counting lines. */
static void skip_space(parser *p)
{
    while (p->pos < p->len) {
        char c = p->s[p->pos];
        if (c == '\n') {
            p->pos++;
            p->line++;
            p->line_start = p->pos;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f') {
            p->pos++;
        } else if (c == '#') {
            while (p->pos < p->len && p->s[p->pos] != '\n')
                p->pos++;
        } else {
            break;
        }
    }
}

/* Length of a number token at s[i..len): decimal/octal/hex integer or a float with an optional
 * exponent and f/F suffix. Returns 0 if no valid number starts there or one runs into letters. */
static size_t lex_number(const char *s, size_t i, size_t len)
{
    size_t j = i;
    if (j + 1 < len && s[j] == '0' && (s[j + 1] == 'x' || s[j + 1] == 'X')) {
        j += 2;
        size_t d = j;
        while (j < len && g_ascii_isxdigit(s[j]))
            j++;
        if (j == d)
            return 0;
    } else {
        size_t digits = 0;
        while (j < len && g_ascii_isdigit(s[j]))
            j++, digits++;
        if (j < len && s[j] == '.') {
            j++;
            while (j < len && g_ascii_isdigit(s[j]))
                j++, digits++;
        }
        if (!digits)
            return 0;
        if (j < len && (s[j] == 'e' || s[j] == 'E')) {
            size_t k = j + 1;
            if (k < len && (s[k] == '+' || s[k] == '-'))
                k++;
            size_t e = k;
            while (k < len && g_ascii_isdigit(s[k]))
                k++;
            if (k == e)
                return 0;
            j = k;
        }
        if (j < len && (s[j] == 'f' || s[j] == 'F'))
            j++;
    }
    if (j < len && (is_ident_char(s[j]) || s[j] == '.'))
        return 0;
    return j - i;
}

/* Reads the next token into p->t. False (error set) on a malformed token. */
static bool next(parser *p)
{
    skip_space(p);
    tok *t = &p->t;
    t->pos = p->pos;
    t->line = p->line;
    t->col = (uint32_t)MIN(p->pos - p->line_start + 1, (size_t)G_MAXUINT32);
    t->n = 0;
    if (p->pos >= p->len) {
        t->kind = T_EOF;
        return true;
    }
    const char *s = p->s;
    char c = s[p->pos];
    if (is_ident_start(c)) {
        size_t j = p->pos;
        while (j < p->len && is_ident_char(s[j]))
            j++;
        t->kind = T_IDENT;
        t->n = j - p->pos;
    } else if (g_ascii_isdigit(c) || (c == '.' && p->pos + 1 < p->len && g_ascii_isdigit(s[p->pos + 1]))) {
        size_t n = lex_number(s, p->pos, p->len);
        if (!n)
            return FAIL(p, *t, FP_PBTXT_ERROR_SYNTAX, "malformed number");
        t->kind = T_NUMBER;
        t->n = n;
    } else if (c == '"' || c == '\'') {
        size_t j = p->pos + 1;
        while (j < p->len && s[j] != c && s[j] != '\n') {
            if (s[j] == '\\' && j + 1 < p->len && s[j + 1] != '\n')
                j++;
            j++;
        }
        if (j >= p->len || s[j] != c)
            return FAIL(p, *t, FP_PBTXT_ERROR_SYNTAX, "string literal is not closed before the end of the line");
        t->kind = T_STRING;
        t->n = j + 1 - p->pos;
    } else if (strchr("{}<>[]:,;-", c)) {
        t->kind = T_SYM;
        t->sym = c;
        t->n = 1;
    } else {
        if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f)
            return FAIL(p, *t, FP_PBTXT_ERROR_SYNTAX, "unexpected byte 0x%02x", (unsigned char)c);
        return FAIL(p, *t, FP_PBTXT_ERROR_SYNTAX, "unexpected character '%c'", c);
    }
    p->pos += t->n;
    return true;
}

static bool is_sym(const parser *p, char c) { return p->t.kind == T_SYM && p->t.sym == c; }

/* The first character after the current token that is not blank or comment (0 at the end). */
static char raw_next_char(const parser *p)
{
    size_t i = p->pos;
    while (i < p->len) {
        char c = p->s[i];
        if (c == '#') {
            while (i < p->len && p->s[i] != '\n')
                i++;
        } else if (g_ascii_isspace(c)) {
            i++;
        } else {
            return c;
        }
    }
    return 0;
}

/* A short description of the current token for error messages (caller frees). */
static char *describe(const parser *p)
{
    const tok *t = &p->t;
    switch (t->kind) {
    case T_EOF:
        return g_strdup("end of input");
    case T_STRING:
        return g_strdup("a string");
    default:
        return g_strdup_printf("'%.*s'", (int)MIN(t->n, (size_t)40), p->s + t->pos);
    }
}

/* ------------------------------------------------------------------------------ literals */

static int hexval(char c) { return g_ascii_xdigit_value(c); }

static void put_utf8(GByteArray *out, uint32_t cp)
{
    char buf[8];
    gint n = g_unichar_to_utf8(cp, buf);
    g_byte_array_append(out, (const guint8 *)buf, (guint)n);
}

/* The byte of the one-character escape \c, false when c is not one. */
static bool simple_escape(char c, uint8_t *b)
{
    static const char from[] = "abfnrtv\\'\"?", to[] = "\a\b\f\n\r\t\v\\'\"?";
    const char *hit = c ? strchr(from, c) : NULL;
    if (!hit)
        return false;
    *b = (uint8_t)to[hit - from];
    return true;
}

/* The code point of the \u (4 hex digits) or \U (8) escape whose digits start at s[*i] (before
 * n), a UTF-16 surrogate pair written as two \u escapes joined; *i moves past it. False on too
 * few digits, a lone surrogate or a value past U+10FFFF. */
static bool unicode_escape(const char *s, size_t n, size_t *i, char c, uint32_t *out)
{
    int digits = c == 'u' ? 4 : 8;
    uint32_t cp = 0;
    for (int k = 0; k < digits; k++) {
        if (*i >= n || hexval(s[*i]) < 0)
            return false;
        cp = cp * 16 + (uint32_t)hexval(s[(*i)++]);
    }
    if (cp >= 0xd800 && cp < 0xdc00 && *i + 6 <= n && s[*i] == '\\' && s[*i + 1] == 'u') {
        uint32_t lo = 0;
        bool ok = true;
        for (int k = 0; k < 4; k++)
            ok = ok && hexval(s[*i + 2 + k]) >= 0 && ((lo = lo * 16 + (uint32_t)hexval(s[*i + 2 + k])), true);
        if (ok && lo >= 0xdc00 && lo < 0xe000) {
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            *i += 6;
        }
    }
    *out = cp;
    return cp <= 0x10ffff && !(cp >= 0xd800 && cp < 0xe000);
}

/* The byte of the octal (\ooo, up to 3 digits, the first one c) or hex (\xhh, 1 or 2 digits after
 * c = 'x' or 'X') escape, the digits after c from s[*i] (before n); *i moves past them. False when
 * c starts neither, or on no hex digit or an octal value over 0xff. */
static bool numeric_escape(const char *s, size_t n, size_t *i, char c, uint8_t *b)
{
    unsigned v;
    if (c >= '0' && c <= '7') {
        v = (unsigned)(c - '0');
        for (int k = 0; k < 2 && *i < n && s[*i] >= '0' && s[*i] <= '7'; k++)
            v = v * 8 + (unsigned)(s[(*i)++] - '0');
        if (v > 0xff)
            return false;
    } else if (c == 'x' || c == 'X') {
        if (*i >= n || hexval(s[*i]) < 0)
            return false;
        v = (unsigned)hexval(s[(*i)++]);
        if (*i < n && hexval(s[*i]) >= 0)
            v = v * 16 + (unsigned)hexval(s[(*i)++]);
    } else {
        return false;
    }
    *b = (uint8_t)v;
    return true;
}

/* Appends to out the escape whose character after the backslash is s[*i] (before n) and moves *i
 * past it; false when it is not a valid escape. */
static bool unescape_one(const char *s, size_t n, size_t *i, GByteArray *out)
{
    if (*i >= n)
        return false;
    char c = s[(*i)++];
    if (c == 'u' || c == 'U') {
        uint32_t cp;
        if (!unicode_escape(s, n, i, c, &cp))
            return false;
        put_utf8(out, cp);
        return true;
    }
    uint8_t b;
    if (!simple_escape(c, &b) && !numeric_escape(s, n, i, c, &b))
        return false;
    g_byte_array_append(out, &b, 1);
    return true;
}

bool fp_pbtxt_unescape(const char *s, size_t n, GByteArray *out, size_t *bad_at)
{
    size_t i = 0;
    while (i < n) {
        size_t run = i;
        while (run < n && s[run] != '\\')
            run++;
        if (run > i)
            g_byte_array_append(out, (const guint8 *)s + i, (guint)(run - i));
        i = run;
        if (i >= n)
            break;
        size_t at = i++;
        if (!unescape_one(s, n, &i, out)) {
            if (bad_at)
                *bad_at = at;
            return false;
        }
    }
    return true;
}

bool fp_pbtxt_parse_real(const char *s, size_t n, double *out)
{
    bool neg = false;
    if (n && s[0] == '-') {
        neg = true;
        s++, n--;
    }
    if (n == 0 || n > 400)
        return false;
    char buf[416];
    memcpy(buf, s, n);
    buf[n] = 0;
    double v;
    if (g_ascii_strcasecmp(buf, "inf") == 0 || g_ascii_strcasecmp(buf, "infinity") == 0) {
        v = INFINITY;
    } else if (g_ascii_strcasecmp(buf, "nan") == 0) {
        v = NAN;
    } else {
        if (lex_number(buf, 0, n) != n)
            return false;
        if (n > 2 && buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X')) {
            v = (double)g_ascii_strtoull(buf, NULL, 16);
        } else {
            if (buf[n - 1] == 'f' || buf[n - 1] == 'F')
                buf[--n] = 0;
            char *end = NULL;
            v = g_ascii_strtod(buf, &end);
            if (end != buf + n)
                return false;
        }
    }
    *out = neg ? -v : v;
    return true;
}

/* Parses the integer token at t (no sign) into *mag. 0 ok, 1 not an integer, 2 overflow. */
static int parse_uint(const char *s, size_t n, uint64_t *mag)
{
    unsigned base = 10;
    size_t i = 0;
    if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        i = 2;
    } else if (n > 1 && s[0] == '0') {
        base = 8;
        i = 1;
    }
    uint64_t v = 0;
    for (; i < n; i++) {
        int d = base == 16 ? hexval(s[i]) : g_ascii_isdigit(s[i]) ? s[i] - '0' : -1;
        if (d < 0 || (unsigned)d >= base)
            return 1;
        if (v > (G_MAXUINT64 - (unsigned)d) / base)
            return 2;
        v = v * base + (unsigned)d;
    }
    *mag = v;
    return 0;
}

/* ------------------------------------------------------------------------------ parser */

static bool parse_body(parser *p, const ProtobufCMessageDescriptor *d, unsigned depth, char close, tok open,
                       const char *what);
static bool parse_scalar_or_skip(parser *p, const ProtobufCFieldDescriptor *f, const char *fname);

static const char *type_word(const ProtobufCFieldDescriptor *f)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_STRING:
        return "a string";
    case PROTOBUF_C_TYPE_BYTES:
        return "a string (bytes)";
    case PROTOBUF_C_TYPE_BOOL:
        return "a bool";
    case PROTOBUF_C_TYPE_ENUM:
        return "an enum name or number";
    case PROTOBUF_C_TYPE_FLOAT:
    case PROTOBUF_C_TYPE_DOUBLE:
        return "a number";
    case PROTOBUF_C_TYPE_MESSAGE:
        return "a message";
    default:
        return "an integer";
    }
}

/* Reads one string value (adjacent literals concatenated) into p->str. */
static bool read_string(parser *p, const char *fname)
{
    g_byte_array_set_size(p->str, 0);
    if (p->t.kind != T_STRING) {
        g_autofree char *what = describe(p);
        return FAIL(p, p->t, FP_PBTXT_ERROR_FIELD, "field '%s' expects a string, found %s", fname, what);
    }
    while (p->t.kind == T_STRING) {
        size_t bad = 0;
        if (!fp_pbtxt_unescape(p->s + p->t.pos + 1, p->t.n - 2, p->str, &bad))
            return fail_at(p, p->t.line, p->t.col + 1 + (uint32_t)MIN(bad, (size_t)G_MAXUINT16), FP_PBTXT_ERROR_SYNTAX,
                           "invalid escape sequence in string of field '%s'", fname);
        if (!next(p))
            return false;
    }
    return true;
}

/* Parses one scalar value of field f (after ':') and writes it. */
static bool parse_scalar(parser *p, const ProtobufCFieldDescriptor *f)
{
    tok start = p->t;
    if (f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_BYTES) {
        if (!read_string(p, f->name))
            return false;
        if (p->w)
            fp_pbwire_bytes(p->w, f->id, p->str->data, p->str->len);
        return true;
    }
    bool neg = false;
    if (is_sym(p, '-')) {
        neg = true;
        if (!next(p))
            return false;
    }
    tok t = p->t;
    const char *ts = p->s + t.pos;
    if (t.kind != T_NUMBER && t.kind != T_IDENT) {
        g_autofree char *what = describe(p);
        return FAIL(p, t, FP_PBTXT_ERROR_FIELD, "field '%s' expects %s, found %s", f->name, type_word(f), what);
    }
    if (f->type == PROTOBUF_C_TYPE_FLOAT || f->type == PROTOBUF_C_TYPE_DOUBLE) {
        double v;
        if (!fp_pbtxt_parse_real(ts, t.n, &v))
            return FAIL(p, t, FP_PBTXT_ERROR_FIELD, "field '%s' expects a number, found '%.*s'", f->name,
                        (int)MIN(t.n, (size_t)40), ts);
        if (p->w)
            fp_pbwire_real(p->w, f, neg ? -v : v);
        return next(p);
    }
    uint64_t mag = 0;
    if (t.kind == T_IDENT) {
        char name[256];
        if (t.n >= sizeof name)
            return FAIL(p, t, FP_PBTXT_ERROR_FIELD, "field '%s': identifier too long", f->name);
        memcpy(name, ts, t.n);
        name[t.n] = 0;
        if (f->type == PROTOBUF_C_TYPE_BOOL && !neg) {
            if (!strcmp(name, "true") || !strcmp(name, "True") || !strcmp(name, "t"))
                mag = 1;
            else if (!strcmp(name, "false") || !strcmp(name, "False") || !strcmp(name, "f"))
                mag = 0;
            else
                return FAIL(p, t, FP_PBTXT_ERROR_FIELD, "field '%s' expects true or false, found '%s'", f->name, name);
        } else if (f->type == PROTOBUF_C_TYPE_ENUM && !neg) {
            const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value_by_name(f->descriptor, name);
            if (!ev)
                return FAIL(p, t, FP_PBTXT_ERROR_FIELD, "field '%s': '%s' is not a value of enum %s", f->name, name,
                            ((const ProtobufCEnumDescriptor *)f->descriptor)->name);
            neg = ev->value < 0;
            mag = neg ? (uint64_t)0 - (uint64_t)(int64_t)ev->value : (uint64_t)ev->value;
        } else {
            return FAIL(p, t, FP_PBTXT_ERROR_FIELD, "field '%s' expects %s, found '%s'", f->name, type_word(f), name);
        }
    } else {
        int r = parse_uint(ts, t.n, &mag);
        if (r == 1)
            return FAIL(p, t, FP_PBTXT_ERROR_FIELD, "field '%s' expects %s, found '%.*s'", f->name, type_word(f),
                        (int)MIN(t.n, (size_t)40), ts);
        if (r == 2)
            return FAIL(p, start, FP_PBTXT_ERROR_RANGE, "field '%s': integer out of range", f->name);
    }
    if (p->w && !fp_pbwire_int(p->w, f, neg, mag))
        return FAIL(p, start, FP_PBTXT_ERROR_RANGE, "field '%s': value %s%.*s is out of range for its type", f->name,
                    neg ? "-" : "", (int)MIN(t.n, (size_t)40), ts);
    return next(p);
}

/* Parses a {...} or <...> value of field f (NULL: skip) at the current token. */
static bool parse_message(parser *p, const ProtobufCFieldDescriptor *f, unsigned depth, const char *fname)
{
    tok open = p->t;
    if (!is_sym(p, '{') && !is_sym(p, '<')) {
        g_autofree char *what = describe(p);
        return FAIL(p, open, FP_PBTXT_ERROR_FIELD, "field '%s' expects a message in {} or <>, found %s", fname, what);
    }
    if (depth + 1 >= FP_PBTXT_MAX_DEPTH)
        return FAIL(p, open, FP_PBTXT_ERROR_LIMIT, "messages nested deeper than %d", FP_PBTXT_MAX_DEPTH);
    if (++p->messages > FP_PBTXT_MAX_MESSAGES)
        return FAIL(p, open, FP_PBTXT_ERROR_LIMIT, "more than %d messages", FP_PBTXT_MAX_MESSAGES);
    char close = open.sym == '{' ? '}' : '>';
    if (!next(p))
        return false;
    if (f && p->w)
        fp_pbwire_begin(p->w);
    if (!parse_body(p, f ? f->descriptor : NULL, depth + 1, close, open, fname))
        return false;
    if (f && p->w && !fp_pbwire_end(p->w, f->id))
        return FAIL(p, open, FP_PBTXT_ERROR_LIMIT, "message '%s' is larger than 2 GiB", fname);
    return true;
}

/* Parses the value of field f (NULL: skip it) after its name; handles ':' and lists. */
static bool parse_value(parser *p, const ProtobufCFieldDescriptor *f, unsigned depth, const char *fname)
{
    bool colon = is_sym(p, ':');
    if (p->peek) {
        /* report the field before its value is read: a head may end inside the value */
        char c = colon ? raw_next_char(p) : is_sym(p, '{') ? '{' : is_sym(p, '<') ? '<' : 0;
        if (!p->peek(depth, fname, c == '{' || c == '<', p->peek_user)) {
            p->stopped = true;
            return false;
        }
    }
    if (colon && !next(p))
        return false;
    bool message = f ? f->type == PROTOBUF_C_TYPE_MESSAGE : (is_sym(p, '{') || is_sym(p, '<'));
    if (is_sym(p, '[')) {
        if (f && f->label != PROTOBUF_C_LABEL_REPEATED)
            return FAIL(p, p->t, FP_PBTXT_ERROR_FIELD, "field '%s' is not repeated: a [...] list is not allowed",
                        fname);
        if (f && !message && !colon)
            return FAIL(p, p->t, FP_PBTXT_ERROR_SYNTAX, "expected ':' between field '%s' and its list", fname);
        if (!next(p))
            return false;
        if (is_sym(p, ']'))
            return next(p);
        for (;;) {
            bool elem_msg = f ? message : (is_sym(p, '{') || is_sym(p, '<'));
            if (elem_msg ? !parse_message(p, f, depth, fname) : !parse_scalar_or_skip(p, f, fname))
                return false;
            if (is_sym(p, ']'))
                return next(p);
            if (!is_sym(p, ',')) {
                g_autofree char *what = describe(p);
                return FAIL(p, p->t, FP_PBTXT_ERROR_SYNTAX, "expected ',' or ']' in the list of field '%s', found %s",
                            fname, what);
            }
            if (!next(p))
                return false;
        }
    }
    if (message)
        return parse_message(p, f, depth, fname);
    if (!colon) {
        g_autofree char *what = describe(p);
        return FAIL(p, p->t, FP_PBTXT_ERROR_SYNTAX, "expected ':' after field '%s', found %s", fname, what);
    }
    return parse_scalar_or_skip(p, f, fname);
}

/* A scalar of field f, or (f NULL) any scalar skipped: [-]number, [-]identifier, strings. */
static bool parse_scalar_or_skip(parser *p, const ProtobufCFieldDescriptor *f, const char *fname)
{
    if (f)
        return parse_scalar(p, f);
    if (p->t.kind == T_STRING) {
        while (p->t.kind == T_STRING)
            if (!next(p))
                return false;
        return true;
    }
    if (is_sym(p, '-') && !next(p))
        return false;
    if (p->t.kind != T_NUMBER && p->t.kind != T_IDENT) {
        g_autofree char *what = describe(p);
        return FAIL(p, p->t, FP_PBTXT_ERROR_SYNTAX, "expected a value for field '%s', found %s", fname, what);
    }
    return next(p);
}

/* True when field index i of d shares a oneof with an already seen field; *other receives it. */
static bool oneof_clash(const ProtobufCMessageDescriptor *d, const guint8 *seen, unsigned i, unsigned *other)
{
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    if (!(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF))
        return false;
    for (unsigned k = 0; k < d->n_fields; k++) {
        const ProtobufCFieldDescriptor *g = &d->fields[k];
        if (k != i && seen[k] && (g->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
            g->quantifier_offset == f->quantifier_offset) {
            *other = k;
            return true;
        }
    }
    return false;
}

/* One field: name, then value. d NULL: skip everything. */
static bool parse_field(parser *p, const ProtobufCMessageDescriptor *d, unsigned depth, guint8 *seen)
{
    tok name = p->t;
    char fname[256];
    const ProtobufCFieldDescriptor *f = NULL;
    if (name.kind == T_IDENT || name.kind == T_NUMBER) {
        size_t n = MIN(name.n, sizeof fname - 1);
        memcpy(fname, p->s + name.pos, n);
        fname[n] = 0;
    }
    if (name.kind == T_IDENT) {
        if (d)
            f = protobuf_c_message_descriptor_get_field_by_name(d, fname);
    } else if (name.kind == T_NUMBER) {
        uint64_t num = 0;
        if (parse_uint(fname, strlen(fname), &num) != 0 || num == 0 || num > 0x1fffffff)
            return FAIL(p, name, FP_PBTXT_ERROR_SYNTAX, "'%s' is not a valid field name or number", fname);
        if (d)
            f = protobuf_c_message_descriptor_get_field(d, (unsigned)num);
    } else if (is_sym(p, '[')) {
        return FAIL(p, name, FP_PBTXT_ERROR_SYNTAX, "extension and Any fields ([...]) are not supported");
    } else {
        g_autofree char *what = describe(p);
        return FAIL(p, name, FP_PBTXT_ERROR_SYNTAX, "expected a field name, found %s", what);
    }
    if (!next(p))
        return false;
    if (d && !f) {
        if (!(p->flags & FP_PBTXT_SKIP_UNKNOWN))
            return FAIL(p, name, FP_PBTXT_ERROR_FIELD, "unknown field '%s' in %s", fname, d->name);
        p->skipped++;
    }
    if (f) {
        unsigned i = (unsigned)(f - d->fields), other = 0;
        if (f->label != PROTOBUF_C_LABEL_REPEATED && seen[i])
            return FAIL(p, name, FP_PBTXT_ERROR_FIELD, "field '%s' of %s is given more than once", f->name, d->name);
        if (oneof_clash(d, seen, i, &other))
            return FAIL(p, name, FP_PBTXT_ERROR_FIELD,
                        "fields '%s' and '%s' of %s are both given but belong to one oneof", d->fields[other].name,
                        f->name, d->name);
        seen[i] = 1;
        g_strlcpy(fname, f->name, sizeof fname);
    }
    return parse_value(p, f, depth, fname);
}

/* Fields up to `close` (0: end of input). `open` is the opening token, for messages. */
static bool parse_body(parser *p, const ProtobufCMessageDescriptor *d, unsigned depth, char close, tok open,
                       const char *what)
{
    g_autofree guint8 *seen = d ? g_new0(guint8, d->n_fields ? d->n_fields : 1) : NULL;
    for (;;) {
        if (p->t.kind == T_EOF) {
            if (close)
                return FAIL(p, p->t, FP_PBTXT_ERROR_SYNTAX,
                            "end of input inside '%s' opened at line %u:%u (missing '%c')", what, open.line, open.col,
                            close);
            break;
        }
        if (close && is_sym(p, close)) {
            open = p->t; /* a missing required field is reported at the closing brace */
            if (!next(p))
                return false;
            break;
        }
        if (p->t.kind == T_SYM && strchr("}>]", p->t.sym))
            return FAIL(p, p->t, FP_PBTXT_ERROR_SYNTAX, "unexpected '%c'%s", p->t.sym, close ? "" : " at top level");
        if (!parse_field(p, d, depth, seen))
            return false;
        if ((is_sym(p, ',') || is_sym(p, ';')) && !next(p))
            return false;
    }
    for (unsigned i = 0; d && i < d->n_fields; i++)
        if (d->fields[i].label == PROTOBUF_C_LABEL_REQUIRED && !seen[i])
            return FAIL(p, open, FP_PBTXT_ERROR_FIELD, "required field '%s' of %s is missing", d->fields[i].name,
                        d->name);
    return true;
}

static bool run(parser *p, const ProtobufCMessageDescriptor *d)
{
    tok start = {.line = 1, .col = 1};
    if (!next(p))
        return false;
    return parse_body(p, d, 0, 0, start, d ? d->name : "");
}

static void parser_init(parser *p, const char *text, size_t len, unsigned flags, GError **error)
{
    memset(p, 0, sizeof *p);
    p->s = text ? text : "";
    p->len = text ? len : 0;
    p->line = 1;
    p->flags = flags;
    p->error = error;
    p->str = g_byte_array_new();
}

static void parser_clear(parser *p)
{
    g_byte_array_free(p->str, TRUE);
    fp_pbwire_free(p->w);
}

GBytes *fp_pbtxt_to_wire(const ProtobufCMessageDescriptor *d, const char *text, size_t len, unsigned flags,
                         GError **error)
{
    parser p;
    parser_init(&p, text, len, flags, error);
    p.w = fp_pbwire_new();
    GBytes *out = NULL;
    if (run(&p, d)) {
        size_t n = 0;
        const uint8_t *data = fp_pbwire_data(p.w, &n);
        if (!fp_pbwire_ok(p.w))
            g_set_error(error, FP_PBTXT_ERROR, FP_PBTXT_ERROR_LIMIT, "line 1:1: message is larger than 2 GiB");
        else
            out = g_bytes_new(data, n);
    }
    parser_clear(&p);
    return out;
}

ProtobufCMessage *fp_pbtxt_parse(const ProtobufCMessageDescriptor *d, const char *text, size_t len, unsigned flags,
                                 unsigned *n_skipped, GError **error)
{
    parser p;
    parser_init(&p, text, len, flags, error);
    p.w = fp_pbwire_new();
    ProtobufCMessage *msg = NULL;
    if (run(&p, d)) {
        msg = fp_pbwire_unpack(p.w, d);
        if (!msg)
            g_set_error(error, FP_PBTXT_ERROR, fp_pbwire_ok(p.w) ? FP_PBTXT_ERROR_FIELD : FP_PBTXT_ERROR_LIMIT,
                        "line %u:%u: %s", p.line, (unsigned)(p.pos - p.line_start + 1),
                        fp_pbwire_ok(p.w) ? "protobuf-c rejected the message (a required field is missing?)"
                                          : "message too large (over 2 GiB, or over 512 MiB unpacked)");
    }
    if (n_skipped)
        *n_skipped = p.skipped;
    parser_clear(&p);
    return msg;
}

bool fp_pbtxt_peek(const char *text, size_t len, fp_pbtxt_peek_fn fn, void *user)
{
    parser p;
    GError *err = NULL;
    parser_init(&p, text, len, FP_PBTXT_SKIP_UNKNOWN, &err);
    p.peek = fn;
    p.peek_user = user;
    bool ok = run(&p, NULL) || p.stopped;
    g_clear_error(&err);
    parser_clear(&p);
    return ok;
}
