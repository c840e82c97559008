// A SQLite VFS that simulates a power cut (see include/ctern_crash_vfs.h). Test-only.
//
// Model (SQLite's src/test6.c, adapted to one process with several connections):
// - Each database, WAL and rollback-journal path has an overlay: the writes not yet synced, in
//   order, the size the process sees, and an unsynced truncation (`cut`). Every handle on the path
//   shares it, as every connection shares the page cache.
// - xRead returns the real file's bytes (below `cut`), patched with the pending writes in order;
//   xFileSize is the overlay's size; xTruncate trims the pending writes and records the cut.
// - xSync writes the overlay through (truncate, writes, final size), then fsyncs the real file.
// - At the chosen write or sync call, the process ends with _exit: the real files hold exactly
//   what was synced, plus, when tearing, a prefix or a random subset of the pending writes in
//   512-byte pieces, some replaced by garbage, and perhaps the pending truncation. Garbage stays
//   inside the bytes SQLite wrote (the unix VFS declares SQLITE_IOCAP_POWERSAFE_OVERWRITE).

#include "ctern_crash_vfs.h"

#include <sqlite3.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PIECE 512

typedef struct Pending {
    sqlite3_int64 offset;
    int amount;
    unsigned char *data;
    struct Pending *next;
} Pending;

typedef struct Overlay {
    char *path;
    /// SQLITE_OPEN_MAIN_DB, SQLITE_OPEN_WAL or SQLITE_OPEN_MAIN_JOURNAL.
    int kind;
    /// The size the process sees.
    sqlite3_int64 size;
    /// Real bytes at and beyond this offset were truncated away (not yet synced); -1: none.
    sqlite3_int64 cut;
    Pending *first;
    struct Overlay *next;
} Overlay;

typedef struct CrashFile {
    sqlite3_file base;
    /// The unix VFS's file, allocated right after this struct.
    sqlite3_file *real;
    /// NULL: every call passes through (temporary files and the like).
    Overlay *overlay;
} CrashFile;

static struct {
    sqlite3_vfs vfs;
    sqlite3_vfs *unix_vfs;
    pthread_mutex_t mutex;
    Overlay *overlays;
    int64_t operations;
    /// Operations of the kind that counts towards the cut (`cut_on`).
    int64_t counted;
    int64_t crash_after;
    int cut_on;
    uint64_t random;
    int tear;
    int exit_status;
} g = {.mutex = PTHREAD_MUTEX_INITIALIZER};

// MARK: - Helpers

