/* Exact number parsing (src/ingest/numparse.c): Kineto µs tokens -> integer
 * ns without going through a double (spec B2, Part C "to_ns"). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "ingest/ingest.h"

static int us(const char *tok, int64_t *out)
{
	*out = 0x5a5a5a5a;
	return ns_parse_us_to_ns(tok, strlen(tok), out);
}

static int i64(const char *tok, int64_t *out)
{
	*out = 0x5a5a5a5a;
	return ns_parse_int64(tok, strlen(tok), out);
}

#define US_OK(tok, want)                                                                             \
	do {                                                                                         \
		int64_t v_;                                                                          \
		cr_assert_eq(us(tok, &v_), 0, "ns_parse_us_to_ns(\"%s\") failed", tok);              \
		cr_assert_eq(v_, (int64_t)(want), "ns_parse_us_to_ns(\"%s\") = %lld, want %lld", tok, \
			     (long long)v_, (long long)(want));                                      \
	} while (0)

#define US_ERR(tok)                                                                                  \
	do {                                                                                         \
		int64_t v_;                                                                          \
		cr_assert_eq(us(tok, &v_), -1, "ns_parse_us_to_ns(\"%s\") accepted (%lld)", tok,     \
			     (long long)v_);                                                         \
	} while (0)

#define I64_OK(tok, want)                                                                            \
	do {                                                                                         \
		int64_t v_;                                                                          \
		cr_assert_eq(i64(tok, &v_), 0, "ns_parse_int64(\"%s\") failed", tok);                \
		cr_assert_eq(v_, (int64_t)(want), "ns_parse_int64(\"%s\") = %lld, want %lld", tok,    \
			     (long long)v_, (long long)(want));                                      \
	} while (0)

#define I64_ERR(tok)                                                                                 \
	do {                                                                                         \
		int64_t v_;                                                                          \
		cr_assert_eq(i64(tok, &v_), -1, "ns_parse_int64(\"%s\") accepted (%lld)", tok,       \
			     (long long)v_);                                                         \
	} while (0)

/* ---- ns_parse_us_to_ns ---- */

Test(us_to_ns, era_c_three_decimals)
{
	US_OK("1020.500", 1020500);
	US_OK("30.250", 30250);
	US_OK("74.681", 74681);
	US_OK("0.000", 0);
	US_OK("0.001", 1);
	US_OK("1300.500", 1300500);
}

Test(us_to_ns, integer_microseconds)
{
	US_OK("0", 0);
	US_OK("1", 1000);
	US_OK("200", 200000);
	/* era A/B epoch-scale integer µs */
	US_OK("1694128201545123", INT64_C(1694128201545123000));
}

Test(us_to_ns, ns_resolution_epoch_scale)
{
	/* HTA ns_resolution_trace: a double cannot hold this to the ns */
	US_OK("1712195495519695.8", INT64_C(1712195495519695800));
	US_OK("1712195495519695.801", INT64_C(1712195495519695801));
	US_OK("1712195495519695.999", INT64_C(1712195495519695999));
}

Test(us_to_ns, exponent_forms)
{
	US_OK("1e3", 1000000);
	US_OK("1E3", 1000000);
	US_OK("1e+3", 1000000);
	US_OK("2e-3", 2);
	US_OK("1.5e2", 150000);
}

Test(us_to_ns, exponent_tie_is_even)
{
	US_OK("2.5e-3", 2);
	US_OK("3.5e-3", 4);
	US_OK("12.5E-4", 1);   /* 1.25 ns -> 1 */
	US_OK("1.75e-3", 2);   /* 1.75 ns -> 2 */
	US_OK("0.5e0", 500);
	US_OK("5e-1", 500);
}

Test(us_to_ns, negative_zero_and_negatives)
{
	US_OK("-0", 0);
	US_OK("-0.000", 0);
	US_OK("-0.0", 0);
	US_OK("-1.5", -1500);
	US_OK("-0.001", -1);
}

Test(us_to_ns, round_half_even_below_one_ns)
{
	US_OK("0.0005", 0);    /* 0.5 ns -> 0 (even) */
	US_OK("0.0015", 2);    /* 1.5 ns -> 2 */
	US_OK("0.0025", 2);    /* 2.5 ns -> 2 */
	US_OK("0.0035", 4);    /* 3.5 ns -> 4 */
	US_OK("0.00050001", 1); /* just above the tie */
	US_OK("0.00049999", 0); /* just below the tie */
	US_OK("1.0004999", 1000);
	US_OK("1.0005", 1000);
	US_OK("1.0015", 1002);
	US_OK("1.00250000000", 1002); /* trailing zeros after a tie keep it a tie */
	US_OK("-0.0015", -2);  /* symmetric for negatives */
	US_OK("-0.0025", -2);
	US_OK("-0.0005", 0);
	US_OK("1712195495519695.8005", INT64_C(1712195495519695800));
	US_OK("1712195495519695.8015", INT64_C(1712195495519695802));
}

