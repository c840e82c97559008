#ifndef CTERN_BUILD_INFO_H
#define CTERN_BUILD_INFO_H

/// The git commit Tern was built from (deploy/build.sh writes it into build_info_generated.h beside
/// build_info.c for the build); "unknown" otherwise.
const char *tern_build_commit(void);

/// The build date (UTC, YYYY-MM-DD), likewise; "unknown" otherwise.
const char *tern_build_date(void);

#endif
