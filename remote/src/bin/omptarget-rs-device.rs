//! `omptarget-rs-device`: a device server rank of an MPI job.
//!
//!     mpirun -np 1 ./program : -np 2 target/release/omptarget-rs-device [--devices N]
//!
//! It opens its local devices through the runtime's device layer (the host
//! plugin's CPU devices here; CUDA and AMDGPU devices where present) and
//! serves the program rank's requests: allocation, copies, images, symbol
//! look-ups, launches. The main thread receives request headers and answers
//! pings itself; every other request runs on a worker thread, so requests
//! of several program threads (and long kernels) proceed at once.
//!
//! Everything from the wire is checked before use: device numbers, copy
//! ranges (inside an allocation or a global this server handed out), image,
//! kernel and name sizes, kernel handles.
//!
//! `--die-after N` (tests only): the server kills itself with SIGKILL when
//! it has received N requests, to test the program rank's failure path.

use omptarget_rs::device::Device;
use omptarget_rs::plugins::{AllocKind, DeviceType, LaunchDims};
use omptarget_rs_remote::wire::{self, op};
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};
use std::ffi::c_int;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

/// A known piece of device memory: (end, device, `None` for an allocation
/// or the image handle of a global).
type Range = (u64, usize, Option<u64>);

/// What the server knows is safe to touch.
struct State {
    devices: Vec<&'static Device>,
    /// This server's rank and the job's size (peers of copies between servers).
    rank: c_int,
    world_size: c_int,
    /// Images received, by the client's hash.
    images: Mutex<HashMap<u64, Arc<Vec<u8>>>>,
    /// Loaded images: (device, handle) → the image's hash.
    loaded: Mutex<HashMap<(usize, u64), u64>>,
    /// Kernels handed out: (device, handle) → (name, image handle).
    kernels: Mutex<HashMap<(usize, u64), (String, u64)>>,
    /// Device memory the client may copy to and from: start → (end,
    /// device, `None` for an allocation or the image handle of a global).
    ranges: Mutex<BTreeMap<u64, Range>>,
    /// What each of the program's queues has run here, by queue handle.
    progress: Mutex<HashMap<u64, Arc<QueueProgress>>>,
}

/// Requests of one program queue that reached this server, and how many
/// of them have run (a WAIT request of another queue waits on it).
#[derive(Default)]
struct QueueProgress {
    arrived: std::sync::atomic::AtomicU64,
    done: Mutex<u64>,
    ran: parking_lot::Condvar,
}

impl State {
    fn progress(&self, queue: u64) -> Arc<QueueProgress> {
        self.progress.lock().entry(queue).or_default().clone()
    }
}

impl State {
    fn device(&self, d: u64) -> Result<&'static Device, String> {
        usize::try_from(d)
            .ok()
            .and_then(|d| self.devices.get(d).copied())
            .ok_or_else(|| format!("no device {d} on this server ({} devices)", self.devices.len()))
    }

    /// Whether `[addr, addr+len)` lies in one known range of `device`.
    fn check_range(&self, device: usize, addr: u64, len: u64) -> Result<(), String> {
        let end = addr.checked_add(len).ok_or("address range overflows")?;
        let ranges = self.ranges.lock();
        match ranges.range(..=addr).next_back() {
            Some((_, &(e, d, _))) if d == device && end <= e => Ok(()),
            _ => Err(format!("[{addr:#x}, {end:#x}) is not inside memory of device {device} known to this server")),
        }
    }
}

fn kind_of(k: u64) -> AllocKind {
    match k {
        1 => AllocKind::Host,
        2 => AllocKind::Shared,
        3 => AllocKind::Default,
        _ => AllocKind::Device,
    }
}

/// Sends a reply (status, value, text) on `tag` and waits for it.
fn reply(tag: c_int, status: u64, value: u64, text: &[u8]) {
    let mut msg = Vec::with_capacity(16 + text.len());
    msg.extend_from_slice(&status.to_le_bytes());
    msg.extend_from_slice(&value.to_le_bytes());
    msg.extend_from_slice(&text[..text.len().min(wire::REPLY_MAX - 16)]);
    // SAFETY: msg lives until the send is waited for below.
    match unsafe { wire::Request::send(msg.as_ptr(), msg.len(), 0, tag) } {
        Ok(mut r) => {
            if let Err(e) = wire::wait_forever(&mut r) {
                eprintln!("omptarget-rs-device: reply failed: {e}");
            }
        }
        Err(e) => eprintln!("omptarget-rs-device: reply failed: {e}"),
    }
}

