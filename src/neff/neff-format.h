/* On-disk layout of a NEFF and the limits this reader applies. Sources are
 * named as in docs/neff.md: [DOC] official neff_header_t, [RE] public
 * reverse engineering of libnrt 2.31, [OBS] the two real nkipy files. */
#ifndef NS_NEFF_FORMAT_H
#define NS_NEFF_FORMAT_H

#include <stdint.h>

/* Header field offsets [DOC]; all integers little-endian. */
#define NEFF_HEADER_SIZE           1024u
#define NEFF_OFF_PKG_VERSION       0x000u
#define NEFF_OFF_HEADER_SIZE       0x008u
#define NEFF_OFF_DATA_SIZE         0x010u
#define NEFF_OFF_VERSION_MAJOR     0x018u
#define NEFF_OFF_VERSION_MINOR     0x020u
#define NEFF_OFF_BUILD_VERSION     0x028u /* 128 bytes */
#define NEFF_OFF_NUM_TPB           0x0A8u
#define NEFF_OFF_HASH              0x0ACu /* 32 bytes */
#define NEFF_OFF_UUID              0x0CCu /* 16 bytes */
#define NEFF_OFF_NAME              0x0DCu /* 256 bytes */
#define NEFF_OFF_REQUESTED_TPB     0x1DCu
#define NEFF_OFF_TPB_PER_NODE      0x1E0u /* 64 bytes */
#define NEFF_OFF_FEATURE_BITS      0x220u
#define NEFF_OFF_LNC_SIZE          0x228u
#define NEFF_OFF_PAD               0x22Cu /* up to 0x400 */

/* There is no magic number, so these two fields identify a NEFF: a file
 * whose first u64 is not 1 or 2, or whose header_size is outside this range,
 * is reported as "not a NEFF" rather than as a damaged one. */
#define NEFF_PKG_VERSION_MIN       1u
#define NEFF_PKG_VERSION_MAX       2u
#define NEFF_HEADER_SIZE_MAX       65536u

/* The runtime refuses major versions above 2 and, for version 2, any
 * feature bit in 27..62 ("compiled by a newer version of Neuron compiler") [RE]. */
#define NEFF_VERSION_MAJOR_MAX     2u
#define NEFF_FEATURES_UNSUPPORTED  UINT64_C(0x7FFFFFFFF8000000)

/* Engine binaries are sequences of 64-byte instruction slots [RE][OBS]. */
#define NEFF_INSTRUCTION_SIZE      64u

/* POSIX/GNU tar header [ustar]. */
#define TAR_BLOCK                  512u
#define TAR_OFF_NAME               0u   /* 100 */
#define TAR_OFF_SIZE               124u /* 12, octal or GNU base-256 */
#define TAR_OFF_CHKSUM             148u /* 8 */
#define TAR_OFF_TYPEFLAG           156u
#define TAR_OFF_MAGIC              257u /* "ustar" */
#define TAR_OFF_PREFIX             345u /* 155 */
#define TAR_LEN_NAME               100u
#define TAR_LEN_SIZE               12u
#define TAR_LEN_CHKSUM             8u
#define TAR_LEN_PREFIX             155u

/* Limits on what an input controls. Real files: 72 members, members up to
 * 1.5 MB, JSON members up to 28 KB, inflation ratio about 6-7. */
#define NEFF_MAX_MEMBERS           65536u
#define NEFF_MAX_NAME              4096u                 /* GNU long name / pax path */
#define NEFF_MAX_PAX_HEADER        (1u << 20)
#define NEFF_MAX_JSON_MEMBER       (64u << 20)           /* larger *.json are listed, not kept */
#define NEFF_MAX_JSON_TOTAL        (256u << 20)
#define NEFF_MAX_INFLATE_RATIO     256u                  /* tar bytes per data_size byte */
#define NEFF_MAX_TAR_BYTES         (UINT64_C(16) << 30)  /* absolute cap on inflated bytes */

#endif