static uint64_t next_random(void) {
    // SplitMix64.
    uint64_t z = (g.random += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static sqlite3_int64 min64(sqlite3_int64 a, sqlite3_int64 b) { return a < b ? a : b; }
static sqlite3_int64 max64(sqlite3_int64 a, sqlite3_int64 b) { return a > b ? a : b; }

static void free_pending(Overlay *overlay) {
    Pending *p = overlay->first;
    while (p) {
        Pending *next = p->next;
        free(p->data);
        free(p);
        p = next;
    }
    overlay->first = NULL;
}

static Overlay *find_overlay(const char *path) {
    for (Overlay *o = g.overlays; o; o = o->next) {
        if (strcmp(o->path, path) == 0) return o;
    }
    return NULL;
}

static size_t write_all(int fd, const void *bytes, size_t count, off_t offset) {
    size_t done = 0;
    while (done < count) {
        ssize_t n = pwrite(fd, (const char *)bytes + done, count - done, offset + (off_t)done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += (size_t)n;
    }
    return done;
}

// MARK: - The power cut

/// Ends the process as a power cut would: what is pending is lost, or (tearing) partly written.
static void power_cut(const char *operation, const char *path) {
    int pieces = 0, written = 0, garbage = 0, cuts = 0;
    const char *shape = "nothing unsynced written";
    if (g.tear) {
        // A prefix models a disk that writes back in order; a subset, one that reorders.
        int prefix = (int)(next_random() % 2);
        int stopped = 0;
        shape = prefix ? "torn: a prefix of the unsynced pieces written" : "torn: a random subset of the unsynced pieces written";
        for (Overlay *o = g.overlays; o; o = o->next) {
            if (!o->first && o->cut < 0) continue;
            int fd = open(o->path, O_WRONLY);
            if (fd < 0) continue;
            if (o->cut >= 0 && next_random() % 2) {
                if (ftruncate(fd, o->cut) == 0) cuts++;
            }
            for (Pending *p = o->first; p; p = p->next) {
                sqlite3_int64 start = p->offset;
                while (start < p->offset + p->amount) {
                    sqlite3_int64 end = min64((start / PIECE + 1) * PIECE, p->offset + p->amount);
                    size_t length = (size_t)(end - start);
                    const unsigned char *bytes = p->data + (start - p->offset);
                    unsigned char noise[PIECE];
                    // 0: not written, 1: written, 2: written with garbage.
                    int action;
                    if (prefix) {
                        if (stopped) {
                            action = 0;
                        } else if (next_random() % 8 == 0) {
                            stopped = 1;
                            action = (int)(next_random() % 3);
                        } else {
                            action = 1;
                        }
                    } else {
                        action = (int)(next_random() % 3);
                    }
                    pieces++;
                    if (action == 2) {
                        for (size_t i = 0; i < length; i++) noise[i] = (unsigned char)next_random();
                        bytes = noise;
                        garbage++;
                    }
                    if (action != 0 && write_all(fd, bytes, length, (off_t)start) == length) written++;
                    start = end;
                }
            }
            close(fd);
        }
    } else {
        for (Overlay *o = g.overlays; o; o = o->next) {
            for (Pending *p = o->first; p; p = p->next) pieces++;
        }
    }
    char line[1024];
    int length = snprintf(
        line, sizeof line,
        "ctern-crash-vfs: power cut at operation %lld, counted %lld (%s %s); %s: %d pieces pending, %d written (%d with garbage), %d truncations applied\n",
        (long long)g.operations, (long long)g.counted, operation, path, shape, pieces, written, garbage, cuts);
    if (length > 0) {
        ssize_t ignored = write(2, line, (size_t)min64(length, (sqlite3_int64)sizeof line - 1));
        (void)ignored;
    }
    _exit(g.exit_status);
}

/// Counts a write or sync; at the chosen one, cuts the power. Called with the mutex held.
static void count_operation(int is_sync, const Overlay *overlay) {
    g.operations++;
    int counts = g.cut_on == CTERN_CRASH_VFS_CUT_ON_ANY
        || (g.cut_on == CTERN_CRASH_VFS_CUT_ON_SYNC && is_sync)
        || (g.cut_on == CTERN_CRASH_VFS_CUT_ON_DATABASE && overlay->kind == SQLITE_OPEN_MAIN_DB);
    if (!counts) return;
    g.counted++;
    if (g.crash_after > 0 && g.counted >= g.crash_after) power_cut(is_sync ? "sync" : "write", overlay->path);
}

// MARK: - Overlay I/O (mutex held)

static int overlay_read(CrashFile *file, void *buffer, int amount, sqlite3_int64 offset) {
    Overlay *o = file->overlay;
    unsigned char *bytes = buffer;
    memset(bytes, 0, (size_t)amount);
    sqlite3_int64 limit = o->cut >= 0 ? min64(o->size, o->cut) : o->size;
    if (offset < limit) {
        int count = (int)min64(amount, limit - offset);
        int rc = file->real->pMethods->xRead(file->real, bytes, count, offset);
        if (rc != SQLITE_OK && rc != SQLITE_IOERR_SHORT_READ) return rc;
    }
    for (Pending *p = o->first; p; p = p->next) {
        sqlite3_int64 low = max64(offset, p->offset);
        sqlite3_int64 high = min64(offset + amount, p->offset + p->amount);
        if (low < high) memcpy(bytes + (low - offset), p->data + (low - p->offset), (size_t)(high - low));
    }
    return offset + amount > o->size ? SQLITE_IOERR_SHORT_READ : SQLITE_OK;
}

static int overlay_write(CrashFile *file, const void *buffer, int amount, sqlite3_int64 offset) {
    Overlay *o = file->overlay;
    Pending *entry = malloc(sizeof *entry);
    unsigned char *data = malloc((size_t)amount);
    if (!entry || !data) {
        free(entry);
        free(data);
        return SQLITE_IOERR_NOMEM;
    }
    memcpy(data, buffer, (size_t)amount);
    *entry = (Pending){.offset = offset, .amount = amount, .data = data, .next = NULL};
    // Earlier writes this one covers entirely can never be read again: forget them.
    Pending **link = &o->first;
    while (*link) {
        Pending *p = *link;
        if (p->offset >= offset && p->offset + p->amount <= offset + amount) {
            *link = p->next;
            free(p->data);
            free(p);
        } else {
            link = &p->next;
        }
    }
    *link = entry;
    o->size = max64(o->size, offset + amount);
    return SQLITE_OK;
}

static void overlay_truncate(Overlay *o, sqlite3_int64 size) {
    Pending **link = &o->first;
    while (*link) {
        Pending *p = *link;
        if (p->offset >= size) {
            *link = p->next;
            free(p->data);
            free(p);
            continue;
        }
        if (p->offset + p->amount > size) p->amount = (int)(size - p->offset);
        link = &p->next;
    }
    if (size < o->size) o->cut = o->cut < 0 ? size : min64(o->cut, size);
    o->size = size;
}

/// Writes the overlay through to the real file (not yet fsynced).
static int overlay_flush(CrashFile *file) {
    Overlay *o = file->overlay;
    sqlite3_file *real = file->real;
    int rc = SQLITE_OK;
    if (o->cut >= 0) rc = real->pMethods->xTruncate(real, o->cut);
    for (Pending *p = o->first; p && rc == SQLITE_OK; p = p->next) {
        rc = real->pMethods->xWrite(real, p->data, p->amount, p->offset);
    }
    sqlite3_int64 size = 0;
    if (rc == SQLITE_OK) rc = real->pMethods->xFileSize(real, &size);
    if (rc == SQLITE_OK && size != o->size) rc = real->pMethods->xTruncate(real, o->size);
    if (rc == SQLITE_OK) {
        free_pending(o);
        o->cut = -1;
    }
    return rc;
}

// MARK: - sqlite3_io_methods

static int crash_close(sqlite3_file *f) {
    CrashFile *file = (CrashFile *)f;
    return file->real->pMethods->xClose(file->real);
}

static int crash_read(sqlite3_file *f, void *buffer, int amount, sqlite3_int64 offset) {
    CrashFile *file = (CrashFile *)f;
    if (!file->overlay) return file->real->pMethods->xRead(file->real, buffer, amount, offset);
    pthread_mutex_lock(&g.mutex);
    int rc = overlay_read(file, buffer, amount, offset);
    pthread_mutex_unlock(&g.mutex);
    return rc;
}

static int crash_write(sqlite3_file *f, const void *buffer, int amount, sqlite3_int64 offset) {
    CrashFile *file = (CrashFile *)f;
    if (!file->overlay) return file->real->pMethods->xWrite(file->real, buffer, amount, offset);
    pthread_mutex_lock(&g.mutex);
    int rc = overlay_write(file, buffer, amount, offset);
    // The write being made when the power goes is pending: a torn cut may write part of it.
    if (rc == SQLITE_OK) count_operation(0, file->overlay);
    pthread_mutex_unlock(&g.mutex);
    return rc;
}

static int crash_truncate(sqlite3_file *f, sqlite3_int64 size) {
    CrashFile *file = (CrashFile *)f;
    if (!file->overlay) return file->real->pMethods->xTruncate(file->real, size);
    pthread_mutex_lock(&g.mutex);
    overlay_truncate(file->overlay, size);
    pthread_mutex_unlock(&g.mutex);
    return SQLITE_OK;
}

static int crash_sync(sqlite3_file *f, int flags) {
    CrashFile *file = (CrashFile *)f;
    if (!file->overlay) return file->real->pMethods->xSync(file->real, flags);
    pthread_mutex_lock(&g.mutex);
    // The power goes while this sync runs: nothing pending is known to be on the disk.
    count_operation(1, file->overlay);
    int rc = overlay_flush(file);
    pthread_mutex_unlock(&g.mutex);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xSync(file->real, flags);
}

static int crash_file_size(sqlite3_file *f, sqlite3_int64 *size) {
    CrashFile *file = (CrashFile *)f;
    if (!file->overlay) return file->real->pMethods->xFileSize(file->real, size);
    pthread_mutex_lock(&g.mutex);
    *size = file->overlay->size;
    pthread_mutex_unlock(&g.mutex);
    return SQLITE_OK;
}

static int crash_lock(sqlite3_file *f, int level) {
    CrashFile *file = (CrashFile *)f;
    return file->real->pMethods->xLock(file->real, level);
}

static int crash_unlock(sqlite3_file *f, int level) {
    CrashFile *file = (CrashFile *)f;
    return file->real->pMethods->xUnlock(file->real, level);
}

static int crash_check_reserved_lock(sqlite3_file *f, int *reserved) {
    CrashFile *file = (CrashFile *)f;
    return file->real->pMethods->xCheckReservedLock(file->real, reserved);
}

static int crash_file_control(sqlite3_file *f, int op, void *argument) {
    CrashFile *file = (CrashFile *)f;
    if (file->overlay) {
        switch (op) {
        case SQLITE_FCNTL_SIZE_HINT:
            // The unix VFS would grow the real file directly; the overlay's size is what counts.
            return SQLITE_OK;
        case SQLITE_FCNTL_MMAP_SIZE:
            // Reads from a mapping would bypass the overlay.
            *(sqlite3_int64 *)argument = 0;
            return SQLITE_OK;
        default:
            break;
        }
    }
    return file->real->pMethods->xFileControl(file->real, op, argument);
}

static int crash_sector_size(sqlite3_file *f) {
    CrashFile *file = (CrashFile *)f;
    return file->real->pMethods->xSectorSize(file->real);
}

static int crash_device_characteristics(sqlite3_file *f) {
    CrashFile *file = (CrashFile *)f;
    return file->real->pMethods->xDeviceCharacteristics(file->real);
}

static int crash_shm_map(sqlite3_file *f, int region, int size, int extend, void volatile **pointer) {
    CrashFile *file = (CrashFile *)f;
    return file->real->pMethods->xShmMap(file->real, region, size, extend, pointer);
}

static int crash_shm_lock(sqlite3_file *f, int offset, int count, int flags) {
    CrashFile *file = (CrashFile *)f;
    return file->real->pMethods->xShmLock(file->real, offset, count, flags);
}

static void crash_shm_barrier(sqlite3_file *f) {
    CrashFile *file = (CrashFile *)f;
    file->real->pMethods->xShmBarrier(file->real);
}

static int crash_shm_unmap(sqlite3_file *f, int delete) {
    CrashFile *file = (CrashFile *)f;
    return file->real->pMethods->xShmUnmap(file->real, delete);
}

static int crash_fetch(sqlite3_file *f, sqlite3_int64 offset, int amount, void **pointer) {
    (void)f, (void)offset, (void)amount;
    // No mapping: SQLite then reads through xRead, which sees the overlay.
    *pointer = NULL;
    return SQLITE_OK;
}

static int crash_unfetch(sqlite3_file *f, sqlite3_int64 offset, void *pointer) {
    (void)f, (void)offset, (void)pointer;
    return SQLITE_OK;
}

static const sqlite3_io_methods crash_io_methods = {
    .iVersion = 3,
    .xClose = crash_close,
    .xRead = crash_read,
    .xWrite = crash_write,
    .xTruncate = crash_truncate,
    .xSync = crash_sync,
    .xFileSize = crash_file_size,
    .xLock = crash_lock,
    .xUnlock = crash_unlock,
    .xCheckReservedLock = crash_check_reserved_lock,
    .xFileControl = crash_file_control,
    .xSectorSize = crash_sector_size,
    .xDeviceCharacteristics = crash_device_characteristics,
    .xShmMap = crash_shm_map,
    .xShmLock = crash_shm_lock,
    .xShmBarrier = crash_shm_barrier,
    .xShmUnmap = crash_shm_unmap,
    .xFetch = crash_fetch,
    .xUnfetch = crash_unfetch,
};

// MARK: - sqlite3_vfs

static int crash_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f, int flags, int *outFlags) {
    (void)vfs;
    CrashFile *file = (CrashFile *)f;
    file->real = (sqlite3_file *)(file + 1);
    file->overlay = NULL;
    int rc = g.unix_vfs->xOpen(g.unix_vfs, name, file->real, flags, outFlags);
    if (rc != SQLITE_OK) {
        file->base.pMethods = NULL;
        return rc;
    }
    file->base.pMethods = &crash_io_methods;
    int durable = flags & (SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_WAL | SQLITE_OPEN_MAIN_JOURNAL);
    if (!durable || !name) return SQLITE_OK;
    pthread_mutex_lock(&g.mutex);
    Overlay *overlay = find_overlay(name);
    if (!overlay) {
        overlay = calloc(1, sizeof *overlay);
        char *path = strdup(name);
        sqlite3_int64 size = 0;
        int sized = file->real->pMethods->xFileSize(file->real, &size);
        if (!overlay || !path || sized != SQLITE_OK) {
            pthread_mutex_unlock(&g.mutex);
            free(overlay);
            free(path);
            file->real->pMethods->xClose(file->real);
            file->base.pMethods = NULL;
            return sized != SQLITE_OK ? sized : SQLITE_NOMEM;
        }
        int kind = flags & (SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_WAL | SQLITE_OPEN_MAIN_JOURNAL);
        *overlay = (Overlay){.path = path, .kind = kind, .size = size, .cut = -1, .first = NULL, .next = g.overlays};
        g.overlays = overlay;
    }
    file->overlay = overlay;
    pthread_mutex_unlock(&g.mutex);
    return SQLITE_OK;
}

static int crash_delete(sqlite3_vfs *vfs, const char *name, int syncDirectory) {
    (void)vfs;
    pthread_mutex_lock(&g.mutex);
    // The file goes (for good: unlink is not held back); a file created again starts afresh. The
    // overlay is unlinked from the list but not freed, in case a handle on it is still open.
    for (Overlay **link = &g.overlays; *link; link = &(*link)->next) {
        Overlay *o = *link;
        if (strcmp(o->path, name) == 0) {
            *link = o->next;
            free_pending(o);
            o->cut = -1;
            break;
        }
    }
    pthread_mutex_unlock(&g.mutex);
    return g.unix_vfs->xDelete(g.unix_vfs, name, syncDirectory);
}

static int crash_access(sqlite3_vfs *vfs, const char *name, int flags, int *result) {
    (void)vfs;
    return g.unix_vfs->xAccess(g.unix_vfs, name, flags, result);
}

static int crash_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs;
    return g.unix_vfs->xFullPathname(g.unix_vfs, name, size, out);
}

static void *crash_dl_open(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return g.unix_vfs->xDlOpen(g.unix_vfs, name);
}

static void crash_dl_error(sqlite3_vfs *vfs, int size, char *message) {
    (void)vfs;
    g.unix_vfs->xDlError(g.unix_vfs, size, message);
}

static void (*crash_dl_sym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    (void)vfs;
    return g.unix_vfs->xDlSym(g.unix_vfs, handle, symbol);
}

static void crash_dl_close(sqlite3_vfs *vfs, void *handle) {
    (void)vfs;
    g.unix_vfs->xDlClose(g.unix_vfs, handle);
}

static int crash_randomness(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return g.unix_vfs->xRandomness(g.unix_vfs, size, out);
}

static int crash_sleep(sqlite3_vfs *vfs, int microseconds) {
    (void)vfs;
    return g.unix_vfs->xSleep(g.unix_vfs, microseconds);
}

static int crash_current_time(sqlite3_vfs *vfs, double *now) {
    (void)vfs;
    return g.unix_vfs->xCurrentTime(g.unix_vfs, now);
}

static int crash_get_last_error(sqlite3_vfs *vfs, int size, char *message) {
    (void)vfs;
    return g.unix_vfs->xGetLastError(g.unix_vfs, size, message);
}

static int crash_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *now) {
    (void)vfs;
    return g.unix_vfs->xCurrentTimeInt64(g.unix_vfs, now);
}

