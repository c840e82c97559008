#ifndef CTERN_CLOCK_H
#define CTERN_CLOCK_H

/// Whether the kernel considers the system clock synchronised to a time source (NTP, chrony,
/// systemd-timesyncd): adjtimex(2) in read-only mode returns TIME_ERROR and sets STA_UNSYNC otherwise.
/// Returns 1 synchronised, 0 not, -1 when the call failed (errno set).
int tern_clock_synchronised(void);

#endif