/// Receives exactly `len` bytes from the client on `tag` into a new buffer.
fn recv_vec(len: u64, max: u64, tag: c_int) -> Result<Vec<u8>, String> {
    let n = usize::try_from(len).ok().filter(|_| len <= max).ok_or_else(|| format!("payload of {len} bytes exceeds {max}"))?;
    let mut buf = vec![0u8; n];
    if n > 0 {
        // SAFETY: buf is n writable bytes.
        unsafe { wire::recv_all(buf.as_mut_ptr(), n, 0, tag, &mut |r| wire::wait_forever(r))? };
    }
    Ok(buf)
}

/// Receives and drops `len` bytes from `rank` (a payload whose request is
/// refused: its sender is not left waiting).
fn drain(len: u64, rank: c_int, tag: c_int, wait: &mut dyn FnMut(&mut wire::Request) -> wire::WireResult<()>) {
    let mut left = len;
    let mut buf = vec![0u8; (len.min(wire::CHUNK as u64)) as usize];
    while left > 0 {
        let n = left.min(wire::CHUNK as u64) as usize;
        // SAFETY: buf has at least n bytes.
        if unsafe { wire::recv_all(buf.as_mut_ptr(), n, rank, tag, wait) }.is_err() {
            // The abandoned receive may still write into buf.
            std::mem::forget(buf);
            return;
        }
        left -= n as u64;
    }
}

/// The piece size and the two staging buffers of a transfer of `n` bytes
/// through host memory (the second one empty when one piece holds it all).
fn staging(n: usize) -> (usize, [Vec<u8>; 2]) {
    let piece = wire::CHUNK.min(n);
    (piece, [vec![0u8; piece], vec![0u8; if n > piece { piece } else { 0 }]])
}

/// Receives `size` bytes from `rank` on `tag` into device memory at `dst`
/// (a range checked by the caller): straight into it where device memory
/// is host memory, else piece by piece through two staging buffers, each
/// piece copied to the device while the next one arrives.
fn recv_to_device(
    d: &Device,
    dst: u64,
    size: u64,
    rank: c_int,
    tag: c_int,
    wait: &mut dyn FnMut(&mut wire::Request) -> wire::WireResult<()>,
) -> Result<(), String> {
    let n = usize::try_from(size).map_err(|_| "size too large")?;
    if d.memory_is_host() {
        // SAFETY: [dst, dst+size) lies inside this device's host-memory allocation or global (checked by the caller).
        return unsafe { wire::recv_all(dst as *mut u8, n, rank, tag, wait) };
    }
    if n == 0 {
        return Ok(());
    }
    let (piece, mut bufs) = staging(n);
    let ptrs = [bufs[0].as_mut_ptr(), bufs[1].as_mut_ptr()];
    let post = |k: usize, at: usize| {
        // SAFETY: staging buffer k % 2 holds `piece` bytes and is not in use (its last piece was copied to the device).
        unsafe { wire::Request::recv(ptrs[k % 2], (n - at).min(piece), rank, tag) }
    };
    let (mut at, mut k) = (0usize, 0usize);
    let mut current = post(0, 0)?;
    let mut failed: Option<String> = None;
    loop {
        let len = (n - at).min(piece);
        if let Err(e) = wait(&mut current) {
            current.abandon();
            std::mem::forget(bufs);
            return Err(e);
        }
        if current.received != len {
            std::mem::forget(bufs);
            return Err(format!("expected {len} bytes, received {}", current.received));
        }
        let next_at = at + len;
        let next = if next_at < n { Some(post(k + 1, next_at)?) } else { None };
        if failed.is_none() {
            // SAFETY: the staging buffer holds len received bytes.
            let r = unsafe { d.plugin.submit(d.plugin_device, dst + at as u64, ptrs[k % 2] as usize, len as u64) };
            failed = r.err().map(|e| e.to_string());
        }
        match next {
            Some(r) => current = r,
            None => break,
        }
        at = next_at;
        k += 1;
    }
    drop(bufs);
    failed.map_or(Ok(()), Err)
}

