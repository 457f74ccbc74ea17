/* A stand-in for libsophon's libbmrt.so (same exported symbols) that
 * records its calls and their arguments ($TPU_STUB_LOG). Its "net" writes,
 * into every output, each input's sum of bytes followed by the byte pattern
 * i & 0xff, so a test can see the data travel both ways. */
#include "bmruntime_interface.h"

#include "StubLog.h"

#include <string.h>

static const char *type_name(bm_data_type_t t) {
  static const char *names[] = {"f32", "f16", "i8", "u8", "i16", "u16", "i32", "u32"};
  return (unsigned)t < 8 ? names[t] : "?";
}

static void shape_text(const bm_shape_t *s, char *out, size_t n) {
  size_t used = 0;
  out[0] = 0;
  for (int i = 0; i < s->num_dims && used < n; ++i)
    used += (size_t)snprintf(out + used, n - used, i ? "x%d" : "%d", s->dims[i]);
}

void *bmrt_create(bm_handle_t handle) {
  stub_log("bmrt_create");
  return handle;
}

void bmrt_destroy(void *p) {
  (void)p;
  stub_log("bmrt_destroy");
}

bool bmrt_load_bmodel_data(void *p, const void *data, size_t size) {
  (void)p;
  const unsigned char *b = (const unsigned char *)data;
  stub_log("bmrt_load_bmodel_data size=%zu magic=%02x%02x%02x%02x", size, b[3], b[2], b[1], b[0]);
  return true;
}

bool bmrt_launch_tensor_ex(void *p, const char *net, const bm_tensor_t in[], int in_num,
                           bm_tensor_t out[], int out_num, bool user_mem, bool user_stmode) {
  (void)p;
  char shape[128];
  stub_log("bmrt_launch_tensor_ex net=%s inputs=%d outputs=%d user_mem=%d user_stmode=%d", net,
           in_num, out_num, user_mem, user_stmode);
  unsigned sum = 0;
  for (int i = 0; i < in_num; ++i) {
    shape_text(&in[i].shape, shape, sizeof shape);
    stub_log("  in %d %s %s %dN %u bytes", i, type_name(in[i].dtype), shape, 1 << in[i].st_mode,
             in[i].device_mem.size);
    const unsigned char *d = (const unsigned char *)(uintptr_t)in[i].device_mem.u.device.device_addr;
    for (unsigned k = 0; k < in[i].device_mem.size; ++k) sum += d[k];
  }
  for (int i = 0; i < out_num; ++i) {
    shape_text(&out[i].shape, shape, sizeof shape);
    stub_log("  out %d %s %s %dN %u bytes", i, type_name(out[i].dtype), shape, 1 << out[i].st_mode,
             out[i].device_mem.size);
    unsigned char *d = (unsigned char *)(uintptr_t)out[i].device_mem.u.device.device_addr;
    for (unsigned k = 0; k < out[i].device_mem.size; ++k) d[k] = (unsigned char)k;
    if (out[i].device_mem.size >= 4) memcpy(d, &sum, 4);
  }
  return true;
}
