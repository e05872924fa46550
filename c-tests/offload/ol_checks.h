// Shared by the ol* test programs (c-tests/offload, c-tests/mpi): counted
// checks that print FAIL with the line and exit 1, reading a program image,
// and telling a device's platform.
#ifndef OL_CHECKS_H
#define OL_CHECKS_H
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <offload/OffloadAPI.h>

static int checks;
#define FAIL(...) do { printf("FAIL line %d: ", __LINE__); printf(__VA_ARGS__); printf("\n"); exit(1); } while (0)
#define OK(call) do { ol_result_t r_ = (call); if (r_) FAIL("%s -> %d %s", #call, r_->Code, r_->Details); ++checks; } while (0)
#define ERR(call, code) do { ol_result_t r_ = (call); if (!r_ || r_->Code != (code)) FAIL("%s -> %s, expected %d", #call, r_ ? r_->Details : "success", (int)(code)); ++checks; } while (0)
#define BAD(call) do { ol_result_t r_ = (call); if (!r_) FAIL("%s succeeded", #call); ++checks; } while (0)
#define TRUE(c) do { if (!(c)) FAIL("%s", #c); ++checks; } while (0)

// The whole file at `path`, its length in *size.
static inline void *slurp(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) FAIL("cannot open %s", path);
  fseek(f, 0, SEEK_END); *size = (size_t)ftell(f); fseek(f, 0, SEEK_SET);
  void *p = malloc(*size);
  if (fread(p, 1, *size, f) != *size) FAIL("cannot read %s", path);
  fclose(f);
  return p;
}

// Whether `d`'s platform is named `name` ("remote" for MPI servers' devices).
static inline bool on_platform(ol_device_handle_t d, const char *name) {
  ol_platform_handle_t p;
  char got[64] = "";
  if (!olGetDeviceInfo(d, OL_DEVICE_INFO_PLATFORM, sizeof p, &p)) olGetPlatformInfo(p, OL_PLATFORM_INFO_NAME, sizeof got, got);
  return !strcmp(got, name);
}
#endif
