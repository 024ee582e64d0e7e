/* test_webcfg.c — the web config loader (src/http/webcfg.c) on files written
 * here: every refused setting says why (and where, for keys), valid files load,
 * basic auth takes one bcrypt for unknown and known users alike and caches
 * successes, the file is re-read when it changes and a broken new file keeps the
 * old one, the bcrypt pool refuses past its bound. Certificates: the TLS cases need real ones and
 * live in tests/integration/run_web_tls.sh. */
#include "util/base.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "http/http_int.h"

static char dir[64];
static char path[128];

/* bcrypt("pw", cost 4) and bcrypt("pw2", cost 4), made with crypt(3). */
#define HASH_PW  "$2b$04$abcdefghijklmnopqrstuuyvPXIbu7xe6/CED2DzX8z6Si09MlzlW"
#define HASH_PW2 "$2b$04$bbcdefghijklmnopqrstuuUduaeMqMCPS8lhwmMxaklL9c4ujsg6a"

static void put(const char *text)
{
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(rename(tmp, path), 0); /* a new inode: always seen as a change */
}

static char *open_err(const char *text)
{
    static char buf[1024];
    put(text);
    http__web_limits_t lim = {0, 0};
    http__web_t *w = NULL;
    im_err_t err;
    im_err_clear(&err);
    im_rc rc = http__web_open(path, &lim, &w, &err);
    if (rc == IM_OK) {
        http__web_close(w);
        return NULL;
    }
    im_err_format(&err, buf, sizeof buf);
    return buf;
}

static void expect_err(const char *text, const char *want)
{
    const char *e = open_err(text);
    if (!e) fail_msg("accepted: %s", text);
    if (!strstr(e, want)) fail_msg("error \"%s\" lacks \"%s\"", e, want);
}

static void test_refused(void **state)
{
    (void)state;
    expect_err("bogus: 1\n", ":1:1: field bogus not found in type web.Config");
    expect_err("tls_server_config:\n  cert_file: x\n  min_verison: TLS13\n",
               ":3:3: field min_verison not found in type web.TLSConfig");
    expect_err("tls_server_config:\n  cert_file: missing.pem\n  key_file: k\n",
               "tls_server_config.cert_file \"");
    expect_err("tls_server_config:\n  cert_file: missing.pem\n  key_file: k\n",
               "missing.pem\": cannot read: No such file or directory");
    expect_err("tls_server_config:\n  client_auth_type: RequireAndVerifyClientCert\n",
               "missing one of cert or cert_file");
    expect_err("tls_server_config:\n  cert: 'x'\n  cert_file: y\n",
               "cert and cert_file are both set");
    expect_err("tls_server_config:\n  cert: 'garbage'\n  key: 'garbage'\n",
               "cert: not PEM (no -----BEGIN line)");
    expect_err("http_server_config:\n  http2: true\n", "http2: true is not supported");
    expect_err("http_server_config:\n  headers:\n    X-Powered-By: me\n",
               ":3:5: HTTP header \"X-Powered-By\" can not be configured");
    expect_err("http_server_config:\n  headers:\n    X-Frame-Options: allow\n",
               "invalid value for X-Frame-Options");
    expect_err("http_server_config:\n  headers:\n    X-Content-Type-Options: sniff\n",
               "invalid value for X-Content-Type-Options");
    expect_err("http_server_config:\n  bogus: 1\n", "field bogus not found in type web.HTTPConfig");
    expect_err("basic_auth_users:\n  alice: plaintext\n",
               "the password of \"alice\" is not a bcrypt hash");
    expect_err("basic_auth_users:\n  alice: "
               "'$2b$03$abcdefghijklmnopqrstuu5Ytnnz3wCAxJZsDCGUZrbAVZ6I5kOX2'\n",
               "not a bcrypt hash"); /* cost 3 < 4 */
    expect_err("rate_limit:\n  interval: soon\n", "rate_limit.interval: bad duration");
    expect_err("rate_limit:\n  burst: -1\n", "rate_limit.burst: bad number");
    expect_err("rate_limit:\n  every: 1s\n", "field every not found in type web.RateLimiterConfig");
    expect_err("- a\n", "web config must be a mapping");
}

static void test_valid(void **state)
{
    (void)state;
    assert_null(open_err(""));
    assert_null(open_err("basic_auth_users:\n  alice: '" HASH_PW "'\n"));
    assert_null(open_err("http_server_config:\n  http2: false\n  headers:\n"
                         "    X-Frame-Options: sameorigin\n    Content-Security-Policy: "
                         "\"default-src 'self'\"\n"));
    assert_null(open_err("rate_limit:\n  interval: 1s\n  burst: 5\n"));
    assert_null(open_err("tls_server_config:\nhttp_server_config:\n"));
}

static const char *b64(const char *s, char *out)
{
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(s), o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned char)s[i] << 16;
        if (i + 1 < n) v |= (unsigned char)s[i + 1] << 8;
        if (i + 2 < n) v |= (unsigned char)s[i + 2];
        out[o++] = t[v >> 18 & 63];
        out[o++] = t[v >> 12 & 63];
        out[o++] = i + 1 < n ? t[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? t[v & 63] : '=';
    }
    out[o] = 0;
    return out;
}

static http__auth_t try_auth(http__web_t *w, const char *userpw)
{
    char h[256], e[200];
    snprintf(h, sizeof h, "Basic %s", b64(userpw, e));
    return http__web_authorize(w, h);
}