/// Sends `size` bytes of device memory at `src` (a range checked by the
/// caller) to `rank` on `tag`: straight from it where device memory is
/// host memory, else piece by piece through two staging buffers, each
/// piece read from the device while the one before is on the wire. Every
/// piece is sent even when reading the device fails (the receiver expects
/// them); the failure is returned at the end.
fn send_from_device(
    d: &Device,
    src: u64,
    size: u64,
    rank: c_int,
    tag: c_int,
    wait: &mut dyn FnMut(&mut wire::Request) -> wire::WireResult<()>,
) -> Result<(), String> {
    let n = usize::try_from(size).map_err(|_| "size too large")?;
    if d.memory_is_host() {
        // SAFETY: [src, src+size) lies inside this device's host memory (checked by the caller).
        return unsafe { wire::send_all(src as *const u8, n, rank, tag, wait) };
    }
    if n == 0 {
        return Ok(());
    }
    let (piece, mut bufs) = staging(n);
    let ptrs = [bufs[0].as_mut_ptr(), bufs[1].as_mut_ptr()];
    let mut flying: [Option<wire::Request>; 2] = [None, None];
    let mut failed: Option<String> = None;
    let (mut at, mut k) = (0usize, 0usize);
    let mut result = Ok(());
    while at < n {
        let len = (n - at).min(piece);
        let slot = k % 2;
        if let Some(mut r) = flying[slot].take()
            && let Err(e) = wait(&mut r)
        {
            r.abandon();
            result = Err(e);
            break;
        }
        if failed.is_none() {
            // SAFETY: staging buffer `slot` holds `piece` writable bytes and no send uses it now.
            let r = unsafe { d.plugin.retrieve(d.plugin_device, ptrs[slot] as usize, src + at as u64, len as u64) };
            failed = r.err().map(|e| e.to_string());
        }
        // SAFETY: the staging buffer stays alive until this send is waited for (or is leaked below).
        match unsafe { wire::Request::send(ptrs[slot], len, rank, tag) } {
            Ok(r) => flying[slot] = Some(r),
            Err(e) => {
                result = Err(e);
                break;
            }
        }
        at += len;
        k += 1;
    }
    for slot in flying.iter_mut() {
        if let Some(mut r) = slot.take() {
            if result.is_ok() {
                if let Err(e) = wait(&mut r) {
                    r.abandon();
                    result = Err(e);
                }
            } else {
                r.abandon();
            }
        }
    }
    if result.is_err() {
        // Abandoned sends may still read the staging buffers.
        std::mem::forget(bufs);
    } else {
        drop(bufs);
    }
    result?;
    failed.map_or(Ok(()), Err)
}

