#ifndef CTERN_NETLINK_H
#define CTERN_NETLINK_H

/// What the routing messages read at once said (bits of tern_netlink_read's result mask).
enum tern_netlink_event {
    TERN_NETLINK_LINK_UP = 1,         ///< an interface is up and running (has a carrier)
    TERN_NETLINK_LINK_DOWN = 2,       ///< an interface went down or lost its carrier
    TERN_NETLINK_DEFAULT_ADDED = 4,   ///< an IPv4 or IPv6 default route was added
    TERN_NETLINK_DEFAULT_REMOVED = 8, ///< an IPv4 or IPv6 default route was removed
    TERN_NETLINK_OVERRUN = 16,        ///< the socket overflowed: messages were lost, re-check everything
};

/// A non-blocking rtnetlink socket subscribed to link and IPv4/IPv6 route changes
/// (RTMGRP_LINK | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE). Returns the fd, or -1 with errno set.
int tern_netlink_open(void);

/// Reads every pending message; returns a mask of tern_netlink_event bits (0: nothing pending or
/// nothing of interest), or -1 with errno set on a read error other than EAGAIN/ENOBUFS.
int tern_netlink_read(int fd);

#endif
