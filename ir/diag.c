/* diag.c - the diagnostics list. */
#include "diag.h"

#include <string.h>

static void entry_free(gpointer p)
{
    fp_diag_entry *e = p;
    g_free(e->node);
    g_free(e->message);
    g_free(e);
}

fp_diag *fp_diag_new(void)
{
    fp_diag *d = g_new0(fp_diag, 1);
    d->entries = g_ptr_array_new_with_free_func(entry_free);
    return d;
}

void fp_diag_free(fp_diag *d)
{
    if (!d)
        return;
    g_ptr_array_free(d->entries, TRUE);
    g_free(d);
}

void fp_diag_add(fp_diag *d, fp_diag_level level, const char *pass, const char *code, const char *node, const char *fmt,
                 ...)
{
    if (!d)
        return;
    va_list ap;
    va_start(ap, fmt);
    fp_diag_add_message(d, level, pass, code, node, g_strdup_vprintf(fmt, ap));
    va_end(ap);
}

void fp_diag_add_message(fp_diag *d, fp_diag_level level, const char *pass, const char *code, const char *node,
                         char *message)
{
    if (!d) {
        g_free(message);
        return;
    }
    fp_diag_entry *e = g_new0(fp_diag_entry, 1);
    e->level = level;
    e->pass = pass;
    e->code = code;
    e->node = g_strdup(node);
    e->message = message;
    for (char *p = e->message; *p; p++)
        if (*p == '\n')
            *p = ' ';
    g_ptr_array_add(d->entries, e);
}

void fp_diag_move(fp_diag *to, fp_diag *from)
{
    for (guint i = 0; i < from->entries->len; i++)
        g_ptr_array_add(to->entries, from->entries->pdata[i]);
    g_ptr_array_set_free_func(from->entries, NULL);
    g_ptr_array_set_size(from->entries, 0);
    g_ptr_array_set_free_func(from->entries, entry_free);
}

guint fp_diag_count(const fp_diag *d, fp_diag_level level)
{
    guint n = 0;
    for (guint i = 0; d && i < d->entries->len; i++)
        n += ((fp_diag_entry *)d->entries->pdata[i])->level >= level;
    return n;
}

const fp_diag_entry *fp_diag_find(const fp_diag *d, const char *code)
{
    for (guint i = 0; d && i < d->entries->len; i++) {
        const fp_diag_entry *e = d->entries->pdata[i];
        if (strcmp(e->code, code) == 0)
            return e;
    }
    return NULL;
}
