// A thin shim over libgpiod that compiles against the v1 API (Debian bookworm, libgpiod 1.6)
// and the v2 API (Raspberry Pi OS trixie, libgpiod 2.x). Only the v1 header defines
// GPIOD_LINE_BULK_MAX_LINES, which tells the two apart.
//
// Checking the v2 branch on a machine that has only libgpiod v1 installed: the PyPI sdist of
// the `gpiod` Python bindings bundles libgpiod v2's sources and gpiod.h. Nothing of it is kept
// in the repo.
//   cd /tmp && pip download --no-deps --no-binary :all: gpiod && tar xzf gpiod-*.tar.gz
//   v2 branch (checked with gpiod 2.5.0):
//   gcc -fsyntax-only -Wall -Wextra -std=c11 -I Sources/CTernGPIO/include -I /tmp/gpiod-2.5.0/include Sources/CTernGPIO/shim.c
//   v1 branch (system libgpiod-dev 1.6):
//   gcc -fsyntax-only -Wall -Wextra -std=c11 -I Sources/CTernGPIO/include Sources/CTernGPIO/shim.c
#include "ctern_gpio.h"

#include <errno.h>
#include <gpiod.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void copy_holder(char *holder, size_t len, const char *name) {
    if (holder == NULL || len == 0) return;
    snprintf(holder, len, "%s", name ? name : "");
}

#ifdef GPIOD_LINE_BULK_MAX_LINES
// ---------------------------------------------------------------- libgpiod v1
struct tern_gpio_line {
    struct gpiod_chip *chip;
    struct gpiod_line *line;
};

tern_gpio_line *tern_gpio_open(const char *chip_name, int offset, const char *line_name,
                               int active_low, int initial_value, const char *consumer,
                               int *stage, char *holder, size_t holder_len) {
    int ignored_stage;
    if (stage == NULL) stage = &ignored_stage;
    copy_holder(holder, holder_len, "");
    if (chip_name == NULL) { errno = EINVAL; *stage = TERN_GPIO_CHIP; return NULL; }
    if (offset < 0 && line_name == NULL) { errno = EINVAL; *stage = TERN_GPIO_LINE; return NULL; }
    if (consumer == NULL) consumer = "tern";
    struct gpiod_chip *chip = gpiod_chip_open_lookup(chip_name);
    if (chip == NULL) {
        if (errno == 0) errno = ENOENT;
        *stage = TERN_GPIO_CHIP;
        return NULL;
    }
    struct gpiod_line *line = offset >= 0 ? gpiod_chip_get_line(chip, (unsigned)offset)
                                          : gpiod_chip_find_line(chip, line_name);
    if (line == NULL) {
        int saved = errno ? errno : ENOENT;
        gpiod_chip_close(chip);
        errno = saved;
        *stage = TERN_GPIO_LINE;
        return NULL;
    }
    int flags = active_low ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0;
    if (gpiod_line_request_output_flags(line, consumer, flags, initial_value) != 0) {
        int saved = errno;
        gpiod_line_update(line);
        copy_holder(holder, holder_len, gpiod_line_consumer(line));
        gpiod_chip_close(chip);
        errno = saved;
        *stage = TERN_GPIO_REQUEST;
        return NULL;
    }
    tern_gpio_line *result = calloc(1, sizeof *result);
    if (result == NULL) {
        gpiod_line_release(line);
        gpiod_chip_close(chip);
        errno = ENOMEM;
        *stage = TERN_GPIO_REQUEST;
        return NULL;
    }
    result->chip = chip;
    result->line = line;
    *stage = TERN_GPIO_OK;
    return result;
}

int tern_gpio_set(tern_gpio_line *l, int value) {
    return gpiod_line_set_value(l->line, value ? 1 : 0);
}

void tern_gpio_close(tern_gpio_line *l) {
    if (l == NULL) return;
    gpiod_line_release(l->line);
    gpiod_chip_close(l->chip);
    free(l);
}

