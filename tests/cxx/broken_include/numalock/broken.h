/* header_check's self-test: C11-only syntax in a public header must fail the check */
#include <stdint.h>
typedef struct { _Atomic uint32_t word; } nl_broken_t;