int ctern_crash_vfs_install(int64_t crash_after, int cut_on, uint64_t seed, int tear, int exit_status) {
    sqlite3_vfs *unix_vfs = sqlite3_vfs_find("unix");
    if (!unix_vfs) return SQLITE_ERROR;
    pthread_mutex_lock(&g.mutex);
    g.unix_vfs = unix_vfs;
    g.crash_after = crash_after;
    g.cut_on = cut_on;
    g.random = seed;
    g.tear = tear;
    g.exit_status = exit_status;
    g.vfs = (sqlite3_vfs){
        .iVersion = 2,
        .szOsFile = (int)sizeof(CrashFile) + unix_vfs->szOsFile,
        .mxPathname = unix_vfs->mxPathname,
        .zName = "tern-crash",
        .xOpen = crash_open,
        .xDelete = crash_delete,
        .xAccess = crash_access,
        .xFullPathname = crash_full_pathname,
        .xDlOpen = crash_dl_open,
        .xDlError = crash_dl_error,
        .xDlSym = crash_dl_sym,
        .xDlClose = crash_dl_close,
        .xRandomness = crash_randomness,
        .xSleep = crash_sleep,
        .xCurrentTime = crash_current_time,
        .xGetLastError = crash_get_last_error,
        .xCurrentTimeInt64 = crash_current_time_int64,
    };
    pthread_mutex_unlock(&g.mutex);
    return sqlite3_vfs_register(&g.vfs, 1);
}

int ctern_keep_wal_on_close(struct sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)NULL);
}

int64_t ctern_crash_vfs_operations(void) {
    pthread_mutex_lock(&g.mutex);
    int64_t operations = g.operations;
    pthread_mutex_unlock(&g.mutex);
    return operations;
}
