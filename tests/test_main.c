/* test_main.c - CUnit runner for every suite; `fuseplan_tests [SUITE...]` runs only those. */
#include <CUnit/Basic.h>
#include <stdlib.h>
#include <string.h>

#include "tutil.h"

#define MAX_SUITES 128
static struct {
    const char *name;
    fp_test_register_fn fn;
} registrars[MAX_SUITES];
static int n_registrars;

void fp_test_add_registrar(const char *name, fp_test_register_fn fn)
{
    g_assert(n_registrars < MAX_SUITES);
    registrars[n_registrars].name = name;
    registrars[n_registrars++].fn = fn;
}

static int cmp_registrar(const void *a, const void *b)
{
    return strcmp(((const typeof(registrars[0]) *)a)->name, ((const typeof(registrars[0]) *)b)->name);
}

int main(int argc, char **argv)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    qsort(registrars, n_registrars, sizeof registrars[0], cmp_registrar);
    for (int i = 0; i < n_registrars; i++)
        registrars[i].fn();
    CU_basic_set_mode(CU_BRM_VERBOSE);
    unsigned failed = 0;
    if (argc > 1) {
        for (int i = 1; i < argc; i++) {
            CU_pSuite s = CU_get_suite(argv[i]);
            if (!s) {
                fprintf(stderr, "no suite '%s'\n", argv[i]);
                CU_cleanup_registry();
                return 2;
            }
            CU_basic_run_suite(s);
            failed += CU_get_number_of_failures();
        }
    } else {
        CU_basic_run_tests();
        failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    }
    CU_cleanup_registry();
    return failed ? 1 : 0;
}
