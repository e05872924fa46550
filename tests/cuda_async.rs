//! The CUDA plugin's asynchronous queues and events, and its device
//! destructors, against mock-cuda-async (c-tests/mock-cuda-async): a layer
//! over gpu-images' mock-cuda that runs stream work only when something
//! waits for it, so a missing synchronisation shows up as missing data.
//!
//! Checked: queued copies and launches (a real cubin's kernel, emulated on
//! the CPU) leave host memory alone until `queue_synchronize`; `queue_query`
//! says false while the stream is not ready; an event recorded on queue A and
//! waited for on queue B orders B's work after A's (and only up to the
//! event); launch environments stay allocated until the queue completed;
//! queued failures surface at synchronize/query; queues and events are
//! pooled, their handles checked; work can be enqueued and waited for from
//! threads that never touched the device (the layer refuses work on threads
//! without a current context); peer access between two devices is asked for
//! and enabled once per pair, with device-to-device copies otherwise (the
//! layer presents two devices); destructors run with their pointers in
//! priority order at `unload_binary`, which also unloads the module.
//!
//! One test function: the environment must be set before the plugin reads
//! it, once per process. Without the images it prints
//! `skipped: gpu-images not built`; without a C compiler
//! `skipped: no C compiler ...`.

use omptarget_rs::plugins::cuda::{CudaPlugin, driver};
use omptarget_rs::plugins::{AllocKind, LaunchDims, Plugin};
use std::os::raw::c_ulong;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `struct mock_async_stats` of mock_cuda_async.c.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
struct Stats {
    deferred: c_ulong,
    executed: c_ulong,
    dropped: c_ulong,
    pending: c_ulong,
    not_ready: c_ulong,
    waits: c_ulong,
    unloads: c_ulong,
    warnings: c_ulong,
    streams: c_ulong,
    events: c_ulong,
    no_context: c_ulong,
    peer_queries: c_ulong,
    peer_enables: c_ulong,
    peer_copies: c_ulong,
    dtod_copies: c_ulong,
}

struct Shim {
    lib: libloading::Library,
}

impl Shim {
    fn stats(&self) -> Stats {
        let mut s = Stats::default();
        // SAFETY: the symbol has this signature in mock_cuda_async.c and fills the struct mirrored above.
        unsafe {
            let f = self.lib.get::<unsafe extern "C" fn(*mut Stats)>(b"mock_async_get_stats\0").expect("mock_async_get_stats");
            f(&mut s);
        }
        s
    }
}

fn images() -> Option<PathBuf> {
    let dir = std::env::var_os("GPU_IMAGES_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/gpu-images"));
    let need = ["mock-cuda/libcuda.so.1", "kernels/kernels.sm_90.cubin", "kernels/kernels.emu.so", "extra/env_kernels.sm_90.cubin"];
    if need.iter().all(|f| dir.join(f).exists()) {
        Some(dir)
    } else {
        println!("skipped: gpu-images not built (run c-tests/gpu-images.sh; looked in {})", dir.display());
        None
    }
}

/// Builds the layer with c-tests/mock-cuda-async/build.sh; `None`: no compiler.
fn build_shim(images: &Path) -> Option<PathBuf> {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("mock-cuda-async-{}", std::process::id()));
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("c-tests/mock-cuda-async/build.sh");
    let r = match Command::new("bash").arg(&script).arg(&out).arg(images.join("mock-cuda/libcuda.so.1")).output() {
        Ok(r) => r,
        Err(e) => {
            println!("skipped: cannot run bash to build mock-cuda-async: {e}");
            return None;
        }
    };
    if r.status.code() == Some(3) {
        println!("skipped: no C compiler to build mock-cuda-async");
        return None;
    }
    assert!(
        r.status.success(),
        "building mock-cuda-async failed:\n{}{}",
        String::from_utf8_lossy(&r.stdout),
        String::from_utf8_lossy(&r.stderr)
    );
    // The lookup order the layer relies on.
    let check = Command::new(out.join("lookup_check"))
        .arg(out.join("libcuda-async.so"))
        .arg(images.join("mock-cuda/libcuda.so.1"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&check.stdout);
    assert!(check.status.success() && text.contains("lookup order: ok"), "{text}");
    Some(out.join("libcuda-async.so"))
}

