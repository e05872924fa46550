//! The CUDA plugin end to end against mock-cuda, the CPU stand-in for
//! `libcuda.so.1` that gpu-images builds: driver loading through
//! `OMPTARGET_RS_LIBCUDA`, contexts, memory of every kind, copies, memset,
//! image loading of both cubin generations, the device environment, kernel
//! environments, launch dimensions, the parameter buffer, the launch
//! environment for reductions and dynamic shared memory.
//!
//! One test function: the environment must be set before the plugin reads
//! it, once per process. Without the images it prints
//! `skipped: gpu-images not built`.

use omptarget_rs::plugins::cuda::{CudaPlugin, DeviceEnvironment, driver};
use omptarget_rs::plugins::gpu::kernel_env::ExecMode;
use omptarget_rs::plugins::{AllocKind, LaunchDims, Plugin};
use std::path::{Path, PathBuf};

fn images() -> Option<PathBuf> {
    let dir = std::env::var_os("GPU_IMAGES_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/gpu-images"));
    if dir.join("mock-cuda/libcuda.so.1").exists() && dir.join("extra/ctors.sm_90.cubin").exists() {
        Some(dir)
    } else {
        println!("skipped: gpu-images not built (run c-tests/gpu-images.sh; looked in {})", dir.display());
        None
    }
}

