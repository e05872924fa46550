/* The mapping algorithm through __tgt_target_data_{begin,end,update}_mapper
 * (abi-reference 6): reference counts, ALWAYS, DELETE, RETURN_PARAM,
 * struct members (MEMBER_OF), ATTACH with shadow pointers, OMPX_HOLD. */
#include "abi_util.h"

static const char r_holder = 0;

struct Holder {
  int n;
  int *data;
};

#define BEGIN(dev, n, b, p, s, t) __tgt_target_data_begin_mapper(abi_loc(), dev, n, b, p, s, t, NULL, NULL)
#define END(dev, n, b, p, s, t) __tgt_target_data_end_mapper(abi_loc(), dev, n, b, p, s, t, NULL, NULL)
#define UPDATE(dev, n, b, p, s, t) __tgt_target_data_update_mapper(abi_loc(), dev, n, b, p, s, t, NULL, NULL)

static int device_value(int dev, int *host_elem) {
  int v = -1;
  int *dp = omp_get_mapped_ptr(host_elem, dev);
  if (dp)
    omp_target_memcpy(&v, dp, sizeof v, 0, 0, omp_get_initial_device(), dev);
  return v;
}

int main(int argc, char **argv) {
  abi_buf image = abi_image_from_args(argc, argv);
  static tgt_offload_entry entries[1];
  entries[0] = abi_kernel_entry((void *)&r_holder, "k3_holder");
  abi_desc d;
  abi_make_desc(&d, image, &entries[0], &entries[1]);
  __tgt_register_lib(&d.desc);

  /* --- reference counting --- */
  int a[8];
  for (int i = 0; i < 8; i++)
    a[i] = i;
  void *b[1] = {a}, *p[1] = {a};
  int64_t s[1] = {sizeof a};
  int64_t to[1] = {OMP_TGT_MAPTYPE_TO}, from[1] = {OMP_TGT_MAPTYPE_FROM};
  int64_t always_to[1] = {OMP_TGT_MAPTYPE_TO | OMP_TGT_MAPTYPE_ALWAYS};
  int64_t del[1] = {OMP_TGT_MAPTYPE_DELETE}, rel[1] = {OMP_TGT_MAPTYPE_NONE};
  BEGIN(0, 1, b, p, s, to);
  a[1] = 100;
  BEGIN(0, 1, b, p, s, to); /* refcount 2, no copy */
  printf("refcount 2: device a[1]=%d\n", device_value(0, &a[1]));
  BEGIN(0, 1, b, p, s, always_to); /* refcount 3, copy */
  printf("always: device a[1]=%d\n", device_value(0, &a[1]));
  a[1] = -1;
  END(0, 1, b, p, s, from); /* 3 -> 2, no copy */
  printf("end from (not last): host a[1]=%d present=%d\n", a[1], omp_target_is_present(a, 0));
  END(0, 1, b, p, s, rel); /* 2 -> 1 */
  END(0, 1, b, p, s, from); /* 1 -> 0, copy back, remove */
  printf("end from (last): host a[1]=%d present=%d\n", a[1], omp_target_is_present(a, 0));
  BEGIN(0, 1, b, p, s, to);
  BEGIN(0, 1, b, p, s, to);
  END(0, 1, b, p, s, del);
  printf("delete at refcount 2: present=%d\n", omp_target_is_present(a, 0));

  /* --- sections: base != begin --- */
  void *sb[1] = {a}, *sp[1] = {&a[2]};
  int64_t ss[1] = {3 * sizeof(int)};
  BEGIN(1, 1, sb, sp, ss, to);
  printf("section a[2:3] on dev1: a[1]=%d a[2]=%d a[4]=%d a[5]=%d\n", omp_target_is_present(&a[1], 1),
         omp_target_is_present(&a[2], 1), omp_target_is_present(&a[4], 1), omp_target_is_present(&a[5], 1));
  /* update of a contained sub-range */
  a[3] = 333;
  void *ub[1] = {a}, *up[1] = {&a[3]};
  int64_t us[1] = {sizeof(int)};
  UPDATE(1, 1, ub, up, us, to);
  printf("update to a[3]: device a[3]=%d\n", device_value(1, &a[3]));
  /* update of something not mapped: ignored */
  int unmapped = 5;
  void *nb[1] = {&unmapped}, *np[1] = {&unmapped};
  int64_t ns[1] = {sizeof unmapped};
  UPDATE(1, 1, nb, np, ns, from);
  printf("update of unmapped data ignored: %d\n", unmapped);
  END(1, 1, sb, sp, ss, del);

  /* --- RETURN_PARAM (use_device_ptr) --- */
  BEGIN(2, 1, b, p, s, to);
  void *rb[1] = {a}, *rp[1] = {a};
  int64_t rs[1] = {0}, rt[1] = {OMP_TGT_MAPTYPE_RETURN_PARAM};
  BEGIN(2, 1, rb, rp, rs, rt);
  printf("RETURN_PARAM: base written back=%d equals mapped ptr=%d\n", rb[0] != (void *)a,
         rb[0] == omp_get_mapped_ptr(a, 2));
  END(2, 1, rb, rp, rs, rt);
  END(2, 1, b, p, s, del);

  /* --- struct + pointee + ATTACH (clang 22 scheme, 6.2/6.8) --- */
  int data[4] = {1, 2, 3, 4};
  struct Holder h = {4, data};
  void *hb[3] = {&h, data, &h.data}, *hp[3] = {&h, data, data};
  int64_t hs[3] = {sizeof h, sizeof data, sizeof(void *)};
  int64_t ht[3] = {OMP_TGT_MAPTYPE_TO | OMP_TGT_MAPTYPE_FROM, OMP_TGT_MAPTYPE_TO | OMP_TGT_MAPTYPE_FROM,
                   OMP_TGT_MAPTYPE_ATTACH};
  BEGIN(3, 3, hb, hp, hs, ht);
  struct Holder *dh = omp_get_mapped_ptr(&h, 3);
  struct Holder dev_copy = {0, NULL};
  omp_target_memcpy(&dev_copy, dh, sizeof dev_copy, 0, 0, omp_get_initial_device(), 3);
  printf("attach: device h.data points to the device copy of data=%d\n",
         dev_copy.data == omp_get_mapped_ptr(data, 3));
  /* a kernel takes the device struct (already mapped) */
  long out[1] = {0};
  void *kb[2] = {&h, out}, *kp[2] = {&h, out};
  int64_t ks[2] = {sizeof h, sizeof out};
  int64_t kt[2] = {OMP_TGT_MAPTYPE_TO | OMP_TGT_MAPTYPE_FROM | OMP_TGT_MAPTYPE_TARGET_PARAM,
                   OMP_TGT_MAPTYPE_FROM | OMP_TGT_MAPTYPE_TARGET_PARAM};
  KernelArgsTy k = abi_kargs(3, 2, kb, kp, ks, kt);
  int rc = __tgt_target_kernel(abi_loc(), 3, 0, 0, (void *)&r_holder, &k);
  printf("k3_holder rc=%d sum=%ld host data[0]=%d (not yet copied)\n", rc, out[0], data[0]);
  END(3, 3, hb, hp, hs, ht);
  printf("after end: data=%d,%d,%d,%d host h.data intact=%d\n", data[0], data[1], data[2], data[3], h.data == data);

  /* --- struct members: combined entry + MEMBER_OF --- */
  struct {
    int x;
    double y;
    int z;
  } st = {1, 2.0, 3};
  void *mb[3] = {&st, &st, &st}, *mp[3] = {&st.x, &st.x, &st.z};
  int64_t ms[3] = {(int64_t)((char *)(&st.z + 1) - (char *)&st.x), sizeof st.x, sizeof st.z};
  int64_t mt[3] = {0, OMP_TGT_MAPTYPE_MEMBER_OF(0) | OMP_TGT_MAPTYPE_TO | OMP_TGT_MAPTYPE_FROM,
                   OMP_TGT_MAPTYPE_MEMBER_OF(0) | OMP_TGT_MAPTYPE_TO | OMP_TGT_MAPTYPE_FROM};
  BEGIN(0, 3, mb, mp, ms, mt);
  printf("members: st.x present=%d st.z present=%d device st.z=%d\n", omp_target_is_present(&st.x, 0),
         omp_target_is_present(&st.z, 0), device_value(0, &st.z));
  st.x = 10;
  st.z = 30;
  END(0, 3, mb, mp, ms, mt);
  printf("after end: st.x=%d st.z=%d present=%d\n", st.x, st.z, omp_target_is_present(&st, 0));

  /* --- OMPX_HOLD --- */
  int64_t hold_to[1] = {OMP_TGT_MAPTYPE_TO | OMP_TGT_MAPTYPE_OMPX_HOLD};
  BEGIN(1, 1, b, p, s, hold_to);
  END(1, 1, b, p, s, del); /* dynamic delete cannot remove a held mapping */
  printf("hold: present after dynamic delete=%d\n", omp_target_is_present(a, 1));
  END(1, 1, b, p, s, hold_to);
  printf("hold: present after hold release=%d\n", omp_target_is_present(a, 1));

  __tgt_unregister_lib(&d.desc);
  return 0;
}
