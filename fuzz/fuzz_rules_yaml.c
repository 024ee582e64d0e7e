/* fuzz_rules_yaml.c — fuzzes rule-file parsing and validation (rules/rules.h):
 * any bytes must give a parsed file or a list of errors, never a crash; a file
 * that parses is also run through the duplicate lint. */
#include "util/base.h"

#include "rules/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536) return 0;
    rules_errs_t errs = {0};
    rules_file_t *f = NULL;
    if (rules_file_parse("f.yml", (const char *)data, size, &f, &errs) == IM_OK)
        rules_file_lint_duplicates(f, &errs);
    rules_file_free(f);
    rules_errs_free(&errs);
    return 0;
}
