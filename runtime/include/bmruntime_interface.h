/* BMRuntime-style C API on the simulated BM1684 (BM1684.md §4): the same
 * function names and types as libsophon's bmruntime_interface.h for the subset
 * applications use. Functions returning bool log the reason of a failure as
 * one line on stderr. */
#ifndef TPU_BMRUNTIME_INTERFACE_H
#define TPU_BMRUNTIME_INTERFACE_H

#include "bmlib_runtime.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum bm_data_type_e {
  BM_FLOAT32 = 0,
  BM_FLOAT16 = 1,
  BM_INT8 = 2,
  BM_UINT8 = 3,
  BM_INT16 = 4,
  BM_UINT16 = 5,
  BM_INT32 = 6,
  BM_UINT32 = 7
} bm_data_type_t;

typedef enum bm_store_mode_e { BM_STORE_1N = 0, BM_STORE_2N = 1, BM_STORE_4N = 2 } bm_store_mode_t;

#define BM_MAX_DIMS_NUM 8
typedef struct bm_shape_s {
  int num_dims;
  int dims[BM_MAX_DIMS_NUM];
} bm_shape_t;

typedef struct bm_tensor_s {
  bm_data_type_t dtype;
  bm_shape_t shape;
  bm_device_mem_t device_mem;
  bm_store_mode_t st_mode;
} bm_tensor_t;

typedef struct bm_stage_info_s {
  bm_shape_t *input_shapes;
  bm_shape_t *output_shapes;
  bm_device_mem_t *input_mems;
  bm_device_mem_t *output_mems;
} bm_stage_info_t;

typedef struct bm_net_info_s {
  const char *name;
  bool is_dynamic;
  int input_num;
  char const **input_names;
  bm_data_type_t *input_dtypes;
  float *input_scales;
  int output_num;
  char const **output_names;
  bm_data_type_t *output_dtypes;
  float *output_scales;
  int stage_num;
  bm_stage_info_t *stages;
  size_t *max_input_bytes;
  size_t *max_output_bytes;
  int *input_zero_point;
  int *output_zero_point;
  int *input_loc_devices;
  int *output_loc_devices;
} bm_net_info_t;

void *bmrt_create(bm_handle_t bm_handle);
void bmrt_destroy(void *p_bmrt);
bool bmrt_load_bmodel(void *p_bmrt, const char *bmodel_path);
bool bmrt_load_bmodel_data(void *p_bmrt, const void *bmodel_data, size_t size);

int bmrt_get_network_number(void *p_bmrt);
/* *network_names is allocated with malloc: the caller frees it (not the names). */
void bmrt_get_network_names(void *p_bmrt, const char ***network_names);
/* Valid until bmrt_destroy; NULL if there is no such net. */
const bm_net_info_t *bmrt_get_network_info(void *p_bmrt, const char *net_name);
void bmrt_print_network_info(const bm_net_info_t *net_info);

/* Inputs are device tensors in the net's data type (any store mode: 1N is
 * converted); outputs are allocated by the runtime in device memory (1N, the
 * net's data type) and freed by the caller with bm_free_device. The launch
 * has finished when bm_thread_sync returns. */
bool bmrt_launch_tensor(void *p_bmrt, const char *net_name, const bm_tensor_t input_tensors[],
                        int input_num, bm_tensor_t output_tensors[], int output_num);
/* user_mem: outputs are already allocated by the caller; user_stmode: outputs
 * keep the store mode given in output_tensors instead of 1N. */
bool bmrt_launch_tensor_ex(void *p_bmrt, const char *net_name, const bm_tensor_t input_tensors[],
                           int input_num, bm_tensor_t output_tensors[], int output_num,
                           bool user_mem, bool user_stmode);

/* Allocates device memory for a 1N tensor of this type and shape. */
bool bmrt_tensor(bm_tensor_t *tensor, void *p_bmrt, bm_data_type_t dtype, bm_shape_t shape);
uint64_t bmrt_shape_count(const bm_shape_t *shape);
size_t bmrt_tensor_bytesize(const bm_tensor_t *tensor);
size_t bmrt_tensor_device_size(const bm_tensor_t *tensor);
int bmrt_data_type_size(bm_data_type_t dtype);

#ifdef __cplusplus
}
#endif

#endif
