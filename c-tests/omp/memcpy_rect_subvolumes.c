// omp_target_memcpy_rect sub-volumes (abi-reference 9.2): 2-D host -> device
// with different source/destination dimensions, 3-D device 0 -> device 1
// (device-to-device between two devices) with offsets in every dimension,
// 3-D device 1 -> host, 1-D as the degenerate case, zero volume in one
// dimension, and a 2-D copy inside the same device buffer (device 0 ->
// device 0, non-overlapping blocks). All device buffers are read back whole.
#include <omp.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  int host = omp_get_initial_device();
  // 2-D: a 4x5 host array into an 6x7 device array
  int src[4][5];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 5; j++)
      src[i][j] = 10 * (i + 1) + j;
  int *d2 = omp_target_alloc(6 * 7 * sizeof(int), 0);
  omp_target_memset(d2, 0, 6 * 7 * sizeof(int), 0);
  size_t vol[2] = {3, 4}, doff[2] = {2, 1}, soff[2] = {1, 1}, ddim[2] = {6, 7}, sdim[2] = {4, 5};
  int rc = omp_target_memcpy_rect(d2, src, sizeof(int), 2, vol, doff, soff, ddim, sdim, 0, host);
  int back2[6][7];
  omp_target_memcpy(back2, d2, sizeof back2, 0, 0, host, 0);
  printf("2-D host->dev rc=%d\n", rc);
  for (int i = 0; i < 6; i++) {
    for (int j = 0; j < 7; j++)
      printf("%3d", back2[i][j]);
    printf("\n");
  }
  // same device buffer: the 2x4 block at (3, 1) to (0, 3) (disjoint blocks)
  size_t vol_b[2] = {2, 4}, doff_b[2] = {0, 3}, soff_b[2] = {3, 1};
  rc = omp_target_memcpy_rect(d2, d2, sizeof(int), 2, vol_b, doff_b, soff_b, ddim, ddim, 0, 0);
  omp_target_memcpy(back2, d2, sizeof back2, 0, 0, host, 0);
  printf("2-D dev0->dev0 rc=%d row0:", rc);
  for (int j = 0; j < 7; j++)
    printf(" %d", back2[0][j]);
  printf(" row1:");
  for (int j = 0; j < 7; j++)
    printf(" %d", back2[1][j]);
  printf("\n");

  // 3-D: device 0 -> device 1
  double cube[3][4][5];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++)
      for (int k = 0; k < 5; k++)
        cube[i][j][k] = 100 * i + 10 * j + k;
  double *c0 = omp_target_alloc(sizeof cube, 0);
  double *c1 = omp_target_alloc(2 * 3 * 4 * sizeof(double), 1);
  omp_target_memcpy(c0, cube, sizeof cube, 0, 0, 0, host);
  omp_target_memset(c1, 0, 2 * 3 * 4 * sizeof(double), 1);
  size_t v3[3] = {2, 2, 3}, so3[3] = {1, 2, 2}, do3[3] = {0, 1, 1}, sd3[3] = {3, 4, 5}, dd3[3] = {2, 3, 4};
  rc = omp_target_memcpy_rect(c1, c0, sizeof(double), 3, v3, do3, so3, dd3, sd3, 1, 0);
  double out[2][3][4];
  omp_target_memcpy(out, c1, sizeof out, 0, 0, host, 1);
  printf("3-D dev0->dev1 rc=%d\n", rc);
  for (int i = 0; i < 2; i++) {
    for (int j = 0; j < 3; j++) {
      for (int k = 0; k < 4; k++)
        printf("%5.0f", out[i][j][k]);
      printf("\n");
    }
    printf("\n");
  }
  // 3-D: device 1 -> host into a larger host array
  double hbig[3][3][5];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 5; k++)
        hbig[i][j][k] = -1;
  size_t v3b[3] = {2, 2, 2}, so3b[3] = {0, 1, 1}, do3b[3] = {1, 0, 3}, dd3b[3] = {3, 3, 5};
  rc = omp_target_memcpy_rect(hbig, c1, sizeof(double), 3, v3b, do3b, so3b, dd3b, dd3, host, 1);
  printf("3-D dev1->host rc=%d:", rc);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 5; k++)
        if (hbig[i][j][k] != -1)
          printf(" [%d][%d][%d]=%.0f", i, j, k, hbig[i][j][k]);
  printf("\n");
  // 1-D and zero volume
  int line[8] = {0}, sline[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  size_t v1[1] = {3}, o1d[1] = {4}, o1s[1] = {1}, dim1[1] = {8};
  rc = omp_target_memcpy_rect(line, sline, sizeof(int), 1, v1, o1d, o1s, dim1, dim1, host, host);
  printf("1-D host->host rc=%d line:", rc);
  for (int i = 0; i < 8; i++)
    printf(" %d", line[i]);
  printf("\n");
  size_t vz[2] = {0, 4};
  rc = omp_target_memcpy_rect(d2, src, sizeof(int), 2, vz, doff, soff, ddim, sdim, 0, host);
  printf("zero volume rc=%d\n", rc);
  omp_target_free(c1, 1);
  omp_target_free(c0, 0);
  omp_target_free(d2, 0);
  return 0;
}
