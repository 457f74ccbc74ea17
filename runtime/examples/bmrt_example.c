/* A BMRuntime application as written for the real BM1684, in plain C: it
 * only uses the bmlib / bmruntime API, so the same source runs on the
 * simulator (TPU_BACKEND=sim or func) and on the device.
 *
 *   bmrt_example model.bmodel inputs.bin outputs.bin
 *
 * Runs the model's first net. inputs.bin holds every input's raw data in the
 * net's data types (1N, C order), one after the other; outputs.bin receives
 * every output the same way. Prints the net's description. Exit 0 on
 * success, 2 on any failure (the API logs the reason). */
#include <bmruntime_interface.h>

#include <stdio.h>
#include <stdlib.h>

static int fail(const char *what) {
  fprintf(stderr, "bmrt_example: error: %s\n", what);
  return 2;
}

int main(int argc, char **argv) {
  if (argc != 4) return fail("usage: bmrt_example model.bmodel inputs.bin outputs.bin");
  bm_handle_t handle;
  if (bm_dev_request(&handle, 0) != BM_SUCCESS) return fail("bm_dev_request failed");
  void *bmrt = bmrt_create(handle);
  if (!bmrt) return fail("bmrt_create failed");
  if (!bmrt_load_bmodel(bmrt, argv[1])) return fail("bmrt_load_bmodel failed");

  const char **names = NULL;
  bmrt_get_network_names(bmrt, &names);
  if (bmrt_get_network_number(bmrt) < 1 || !names) return fail("the bmodel holds no net");
  const bm_net_info_t *info = bmrt_get_network_info(bmrt, names[0]);
  free(names);
  if (!info) return fail("bmrt_get_network_info failed");
  bmrt_print_network_info(info);

  FILE *in = fopen(argv[2], "rb");
  if (!in) return fail("cannot open the input file");
  bm_tensor_t inputs[16], outputs[16];
  if (info->input_num > 16 || info->output_num > 16) return fail("too many tensors");
  for (int i = 0; i < info->input_num; ++i) {
    if (!bmrt_tensor(&inputs[i], bmrt, info->input_dtypes[i], info->stages[0].input_shapes[i]))
      return fail("bmrt_tensor failed");
    size_t bytes = bmrt_tensor_bytesize(&inputs[i]);
    void *host = malloc(bytes);
    if (!host || fread(host, 1, bytes, in) != bytes) return fail("input file too short");
    if (bm_memcpy_s2d(handle, inputs[i].device_mem, host) != BM_SUCCESS)
      return fail("bm_memcpy_s2d failed");
    free(host);
  }
  fclose(in);

  if (!bmrt_launch_tensor(bmrt, info->name, inputs, info->input_num, outputs, info->output_num))
    return fail("bmrt_launch_tensor failed");
  if (bm_thread_sync(handle) != BM_SUCCESS) return fail("bm_thread_sync failed");

  FILE *out = fopen(argv[3], "wb");
  if (!out) return fail("cannot open the output file");
  for (int i = 0; i < info->output_num; ++i) {
    size_t bytes = bmrt_tensor_bytesize(&outputs[i]);
    void *host = malloc(bytes);
    if (!host) return fail("out of host memory");
    if (bm_memcpy_d2s(handle, host, outputs[i].device_mem) != BM_SUCCESS)
      return fail("bm_memcpy_d2s failed");
    if (fwrite(host, 1, bytes, out) != bytes) return fail("write failed");
    free(host);
    bm_free_device(handle, outputs[i].device_mem);
  }
  if (fclose(out) != 0) return fail("write failed");
  for (int i = 0; i < info->input_num; ++i) bm_free_device(handle, inputs[i].device_mem);
  bmrt_destroy(bmrt);
  bm_dev_free(handle);
  return 0;
}
