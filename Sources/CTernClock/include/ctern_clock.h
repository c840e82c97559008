#ifndef CTERN_CLOCK_H
#define CTERN_CLOCK_H

#include <stdint.h>

/// Whether the kernel considers the system clock synchronised to a time source (NTP, chrony,
/// systemd-timesyncd): adjtimex(2) in read-only mode returns TIME_ERROR and sets STA_UNSYNC otherwise.
/// Returns 1 synchronised, 0 not, -1 when the call failed (errno set).
int tern_clock_synchronised(void);

/// chrony's SOCK refclock sample (chrony's refclock_sock.c, `struct sock_sample`): the system time of
/// a measurement (`tv`), true time minus it (`offset`, seconds), `pulse` 0 (a time, not a PPS edge),
/// `leap` 0 normal / 1 insert / 2 delete, and the magic 0x534f434b ("SOCK"). Laid out by this C
/// compiler, as chronyd built for the same system expects it.
#define TERN_CHRONY_SOCK_MAGIC 0x534f434b

/// The size of one sample datagram on this system (40 bytes with a 64-bit time_t).
int tern_chrony_sample_size(void);

/// Writes one sample into `buffer` (at least `tern_chrony_sample_size()` bytes).
void tern_chrony_sample_encode(void *buffer, int64_t seconds, int32_t microseconds, double offset, int leap);

/// Sends one sample from the datagram socket `fd` to chronyd's socket at `path`, without blocking
/// (MSG_DONTWAIT). Returns 0, or -1 with errno set (ENOENT: no such socket, chronyd not running or
/// without the refclock; ECONNREFUSED: a stale socket file; EACCES: no write permission on it;
/// EAGAIN: chronyd is not reading; ENAMETOOLONG: the path does not fit a sockaddr_un).
int tern_chrony_send(int fd, const char *path, int64_t seconds, int32_t microseconds, double offset, int leap);

#endif
