// MEMBER_OF / partial struct mapping (abi-reference 6.7): only s.b and s.d of
// a large struct are mapped. The combined entry spans &s.b .. end of s.d (so
// s.c, between them, is inside the allocation but never copied: map(tofrom:
// s.b, s.d) copies only the members); s.a, s.e and the big tail stay unmapped
// and keep their host values. Presence is observed member by member.
#include <omp.h>
#include <stdio.h>
#include <string.h>

struct Big {
  int a;
  double b;
  int c[64];
  long d;
  int e;
  char tail[2048];
};

static int dev;

static void presence(const char *what, struct Big *s) {
  printf("%s: present a=%d b=%d c=%d d=%d e=%d tail=%d\n", what, omp_target_is_present(&s->a, dev),
         omp_target_is_present(&s->b, dev), omp_target_is_present(&s->c[10], dev), omp_target_is_present(&s->d, dev),
         omp_target_is_present(&s->e, dev), omp_target_is_present(&s->tail[100], dev));
}

int main(void) {
  dev = omp_get_default_device();
  static struct Big s;
  s.a = 1;
  s.b = 2.5;
  for (int i = 0; i < 64; i++)
    s.c[i] = i;
  s.d = 4;
  s.e = 5;
  memset(s.tail, 'h', sizeof s.tail);

  int on_host = -1;
#pragma omp target map(tofrom : s.b, s.d) map(from : on_host)
  {
    s.b *= 2;
    s.d += 40;
    on_host = omp_is_initial_device();
  }
  printf("region: a=%d b=%.1f d=%ld e=%d c[5]=%d tail[0]=%c on_host=%d\n", s.a, s.b, s.d, s.e, s.c[5], s.tail[0],
         on_host);

#pragma omp target enter data map(to : s.b, s.d)
  presence("after enter data of s.b, s.d", &s);
  s.b = -1;
  s.d = -1; // host only
  double b = 0;
  long d = 0;
#pragma omp target map(from : b, d) map(tofrom : s.b, s.d)
  {
    b = s.b;
    d = s.d;
    s.b = 7.75;
  }
  printf("device kept b=%.1f d=%ld; host b=%.2f d=%ld (present: no copy back)\n", b, d, s.b, s.d);
  // update of a single member inside the mapped span
#pragma omp target update from(s.b)
  printf("update from(s.b): b=%.2f d=%ld\n", s.b, s.d);
  s.d = 1000;
#pragma omp target update to(s.d)
#pragma omp target map(from : d) map(tofrom : s.d)
  { d = s.d + 1; }
  printf("update to(s.d): device d+1=%ld\n", d);
  // exit data of the members: last reference, copied back member by member
#pragma omp target exit data map(from : s.b, s.d)
  presence("after exit data", &s);
  printf("final: a=%d b=%.2f c[63]=%d d=%ld e=%d tail[2047]=%c\n", s.a, s.b, s.c[63], s.d, s.e, s.tail[2047]);
  return 0;
}
