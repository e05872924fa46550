//! The `ol*` entry points called from Rust through the rlib:
//! fuzzed info queries (random properties, sizes, handles) never crash and
//! answer the documented codes; handles created and destroyed on several
//! threads while others use theirs stay consistent (the live-handle cache
//! never accepts a destroyed handle).

mod common;

use core::ffi::c_void;
use omptarget_rs::c_api::liboffload::*;
use omptarget_rs::liboffload::error::{ErrorStruct, errc};
use omptarget_rs::liboffload::types::*;

fn code(r: *const ErrorStruct) -> u32 {
    // SAFETY: a non-NULL ol_result_t points to a record that stays valid.
    if r.is_null() { errc::SUCCESS } else { unsafe { (*r).code } }
}

unsafe extern "C" fn collect(d: DeviceH, ud: *mut c_void) -> bool {
    // SAFETY: `ud` is the Vec passed to olIterateDevices below.
    unsafe { (*(ud as *mut Vec<usize>)).push(d as usize) };
    true
}

fn devices() -> Vec<DeviceH> {
    let mut v: Vec<usize> = Vec::new();
    // SAFETY: a valid callback and user data.
    assert_eq!(code(unsafe { olIterateDevices(Some(collect), &mut v as *mut Vec<usize> as *mut c_void) }), 0);
    v.into_iter().map(|d| d as DeviceH).collect()
}

#[test]
fn links_the_library() {
    common::link_library();
}

#[test]
fn fuzzed_info_queries_answer_documented_codes() {
    // SAFETY: no arguments.
    assert_eq!(code(unsafe { olInit() }), 0);
    let devs = devices();
    assert!(devs.len() >= 5, "4 CPU devices and the host device");
    let mut rng = common::Rng::new(17);
    let mut buf = [0u8; 512];
    let bogus = [0usize; 4];
    for _ in 0..20_000 {
        let dev = match rng.below(4) {
            0 => std::ptr::null(),
            1 => bogus.as_ptr() as DeviceH,
            _ => devs[rng.below(devs.len())],
        };
        let prop = DeviceInfo(if rng.chance(1, 5) { rng.next_u64() as u32 } else { rng.below(29) as u32 });
        let size = rng.below(40);
        let out: *mut c_void = if rng.chance(1, 10) { std::ptr::null_mut() } else { buf.as_mut_ptr().cast() };
        // SAFETY: `out` is NULL or 512 writable bytes, more than any size asked for.
        let c = code(unsafe { olGetDeviceInfo(dev, prop, size, out) });
        let want_first = if size == 0 {
            Some(errc::INVALID_SIZE)
        } else if dev.is_null() {
            Some(errc::INVALID_NULL_HANDLE)
        } else if out.is_null() {
            Some(errc::INVALID_NULL_POINTER)
        } else if dev == bogus.as_ptr() as DeviceH {
            Some(errc::INVALID_DEVICE)
        } else if prop.0 >= 29 {
            Some(errc::INVALID_ENUMERATION)
        } else {
            None
        };
        match want_first {
            Some(w) => assert_eq!(c, w, "dev {dev:p} prop {} size {size}", prop.0),
            None => assert!(c == errc::SUCCESS || c == errc::INVALID_SIZE, "got {c} for prop {} size {size}", prop.0),
        }
        let mut need = 0usize;
        // SAFETY: a valid out-pointer.
        let s = code(unsafe { olGetDeviceInfoSize(dev, prop, &mut need) });
        if want_first.is_none() {
            assert_eq!(s, 0);
            assert_eq!(c == 0, size >= need, "success exactly when PropSize >= the size query's answer");
        }
    }
    // SAFETY: no arguments.
    assert_eq!(code(unsafe { olShutDown() }), 0);
}

#[test]
fn handles_survive_concurrent_create_destroy() {
    // SAFETY: no arguments.
    assert_eq!(code(unsafe { olInit() }), 0);
    let devs = devices();
    let cpu = devs[0] as usize;
    let threads: Vec<_> = (0..4)
        .map(|t| {
            std::thread::spawn(move || {
                let cpu = cpu as DeviceH;
                let mut rng = common::Rng::new(100 + t);
                for _ in 0..2000 {
                    let mut q: QueueH = std::ptr::null();
                    // SAFETY: valid out-pointer; the handle is used on this thread only.
                    unsafe {
                        assert_eq!(code(olCreateQueue(cpu, &mut q)), 0);
                        assert_eq!(code(olSyncQueue(q)), 0);
                        let mut e: EventH = std::ptr::null();
                        assert_eq!(code(olCreateEvent(q, &mut e)), 0);
                        assert_eq!(code(olWaitEvents(q, &e, 1)), 0);
                        assert_eq!(code(olDestroyEvent(e)), 0);
                        assert_eq!(code(olDestroyQueue(q)), 0);
                        let mut p: *mut c_void = std::ptr::null_mut();
                        let size = 1 + rng.below(4096);
                        assert_eq!(code(olMemAlloc(cpu, AllocType(rng.below(3) as u32), size, &mut p)), 0);
                        let fill = [t as u8; 4];
                        assert_eq!(code(olMemFill(std::ptr::null(), p, 1, fill.as_ptr().cast(), size)), 0);
                        assert_eq!(code(olMemFree(p)), 0);
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("worker");
    }
    // (Freed handles are checked single-threaded: another thread may reuse the address.)
    let cpu = cpu as DeviceH;
    let mut q: QueueH = std::ptr::null();
    // SAFETY: valid out-pointers; handles of this thread only, no other thread running.
    unsafe {
        assert_eq!(code(olCreateQueue(cpu, &mut q)), 0);
        assert_eq!(code(olSyncQueue(q)), 0); // now the cached live queue
        assert_eq!(code(olDestroyQueue(q)), 0);
        assert_eq!(code(olSyncQueue(q)), errc::INVALID_QUEUE, "the cache must forget a destroyed queue");
        assert_eq!(code(olDestroyQueue(q)), errc::INVALID_QUEUE);
    }
    // SAFETY: no arguments.
    assert_eq!(code(unsafe { olShutDown() }), 0);
}
