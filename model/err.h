/* err.h — forwarding header: the error value lives in base/err.h now (issue 21). Kept only for
 * sim/ev.c and sim/net.h, which are being edited on other branches; when those merge, their
 * include becomes "../base/err.h" and this file goes. Nothing new includes it. */
#include "../base/err.h"
