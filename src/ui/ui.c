/* ui.c — lookup of the embedded dashboard assets (see ui.h). */
#include "util/base.h"

#include "ui/ui.h"

/* Defined in the generated ui_assets.c, terminated by a NULL path. */
extern const ui_asset_t ui__assets[];

const ui_asset_t *ui_asset_lookup(const char *path)
{
    if (!path) return NULL;
    if (strcmp(path, "/") == 0 || strcmp(path, "") == 0) path = "/index.html";
    for (const ui_asset_t *a = ui__assets; a->path; a++)
        if (strcmp(a->path, path) == 0) return a;
    return NULL;
}

const char *ui_asset_cache_control(const ui_asset_t *a)
{
    if (strcmp(a->path, "/index.html") == 0) return "no-cache";
    return "public, max-age=300, must-revalidate";
}

size_t ui_asset_count(void)
{
    size_t n = 0;
    for (const ui_asset_t *a = ui__assets; a->path; a++) n++;
    return n;
}
