#ifndef CTERN_BUILD_INFO_H
#define CTERN_BUILD_INFO_H

/// The git commit Tern was built from: `swift build -Xcc -DTERN_GIT_COMMIT='"abc1234"'` (deploy/build.sh
/// passes it); "unknown" otherwise.
const char *tern_build_commit(void);

/// The build date (UTC, YYYY-MM-DD): `-Xcc -DTERN_BUILD_DATE='"2026-11-25"'`; "unknown" otherwise.
const char *tern_build_date(void);

#endif