Test(us_to_ns, quoted_token)
{
	US_OK("\"12.5\"", 12500);
}

Test(us_to_ns, int64_limits)
{
	US_OK("9223372036854775.807", INT64_MAX);
	US_OK("-9223372036854775.808", INT64_MIN);
	US_ERR("9223372036854775.808");  /* INT64_MAX + 1 ns */
	US_ERR("-9223372036854775.809");
	US_ERR("9223372036854776");      /* 9223372036854776000 ns */
	US_ERR("1e16");
}

Test(us_to_ns, overflow_beyond_64_bits)
{
	US_ERR("18446744073709551616");               /* 2^64 µs */
	US_ERR("340282366920938463463374607431768211456"); /* 2^128 */
	US_ERR("99999999999999999999999999999999999999999999999999");
	US_ERR("1e400");
	US_ERR("1e99999999999999999999");
}

Test(us_to_ns, tiny_values_round_to_zero)
{
	US_OK("1e-400", 0);
	US_OK("0.0000000000000000000000000000000000000000000001", 0);
}

Test(us_to_ns, long_exact_decimal_is_rounded_not_refused)
{
	/* A valid JSON number with more than 36 significant digits is still a
	 * number: 1000.50000...01 ns must round up to 1001 ns, and a long
	 * fraction beyond a clear non-tie must not be refused (spec B2: parse
	 * the token as a decimal string). */
	US_OK("1.00050000000000000000000000000000000000001", 1001);
	US_OK("0.1234567890123456789012345678901234567890", 123);
}

Test(us_to_ns, garbage)
{
	US_ERR("");
	US_ERR("abc");
	US_ERR("-");
	US_ERR(".");
	US_ERR("1.2.3");
	US_ERR("1e");
	US_ERR("1e+");
	US_ERR("--1");
	US_ERR("1x");
	US_ERR("0x10");
	US_ERR("null");
	US_ERR("true");
	US_ERR("NaN");
	US_ERR("Infinity");
	US_ERR("\"\"");
	US_ERR("1 ");
	US_ERR(" 1");
}

/* ---- ns_parse_int64 ---- */

Test(int64, plain)
{
	I64_OK("0", 0);
	I64_OK("12", 12);
	I64_OK("-7", -7);
	I64_OK("-0", 0);
	I64_OK("139872634142720", INT64_C(139872634142720));
}

Test(int64, integral_decimals_and_exponents)
{
	I64_OK("12.0", 12);
	I64_OK("12.000", 12);
	I64_OK("1e3", 1000);
	I64_OK("100e-2", 1);
	I64_OK("1.5e1", 15);
	I64_OK("0.0", 0);
}

Test(int64, non_integral_is_refused)
{
	I64_ERR("12.5");
	I64_ERR("1e-1");
	I64_ERR("0.000001");
}

Test(int64, quoted_integer_string)
{
	I64_OK("\"34\"", 34);
	I64_OK("\"-2\"", -2);
	I64_ERR("\"thread 7\"");
}

Test(int64, limits)
{
	I64_OK("9223372036854775807", INT64_MAX);
	I64_OK("-9223372036854775808", INT64_MIN);
	I64_ERR("9223372036854775808");
	I64_ERR("-9223372036854775809");
	I64_ERR("18446744073709551616");
	I64_ERR("1e19");
	I64_ERR("123456789012345678901234567890123456789012345");
}

Test(int64, garbage)
{
	I64_ERR("");
	I64_ERR("abc");
	I64_ERR("12abc");
	I64_ERR("1.2.3");
	I64_ERR("-");
	I64_ERR("e5");
	I64_ERR("inf");
	I64_ERR("null");
}

/* Tokens at the edges of the 64-bit path (at most 19 digits, no rounding)
 * and just past them, where the general path takes over: the same values. */
Test(numparse, the_fast_path_and_the_general_path_agree_at_their_border)
{
	US_OK("1234567890123456.789", INT64_C(1234567890123456789)); /* 19 digits */
	US_OK("01234567890123456.789", INT64_C(1234567890123456789)); /* 20 with a leading zero */
	US_OK("1234567890123456.7890", INT64_C(1234567890123456789)); /* a 4th decimal */
	US_OK("1.", 1000);
	US_OK("007", 7000);
	US_OK("5e0", 5000);
	US_ERR(".");
	US_ERR("-");
	US_ERR("1.2.3");
	I64_OK("9223372036854775807", INT64_MAX);
	I64_OK("-9223372036854775808", INT64_MIN);
	I64_ERR("9223372036854775808");
	I64_OK("09223372036854775807", INT64_MAX); /* 20 digits */
	I64_ERR("18446744073709551615"); /* UINT64_MAX */
	I64_OK("12.0", 12);
	I64_OK("+12", 12);
	I64_ERR("12.5");
}
