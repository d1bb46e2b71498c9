/* A recording double of the CUDA driver (libcuda.so.1) for machines without a GPU.

   Built by tests/test_cuda.py (cc -shared -fPIC -Wl,-soname,libcuda.so.1) and found through
   LD_LIBRARY_PATH: upstream MLIR's libmlir_cuda_runtime.so links it, and the double of
   cuda.bindings.driver (cuda/bindings/driver.py beside this file) calls it, so both sides of
   the cuda target share one device. Memory is real (calloc: managed memory the host can
   read), modules keep their PTX, kernels do not run. Every call that matters is appended
   to $CUDA_DOUBLE_LOG, one line each. $CUDA_DOUBLE_FAIL="cuLaunchKernel=CUDA_ERROR_ILLEGAL_ADDRESS"
   makes the first launch fail with that error, which then sticks to the context (every
   synchronization returns it) until cuDevicePrimaryCtxReset; $CUDA_DOUBLE_DEVICES sets the
   device count (default 1). */

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream, *CUevent;
typedef uintptr_t CUdeviceptr;

static const struct { int code; const char *name; } NAMES[] = {
    {0, "CUDA_SUCCESS"}, {1, "CUDA_ERROR_INVALID_VALUE"}, {100, "CUDA_ERROR_NO_DEVICE"},
    {101, "CUDA_ERROR_INVALID_DEVICE"}, {201, "CUDA_ERROR_INVALID_CONTEXT"}, {218, "CUDA_ERROR_INVALID_PTX"},
    {400, "CUDA_ERROR_INVALID_HANDLE"}, {700, "CUDA_ERROR_ILLEGAL_ADDRESS"}, {719, "CUDA_ERROR_LAUNCH_FAILED"},
    {801, "CUDA_ERROR_NOT_SUPPORTED"}};

static int sticky;          /* the error a failed launch left on the context */
static int launch_failures; /* launches still to fail */
static int configured;
static int context_token = 1;
static int module_count;

static void say(const char *format, ...) {
  const char *path = getenv("CUDA_DOUBLE_LOG");
  if (!path) return;
  FILE *log = fopen(path, "a");
  if (!log) return;
  va_list args;
  va_start(args, format);
  vfprintf(log, format, args);
  va_end(args);
  fputc('\n', log);
  fclose(log);
}

static int code_of(const char *name) {
  for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
    if (strcmp(NAMES[i].name, name) == 0) return NAMES[i].code;
  return 999;
}

static int fail_code(const char *call) {
  const char *spec = getenv("CUDA_DOUBLE_FAIL");
  size_t n = strlen(call);
  if (!spec || strncmp(spec, call, n) != 0 || spec[n] != '=') return 0;
  return code_of(spec + n + 1);
}

static void configure(void) {
  if (configured) return;
  configured = 1;
  launch_failures = fail_code("cuLaunchKernel") ? 1 : 0;
}

CUresult cuGetErrorName(CUresult error, const char **name) {
  for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
    if (NAMES[i].code == error) { *name = NAMES[i].name; return 0; }
  *name = NULL;
  return 1;
}

CUresult cuInit(unsigned flags) { (void)flags; configure(); return 0; }

CUresult cuDeviceGetCount(int *count) {
  const char *text = getenv("CUDA_DOUBLE_DEVICES");
  *count = text ? atoi(text) : 1;
  return 0;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  int count;
  cuDeviceGetCount(&count);
  if (ordinal >= count) return 101;
  *device = ordinal;
  return 0;
}

CUresult cuDeviceGetName(char *name, int length, CUdevice device) {
  snprintf(name, (size_t)length, "CUDA double %d", device);
  return 0;
}

CUresult cuDeviceGetAttribute(int *value, int attribute, CUdevice device) {
  (void)device;
  *value = attribute == 75 ? 9 : attribute == 76 ? 0 : 1; /* compute capability 9.0 */
  return 0;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device) {
  *context = &context_token;
  say("retain %d", device);
  return 0;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) { say("release %d", device); return 0; }
CUresult cuDevicePrimaryCtxRelease(CUdevice device) { return cuDevicePrimaryCtxRelease_v2(device); }

CUresult cuDevicePrimaryCtxReset_v2(CUdevice device) {
  sticky = 0;
  say("reset %d", device);
  return 0;
}
CUresult cuDevicePrimaryCtxReset(CUdevice device) { return cuDevicePrimaryCtxReset_v2(device); }

