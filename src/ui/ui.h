/* ui.h — the dashboard's assets, embedded in the binary at build time.
 *
 * web/ holds the sources (index.html, app.js, style.css) and npm fetches uPlot
 * into web/node_modules; scripts/embed-assets.py turns them into byte arrays
 * (generated ui_assets.c). The HTTP server serves them: "/" is the single-page
 * app, "/static/<file>" the scripts and styles. Lookup is by exact path only, so
 * no request path can reach anything else ("/static/../x" is simply not found).
 * Assets are immutable for the life of the process. */
#ifndef IM_UI_UI_H
#define IM_UI_UI_H

#include "util/base.h"

typedef struct ui_asset {
    const char *path;         /* URL path, e.g. "/static/app.js" */
    const char *content_type; /* e.g. "text/javascript; charset=utf-8" */
    const char *etag;         /* strong ETag, quoted */
    const unsigned char *data;
    size_t len;
} ui_asset_t;

/* The asset for a request path ("/" and "/index.html" give the app), or NULL.
 * The query string, if any, must already be stripped. */
const ui_asset_t *ui_asset_lookup(const char *path);
/* Cache-Control value for an asset: the app shell must revalidate, the rest may
 * be cached briefly and revalidated by ETag. */
const char *ui_asset_cache_control(const ui_asset_t *a);
/* Number of embedded assets (for tests and /api/v1/status/buildinfo). */
size_t ui_asset_count(void);

#endif
