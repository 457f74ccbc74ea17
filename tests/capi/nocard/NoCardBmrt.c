/* libbmrt.so beside the card-less libbmlib.so (NoCardBmlib.c): without a
 * handle from bm_dev_request nothing can be created, loaded or launched. */
#include "bmruntime_interface.h"

void *bmrt_create(bm_handle_t handle) {
  (void)handle;
  return NULL;
}

void bmrt_destroy(void *p) { (void)p; }

bool bmrt_load_bmodel_data(void *p, const void *data, size_t size) {
  (void)p, (void)data, (void)size;
  return false;
}

bool bmrt_launch_tensor_ex(void *p, const char *net, const bm_tensor_t in[], int in_num,
                           bm_tensor_t out[], int out_num, bool user_mem, bool user_stmode) {
  (void)p, (void)net, (void)in, (void)in_num, (void)out, (void)out_num, (void)user_mem, (void)user_stmode;
  return false;
}
