//! The AMDGPU plugin's asynchronous methods (streams on HSA queues, events)
//! and device constructors/destructors, against mock-hsa in deferred mode
//! (`MOCK_HSA_DEFER=1`: dispatches and copies complete on a worker thread,
//! after their dependency signals, `MOCK_HSA_DEFER_US` after they start).
//! The mock's gate (`mock_hsa_defer_gate(0)`) holds all device work, so the
//! "nothing has happened yet" checks are deterministic.
//!
//! One test function: the environment must be set before the plugin reads
//! it, once per process. Without the images it prints `skipped: ...`.

use omptarget_rs::plugins::amdgpu::{AmdgpuPlugin, hsa};
use omptarget_rs::plugins::{AllocKind, LaunchDims, Plugin};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

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
    assert!(
        out.status.success(),
        "c-tests/amdgpu-images.sh failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    for f in ["amdgpu/env_kernels.gfx90a.hsaco", "amdgpu/ctor_kernels.gfx90a.hsaco"] {
        if !dir.join(f).exists() {
            println!("skipped: {f} not built (needs clang-22)");
            return None;
        }
    }
    Some(dir)
}

/// The mock's test hooks, from the library the plugin opened.
struct Mock {
    gate: unsafe extern "C" fn(i32),
    pending: unsafe extern "C" fn() -> i32,
}

impl Mock {
    fn open(path: &Path) -> Mock {
        // SAFETY: the mock's constructor-free library, already loaded by the plugin.
        let lib = Box::leak(Box::new(unsafe { libloading::Library::new(path) }.expect("open mock-hsa")));
        // SAFETY: the hooks' C signatures are as declared.
        unsafe {
            Mock {
                gate: *lib.get::<unsafe extern "C" fn(i32)>(b"mock_hsa_defer_gate\0").expect("mock_hsa_defer_gate"),
                pending: *lib.get::<unsafe extern "C" fn() -> i32>(b"mock_hsa_defer_pending\0").expect("mock_hsa_defer_pending"),
            }
        }
    }
    fn hold(&self) {
        // SAFETY: plain C call.
        unsafe { (self.gate)(0) }
    }
    fn run(&self) {
        // SAFETY: plain C call.
        unsafe { (self.gate)(1) }
    }
    fn pending(&self) -> i32 {
        // SAFETY: plain C call.
        unsafe { (self.pending)() }
    }
}

fn dims(teams: [u32; 3], threads: [u32; 3]) -> LaunchDims {
    LaunchDims { teams, threads, dyn_shared_bytes: 0, tripcount: 0 }
}

fn put<T: Copy>(p: &AmdgpuPlugin, dst: u64, v: &[T]) {
    // SAFETY: `v` is readable for its byte length.
    unsafe { p.submit(0, dst, v.as_ptr() as usize, size_of_val(v) as u64).unwrap() };
}

fn get<T: Copy + Default>(p: &AmdgpuPlugin, src: u64, n: usize) -> Vec<T> {
    let mut v = vec![T::default(); n];
    // SAFETY: `v` is writable for its byte length.
    unsafe { p.retrieve(0, v.as_mut_ptr() as usize, src, size_of_val(v.as_slice()) as u64).unwrap() };
    v
}

/// Equal, or a message naming the first difference (not the whole buffers).
fn check_eq(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    if let Some(i) = got.iter().zip(want).position(|(a, b)| a != b) {
        panic!(
            "{what}: element {i} is {}, expected {} ({} of {} differ)",
            got[i],
            want[i],
            got.iter().zip(want).filter(|(a, b)| a != b).count(),
            got.len()
        );
    }
}