static uint64_t bcrypts(http__web_t *w)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    http__web_metrics(w, &b);
    const char *p = strstr(b.data, "\ninfermon_web_basic_auth_bcrypt_total ");
    assert_non_null(p);
    uint64_t v = strtoull(p + strlen("\ninfermon_web_basic_auth_bcrypt_total "), NULL, 10);
    im_buf_free(&b);
    return v;
}

static void test_auth_and_reload(void **state)
{
    (void)state;
    put("basic_auth_users:\n  alice: '" HASH_PW "'\n  bob: '" HASH_PW2 "'\n");
    http__web_limits_t lim = {1, 1000};
    http__web_t *w = NULL;
    im_err_t err;
    im_err_clear(&err);
    assert_int_equal(http__web_open(path, &lim, &w, &err), IM_OK);
    assert_int_equal(http__web_authorize(w, NULL), HTTP__AUTH_UNAUTHORIZED);
    assert_int_equal(http__web_authorize(w, "Bearer x"), HTTP__AUTH_UNAUTHORIZED);
    uint64_t b0 = bcrypts(w);
    assert_int_equal(try_auth(w, "nobody:pw"), HTTP__AUTH_UNAUTHORIZED);
    assert_int_equal(bcrypts(w), b0 + 1); /* an unknown user costs one bcrypt */
    assert_int_equal(try_auth(w, "alice:wrong"), HTTP__AUTH_UNAUTHORIZED);
    assert_int_equal(bcrypts(w), b0 + 2);
    assert_int_equal(try_auth(w, "alice:pw"), HTTP__AUTH_OK);
    assert_int_equal(try_auth(w, "alice:pw"), HTTP__AUTH_OK);
    assert_int_equal(bcrypts(w), b0 + 3); /* the second one came from the cache */
    assert_int_equal(try_auth(w, "bob:pw"), HTTP__AUTH_UNAUTHORIZED); /* alice's password */
    assert_int_equal(try_auth(w, "bob:pw2"), HTTP__AUTH_OK);
    assert_int_equal(try_auth(w, "alice:pw2"), HTTP__AUTH_UNAUTHORIZED);
    /* a changed password: the old one stops working at once */
    put("basic_auth_users:\n  alice: '" HASH_PW2 "'\n");
    assert_int_equal(try_auth(w, "alice:pw"), HTTP__AUTH_UNAUTHORIZED);
    assert_int_equal(try_auth(w, "alice:pw2"), HTTP__AUTH_OK);
    assert_int_equal(try_auth(w, "bob:pw2"), HTTP__AUTH_UNAUTHORIZED); /* removed */
    /* a broken file keeps the last good one */
    put("basic_auth_users:\n  alice: nope\n");
    assert_int_equal(try_auth(w, "alice:pw2"), HTTP__AUTH_OK);
    assert_int_equal(try_auth(w, "alice:pw"), HTTP__AUTH_UNAUTHORIZED);
    /* rate limit: a burst of 2, then 429 */
    put("rate_limit:\n  interval: 1h\n  burst: 2\n");
    assert_int_equal(http__web_authorize(w, NULL), HTTP__AUTH_OK);
    assert_int_equal(http__web_authorize(w, NULL), HTTP__AUTH_OK);
    assert_int_equal(http__web_authorize(w, NULL), HTTP__AUTH_RATE_LIMITED);
    /* no users: open */
    put("{}\n");
    assert_int_equal(http__web_authorize(w, NULL), HTTP__AUTH_OK);
    http__web_close(w);
}

/* The pool: 4 threads start a cost-10 bcrypt together with room for 1 and no
 * waiting; the others get BUSY and the peak stays at 1. */
#define HASH_SLOW "$2b$10$cbcdefghijklmnopqrstuuw.WvefKu17inK/v2A0NY75aYoi8GA1a"
static pthread_barrier_t bar;
static http__web_t *pw;
static http__auth_t results[4];

static void *guesser(void *arg)
{
    int i = (int)(intptr_t)arg;
    pthread_barrier_wait(&bar);
    results[i] = try_auth(pw, "alice:guess");
    return NULL;
}

static void test_pool(void **state)
{
    (void)state;
    put("basic_auth_users:\n  alice: '" HASH_SLOW "'\n");
    http__web_limits_t lim = {1, -1};
    im_err_t err;
    im_err_clear(&err);
    assert_int_equal(http__web_open(path, &lim, &pw, &err), IM_OK);
    pthread_barrier_init(&bar, NULL, 4);
    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, guesser, (void *)(intptr_t)i);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&bar);
    int busy = 0, unauth = 0;
    for (int i = 0; i < 4; i++) {
        busy += results[i] == HTTP__AUTH_BUSY;
        unauth += results[i] == HTTP__AUTH_UNAUTHORIZED;
    }
    assert_true(unauth >= 1);
    assert_true(busy >= 1);
    assert_int_equal(busy + unauth, 4);
    im_buf_t b;
    im_buf_init(&b, 0);
    http__web_metrics(pw, &b);
    assert_non_null(strstr(b.data, "\ninfermon_web_basic_auth_bcrypt_inflight_max 1\n"));
    im_buf_free(&b);
    http__web_close(pw);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/im_webcfg_XXXXXX");
    if (!mkdtemp(dir)) return 1;
    snprintf(path, sizeof path, "%s/web.yml", dir);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_auth_and_reload),
        cmocka_unit_test(test_pool),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(path);
    rmdir(dir);
    return rc;
}
