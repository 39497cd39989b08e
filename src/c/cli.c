/* Command line of the C program: `serverbench-c echo_flood server|client [flags]`,
 * `--version`, `--help`. The flag table mirrors spec/cli.json benchmarks.echo_flood.roles
 * (tests/python/conformance checks every flag's bad values against cli.json). */
#include "common.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef enum { T_INT, T_NUM, T_ENUM } ftype;
typedef struct {
    const char *name;
    ftype type;
    double min, max;
    int min_exclusive, required;
    const char *values[3]; /* enum values */
    void *dest;
} flag;

double sb_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void sb_runtime_json(FILE *f, int schedulers) {
#ifdef __VERSION__
    fprintf(f, "{\"name\":\"c\",\"version\":\"gcc %s\",\"schedulers\":%d}", __VERSION__, schedulers);
#else
    fprintf(f, "{\"name\":\"c\",\"version\":\"unknown\",\"schedulers\":%d}", schedulers);
#endif
}

static int usage_error(const char *fmt, const char *a, const char *b) {
    fprintf(stderr, "error: ");
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, "\n");
    return EXIT_USAGE;
}

static int set_value(const flag *f, const char *text) {
    char *end = NULL;
    if (text[0] == '\0') return usage_error("%s: empty value%s", f->name, "");
    if (f->type == T_ENUM) {
        for (int i = 0; i < 3 && f->values[i]; i++)
            if (strcmp(text, f->values[i]) == 0) {
                *(const char **)f->dest = f->values[i];
                return 0;
            }
        return usage_error("%s: unknown value '%s'", f->name, text);
    }
    errno = 0;
    double v;
    if (f->type == T_INT) {
        long long l = strtoll(text, &end, 10);
        if (*end != '\0' || errno) return usage_error("%s: '%s' is not an integer", f->name, text);
        v = (double)l;
    } else {
        v = strtod(text, &end);
        if (*end != '\0' || errno || !isfinite(v)) return usage_error("%s: '%s' is not a finite number", f->name, text);
    }
    if ((f->min_exclusive && v <= f->min) || (!f->min_exclusive && v < f->min) || v > f->max)
        return usage_error("%s: '%s' is out of range", f->name, text);
    if (f->type == T_INT) *(long *)f->dest = (long)v;
    else *(double *)f->dest = v;
    return 0;
}

static void help(void) {
    printf("usage: serverbench-c echo_flood server [--port P] [--idle-timeout-s T] [--variant fair]\n"
           "       serverbench-c echo_flood client --port P --connections N [--bytes-per-connection D]\n"
           "                     [--mode flood|saturate] [--duration-s T] [--timeout-s T] [--threads T]\n"
           "                     [--host 127.0.0.1]\n"
           "       serverbench-c --version | --help\n"
           "benchmarks: echo_flood (flags: spec/cli.json)\n");
}

int sb_parse(int argc, char **argv, sb_params *p) {
    memset(p, 0, sizeof *p);
    p->idle_timeout_s = 60;
    p->bytes_per_connection = SB_CHUNK_BYTES;
    p->mode = "flood";
    p->duration_s = 5;
    p->client_timeout_s = 60;
    p->host = SB_LOOPBACK;
    p->threads = 1;
    p->variant = "fair";
    if (argc < 1) return usage_error("missing sub-command (echo_flood, --version, --help)%s%s", "", "");
    if (strcmp(argv[0], "--version") == 0) {
        if (argc > 1) return usage_error("--version takes no argument, got '%s'%s", argv[1], "");
        printf("{\"program\":\"serverbench\",\"program_version\":\"%s\",\"language\":\"c\",\"runtime\":", SB_PROGRAM_VERSION);
        sb_runtime_json(stdout, 1);
        printf("}\n");
        return -1;
    }
    if (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
        help();
        return -1;
    }
    if (strcmp(argv[0], "pingping") == 0 || strcmp(argv[0], "spawn") == 0 || strcmp(argv[0], "throughput") == 0 ||
        strcmp(argv[0], "tcp_pingpong") == 0)
        return usage_error("language c does not implement the benchmark %s (c implements echo_flood)%s", argv[0], "");
    if (strcmp(argv[0], "echo_flood") != 0)
        return usage_error("unknown sub-command '%s' (c implements echo_flood)%s", argv[0], "");
    if (argc < 2) return usage_error("echo_flood needs a role: server or client%s%s", "", "");
    flag server[] = {
        {"--port", T_INT, 0, 65535, 0, 0, {0}, &p->port},
        {"--idle-timeout-s", T_NUM, 0, 86400, 1, 0, {0}, &p->idle_timeout_s},
        {"--variant", T_ENUM, 0, 0, 0, 0, {"fair", 0}, &p->variant},
    };
    flag client[] = {
        {"--host", T_ENUM, 0, 0, 0, 0, {SB_LOOPBACK, 0}, &p->host},
        {"--port", T_INT, 1, 65535, 0, 1, {0}, &p->port},
        {"--connections", T_INT, 1, 65535, 0, 1, {0}, &p->connections},
        {"--bytes-per-connection", T_INT, SB_CHUNK_BYTES, 1073741824, 0, 0, {0}, &p->bytes_per_connection},
        {"--mode", T_ENUM, 0, 0, 0, 0, {"flood", "saturate", 0}, &p->mode},
        {"--duration-s", T_NUM, 0, 3600, 1, 0, {0}, &p->duration_s},
        {"--timeout-s", T_NUM, 0, 86400, 1, 0, {0}, &p->client_timeout_s},
        {"--threads", T_INT, 1, 256, 0, 0, {0}, &p->threads},
        {"--variant", T_ENUM, 0, 0, 0, 0, {"fair", 0}, &p->variant},
    };
    flag *flags;
    int nflags;
    if (strcmp(argv[1], "server") == 0) {
        flags = server;
        nflags = (int)(sizeof server / sizeof server[0]);
    } else if (strcmp(argv[1], "client") == 0) {
        flags = client;
        nflags = (int)(sizeof client / sizeof client[0]);
    } else {
        return usage_error("echo_flood: unknown role '%s' (server or client)%s", argv[1], "");
    }
    p->role = argv[1];
    int seen[16] = {0};
    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i], *eq = strchr(arg, '='), *val = NULL;
        size_t len = eq && strncmp(arg, "--", 2) == 0 ? (size_t)(eq - arg) : strlen(arg);
        int k = -1;
        for (int j = 0; j < nflags; j++)
            if (strlen(flags[j].name) == len && strncmp(arg, flags[j].name, len) == 0) k = j;
        if (k < 0) return usage_error("unknown flag or argument '%s' for echo_flood %s", arg, p->role);
        if (seen[k]++) return usage_error("%s given twice%s", flags[k].name, "");
        if (eq && strncmp(arg, "--", 2) == 0) val = eq + 1;
        else if (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) val = argv[++i];
        else return usage_error("%s: missing value%s", flags[k].name, "");
        int rc = set_value(&flags[k], val);
        if (rc) return rc;
    }
    for (int j = 0; j < nflags; j++)
        if (flags[j].required && !seen[j]) return usage_error("%s is required for echo_flood %s", flags[j].name, p->role);
    if (strcmp(p->role, "client") == 0 && p->bytes_per_connection % SB_CHUNK_BYTES != 0)
    {
        char num[32];
        snprintf(num, sizeof num, "%ld", p->bytes_per_connection);
        return usage_error("--bytes-per-connection: %s is not a multiple of the 32768-byte chunk%s", num, "");
    }
    return 0;
}
