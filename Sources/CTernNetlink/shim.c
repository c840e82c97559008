#include "ctern_netlink.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int tern_netlink_open(void) {
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) return -1;
    struct sockaddr_nl address;
    memset(&address, 0, sizeof address);
    address.nl_family = AF_NETLINK;
    address.nl_groups = RTMGRP_LINK | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE;
    if (bind(fd, (struct sockaddr *)&address, sizeof address) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

/// A default route in the main table: destination length 0.
static int is_default_route(const struct nlmsghdr *header) {
    const struct rtmsg *route = NLMSG_DATA(header);
    return route->rtm_dst_len == 0 && route->rtm_table == RT_TABLE_MAIN && route->rtm_type == RTN_UNICAST;
}

int tern_netlink_read(int fd) {
    char buffer[16384] __attribute__((aligned(NLMSG_ALIGNTO)));
    int mask = 0;
    for (;;) {
        ssize_t length = recv(fd, buffer, sizeof buffer, 0);
        if (length < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) return mask;
            if (errno == ENOBUFS) { mask |= TERN_NETLINK_OVERRUN; continue; }
            if (errno == EINTR) continue;
            return -1;
        }
        if (length == 0) return mask;
        int remaining = (int)length;
        for (struct nlmsghdr *header = (struct nlmsghdr *)buffer; NLMSG_OK(header, remaining);
             header = NLMSG_NEXT(header, remaining)) {
            switch (header->nlmsg_type) {
            case RTM_NEWLINK: {
                const struct ifinfomsg *link = NLMSG_DATA(header);
                if ((link->ifi_flags & IFF_UP) && (link->ifi_flags & IFF_RUNNING)) mask |= TERN_NETLINK_LINK_UP;
                else mask |= TERN_NETLINK_LINK_DOWN;
                break;
            }
            case RTM_DELLINK:
                mask |= TERN_NETLINK_LINK_DOWN;
                break;
            case RTM_NEWROUTE:
                if (is_default_route(header)) mask |= TERN_NETLINK_DEFAULT_ADDED;
                break;
            case RTM_DELROUTE:
                if (is_default_route(header)) mask |= TERN_NETLINK_DEFAULT_REMOVED;
                break;
            default:
                break;
            }
        }
    }
}
