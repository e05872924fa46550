// TestEnvironment for LLVM's OffloadAPI unit tests on omptarget-rs (see
// Environment.hpp). Built once per test program, as LLVM's own is.
#include "Environment.hpp"
#include <OffloadAPI.h>
#include <cstdio>
#include <cstdlib>

#ifndef DISABLE_WRAPPER
// olInit once for the whole program, olShutDown at its end.
namespace {
struct InitWrapper {
  InitWrapper() { olInit(); }
  ~InitWrapper() { olShutDown(); }
};
InitWrapper Wrapper;
} // namespace
#endif

static ol_platform_backend_t backendOf(ol_device_handle_t D) {
  ol_platform_handle_t Platform = nullptr;
  ol_platform_backend_t Backend = OL_PLATFORM_BACKEND_UNKNOWN;
  if (olGetDeviceInfo(D, OL_DEVICE_INFO_PLATFORM, sizeof(Platform), &Platform))
    return OL_PLATFORM_BACKEND_UNKNOWN;
  olGetPlatformInfo(Platform, OL_PLATFORM_INFO_BACKEND, sizeof(Backend),
                    &Backend);
  return Backend;
}

static std::string stringInfo(ol_device_handle_t D, ol_device_info_t Info) {
  size_t Size = 0;
  if (olGetDeviceInfoSize(D, Info, &Size) || Size == 0)
    return "";
  std::vector<char> Buf(Size);
  if (olGetDeviceInfo(D, Info, Size, Buf.data()))
    return "";
  return std::string(Buf.data());
}

static std::string platformName(ol_device_handle_t D) {
  ol_platform_handle_t Platform = nullptr;
  olGetDeviceInfo(D, OL_DEVICE_INFO_PLATFORM, sizeof(Platform), &Platform);
  size_t Size = 0;
  if (olGetPlatformInfoSize(Platform, OL_PLATFORM_INFO_NAME, &Size) || !Size)
    return "";
  std::vector<char> Buf(Size);
  olGetPlatformInfo(Platform, OL_PLATFORM_INFO_NAME, Size, Buf.data());
  return std::string(Buf.data());
}

const std::vector<TestEnvironment::Device> &TestEnvironment::getDevices() {
  static std::vector<Device> Devices;
  static bool Done = false;
  if (Done)
    return Devices;
  Done = true;
  // OFFLOAD_UNITTEST_PLATFORM selects one platform by name, as LLVM's does.
  const char *Only = getenv("OFFLOAD_UNITTEST_PLATFORM");
  std::vector<ol_device_handle_t> All;
  olIterateDevices(
      [](ol_device_handle_t D, void *Data) {
        static_cast<std::vector<ol_device_handle_t> *>(Data)->push_back(D);
        return true;
      },
      &All);
  for (size_t I = 0; I < All.size(); ++I) {
    ol_device_handle_t D = All[I];
    if (backendOf(D) == OL_PLATFORM_BACKEND_HOST)
      continue;
    std::string Platform = platformName(D);
    if (Only && *Only && Platform != Only)
      continue;
    // Our CPU devices share one name: the index keeps test names unique.
    Devices.push_back(
        {D, Platform + "_" + stringInfo(D, OL_DEVICE_INFO_NAME) + "_" +
                std::to_string(Devices.size())});
  }
  return Devices;
}

ol_device_handle_t TestEnvironment::getHostDevice() {
  static ol_device_handle_t Host = nullptr;
  if (!Host)
    olIterateDevices(
        [](ol_device_handle_t D, void *Data) {
          if (backendOf(D) != OL_PLATFORM_BACKEND_HOST)
            return true;
          *static_cast<ol_device_handle_t *>(Data) = D;
          return false;
        },
        &Host);
  return Host;
}

bool TestEnvironment::loadDeviceBinary(
    const std::string &BinaryName, ol_device_handle_t Device,
    std::unique_ptr<llvm::MemoryBuffer> &BinaryOut,
    std::optional<ol_platform_backend_t> OverrideBackend) {
  ol_platform_backend_t Backend =
      OverrideBackend ? *OverrideBackend : backendOf(Device);
  std::string Ext;
  if (Backend == OL_PLATFORM_BACKEND_AMDGPU) {
    Ext = ".amdgpu.bin";
  } else if (Backend == OL_PLATFORM_BACKEND_CUDA) {
    Ext = ".nvptx64.bin";
  } else {
    ol_device_type_t Type = OL_DEVICE_TYPE_DEFAULT;
    olGetDeviceInfo(Device, OL_DEVICE_INFO_TYPE, sizeof(Type), &Type);
    if (Type != OL_DEVICE_TYPE_CPU) {
      fprintf(stderr, "Unsupported platform type for a device binary test.\n");
      return false;
    }
    Ext = ".x86_64.so";
  }
  std::string Path = std::string(DEVICE_CODE_PATH) + "/" + BinaryName + Ext;
  auto File = llvm::MemoryBuffer::getFile(Path, false, false);
  if (!File) {
    fprintf(stderr, "failed to read device binary file: %s\n", Path.c_str());
    return false;
  }
  BinaryOut = std::move(File.get());
  return true;
}
