//! The AMDGPU plugin end to end against mock-hsa, the CPU stand-in for
//! `libhsa-runtime64.so.1` in c-tests/mock-hsa: runtime loading
//! through `OMPTARGET_RS_LIBHSA`, agents and ISAs, memory pools and every
//! allocation kind, copies (staged and locked), fills, code objects v5 and v6,
//! `.kd` kernels, globals, the device environment, kernel environments and
//! AMDGPU launch sizes, the launch environment of team reductions, the
//! kernarg segment and AQL dispatch (checked by the mock), and queue errors.
//!
//! One test function: the environment must be set before the plugin reads
//! it, once per process. Without the images it prints
//! `skipped: gpu-images not built`.

use omptarget_rs::plugins::amdgpu::{AmdgpuPlugin, hsa};
use omptarget_rs::plugins::cuda::DeviceEnvironment;
use omptarget_rs::plugins::gpu::kernel_env::ExecMode;
use omptarget_rs::plugins::{AllocKind, LaunchDims, Plugin};
use std::path::{Path, PathBuf};

fn images() -> Option<PathBuf> {
    let dir = std::env::var_os("GPU_IMAGES_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/gpu-images"));
    if !dir.join("kernels/kernels.gfx90a.hsaco").exists() {
        println!("skipped: gpu-images not built (run c-tests/gpu-images.sh; looked in {})", dir.display());
        return None;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("c-tests/amdgpu-images.sh");
    let out = std::process::Command::new("bash").arg(script).arg(&dir).output().expect("run c-tests/amdgpu-images.sh");
    assert!(
        out.status.success(),
        "c-tests/amdgpu-images.sh failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !dir.join("amdgpu/env_kernels.gfx90a.hsaco").exists() {
        println!("skipped: amdgpu/env_kernels.gfx90a.hsaco not built (needs clang-22)");
        return None;
    }
    Some(dir)
}

