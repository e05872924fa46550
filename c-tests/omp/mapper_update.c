// User-defined mappers with target update and arrays of structs
// (abi-reference 6.10, 6.12): update to/from of a struct runs its mapper (so
// the pointee moves too, and the pointer member keeps its host value through
// the shadow pointer), update of a section of an array of such structs, a
// named mapper used for update, and enter/exit data of an array section
// through the mapper with from on exit.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  int len;
  int *data;
  int tag;
} Rec;
#pragma omp declare mapper(Rec r) map(r, r.data[0:r.len])
#pragma omp declare mapper(tag_only : Rec r) map(r.tag)

static void init(Rec *r, int len, int base) {
  r->len = len;
  r->tag = base;
  r->data = malloc(len * sizeof(int));
  for (int i = 0; i < len; i++)
    r->data[i] = base + i;
}

int main(void) {
  int dev = omp_get_default_device();
  Rec r;
  init(&r, 4, 10);
  int *orig = r.data;
#pragma omp target enter data map(to : r)
  int on_host = -1;
#pragma omp target map(from : on_host)
  {
    for (int i = 0; i < r.len; i++)
      r.data[i] *= 2;
    r.tag = 99;
    on_host = omp_is_initial_device();
  }
  printf("host before update: tag=%d data[3]=%d on_host=%d\n", r.tag, r.data[3], on_host);
#pragma omp target update from(r)
  printf("update from(r): tag=%d data={%d,%d,%d,%d} pointer intact=%d\n", r.tag, r.data[0], r.data[1], r.data[2],
         r.data[3], r.data == orig);
  for (int i = 0; i < 4; i++)
    r.data[i] = -i;
  r.tag = 5;
#pragma omp target update to(mapper(tag_only) : r) // tag only
  int sum = 0, tag = 0;
#pragma omp target map(from : sum, tag)
  {
    sum = 0; // map(from:) leaves the device copy uninitialised
    for (int i = 0; i < r.len; i++)
      sum += r.data[i];
    tag = r.tag;
  }
  printf("update to(mapper(tag_only)): device tag=%d sum=%d (data not updated)\n", tag, sum);
#pragma omp target update to(r)
#pragma omp target map(from : sum)
  {
    sum = 0;
    for (int i = 0; i < r.len; i++)
      sum += r.data[i];
  }
  printf("update to(r): device sum=%d\n", sum);
#pragma omp target exit data map(delete : r)
  printf("present after delete: %d %d\n", omp_target_is_present(&r, dev), omp_target_is_present(orig, dev));

  // array of structs: enter the whole array, update a section
  Rec arr[4];
  for (int k = 0; k < 4; k++)
    init(&arr[k], 3, 100 * k);
#pragma omp target enter data map(to : arr[0:4])
#pragma omp target
  {
    for (int k = 0; k < 4; k++)
      for (int i = 0; i < arr[k].len; i++)
        arr[k].data[i] = -arr[k].data[i];
  }
#pragma omp target update from(arr[1:2])
  for (int k = 0; k < 4; k++)
    printf("arr[%d].data={%d,%d,%d}\n", k, arr[k].data[0], arr[k].data[1], arr[k].data[2]);
#pragma omp target exit data map(from : arr[0:4])
  printf("after exit from: arr[0].data[2]=%d arr[3].data[2]=%d present=%d\n", arr[0].data[2], arr[3].data[2],
         omp_target_is_present(arr[3].data, dev));
  for (int k = 0; k < 4; k++)
    free(arr[k].data);
  free(orig);
  return 0;
}
