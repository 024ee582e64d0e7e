/* catalog.c — lookups over the embedded catalog tables (catalog_data.h); the
 * tables themselves are generated (scripts/gen-catalog.py). */
#include "util/base.h"

#include "catalog/catalog_data.h"

const llm_cat_family_t *llm_cat_find(const llm_cat_family_t *tab, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(tab[i].name, name) == 0) return &tab[i];
    return NULL;
}