fn dims(teams: [u32; 3], threads: [u32; 3]) -> LaunchDims {
    LaunchDims { teams, threads, dyn_shared_bytes: 0, tripcount: 0 }
}

/// The launch lines of the mock's log naming `kernel`.
fn launches(log: &Path, kernel: &str) -> Vec<String> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines().filter(|l| l.starts_with(&format!("launch {kernel} "))).map(str::to_string).collect()
}

/// The parameter slots of a launch line (`...=16B: 0x1 0x2`).
fn params(line: &str) -> Vec<u64> {
    let tail = line.rsplit_once("B:").map(|x| x.1).unwrap_or("");
    tail.split_whitespace().map(|w| u64::from_str_radix(w.trim_start_matches("0x"), 16).unwrap_or(0)).collect()
}

fn set_env(name: &str, value: Option<&str>) {
    // SAFETY: the single test of this binary changes the environment only while no other thread of it runs (scoped threads have joined).
    unsafe {
        match value {
            Some(v) => std::env::set_var(name, v),
            None => std::env::remove_var(name),
        }
    }
}

fn floats(bytes: &[f32]) -> usize {
    bytes.as_ptr() as usize
}

#[test]
fn queues_events_and_destructors_against_a_deferring_driver() {
    let Some(d) = images() else { return };
    let Some(shim_path) = build_shim(&d) else { return };
    let log = std::env::temp_dir().join(format!("omptarget-rs-cuda-async-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&log);
    set_env(driver::LIBCUDA_ENV, Some(shim_path.to_str().unwrap()));
    set_env("MOCK_CUDA_EMU", Some(d.join("kernels/kernels.emu.so").to_str().unwrap()));
    set_env("MOCK_CUDA_LOG", Some(log.to_str().unwrap()));
    set_env("MOCK_ASYNC_DEVICES", Some("2"));
    for v in
        ["MOCK_ASYNC_NOT_READY", "MOCK_ASYNC_FAIL_KERNEL", "MOCK_ASYNC_PEER", "MOCK_CUDA_SM", "OMP_NUM_TEAMS", "OMP_TEAMS_THREAD_LIMIT"]
    {
        set_env(v, None);
    }

    let plugin = CudaPlugin::default();
    assert!(plugin.has_queues());
    assert_eq!(plugin.number_of_devices(), 2, "MOCK_ASYNC_DEVICES=2 (both backed by mock-cuda's one)");
    // SAFETY: the plugin opened this library already; opening it again only takes a reference and runs no initialiser.
    let shim = Shim { lib: unsafe { libloading::Library::new(&shim_path) }.unwrap() };

    let kernels = plugin.load_binary(0, &std::fs::read(d.join("kernels/kernels.sm_90.cubin")).unwrap()).unwrap();
    let saxpy = plugin.get_function(0, kernels, "saxpy").unwrap();
    let env_img = plugin.load_binary(0, &std::fs::read(d.join("extra/env_kernels.sm_90.cubin")).unwrap()).unwrap();
    let spmd_red = plugin.get_function(0, env_img, "k_spmd_red").unwrap();
    let bare = plugin.get_function(0, env_img, "k_bare").unwrap();

    // --- Copies and a launch are queued, not run, until synchronize. ---------
    let n = 1000usize;
    let bytes = (n * 4) as u64;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let y = vec![2.0f32; n];
    let mut out = vec![-1.0f32; n];
    let dx = plugin.alloc(0, bytes, AllocKind::Default).unwrap();
    let dy = plugin.alloc(0, bytes, AllocKind::Default).unwrap();
    let q = plugin.queue_acquire(0).unwrap();
    let before = shim.stats();
    // SAFETY: `x`, `y` and `out` live, unread by the host, until the queue is synchronised below.
    unsafe {
        plugin.submit_async(0, dx, floats(&x), bytes, q).unwrap();
        plugin.submit_async(0, dy, floats(&y), bytes, q).unwrap();
    }
    let a = 3.0f32;
    plugin
        .launch_async(0, saxpy, "saxpy", &[u64::MAX, dy, dx, u64::from(a.to_bits()), n as u64], &dims([4, 1, 1], [128, 1, 1]), q)
        .unwrap();
    // SAFETY: as above.
    unsafe { plugin.retrieve_async(0, out.as_mut_ptr() as usize, dy, bytes, q).unwrap() };
    let queued = shim.stats();
    assert_eq!(queued.deferred - before.deferred, 4, "two copies, a launch and a copy back are queued");
    assert_eq!(queued.pending, 4, "nothing ran yet");
    assert!(launches(&log, "saxpy").is_empty(), "the kernel has not run");
    assert!(out.iter().all(|&v| v == -1.0), "host buffer unchanged before synchronize");
    plugin.queue_synchronize(0, q).unwrap();
    assert_eq!(shim.stats().pending, 0);
    let want: Vec<f32> = (0..n).map(|i| a * i as f32 + 2.0).collect();
    assert_eq!(out, want, "a*x + y after synchronize");
    assert_eq!(launches(&log, "saxpy").len(), 1);

    // --- Query: not ready, not ready, done; from another host thread. -------
    set_env("MOCK_ASYNC_NOT_READY", Some("2"));
    let mut back = vec![0f32; n];
    // SAFETY: `x` and `back` live until the queue is seen complete below.
    unsafe {
        plugin.submit_async(0, dy, floats(&x), bytes, q).unwrap();
        plugin.retrieve_async(0, back.as_mut_ptr() as usize, dy, bytes, q).unwrap();
    }
    let answers: Vec<bool> =
        std::thread::scope(|s| s.spawn(|| (0..3).map(|_| plugin.queue_query(0, q).unwrap()).collect()).join().unwrap());
    assert_eq!(answers, [false, false, true], "NOT_READY twice, then complete");
    assert_eq!(back, x);
    assert!(plugin.queue_query(0, q).unwrap(), "nothing queued: complete");
    set_env("MOCK_ASYNC_NOT_READY", None);
    // Enqueue and synchronise on a thread that never made the context current.
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut again = vec![0f32; n];
            // SAFETY: `y` and `again` live until the synchronize on this thread.
            unsafe {
                plugin.submit_async(0, dx, floats(&y), bytes, q).unwrap();
                plugin.retrieve_async(0, again.as_mut_ptr() as usize, dx, bytes, q).unwrap();
            }
            plugin.queue_synchronize(0, q).unwrap();
            assert_eq!(again, y);
        });
    });
    assert_eq!(shim.stats().no_context, 0, "every thread got the device's context");
    let err = plugin.queue_query(1, q).unwrap_err().to_string();
    assert!(err.contains("belongs to device 0, not 1"), "{err}");

    // --- Events order queue B after queue A, up to the event. ---------------
    let qa = q;
    let qb = plugin.queue_acquire(0).unwrap();
    assert_ne!(qa, qb);
    let first: Vec<f32> = (0..n).map(|i| (i * 3) as f32).collect();
    let later = vec![9.0f32; n];
    let mut seen = vec![0f32; n];
    // SAFETY: the buffers live until both queues are synchronised below.
    let ev = unsafe {
        plugin.submit_async(0, dx, floats(&first), bytes, qa).unwrap();
        let ev = plugin.event_record(0, qa).unwrap();
        plugin.submit_async(0, dy, floats(&later), bytes, qa).unwrap(); // after the event
        plugin.event_wait(0, ev, qb).unwrap();
        plugin.retrieve_async(0, seen.as_mut_ptr() as usize, dx, bytes, qb).unwrap();
        ev
    };
    let waits = shim.stats().waits;
    plugin.queue_synchronize(0, qb).unwrap();
    assert_eq!(seen, first, "B's copy ran after A's work up to the event");
    assert_eq!(shim.stats().waits, waits + 1);
    assert_eq!(shim.stats().pending, 1, "A's work after the event is still queued");
    plugin.queue_synchronize(0, qa).unwrap();
    assert_eq!(shim.stats().pending, 0);
    plugin.event_release(0, ev);
    let err = plugin.event_wait(0, ev, qb).unwrap_err().to_string();
    assert!(err.contains("unknown event handle"), "a released event: {err}");
    // The pooled event is recorded again by the next user.
    let events = shim.stats().events;
    let ev2 = plugin.event_record(0, qb).unwrap();
    assert_eq!(shim.stats().events, events, "the event came from the pool");
    assert_ne!(ev2, ev, "a new handle for the reused event");
    plugin.event_release(0, ev2);

    // --- Launch environments live until the queue completed. ----------------
    let kernel_lines = launches(&log, "k_spmd_red").len();
    plugin.launch_async(0, spmd_red, "k_spmd_red", &[u64::MAX, 5], &dims([4, 1, 1], [0, 1, 1]), qa).unwrap();
    assert_eq!(launches(&log, "k_spmd_red").len(), kernel_lines, "queued, not run");
    // While the launch is queued, its buffers must not be handed out again.
    let p_small = plugin.alloc(0, 16, AllocKind::Default).unwrap();
    let p_red = plugin.alloc(0, 8 * 1024, AllocKind::Default).unwrap();
    plugin.queue_synchronize(0, qa).unwrap();
    let line = launches(&log, "k_spmd_red").pop().unwrap();
    assert!(line.contains("grid=(4,1,1) block=(128,1,1)"), "{line}");
    let p = params(&line);
    let kle = p[0];
    assert_eq!(p[1], 5);
    assert!(kle != u64::MAX && kle != p_small && kle != p_red, "the launch environment was still in use: {line}");
    let mut env = [0u64; 2];
    // SAFETY: 16 writable bytes; the block is cached by the pool, still device memory.
    unsafe { plugin.retrieve(0, env.as_mut_ptr() as usize, kle, 16).unwrap() };
    let buffer = env[1];
    assert_eq!(env[0], 0, "ReductionCnt and ReductionIterCnt");
    assert!(buffer != 0 && buffer != p_small && buffer != p_red, "the reduction buffer was still in use");
    // Completed: both go back to the pool and are handed out next.
    assert_eq!(plugin.alloc(0, 16, AllocKind::Default).unwrap(), kle, "the launch environment was freed after completion");
    assert_eq!(plugin.alloc(0, 8 * 1024, AllocKind::Default).unwrap(), buffer, "the reduction buffer was freed after completion");
    // The synchronous launch still waits and frees.
    plugin.launch(0, spmd_red, "k_spmd_red", &[u64::MAX, 6], &dims([2, 1, 1], [0, 1, 1])).unwrap();
    let line = launches(&log, "k_spmd_red").pop().unwrap();
    assert_eq!(params(&line)[1], 6, "the synchronous launch ran before returning: {line}");

    // --- Failures of queued work surface at synchronize and query. ----------
    let err = plugin.launch_async(0, bare, "k_bare", &[u64::MAX], &dims([1, 1, 1], [1, 1, 1]), qb).unwrap_err().to_string();
    assert!(err.contains("mismatch in kernel arguments"), "an enqueue error comes back at once: {err}");
    set_env("MOCK_ASYNC_FAIL_KERNEL", Some("k_bare"));
    plugin.launch_async(0, bare, "k_bare", &[u64::MAX, 7], &dims([1, 1, 1], [1, 1, 1]), qb).unwrap();
    let err = plugin.queue_synchronize(0, qb).unwrap_err().to_string();
    assert!(err.contains("cuStreamSynchronize") && err.contains("unspecified launch failure"), "{err}");
    let streams = shim.stats().streams;
    plugin.queue_release(0, qb);
    assert_eq!(shim.stats().streams, streams - 1, "a failed stream is destroyed, not pooled");
    let qc = plugin.queue_acquire(0).unwrap();
    plugin.launch_async(0, bare, "k_bare", &[u64::MAX, 8], &dims([1, 1, 1], [1, 1, 1]), qc).unwrap();
    let err = plugin.queue_query(0, qc).unwrap_err().to_string();
    assert!(err.contains("cuStreamQuery") && err.contains("unspecified launch failure"), "{err}");
    plugin.queue_release(0, qc);
    set_env("MOCK_ASYNC_FAIL_KERNEL", None);

    // --- Release and reuse. -------------------------------------------------
    plugin.queue_release(0, qa);
    let err = plugin.queue_synchronize(0, qa).unwrap_err().to_string();
    assert!(err.contains("unknown queue handle"), "a released queue: {err}");
    let streams = shim.stats().streams;
    let qd = plugin.queue_acquire(0).unwrap();
    assert_ne!(qd, qa, "a new handle");
    assert_eq!(shim.stats().streams, streams, "the pooled stream is reused");
    let fresh: Vec<f32> = (0..n).map(|i| -(i as f32)).collect();
    // SAFETY: `fresh` lives until the release below waited for the queue.
    unsafe { plugin.submit_async(0, dx, floats(&fresh), bytes, qd).unwrap() };
    plugin.queue_release(0, qd); // with queued work: waits for it
    assert_eq!(shim.stats().pending, 0);
    let mut check = vec![0f32; n];
    // SAFETY: `check` holds `bytes` writable bytes.
    unsafe { plugin.retrieve(0, check.as_mut_ptr() as usize, dx, bytes).unwrap() };
    assert_eq!(check, fresh);
    assert_eq!(plugin.live_async_handles(), (0, 0), "every queue and event was released");

    // --- Several host threads, one queue each, at once. ---------------------
    std::thread::scope(|s| {
        for t in 0..4u32 {
            let plugin = &plugin;
            s.spawn(move || {
                let m = 256usize;
                let b = (m * 4) as u64;
                let (px, py) = (plugin.alloc(0, b, AllocKind::Default).unwrap(), plugin.alloc(0, b, AllocKind::Default).unwrap());
                for round in 0..10u32 {
                    let q = plugin.queue_acquire(0).unwrap();
                    let xs: Vec<f32> = (0..m).map(|i| (i as u32 + t) as f32).collect();
                    let ys = vec![round as f32; m];
                    let mut res = vec![0f32; m];
                    // SAFETY: the buffers live until the queue is seen complete below.
                    unsafe {
                        plugin.submit_async(0, px, floats(&xs), b, q).unwrap();
                        plugin.submit_async(0, py, floats(&ys), b, q).unwrap();
                        let args = [u64::MAX, py, px, u64::from(2.0f32.to_bits()), m as u64];
                        plugin.launch_async(0, saxpy, "saxpy", &args, &dims([2, 1, 1], [64, 1, 1]), q).unwrap();
                        plugin.retrieve_async(0, res.as_mut_ptr() as usize, py, b, q).unwrap();
                    }
                    if round % 2 == 0 {
                        plugin.queue_synchronize(0, q).unwrap();
                    } else {
                        while !plugin.queue_query(0, q).unwrap() {}
                    }
                    plugin.queue_release(0, q);
                    let want: Vec<f32> = xs.iter().map(|x| 2.0 * x + round as f32).collect();
                    assert_eq!(res, want, "thread {t} round {round}");
                }
                plugin.free(0, px, AllocKind::Default).unwrap();
                plugin.free(0, py, AllocKind::Default).unwrap();
            });
        }
    });
    assert_eq!(plugin.live_async_handles(), (0, 0));
    assert_eq!(shim.stats().no_context, 0);
    for p in [dx, dy] {
        plugin.free(0, p, AllocKind::Default).unwrap();
    }

    // --- omp_target_is_accessible: 22.1's CUDA plugin says no, even for its own pinned and managed memory.
    for kind in [AllocKind::Host, AllocKind::Shared] {
        let p = plugin.alloc(0, 64, kind).unwrap();
        assert!(!plugin.is_accessible(0, p as usize, 64), "{kind:?}");
        plugin.free(0, p, kind).unwrap();
    }

    // --- Two devices: peer access decided once per pair, as in 22.1. --------
    set_env("MOCK_ASYNC_PEER", Some("1"));
    let (a0, b0) = (plugin.alloc(0, 64, AllocKind::Default).unwrap(), plugin.alloc(0, 64, AllocKind::Default).unwrap());
    let a1 = plugin.alloc(1, 64, AllocKind::Default).unwrap();
    let data: Vec<u8> = (0..64).collect();
    // SAFETY: `data` holds 64 readable bytes.
    unsafe { plugin.submit(0, a0, data.as_ptr() as usize, 64).unwrap() };
    let s0 = shim.stats();
    plugin.exchange(0, a0, 1, a1, 64).unwrap();
    plugin.exchange(0, a0, 1, a1, 64).unwrap();
    let s1 = shim.stats();
    assert_eq!((s1.peer_queries - s0.peer_queries, s1.peer_enables - s0.peer_enables), (1, 1), "asked and enabled once for 0 -> 1");
    assert_eq!((s1.peer_copies - s0.peer_copies, s1.dtod_copies - s0.dtod_copies), (2, 0), "two peer copies");
    let mut got = vec![0u8; 64];
    // SAFETY: `got` holds 64 writable bytes.
    unsafe { plugin.retrieve(1, got.as_mut_ptr() as usize, a1, 64).unwrap() };
    assert_eq!(got, data);
    // 1 -> 0 is its own pair; without peer access it uses device-to-device copies, decided once too.
    set_env("MOCK_ASYNC_PEER", Some("0"));
    plugin.exchange(1, a1, 0, b0, 64).unwrap();
    set_env("MOCK_ASYNC_PEER", Some("1"));
    plugin.exchange(1, a1, 0, b0, 64).unwrap();
    plugin.exchange(0, a0, 0, b0, 64).unwrap(); // same device: no peer question
    let s2 = shim.stats();
    assert_eq!((s2.peer_queries - s1.peer_queries, s2.peer_enables - s1.peer_enables), (1, 0), "1 -> 0 asked once, unavailable");
    assert_eq!((s2.peer_copies - s1.peer_copies, s2.dtod_copies - s1.dtod_copies), (0, 3), "device-to-device copies");
    // SAFETY: `got` holds 64 writable bytes.
    unsafe { plugin.retrieve(0, got.as_mut_ptr() as usize, b0, 64).unwrap() };
    assert_eq!(got, data);
    // An event of a device-0 queue orders a device-1 queue.
    let (q0, q1) = (plugin.queue_acquire(0).unwrap(), plugin.queue_acquire(1).unwrap());
    let fresh: Vec<u8> = (0..64).rev().collect();
    let mut seen = vec![0u8; 64];
    // The mock's devices share memory, so device 1's copy may name device 0's buffer.
    // SAFETY: both buffers live until the queues are synchronised inside this block.
    unsafe {
        plugin.submit_async(0, a0, fresh.as_ptr() as usize, 64, q0).unwrap();
        let ev = plugin.event_record(0, q0).unwrap();
        plugin.event_wait(1, ev, q1).unwrap();
        plugin.retrieve_async(1, seen.as_mut_ptr() as usize, a0, 64, q1).unwrap();
        plugin.queue_synchronize(1, q1).unwrap();
        plugin.event_release(0, ev);
    }
    assert_eq!(seen, fresh, "device 1's copy waited for device 0's");
    plugin.queue_synchronize(0, q0).unwrap();
    plugin.queue_release(0, q0);
    plugin.queue_release(1, q1);
    for (dev, p) in [(0, a0), (0, b0), (1, a1)] {
        plugin.free(dev, p, AllocKind::Default).unwrap();
    }
    assert_eq!(plugin.live_async_handles(), (0, 0));

    // --- Device destructors at unload. ---------------------------------------
    let dtors_cubin = d.join("extra/dtors.sm_90.cubin");
    if dtors_cubin.exists() {
        let h = plugin.load_binary(0, &std::fs::read(&dtors_cubin).unwrap()).unwrap();
        assert_eq!(launches(&log, "nvptx$device$init").len(), 1, "the constructor kernel ran at load");
        assert!(launches(&log, "nvptx$device$fini").is_empty(), "destructors wait for unload");
        let k = plugin.get_function(0, h, "k_after_dtors").unwrap();
        let globals: Vec<u64> = ["__fini_array_start", "__fini_array_end"].iter().map(|g| plugin.get_global(0, h, g, 8).unwrap()).collect();
        let unloads = shim.stats().unloads;
        plugin.unload_binary(0, h).unwrap();
        let fini = launches(&log, "nvptx$device$fini");
        assert_eq!(fini.len(), 1, "the destructor kernel ran once");
        assert!(fini[0].contains("grid=(1,1,1) block=(1,1,1)"), "{}", fini[0]);
        assert_eq!(shim.stats().unloads, unloads + 1, "then the module was unloaded");
        let mut range = [0u64; 2];
        for (i, g) in globals.iter().enumerate() {
            // SAFETY: 8 writable bytes; mock-cuda keeps a module's globals after unloading it.
            unsafe { plugin.retrieve(0, &mut range[i] as *mut u64 as usize, *g, 8).unwrap() };
        }
        assert_eq!(range[1] - range[0], 24, "three destructors");
        let mut table = [0u64; 3];
        // SAFETY: 24 writable bytes; the buffer is a cached pool block, still device memory.
        unsafe { plugin.retrieve(0, table.as_mut_ptr() as usize, range[0], 24).unwrap() };
        assert_eq!(table, [0x2000, 0x5000, 0xa000], "priorities 102, 500, 65535, ascending as in 22.1");
        let err = plugin.get_function(0, h, "k_after_dtors").unwrap_err().to_string();
        assert!(err.contains("unloaded"), "{err}");
        let err = plugin.launch(0, k, "k_after_dtors", &[u64::MAX], &dims([1, 1, 1], [1, 1, 1])).unwrap_err().to_string();
        assert!(err.contains("unloaded"), "{err}");
        assert!(plugin.unload_binary(0, h).unwrap_err().to_string().contains("unloaded"), "a second unload is refused");
    } else {
        println!("skipped: destructor checks (no extra/dtors.sm_90.cubin; rerun c-tests/gpu-images.sh)");
    }
    // Images without destructors just unload.
    for file in ["extra/ctors.sm_90.cubin", "kernels/kernels.sm_90.cubin"] {
        let h = if file.starts_with("kernels/") { kernels } else { plugin.load_binary(0, &std::fs::read(d.join(file)).unwrap()).unwrap() };
        let fini = launches(&log, "nvptx$device$fini").len();
        let unloads = shim.stats().unloads;
        plugin.unload_binary(0, h).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(launches(&log, "nvptx$device$fini").len(), fini, "{file}: no destructor kernel");
        assert_eq!(shim.stats().unloads, unloads + 1, "{file}: unloaded");
    }
    assert!(plugin.get_function(0, kernels, "saxpy").is_err());
    assert!(
        plugin.launch(0, saxpy, "saxpy", &[u64::MAX, 0, 0, 0, 0], &dims([1, 1, 1], [1, 1, 1])).is_err(),
        "kernels of unloaded images are refused"
    );

    let s = shim.stats();
    assert_eq!((s.warnings, s.no_context, s.pending), (0, 0, 0), "{s:?}");
    let _ = std::fs::remove_file(&log);
    if let Some(dir) = shim_path.parent() {
        let _ = std::fs::remove_dir_all(dir); // mapped files stay valid until exit
    }
    println!("mock-cuda-async: queues, events and destructors: all checks passed ({} operations deferred)", s.deferred);
}