/// Runs one request; returns the reply value, or the error text. Data
/// that follows a successful reply (copies from the device) is sent by the
/// caller through `after`.
fn serve(st: &State, h: &[u64; wire::HEADER_WORDS], tag: c_int) -> Result<u64, String> {
    let (code, dev, a) = (h[0], h[2], [h[3], h[4], h[5], h[6], h[7]]);
    match code {
        op::ALLOC => {
            let d = st.device(dev)?;
            if a[0] == 0 {
                return Err("allocation of 0 bytes".into());
            }
            let p = d.plugin.alloc(d.plugin_device, a[0], kind_of(a[1])).map_err(|e| e.to_string())?;
            st.ranges.lock().insert(p, (p.saturating_add(a[0]), dev as usize, None));
            Ok(p)
        }
        op::FREE => {
            let d = st.device(dev)?;
            let mut ranges = st.ranges.lock();
            match ranges.get(&a[0]) {
                Some(&(_, dd, None)) if dd == dev as usize => {
                    ranges.remove(&a[0]);
                }
                _ => return Err(format!("{:#x} is not an allocation of device {dev} on this server", a[0])),
            }
            drop(ranges);
            d.plugin.free(d.plugin_device, a[0], kind_of(a[1])).map_err(|e| e.to_string())?;
            Ok(0)
        }
        op::SUBMIT => {
            let (dst, size) = (a[0], a[1]);
            let mut wait = |r: &mut wire::Request| wire::wait_forever(r);
            let d = match st.device(dev).and_then(|d| st.check_range(dev as usize, dst, size).map(|_| d)) {
                Ok(d) => d,
                Err(e) => {
                    drain(size, 0, tag, &mut wait);
                    return Err(e);
                }
            };
            recv_to_device(d, dst, size, 0, tag, &mut wait)?;
            Ok(0)
        }
        op::RETRIEVE => {
            // Checked here; the data goes after the reply (see `worker`).
            st.device(dev)?;
            st.check_range(dev as usize, a[0], a[1])?;
            Ok(0)
        }
        op::MEMSET => {
            let d = st.device(dev)?;
            st.check_range(dev as usize, a[0], a[2])?;
            d.plugin.memset(d.plugin_device, a[0], a[1] as u8, a[2]).map_err(|e| e.to_string())?;
            Ok(0)
        }
        op::IMAGE => {
            let bytes = recv_vec(a[1], wire::IMAGE_MAX, tag)?;
            st.images.lock().insert(a[0], Arc::new(bytes));
            Ok(0)
        }
        op::LOAD => {
            let d = st.device(dev)?;
            let image = st.images.lock().get(&a[0]).cloned().ok_or("image not received by this server")?;
            // Through the device layer: an image with an RPC client gets its server here.
            let handle = d.load_image(&image).map_err(|e| e.to_string())?;
            st.loaded.lock().insert((dev as usize, handle as u64), a[0]);
            Ok(handle as u64)
        }
        op::UNLOAD => {
            let d = st.device(dev)?;
            if st.loaded.lock().remove(&(dev as usize, a[0])).is_none() {
                return Err(format!("image {:#x} is not loaded on device {dev}", a[0]));
            }
            st.kernels.lock().retain(|(kd, _), (_, image)| !(*kd == dev as usize && *image == a[0]));
            st.ranges.lock().retain(|_, (_, rd, owner)| !(*rd == dev as usize && *owner == Some(a[0])));
            d.unload_image(a[0] as usize).map_err(|e| e.to_string())?;
            Ok(0)
        }
        op::FUNCTION | op::GLOBAL => {
            let name = recv_vec(a[1], wire::NAME_MAX, tag)?;
            let d = st.device(dev)?;
            let name = String::from_utf8(name).map_err(|_| "symbol name is not UTF-8")?;
            let Some(hash) = st.loaded.lock().get(&(dev as usize, a[0])).copied() else {
                return Err(format!("image {:#x} is not loaded on device {dev}", a[0]));
            };
            if code == op::FUNCTION {
                let k = d.plugin.get_function(d.plugin_device, a[0] as usize, &name).map_err(|e| e.to_string())?;
                st.kernels.lock().insert((dev as usize, k), (name, a[0]));
                Ok(k)
            } else {
                let g = d.plugin.get_global(d.plugin_device, a[0] as usize, &name, a[2]).map_err(|e| e.to_string())?;
                // Copies may reach the whole object (ol* asks with size 0).
                let image = st.images.lock().get(&hash).cloned();
                let size = image.and_then(|i| omptarget_rs::base::image::elf_symbol_size(&i, &name)).unwrap_or(0).max(a[2]);
                st.ranges.lock().insert(g, (g.saturating_add(size), dev as usize, Some(a[0])));
                Ok(g)
            }
        }
        op::LAUNCH => {
            let raw = recv_vec(a[1].saturating_mul(8), wire::ARGS_MAX * 8, tag)?;
            let d = st.device(dev)?;
            let (name, _) = st
                .kernels
                .lock()
                .get(&(dev as usize, a[0]))
                .cloned()
                .ok_or_else(|| format!("kernel {:#x} unknown on device {dev}", a[0]))?;
            let args: Vec<u64> = raw.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default())).collect();
            let dims = LaunchDims {
                teams: [(a[2] as u32).max(1), 1, 1],
                threads: [((a[2] >> 32) as u32).max(1), 1, 1],
                dyn_shared_bytes: 0,
                tripcount: a[3],
            };
            d.plugin.launch(d.plugin_device, a[0], &name, &args, &dims).map_err(|e| e.to_string())?;
            Ok(0)
        }
        op::EXCHANGE => {
            let (src, dst_dev, dst, size) = (a[0], a[1], a[2], a[3]);
            let s = st.device(dev)?;
            let t = st.device(dst_dev)?;
            st.check_range(dev as usize, src, size)?;
            st.check_range(dst_dev as usize, dst, size)?;
            if std::ptr::eq(s.plugin as *const _ as *const u8, t.plugin as *const _ as *const u8) {
                s.plugin.exchange(s.plugin_device, src, t.plugin_device, dst, size).map_err(|e| e.to_string())?;
            } else {
                let mut buf = vec![0u8; usize::try_from(size).map_err(|_| "size too large")?];
                // SAFETY: buf is size writable, then readable, bytes.
                unsafe {
                    s.plugin.retrieve(s.plugin_device, buf.as_mut_ptr() as usize, src, size).map_err(|e| e.to_string())?;
                    t.plugin.submit(t.plugin_device, dst, buf.as_ptr() as usize, size).map_err(|e| e.to_string())?;
                }
            }
            Ok(0)
        }
        op::WAIT => {
            let (queue, count) = (a[0], a[1]);
            let p = st.progress.lock().get(&queue).cloned();
            let arrived = p.as_ref().map_or(0, |p| p.arrived.load(Ordering::Acquire));
            let Some(p) = p.filter(|_| arrived >= count) else {
                return Err(format!("wait for {count} requests of queue {queue}: only {arrived} reached this server"));
            };
            let mut done = p.done.lock();
            while *done < count {
                p.ran.wait(&mut done);
            }
            Ok(0)
        }
        op::SEND_TO | op::RECV_FROM => {
            // A device-to-device copy between this server and another
            // server rank, the data going straight between the two.
            let (addr, size, limit_ms) = (a[0], a[1], a[4]);
            let peer = c_int::try_from(a[2]).ok().filter(|p| *p > 0 && *p < st.world_size && *p != st.rank);
            let peer_tag = c_int::try_from(a[3]).ok().filter(|t| (wire::TAG_FIRST..=wire::TAG_LAST).contains(t));
            let (Some(peer), Some(peer_tag)) = (peer, peer_tag) else {
                return Err(format!("bad peer rank {} or tag {} for a copy between servers", a[2], a[3]));
            };
            let deadline = wire::peer_deadline(limit_ms, size);
            let what = op::name(code);
            let mut wait = |r: &mut wire::Request| wire::wait_until(r, deadline, peer, what);
            let checked = st.device(dev).and_then(|d| st.check_range(dev as usize, addr, size).map(|_| d));
            if code == op::SEND_TO {
                let d = checked?;
                send_from_device(d, addr, size, peer, peer_tag, &mut wait).map_err(|e| format!("to rank {peer}: {e}"))?;
            } else {
                match checked {
                    Ok(d) => recv_to_device(d, addr, size, peer, peer_tag, &mut wait).map_err(|e| format!("from rank {peer}: {e}"))?,
                    Err(e) => {
                        // The sender is not left waiting for its deadline.
                        drain(size, peer, peer_tag, &mut wait);
                        return Err(e);
                    }
                }
            }
            Ok(0)
        }
        other => Err(format!("unknown operation {other}")),
    }
}