fn read(dir: &Path, rel: &str) -> Vec<u8> {
    std::fs::read(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn dims(teams: [u32; 3], threads: [u32; 3]) -> LaunchDims {
    LaunchDims { teams, threads, dyn_shared_bytes: 0, tripcount: 0 }
}

/// The last dispatch line of the mock's log naming `kernel`.
fn last_launch(log: &Path, kernel: &str) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines().rev().find(|l| l.starts_with(&format!("launch {kernel} "))).unwrap_or_default().to_string()
}

fn retrieve<T: Default>(plugin: &AmdgpuPlugin, ptr: u64) -> T {
    let mut v = T::default();
    // SAFETY: `v` is size_of::<T>() writable bytes.
    unsafe { plugin.retrieve(0, &mut v as *mut T as usize, ptr, size_of::<T>() as u64).unwrap() };
    v
}

#[test]
fn plugin_against_mock_hsa() {
    let Some(d) = images() else { return };
    let log = std::env::temp_dir().join(format!("omptarget-rs-amdgpu-mock-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&log);
    // SAFETY: this is the only test in this binary; nothing else reads the environment concurrently.
    unsafe {
        std::env::set_var(hsa::LIBHSA_ENV, d.join("amdgpu/mock-hsa/libhsa-runtime64.so.1"));
        std::env::set_var("MOCK_HSA_EMU", d.join("amdgpu/env_kernels.emu.so"));
        std::env::set_var("MOCK_HSA_LOG", &log);
        std::env::set_var("LIBOMPTARGET_SHARED_MEMORY_SIZE", "256");
        std::env::set_var("LIBOMPTARGET_DEVICE_RTL_DEBUG", "1");
        std::env::set_var("LIBOMPTARGET_AMDGPU_MAX_ASYNC_COPY_BYTES", "65536");
        for v in [
            "MOCK_HSA_FAULT_KERNEL",
            "MOCK_HSA_ISA",
            "MOCK_HSA_GPUS",
            "MOCK_HSA_INIT_FAIL",
            "OMP_NUM_TEAMS",
            "OMP_TEAMS_THREAD_LIMIT",
            "LIBOMPTARGET_AMDGPU_TEAMS_PER_CU",
        ] {
            std::env::remove_var(v);
        }
    }
    let plugin = AmdgpuPlugin::default();
    assert!(!hsa::touched());
    assert_eq!(plugin.number_of_devices(), 1, "mock-hsa has one GPU agent");
    assert!(hsa::touched());
    assert_eq!(plugin.target_ids(0).unwrap(), vec!["gfx90a:sramecc+:xnack-"]);
    assert_eq!(plugin.uid(0), "GPU-000000005eedf00d");
    let info = plugin.device_info(0);
    assert!(info.contains("mock-hsa") && info.contains("gfx90a:sramecc+:xnack-") && info.contains("104"), "{info}");

    // Memory of every kind, copies (staged below 64 KiB, locked above) and fills.
    for n in [1000u64, 200_000] {
        let a = plugin.alloc(0, n, AllocKind::Default).unwrap();
        let b = plugin.alloc(0, n, AllocKind::Device).unwrap();
        let pattern: Vec<u8> = (0..n).map(|i| (i * 7 + n) as u8).collect();
        // SAFETY: `pattern` holds n readable bytes.
        unsafe { plugin.submit(0, a, pattern.as_ptr() as usize, n).unwrap() };
        plugin.memset(0, a + 100, 0xab, 50).unwrap(); // unaligned: staged
        plugin.memset(0, a + 200, 0xcd, 64).unwrap(); // hsa_amd_memory_fill
        plugin.exchange(0, a, 0, b, n).unwrap();
        let mut back = vec![0u8; n as usize];
        // SAFETY: `back` holds n writable bytes.
        unsafe { plugin.retrieve(0, back.as_mut_ptr() as usize, b, n).unwrap() };
        let mut want = pattern.clone();
        want[100..150].fill(0xab);
        want[200..264].fill(0xcd);
        assert_eq!(back, want, "{n} bytes");
        plugin.free(0, a, AllocKind::Default).unwrap();
        plugin.free(0, b, AllocKind::Device).unwrap();
    }
    let again = plugin.alloc(0, 8, AllocKind::Default).unwrap();
    plugin.free(0, again, AllocKind::Default).unwrap();
    assert_eq!(plugin.alloc(0, 16, AllocKind::Default).unwrap(), again, "small blocks are cached");
    for kind in [AllocKind::Host, AllocKind::Shared] {
        let p = plugin.alloc(0, 64, kind).unwrap();
        // SAFETY: fine-grained host memory of 64 bytes is ordinary host memory here.
        unsafe { (p as usize as *mut u64).write(42) };
        assert!(plugin.is_accessible(0, p as usize + 8, 8), "pinned memory is reachable from the GPU");
        let dev = plugin.alloc(0, 64, AllocKind::Default).unwrap();
        // Transfers from pinned memory go straight to the async copy.
        // SAFETY: `p` holds 64 readable bytes.
        unsafe { plugin.submit(0, dev, p as usize, 64).unwrap() };
        assert_eq!(retrieve::<u64>(&plugin, dev), 42);
        plugin.free(0, p, AllocKind::Default).unwrap(); // pinned: freed whatever the kind
        plugin.free(0, dev, AllocKind::Default).unwrap();
    }
    assert!(!plugin.is_accessible(0, &again as *const u64 as usize, 8));

    // The environment kernels: device environment, kernel environments, launches.
    let img = read(&d, "amdgpu/env_kernels.gfx90a.hsaco");
    assert!(plugin.is_compatible(&img) && plugin.is_device_compatible(0, &img));
    let h = plugin.load_binary(0, &img).unwrap();
    let env_ptr = plugin.get_global(0, h, "__omp_rtl_device_environment", 48).unwrap();
    let env: DeviceEnvironment = retrieve(&plugin, env_ptr);
    assert_eq!(
        env,
        DeviceEnvironment {
            device_debug_kind: 1,
            num_devices: 1,
            device_num: 0,
            dynamic_mem_size: 256,
            clock_frequency: 100_000_000,
            indirect_call_table: 0,
            indirect_call_table_size: 0,
            hardware_parallelism: 104 * 32,
        }
    );
    let err = plugin.get_global(0, h, "__omp_rtl_device_environment", 40).unwrap_err().to_string();
    assert!(err.contains("has 48 bytes in the ELF image but 40 bytes on the host"), "{err}");
    assert!(
        plugin.get_global(0, h, "no_such_global", 4).unwrap_err().to_string().contains("failed to find global symbol 'no_such_global'")
    );
    assert!(plugin.get_function(0, h, "no_such_kernel").unwrap_err().to_string().contains("no_such_kernel"));

    let generic = plugin.get_function(0, h, "k_generic").unwrap();
    let spmd_red = plugin.get_function(0, h, "k_spmd_red").unwrap();
    let bare = plugin.get_function(0, h, "k_bare").unwrap();
    let read_env = plugin.get_function(0, h, "k_read_env").unwrap();
    assert_eq!(plugin.kernel_environment(generic).unwrap().map(|e| e.exec_mode), Some(ExecMode::GENERIC));
    assert_eq!(plugin.kernel_environment(bare).unwrap(), None);
    let meta = plugin.kernel_metadata(bare).unwrap().expect("metadata of k_bare");
    assert_eq!((meta.explicit_size(), meta.wavefront_size), (16, 64));
    // AMDGPU grid values (abi-reference §7.5): wavefront 64, 256 default
    // threads, CUs x 4 default teams.
    let g = plugin.launch_grid(0, generic, &dims([0, 1, 1], [64, 1, 1])).unwrap();
    assert_eq!((g.blocks, g.threads), ([416, 1, 1], [128, 1, 1]), "generic: 104 CUs x 4 teams, + one wavefront");
    let g = plugin.launch_grid(0, generic, &dims([1, 1, 1], [0, 1, 1])).unwrap();
    assert_eq!(g.threads, [256, 1, 1], "generic: the kernel's MaxThreads 256");
    let g = plugin.launch_grid(0, spmd_red, &LaunchDims { tripcount: 1000, ..dims([0, 1, 1], [0, 1, 1]) }).unwrap();
    assert_eq!((g.blocks, g.threads), ([32, 1, 1], [32, 1, 1]), "SPMD low trip count");

    let out = plugin.alloc(0, 64, AllocKind::Default).unwrap();
    plugin.memset(0, out, 0, 64).unwrap();
    // Bare: exactly the requested grid.
    plugin.launch(0, bare, "k_bare", &[out, 100], &dims([3, 2, 1], [4, 1, 1])).unwrap();
    let l = last_launch(&log, "k_bare");
    assert!(l.starts_with("launch k_bare grid=(3,2,1) block=(4,1,1) group=256 kernarg="), "{l}");
    let got: [i64; 3] = retrieve(&plugin, out);
    assert_eq!(got, [100, 101, 102], "the kernel ran on the mock");
    let err = plugin.launch(0, bare, "k_bare", &[out], &dims([1, 1, 1], [1, 1, 1])).unwrap_err().to_string();
    assert!(err.contains("mismatch in kernel arguments for 'k_bare': 8 bytes passed, the kernel declares 16"), "{err}");
    // Generic: ~0 passes through; SPMD with a reduction: a launch environment.
    plugin.launch(0, generic, "k_generic", &[u64::MAX, out], &dims([2, 1, 1], [32, 1, 1])).unwrap();
    assert!(last_launch(&log, "k_generic").contains("grid=(2,1,1) block=(96,1,1)"));
    plugin.launch(0, spmd_red, "k_spmd_red", &[u64::MAX, out], &dims([4, 1, 1], [0, 1, 1])).unwrap();
    assert!(last_launch(&log, "k_spmd_red").contains("grid=(4,1,1) block=(256,1,1)"));
    let got: [i64; 3] = retrieve(&plugin, out);
    assert_eq!(got[0], -1, "generic kernels get dyn_ptr = ~0");
    assert!(got[1] != -1 && got[1] != 0, "the launch environment replaces ~0: {:#x}", got[1]);
    assert!(got[2] != 0, "the launch environment carries the reduction buffer");
    // The kernel reads the device environment the plugin wrote.
    plugin.launch(0, read_env, "k_read_env", &[out], &dims([1, 1, 1], [1, 1, 1])).unwrap();
    assert_eq!(retrieve::<DeviceEnvironment>(&plugin, out).hardware_parallelism, 3328);
    // Dynamic LDS: the group segment grows by the clause's amount.
    plugin.launch(0, bare, "k_bare", &[out, 7], &LaunchDims { dyn_shared_bytes: 4096, ..dims([1, 1, 1], [1, 1, 1]) }).unwrap();
    assert!(last_launch(&log, "k_bare").contains("group=4096"), "{}", last_launch(&log, "k_bare"));
    // AQL limits.
    let err = plugin.launch(0, bare, "k_bare", &[out, 7], &dims([1, 1, 1], [70_000, 1, 1])).unwrap_err().to_string();
    assert!(err.contains("does not fit an AQL dispatch packet"), "{err}");

    // gpu-images' kernels as code object v5 and v6 load next to them.
    for rel in ["kernels/kernels.gfx90a.hsaco", "amdgpu/kernels.gfx90a.cov5.hsaco"] {
        let img = read(&d, rel);
        let h = plugin.load_binary(0, &img).unwrap_or_else(|e| panic!("{rel}: {e}"));
        for k in ["saxpy", "launch_dims", "read_global", "write_global", "many_args"] {
            let kh = plugin.get_function(0, h, k).unwrap();
            assert_eq!(plugin.kernel_environment(kh).unwrap(), None, "{rel}: {k} is bare");
        }
        assert_eq!(retrieve::<i32>(&plugin, plugin.get_global(0, h, "g_value", 4).unwrap()), 42, "{rel}: initial value");
        let table = plugin.get_global(0, h, "g_table", 16).unwrap();
        assert_eq!(retrieve::<[i32; 4]>(&plugin, table), [1, 2, 3, 4]);
        // Not emulated by env_kernels.emu.so: the dispatch is still checked by the mock.
        let saxpy = plugin.get_function(0, h, "saxpy").unwrap();
        plugin.launch(0, saxpy, "saxpy", &[u64::MAX, out, out, 0, 0], &dims([64, 1, 1], [128, 1, 1])).unwrap();
        assert!(last_launch(&log, "saxpy").contains("grid=(64,1,1) block=(128,1,1) group=256 kernarg=296"));
    }
    // Images for other agents are refused with both target ids named.
    let gfx942 = read(&d, "kernels/kernels.gfx942.hsaco");
    assert!(plugin.is_compatible(&gfx942) && !plugin.is_device_compatible(0, &gfx942));
    let err = plugin.load_binary(0, &gfx942).unwrap_err().to_string();
    assert!(err.contains("gfx942") && err.contains("device 0 is gfx90a:sramecc+:xnack-"), "{err}");
    if let Ok(b) = std::fs::read(d.join("amdgpu/kernels.gfx942.sramecc_on.xnack_on.hsaco")) {
        assert!(!plugin.is_device_compatible(0, &b));
    }
    plugin.free(0, out, AllocKind::Default).unwrap();
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(text.lines().filter(|l| l.starts_with("launch ")).count(), 7, "{text}");
    assert!(!text.contains("WARNING"), "mock-hsa found a problem:\n{text}");
    let _ = std::fs::remove_file(&log);
}
