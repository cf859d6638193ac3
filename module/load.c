/* load.c - the executable's side of the formats module (module/module.h): loads
 * fuseplan-formats.so on first need, from the directory of the executable (/proc/self/exe), else
 * from FP_MODULE_DIR, and keeps it loaded until exit. Built into the executable only
 * (module/static.c stands in where the module's code is linked in). */
#include <dlfcn.h>
#include <stdbool.h>
#include <string.h>

#include "module/module.h"

static const fp_module *loaded;

/* Where the module is looked for, in order (NULL-terminated; caller g_strfreev()s). */
static char **candidates(void)
{
    GPtrArray *a = g_ptr_array_new();
    g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
    if (exe) {
        g_autofree char *dir = g_path_get_dirname(exe);
        g_ptr_array_add(a, g_build_filename(dir, FP_MODULE_FILE, NULL));
    }
    g_ptr_array_add(a, g_build_filename(FP_MODULE_DIR, FP_MODULE_FILE, NULL));
    g_ptr_array_add(a, NULL);
    return (char **)g_ptr_array_free(a, FALSE);
}

/* Opens the module at path and checks what it exports; NULL with the reason in *why. */
static const fp_module *open_module(const char *path, char **why)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        size_t n = strlen(path);
        /* dlerror() starts with the path already named by the caller's message */
        if (e && strncmp(e, path, n) == 0 && e[n] == ':')
            e += n + 1 + (e[n + 1] == ' ');
        *why = g_strdup(e ? e : "dlopen failed");
        return NULL;
    }
    const fp_module *m = dlsym(h, "fp_module_entry");
    if (!m || m->abi != FP_MODULE_ABI) {
        *why = m ? g_strdup_printf("built for interface %d, this fuseplan needs %d (a module of another build)", m->abi,
                                   FP_MODULE_ABI)
                 : g_strdup("no fp_module_entry symbol (not a fuseplan formats module)");
        dlclose(h);
        return NULL;
    }
    return m;
}

const fp_module *fp_module_get(GError **error)
{
    if (loaded)
        return loaded;
    g_auto(GStrv) paths = candidates();
    /* the first that exists; when none does, the first names the failure */
    const char *path = NULL;
    for (size_t i = 0; paths[i] && !path; i++)
        if (g_file_test(paths[i], G_FILE_TEST_EXISTS))
            path = paths[i];
    bool found = path != NULL;
    if (!found)
        path = paths[0];
    g_autofree char *why = NULL;
    if ((loaded = open_module(path, &why)))
        return loaded;
    g_autofree char *others = NULL; /* named only when no candidate exists */
    for (size_t i = 0; paths[i] && !found; i++)
        if (paths[i] != path) {
            g_autofree char *prev = others;
            others = prev ? g_strdup_printf("%s, %s", prev, paths[i]) : g_strdup(paths[i]);
        }
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "cannot load the formats module %s%s%s%s: %s", path,
                others ? " (also looked for " : "", others ? others : "", others ? ")" : "", why);
    return NULL;
}
