/* The public structs' layout as the C compiler sees it (layout.h). */
#include "layout.h"

#define NL_LAYOUT_C(expr) { #expr, expr },
const nl_layout_item_t nl_c_layout[] = { NL_LAYOUT_ITEMS(NL_LAYOUT_C, _Alignof) { NULL, 0 } };