fn query_until_done(p: &AmdgpuPlugin, q: u64) {
    let t0 = Instant::now();
    while !p.queue_query(0, q).unwrap() {
        assert!(t0.elapsed() < Duration::from_secs(30), "queued work did not complete");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Queues x → device, y → device, saxpy (y = a·x + y), y → `out` on `q`.
/// # Safety
/// `x`, `y` and `out` must stay alive and untouched until `q` completes.
#[allow(clippy::too_many_arguments)] // A test helper; a struct would only rename the list.
unsafe fn saxpy_round(p: &AmdgpuPlugin, q: u64, k: u64, xd: u64, yd: u64, x: &[f32], y: &[f32], out: &mut [f32], a: f32) {
    let bytes = size_of_val(x) as u64;
    // SAFETY: the caller keeps the buffers alive until `q` completes.
    unsafe {
        p.submit_async(0, xd, x.as_ptr() as usize, bytes, q).unwrap();
        p.submit_async(0, yd, y.as_ptr() as usize, bytes, q).unwrap();
        p.launch_async(0, k, "saxpy", &[u64::MAX, yd, xd, u64::from(a.to_bits()), x.len() as u64], &dims([8, 1, 1], [64, 1, 1]), q)
            .unwrap();
        p.retrieve_async(0, out.as_mut_ptr() as usize, yd, bytes, q).unwrap();
    }
}

#[test]
fn streams_and_events_against_deferred_mock_hsa() {
    let Some(d) = images() else { return };
    let log = std::env::temp_dir().join(format!("omptarget-rs-amdgpu-async-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let mock_lib = d.join("amdgpu/mock-hsa/libhsa-runtime64.so.1");
    let emu = [d.join("kernels/kernels.emu.so"), d.join("amdgpu/env_kernels.emu.so"), d.join("amdgpu/ctor_kernels.emu.so")];
    let emu: Vec<String> = emu.iter().map(|p| p.display().to_string()).collect();
    // The mock's worker thread starts with the first queued work.
    // SAFETY: the only test in this binary; no other thread reads the environment yet.
    unsafe {
        std::env::set_var(hsa::LIBHSA_ENV, &mock_lib);
        std::env::set_var("MOCK_HSA_DEFER", "1");
        std::env::set_var("MOCK_HSA_DEFER_US", "500");
        std::env::set_var("MOCK_HSA_EMU", emu.join(":"));
        std::env::set_var("MOCK_HSA_LOG", &log);
        std::env::set_var("LIBOMPTARGET_AMDGPU_MAX_ASYNC_COPY_BYTES", "65536");
        // Report GPU errors as errors of the wait instead of aborting like 22.1.
        std::env::set_var("OMPTARGET_RS_AMDGPU_ABORT_ON_GPU_ERROR", "0");
        for v in ["MOCK_HSA_FAULT_KERNEL", "MOCK_HSA_ISA", "MOCK_HSA_GPUS", "MOCK_HSA_INIT_FAIL", "OMP_NUM_TEAMS", "OMP_TEAMS_THREAD_LIMIT"]
        {
            std::env::remove_var(v);
        }
    }
    let p = AmdgpuPlugin::default();
    assert!(p.has_queues());
    assert_eq!(p.number_of_devices(), 1);
    let mock = Mock::open(&mock_lib);

    let kh = p.load_binary(0, &std::fs::read(d.join("kernels/kernels.gfx90a.hsaco")).unwrap()).unwrap();
    let saxpy = p.get_function(0, kh, "saxpy").unwrap();
    let eh = p.load_binary(0, &std::fs::read(d.join("amdgpu/env_kernels.gfx90a.hsaco")).unwrap()).unwrap();
    let spmd_red = p.get_function(0, eh, "k_spmd_red").unwrap();
    let bare = p.get_function(0, eh, "k_bare").unwrap();

    // 1. copy → kernel → copy on one stream, staged (4 KB) and locked (256 KB).
    for n in [1000usize, 64 * 1024] {
        let bytes = (n * 4) as u64;
        let (xd, yd) = (p.alloc(0, bytes, AllocKind::Default).unwrap(), p.alloc(0, bytes, AllocKind::Default).unwrap());
        let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let y = vec![1.0f32; n];
        let mut out = vec![-1.0f32; n];
        let want: Vec<f32> = (0..n).map(|i| 2.0 * i as f32 + 1.0).collect();
        let q = p.queue_acquire(0).unwrap();
        mock.hold();
        // SAFETY: the buffers outlive the synchronisation below.
        unsafe { saxpy_round(&p, q, saxpy, xd, yd, &x, &y, &mut out, 2.0) };
        assert!(mock.pending() >= 3, "the copies and the dispatch wait in the mock");
        assert!(!p.queue_query(0, q).unwrap(), "{n}: query while the work is held");
        assert!(p.queue_pending_cleanups(0, q).unwrap() >= 2, "{n}: staging/lock and kernarg buffers are held");
        // SAFETY: reading our own buffer's elements; the device side has not started.
        assert!(out.iter().all(|v| unsafe { std::ptr::read_volatile(v) } == -1.0), "{n}: host buffer written before completion");
        mock.run();
        if n == 1000 {
            query_until_done(&p, q);
        } else {
            p.queue_synchronize(0, q).unwrap();
        }
        check_eq(&out, &want, &format!("{n} floats"));
        assert_eq!(p.queue_pending_cleanups(0, q).unwrap(), 0, "clean-up ran at completion");
        assert!(p.queue_query(0, q).unwrap());
        p.queue_synchronize(0, q).unwrap();
        p.queue_release(0, q);
        assert!(p.queue_query(0, q).is_err(), "a released handle is refused");
        p.free(0, xd, AllocKind::Default).unwrap();
        p.free(0, yd, AllocKind::Default).unwrap();
    }

    // 2. An event of stream A orders stream B's kernel after A's copy.
    let n = 4096usize;
    let bytes = (n * 4) as u64;
    let (xd, yd) = (p.alloc(0, bytes, AllocKind::Default).unwrap(), p.alloc(0, bytes, AllocKind::Default).unwrap());
    put(&p, xd, &vec![0.0f32; n]);
    put(&p, yd, &vec![1.0f32; n]);
    let x: Vec<f32> = (0..n).map(|i| (i % 100) as f32).collect();
    let mut out = vec![0.0f32; n];
    let (qa, qb) = (p.queue_acquire(0).unwrap(), p.queue_acquire(0).unwrap());
    assert_ne!(qa, qb);
    mock.hold();
    // SAFETY: `x` and `out` outlive the synchronisations below.
    unsafe { p.submit_async(0, xd, x.as_ptr() as usize, bytes, qa).unwrap() };
    let ev = p.event_record(0, qa).unwrap();
    p.event_wait(0, ev, qb).unwrap();
    p.launch_async(0, saxpy, "saxpy", &[u64::MAX, yd, xd, u64::from(3.0f32.to_bits()), n as u64], &dims([4, 1, 1], [64, 1, 1]), qb)
        .unwrap();
    // SAFETY: as above.
    unsafe { p.retrieve_async(0, out.as_mut_ptr() as usize, yd, bytes, qb).unwrap() };
    p.event_release(0, ev); // the streams keep what they wait for
    assert!(!p.queue_query(0, qb).unwrap());
    mock.run();
    p.queue_synchronize(0, qb).unwrap();
    let want: Vec<f32> = x.iter().map(|v| 3.0 * v + 1.0).collect();
    check_eq(&out, &want, "B's kernel ran after A's copy");
    p.queue_synchronize(0, qa).unwrap();
    assert!(p.event_wait(0, ev, qb).is_err(), "a released event is refused");
    // An event recorded on an idle stream is already complete.
    let idle = p.event_record(0, qa).unwrap();
    p.event_wait(0, idle, qb).unwrap();
    p.queue_synchronize(0, qb).unwrap();
    p.event_release(0, idle);
    p.queue_release(0, qa);
    p.queue_release(0, qb);

    // 3. Kernarg and launch-environment buffers live until completion: four
    // launches held in the mock each keep their own.
    let outs: Vec<u64> = (0..4).map(|_| p.alloc(0, 64, AllocKind::Default).unwrap()).collect();
    for &o in &outs {
        put(&p, o, &[0i64; 8]);
    }
    let q = p.queue_acquire(0).unwrap();
    mock.hold();
    p.launch_async(0, spmd_red, "k_spmd_red", &[u64::MAX, outs[0]], &dims([2, 1, 1], [0, 1, 1]), q).unwrap();
    p.launch_async(0, spmd_red, "k_spmd_red", &[u64::MAX, outs[1]], &dims([2, 1, 1], [0, 1, 1]), q).unwrap();
    p.launch_async(0, bare, "k_bare", &[outs[2], 100], &dims([3, 1, 1], [1, 1, 1]), q).unwrap();
    p.launch_async(0, bare, "k_bare", &[outs[3], 200], &dims([3, 1, 1], [1, 1, 1]), q).unwrap();
    // Per reduction launch: reduction buffer, launch environment, its staging
    // buffer, kernarg; per bare launch: kernarg.
    assert_eq!(p.queue_pending_cleanups(0, q).unwrap(), 10);
    mock.run();
    // Synchronised from another thread than the one that queued.
    std::thread::scope(|s| s.spawn(|| p.queue_synchronize(0, q).unwrap()).join().unwrap());
    assert_eq!(p.queue_pending_cleanups(0, q).unwrap(), 0);
    let r0: Vec<i64> = get(&p, outs[0], 3);
    let r1: Vec<i64> = get(&p, outs[1], 3);
    assert!(r0[1] != -1 && r0[1] != 0 && r0[2] != 0, "launch environment: {r0:?}");
    assert!(r1[1] != -1 && r1[1] != 0 && r1[2] != 0, "launch environment: {r1:?}");
    assert_ne!(r0[1], r1[1], "each queued launch has its own launch environment");
    assert_ne!(r0[2], r1[2], "... and its own reduction buffer");
    assert_eq!(get::<i64>(&p, outs[2], 3), [100, 101, 102], "first bare launch kept its kernarg buffer");
    assert_eq!(get::<i64>(&p, outs[3], 3), [200, 201, 202]);
    p.queue_release(0, q);

    // 4. Stream reuse after release, and handle checks.
    let q2 = p.queue_acquire(0).unwrap();
    let n = 256usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let y = vec![0.5f32; n];
    let mut out = vec![0.0f32; n];
    // SAFETY: the buffers outlive the synchronisation below.
    unsafe { saxpy_round(&p, q2, saxpy, xd, yd, &x, &y, &mut out, -1.0) };
    p.queue_synchronize(0, q2).unwrap();
    check_eq(&out, &x.iter().map(|v| 0.5 - v).collect::<Vec<f32>>(), "reused stream");
    assert!(p.queue_synchronize(0, 12345).is_err());
    assert!(p.queue_synchronize(1, q2).is_err(), "another device's handle");
    assert!(p.event_wait(0, 0xE5 << 56, q2).is_err());
    p.event_release(0, 777); // ignored
    p.queue_release(0, q2);

    // 5. Device constructors at load, destructors at unload.
    let ch = p.load_binary(0, &std::fs::read(d.join("amdgpu/ctor_kernels.gfx90a.hsaco")).unwrap()).unwrap();
    let (g_log, g_count) = (p.get_global(0, ch, "g_log", 16).unwrap(), p.get_global(0, ch, "g_count", 4).unwrap());
    assert_eq!(get::<i32>(&p, g_count, 1), [1], "amdgcn.device.init ran once at load");
    assert_eq!(get::<i32>(&p, g_log, 2), [11, 0]);
    let count = p.get_function(0, ch, "k_count").unwrap();
    p.launch(0, count, "k_count", &[outs[0]], &dims([1, 1, 1], [1, 1, 1])).unwrap();
    assert_eq!(get::<i32>(&p, outs[0], 1), [1]);
    p.unload_binary(0, ch).unwrap();
    assert_eq!(get::<i32>(&p, g_log, 2), [11, 12], "amdgcn.device.fini ran at unload");
    assert!(p.get_function(0, ch, "k_count").is_err(), "an unloaded image is refused");
    assert!(p.launch(0, count, "k_count", &[outs[0]], &dims([1, 1, 1], [1, 1, 1])).is_err(), "kernels of an unloaded image too");
    assert!(p.unload_binary(0, ch).is_err());
    p.unload_binary(0, kh).unwrap(); // no destructors: just unloaded
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let order: Vec<&str> = text.lines().filter(|l| l.starts_with("launch amdgcn.device.")).collect();
    assert_eq!(order.len(), 2, "{text}");
    assert!(order[0].starts_with("launch amdgcn.device.init grid=(1,1,1) block=(1,1,1)"), "{}", order[0]);
    assert!(order[1].starts_with("launch amdgcn.device.fini grid=(1,1,1) block=(1,1,1)"), "{}", order[1]);

    // 6. A memory fault in queued work surfaces at synchronize with the kernel name.
    let kh = p.load_binary(0, &std::fs::read(d.join("kernels/kernels.gfx90a.hsaco")).unwrap()).unwrap();
    let saxpy = p.get_function(0, kh, "saxpy").unwrap();
    let q = p.queue_acquire(0).unwrap();
    mock.hold();
    // SAFETY: the mock's worker is held (it reads the variable only when running a dispatch).
    unsafe { std::env::set_var("MOCK_HSA_FAULT_KERNEL", "saxpy") };
    // SAFETY: the buffers outlive the synchronisation below.
    unsafe { saxpy_round(&p, q, saxpy, xd, yd, &x, &y, &mut out, 1.0) };
    assert!(!p.queue_query(0, q).unwrap());
    mock.run();
    let err = p.queue_synchronize(0, q).unwrap_err().to_string();
    assert!(
        err.contains(
            "memory access fault by GPU (agent 0x2000) at virtual address 0xdead000 while running kernel 'saxpy'. Reasons: Page not present"
        ),
        "{err}"
    );
    assert_eq!(p.queue_synchronize(0, q).unwrap_err().to_string(), err, "the stream keeps its error");
    assert_eq!(p.queue_query(0, q).unwrap_err().to_string(), err);
    p.queue_release(0, q);
    let q = p.queue_acquire(0).unwrap();
    p.queue_synchronize(0, q).unwrap();
    p.queue_release(0, q);

    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!text.contains("WARNING"), "mock-hsa found a problem:\n{text}");
    let _ = std::fs::remove_file(&log);
}
