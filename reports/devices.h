/* devices.h - the `fuseplan devices` report as text: a table of device profiles, or one profile
 * in full (JSON: reports/json.h). */
#ifndef FP_REPORT_DEVICES_H
#define FP_REPORT_DEVICES_H

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

#include "devices/device.h"

/* devs: fp_device*; one: show devs[0] in full, else one row per profile. */
void fp_report_devices_text(GPtrArray *devs, bool one, FILE *out);
/* Names of d's [rule.*] groups (NULL-terminated; caller g_strfreev()s). */
char **fp_report_device_rule_groups(const fp_device *d);

#endif
