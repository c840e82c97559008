#ifndef CTERN_CRASH_VFS_H
#define CTERN_CRASH_VFS_H

#include <stdint.h>

/// A SQLite VFS that simulates a power cut, in the manner of SQLite's own crash tests (src/test6.c).
/// Test-only: never link it into the product.
///
/// It wraps the "unix" VFS. Writes to a database, WAL or rollback-journal file stay in memory (an
/// overlay per path, shared by every connection of the process, as the page cache is) until xSync
/// writes them through to the real file and fsyncs it; reads, xFileSize and xTruncate see the
/// overlay. Shared memory (xShm*) and locks pass through; memory-mapped I/O is refused so that every
/// read goes through the overlay.
///
/// At the `crash_after`-th write-or-sync call on those files that `cut_on` counts (over the whole
/// process), the process ends at once with `_exit(exit_status)`: what was not synced never reaches
/// the files.
/// With `tear`, a random part of the unsynced writes is written first, in 512-byte pieces, some of
/// them with garbage (a torn write): either a prefix of them in order or a random subset. A line on
/// standard error says where the cut happened.
///
/// Registers the VFS as "tern-crash" and as the default, so that GRDB (the same system libsqlite3)
/// uses it. `crash_after` 0 never cuts. Returns SQLITE_OK or an SQLite error code.
int ctern_crash_vfs_install(int64_t crash_after, int cut_on, uint64_t seed, int tear, int exit_status);

/// Which calls count towards `crash_after`.
enum {
    /// Every write and sync.
    CTERN_CRASH_VFS_CUT_ON_ANY = 0,
    /// Syncs only: the cut comes while a commit (or a checkpoint) is being made durable.
    CTERN_CRASH_VFS_CUT_ON_SYNC = 1,
    /// Writes and syncs of the database file itself, which in WAL mode only checkpoints write.
    CTERN_CRASH_VFS_CUT_ON_DATABASE = 2,
};

/// Write and sync calls made so far (of every kind).
int64_t ctern_crash_vfs_operations(void);

struct sqlite3;

/// For the harness's checks after a cut: closing `db` will not checkpoint the WAL nor delete it
/// (SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE), so the next child starts from the files the cut left, as
/// Tern does when the power comes back. (sqlite3_db_config is variadic: Swift cannot call it.)
int ctern_keep_wal_on_close(struct sqlite3 *db);

#endif
