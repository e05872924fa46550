// Pointer attachment: map(tofrom: p[0:n]) through pointers, pointers inside
// mapped structs, and attachment of a pointer mapped earlier.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

struct Node {
  int val;
  int *data;
  int len;
};

int main(void) {
  int n = 16;
  int *p = malloc(n * sizeof(int));
  for (int i = 0; i < n; i++)
    p[i] = i;
  int *orig = p;
#pragma omp target map(tofrom : p[0:n])
  {
    for (int i = 0; i < n; i++)
      p[i] = p[i] * p[i];
  }
  printf("p[15]=%d host pointer unchanged=%d\n", p[15], p == orig);

  // struct pointer whose member pointer is attached
  struct Node *node = malloc(sizeof *node);
  node->val = 5;
  node->len = 4;
  node->data = malloc(4 * sizeof(int));
  for (int i = 0; i < 4; i++)
    node->data[i] = 10 * i;
  int *orig_data = node->data;
#pragma omp target map(tofrom : node[0:1]) map(tofrom : node->data[0:4])
  {
    node->val += 1;
    for (int i = 0; i < node->len; i++)
      node->data[i] += node->val;
  }
  printf("node: val=%d data=%d,%d,%d,%d data pointer intact=%d\n", node->val, node->data[0], node->data[1],
         node->data[2], node->data[3], node->data == orig_data);

  // pointee mapped first, pointer attached later (enter data then target)
  int *q = malloc(8 * sizeof(int));
  for (int i = 0; i < 8; i++)
    q[i] = 1;
#pragma omp target enter data map(to : q[0:8])
  int sum = 0;
#pragma omp target map(tofrom : sum) // q is used as a pointer: implicit zero-length map
  {
    for (int i = 0; i < 8; i++)
      sum += q[i];
    q[0] = 50; // writes the device copy
  }
  printf("sum=%d host q[0]=%d\n", sum, q[0]);
#pragma omp target exit data map(from : q[0:8])
  printf("after exit from: q[0]=%d\n", q[0]);

  // array of pointers: each row mapped separately
  int *rows[3];
  for (int r = 0; r < 3; r++) {
    rows[r] = malloc(4 * sizeof(int));
    for (int c = 0; c < 4; c++)
      rows[r][c] = r;
  }
  int *r0 = rows[0], *r1 = rows[1], *r2 = rows[2];
#pragma omp target map(tofrom : r0[0:4], r1[0:4], r2[0:4])
  {
    r0[3] = 30;
    r1[3] = 31;
    r2[3] = 32;
  }
  printf("rows: %d %d %d\n", rows[0][3], rows[1][3], rows[2][3]);

  for (int r = 0; r < 3; r++)
    free(rows[r]);
  free(q);
  free(node->data);
  free(node);
  free(p);
  return 0;
}
