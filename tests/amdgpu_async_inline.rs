//! The AMDGPU plugin's asynchronous methods against mock-hsa in its default
//! mode, where every copy and dispatch completes inside the call that
//! queues it and signal handlers run at once on the calling thread (the
//! mode the gpu-images harnesses use). `tests/amdgpu_async.rs` covers the
//! deferred mode.
//!
//! One test function: the environment must be set before the plugin reads
//! it, once per process. Without the images it prints `skipped: ...`.

use omptarget_rs::plugins::amdgpu::{AmdgpuPlugin, hsa};
use omptarget_rs::plugins::{AllocKind, LaunchDims, Plugin};
use std::path::{Path, PathBuf};

fn images() -> Option<PathBuf> {
    let dir = std::env::var_os("GPU_IMAGES_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/gpu-images"));
    if !dir.join("kernels/kernels.gfx90a.hsaco").exists() || !dir.join("kernels/kernels.emu.so").exists() {
        println!("skipped: gpu-images not built (run c-tests/gpu-images.sh; looked in {})", dir.display());
        return None;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("c-tests/amdgpu-images.sh");
    let out = std::process::Command::new("bash").arg(script).arg(&dir).output().expect("run c-tests/amdgpu-images.sh");
    assert!(out.status.success(), "c-tests/amdgpu-images.sh failed:\n{}", String::from_utf8_lossy(&out.stderr));
    if !dir.join("amdgpu/env_kernels.gfx90a.hsaco").exists() {
        println!("skipped: amdgpu/env_kernels.gfx90a.hsaco not built (needs clang-22)");
        return None;
    }
    Some(dir)
}

fn dims(teams: u32, threads: u32) -> LaunchDims {
    LaunchDims { teams: [teams, 1, 1], threads: [threads, 1, 1], dyn_shared_bytes: 0, tripcount: 0 }
}

#[test]
fn streams_against_inline_mock_hsa() {
    let Some(d) = images() else { return };
    let log = std::env::temp_dir().join(format!("omptarget-rs-amdgpu-async-inline-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let emu = format!("{}:{}", d.join("kernels/kernels.emu.so").display(), d.join("amdgpu/env_kernels.emu.so").display());
    // SAFETY: the only test in this binary; no other thread reads the environment.
    unsafe {
        std::env::set_var(hsa::LIBHSA_ENV, d.join("amdgpu/mock-hsa/libhsa-runtime64.so.1"));
        std::env::set_var("MOCK_HSA_EMU", emu);
        std::env::set_var("MOCK_HSA_LOG", &log);
        std::env::set_var("LIBOMPTARGET_AMDGPU_MAX_ASYNC_COPY_BYTES", "65536");
        for v in ["MOCK_HSA_DEFER", "MOCK_HSA_FAULT_KERNEL", "MOCK_HSA_TRAP_KERNEL", "MOCK_HSA_ISA", "MOCK_HSA_GPUS"] {
            std::env::remove_var(v);
        }
    }
    let p = AmdgpuPlugin::default();
    assert_eq!(p.number_of_devices(), 1);
    let kh = p.load_binary(0, &std::fs::read(d.join("kernels/kernels.gfx90a.hsaco")).unwrap()).unwrap();
    let saxpy = p.get_function(0, kh, "saxpy").unwrap();
    let eh = p.load_binary(0, &std::fs::read(d.join("amdgpu/env_kernels.gfx90a.hsaco")).unwrap()).unwrap();
    let spmd_red = p.get_function(0, eh, "k_spmd_red").unwrap();

    // Staged (4 KB) and locked (256 KB) transfers around a kernel, on two
    // streams ordered by an event, pinned memory on a third.
    for n in [1000usize, 64 * 1024] {
        let bytes = (n * 4) as u64;
        let (xd, yd) = (p.alloc(0, bytes, AllocKind::Default).unwrap(), p.alloc(0, bytes, AllocKind::Default).unwrap());
        let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let y = vec![1.0f32; n];
        let mut out = vec![0.0f32; n];
        let (qa, qb) = (p.queue_acquire(0).unwrap(), p.queue_acquire(0).unwrap());
        // SAFETY: the buffers outlive the synchronisations below.
        unsafe {
            p.submit_async(0, xd, x.as_ptr() as usize, bytes, qa).unwrap();
            p.submit_async(0, yd, y.as_ptr() as usize, bytes, qa).unwrap();
        }
        let ev = p.event_record(0, qa).unwrap();
        p.event_wait(0, ev, qb).unwrap();
        p.launch_async(0, saxpy, "saxpy", &[u64::MAX, yd, xd, u64::from(2.0f32.to_bits()), n as u64], &dims(8, 64), qb).unwrap();
        // SAFETY: as above.
        unsafe { p.retrieve_async(0, out.as_mut_ptr() as usize, yd, bytes, qb).unwrap() };
        assert!(p.queue_query(0, qb).unwrap(), "everything completed inline");
        assert_eq!(p.queue_pending_cleanups(0, qb).unwrap(), 0, "the query that found it done cleaned up");
        p.queue_synchronize(0, qa).unwrap();
        let bad = out.iter().enumerate().filter(|&(i, &v)| v != 2.0 * i as f32 + 1.0).count();
        assert_eq!(bad, 0, "{n} floats: {bad} wrong");
        p.event_release(0, ev);
        p.queue_release(0, qa);
        p.queue_release(0, qb);
        p.free(0, xd, AllocKind::Default).unwrap();
        p.free(0, yd, AllocKind::Default).unwrap();
    }
    let pinned = p.alloc(0, 64, AllocKind::Host).unwrap();
    let dev = p.alloc(0, 64, AllocKind::Default).unwrap();
    let q = p.queue_acquire(0).unwrap();
    // SAFETY: `pinned` is 64 bytes of host memory of this plugin.
    unsafe { (pinned as usize as *mut u64).write(77) };
    let mut back = 0u64;
    // SAFETY: `pinned` and `back` outlive the synchronisation below.
    unsafe {
        p.submit_async(0, dev, pinned as usize, 8, q).unwrap();
        p.retrieve_async(0, &mut back as *mut u64 as usize, dev, 8, q).unwrap();
    }
    // A launch environment on the stream.
    p.launch_async(0, spmd_red, "k_spmd_red", &[u64::MAX, dev], &dims(2, 0), q).unwrap();
    p.queue_synchronize(0, q).unwrap();
    assert_eq!(back, 77);
    let mut r = [0i64; 3];
    // SAFETY: `r` is 24 writable bytes.
    unsafe { p.retrieve(0, r.as_mut_ptr() as usize, dev, 24).unwrap() };
    assert!(r[1] != 0 && r[1] != -1 && r[2] != 0, "launch environment: {r:?}");
    p.queue_release(0, q);
    p.free(0, pinned, AllocKind::Host).unwrap();
    p.free(0, dev, AllocKind::Default).unwrap();

    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!text.contains("WARNING"), "mock-hsa found a problem:\n{text}");
    let _ = std::fs::remove_file(&log);
}
