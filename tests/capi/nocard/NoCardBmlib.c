/* libbmlib.so as installed on a host without a BM1684 card: libsophon is
 * there, but the driver finds no device, so bm_dev_request fails (as the
 * real one does, with BM_ERR_DEVNOTREADY) and nothing else can be called on
 * a handle. The other entry points exist for the dynamic linker only. */
#include "bmlib_runtime.h"

bm_status_t bm_dev_request(bm_handle_t *handle, int devid) {
  (void)devid;
  if (handle) *handle = NULL;
  return BM_ERR_DEVNOTREADY;
}

void bm_dev_free(bm_handle_t handle) { (void)handle; }

bm_status_t bm_malloc_device_byte(bm_handle_t handle, bm_device_mem_t *pmem, unsigned int size) {
  (void)handle, (void)pmem, (void)size;
  return BM_ERR_DEVNOTREADY;
}

void bm_free_device(bm_handle_t handle, bm_device_mem_t mem) { (void)handle, (void)mem; }

bm_status_t bm_memcpy_s2d(bm_handle_t handle, bm_device_mem_t dst, void *src) {
  (void)handle, (void)dst, (void)src;
  return BM_ERR_DEVNOTREADY;
}

bm_status_t bm_memcpy_d2s(bm_handle_t handle, void *dst, bm_device_mem_t src) {
  (void)handle, (void)dst, (void)src;
  return BM_ERR_DEVNOTREADY;
}

bm_status_t bm_thread_sync(bm_handle_t handle) {
  (void)handle;
  return BM_ERR_DEVNOTREADY;
}
