/* test_fmtfloat_fast.c — im_float_shortest's 128-bit integer fast path gives the
 * digits of the reference method (correctly rounded 15, then 16 digits, kept when
 * strtod reads them back as the value, else 17) on random doubles over the fast
 * path's whole range and its edges, exact decimal ties, short decimals and
 * rate-like quotients. */
#include "util/base.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "util/fmtfloat.h"

static void reference(double v, char digits[20], int *ndigits, int *dp)
{
    char tmp[40];
    double av = fabs(v);
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, av);
        if (prec == 17 || strtod(tmp, NULL) == av) break;
    }
    int n = 0;
    const char *p = tmp;
    while (*p && *p != 'e') {
        if (*p != '.') digits[n++] = *p;
        p++;
    }
    int e = (int)strtol(p + 1, NULL, 10);
    while (n > 1 && digits[n - 1] == '0') n--;
    digits[n] = '\0';
    *ndigits = n;
    *dp = e + 1;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static long checked, mismatched;

static void check(double v)
{
    if (!isfinite(v) || v == 0) return;
    char a[20], b[20];
    int na, nb, da, db;
    im_float_shortest(v, a, &na, &da);
    reference(v, b, &nb, &db);
    checked++;
    if (na != nb || da != db || strcmp(a, b) != 0) {
        if (mismatched++ < 10) print_error("%.17g: got %s e%d, want %s e%d\n", v, a, da, b, db);
    }
}

static double from_bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static void test_fast_matches_reference(void **state)
{
    (void)state;
    /* random bit patterns with exponents in and around the fast range */
    for (int i = 0; i < 300000; i++) {
        uint64_t e = 1023 - 22 + rnd() % 80; /* 2^-22 .. 2^57 */
        check(from_bits((e << 52) | (rnd() & ((1ULL << 52) - 1))));
    }
    /* edges: powers of two and their neighbours, range bounds */
    for (int x = -22; x <= 56; x++) {
        double p = ldexp(1, x);
        check(p);
        check(nextafter(p, 0));
        check(nextafter(p, INFINITY));
        check(nextafter(nextafter(p, INFINITY), INFINITY));
    }
    /* short decimals, exact ties (x.5 at many scales), rate-like quotients */
    for (int i = 1; i < 200000; i++) {
        check(i / 1000.0);
        check(i / 3.0);
        check(i * 0.1);
        check((double)i + 0.5);
        check(ldexp((double)(2 * i + 1), -(i % 40)));
        check(((double)(rnd() % 100000000)) / ((double)(rnd() % 300 + 1) * 60.0));
        check((double)(rnd() % 10000000000000000ULL) * 0.25 + 0.125);
    }
    /* 17-digit integers near 2^53 and values whose 15/16-digit roundings carry */
    for (uint64_t u = 9007199254740992ULL - 100000; u < 9007199254740992ULL; u++)
        check((double)u + 0.5);
    for (int i = 1; i <= 15; i++) {
        double n9 = pow(10, i) - pow(10, -3);
        check(n9);
        check(nextafter(n9, INFINITY));
        check(pow(10, i) * 0.99999999999999999);
    }
    print_message("checked %ld values\n", checked);
    assert_int_equal(mismatched, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fast_matches_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
