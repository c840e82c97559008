#ifndef CTERN_GPIO_H
#define CTERN_GPIO_H

#include <stddef.h>

/// One requested output line. Opaque; owned by the caller until tern_gpio_close.
typedef struct tern_gpio_line tern_gpio_line;

/// Where tern_gpio_open failed.
enum tern_gpio_stage {
    TERN_GPIO_OK = 0,
    TERN_GPIO_CHIP = 1,     ///< opening the chip (errno: ENOENT no such chip, EACCES permission)
    TERN_GPIO_LINE = 2,     ///< finding the line (no such offset or name)
    TERN_GPIO_REQUEST = 3,  ///< requesting the line (EBUSY: `holder` names the consumer holding it)
};

/// Opens `chip` (a name such as "gpiochip0", a path, a number, or a label) and requests one
/// line as an output at `initial_value` (logical, honouring `active_low`). The line is found by
/// `offset` when it is >= 0, else by `line_name`. On failure returns NULL, sets errno and
/// `*stage`, and writes the current consumer of a busy line into `holder`.
tern_gpio_line *tern_gpio_open(const char *chip, int offset, const char *line_name,
                               int active_low, int initial_value, const char *consumer,
                               int *stage, char *holder, size_t holder_len);

/// Sets the logical value (1 = active). Returns 0, or -1 with errno set.
int tern_gpio_set(tern_gpio_line *line, int value);

/// Looks at one line without requesting it: 0 free, 1 in use (its consumer in `holder`), or
/// -TERN_GPIO_CHIP / -TERN_GPIO_LINE with errno set when the chip or the line is not there.
int tern_gpio_probe(const char *chip, int offset, const char *line_name, char *holder, size_t holder_len);

/// The libgpiod in use and which API this shim was built for, e.g. "libgpiod 1.6.3 (v1 API)".
const char *tern_gpio_library_version(void);

/// Releases the line and closes the chip.
void tern_gpio_close(tern_gpio_line *line);

/// "v1" or "v2": the libgpiod API this shim was compiled against.
const char *tern_gpio_api(void);

#endif
