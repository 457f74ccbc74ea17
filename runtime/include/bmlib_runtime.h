/* bmlib-style device API on the simulated BM1684: the subset applications
 * use (BM1684.md §4), with libsophon's names and types, so that code written
 * for the real device compiles against this header unchanged.
 *
 * A handle is one simulated device. The backend is chosen by the environment
 * at bm_dev_request: TPU_BACKEND=sim (default, timed SystemC model) | func
 * (functional only) | device (the real chip: reported as absent here), and
 * TPU_HW_CONFIG=hw.json for the hardware parameters. Errors are returned as
 * bm_status_t and the reason is logged as one line on stderr. */
#ifndef TPU_BMLIB_RUNTIME_H
#define TPU_BMLIB_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  BM_SUCCESS = 0,
  BM_ERR_DEVNOTREADY = 1,
  BM_ERR_FAILURE = 2,
  BM_ERR_TIMEOUT = 3,
  BM_ERR_PARAM = 4,
  BM_ERR_NOMEM = 5,
  BM_ERR_DATA = 6,
  BM_ERR_BUSY = 7,
  BM_ERR_NOFEATURE = 8,
  BM_NOT_SUPPORTED = 9
} bm_status_t;

typedef enum { BM_MEM_TYPE_DEVICE = 0, BM_MEM_TYPE_HOST = 1, BM_MEM_TYPE_SYSTEM = 2 } bm_mem_type_t;

typedef union {
  struct {
    bm_mem_type_t mem_type : 3;
    unsigned int gmem_heapid : 3;
    unsigned int reserved : 26;
  } u;
  unsigned int rawflags;
} bm_mem_flags_t;

typedef struct bm_mem_desc {
  union {
    struct {
      unsigned long long device_addr;
      unsigned int reserved;
      int dmabuf_fd;
    } device;
    struct {
      void *system_addr;
      unsigned int reserved0;
      int reserved1;
    } system;
  } u;
  bm_mem_flags_t flags;
  unsigned int size;
} bm_mem_desc_t;
typedef struct bm_mem_desc bm_device_mem_t;

struct bm_context;
typedef struct bm_context *bm_handle_t;

bm_status_t bm_dev_request(bm_handle_t *handle, int devid);
void bm_dev_free(bm_handle_t handle);
bm_status_t bm_dev_getcount(int *count);

bm_status_t bm_malloc_device_byte(bm_handle_t handle, bm_device_mem_t *pmem, unsigned int size);
void bm_free_device(bm_handle_t handle, bm_device_mem_t mem);
bm_status_t bm_memcpy_s2d(bm_handle_t handle, bm_device_mem_t dst, void *src);
bm_status_t bm_memcpy_d2s(bm_handle_t handle, void *dst, bm_device_mem_t src);
bm_status_t bm_memcpy_s2d_partial(bm_handle_t handle, bm_device_mem_t dst, void *src, unsigned int size);
bm_status_t bm_memcpy_d2s_partial(bm_handle_t handle, void *dst, bm_device_mem_t src, unsigned int size);
/* Waits for the launches issued on the handle; returns the first failure. */
bm_status_t bm_thread_sync(bm_handle_t handle);

unsigned long long bm_mem_get_device_addr(bm_device_mem_t mem);
unsigned int bm_mem_get_device_size(bm_device_mem_t mem);
bm_device_mem_t bm_mem_from_device(unsigned long long device_addr, unsigned int len);

#ifdef __cplusplus
}
#endif

#endif
