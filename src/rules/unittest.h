/* unittest.h — promtool's rule unit tests (`infermon test rules`).
 *
 * rules_unittest_file runs every test group of one test file and appends each
 * failure to errs in promtool's words (alert mismatches with exp/got lists,
 * expression mismatches, evaluation errors, file errors). Warnings (rule-file
 * patterns matching nothing) go to warn. Returns IM_OK when every test passed. */
#ifndef IM_RULES_UNITTEST_H
#define IM_RULES_UNITTEST_H

#include <stdio.h>

#include "rules/rules.h"
#include "util/base.h"

im_rc rules_unittest_file(const char *path, rules_errs_t *errs, FILE *warn);

#endif
