/* Call recording shared by the libsophon stubs: one line per call appended
 * to the file named by $TPU_STUB_LOG. */
#ifndef TPU_STUB_LOG_H
#define TPU_STUB_LOG_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static void stub_log(const char *fmt, ...) {
  const char *path = getenv("TPU_STUB_LOG");
  if (!path) return;
  FILE *f = fopen(path, "a");
  if (!f) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(f, fmt, ap);
  va_end(ap);
  fputc('\n', f);
  fclose(f);
}

#endif
