/* train.h - the `fuseplan train` report as text (reports/train.c; JSON: reports/train_json.c). */
#ifndef FP_REPORT_TRAIN_H
#define FP_REPORT_TRAIN_H

#include <stdio.h>

#include "analysis/training.h"

typedef struct {
    const char *model_path;
    const fp_training *t;
    fp_train_optimizer optimizer;
    fp_train_precision precision;
    fp_train_autograd autograd;
    double reserve; /* share of the capacity kept free (t->reserve_bytes of t->capacity_bytes) */
    unsigned top;   /* saved tensors listed, largest first (0: all) */
} fp_train_report;

void fp_report_train_text(const fp_train_report *r, FILE *out);

#endif