fn read(dir: &Path, rel: &str) -> Vec<u8> {
    std::fs::read(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn dims(teams: [u32; 3], threads: [u32; 3]) -> LaunchDims {
    LaunchDims { teams, threads, dyn_shared_bytes: 0, tripcount: 0 }
}

/// The last line of the mock's launch log naming `kernel`.
fn last_launch(log: &Path, kernel: &str) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines().rev().find(|l| l.starts_with(&format!("launch {kernel} "))).unwrap_or_default().to_string()
}

#[test]
fn plugin_against_mock_cuda() {
    let Some(d) = images() else { return };
    let log = std::env::temp_dir().join(format!("omptarget-rs-cuda-mock-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&log);
    // SAFETY: this is the only test in this binary; nothing else reads the environment concurrently.
    unsafe {
        std::env::set_var(driver::LIBCUDA_ENV, d.join("mock-cuda/libcuda.so.1"));
        std::env::set_var("MOCK_CUDA_LOG", &log);
        std::env::set_var("LIBOMPTARGET_SHARED_MEMORY_SIZE", "256");
        std::env::set_var("LIBOMPTARGET_DEVICE_RTL_DEBUG", "1");
        std::env::remove_var("MOCK_CUDA_SM");
        std::env::remove_var("OMP_NUM_TEAMS");
        std::env::remove_var("OMP_TEAMS_THREAD_LIMIT");
    }
    let plugin = CudaPlugin::default();
    assert!(!driver::touched());
    assert_eq!(plugin.number_of_devices(), 1, "mock-cuda has one device");
    assert!(driver::touched());
    let cc = plugin.compute_capability(0).unwrap();
    assert_eq!((cc.major, cc.minor), (9, 0));
    assert!(plugin.device_info(0).contains("mock-cuda"));
    assert!(plugin.uid(0).starts_with("GPU-a0a1a2a3-"), "{}", plugin.uid(0));

    // Memory of every kind, copies and fills.
    let n = 1000u64;
    let a = plugin.alloc(0, n, AllocKind::Default).unwrap();
    let b = plugin.alloc(0, n, AllocKind::Device).unwrap();
    let pattern: Vec<u8> = (0..n).map(|i| (i * 7) as u8).collect();
    // SAFETY: `pattern` holds n readable bytes.
    unsafe { plugin.submit(0, a, pattern.as_ptr() as usize, n).unwrap() };
    plugin.memset(0, a + 100, 0xab, 50).unwrap();
    plugin.memset(0, a + 200, 0xcd, 64).unwrap(); // the 4-byte fill path
    plugin.exchange(0, a, 0, b, n).unwrap();
    let mut back = vec![0u8; n as usize];
    // SAFETY: `back` holds n writable bytes.
    unsafe { plugin.retrieve(0, back.as_mut_ptr() as usize, b, n).unwrap() };
    let mut want = pattern.clone();
    want[100..150].fill(0xab);
    want[200..264].fill(0xcd);
    assert_eq!(back, want);
    plugin.free(0, a, AllocKind::Default).unwrap();
    plugin.free(0, b, AllocKind::Device).unwrap();
    // The pool hands the freed small block out again.
    let again = plugin.alloc(0, 8, AllocKind::Default).unwrap();
    let again2 = plugin.alloc(0, 8, AllocKind::Default).unwrap();
    assert_ne!(again, again2);
    plugin.free(0, again, AllocKind::Default).unwrap();
    assert_eq!(plugin.alloc(0, 16, AllocKind::Default).unwrap(), again, "small blocks are cached");
    let host = plugin.alloc(0, 64, AllocKind::Host).unwrap();
    // SAFETY: pinned host memory of 64 bytes is ordinary host memory.
    unsafe { (host as usize as *mut u64).write(42) };
    plugin.free(0, host, AllocKind::Default).unwrap(); // freed with cuMemFreeHost whatever the kind
    let shared = plugin.alloc(0, 64, AllocKind::Shared).unwrap();
    plugin.free(0, shared, AllocKind::Shared).unwrap();

    // Both cubin generations load; the device environment is written.
    for file in ["extra/env_kernels.sm_90.cubin", "extra/env_kernels.sm_90.cuda12.cubin"] {
        let img = read(&d, file);
        assert!(plugin.is_compatible(&img) && plugin.is_device_compatible(0, &img), "{file}");
        let h = plugin.load_binary(0, &img).unwrap_or_else(|e| panic!("{file}: {e}"));
        let env_ptr = plugin.get_global(0, h, "__omp_rtl_device_environment", 48).unwrap();
        let mut env = DeviceEnvironment::default();
        // SAFETY: `env` is 48 writable bytes.
        unsafe { plugin.retrieve(0, &mut env as *mut _ as usize, env_ptr, 48).unwrap() };
        assert_eq!(
            env,
            DeviceEnvironment {
                device_debug_kind: 1,
                num_devices: 1,
                device_num: 0,
                dynamic_mem_size: 256,
                clock_frequency: 1_000_000_000,
                indirect_call_table: 0,
                indirect_call_table_size: 0,
                hardware_parallelism: 132 * 2048 / 32,
            },
            "{file}"
        );
        let err = plugin.get_global(0, h, "__omp_rtl_device_environment", 40).unwrap_err().to_string();
        assert!(err.contains("size mismatch (48 != 40)"), "{err}");
        assert!(plugin.get_global(0, h, "no_such_global", 4).is_err());
        assert!(plugin.get_function(0, h, "no_such_kernel").unwrap_err().to_string().contains("no_such_kernel"));

        // Kernel environments pick the mode and the grid (abi-reference §7.5).
        let generic = plugin.get_function(0, h, "k_generic").unwrap();
        let spmd_red = plugin.get_function(0, h, "k_spmd_red").unwrap();
        let generic_spmd = plugin.get_function(0, h, "k_generic_spmd").unwrap();
        let bare = plugin.get_function(0, h, "k_bare").unwrap();
        assert_eq!(plugin.kernel_environment(generic).unwrap().map(|e| e.exec_mode), Some(ExecMode::GENERIC));
        assert_eq!(plugin.kernel_environment(bare).unwrap(), None);
        let g = plugin.launch_grid(0, generic, &dims([0, 1, 1], [64, 1, 1])).unwrap();
        assert_eq!((g.blocks, g.threads), ([3200, 1, 1], [96, 1, 1]), "generic: default teams, + one warp");
        let g = plugin.launch_grid(0, generic_spmd, &dims([1, 1, 1], [0, 1, 1])).unwrap();
        assert_eq!((g.blocks, g.threads), ([1, 1, 1], [128, 1, 1]));
        let g = plugin.launch_grid(0, spmd_red, &LaunchDims { tripcount: 1000, ..dims([0, 1, 1], [0, 1, 1]) }).unwrap();
        assert_eq!((g.blocks, g.threads), ([32, 1, 1], [32, 1, 1]), "SPMD low trip count");

        // Bare: exactly the requested grid; ~0 passes through as dyn_ptr.
        plugin.launch(0, bare, "k_bare", &[u64::MAX, 7], &dims([3, 2, 1], [4, 1, 1])).unwrap();
        let l = last_launch(&log, "k_bare");
        assert!(l.contains("grid=(3,2,1) block=(4,1,1) shmem=256"), "{l}");
        assert!(l.ends_with("16B: 0xffffffffffffffff 0x7"), "{l}");
        // Too few argument bytes for the declared parameters.
        let err = plugin.launch(0, bare, "k_bare", &[u64::MAX], &dims([1, 1, 1], [1, 1, 1])).unwrap_err().to_string();
        assert!(err.contains("mismatch in kernel arguments"), "{err}");
        // More arguments than declared: the buffer size follows the declaration.
        plugin.launch(0, generic, "k_generic", &[u64::MAX, 1, 2], &dims([2, 1, 1], [32, 1, 1])).unwrap();
        let l = last_launch(&log, "k_generic");
        assert!(l.contains("grid=(2,1,1) block=(64,1,1)") && l.ends_with("8B: 0xffffffffffffffff"), "{l}");
        // Team reductions: dyn_ptr becomes a KernelLaunchEnvironment.
        plugin.launch(0, spmd_red, "k_spmd_red", &[u64::MAX, 5], &dims([4, 1, 1], [0, 1, 1])).unwrap();
        let l = last_launch(&log, "k_spmd_red");
        assert!(l.contains("grid=(4,1,1) block=(128,1,1)") && l.ends_with(" 0x5"), "{l}");
        assert!(!l.contains("0xffffffffffffffff"), "the launch environment replaces ~0: {l}");
        // Dynamic shared memory above the default limit.
        plugin.launch(0, bare, "k_bare", &[u64::MAX, 7], &LaunchDims { dyn_shared_bytes: 100_000, ..dims([1, 1, 1], [1, 1, 1]) }).unwrap();
        assert!(last_launch(&log, "k_bare").contains("shmem=100000"));
    }

    // The five test kernels' image: symbols and globals by name.
    let img = read(&d, "kernels/kernels.sm_90.cubin");
    let h = plugin.load_binary(0, &img).unwrap();
    for k in ["saxpy", "launch_dims", "read_global", "write_global", "many_args"] {
        let kh = plugin.get_function(0, h, k).unwrap();
        assert_eq!(plugin.kernel_environment(kh).unwrap(), None, "{k} is bare");
    }
    // A kernel the image lacks: an error naming it, for the
    // runtime to report as "Failed to load kernel"; the image stays usable.
    let err = plugin.get_function(0, h, "no_such_kernel").unwrap_err().to_string();
    assert!(err.contains("no_such_kernel"), "{err}");
    assert!(plugin.get_function(0, h, "saxpy").is_ok(), "the rest of the image still resolves");
    let gv = plugin.get_global(0, h, "g_value", 4).unwrap();
    let mut v = 0i32;
    // SAFETY: `v` is 4 writable bytes.
    unsafe { plugin.retrieve(0, &mut v as *mut i32 as usize, gv, 4).unwrap() };
    assert_eq!(v, 42, "initial value from the cubin");

    // Device global constructors run at load, in priority order (abi-reference §7.8).
    let h = plugin.load_binary(0, &read(&d, "extra/ctors.sm_90.cubin")).unwrap();
    let l = last_launch(&log, "nvptx$device$init");
    assert!(l.contains("grid=(1,1,1) block=(1,1,1)"), "the constructor kernel ran once: {l}");
    let mut range = [0u64; 2];
    for (i, name) in ["__init_array_start", "__init_array_end"].iter().enumerate() {
        let p = plugin.get_global(0, h, name, 8).unwrap();
        // SAFETY: 8 writable bytes.
        unsafe { plugin.retrieve(0, &mut range[i] as *mut u64 as usize, p, 8).unwrap() };
    }
    assert_eq!(range[1] - range[0], 24, "three constructors");
    let mut table = [0u64; 3];
    // SAFETY: 24 writable bytes; the buffer is a cached pool block, still device memory.
    unsafe { plugin.retrieve(0, table.as_mut_ptr() as usize, range[0], 24).unwrap() };
    assert_eq!(table, [0x1111, 0x1222, 0x3333], "priorities 101, 200, 65535");
    assert!(plugin.get_function(0, h, "k_after_ctors").is_ok());

    // PTX goes to the driver's JIT; the mock has none and says so.
    let err = plugin.load_binary(0, &read(&d, "kernels/kernels.sm_90.ptx")).unwrap_err().to_string();
    assert!(err.contains("cuModuleLoadDataEx") && err.contains("not supported"), "{err}");

    // An sm_80 image: identified, but not for this sm_90 device.
    let mut sm80 = img.clone();
    let flags = u32::from_le_bytes(sm80[48..52].try_into().unwrap());
    sm80[48..52].copy_from_slice(&((flags & !0xff00) | (80 << 8)).to_le_bytes());
    assert!(plugin.is_compatible(&sm80));
    assert!(!plugin.is_device_compatible(0, &sm80));
    let err = plugin.load_binary(0, &sm80).unwrap_err().to_string();
    assert!(err.contains("sm_80") && err.contains("sm_90"), "{err}");
    let _ = std::fs::remove_file(&log);
    println!("mock-cuda plugin path: all checks passed");
}
