// omp_target_memcpy_rect: 2-D and 3-D sub-blocks between host and device.
#include <limits.h>
#include <omp.h>
#include <stdio.h>

int main(void) {
  int dev = 0, host = omp_get_initial_device();
  printf("max dims query: %s\n",
         omp_target_memcpy_rect(NULL, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL, dev, host) == INT_MAX ? "INT_MAX"
                                                                                                      : "other");
  int h[6][8];
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 8; j++)
      h[i][j] = i * 10 + j;
  int *d = omp_target_alloc(sizeof h, dev);
  omp_target_memset(d, 0, sizeof h, dev);
  // copy the 3x4 block at (1,2) of h to position (2,3) of d
  size_t vol[2] = {3, 4}, src_off[2] = {1, 2}, dst_off[2] = {2, 3}, dims[2] = {6, 8};
  int rc = omp_target_memcpy_rect(d, h, sizeof(int), 2, vol, dst_off, src_off, dims, dims, dev, host);
  int back[6][8];
  omp_target_memcpy(back, d, sizeof back, 0, 0, host, dev);
  printf("rc=%d\n", rc);
  for (int i = 0; i < 6; i++) {
    for (int j = 0; j < 8; j++)
      printf("%3d", back[i][j]);
    printf("\n");
  }
  // device -> host, 3-D
  double cube[3][4][5], out[3][4][5];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++)
      for (int k = 0; k < 5; k++)
        cube[i][j][k] = i * 100 + j * 10 + k, out[i][j][k] = -1;
  double *dc = omp_target_alloc(sizeof cube, 1);
  omp_target_memcpy(dc, cube, sizeof cube, 0, 0, 1, host);
  size_t v3[3] = {2, 2, 3}, o3[3] = {1, 1, 1}, z3[3] = {0, 0, 0}, d3[3] = {3, 4, 5};
  rc = omp_target_memcpy_rect(out, dc, sizeof(double), 3, v3, z3, o3, d3, d3, host, 1);
  printf("3-D rc=%d out[0][0][0]=%.0f out[1][1][2]=%.0f out[0][0][3]=%.0f out[2][0][0]=%.0f\n", rc, out[0][0][0],
         out[1][1][2], out[0][0][3], out[2][0][0]);
  // invalid arguments
  rc = omp_target_memcpy_rect(out, dc, 0, 3, v3, z3, o3, d3, d3, host, 1);
  printf("element size 0 rc=%d\n", rc);
  omp_target_free(dc, 1);
  omp_target_free(d, dev);
  return 0;
}
