#include "ctern_clock.h"

#include <sys/timex.h>

int tern_clock_synchronised(void) {
    struct timex query = {0};  // modes = 0: read only, no privilege needed
    int state = adjtimex(&query);
    if (state == -1) return -1;
    return state != TIME_ERROR && !(query.status & STA_UNSYNC);
}
