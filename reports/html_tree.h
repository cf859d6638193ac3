/* html_tree.h - the libxml2 tree helpers of the HTML pages (reports/html.c, reports/train_html.c):
 * elements with escaped text, classes and attributes, table rows, sections, cards; the shared
 * style sheet and the page writer (reports/html_tree.c). */
#ifndef FP_HTML_TREE_H
#define FP_HTML_TREE_H

#include <glib.h>
#include <libxml/tree.h>
#include <stdarg.h>
#include <stdio.h>

/* The style sheet of every page. */
extern const char fp_html_css[];

/* A new page: the HTML document with its head (charset, viewport, `title`, the style sheet) and
 * body; *main receives the <main> element to fill. */
xmlDocPtr fp_html_page(const char *title, xmlNodePtr *main);

/* Writes doc to out as UTF-8 HTML and frees it. */
void fp_html_write(xmlDocPtr doc, FILE *out);

/* ---------------------------------------------------------------- tree helpers */

/* A new child element with escaped text (NULL: empty). */
static inline xmlNodePtr el(xmlNodePtr parent, const char *tag, const char *text)
{
    return xmlNewTextChild(parent, NULL, BAD_CAST tag, text ? BAD_CAST text : NULL);
}

static inline xmlNodePtr elf(xmlNodePtr parent, const char *tag, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static inline xmlNodePtr elf(xmlNodePtr parent, const char *tag, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *s = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    return el(parent, tag, s);
}

/* An element with a class attribute. */
static inline xmlNodePtr elc(xmlNodePtr parent, const char *tag, const char *cls, const char *text)
{
    xmlNodePtr n = el(parent, tag, text);
    xmlSetProp(n, BAD_CAST "class", BAD_CAST cls);
    return n;
}

static inline xmlNodePtr elcf(xmlNodePtr parent, const char *tag, const char *cls, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);
static inline xmlNodePtr elcf(xmlNodePtr parent, const char *tag, const char *cls, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *s = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    return elc(parent, tag, cls, s);
}

static inline void attr(xmlNodePtr n, const char *name, const char *value)
{
    xmlSetProp(n, BAD_CAST name, BAD_CAST value);
}

/* A number attribute, locale-independent (SVG and CSS need '.'). */
static inline void attr_num(xmlNodePtr n, const char *name, double v)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    attr(n, name, g_ascii_formatd(buf, sizeof buf, "%.1f", v));
}

static inline void text(xmlNodePtr parent, const char *s) { xmlAddChild(parent, xmlNewText(BAD_CAST s)); }

/* A <td> (class "n" right-aligns numbers). */
static inline xmlNodePtr td(xmlNodePtr tr, const char *text_, bool num)
{
    return num ? elc(tr, "td", "n", text_) : el(tr, "td", text_);
}

static inline void header_row(xmlNodePtr table, const char *const *cols, const char *numeric)
{
    xmlNodePtr tr = el(el(table, "thead", NULL), "tr", NULL);
    for (guint i = 0; cols[i]; i++)
        if (numeric[i] == 'n')
            elc(tr, "th", "n", cols[i]);
        else
            el(tr, "th", cols[i]);
}

static inline xmlNodePtr section(xmlNodePtr main, const char *id, const char *title)
{
    xmlNodePtr s = el(main, "section", NULL);
    attr(s, "id", id);
    el(s, "h2", title);
    return s;
}

static inline void card(xmlNodePtr cards, const char *key, const char *value, const char *sub)
{
    xmlNodePtr c = elc(cards, "div", "card", NULL);
    elc(c, "div", "k", key);
    elc(c, "div", "v", value);
    if (sub)
        elc(c, "div", "s", sub);
}

#endif
