// The test environment LLVM's OffloadAPI unit tests expect (namespace
// TestEnvironment), written for omptarget-rs: the devices under test are every
// device whose platform backend is not HOST (our x86-64 CPU devices, whose
// backend is UNKNOWN in 22.1's enumeration, and GPUs when present); the host
// device is the one of backend HOST.
#pragma once

#include "llvm/Support/MemoryBuffer.h"
#include <OffloadAPI.h>
#include <gtest/gtest.h>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace TestEnvironment {

struct Device {
  ol_device_handle_t Handle;
  std::string Name;
};

const std::vector<Device> &getDevices();
ol_device_handle_t getHostDevice();
// Loads DEVICE_CODE_PATH/<name>.x86_64.so for CPU devices (backend UNKNOWN,
// type CPU), <name>.amdgpu.bin / <name>.nvptx64.bin for GPUs.
bool loadDeviceBinary(
    const std::string &BinaryName, ol_device_handle_t Device,
    std::unique_ptr<llvm::MemoryBuffer> &BinaryOut,
    std::optional<ol_platform_backend_t> OverrideBackend = std::nullopt);
} // namespace TestEnvironment
