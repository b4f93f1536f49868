/* Exact number parsing from JSON token text. Kineto writes microseconds with
 * up to 3 decimals over epoch-scale values (~1.7e15 us), which a double
 * cannot hold to the nanosecond; these parsers never go through a double. */
#include "ingest/ingest.h"

#include <stdbool.h>

typedef unsigned __int128 u128;

#define MAX_SIG_DIGITS 36

/* Splits a JSON number into sign, significant digits (as an integer) and a
 * decimal exponent; accepts a surrounding pair of quotes. */
static int split_number(const char *tok, size_t len, bool *neg, u128 *mant, int *exp10, bool *sticky_out)
{
	size_t i = 0;
	int sig = 0, exp_adj = 0;
	bool any = false, sticky = false;
	if (len >= 2 && tok[0] == '"' && tok[len - 1] == '"') {
		tok++;
		len -= 2;
	}
	*neg = false;
	*mant = 0;
	if (i < len && (tok[i] == '-' || tok[i] == '+'))
		*neg = tok[i++] == '-';
	for (; i < len && tok[i] >= '0' && tok[i] <= '9'; i++, any = true) {
		if (sig == 0 && tok[i] == '0') /* a leading zero */
			continue;
		if (sig < MAX_SIG_DIGITS) {
			*mant = *mant * 10 + (unsigned)(tok[i] - '0');
			sig++;
		} else {
			exp_adj++;
			sticky |= tok[i] != '0';
		}
	}
	if (i < len && tok[i] == '.') {
		for (i++; i < len && tok[i] >= '0' && tok[i] <= '9'; i++, any = true) {
			if (sig == 0 && tok[i] == '0') {
				exp_adj--;
				continue;
			}
			if (sig < MAX_SIG_DIGITS) {
				*mant = *mant * 10 + (unsigned)(tok[i] - '0');
				sig++;
				exp_adj--;
			} else {
				sticky |= tok[i] != '0';
			}
		}
	}
	if (!any)
		return -1;
	if (i < len && (tok[i] == 'e' || tok[i] == 'E')) {
		bool eneg = false;
		long e = 0;
		i++;
		if (i < len && (tok[i] == '-' || tok[i] == '+'))
			eneg = tok[i++] == '-';
		if (i == len)
			return -1;
		for (; i < len && tok[i] >= '0' && tok[i] <= '9'; i++)
			if (e < 100000)
				e = e * 10 + (tok[i] - '0');
		exp_adj += (int)(eneg ? -e : e);
	}
	if (i != len)
		return -1; /* trailing garbage */
	*exp10 = exp_adj;
	*sticky_out = sticky; /* non-zero digits were dropped beyond MAX_SIG_DIGITS */
	return 0;
}

/* The common token, [-]digits[.digits] with at most 19 digits, no more
 * than `scale` of them decimals, and the result in range: *out is it times
 * 10^scale, in 64-bit arithmetic. False for anything else (quotes, an
 * exponent, rounding, overflow, a malformed token), which the general path
 * then parses or refuses. */
static inline bool fast_decimal(const char *tok, size_t len, int scale, int64_t *out)
{
	size_t i = len && tok[0] == '-', first = i, point = len;
	bool neg = i;
	uint64_t m = 0;
	unsigned d; /* (one unsigned compare a digit) */
	while (i < len && (d = (unsigned)(unsigned char)tok[i] - '0') <= 9)
		m = m * 10 + d, i++;
	if (i < len && tok[i] == '.')
		for (point = i++; i < len && (d = (unsigned)(unsigned char)tok[i] - '0') <= 9; i++)
			m = m * 10 + d;
	size_t digits = i - first - (point < len), decimals = point < len ? i - point - 1 : 0;
	return i == len && digits > 0 && digits <= 19 && ns_decimal_scaled(m, (unsigned)decimals, (unsigned)scale, neg, out);
}

static int scale_to_int64(bool neg, u128 mant, int exp10, bool sticky, int64_t *out)
{
	if (mant == 0) {
		*out = 0;
		return 0;
	}
	if (exp10 >= 0) {
		for (int k = 0; k < exp10; k++) {
			mant *= 10;
			if (mant > (u128)INT64_MAX + 1)
				return -1;
		}
	} else {
		u128 div = 1;
		if (exp10 < -38) {
			mant = 0; /* far below 1: rounds to zero */
		} else {
			for (int k = 0; k < -exp10; k++)
				div *= 10;
			u128 q = mant / div, r = mant % div;
			/* round half to even; dropped digits (sticky) break a tie upwards */
			if (r * 2 > div || (r * 2 == div && ((q & 1) || sticky)))
				q++;
			mant = q;
		}
	}
	if (mant > (u128)INT64_MAX + (neg ? 1 : 0))
		return -1;
	*out = neg ? (int64_t)(0 - mant) : (int64_t)mant;
	return 0;
}

int ns_parse_us_to_ns(const char *tok, size_t len, int64_t *out_ns)
{
	bool neg, sticky;
	u128 mant;
	int exp10;
	if (fast_decimal(tok, len, 3, out_ns))
		return 0;
	if (split_number(tok, len, &neg, &mant, &exp10, &sticky) < 0)
		return -1;
	return scale_to_int64(neg, mant, exp10 + 3, sticky, out_ns);
}

int ns_parse_int64(const char *tok, size_t len, int64_t *out)
{
	bool neg, sticky;
	u128 mant;
	int exp10;
	if (fast_decimal(tok, len, 0, out))
		return 0;
	if (split_number(tok, len, &neg, &mant, &exp10, &sticky) < 0 || sticky)
		return -1;
	if (exp10 < 0) {
		/* "12.0" is an integer; "12.5" is not */
		u128 div = 1;
		if (exp10 < -38)
			return mant == 0 ? (*out = 0, 0) : -1;
		for (int k = 0; k < -exp10; k++)
			div *= 10;
		if (mant % div)
			return -1;
		mant /= div;
		exp10 = 0;
	}
	return scale_to_int64(neg, mant, exp10, false, out);
}
