/* expo_int.h — helpers shared inside src/expo (not part of the contract). */
#ifndef IM_EXPO_EXPO_INT_H
#define IM_EXPO_EXPO_INT_H

#include "util/base.h"

/* Parses a float exactly as Go's strconv.ParseFloat(s, 64) accepts it (decimal,
 * exponent, hex with a 'p' exponent, inf/infinity/nan case-insensitively, a sign
 * before numbers and inf). Overflow to +-Inf is an error, as in Go. Returns false
 * on error. Correctly rounded. */
bool expo__parse_float(const char *s, size_t len, double *out);

/* Character classes. */
extern const uint8_t expo__cls[256];
#define EXPO_C_NAME1  0x01 /* [a-zA-Z_:] metric name start */
#define EXPO_C_NAME   0x02 /* [a-zA-Z0-9_:] */
#define EXPO_C_LNAME1 0x04 /* [a-zA-Z_] */
#define EXPO_C_LNAME  0x08 /* [a-zA-Z0-9_] */
#define EXPO_C_DIGIT  0x10

#endif