const char *tern_gpio_api(void) { return "v1"; }


int tern_gpio_probe(const char *chip_name, int offset, const char *line_name, char *holder, size_t holder_len) {
    copy_holder(holder, holder_len, "");
    if (chip_name == NULL || (offset < 0 && line_name == NULL)) { errno = EINVAL; return -TERN_GPIO_CHIP; }
    struct gpiod_chip *chip = gpiod_chip_open_lookup(chip_name);
    if (chip == NULL) { if (errno == 0) errno = ENOENT; return -TERN_GPIO_CHIP; }
    struct gpiod_line *line = offset >= 0 ? gpiod_chip_get_line(chip, (unsigned)offset) : gpiod_chip_find_line(chip, line_name);
    if (line == NULL) { int saved = errno ? errno : ENOENT; gpiod_chip_close(chip); errno = saved; return -TERN_GPIO_LINE; }
    int used = gpiod_line_is_used(line);
    if (used) copy_holder(holder, holder_len, gpiod_line_consumer(line));
    gpiod_chip_close(chip);
    return used ? 1 : 0;
}

#else
// ---------------------------------------------------------------- libgpiod v2
#include <dirent.h>
#include <ctype.h>

struct tern_gpio_line {
    struct gpiod_chip *chip;
    struct gpiod_line_request *request;
    unsigned int offset;
};

static int all_digits(const char *s) {
    if (*s == '\0') return 0;
    for (; *s; s++) if (!isdigit((unsigned char)*s)) return 0;
    return 1;
}

// v2 opens chips by path only; accept a path, "gpiochipN", "N" or a chip label as v1's lookup did.
static struct gpiod_chip *open_chip(const char *name) {
    char path[512];
    if (name[0] == '/') return gpiod_chip_open(name);
    if (all_digits(name)) snprintf(path, sizeof path, "/dev/gpiochip%s", name);
    else snprintf(path, sizeof path, "/dev/%s", name);
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (chip != NULL || errno != ENOENT) return chip;
    DIR *dir = opendir("/dev");
    if (dir == NULL) { errno = ENOENT; return NULL; }
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        if (strncmp(entry->d_name, "gpiochip", 8) != 0) continue;
        snprintf(path, sizeof path, "/dev/%s", entry->d_name);
        struct gpiod_chip *candidate = gpiod_chip_open(path);
        if (candidate == NULL) continue;
        struct gpiod_chip_info *info = gpiod_chip_get_info(candidate);
        int match = info != NULL && strcmp(gpiod_chip_info_get_label(info), name) == 0;
        if (info != NULL) gpiod_chip_info_free(info);
        if (match) { closedir(dir); return candidate; }
        gpiod_chip_close(candidate);
    }
    closedir(dir);
    errno = ENOENT;
    return NULL;
}

