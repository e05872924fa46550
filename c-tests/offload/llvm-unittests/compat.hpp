// Force-included into LLVM's OffloadAPI unit tests when they are built against
// 22.1's header: names later copies of the tests use that 22.1 lacks.
#pragma once
#include <OffloadAPI.h>

// Skip markers of later fixtures: nothing is skipped on our devices.
#ifndef SKIP_KNOWN_FAILURE
#define SKIP_KNOWN_FAILURE(...) (void)0
#endif
#ifndef SKIP_IF_FORCE_SYNC_OPS
#define SKIP_IF_FORCE_SYNC_OPS() (void)0
#endif

// Later tests pass a context first to olMemAlloc and olMemFree; 22.1 has
// none, so the context is an empty tag the overloads drop.
struct OlUnittestNoContext {};
static constexpr OlUnittestNoContext Context{};
inline ol_result_t olMemAlloc(OlUnittestNoContext, ol_device_handle_t Device,
                              ol_alloc_type_t Type, size_t Size, void **Out) {
  return olMemAlloc(Device, Type, Size, Out);
}
inline ol_result_t olMemFree(OlUnittestNoContext, void *Ptr) {
  return olMemFree(Ptr);
}

// Non-fatal forms of the fixtures' ASSERT_SUCCESS and ASSERT_ERROR, which
// later fixtures define.
#ifndef EXPECT_SUCCESS
#define EXPECT_SUCCESS(ACTUAL)                                                 \
  do {                                                                         \
    ol_result_t Res = ACTUAL;                                                  \
    if (Res && Res->Code != OL_ERRC_SUCCESS)                                   \
      ADD_FAILURE() << #ACTUAL " returned " << Res->Code << ": "               \
                    << Res->Details;                                           \
  } while (0)
#endif
#ifndef EXPECT_ERROR
#define EXPECT_ERROR(EXPECTED, ACTUAL)                                         \
  do {                                                                         \
    ol_result_t Res = ACTUAL;                                                  \
    EXPECT_TRUE(Res && (Res->Code == EXPECTED));                               \
  } while (0)
#endif
