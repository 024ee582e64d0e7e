/* replay.c — a plain main() for fuzz targets: runs LLVMFuzzerTestOneInput over
 * every file of the given directories (or files), so the seed corpus and past
 * crashers are replayed as ordinary tests in the normal and sanitizer builds. */
#include "util/base.h"

#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    size_t cap = 4096, len = 0;
    char *data = im_malloc(cap);
    size_t r;
    while ((r = fread(data + len, 1, cap - len, f)) > 0) {
        len += r;
        if (len == cap) data = im_realloc(data, cap *= 2);
    }
    fclose(f);
    LLVMFuzzerTestOneInput((const uint8_t *)data, len);
    im_free(data);
    return 0;
}

int main(int argc, char **argv)
{
    int files = 0, bad = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) continue; /* an empty corpus dir may be absent */
        if (!S_ISDIR(st.st_mode)) {
            bad |= run_file(argv[i]);
            files++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (!d) continue;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            bad |= run_file(path);
            files++;
        }
        closedir(d);
    }
    printf("replayed %d inputs\n", files);
    return bad;
}