/// Runs a request and answers it.
fn worker(st: &State, h: [u64; wire::HEADER_WORDS]) {
    let Ok(tag) = c_int::try_from(h[1]) else { return };
    if !(wire::TAG_FIRST..=wire::TAG_LAST).contains(&tag) {
        return;
    }
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| serve(st, &h, tag)))
        .unwrap_or_else(|_| Err(format!("the server panicked during {}", op::name(h[0]))));
    match result {
        Ok(v) => {
            reply(tag, wire::OK, v, &[]);
            if h[0] == op::RETRIEVE {
                let (src, size) = (h[3], h[4]);
                let Ok(d) = st.device(h[2]) else { return };
                // The range was checked by `serve`.
                if let Err(e) = send_from_device(d, src, size, 0, tag, &mut |r| wire::wait_forever(r)) {
                    eprintln!("omptarget-rs-device: sending data failed: {e}");
                }
            }
        }
        Err(e) => reply(tag, wire::FAILED, 0, e.as_bytes()),
    }
}

/// Waits for the program rank's first request, at most `limit`: a program
/// that does not load the remote library (not our runtime, or no remote
/// library next to it) never sends one.
fn wait_first(r: &mut wire::Request, limit: std::time::Duration) -> Result<(), String> {
    let start = std::time::Instant::now();
    let mut b = wire::Backoff::new();
    while !r.test()? {
        if start.elapsed() >= limit {
            return Err(format!(
                "the program rank sent nothing for {} s (is it running on omptarget-rs with libomptarget_rs_remote.so next to it? \
                 OMPTARGET_RS_DEVICE_WAIT sets this limit); exiting",
                limit.as_secs()
            ));
        }
        b.snooze();
    }
    Ok(())
}