CUresult cuCtxSetCurrent(CUcontext context) { (void)context; return 0; }
CUresult cuCtxPushCurrent_v2(CUcontext context) { (void)context; return 0; }
CUresult cuCtxPopCurrent_v2(CUcontext *context) { if (context) *context = &context_token; return 0; }
CUresult cuCtxSynchronize(void) { return sticky; }

static CUresult allocate(CUdeviceptr *pointer, size_t size, const char *what) {
  *pointer = (CUdeviceptr)calloc(1, size ? size : 1);
  say("%s %p %zu", what, (void *)*pointer, size);
  return 0;
}

CUresult cuMemAllocManaged(CUdeviceptr *pointer, size_t size, unsigned flags) {
  (void)flags;
  return allocate(pointer, size, "alloc_managed");
}
CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t size) { return allocate(pointer, size, "alloc_device"); }

CUresult cuMemFree_v2(CUdeviceptr pointer) {
  say("free %p", (void *)pointer);
  free((void *)pointer);
  return 0;
}

CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t size) {
  memmove((void *)dst, (void *)src, size);
  return 0;
}
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t size, CUstream stream) {
  (void)stream;
  return cuMemcpy(dst, src, size);
}

CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned value, size_t count) {
  for (size_t i = 0; i < count; i++) ((unsigned *)dst)[i] = value;
  return 0;
}
CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned value, size_t count, CUstream stream) {
  (void)stream;
  return cuMemsetD32_v2(dst, value, count);
}
CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t count, CUstream stream) {
  (void)stream;
  for (size_t i = 0; i < count; i++) ((unsigned short *)dst)[i] = value;
  return 0;
}

CUresult cuMemHostRegister_v2(void *pointer, size_t size, unsigned flags) {
  (void)flags;
  say("host_register %p %zu", pointer, size);
  return 0;
}
CUresult cuMemHostUnregister(void *pointer) { say("host_unregister %p", pointer); return 0; }

static CUresult load(CUmodule *module, const void *image) {
  const char *ptx = (const char *)image;
  const char *entry = strstr(ptx, ".entry ");
  char name[128] = "?";
  if (entry) sscanf(entry + 7, "%127[A-Za-z0-9_$]", name);
  *module = (CUmodule)(uintptr_t)(1000 + ++module_count);
  say("load %p %s", *module, name);
  return 0;
}
CUresult cuModuleLoadData(CUmodule *module, const void *image) { return load(module, image); }
CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned n, void *options, void **values) {
  (void)n; (void)options; (void)values;
  return load(module, image);
}
CUresult cuModuleUnload(CUmodule module) { say("unload %p", module); return 0; }

CUresult cuModuleGetFunction(CUfunction *function, CUmodule module, const char *name) {
  *function = (CUfunction)((uintptr_t)module * 10);
  say("function %p %s", module, name);
  return 0;
}

CUresult cuLaunchKernel(CUfunction function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shared, CUstream stream, void **params, void **extra) {
  (void)stream; (void)params; (void)extra;
  if (launch_failures) {
    launch_failures--;
    sticky = fail_code("cuLaunchKernel");
    say("launch_failed %p", function);
    return sticky;
  }
  say("launch %p %u %u %u %u %u %u %u", function, gx, gy, gz, bx, by, bz, shared);
  return 0;
}
CUresult cuLaunchKernelEx(const void *config, CUfunction function, void **params, void **extra) {
  (void)config; (void)function; (void)params; (void)extra;
  return 801;
}
CUresult cuFuncSetAttribute(CUfunction function, int attribute, int value) {
  (void)function; (void)attribute; (void)value;
  return 0;
}

static int stream_token;
CUresult cuStreamCreate(CUstream *stream, unsigned flags) { (void)flags; *stream = &stream_token; return 0; }
CUresult cuStreamSynchronize(CUstream stream) { (void)stream; return sticky; }
CUresult cuStreamDestroy_v2(CUstream stream) { (void)stream; return 0; }
CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned flags) {
  (void)stream; (void)event; (void)flags;
  return 0;
}
static int event_token;
CUresult cuEventCreate(CUevent *event, unsigned flags) { (void)flags; *event = &event_token; return 0; }
CUresult cuEventDestroy_v2(CUevent event) { (void)event; return 0; }
CUresult cuEventRecord(CUevent event, CUstream stream) { (void)event; (void)stream; return 0; }
CUresult cuEventSynchronize(CUevent event) { (void)event; return sticky; }
CUresult cuTensorMapEncodeTiled(void) { return 801; }
