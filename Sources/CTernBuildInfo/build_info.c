#include "ctern_build_info.h"

#ifndef TERN_GIT_COMMIT
#define TERN_GIT_COMMIT "unknown"
#endif
#ifndef TERN_BUILD_DATE
#define TERN_BUILD_DATE "unknown"
#endif

const char *tern_build_commit(void) { return TERN_GIT_COMMIT; }
const char *tern_build_date(void) { return TERN_BUILD_DATE; }