/// Answers pings (on their own tag) until `stop`: the program rank learns
/// that this server lives while a long request runs.
fn answer_pings(stop: &AtomicBool) {
    let mut buf = [0u8; wire::HEADER_WORDS * 8];
    loop {
        // SAFETY: buf outlives the receive: it is waited for or abandoned below.
        let Ok(mut r) = (unsafe { wire::Request::recv(buf.as_mut_ptr(), buf.len(), 0, wire::TAG_PING) }) else { return };
        let mut b = wire::Backoff::new();
        loop {
            match r.test() {
                Ok(true) => break,
                Ok(false) if stop.load(Ordering::Acquire) => {
                    r.abandon();
                    return;
                }
                Ok(false) => b.snooze(),
                Err(_) => return,
            }
        }
        if let Some(h) = wire::parse_header(&buf[..r.received])
            && let Ok(tag) = c_int::try_from(h[1])
            && (wire::TAG_FIRST..=wire::TAG_LAST).contains(&tag)
        {
            reply(tag, wire::OK, 0, &[]);
        }
    }
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    let b = &s.as_bytes()[..s.len().min(4000)];
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

/// The HELLO reply: magic, device count, then per device its property
/// words and strings (parsed by the client's `describe`).
fn hello(st: &State) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&wire::MAGIC.to_le_bytes());
    out.extend_from_slice(&(st.devices.len() as u64).to_le_bytes());
    for d in &st.devices {
        let p = d.properties();
        let words: [u64; 23] = [
            u64::from(p.device_type == DeviceType::Gpu),
            p.vendor_id.into(),
            p.max_group_size.into(),
            p.max_group_dims[0].into(),
            p.max_group_dims[1].into(),
            p.max_group_dims[2].into(),
            p.max_groups[0].into(),
            p.max_groups[1].into(),
            p.max_groups[2].into(),
            p.compute_units.into(),
            p.clock_mhz.into(),
            p.memory_clock_mhz.into(),
            p.address_bits.into(),
            p.global_memory,
            p.local_memory,
            p.simd_width.into(),
            p.vector_widths[0].into(),
            p.vector_widths[1].into(),
            p.vector_widths[2].into(),
            p.vector_widths[3].into(),
            p.vector_widths[4].into(),
            p.vector_widths[5].into(),
            p.vector_widths[6].into(),
        ];
        for w in words {
            out.extend_from_slice(&w.to_le_bytes());
        }
        for s in [&p.name, &p.product, &p.vendor, &p.driver_version] {
            put_str(&mut out, s);
        }
        put_str(&mut out, &d.uid());
        put_str(&mut out, &d.plugin.device_info(d.plugin_device));
        put_str(&mut out, &d.plugin.compute_unit_kind(d.plugin_device));
        put_str(&mut out, d.plugin.name());
    }
    out
}

