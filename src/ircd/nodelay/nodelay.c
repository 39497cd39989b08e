/* TCP_NODELAY on every TCP connection a daemon accepts: an LD_PRELOAD shim for the production
 * IRC servers (ngircd and InspIRCd have no setting for it), so that they can be measured at
 * their best beside as shipped (Nagle on). It wraps accept() and accept4(): on a returned TCP
 * socket it sets TCP_NODELAY and reads it back. With SERVERBENCH_NODELAY_REPORT naming a file,
 * it appends one line per accepted TCP socket, "nodelay=<the value read back>", which is how
 * the launcher's test sees that the setting took effect. Built by src/ircd/launcher.py. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void nodelay(int fd) {
    int domain = 0, type = 0, one = 1, got = -1;
    socklen_t len = sizeof domain;
    if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0) return;
    if (domain != AF_INET && domain != AF_INET6) return;
    len = sizeof type;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM) return;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    len = sizeof got;
    if (getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &got, &len) != 0) got = -1;
    const char *report = getenv("SERVERBENCH_NODELAY_REPORT");
    if (report && *report) {
        int out = open(report, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (out >= 0) {
            char line[32];
            int n = snprintf(line, sizeof line, "nodelay=%d\n", got ? 1 : 0);
            if (n > 0 && write(out, line, (size_t)n) < 0) { /* nothing to do: a report, not the service */ }
            close(out);
        }
    }
}

int accept(int fd, struct sockaddr *addr, socklen_t *len) {
    static int (*real)(int, struct sockaddr *, socklen_t *);
    if (!real) real = (int (*)(int, struct sockaddr *, socklen_t *))dlsym(RTLD_NEXT, "accept");
    int c = real(fd, addr, len);
    nodelay(c);
    return c;
}

int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) {
    static int (*real)(int, struct sockaddr *, socklen_t *, int);
    if (!real) real = (int (*)(int, struct sockaddr *, socklen_t *, int))dlsym(RTLD_NEXT, "accept4");
    int c = real(fd, addr, len, flags);
    nodelay(c);
    return c;
}
