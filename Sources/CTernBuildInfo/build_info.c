#include "ctern_build_info.h"

// deploy/build.sh writes build_info_generated.h (git ignores it) for the length of a release build:
// a header rather than -Xcc -D flags, which would change every module's command line and so rebuild
// every package on each commit.
#if __has_include("build_info_generated.h")
#include "build_info_generated.h"
#endif
#ifndef TERN_GIT_COMMIT
#define TERN_GIT_COMMIT "unknown"
#endif
#ifndef TERN_BUILD_DATE
#define TERN_BUILD_DATE "unknown"
#endif

const char *tern_build_commit(void) { return TERN_GIT_COMMIT; }
const char *tern_build_date(void) { return TERN_BUILD_DATE; }