fn main() {
    let mut max_devices = usize::MAX;
    let mut die_after = u64::MAX;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let v = args.next().and_then(|v| v.parse::<u64>().ok());
        match (a.as_str(), v) {
            ("--devices", Some(n)) => max_devices = n as usize,
            ("--die-after", Some(n)) => die_after = n,
            _ => {
                eprintln!("usage: omptarget-rs-device [--devices N] [--die-after REQUESTS]");
                std::process::exit(2);
            }
        }
    }
    let Some((universe, threading)) = mpi::initialize_with_threading(mpi::Threading::Multiple) else {
        eprintln!("omptarget-rs-device: MPI is initialised already");
        std::process::exit(1);
    };
    if threading != mpi::Threading::Multiple {
        eprintln!("omptarget-rs-device: this MPI library does not support MPI_THREAD_MULTIPLE");
        std::process::exit(1);
    }
    // SAFETY: MPI is initialised; MPI_ERRORS_RETURN is a constant of rsmpi's shim.
    unsafe { mpi::ffi::MPI_Comm_set_errhandler(wire::world(), mpi::ffi::RSMPI_ERRORS_RETURN) };
    let rank = {
        use mpi::topology::Communicator;
        universe.world().rank()
    };
    if rank == 0 {
        eprintln!("omptarget-rs-device: started as rank 0; start the program first: mpirun -np 1 ./program : -np N omptarget-rs-device");
        std::process::exit(2);
    }
    let reg = omptarget_rs::device::registry();
    let devices: Vec<&'static Device> = reg.expose_every_device().into_iter().flatten().take(max_devices).collect();
    let world_size = {
        use mpi::topology::Communicator;
        universe.world().size()
    };
    let st: &'static State = Box::leak(Box::new(State {
        devices,
        rank,
        world_size,
        images: Mutex::new(HashMap::new()),
        loaded: Mutex::new(HashMap::new()),
        kernels: Mutex::new(HashMap::new()),
        ranges: Mutex::new(BTreeMap::new()),
        progress: Mutex::new(HashMap::new()),
    }));
    // One thread per program queue runs its requests in order.
    let mut queues: HashMap<u64, mpsc::Sender<[u64; wire::HEADER_WORDS]>> = HashMap::new();
    let mut queue_threads: Vec<std::thread::JoinHandle<()>> = Vec::new();
    let workers: usize = std::env::var("OMPTARGET_RS_DEVICE_WORKERS").ok().and_then(|v| v.parse().ok()).unwrap_or(8).clamp(1, 64);
    let (tx, rx) = mpsc::channel::<[u64; wire::HEADER_WORDS]>();
    let rx = Arc::new(std::sync::Mutex::new(rx));
    let pool: Vec<_> = (0..workers)
        .map(|_| {
            let rx = rx.clone();
            std::thread::spawn(move || {
                loop {
                    let next = rx.lock().map(|r| r.recv());
                    match next {
                        Ok(Ok(h)) => worker(st, h),
                        _ => return,
                    }
                }
            })
        })
        .collect();
    let stop_pings: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
    let pinger = std::thread::spawn(move || answer_pings(stop_pings));
    let mut received = 0u64;
    let mut greeted = false;
    let mut receivers: Vec<std::thread::JoinHandle<()>> = Vec::new();
    let mut skip_finalize = false;
    let first_contact = std::time::Duration::from_secs_f64(
        std::env::var("OMPTARGET_RS_DEVICE_WAIT").ok().and_then(|v| v.parse::<f64>().ok()).filter(|v| *v > 0.0).unwrap_or(30.0),
    );
    let mut buf = [0u8; wire::HEADER_WORDS * 8];
    loop {
        // SAFETY: buf outlives the receive, which is waited for right here.
        let r = unsafe { wire::Request::recv(buf.as_mut_ptr(), buf.len(), 0, wire::TAG_REQUEST) };
        let mut r = match r {
            Ok(r) => r,
            Err(e) => {
                eprintln!("omptarget-rs-device rank {rank}: {e}");
                break;
            }
        };
        let waited = if greeted { wire::wait_forever(&mut r) } else { wait_first(&mut r, first_contact) };
        if let Err(e) = waited {
            eprintln!("omptarget-rs-device rank {rank}: {e}");
            if !greeted {
                // The program rank never came: MPI_Finalize would wait for it.
                r.abandon();
                std::process::exit(1);
            }
            break;
        }
        let Some(h) = wire::parse_header(&buf[..r.received]) else {
            eprintln!("omptarget-rs-device rank {rank}: ignoring a malformed request header ({} bytes)", r.received);
            continue;
        };
        received += 1;
        if received >= die_after {
            // SAFETY: raising a signal on ourselves (test hook).
            unsafe { libc::raise(libc::SIGKILL) };
        }
        let Ok(tag) = c_int::try_from(h[1]) else { continue };
        if !(wire::TAG_FIRST..=wire::TAG_LAST).contains(&tag) {
            eprintln!("omptarget-rs-device rank {rank}: ignoring a request with tag {tag}");
            continue;
        }
        if h[7] & wire::QUEUED != 0 && matches!(h[0], op::SUBMIT | op::RETRIEVE | op::LAUNCH | op::WAIT) {
            let id = h[7] & !(wire::QUEUED | wire::ALONE);
            if id == 0 || id > wire::QUEUES_MAX as u64 {
                reply(tag, wire::FAILED, 0, format!("queue handle {id} out of range").as_bytes());
                continue;
            }
            let progress = st.progress(id);
            let before = progress.arrived.fetch_add(1, Ordering::AcqRel);
            // Nothing else of the program in flight here, and this queue's
            // thread has run all it was given: run it now, without a
            // hand-off (the queue's order holds: everything before it ran).
            if h[7] & wire::ALONE != 0 && *progress.done.lock() == before {
                worker(st, h);
                *progress.done.lock() += 1;
                progress.ran.notify_all();
                continue;
            }
            let tx = queues.entry(id).or_insert_with(|| {
                let (tx, rx) = mpsc::channel::<[u64; wire::HEADER_WORDS]>();
                queue_threads.push(std::thread::spawn(move || {
                    while let Ok(h) = rx.recv() {
                        worker(st, h);
                        *progress.done.lock() += 1;
                        progress.ran.notify_all();
                    }
                }));
                tx
            });
            if tx.send(h).is_err() {
                break;
            }
            continue;
        }
        match h[0] {
            op::PING => reply(tag, wire::OK, 0, &[]),
            op::HELLO => {
                greeted = true;
                reply(tag, wire::OK, st.devices.len() as u64, &hello(st))
            }
            op::SHUTDOWN => {
                reply(tag, wire::OK, 0, &[]);
                // The program saw a server die: MPI_Finalize would wait for it.
                skip_finalize = h[3] != 0;
                break;
            }
            // A launch sent while the program had other requests to this
            // server in flight runs on a worker, concurrently with them;
            // everything else runs here (a hand-off to a worker costs more
            // than most requests). Pings are answered by their own thread.
            op::LAUNCH if h[7] != 0 => {
                if tx.send(h).is_err() {
                    break;
                }
            }
            // The receiving half of a copy between two servers waits for
            // the other server on a thread of its own (bounded by its
            // deadline): this thread goes on, and may be the one that
            // sends the other half of a copy the other way.
            op::RECV_FROM => {
                receivers.retain(|t: &std::thread::JoinHandle<()>| !t.is_finished());
                receivers.push(std::thread::spawn(move || worker(st, h)));
            }
            _ => worker(st, h),
        }
    }
    drop(tx);
    drop(queues);
    for t in receivers.into_iter().chain(pool).chain(queue_threads) {
        let _ = t.join();
    }
    stop_pings.store(true, Ordering::Release);
    let _ = pinger.join();
    if skip_finalize {
        std::mem::forget(universe);
        return;
    }
    // MPI_Finalize, bounded: a rank that died without the program noticing
    // would keep it waiting.
    std::thread::spawn(|| {
        std::thread::sleep(std::time::Duration::from_secs(30));
        eprintln!("omptarget-rs-device: MPI_Finalize did not return in 30 s (a rank died?); exiting");
        // SAFETY: ends the process at once; nothing of this process is needed any more.
        unsafe { libc::_exit(0) };
    });
    drop(universe);
}
