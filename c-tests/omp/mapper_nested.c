// Nested user-defined mappers (abi-reference 6.12): struct Outer contains a
// struct Inner that has its own default mapper (len + data[0:len]); Outer's
// mapper maps its own pointer member and the Inner member (using Inner's
// mapper), so one map(tofrom: o) maps three pointees and attaches three
// pointers. Also an array of Outer through the mapper, and the explicit
// mapper(default) modifier.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  int len;
  int *data;
} Inner;
typedef struct {
  int id;
  Inner a, b;
  double *w;
  int nw;
} Outer;

#pragma omp declare mapper(Inner in) map(in, in.data[0:in.len])
#pragma omp declare mapper(Outer o) map(o.id, o.a, o.b, o.nw, o.w[0:o.nw])

static void init(Outer *o, int id) {
  o->id = id;
  o->a.len = 3;
  o->a.data = malloc(3 * sizeof(int));
  o->b.len = 2;
  o->b.data = malloc(2 * sizeof(int));
  o->nw = 4;
  o->w = malloc(4 * sizeof(double));
  for (int i = 0; i < 3; i++)
    o->a.data[i] = 10 * id + i;
  for (int i = 0; i < 2; i++)
    o->b.data[i] = 100 * id + i;
  for (int i = 0; i < 4; i++)
    o->w[i] = id + 0.25 * i;
}

static void show(const char *what, Outer *o) {
  printf("%s id=%d a={%d,%d,%d} b={%d,%d} w={%.2f,%.2f,%.2f,%.2f}\n", what, o->id, o->a.data[0], o->a.data[1],
         o->a.data[2], o->b.data[0], o->b.data[1], o->w[0], o->w[1], o->w[2], o->w[3]);
}

static void release(Outer *o) {
  free(o->a.data);
  free(o->b.data);
  free(o->w);
}

int main(void) {
  int dev = omp_get_default_device();
  Outer o;
  init(&o, 1);
  int *pa = o.a.data, *pb = o.b.data;
  double *pw = o.w;
  int on_host = -1;
#pragma omp target map(tofrom : o) map(from : on_host)
  {
    o.id += 1;
    for (int i = 0; i < o.a.len; i++)
      o.a.data[i] *= -1;
    for (int i = 0; i < o.b.len; i++)
      o.b.data[i] += 5;
    for (int i = 0; i < o.nw; i++)
      o.w[i] *= 2;
    on_host = omp_is_initial_device();
  }
  show("nested mappers:", &o);
  printf("pointers intact=%d on_host=%d\n", o.a.data == pa && o.b.data == pb && o.w == pw, on_host);

  // enter data through the mappers: all pointees present
#pragma omp target enter data map(mapper(default), to : o)
  printf("present: o=%d a.data=%d b.data=%d w=%d\n", omp_target_is_present(&o, dev), omp_target_is_present(pa, dev),
         omp_target_is_present(pb, dev), omp_target_is_present(pw, dev));
  o.a.data[0] = 1000; // host only
  int seen = 0;
#pragma omp target map(from : seen)
  { seen = o.a.data[0]; } // o implicitly mapped: present
  printf("device a.data[0]=%d\n", seen);
#pragma omp target exit data map(from : o)
  show("after exit from:", &o);
  printf("present after exit: a.data=%d w=%d\n", omp_target_is_present(pa, dev), omp_target_is_present(pw, dev));

  // array of Outer
  Outer arr[2];
  init(&arr[0], 3);
  init(&arr[1], 4);
#pragma omp target map(tofrom : arr[0:2])
  {
    for (int k = 0; k < 2; k++) {
      arr[k].b.data[1] = arr[k].a.data[2] + arr[k].id;
      arr[k].w[3] = -1;
    }
  }
  show("arr[0]:", &arr[0]);
  show("arr[1]:", &arr[1]);
  release(&arr[0]);
  release(&arr[1]);
  release(&o);
  return 0;
}
