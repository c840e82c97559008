#include "ctern_clock.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <sys/un.h>

int tern_clock_synchronised(void) {
    struct timex query = {0};  // modes = 0: read only, no privilege needed
    int state = adjtimex(&query);
    if (state == -1) return -1;
    return state != TIME_ERROR && !(query.status & STA_UNSYNC);
}

// The protocol's datagram, field for field as chrony documents it in refclock_sock.c.
struct tern_sock_sample {
    struct timeval tv;
    double offset;
    int pulse;
    int leap;
    int _pad;
    int magic;
};

int tern_chrony_sample_size(void) { return (int)sizeof(struct tern_sock_sample); }

void tern_chrony_sample_encode(void *buffer, int64_t seconds, int32_t microseconds, double offset, int leap) {
    struct tern_sock_sample sample;
    memset(&sample, 0, sizeof sample);
    sample.tv.tv_sec = (time_t)seconds;
    sample.tv.tv_usec = (suseconds_t)microseconds;
    sample.offset = offset;
    sample.pulse = 0;
    sample.leap = leap;
    sample.magic = TERN_CHRONY_SOCK_MAGIC;
    memcpy(buffer, &sample, sizeof sample);
}

int tern_chrony_send(int fd, const char *path, int64_t seconds, int32_t microseconds, double offset, int leap) {
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    size_t length = strlen(path);
    if (length >= sizeof address.sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(address.sun_path, path, length + 1);
    struct tern_sock_sample sample;
    tern_chrony_sample_encode(&sample, seconds, microseconds, offset, leap);
    ssize_t sent = sendto(fd, &sample, sizeof sample, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&address, sizeof address);
    return sent == (ssize_t)sizeof sample ? 0 : -1;
}
