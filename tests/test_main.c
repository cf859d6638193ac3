/* test_main.c - CUnit runner for every suite; `fuseplan_tests [SUITE...]` runs only those. */
#include <CUnit/Basic.h>
#include <string.h>

#include "tutil.h"

int main(int argc, char **argv)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    fp_test_register_ir();
    fp_test_register_onnx();
    fp_test_register_cli();
    fp_test_register_testdata();
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
