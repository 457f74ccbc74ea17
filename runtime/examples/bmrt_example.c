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

static void report(const char *what) { fprintf(stderr, "bmrt_example: error: %s\n", what); }

/* Runs the first net; every failure path returns through the cleanup below. */
static int run(bm_handle_t handle, void *bmrt, const char *model, const char *inPath,
               const char *outPath) {
  if (!bmrt_load_bmodel(bmrt, model)) return report("bmrt_load_bmodel failed"), 2;
  const char **names = NULL;
  bmrt_get_network_names(bmrt, &names);
  if (bmrt_get_network_number(bmrt) < 1 || !names) return free(names), report("the bmodel holds no net"), 2;
  const bm_net_info_t *info = bmrt_get_network_info(bmrt, names[0]);
  free(names);
  if (!info) return report("bmrt_get_network_info failed"), 2;
  bmrt_print_network_info(info);
  if (info->input_num > 16 || info->output_num > 16) return report("too many tensors"), 2;

  bm_tensor_t inputs[16], outputs[16];
  int allocated = 0, status = 2;
  void *host = NULL;
  FILE *in = fopen(inPath, "rb"), *out = NULL;
  if (!in) {
    report("cannot open the input file");
    goto done;
  }
  for (; allocated < info->input_num; ++allocated) {
    if (!bmrt_tensor(&inputs[allocated], bmrt, info->input_dtypes[allocated],
                     info->stages[0].input_shapes[allocated])) {
      report("bmrt_tensor failed");
      goto done;
    }
    size_t bytes = bmrt_tensor_bytesize(&inputs[allocated]);
    host = malloc(bytes);
    if (!host || fread(host, 1, bytes, in) != bytes) {
      report("input file too short");
      ++allocated;
      goto done;
    }
    if (bm_memcpy_s2d(handle, inputs[allocated].device_mem, host) != BM_SUCCESS) {
      report("bm_memcpy_s2d failed");
      ++allocated;
      goto done;
    }
    free(host);
    host = NULL;
  }
  if (!bmrt_launch_tensor(bmrt, info->name, inputs, info->input_num, outputs, info->output_num)) {
    report("bmrt_launch_tensor failed");
    goto done;
  }
  if (bm_thread_sync(handle) != BM_SUCCESS) {
    report("bm_thread_sync failed");
    goto done;
  }
  out = fopen(outPath, "wb");
  status = out ? 0 : 2;
  if (!out) report("cannot open the output file");
  for (int i = 0; i < info->output_num; ++i) {
    /* The output's shape after the launch (smaller than its device memory
       when a CPU layer's row count comes from the data): copy that much. */
    size_t bytes = bmrt_tensor_bytesize(&outputs[i]);
    host = status == 0 ? malloc(bytes ? bytes : 1) : NULL;
    if (status == 0 &&
        (!host || bm_memcpy_d2s_partial(handle, host, outputs[i].device_mem, (unsigned int)bytes) != BM_SUCCESS ||
                        fwrite(host, 1, bytes, out) != bytes)) {
      report("reading or writing an output failed");
      status = 2;
    }
    free(host);
    host = NULL;
    bm_free_device(handle, outputs[i].device_mem);
  }
  if (out && fclose(out) != 0) {
    report("write failed");
    status = 2;
  }
done:
  free(host);
  if (in) fclose(in);
  for (int i = 0; i < allocated; ++i) bm_free_device(handle, inputs[i].device_mem);
  return status;
}

int main(int argc, char **argv) {
  if (argc != 4) return report("usage: bmrt_example model.bmodel inputs.bin outputs.bin"), 2;
  bm_handle_t handle;
  if (bm_dev_request(&handle, 0) != BM_SUCCESS) return report("bm_dev_request failed"), 2;
  void *bmrt = bmrt_create(handle);
  int status = 2;
  if (bmrt)
    status = run(handle, bmrt, argv[1], argv[2], argv[3]);
  else
    report("bmrt_create failed");
  bmrt_destroy(bmrt);
  bm_dev_free(handle);
  return status;
}