tern_gpio_line *tern_gpio_open(const char *chip_name, int offset, const char *line_name,
                               int active_low, int initial_value, const char *consumer,
                               int *stage, char *holder, size_t holder_len) {
    int ignored_stage;
    if (stage == NULL) stage = &ignored_stage;
    copy_holder(holder, holder_len, "");
    if (chip_name == NULL) { errno = EINVAL; *stage = TERN_GPIO_CHIP; return NULL; }
    if (offset < 0 && line_name == NULL) { errno = EINVAL; *stage = TERN_GPIO_LINE; return NULL; }
    if (consumer == NULL) consumer = "tern";
    struct gpiod_chip *chip = open_chip(chip_name);
    if (chip == NULL) { *stage = TERN_GPIO_CHIP; return NULL; }
    int resolved = offset;
    if (resolved < 0) resolved = gpiod_chip_get_line_offset_from_name(chip, line_name);
    struct gpiod_chip_info *chip_info = gpiod_chip_get_info(chip);
    size_t num_lines = chip_info ? gpiod_chip_info_get_num_lines(chip_info) : 0;
    if (chip_info) gpiod_chip_info_free(chip_info);
    if (resolved < 0 || (size_t)resolved >= num_lines) {
        gpiod_chip_close(chip);
        errno = ENOENT;
        *stage = TERN_GPIO_LINE;
        return NULL;
    }
    unsigned int off = (unsigned int)resolved;
    struct gpiod_line_settings *settings = gpiod_line_settings_new();
    struct gpiod_line_config *line_cfg = gpiod_line_config_new();
    struct gpiod_request_config *req_cfg = gpiod_request_config_new();
    struct gpiod_line_request *request = NULL;
    if (settings && line_cfg && req_cfg) {
        gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_OUTPUT);
        gpiod_line_settings_set_active_low(settings, active_low != 0);
        gpiod_line_settings_set_output_value(
            settings, initial_value ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE);
        gpiod_request_config_set_consumer(req_cfg, consumer);
        if (gpiod_line_config_add_line_settings(line_cfg, &off, 1, settings) == 0)
            request = gpiod_chip_request_lines(chip, req_cfg, line_cfg);
    } else {
        errno = ENOMEM;
    }
    int saved = errno;
    if (settings) gpiod_line_settings_free(settings);
    if (line_cfg) gpiod_line_config_free(line_cfg);
    if (req_cfg) gpiod_request_config_free(req_cfg);
    if (request == NULL) {
        struct gpiod_line_info *info = gpiod_chip_get_line_info(chip, off);
        if (info != NULL) {
            copy_holder(holder, holder_len, gpiod_line_info_get_consumer(info));
            gpiod_line_info_free(info);
        }
        gpiod_chip_close(chip);
        errno = saved;
        *stage = TERN_GPIO_REQUEST;
        return NULL;
    }
    tern_gpio_line *result = calloc(1, sizeof *result);
    if (result == NULL) {
        gpiod_line_request_release(request);
        gpiod_chip_close(chip);
        errno = ENOMEM;
        *stage = TERN_GPIO_REQUEST;
        return NULL;
    }
    result->chip = chip;
    result->request = request;
    result->offset = off;
    *stage = TERN_GPIO_OK;
    return result;
}

int tern_gpio_set(tern_gpio_line *l, int value) {
    return gpiod_line_request_set_value(
        l->request, l->offset, value ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE);
}

void tern_gpio_close(tern_gpio_line *l) {
    if (l == NULL) return;
    gpiod_line_request_release(l->request);
    gpiod_chip_close(l->chip);
    free(l);
}

const char *tern_gpio_api(void) { return "v2"; }

int tern_gpio_probe(const char *chip_name, int offset, const char *line_name, char *holder, size_t holder_len) {
    copy_holder(holder, holder_len, "");
    if (chip_name == NULL || (offset < 0 && line_name == NULL)) { errno = EINVAL; return -TERN_GPIO_CHIP; }
    struct gpiod_chip *chip = open_chip(chip_name);
    if (chip == NULL) return -TERN_GPIO_CHIP;
    int resolved = offset >= 0 ? offset : gpiod_chip_get_line_offset_from_name(chip, line_name);
    struct gpiod_line_info *info = resolved >= 0 ? gpiod_chip_get_line_info(chip, (unsigned int)resolved) : NULL;
    if (info == NULL) { gpiod_chip_close(chip); errno = ENOENT; return -TERN_GPIO_LINE; }
    int used = gpiod_line_info_is_used(info);
    if (used) copy_holder(holder, holder_len, gpiod_line_info_get_consumer(info));
    gpiod_line_info_free(info);
    gpiod_chip_close(chip);
    return used ? 1 : 0;
}

#endif

const char *tern_gpio_library_version(void) {
    static char text[64];
#ifdef GPIOD_LINE_BULK_MAX_LINES
    snprintf(text, sizeof text, "libgpiod %s (v1 API)", gpiod_version_string());
#else
    snprintf(text, sizeof text, "libgpiod %s (v2 API)", gpiod_api_version());
#endif
    return text;
}
